package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

func init() { registerPeer("runc", openRunc) }

// runcSystem drives runc directly, the way a hand-rolled sandbox would: an
// overlay over the same rootfs, `runc run --detach` with runc's default spec
// and `sleep` as init, and one `runc exec` per command.
type runcSystem struct {
	root, dir, rootfs string
	seq               atomic.Int64
}

func openRunc(env *Env) (System, error) {
	if _, err := exec.LookPath("runc"); err != nil {
		return nil, fmt.Errorf("%w: runc is not installed", errSkip)
	}
	return &runcSystem{root: filepath.Join(env.Work, "runc-root"), dir: filepath.Join(env.Work, "runc"), rootfs: env.Rootfs}, nil
}

func (r *runcSystem) Name() string { return "runc" }

func (r *runcSystem) Close() {
	out, _ := exec.Command("runc", "--root", r.root, "list", "-q").Output()
	for _, id := range strings.Fields(string(out)) {
		(&runcBox{r: r, id: id, dir: filepath.Join(r.dir, id)}).Delete()
	}
}

func (r *runcSystem) Create() (Box, error) {
	id := fmt.Sprintf("bench-%d-%d", os.Getpid(), r.seq.Add(1))
	b := &runcBox{r: r, id: id, dir: filepath.Join(r.dir, id)}
	rootfs, err := overlay(r.rootfs, b.dir)
	if err != nil {
		return nil, err
	}
	if err := r.bundle(b.dir, rootfs, []string{"/bin/sleep", "3600"}); err != nil {
		b.Delete()
		return nil, err
	}
	// A detached container inherits runc's stdio: give it a file, not a pipe
	// that would never reach EOF.
	log, err := os.Create(filepath.Join(b.dir, "init.log"))
	if err != nil {
		b.Delete()
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command("runc", "--root", r.root, "run", "--detach", "--bundle", b.dir, id)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(log.Name())
		b.Delete()
		return nil, fmt.Errorf("runc run: %v: %s", err, out)
	}
	return b, nil
}

// bundle writes runc's default spec (`runc spec`) running args over rootfs.
func (r *runcSystem) bundle(dir, rootfs string, args []string) error {
	if out, err := exec.Command("runc", "spec", "--bundle", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("runc spec: %s", out)
	}
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return err
	}
	spec["root"] = map[string]any{"path": rootfs, "readonly": false}
	proc := spec["process"].(map[string]any)
	proc["terminal"] = false
	proc["args"] = args
	b, _ = json.Marshal(spec)
	return os.WriteFile(path, b, 0o600)
}

type runcBox struct {
	r       *runcSystem
	id, dir string
}

func (b *runcBox) runc(stdin io.Reader, stdout io.Writer, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.Command("runc", append([]string{"--root", b.r.root}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("runc %s: %v: %s", args[0], err, stderr.Bytes())
	}
	return nil
}

func (b *runcBox) Exec(args ...string) error {
	return b.runc(nil, nil, append([]string{"exec", b.id}, args...)...)
}

func (b *runcBox) Upload(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	return b.runc(f, nil, "exec", b.id, "sh", "-c", `cat > "$0"`, dst)
}

func (b *runcBox) Download(src string, w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	err := b.runc(nil, cw, "exec", b.id, "cat", src)
	return cw.n, err
}

func (b *runcBox) Delete() error {
	err := b.runc(nil, nil, "delete", "--force", b.id)
	if b.dir != "" {
		syscall.Unmount(filepath.Join(b.dir, "rootfs"), syscall.MNT_DETACH)
		os.RemoveAll(b.dir)
	}
	return err
}

func (b *runcBox) Pids() (int, []int, error) {
	pid, err := runcPid(b.r.root, b.id)
	return pid, nil, err // runc leaves no process behind but the container's
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
