package main

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
)

// rawRunc drives runc directly, the way a hand-rolled sandbox would: one
// `runc exec` per command.
type rawRunc struct {
	root, dir, rootfs string
	seq               int
}

// baseRootfs returns the unpacked layer of the daemon's base image.
func baseRootfs(dataDir string) (string, error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, "layers"))
	if err != nil || len(entries) == 0 {
		return "", fmt.Errorf("no base layer under %s/layers: %v", dataDir, err)
	}
	return filepath.Join(dataDir, "layers", entries[0].Name()), nil
}

// bundle writes a minimal OCI bundle (runc's default spec) running args.
func (r *rawRunc) bundle(id string, args []string) (string, error) {
	dir := filepath.Join(r.dir, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if out, err := exec.Command("runc", "spec", "--bundle", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("runc spec: %s", out)
	}
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var spec map[string]any
	json.Unmarshal(b, &spec)
	spec["root"] = map[string]any{"path": r.rootfs, "readonly": true}
	proc := spec["process"].(map[string]any)
	proc["terminal"] = false
	proc["args"] = args
	b, _ = json.Marshal(spec)
	return dir, os.WriteFile(path, b, 0o600)
}

func (r *rawRunc) run(args ...string) error {
	// A detached container inherits runc's stdio: give it a file, not a pipe
	// that would never reach EOF.
	log, err := os.CreateTemp(r.dir, "runc-out-")
	if err != nil {
		return err
	}
	defer os.Remove(log.Name())
	defer log.Close()
	cmd := exec.Command("runc", append([]string{"--root", r.root}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(log.Name())
		return fmt.Errorf("runc %v: %v: %s", args, err, out)
	}
	return nil
}

func (r *rawRunc) start(args []string) (string, error) {
	r.seq++
	id := fmt.Sprintf("bench-%d-%d", os.Getpid(), r.seq)
	dir, err := r.bundle(id, args)
	if err != nil {
		return "", err
	}
	return id, r.run("run", "--detach", "--bundle", dir, id)
}

func (r *rawRunc) benchExec(n int) result {
	id, err := r.start([]string{"/bin/sleep", "3600"})
	if err != nil {
		log.Fatal(err)
	}
	defer r.run("delete", "--force", id)
	return measure("exec round trip (`true`)", "runc", n, func() error {
		return r.run("exec", id, "/bin/true")
	})
}

func (r *rawRunc) benchCreate(n int) result {
	var ids []string
	res := measure("create → first exec", "runc", n, func() error {
		id, err := r.start([]string{"/bin/sleep", "3600"})
		if err != nil {
			return err
		}
		ids = append(ids, id)
		return r.run("exec", id, "/bin/true")
	})
	for _, id := range ids {
		r.run("delete", "--force", id)
	}
	return res
}
