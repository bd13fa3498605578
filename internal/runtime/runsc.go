package runtime

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime/runscshim"
	"github.com/sbxhq/sbx/wire"
)

// Runsc runs instances in gVisor (class "gvisor"): a user-space kernel
// between the sandbox's processes and the host. Its state lives under its
// own root, apart from runc's.
//
// Flags every runsc command gets (they must match between run, checkpoint
// and restore):
//   - --platform: systrap where the runsc build has it (2023 on; the one
//     scripts/setup.sh installs), else ptrace: Debian 12's runsc (2022) has
//     no systrap, and KVM is not available in most VMs.
//   - --network: "sandbox" when the instance joins a network namespace
//     (Instance.NetNSPath, made and wired by the network package): gVisor's
//     own network stack takes over the namespace's interfaces, addresses
//     and routes, so the host's rules on the veth apply as for runc.
//     "none" (loopback only) otherwise. A restore takes the configuration
//     of the namespace it is given, which may differ from the saved one's (a
//     resume or a fork gets an address of its own); sockets listening on
//     all addresses keep listening. Open TCP connections: see
//     DropsConnections.
//   - --overlay2=none: writes go to the rootfs (the sandbox's overlayfs upper
//     directory on the host), where stop, snapshots and forks find them.
//     Newer runsc releases default to an overlay of their own that keeps
//     writes in a private file.
//   - --host-uds=all: the agent listens on a socket in the bind-mounted
//     run directory that the host connects to ("create" alone is not enough:
//     the agent's chmod and rename of its socket need "open"). Only the
//     sandbox's own files are visible inside, so the only host sockets it
//     can reach are ones it made. As a side effect every unix socket bound
//     on the sandbox's disk is a host socket (sockets under /tmp and
//     /dev/shm, which are tmpfs inside gVisor, are not).
//
// The OCI spec is the one runc gets (Spec). runsc ignores the seccomp
// profile (gVisor itself is the system call filter) and applies the cgroup
// limits to its own host processes: memory counts everything the sandbox
// uses, pids counts gVisor's host threads rather than the sandbox's
// processes.
type Runsc struct {
	tool     ociTool // for every command but run and restore (launchNew)
	binary   string
	root     string
	platform string
	args     []string
	shim     string // binary that runs runscshim.Run; "" for none
	drops    bool   // see DropsConnections
	version  string // runscVersion: recorded in every image it saves
}

var (
	_ Runtime      = (*Runsc)(nil)
	_ Checkpointer = (*Runsc)(nil)
	_ Freezer      = (*Runsc)(nil)
)

// NewRunsc returns a runtime that drives WithBinary's runsc, else the one
// FindRunsc finds, with its state in root (created if missing).
func NewRunsc(root string, opts ...Option) (*Runsc, error) {
	o := applyOptions(opts)
	r := &Runsc{root: root, binary: o.binary, args: o.args, shim: o.shim}
	if r.binary == "" {
		bin, _, err := FindRunsc()
		if err != nil {
			return nil, err
		}
		r.binary = bin
	}
	if _, err := os.Stat(r.binary); err != nil {
		return nil, errdefs.Unavailable(wire.CodeRuntimeUnavailable, "runsc binary %s: %v", r.binary, err)
	}
	if !filepath.IsAbs(root) {
		return nil, errdefs.Invalid(wire.CodeInvalidRuntimeRoot, "runsc root %q must be an absolute path", root)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, errdefs.Internal(err, "create runsc root %s", root)
	}
	features := probeRunsc(r.binary)
	r.drops = features.dropsConnections
	r.version = runscVersion(r.binary)
	r.platform = o.platform
	if r.platform == "" {
		r.platform = "ptrace"
		if features.systrap {
			r.platform = "systrap"
		}
	}
	r.tool = ociTool{name: "runsc", binary: r.binary, flags: r.globalFlags("none")}
	return r, nil
}

// Platform is the gVisor platform the instances run on.
func (r *Runsc) Platform() string { return r.platform }

// Binary is the runsc binary the runtime drives.
func (r *Runsc) Binary() string { return r.binary }

// Version says which gVisor the binary is: its `--version` line, or, for a
// build from the Go module proxy (which says VERSION_MISSING there), the
// module version it was built from.
func (r *Runsc) Version() string { return r.version }

// stateFile is where runsc (the 2022 release and later) keeps the state of
// the single-container sandbox id.
func (r *Runsc) stateFile(id string) string {
	return filepath.Join(r.root, id+"_sandbox:"+id+".state")
}

// globalFlags come before the subcommand of every runsc call; network is
// what --network says to run and restore (other commands ignore it).
func (r *Runsc) globalFlags(network string) []string {
	return []string{"--root", r.root, "--platform=" + r.platform, "--network=" + network, "--host-uds=all", "--overlay2=none"}
}

// Start writes config.json into the bundle and runs the sandbox detached,
// with the log file as its stdio (never a pipe to this process, which may go
// away) and in its own session, so it outlives the daemon.
//
// An existing instance with inst.ID is a Conflict; any other failure deletes
// what was made and returns runsc's message.
func (r *Runsc) Start(ctx context.Context, inst *Instance) (Status, error) {
	return r.launch(ctx, inst, "run", nil)
}

// Restore starts inst from the checkpoint image in dir (see Checkpointer).
// The agent inside does not listen until it is woken (agentapi.Wake or
// SIGUSR1).
func (r *Runsc) Restore(ctx context.Context, inst *Instance, dir string) (Status, error) {
	if _, err := os.Stat(filepath.Join(dir, "checkpoint.img")); err != nil {
		return Status{}, errdefs.Invalid(wire.CodeInvalidCheckpoint, "no checkpoint image in %s", dir)
	}
	if err := r.canRestore(dir); err != nil {
		return Status{}, err
	}
	return r.launch(ctx, inst, "restore", []string{"--image-path", dir})
}

func (r *Runsc) launch(ctx context.Context, inst *Instance, verb string, extra []string) (Status, error) {
	if err := validate(inst); err != nil {
		return Status{}, err
	}
	// A failed `runsc run` of an id runsc already has deletes that
	// container's state and orphans its sandbox, so an existing id must never
	// reach runsc. Every runsc call costs a few hundred milliseconds; the
	// state file runsc keeps per container says as much, at once.
	if _, err := os.Stat(r.stateFile(inst.ID)); err == nil {
		return Status{}, errdefs.Conflict(wire.CodeInstanceExists, "instance %s already exists", inst.ID)
	}
	st, err := r.launchNew(ctx, inst, verb, extra)
	if err != nil {
		if derr := r.Delete(context.WithoutCancel(ctx), inst.ID); derr != nil {
			err = fmt.Errorf("%w (cleanup failed: %v)", err, derr)
		}
		return Status{}, err
	}
	return st, nil
}

func (r *Runsc) launchNew(ctx context.Context, inst *Instance, verb string, extra []string) (Status, error) {
	if err := prepareDirs(inst); err != nil {
		return Status{}, err
	}
	spec := Spec(inst)
	if r.args != nil {
		spec.Process.Args = r.args
	}
	config, err := json.MarshalIndent(spec, "", "\t")
	if err != nil {
		return Status{}, errdefs.Internal(err, "encode OCI spec")
	}
	if err := os.WriteFile(filepath.Join(inst.BundleDir, "config.json"), config, 0o600); err != nil {
		return Status{}, errdefs.Internal(err, "write OCI spec")
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
	pidFile := filepath.Join(inst.BundleDir, "sandbox.pid")
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Status{}, errdefs.Internal(err, "remove stale pid file")
	}
	network := "none"
	if inst.NetNSPath != "" {
		network = "sandbox"
	}
	args := append(r.globalFlags(network), verb, "--detach", "--bundle", inst.BundleDir, "--pid-file", pidFile)
	args = append(append(args, extra...), inst.ID)
	bin := r.binary
	if network == "sandbox" && r.shim != "" {
		bin, args = r.shim, append([]string{runscshim.Command, r.binary}, args...)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	// Stdin stays nil: exec gives the child /dev/null.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := runTool(cmd); err != nil {
		return Status{}, errdefs.Internal(err, "runsc %s %s: %s", verb, inst.ID, lastLines(readFrom(inst.LogPath, fi.Size()), 5))
	}
	// The pid is the sandbox process on the host (runsc-sandbox): every
	// process of the instance lives inside it, and it exits with them.
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

// lastLines keeps the last n lines of s: runsc ends a failure with a long
// Go stack trace whose first lines say nothing.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Checkpoint saves the instance to dir and ends it (see Checkpointer). The
// image is written to a temporary directory next to dir and renamed into
// place, so dir either holds a whole image or does not exist.
func (r *Runsc) Checkpoint(ctx context.Context, id, dir string) error {
	if err := validID(id); err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		return errdefs.Invalid(wire.CodeInvalidCheckpoint, "checkpoint directory %q must be an absolute path", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return errdefs.Internal(err, "clear checkpoint directory %s", dir)
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return errdefs.Internal(err, "clear checkpoint directory %s", tmp)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return errdefs.Internal(err, "create checkpoint directory %s", tmp)
	}
	if _, err := r.tool.run(ctx, "checkpoint", "--image-path", tmp, id); err != nil {
		os.RemoveAll(tmp)
		return errdefs.Internal(err, "checkpoint instance %s", id)
	}
	if err := os.WriteFile(filepath.Join(tmp, imageVersionFile), []byte(r.version+"\n"), 0o600); err != nil {
		os.RemoveAll(tmp)
		return errdefs.Internal(err, "record the runsc of checkpoint %s", id)
	}
	if err := syncDir(tmp); err != nil {
		os.RemoveAll(tmp)
		return errdefs.Internal(err, "sync checkpoint of %s", id)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return errdefs.Internal(err, "install checkpoint of %s", id)
	}
	return nil
}

// syncDir flushes every file in dir and dir itself, so an image that was
// renamed into place survives a host crash whole.
func syncDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// State reports the instance. A paused (frozen) instance counts as running.
func (r *Runsc) State(ctx context.Context, id string) (Status, error) { return r.tool.status(ctx, id) }

// Kill signals every process of the instance. A stopped or missing instance
// is not an error.
func (r *Runsc) Kill(ctx context.Context, id string, sig syscall.Signal) error {
	return r.kill(ctx, id, sig, true)
}

// SignalInit signals the instance's init process (the agent) alone.
func (r *Runsc) SignalInit(ctx context.Context, id string, sig syscall.Signal) error {
	return r.kill(ctx, id, sig, false)
}

func (r *Runsc) kill(ctx context.Context, id string, sig syscall.Signal, all bool) error {
	if err := validID(id); err != nil {
		return err
	}
	// After a checkpoint (and a crash) the sandbox process is gone: there
	// is nothing to signal, and runsc would take a call or two to say so.
	if r.sandboxGone(id) {
		return nil
	}
	args := []string{"kill"}
	if all {
		args = append(args, "--all")
	}
	_, err := r.tool.run(ctx, append(args, id, strconv.Itoa(int(sig)))...)
	if err == nil || notExist(err) || notRunning(err) {
		return nil
	}
	st, serr := r.State(ctx, id)
	if errdefs.Is(serr, errdefs.KindNotFound) || (serr == nil && !st.Running) {
		return nil
	}
	return errdefs.Internal(err, "signal instance %s", id)
}

// sandboxGone reports whether the instance's sandbox process, in which
// every process of the instance lives, has exited (or is a zombie). It
// reads the pid from runsc's state file; when in doubt it says false.
func (r *Runsc) sandboxGone(id string) bool {
	data, err := os.ReadFile(r.stateFile(id))
	if err != nil {
		return false
	}
	var s struct {
		Sandbox struct {
			Pid int `json:"pid"`
		} `json:"sandbox"`
	}
	if json.Unmarshal(data, &s) != nil || s.Sandbox.Pid <= 0 {
		return false
	}
	return !processAlive(s.Sandbox.Pid)
}

// processAlive reports whether pid is a process that has not exited: an
// exited one whose parent has not reaped it yet is a zombie ("Z" in
// /proc/PID/stat, after the parenthesised command name).
func processAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return true
	}
	state := data[i+2]
	return state != 'Z' && state != 'X'
}

// Pause freezes every process of the instance (runsc pause).
func (r *Runsc) Pause(ctx context.Context, id string) error { return r.tool.freeze(ctx, "pause", id) }

// Resume lets a paused instance go on. Resuming a running one is not an
// error.
func (r *Runsc) Resume(ctx context.Context, id string) error { return r.tool.freeze(ctx, "resume", id) }

// Paused reports whether the instance is frozen.
func (r *Runsc) Paused(ctx context.Context, id string) (bool, error) { return r.tool.paused(ctx, id) }

// Delete ends the instance and removes its runtime state and cgroups.
// Deleting a missing instance is not an error.
func (r *Runsc) Delete(ctx context.Context, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	return r.tool.deleteInstance(ctx, id)
}

// List returns every instance under this runtime's root.
func (r *Runsc) List(ctx context.Context) ([]string, error) { return r.tool.list(ctx) }

// nullNetnsFile is where runsc pins the empty network namespace it shares
// between gofers (specutils.NullNetNSFilename, relative to --root). Each
// start it bind-mounts one if none is there; concurrent starts may stack
// several.
const nullNetnsFile = "null-netns"

// Close lets go of what runsc shares between instances once none is left
// under the root: the pinned null network namespace, which would otherwise
// outlive the daemon as a mount in its data directory (and keep that from
// being removed). Instances that outlive the daemon keep it; the next
// start pins one again.
func (r *Runsc) Close(ctx context.Context) error {
	ids, err := r.List(ctx)
	if err != nil || len(ids) > 0 {
		return err
	}
	for syscall.Unmount(filepath.Join(r.root, nullNetnsFile), syscall.MNT_DETACH) == nil {
	}
	return nil
}

// imageVersionFile, in a memory image, says which runsc saved it (Version).
// gVisor restores only images of its own version, and one built from the
// module proxy cannot tell (all say VERSION_MISSING), so without this
// another build would try to load an image whose layout it does not know.
const imageVersionFile = "runsc-version"

// canRestore refuses an image another runsc saved, saying what to do. An
// image without the record (saved by an sbx before it) is left to runsc.
func (r *Runsc) canRestore(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, imageVersionFile))
	if err != nil {
		return nil
	}
	saved := strings.TrimSpace(string(b))
	if saved == r.version {
		return nil
	}
	return errdefs.Conflict(wire.CodeMemoryImageRunsc,
		"the memory image was saved by runsc %q and this daemon runs %q (%s), which cannot restore it: run sbx serve with that runsc (--runsc) to bring the processes back, or keep the files only (sbx snapshot create, then create a sandbox from the snapshot)",
		saved, r.version, r.binary)
}

// runscVersion is the first line of `runsc --version` without its
// "runsc version " prefix; for a binary that does not know its version,
// the gVisor module version Go recorded in it.
func runscVersion(binary string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, binary, "--version").Output()
	line, _, _ := strings.Cut(string(out), "\n")
	v := strings.TrimSpace(strings.TrimPrefix(line, "runsc version"))
	if v != "" && v != "VERSION_MISSING" {
		return v
	}
	if bi, err := buildinfo.ReadFile(binary); err == nil {
		for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			if m.Path == "gvisor.dev/gvisor" && m.Version != "" && m.Version != "(devel)" {
				return m.Path + "@" + m.Version
			}
		}
	}
	if v == "" {
		return "unknown"
	}
	return v
}
