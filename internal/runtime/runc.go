package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Runc runs instances as runc containers (class "container"). It keeps its
// container state under its own root, apart from any other runc user.
type Runc struct {
	tool   ociTool
	binary string
	root   string
	args   []string
}

var _ Runtime = (*Runc)(nil)

// NewRunc returns a runtime that drives the runc binary found on PATH (or
// WithBinary's), with its state in root (created if missing).
func NewRunc(root string, opts ...Option) (*Runc, error) {
	o := applyOptions(opts)
	bin := o.binary
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("runc"); err != nil {
			return nil, errdefs.Unavailable(wire.CodeRuntimeUnavailable,
				"runc is not installed or not on PATH; install it with `apt-get install runc`")
		}
	}
	if !filepath.IsAbs(root) {
		return nil, errdefs.Invalid(wire.CodeInvalidRuntimeRoot, "runc root %q must be an absolute path", root)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, errdefs.Internal(err, "create runc root %s", root)
	}
	r := &Runc{binary: bin, root: root, args: o.args}
	r.tool = ociTool{name: "runc", binary: bin, flags: []string{"--root", root}}
	return r, nil
}

// Start writes config.json into the bundle and runs the container detached.
// The container's stdio is the log file, never a pipe to this process, and
// runc runs in its own session: the instance outlives the daemon.
//
// A container that already has inst.ID, even a stopped one, is a Conflict
// and is left alone; Delete it first. Any other failure deletes whatever
// was made (runc state, cgroups) and returns runc's own message.
func (r *Runc) Start(ctx context.Context, inst *Instance) (Status, error) {
	if err := validate(inst); err != nil {
		return Status{}, err
	}
	// A container that already has this id is not ours to clean up. runc
	// keeps a container's state in root/<id> and refuses an id whose
	// directory exists; a stat asks the same question as `runc state`
	// without starting a process on every create.
	switch _, err := os.Stat(filepath.Join(r.root, inst.ID)); {
	case err == nil:
		return Status{}, errdefs.Conflict(wire.CodeInstanceExists, "instance %s already exists", inst.ID)
	case !errors.Is(err, os.ErrNotExist):
		return Status{}, errdefs.Internal(err, "check instance %s", inst.ID)
	}
	st, err := r.start(ctx, inst)
	if err != nil {
		// Clean up even when ctx is what failed.
		if derr := r.Delete(context.WithoutCancel(ctx), inst.ID); derr != nil {
			err = fmt.Errorf("%w (cleanup failed: %v)", err, derr)
		}
		return Status{}, err
	}
	return st, nil
}

func (r *Runc) start(ctx context.Context, inst *Instance) (Status, error) {
	if err := prepareDirs(inst); err != nil {
		return Status{}, err
	}
	spec := Spec(inst)
	if r.args != nil {
		spec.Process.Args = r.args
	}
	release, err := enterUserns(inst, spec)
	defer release() // runc run --detach returns once the instance is in it
	if err != nil {
		return Status{}, errdefs.Internal(err, "prepare the user namespace of %s", inst.ID)
	}
	config, err := json.MarshalIndent(spec, "", "\t")
	if err != nil {
		return Status{}, errdefs.Internal(err, "encode OCI spec")
	}
	if err := os.WriteFile(filepath.Join(inst.BundleDir, "config.json"), config, 0o600); err != nil {
		return Status{}, errdefs.Internal(err, "write OCI spec")
	}
	pidFile := filepath.Join(inst.BundleDir, "init.pid")
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Status{}, errdefs.Internal(err, "remove stale pid file")
	}

	logFile, err := os.OpenFile(inst.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return Status{}, errdefs.Internal(err, "open instance log %s", inst.LogPath)
	}
	defer logFile.Close()
	fi, err := logFile.Stat()
	if err != nil {
		return Status{}, errdefs.Internal(err, "stat instance log")
	}

	// runc passes its own stdio to the container, so runc's error messages
	// land in the log too: on failure, what it wrote after offset is runc's.
	cmd := exec.CommandContext(ctx, r.binary, "--root", r.root, "run", "--detach",
		"--bundle", inst.BundleDir, "--pid-file", pidFile, inst.ID)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := runTool(cmd); err != nil {
		return Status{}, errdefs.Internal(err, "runc run %s: %s", inst.ID, readFrom(inst.LogPath, fi.Size()))
	}

	data, err := os.ReadFile(pidFile)
	if err != nil {
		return Status{}, errdefs.Internal(err, "read pid file of %s", inst.ID)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return Status{}, errdefs.Internal(err, "bad pid file of %s: %q", inst.ID, data)
	}
	return Status{ID: inst.ID, Running: true, Pid: pid}, nil
}

// readFrom returns at most the last 4 KiB written to path after offset.
func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > 4096 {
		offset = fi.Size() - 4096
	}
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, 4096))
	return strings.TrimSpace(string(b))
}

// State reports the container. A paused container counts as running: its
// processes exist and its pid is valid.
func (r *Runc) State(ctx context.Context, id string) (Status, error) { return r.tool.status(ctx, id) }

// Kill signals every process of the container, not only init (--all: runc
// signals each process in the container's cgroup, which is what reaches them
// all on cgroup v1). A stopped or missing container is not an error.
func (r *Runc) Kill(ctx context.Context, id string, sig syscall.Signal) error {
	if err := validID(id); err != nil {
		return err
	}
	_, err := r.tool.run(ctx, "kill", "--all", id, strconv.Itoa(int(sig)))
	if err == nil {
		return nil
	}
	st, serr := r.State(ctx, id)
	if errdefs.Is(serr, errdefs.KindNotFound) || (serr == nil && !st.Running) {
		return nil
	}
	return errdefs.Internal(err, "kill instance %s", id)
}

// Delete force-deletes the container and then makes sure its cgroups are
// gone in every hierarchy.
func (r *Runc) Delete(ctx context.Context, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	if err := r.tool.deleteInstance(ctx, id); err != nil {
		return err
	}
	if err := leaveUserns(id); err != nil {
		return errdefs.Internal(err, "remove the user namespace of %s", id)
	}
	return nil
}

// List returns every container under this runtime's root, running or not.
func (r *Runc) List(ctx context.Context) ([]string, error) { return r.tool.list(ctx) }

// idPattern is what runc accepts as a container id.
var idPattern = regexp.MustCompile(`^[\w+.-]+$`)

func validID(id string) error {
	if !idPattern.MatchString(id) || id == "." || id == ".." || len(id) > 128 {
		return errdefs.Invalid(wire.CodeInvalidInstanceID,
			"instance id %q must be 1-128 letters, digits, '_', '+', '-' or '.'", id)
	}
	return nil
}

// validate checks an instance before anything is made for it.
func validate(inst *Instance) error {
	if inst == nil {
		return errdefs.Invalid(wire.CodeInvalidInstance, "no instance given")
	}
	if err := validID(inst.ID); err != nil {
		return err
	}
	for name, p := range map[string]string{
		"bundle dir": inst.BundleDir, "rootfs dir": inst.RootfsDir, "agent binary": inst.AgentBinary,
		"run dir": inst.RunDir, "log path": inst.LogPath,
	} {
		if !filepath.IsAbs(p) {
			return errdefs.Invalid(wire.CodeInvalidInstance, "instance %s: %s %q must be an absolute path", inst.ID, name, p)
		}
	}
	if fi, err := os.Stat(inst.RootfsDir); err != nil || !fi.IsDir() {
		return errdefs.Invalid(wire.CodeInvalidInstance, "instance %s: rootfs %s is not a directory", inst.ID, inst.RootfsDir)
	}
	if fi, err := os.Stat(inst.AgentBinary); err != nil || !fi.Mode().IsRegular() {
		return errdefs.Invalid(wire.CodeInvalidInstance, "instance %s: agent binary %s is not a file", inst.ID, inst.AgentBinary)
	}
	if inst.CPU < 0 || (inst.CPU > 0 && inst.CPU*cpuPeriod < 1000) {
		return errdefs.Invalid(wire.CodeInvalidInstance, "instance %s: cpu %g must be 0 (no limit) or at least 0.01", inst.ID, inst.CPU)
	}
	if inst.MemoryMiB < 0 || inst.PidsLimit < 0 {
		return errdefs.Invalid(wire.CodeInvalidInstance, "instance %s: memory and pids limits must not be negative", inst.ID)
	}
	for _, kv := range inst.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return errdefs.Invalid(wire.CodeInvalidInstance, "instance %s: env entry %q is not KEY=VALUE", inst.ID, kv)
		}
	}
	return nil
}
