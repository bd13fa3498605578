package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/treetar"
	"github.com/sbxhq/sbx/wire"
)

// Snapshots.
//
// A snapshot is the sandbox's upper directory (its own writes) committed as
// one more read-only layer on top of its image's layers, recorded in the
// store with the sandbox's spec; nothing of the image is copied. With
// memory (class gvisor) it also holds a checkpoint image under
// <data>/snapshots/<key>/memory (store.Snapshot.Key: names are per team,
// keys unique across teams), which every sandbox made from it restores
// at its first start, so its processes run from the moment it exists.
//
// Consistency: the upper is copied while nothing writes to it. A started
// sandbox is frozen for the copy (container: cgroup freezer; gvisor: runsc
// pause, after its kernel has flushed file data to the host), a memory
// snapshot copies it while the instance is checkpointed and gone.

// LayerCommitter is what snapshots need of the image manager
// (*image.Manager).
type LayerCommitter interface {
	// CommitUpper stores a copy of an upper dir as a layer, pinned until
	// release is called.
	CommitUpper(ctx context.Context, upper string) (layer string, size int64, release func(), err error)
	// RemoveLayers deletes those of layers that nothing uses.
	RemoveLayers(ctx context.Context, layers []string, inUse func(layers []string) bool) error
}

var snapshotNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// maxSnapshotTTL bounds expiresInSeconds: ten years.
const maxSnapshotTTL = 10 * 365 * 24 * 3600

func validateSnapshotName(name string) error {
	if !snapshotNameRe.MatchString(name) {
		return errdefs.Invalid(wire.CodeInvalidSnapshotName, "invalid snapshot name %q: use 1 to 63 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit", name)
	}
	return nil
}

func (m *Manager) snapshots() (store.SnapshotStore, error) {
	ss, ok := m.cfg.Store.(store.SnapshotStore)
	if !ok {
		return nil, errdefs.Unavailable(wire.CodeSnapshotsUnsupported, "this store does not keep snapshots")
	}
	return ss, nil
}

func (m *Manager) committer() (LayerCommitter, error) {
	lc, ok := m.cfg.Images.(LayerCommitter)
	if !ok {
		return nil, errdefs.Unavailable(wire.CodeSnapshotsUnsupported, "this image store cannot commit layers")
	}
	return lc, nil
}

// snapshotDir is where the files of the snapshot with storage key key are.
func (m *Manager) snapshotDir(key string) string {
	return filepath.Join(m.cfg.DataDir, "snapshots", key)
}

// lockSnapshot takes the lock of team's snapshot name ("": the caller's
// team, as for the store's snapshot methods).
func (m *Manager) lockSnapshot(ctx context.Context, team, name string) func() {
	if team == "" {
		team = auth.TeamOf(ctx)
	}
	// ':' is never in a sandbox name, '/' never in a team's or snapshot's.
	return m.names.Lock("snapshot:" + team + "/" + name)
}

// stagingDir makes a fresh directory for work in progress under
// <data>/staging, which the daemon empties when it starts.
func (m *Manager) stagingDir(prefix string) (string, error) {
	// What is staged (a snapshot, a fork's copy) grows the data dir.
	if err := m.cfg.Disk.Check("copy a sandbox (snapshot or fork)"); err != nil {
		return "", err
	}
	dir := filepath.Join(m.cfg.DataDir, "staging")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", errdefs.Internal(err, "create staging directory")
	}
	d, err := os.MkdirTemp(dir, prefix)
	if err != nil {
		return "", errdefs.Internal(err, "create staging directory")
	}
	return d, nil
}

// CreateSnapshot saves the sandbox idOrName as a new snapshot.
func (m *Manager) CreateSnapshot(ctx context.Context, idOrName string, req wire.CreateSnapshotRequest) (*store.Snapshot, error) {
	ctx = context.WithoutCancel(ctx)
	if err := validateSnapshotName(req.Name); err != nil {
		return nil, err
	}
	if req.ExpiresInSeconds < 0 || req.ExpiresInSeconds > maxSnapshotTTL {
		return nil, errdefs.Invalid(wire.CodeInvalidExpiry, "expiresInSeconds must be between 0 (never) and %d, got %d", maxSnapshotTTL, req.ExpiresInSeconds)
	}
	ss, err := m.snapshots()
	if err != nil {
		return nil, err
	}
	lc, err := m.committer()
	if err != nil {
		return nil, err
	}
	unlockName := m.lockSnapshot(ctx, "", req.Name)
	defer unlockName()
	if _, err := ss.GetSnapshot(ctx, "", req.Name); err == nil {
		return nil, errdefs.Conflict(wire.CodeSnapshotExists, "a snapshot named %q already exists; pick another name or delete it first", req.Name)
	} else if !errdefs.Is(err, errdefs.KindNotFound) {
		return nil, err
	}

	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	staging, err := m.stagingDir("snapshot-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)

	var layer string
	var size int64
	var release func()
	resume := false
	if req.IncludeMemory {
		if _, err := m.checkpointer(sb); err != nil {
			return nil, err
		}
		if _, err := decide(opSnapshotMemory, sb); err != nil {
			return nil, err
		}
		if sb.State == wire.StateStarted {
			if err := m.pauseLocked(ctx, sb, "snapshot"); err != nil {
				return nil, err
			}
			resume = true
		}
		err = linkDir(m.checkpointDir(sb.ID), filepath.Join(staging, "memory"))
		if err == nil {
			err = m.withUpper(ctx, sb, func(upper string) error {
				layer, size, release, err = lc.CommitUpper(ctx, upper)
				return err
			})
		}
	} else {
		if _, err := decide(opSnapshot, sb); err != nil {
			return nil, err
		}
		err = m.withQuietUpper(ctx, sb, func(upper string) error {
			layer, size, release, err = lc.CommitUpper(ctx, upper)
			return err
		})
	}
	if err == nil {
		var snap *store.Snapshot
		if snap, err = m.recordSnapshot(ctx, ss, sb, req, layer, size, staging); err == nil {
			release()
			var rerr error
			if resume { // before the uploads: the sandbox need not wait for them
				rerr = m.resumeLocked(ctx, sb, "snapshot")
			}
			// For other daemons on the same bucket (layerblobs.go,
			// memoryblobs.go).
			if err := m.pushLayers(ctx, snap.Spec.Layers); err != nil {
				m.log.Warn("copy snapshot layers to the blob store; other daemons cannot start from it", "snapshot", req.Name, "err", err)
			} else if err := m.pushSnapshotMemory(ctx, snap); err != nil {
				m.log.Warn("copy snapshot memory image to the blob store; other daemons cannot start from it", "snapshot", req.Name, "err", err)
			}
			if rerr != nil {
				return snap, errdefs.Internal(rerr, "snapshot %s was made, but sandbox %s could not be resumed; it stays paused", req.Name, refOf(sb))
			}
			return snap, nil
		}
	}
	if release != nil {
		release()
		lc.RemoveLayers(ctx, []string{layer}, m.layersInUse(ctx))
	}
	if resume {
		if rerr := m.resumeLocked(ctx, sb, "snapshot"); rerr != nil {
			m.log.Error("resume after a failed snapshot", "id", sb.ID, "err", rerr)
		}
	}
	return nil, err
}

// recordSnapshot moves the memory image (if any) into place and writes the
// record.
func (m *Manager) recordSnapshot(ctx context.Context, ss store.SnapshotStore, sb *store.Sandbox, req wire.CreateSnapshotRequest, layer string, size int64, staging string) (*store.Snapshot, error) {
	spec := sb.Spec
	spec.Layers = append(slices.Clone(sb.Spec.Layers), layer)
	spec.Parent, spec.Snapshot = "", ""
	snap := &store.Snapshot{
		Name: req.Name, Key: store.NewSnapshotKey(req.Name), SandboxID: sb.ID, Spec: spec,
		Memory: req.IncludeMemory, SizeBytes: size, TTLSeconds: req.ExpiresInSeconds,
	}
	if req.ExpiresInSeconds > 0 {
		snap.ExpiresAt = time.Now().UTC().Add(time.Duration(req.ExpiresInSeconds) * time.Second)
	}
	dir := m.snapshotDir(snap.Key)
	if req.IncludeMemory {
		snap.SizeBytes += dirSize(filepath.Join(staging, "memory"))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, errdefs.Internal(err, "create snapshot directory")
		}
		if err := os.Rename(filepath.Join(staging, "memory"), filepath.Join(dir, "memory")); err != nil {
			os.RemoveAll(dir)
			return nil, errdefs.Internal(err, "store memory image of snapshot %s", req.Name)
		}
	}
	if err := ss.CreateSnapshot(ctx, snap); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return snap, nil
}

func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// withQuietUpper runs fn on the upper directory of a locked sandbox while
// nothing writes to it: a started sandbox is frozen for the time, a paused,
// stopped or failed one has nothing running. The caller has checked that
// its operation may read the files in sb's state (decide).
func (m *Manager) withQuietUpper(ctx context.Context, sb *store.Sandbox, fn func(upper string) error) error {
	if sb.State != wire.StateStarted {
		return m.withUpper(ctx, sb, fn)
	}
	if classOf(sb.Spec) == ClassGVisor {
		// gVisor keeps written file data in its own page cache for a while;
		// sync(2) inside sends it to the host files before the freeze.
		if err := m.syncInside(ctx, sb); err != nil {
			return err
		}
	}
	if err := m.freeze(ctx, sb); err != nil {
		return err
	}
	err := m.withUpper(ctx, sb, fn)
	if terr := m.thaw(ctx, sb); terr != nil && err == nil {
		err = terr
	}
	return err
}

// syncTimeout bounds the agent's flush of written file data.
const syncTimeout = 60 * time.Second

// syncInside runs sync(2) in a started sandbox through its agent.
func (m *Manager) syncInside(ctx context.Context, sb *store.Sandbox) error {
	m.mu.Lock()
	inst := m.instances[sb.ID]
	m.mu.Unlock()
	if inst == nil {
		return ErrNotRunning(sb)
	}
	// Flushing may write much data, so it gets a longer deadline than the
	// other agent calls; an agent that does not answer fails the snapshot.
	m.waitingOnAgent(sb.ID)
	callCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if err := inst.agent.Sync(callCtx); err != nil {
		return errdefs.Internal(err, "flush the files of sandbox %s", refOf(sb))
	}
	return nil
}

// withUpper runs fn on the sandbox's upper directory, mounting the
// sandbox's own disk for the time if it has one and no instance runs.
func (m *Manager) withUpper(ctx context.Context, sb *store.Sandbox, fn func(upper string) error) error {
	if sb.Spec.DiskMiB == 0 {
		upper := m.dirsOf(sb.ID).upper
		if err := os.MkdirAll(upper, 0o755); err != nil {
			return errdefs.Internal(err, "create upper directory of %s", sb.ID)
		}
		return fn(upper)
	}
	if m.hasInstance(sb.ID) {
		return fn(m.mountedUpper(sb))
	}
	upper, _, err := m.diskDirs(sb)
	if err != nil {
		return err
	}
	defer m.unmountDisk(sb.ID)
	return fn(upper)
}

// mountedUpper is the upper directory of a sandbox whose mounts are in
// place (an instance runs, or was just checkpointed and not yet released).
func (m *Manager) mountedUpper(sb *store.Sandbox) string {
	if sb.Spec.DiskMiB == 0 {
		return m.dirsOf(sb.ID).upper
	}
	return filepath.Join(m.dirsOf(sb.ID).root, "disk", "upper")
}

// copyTree copies the tree under src into the empty directory dst exactly:
// whiteouts, overlay attributes, owners, modes, times and hard links.
func copyTree(ctx context.Context, src, dst string) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(treetar.Pack(pw, src)) }()
	err := treetar.Unpack(pr, dst)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return errdefs.Internal(err, "copy %s", src)
	}
	return nil
}

// GetSnapshot returns a snapshot.
func (m *Manager) GetSnapshot(ctx context.Context, name string) (*store.Snapshot, error) {
	ss, err := m.snapshots()
	if err != nil {
		return nil, err
	}
	return ss.GetSnapshot(ctx, "", name)
}

// ListSnapshots returns every snapshot, oldest first.
func (m *Manager) ListSnapshots(ctx context.Context) ([]*store.Snapshot, error) {
	ss, err := m.snapshots()
	if err != nil {
		return nil, err
	}
	return ss.ListSnapshots(ctx)
}

// DeleteSnapshot deletes a snapshot, its memory image and the layers no
// image, sandbox or other snapshot uses. Sandboxes made from it keep their
// layers.
func (m *Manager) DeleteSnapshot(ctx context.Context, name string) error {
	return m.deleteSnapshot(context.WithoutCancel(ctx), "", name, time.Time{})
}

// deleteSnapshot deletes team's snapshot name ("": the caller's team); with
// a non-zero expiredBy only if it expired by then (a create may have just
// moved its expiry).
func (m *Manager) deleteSnapshot(ctx context.Context, team, name string, expiredBy time.Time) error {
	ss, err := m.snapshots()
	if err != nil {
		return err
	}
	lc, err := m.committer()
	if err != nil {
		return err
	}
	unlock := m.lockSnapshot(ctx, team, name)
	defer unlock()
	snap, err := ss.GetSnapshot(ctx, team, name)
	if err != nil {
		return err
	}
	if !expiredBy.IsZero() && (snap.ExpiresAt.IsZero() || snap.ExpiresAt.After(expiredBy)) {
		return nil
	}
	if err := ss.DeleteSnapshot(ctx, snap.Team, name); err != nil {
		return err
	}
	if err := os.RemoveAll(m.snapshotDir(snap.Key)); err != nil {
		m.log.Warn("remove snapshot files", "snapshot", name, "err", err)
	}
	m.dropSnapshotMemory(ctx, snap)
	return lc.RemoveLayers(ctx, snap.Spec.Layers, m.layersInUse(ctx))
}

// layersInUse is the inUse callback of layer removal: sandboxes and
// snapshots claim their layers; when unsure, everything is in use.
func (m *Manager) layersInUse(ctx context.Context) func([]string) bool {
	return func(layers []string) bool {
		used, err := m.UsesLayers(ctx, layers)
		return err != nil || used
	}
}

// snapshotsUseLayers reports whether a snapshot lists one of layers.
func (m *Manager) snapshotsUseLayers(ctx context.Context, layers []string) (bool, error) {
	ss, ok := m.cfg.Store.(store.SnapshotStore)
	if !ok {
		return false, nil
	}
	all, err := ss.ListSnapshots(ctx)
	if err != nil {
		return false, err
	}
	for _, snap := range all {
		for _, l := range snap.Spec.Layers {
			if slices.Contains(layers, l) {
				return true, nil
			}
		}
	}
	return false, nil
}

// applyClassAndSnapshot completes a create request's spec: the class, and
// for a sandbox made from a snapshot the snapshot's layers and settings.
// Creating a sandbox from a snapshot restarts the snapshot's expiry.
func (m *Manager) applyClassAndSnapshot(ctx context.Context, req wire.CreateSandboxRequest, spec *store.Spec) error {
	if req.Snapshot == "" {
		spec.Class = req.Class
		if req.Class == ClassContainer {
			spec.Class = ""
		}
		_, err := m.runtimeFor(classOf(*spec))
		return err
	}
	ss, err := m.snapshots()
	if err != nil {
		return err
	}
	snap, err := ss.GetSnapshot(ctx, "", req.Snapshot)
	if err != nil {
		return err
	}
	from := snap.Spec
	switch {
	case req.Image != "":
		return errdefs.Invalid(wire.CodeImageAndSnapshot, "give an image or a snapshot, not both: snapshot %s is based on image %s", snap.Name, from.Image)
	case req.Class != "" && req.Class != classOf(from):
		return errdefs.Invalid(wire.CodeClassMismatch, "snapshot %s is of class %s; a sandbox made from it is too", snap.Name, classOf(from))
	case snap.Memory && (len(req.Env) > 0 || req.Workdir != ""):
		return errdefs.Invalid(wire.CodeMemorySnapshotEnv, "snapshot %s holds running processes, which keep the environment and working directory they had; leave env and workdir out", snap.Name)
	case snap.Memory && ((req.CPU != 0 && req.CPU != from.CPU) || (req.MemoryMiB != 0 && req.MemoryMiB != from.MemoryMiB) || (req.PidsLimit != 0 && req.PidsLimit != from.PidsLimit)):
		return errdefs.Invalid(wire.CodeMemorySnapshotLimits, "snapshot %s holds running processes and restores with the limits it had (cpu %g, memoryMiB %d, pidsLimit %d)", snap.Name, from.CPU, from.MemoryMiB, from.PidsLimit)
	case snap.Memory && req.DiskMiB != 0 && req.DiskMiB != from.DiskMiB:
		return errdefs.Invalid(wire.CodeMemorySnapshotLimits, "snapshot %s holds running processes and restores with the disk it had (diskMiB %d)", snap.Name, from.DiskMiB)
	}
	if _, err := m.runtimeFor(classOf(from)); err != nil {
		return err
	}
	if snap.Memory {
		if err := memorySnapshotNetwork(req, from, spec, snap.Name); err != nil {
			return err
		}
	}
	spec.Image, spec.ImageID, spec.Layers, spec.ImageConfig = from.Image, from.ImageID, from.Layers, from.ImageConfig
	spec.Class, spec.Snapshot, spec.Parent = from.Class, snap.Name, ""
	env := map[string]string{}
	for k, v := range from.Env {
		env[k] = v
	}
	for k, v := range req.Env {
		env[k] = v
	}
	if len(env) > 0 {
		spec.Env = env
	}
	if req.CPU == 0 {
		spec.CPU = from.CPU
	}
	if req.MemoryMiB == 0 {
		spec.MemoryMiB = from.MemoryMiB
	}
	if req.PidsLimit == 0 {
		spec.PidsLimit = from.PidsLimit
	}
	if req.DiskMiB == 0 {
		spec.DiskMiB = from.DiskMiB
	}
	if spec.DiskMiB == 0 && !snap.Memory { // a memory image restores with the mounts it had
		spec.DiskMiB, spec.DiskDefault = m.defaultDiskMiB(ctx), true // disk.go
	}
	if req.Workdir == "" {
		spec.Workdir = from.Workdir
	}
	if snap.TTLSeconds > 0 {
		exp := time.Now().UTC().Add(time.Duration(snap.TTLSeconds) * time.Second)
		if err := ss.SetSnapshotExpiry(ctx, snap.Team, snap.Name, exp); err != nil && !errdefs.Is(err, errdefs.KindNotFound) {
			return err
		}
	}
	return nil
}

// memorySnapshotNetwork gives a sandbox made from memory snapshot name the
// network its processes were saved with. The network decides the instance's
// mounts (resolv.conf and hosts with a network; the egress CA's trust store
// with HTTP rules, see caBundle), and gVisor restores only onto the mounts
// it saved.
// Without a network or egress in the request the snapshot's are taken;
// with ones that would change the mounts the create is refused.
func memorySnapshotNetwork(req wire.CreateSandboxRequest, from store.Spec, spec *store.Spec, name string) error {
	if req.Network == "" && req.Egress == nil {
		spec.Network, spec.Egress = from.Network, from.Egress
		return nil
	}
	if spec.Network != from.Network {
		return errdefs.Invalid(wire.CodeMemorySnapshotNetwork, "snapshot %s holds running processes saved with network %q; a sandbox made from it has that network too: leave network out or give %q", name, from.Network, from.Network)
	}
	if had := hasHTTPRules(from); had != hasHTTPRules(*spec) { // pool.go
		with := map[bool]string{true: "with", false: "without"}[had]
		return errdefs.Invalid(wire.CodeMemorySnapshotNetwork, "snapshot %s holds running processes saved %s HTTP egress rules, which decide their trust store; give an egress policy %s an http section, or leave egress out to keep the snapshot's", name, with, with)
	}
	return nil
}

// linkSnapshotMemory links the memory image of team's snapshot name, if it
// has one, into dst, and reports whether it did.
func (m *Manager) linkSnapshotMemory(ctx context.Context, team, name, dst string) (bool, error) {
	ss, err := m.snapshots()
	if err != nil {
		return false, err
	}
	unlock := m.lockSnapshot(ctx, team, name)
	defer unlock()
	snap, err := ss.GetSnapshot(ctx, team, name)
	if errdefs.Is(err, errdefs.KindNotFound) {
		return false, errdefs.Conflict(wire.CodeSnapshotGone, "snapshot %s was deleted while the sandbox was being made from it", name)
	}
	if err != nil || !snap.Memory {
		return false, err
	}
	if err := m.pullSnapshotMemory(ctx, snap); err != nil { // made on another daemon
		return false, err
	}
	if err := linkDir(filepath.Join(m.snapshotDir(snap.Key), "memory"), dst); err != nil {
		return false, errdefs.Internal(err, "link memory image of snapshot %s", name)
	}
	return true, nil
}

// StartSnapshotSweeper empties the staging directory (work a crash cut
// short; call it before serving requests), removes snapshot files with no
// record and then, every interval, deletes expired snapshots. It stops with
// Close.
func (m *Manager) StartSnapshotSweeper(interval time.Duration) {
	os.RemoveAll(filepath.Join(m.cfg.DataDir, "staging"))
	ctx := auth.System(m.ctx, "snapshot sweeper")
	if list, err := m.ListSnapshots(ctx); err == nil {
		keys := map[string]bool{}
		for _, snap := range list {
			keys[snap.Key] = true
		}
		entries, _ := os.ReadDir(filepath.Join(m.cfg.DataDir, "snapshots"))
		for _, e := range entries {
			if !keys[e.Name()] {
				os.RemoveAll(m.snapshotDir(e.Name()))
			}
		}
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			m.sweepSnapshots(ctx)
			select {
			case <-m.closed:
				return
			case <-t.C:
			}
		}
	}()
}

// sweepSnapshots deletes the snapshots whose expiry has passed.
func (m *Manager) sweepSnapshots(ctx context.Context) {
	list, err := m.ListSnapshots(ctx)
	if err != nil {
		return
	}
	now := time.Now()
	for _, snap := range list {
		if snap.ExpiresAt.IsZero() || snap.ExpiresAt.After(now) {
			continue
		}
		if err := m.deleteSnapshot(ctx, snap.Team, snap.Name, now); err != nil {
			m.log.Warn("delete expired snapshot", "snapshot", snap.Name, "err", err)
		}
	}
}
