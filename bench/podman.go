package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

func init() { registerPeer("podman", openPodman) }

// podmanSystem is podman, daemonless, driven by its CLI as people use it:
// every operation is one `podman` process (plus conmon per container). It
// keeps its storage under the run's temp dir and uses runc, like the others.
type podmanSystem struct {
	global []string // --root, --runroot, … for every call
	dir    string
	seq    atomic.Int64
}

func openPodman(env *Env) (System, error) {
	if _, err := exec.LookPath("podman"); err != nil {
		return nil, fmt.Errorf("%w: podman is not installed (scripts/bench-setup.sh installs it)", errSkip)
	}
	dir := filepath.Join(env.Work, "podman")
	s := &podmanSystem{dir: dir, global: []string{
		"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"),
		"--tmpdir", filepath.Join(dir, "tmp"), "--storage-driver", "overlay",
		"--cgroup-manager", "cgroupfs", "--events-backend", "file", "--runtime", "runc",
	}}
	if _, err := s.podman(nil, nil, "import", env.RootfsTar, "sbx-bench-base"); err != nil {
		s.Close()
		return nil, fmt.Errorf("podman import: %w", err)
	}
	return s, nil
}

// podman runs one podman command and returns its trimmed stdout, unless
// stdout is given.
func (s *podmanSystem) podman(stdin io.Reader, stdout io.Writer, args ...string) (string, error) {
	var out, stderr bytes.Buffer
	cmd := exec.Command("podman", append(append([]string(nil), s.global...), args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &stderr
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("podman %s: %v: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(out.String()), nil
}

func (s *podmanSystem) Name() string { return "podman" }

func (s *podmanSystem) Close() {
	s.podman(nil, nil, "rm", "--all", "--force", "--time", "0")
	s.podman(nil, nil, "rmi", "--force", "sbx-bench-base")
	unmountUnder(s.dir)
	os.RemoveAll(s.dir)
}

func (s *podmanSystem) Create() (Box, error) {
	name := fmt.Sprintf("sbx-bench-%d-%d", os.Getpid(), s.seq.Add(1))
	// podman raises RLIMIT_NOFILE and RLIMIT_NPROC beyond what a root
	// without CAP_SYS_RESOURCE may set here, and conmon runs with NPROC
	// 32768: ask for what runc, under conmon, can grant.
	var nofile syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile)
	if _, err := s.podman(nil, nil, "run", "--detach", "--network", "none", "--ulimit", fmt.Sprintf("nofile=%d:%d", nofile.Max, nofile.Max), "--ulimit", "nproc=32768:32768", "--name", name, "--workdir", "/workspace", "sbx-bench-base", "/bin/sleep", "3600"); err != nil {
		return nil, err
	}
	return &podmanBox{s: s, name: name}, nil
}

type podmanBox struct {
	s    *podmanSystem
	name string
}

func (b *podmanBox) Exec(args ...string) error {
	_, err := b.s.podman(nil, nil, append([]string{"exec", b.name}, args...)...)
	return err
}

func (b *podmanBox) Upload(src, dst string) error {
	_, err := b.s.podman(nil, nil, "cp", src, b.name+":"+dst)
	return err
}

// Download copies the file out with `podman cp` to a host file, then reads
// that file: the cost of the copy is podman's, the read is page cache.
func (b *podmanBox) Download(src string, w io.Writer) (int64, error) {
	tmp := filepath.Join(b.s.dir, b.name+"-download")
	defer os.Remove(tmp)
	if _, err := b.s.podman(nil, nil, "cp", b.name+":"+src, tmp); err != nil {
		return 0, err
	}
	f, err := os.Open(tmp)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

func (b *podmanBox) Delete() error {
	_, err := b.s.podman(nil, nil, "rm", "--force", "--time", "0", b.name)
	return err
}

// Pids: the container's init and its conmon.
func (b *podmanBox) Pids() (int, []int, error) {
	out, err := b.s.podman(nil, nil, "inspect", "--format", "{{.State.Pid}} {{.State.ConmonPid}}", b.name)
	if err != nil {
		return 0, nil, err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return 0, nil, fmt.Errorf("podman inspect: %q", out)
	}
	pid, err1 := strconv.Atoi(f[0])
	conmon, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, nil, fmt.Errorf("podman inspect: %q", out)
	}
	return pid, []int{conmon}, nil
}
