// Package s3test runs a real S3 server for tests: versitygw (Apache-2.0)
// with its POSIX backend in a temporary directory, on loopback. The binary
// comes from $SBX_VERSITYGW (scripts/build-versitygw.sh builds and caches
// it; .ci/run exports it).
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Server is one running versitygw.
type Server struct {
	t         testing.TB
	Endpoint  string // http://127.0.0.1:port
	Addr      string // 127.0.0.1:port
	Root      string // the POSIX backend's directory: bucket b's object k is Root/b/k
	AccessKey string
	SecretKey string
	bin       string
	log       string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// Binary returns the versitygw binary, failing the test with what to run
// when it is missing.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("SBX_VERSITYGW")
	if bin == "" {
		t.Fatal("SBX_VERSITYGW is not set: run SBX_VERSITYGW=$(scripts/build-versitygw.sh) before the storage tests")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("SBX_VERSITYGW=%s: %v (run scripts/build-versitygw.sh)", bin, err)
	}
	return bin
}

// Start runs versitygw on a free loopback port with a fresh backend
// directory; cleanup stops it by its PID.
func Start(t testing.TB) *Server {
	t.Helper()
	dir := t.TempDir()
	s := &Server{t: t, bin: Binary(t), Root: filepath.Join(dir, "data"), log: filepath.Join(dir, "versitygw.log"), AccessKey: "sbxtest", SecretKey: randomHex(16)}
	if err := os.Mkdir(s.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	ln.Close()
	s.Endpoint = "http://" + s.Addr
	t.Cleanup(s.Stop)
	s.Restart()
	return s
}

// Restart starts the server again on the same port and directory (after Stop).
func (s *Server) Restart() {
	t := s.t
	t.Helper()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	s.cmd = exec.Command(s.bin, "--port", s.Addr, "posix", s.Root)
	// Credentials through the environment: arguments show in ps.
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	exited := make(chan struct{})
	go func(c *exec.Cmd) { c.Wait(); close(exited) }(s.cmd)
	s.exited = exited
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.Endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(s.log)
			t.Fatalf("versitygw exited before it answered: %s\n%s", s.cmd.ProcessState, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("versitygw did not answer within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server by its PID and waits for it; a no-op when stopped.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// Client returns a minio-go client for the server (path-style).
func (s *Server) Client() *minio.Client {
	s.t.Helper()
	c, err := minio.New(s.Addr, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath, Region: "us-east-1"})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// Bucket creates a bucket with a fresh name and returns the name.
func (s *Server) Bucket() string {
	s.t.Helper()
	name := "sbx-" + randomHex(6)
	if err := s.Client().MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		s.t.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}

// Flags are the sbx serve flags for a blob store in bucket/prefix here; the
// keys go in a credentials file (flags would show in ps).
func (s *Server) Flags(bucket, prefix string) []string {
	s.t.Helper()
	creds := filepath.Join(s.t.TempDir(), "s3-credentials")
	body := "[default]\naws_access_key_id = " + s.AccessKey + "\naws_secret_access_key = " + s.SecretKey + "\n"
	if err := os.WriteFile(creds, []byte(body), 0o600); err != nil {
		s.t.Fatal(err)
	}
	return []string{"--blob-url", fmt.Sprintf("s3://%s/%s", bucket, prefix), "--blob-s3-endpoint", s.Endpoint,
		"--blob-s3-path-style", "--blob-s3-credentials-file", creds}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
