package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func init() { registerPeer("docker", openDocker) }

// dockerImage is the name the base rootfs is imported under.
const dockerImage = "sbx-bench-base:latest"

// dockerSystem is Docker Engine (Debian's docker.io) driven through its HTTP
// API on a unix socket — the API the docker CLI and SDKs use, without the
// CLI's process start-up — so the comparison is API to API. Unless
// -docker-host names a running daemon, it starts its own dockerd with its own
// data root, exec root, pidfile and socket under the run's temp dir, without
// a bridge or iptables rules, and stops it at the end. Containers run with
// --network none, as sbx sandboxes have loopback only.
type dockerSystem struct {
	hc  *http.Client
	cmd *exec.Cmd // nil when using a running dockerd
	dir string
	seq atomic.Int64

	mu      sync.Mutex
	created []string // every container made, for Close
}

func openDocker(env *Env) (System, error) {
	s := &dockerSystem{dir: filepath.Join(env.Work, "docker")}
	sock := *dockerHost
	if sock == "" {
		if _, err := exec.LookPath("dockerd"); err != nil {
			return nil, fmt.Errorf("%w: dockerd is not installed (scripts/bench-setup.sh installs docker.io)", errSkip)
		}
		var err error
		if sock, err = s.startDaemon(); err != nil {
			s.Close()
			return nil, err
		}
	}
	sock = strings.TrimPrefix(sock, "unix://")
	s.hc = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 64,
	}}
	if err := waitHTTP("http://docker/_ping", s.hc); err != nil {
		s.Close()
		return nil, fmt.Errorf("dockerd did not answer on %s: %w", sock, err)
	}
	f, err := os.Open(env.RootfsTar)
	if err != nil {
		s.Close()
		return nil, err
	}
	defer f.Close()
	if err := s.call("POST", "/images/create?fromSrc=-&repo=sbx-bench-base&tag=latest", "application/x-tar", f, nil); err != nil {
		s.Close()
		return nil, fmt.Errorf("docker import: %w", err)
	}
	return s, nil
}

func (s *dockerSystem) startDaemon() (string, error) {
	for _, d := range []string{"data", "exec"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o700); err != nil {
			return "", err
		}
	}
	sock := filepath.Join(s.dir, "docker.sock")
	logf, err := os.Create(filepath.Join(s.dir, "dockerd.log"))
	if err != nil {
		return "", err
	}
	defer logf.Close()
	s.cmd = exec.Command("dockerd",
		"--data-root", filepath.Join(s.dir, "data"), "--exec-root", filepath.Join(s.dir, "exec"),
		"--pidfile", filepath.Join(s.dir, "docker.pid"), "-H", "unix://"+sock,
		"--bridge", "none", "--iptables=false", "--ip-masq=false", "--userland-proxy=false",
		"--storage-driver", "overlay2", "--log-level", "warn")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return "", err
	}
	return sock, nil
}

func (s *dockerSystem) Name() string { return "docker" }

// DaemonPids are dockerd and the containerd it started.
func (s *dockerSystem) DaemonPids() []int {
	if s.cmd == nil {
		return nil
	}
	pid := s.cmd.Process.Pid
	return append([]int{pid}, childrenNamed(pid, "containerd")...)
}

func (s *dockerSystem) Close() {
	if s.hc != nil {
		for _, id := range s.created {
			s.call("DELETE", "/containers/"+id+"?force=1&v=1", "", nil, nil)
		}
		s.call("DELETE", "/images/"+dockerImage+"?force=1", "", nil, nil)
	}
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	unmountUnder(s.dir)
	os.RemoveAll(s.dir)
}

// call sends one API request and decodes a JSON answer into out. A JSON
// message stream (image import) is read to its end and its errors reported.
func (s *dockerSystem) call(method, p, ctype string, body io.Reader, out any) error {
	req, err := http.NewRequest(method, "http://docker/v1.41"+p, body)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, p, resp.StatusCode, bytes.TrimSpace(b))
	}
	if bytes.Contains(b, []byte(`"error"`)) && strings.HasPrefix(p, "/images/create") {
		return fmt.Errorf("%s", b)
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
}

func (s *dockerSystem) Create() (Box, error) {
	name := fmt.Sprintf("sbx-bench-%d-%d", os.Getpid(), s.seq.Add(1))
	spec := map[string]any{
		"Image": dockerImage, "Cmd": []string{"/bin/sleep", "3600"}, "WorkingDir": "/workspace",
		"HostConfig": map[string]any{"NetworkMode": "none"},
	}
	b, _ := json.Marshal(spec)
	var created struct{ Id string }
	if err := s.call("POST", "/containers/create?name="+name, "application/json", bytes.NewReader(b), &created); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.created = append(s.created, created.Id)
	s.mu.Unlock()
	box := &dockerBox{s: s, id: created.Id}
	if err := s.call("POST", "/containers/"+box.id+"/start", "", nil, nil); err != nil {
		box.Delete()
		return nil, err
	}
	return box, nil
}

type dockerBox struct {
	s  *dockerSystem
	id string
}

// Exec does what `docker exec` does: create an exec, start it attached and
// read its output to the end, then inspect it for the exit code.
func (b *dockerBox) Exec(args ...string) error {
	spec, _ := json.Marshal(map[string]any{"Cmd": args, "AttachStdout": true, "AttachStderr": true})
	var ex struct{ Id string }
	if err := b.s.call("POST", "/containers/"+b.id+"/exec", "application/json", bytes.NewReader(spec), &ex); err != nil {
		return err
	}
	if err := b.s.call("POST", "/exec/"+ex.Id+"/start", "application/json", strings.NewReader(`{"Detach":false,"Tty":false}`), nil); err != nil {
		return err
	}
	var st struct {
		ExitCode int
		Running  bool
	}
	if err := b.s.call("GET", "/exec/"+ex.Id+"/json", "", nil, &st); err != nil {
		return err
	}
	if st.Running || st.ExitCode != 0 {
		return fmt.Errorf("%v: exit %d (running %v)", args, st.ExitCode, st.Running)
	}
	return nil
}

// Upload does what `docker cp FILE CONTAINER:DST` does: PUT a tar holding the
// file to the container's archive endpoint.
func (b *dockerBox) Upload(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Name: path.Base(dst), Mode: 0o644, Size: fi.Size(), ModTime: fi.ModTime(), Typeflag: tar.TypeReg})
		if err == nil {
			_, err = io.Copy(tw, f)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	return b.s.call("PUT", "/containers/"+b.id+"/archive?path="+url.QueryEscape(path.Dir(dst)), "application/x-tar", pr, nil)
}

// Download does what `docker cp CONTAINER:SRC -` does: GET the archive and
// unpack its one file.
func (b *dockerBox) Download(src string, w io.Writer) (int64, error) {
	resp, err := b.s.hc.Get("http://docker/v1.41/containers/" + b.id + "/archive?path=" + url.QueryEscape(src))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("archive: %d %s", resp.StatusCode, msg)
	}
	tr := tar.NewReader(resp.Body)
	if _, err := tr.Next(); err != nil {
		return 0, err
	}
	return io.Copy(w, tr)
}

func (b *dockerBox) Delete() error {
	return b.s.call("DELETE", "/containers/"+b.id+"?force=1&v=1", "", nil, nil)
}

// Pids: the container's init and its containerd-shim (the init's parent).
func (b *dockerBox) Pids() (int, []int, error) {
	var st struct{ State struct{ Pid int } }
	if err := b.s.call("GET", "/containers/"+b.id+"/json", "", nil, &st); err != nil {
		return 0, nil, err
	}
	shim, err := ppid(st.State.Pid)
	if err != nil {
		return 0, nil, err
	}
	return st.State.Pid, []int{shim}, nil
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var mounts []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			mounts = append(mounts, f[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		syscall.Unmount(mounts[i], syscall.MNT_DETACH)
	}
}
