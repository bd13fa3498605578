package sandbox

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// AgentBinaryName is the small agent binary (cmd/sbx-agent) the daemon
// looks for next to its own executable. Every instance runs it as PID 1:
// it links the agent alone, so an idle sandbox costs a fraction of what the
// whole sbx binary (daemon, CLI, compat layers, …) costs as its agent.
const AgentBinaryName = "sbx-agent"

// AgentSource picks the binary every new instance runs as its agent: path
// when given (sbx serve --agent-binary), else sbx-agent next to self (the
// daemon's executable), else self, which serves `sbx agent` too, with a
// warning: `go build ./cmd/sbx` alone still works, at a higher idle cost.
func AgentSource(path, self string, log *slog.Logger) (string, error) {
	if path != "" {
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			return "", fmt.Errorf("agent binary %s: not a file", path)
		}
		return path, nil
	}
	next := filepath.Join(filepath.Dir(self), AgentBinaryName)
	if fi, err := os.Stat(next); err == nil && fi.Mode().IsRegular() {
		return next, nil
	}
	log.Warn("no "+AgentBinaryName+" next to sbx: sandboxes run the whole sbx binary as their agent, which costs more memory per sandbox; build it with CGO_ENABLED=0 go build ./cmd/sbx-agent and put it next to sbx, or pass --agent-binary",
		"looked-for", next)
	return self, nil
}

// InstallAgent copies the agent binary src into the data dir under its
// content hash (<data>/agent/sbx-<hash>) and returns the copy's path.
// Instances bind-mount that copy, so replacing or deleting the binary on
// disk never changes what a running instance sees (agentbin.go).
func InstallAgent(dataDir, src string) (string, error) {
	if err := requireStatic(src); err != nil {
		return "", err
	}
	f, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	dir := filepath.Join(dataDir, "agent")
	dst := filepath.Join(dir, "sbx-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := f.Seek(0, 0); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := io.Copy(tmp, f); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return dst, os.Rename(tmp.Name(), dst)
}

// requireStatic refuses a dynamically linked agent: inside a sandbox it
// cannot count on the image having the host's C library.
func requireStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked, but it runs inside sandboxes as their agent; rebuild it with CGO_ENABLED=0 go build ./cmd/sbx ./cmd/sbx-agent", path)
		}
	}
	return nil
}
