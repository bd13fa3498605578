package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"regexp"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Moving sandboxes between hosts that share one blob store (S3): the entry
// points a Kubernetes host (package internal/kube/node) uses, where a
// sandbox's id is chosen by the cluster (the pod name) and a sandbox
// stopped on one host may start on another.
//
//	host A: Handoff  = stop, archive, write sandboxes/<id>/sandbox.json, forget locally
//	host B: TakeOver = read sandbox.json, fetch missing layers, restore, start
//
// The manifest is the record another host needs (name, team, spec with
// the archive's key and digest); the image's layers travel too (pushLayers
// on archive, pullLayers on start: layerblobs.go), so host B needs no copy
// of the image. Unlike a single-host restore, TakeOver keeps the archive:
// it is the copy a lost host's sandbox comes back from, until the next
// Handoff replaces it. Files written after it are lost with the host.

// transferKey is where a handed-off sandbox's manifest lives.
func transferKey(id string) string { return "sandboxes/" + id + "/sandbox.json" }

// Transfer is the manifest of a handed-off sandbox.
type Transfer struct {
	ID string `json:"id"`
	// Owner is the UID of the Kubernetes object the sandbox belongs to: a
	// later object of the same namespace/name (same id, other UID) must not
	// take the old one's files over.
	Owner     string     `json:"owner,omitempty"`
	Name      string     `json:"name,omitempty"`
	Team      string     `json:"team,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	Spec      store.Spec `json:"spec"` // Spec.Archive locates its files
	// Pod is the UID of the pod whose host wrote it, SavedAt when its
	// files were taken, and Checkpoint whether a periodic checkpoint of
	// the running sandbox wrote it (checkpoint.go) rather than a Handoff:
	// a sandbox restored from a checkpoint lost what came after SavedAt.
	Pod        string    `json:"pod,omitempty"`
	SavedAt    time.Time `json:"savedAt,omitempty"`
	Checkpoint bool      `json:"checkpoint,omitempty"`
}

var idRe = regexp.MustCompile(`^sbx-[a-z2-7]{16}$`)

// CreateWithID is Create for a sandbox whose id was chosen elsewhere (a
// Kubernetes host: the pod's). The id must look like one sbx makes.
func (m *Manager) CreateWithID(ctx context.Context, id string, req wire.CreateSandboxRequest) (*store.Sandbox, error) {
	if !idRe.MatchString(id) {
		return nil, errdefs.Invalid(wire.CodeInvalidSandbox, "invalid sandbox id %q: want sbx- and 16 characters of a-z, 2-7", id)
	}
	if req.Name != "" {
		unlock := m.names.Lock(req.Name)
		defer unlock()
	}
	if _, err := m.cfg.Store.GetSandbox(ctx, id); err == nil {
		return nil, errdefs.Conflict(wire.CodeIDTaken, "sandbox %s exists on this host already", id)
	}
	return m.createAs(ctx, id, req)
}

// Manifest is the manifest of handed-off or checkpointed sandbox id in
// the blob store; nil when there is none.
func (m *Manager) Manifest(ctx context.Context, id string) (*Transfer, error) {
	if m.cfg.Blobs == nil || !idRe.MatchString(id) {
		return nil, nil
	}
	tr, err := m.readTransfer(ctx, id)
	if errdefs.KindOf(err) == errdefs.KindNotFound {
		return nil, nil
	}
	return tr, err
}

// Handoff stops a sandbox (a started one gets opt's grace), archives it
// with its layers and manifest (naming owner, see Transfer), and removes it
// from this host, keeping nothing local: the next start, here or on another
// host, is a TakeOver. pod is the pod this host ran it for: when another
// pod has claimed the sandbox since (Claim), this copy is stale and is only
// forgotten, so it never writes over the newer one.
func (m *Manager) Handoff(ctx context.Context, id, owner, pod string, opt StopOptions) error {
	ctx = context.WithoutCancel(ctx)
	if m.cfg.Blobs == nil {
		return errdefs.Unavailable(wire.CodeArchiveUnavailable, "this daemon has no blob store, so it cannot hand sandbox %s off", id)
	}
	sb, err := m.Get(ctx, id)
	if err != nil {
		return err
	}
	if sb.State != wire.StateArchived {
		if _, err := m.Stop(ctx, id, opt); err != nil {
			return err
		}
	}
	// Checked once the instance is stopped, as late as can be before the
	// archive is written (the stop may take the whole grace period).
	if stale, err := m.fenced(ctx, id, pod); err != nil || stale {
		return err
	}
	if sb, err = m.Archive(ctx, id); err != nil {
		return err
	}
	tr := Transfer{ID: sb.ID, Owner: owner, Name: sb.Name, Team: sb.Team, CreatedAt: sb.CreatedAt, Spec: sb.Spec,
		Pod: pod, SavedAt: sb.Spec.Archive.At}
	// Again just before the manifest (putManifest): a claim made while
	// this host stopped and archived the sandbox wins too (the archive it
	// wrote is then unreferenced: the newer manifest names its own).
	written, err := m.putManifest(ctx, tr)
	if err != nil {
		return err
	}
	if !written {
		m.log.Warn("another pod holds the sandbox's claim: forgetting this host's stale copy instead of handing it off", "id", id, "pod", pod)
	}
	return m.Forget(ctx, id)
}

// Forget removes a sandbox from this host - instance, files, record -
// without touching its archive or manifest in the blob store: after a
// Handoff, or for a stale copy on a host that was given up for lost while
// another host took the sandbox over.
func (m *Manager) Forget(ctx context.Context, id string) error {
	ctx = context.WithoutCancel(ctx)
	m.cutGracefulStop(ctx, id)
	sb, unlock, err := m.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if err := m.stopInstance(ctx, sb, StopOptions{Force: true}); err != nil {
		return err
	}
	if err := runtime.UnmountRunDir(m.dirsOf(sb.ID).run); err != nil {
		return errdefs.Internal(err, "remove files of sandbox %s", sb.ID)
	}
	if err := os.RemoveAll(m.dirsOf(sb.ID).root); err != nil {
		return errdefs.Internal(err, "remove files of sandbox %s", sb.ID)
	}
	if err := m.cfg.Store.DeleteSandbox(ctx, sb.ID); err != nil {
		return err
	}
	m.life.forget(sb.ID)
	return nil
}

// TakeOver makes a handed-off sandbox this host's and starts it: its
// record from the manifest (labels merged in), its files from the archive,
// missing image layers from the blob store. NotFound when there is no
// manifest; Conflict when the sandbox is on this host already.
func (m *Manager) TakeOver(ctx context.Context, id string, labels map[string]string) (_ *store.Sandbox, err error) {
	ctx = context.WithoutCancel(ctx)
	defer m.observe("takeover", "cluster", time.Now(), &err)
	tr, err := m.readTransfer(ctx, id)
	if err != nil {
		return nil, err
	}
	if tr.Spec.Archive == nil {
		return nil, errdefs.Internal(nil, "the manifest of %s names no archive", id)
	}
	if tr.Name != "" {
		unlock := m.names.Lock(tr.Name)
		defer unlock()
	}
	unlock := m.locks.Lock(id)
	defer unlock()
	if _, err := m.cfg.Store.GetSandbox(ctx, id); err == nil {
		return nil, errdefs.Conflict(wire.CodeIDTaken, "sandbox %s exists on this host already", id)
	}
	spec := tr.Spec
	if len(labels) > 0 {
		spec.Labels = maps.Clone(spec.Labels)
		if spec.Labels == nil {
			spec.Labels = map[string]string{}
		}
		maps.Copy(spec.Labels, labels)
	}
	info := spec.Archive
	sb := &store.Sandbox{ID: id, Name: tr.Name, Team: tr.Team, State: wire.StateRestoring, Reason: "takeover", Spec: spec, CreatedAt: tr.CreatedAt}
	if err := m.cfg.Store.CreateSandbox(ctx, sb); err != nil {
		return nil, err
	}
	// The archive stays in the blob store (see the top of this file).
	if err := m.unpack(ctx, sb, info); err != nil {
		m.removeAll(ctx, sb)
		return nil, err
	}
	sb.Spec.Archive = nil
	if err := m.transition(ctx, sb, wire.StateStopped, "takeover", "restored from the archive"); err != nil {
		m.removeAll(ctx, sb)
		return nil, err
	}
	if err := m.startLocked(ctx, sb, "takeover"); err != nil { // lazy.go: pulls missing layers
		return sb, err
	}
	return sb, nil
}

// DropTransfer deletes a sandbox's manifest and archive from the blob
// store: the sandbox is gone for good (its Kubernetes object deleted).
func (m *Manager) DropTransfer(ctx context.Context, id string) error {
	if m.cfg.Blobs == nil || !idRe.MatchString(id) {
		return nil
	}
	for _, key := range checkpointKeys(id) { // checkpoint.go
		if err := m.cfg.Blobs.Delete(ctx, key); err != nil {
			return err
		}
	}
	if err := m.cfg.Blobs.Delete(ctx, transferKey(id)); err != nil {
		return err
	}
	if err := m.cfg.Blobs.Delete(ctx, claimKey(id)); err != nil {
		return err
	}
	return m.cfg.Blobs.Delete(ctx, archiveKey(id))
}

func (m *Manager) readTransfer(ctx context.Context, id string) (*Transfer, error) {
	if m.cfg.Blobs == nil {
		return nil, errdefs.Unavailable(wire.CodeArchiveUnavailable, "this daemon has no blob store, so it cannot take sandbox %s over", id)
	}
	if !idRe.MatchString(id) {
		return nil, errdefs.NotFound(wire.CodeSandboxNotFound, "no handed-off sandbox %s", id)
	}
	ok, err := m.cfg.Blobs.Exists(ctx, transferKey(id))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errdefs.NotFound(wire.CodeSandboxNotFound, "no handed-off sandbox %s", id)
	}
	rc, err := m.cfg.Blobs.Get(ctx, transferKey(id))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var tr Transfer
	if err := json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&tr); err != nil {
		return nil, errdefs.Internal(err, "read the manifest of %s", id)
	}
	if tr.ID != id {
		return nil, errdefs.Internal(nil, "the manifest at %s names sandbox %q", transferKey(id), tr.ID)
	}
	return &tr, nil
}

// LifeOwner decides, in this host's place, what a due lifecycle action
// does to a sandbox whose life another system owns: a Kubernetes host's
// sandboxes belong to their Sandbox objects, so an idle stop there is a
// suspend of the object and a TTL a delete of it, never a change behind
// the cluster's back (docs/kubernetes/lifecycle.md).
type LifeOwner interface {
	// Act takes action (stop, pause, archive or delete, for reason) on sb
	// if sb is the owner's; handled false leaves it to this host.
	Act(ctx context.Context, sb *store.Sandbox, action, reason string) (handled bool, err error)
}

// SetLifeOwner makes o decide the due actions of the sandboxes it claims.
func (m *Manager) SetLifeOwner(o LifeOwner) {
	m.life.mu.Lock()
	m.life.owner = o
	m.life.mu.Unlock()
	m.life.poke()
}

// ownerRecheck is how long a due action handed to the LifeOwner waits
// before it is handed again: the owner's change (the pod deleted, which
// stops and hands the sandbox off here) normally lands well before.
const ownerRecheck = 30 * time.Second

// delegate hands a due action of a locked sandbox to the LifeOwner, if it
// claims sb, and moves the deadline on by ownerRecheck so the scheduler
// does not ask again at once.
func (m *Manager) delegate(ctx context.Context, sb *store.Sandbox, active time.Time, action, reason string) (bool, error) {
	m.life.mu.Lock()
	o := m.life.owner
	m.life.mu.Unlock()
	if o == nil {
		return false, nil
	}
	handled, err := o.Act(ctx, sb, action, reason)
	if !handled || err != nil {
		return handled, err
	}
	_, err = m.cfg.Store.SetDeadline(ctx, sb.ID, sb.State, active, time.Now().UTC().Add(ownerRecheck), action)
	return true, err
}

// Fencing. A host cut off from the cluster keeps running its sandboxes;
// Kubernetes gives up on it and places the pod's successor elsewhere, which
// takes the sandbox over. When the cut-off host comes back it is told to
// delete the old pod, and a plain Handoff would write its stale copy over
// the newer one. So every pod that is to run a sandbox first claims it in
// the blob store (its pod UID and the next generation); a Handoff for a pod
// that no longer holds the claim forgets its copy and writes nothing.

// claimKey is where a sandbox's claim (its fencing token) lives.
func claimKey(id string) string { return "sandboxes/" + id + "/claim.json" }

// Claim is the fencing token of a sandbox that moves between hosts.
type Claim struct {
	Pod        string `json:"pod"`        // UID of the pod whose host may hand it off
	Generation int64  `json:"generation"` // how many pods have claimed it
}

// Claim makes pod the holder of sandbox id's claim (see above) and
// returns the claim it replaced (the zero Claim when none). A pod that
// holds it already keeps it; an empty pod claims nothing.
func (m *Manager) Claim(ctx context.Context, id, pod string) (Claim, error) {
	if m.cfg.Blobs == nil || pod == "" || !idRe.MatchString(id) {
		return Claim{}, nil
	}
	cur, err := m.readClaim(ctx, id)
	if err != nil || cur.Pod == pod {
		return cur, err
	}
	b, _ := json.Marshal(Claim{Pod: pod, Generation: cur.Generation + 1}) // plain fields: cannot fail
	_, err = m.cfg.Blobs.Put(ctx, claimKey(id), bytes.NewReader(b))
	return cur, err
}

// fenced reports whether another pod than pod holds sandbox id's claim;
// then it forgets this host's stale copy.
func (m *Manager) fenced(ctx context.Context, id, pod string) (bool, error) {
	if pod == "" {
		return false, nil
	}
	cur, err := m.readClaim(ctx, id)
	if err != nil || cur.Pod == "" || cur.Pod == pod {
		return false, err
	}
	m.log.Warn("another pod holds the sandbox's claim: forgetting this host's stale copy instead of handing it off",
		"id", id, "pod", pod, "holder", cur.Pod, "generation", cur.Generation)
	return true, m.Forget(ctx, id)
}

// readClaim is sandbox id's claim; the zero Claim when it has none.
func (m *Manager) readClaim(ctx context.Context, id string) (Claim, error) {
	var c Claim
	ok, err := m.cfg.Blobs.Exists(ctx, claimKey(id))
	if err != nil || !ok {
		return c, err
	}
	rc, err := m.cfg.Blobs.Get(ctx, claimKey(id))
	if err != nil {
		return c, err
	}
	defer rc.Close()
	if err := json.NewDecoder(io.LimitReader(rc, 64<<10)).Decode(&c); err != nil {
		return c, errdefs.Internal(err, "read the claim of %s", id)
	}
	return c, nil
}
