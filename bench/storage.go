package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sbxhq/sbx/sdk"
)

// Archive and restore throughput: the first daemon archives to its local
// blob directory, a second one to an S3 bucket on a versitygw started here
// (loopback, POSIX backend under the run's directory), same run, same data.

var (
	versitygwBin = flag.String("versitygw", os.Getenv("SBX_VERSITYGW"), "versitygw binary for the S3 archive scenario (scripts/build-versitygw.sh; default $SBX_VERSITYGW)")
	storageMiB   = flag.Int("storage-mib", 0, "MiB of files archived and restored per round (default 256; 16 with -quick)")
	storageN     = flag.Int("storage-n", 0, "archive and restore rounds per blob store (default 5; 1 with -quick)")
)

func init() { registerSbxOnly(benchStorage) }

func benchStorage(env *Env) []result {
	sizeMiB, n := env.n(256, 16), env.n(5, 1)
	if *storageMiB > 0 {
		sizeMiB = *storageMiB
	}
	if *storageN > 0 {
		n = *storageN
	}
	out := archiveRestore(env.Client, "sbx (local blob dir)", sizeMiB, n)
	if *versitygwBin == "" {
		log.Printf("skipping the S3 archive scenario: pass -versitygw or set SBX_VERSITYGW (scripts/build-versitygw.sh)")
		return out
	}
	gw, err := startVersitygw(filepath.Join(env.Work, "versitygw"))
	if err != nil {
		log.Printf("S3 archive scenario: %v", err)
		return append(out, failed("archive to S3", "sbx (S3, versitygw)", err))
	}
	defer gw.stop()
	// The second daemon reads its S3 settings from the environment (see
	// cmd/sbx/serve_blob.go); they are set only while it starts.
	for k, v := range gw.env() {
		os.Setenv(k, v)
	}
	second, err := openSecondSbx(env, *sbxBin, "sbx (S3)", "sbx-s3")
	for k := range gw.env() {
		os.Unsetenv(k)
	}
	if err != nil {
		return append(out, failed("archive to S3", "sbx (S3, versitygw)", err))
	}
	defer second.Close()
	return append(out, archiveRestore(second.client, "sbx (S3, versitygw)", sizeMiB, n)...)
}

// archiveRestore writes sizeMiB of random data into a sandbox, then n
// times archives the stopped sandbox and starts it again (restore and
// start), in MiB/s of the sandbox's data.
func archiveRestore(c *sdk.Client, system string, sizeMiB, n int) []result {
	ctx := context.Background()
	archiveName := fmt.Sprintf("archive %d MiB of files (MiB/s)", sizeMiB)
	restoreName := fmt.Sprintf("restore %d MiB and start (MiB/s)", sizeMiB)
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Network: "none"})
	if err != nil {
		return []result{failed(archiveName, system, err)}
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: fmt.Sprintf("dd if=/dev/urandom of=/workspace/data bs=1M count=%d 2>/dev/null", sizeMiB)})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("dd: exit %d: %s", res.ExitCode, res.Stderr)
	}
	if err != nil {
		return []result{failed(archiveName, system, err)}
	}
	var archive, restore []float64
	for i := 0; i < n; i++ {
		if _, err := c.StopSandbox(ctx, sb.ID, sdk.StopOptions{}); err != nil {
			return []result{failed(archiveName, system, err)}
		}
		start := time.Now()
		if _, err := c.ArchiveSandbox(ctx, sb.ID); err != nil {
			return []result{failed(archiveName, system, err)}
		}
		archive = append(archive, float64(sizeMiB)/time.Since(start).Seconds())
		start = time.Now()
		if _, err := c.StartSandbox(ctx, sb.ID); err != nil {
			return []result{failed(restoreName, system, err)}
		}
		restore = append(restore, float64(sizeMiB)/time.Since(start).Seconds())
	}
	return []result{summarize(archiveName, system, "MiB/s", archive), summarize(restoreName, system, "MiB/s", restore)}
}

// versitygw is an S3 server of this run.
type versitygw struct {
	cmd              *exec.Cmd
	endpoint, bucket string
	access, secret   string
}

func startVersitygw(dir string) (*versitygw, error) {
	root := filepath.Join(dir, "data")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	secret := make([]byte, 16)
	rand.Read(secret)
	g := &versitygw{endpoint: "http://" + addr, bucket: "sbx-bench", access: "sbxbench", secret: hex.EncodeToString(secret)}
	logf, err := os.Create(filepath.Join(dir, "versitygw.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	g.cmd = exec.Command(*versitygwBin, "--port", addr, "posix", root)
	g.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+g.access, "ROOT_SECRET_KEY="+g.secret)
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(g.endpoint + "/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("versitygw did not answer (see %s): %w", logf.Name(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(g.access, g.secret, ""), BucketLookup: minio.BucketLookupPath, Region: "us-east-1"})
	if err == nil {
		err = c.MakeBucket(context.Background(), g.bucket, minio.MakeBucketOptions{Region: "us-east-1"})
	}
	if err != nil {
		g.stop()
		return nil, fmt.Errorf("create bucket: %w", err)
	}
	return g, nil
}

func (g *versitygw) env() map[string]string {
	return map[string]string{
		"SBX_BLOB_URL": "s3://" + g.bucket + "/archives", "SBX_BLOB_S3_ENDPOINT": g.endpoint, "SBX_BLOB_S3_PATH_STYLE": "true",
		"SBX_BLOB_S3_ACCESS_KEY": g.access, "SBX_BLOB_S3_SECRET_KEY": g.secret,
	}
}

// stop kills the server by its pid.
func (g *versitygw) stop() {
	g.cmd.Process.Signal(syscall.SIGKILL)
	g.cmd.Wait()
}
