package gateway

import (
	"context"
	"net/http"
	"net/url"
	"time"

	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/compat/daytona"
	"github.com/sbxhq/sbx/internal/compat/e2b"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// The Daytona and E2B layers (internal/compat) run in the gateway as they
// run on a host, over the cluster instead of a host's Manager:
// compatSandboxes gives them the gateway's own create, list, get, stop,
// start and delete (Sandbox objects), and their per-sandbox calls (Daytona's
// toolbox, E2B's envd and code interpreter) are forwarded, once the layer's
// gate admitted them, to the host that runs the sandbox, whose own layer
// serves them. What a layer needs of one host's store (images, snapshots,
// volumes, fork, archive, state events) is refused naming the operation.

// mountCompat serves /daytona/ and /e2b/ on s.mux.
func (s *Server) mountCompat() {
	sbs := compatSandboxes{s}
	// API: the layer's calls of sbx routes (builds, volumes, secrets, warm
	// pools, previews) are the gateway's, which serves or refuses each.
	s.mux.Handle(daytona.Prefix, daytona.New(daytona.Config{
		Sandboxes: sbs, Images: hostImages{s}, Gate: s.cfg.Gate, Toolbox: s.daytonaToolbox, API: s,
	}))
	s.mux.Handle(e2b.Prefix, e2b.New(sbs, s.cfg.Gate, e2b.Config{
		Templates: s.cfg.E2BTemplates, TokenSecret: s.cfg.TokenSecret, Forward: s.e2bSandbox,
	}))
}

// daytonaToolbox forwards a Daytona toolbox request to the host that runs
// sandbox id, starting it first if it is suspended (the host's layer
// starts a sandbox stopped there itself, as on one host).
func (s *Server) daytonaToolbox(w http.ResponseWriter, r *http.Request, id string) error {
	e, p, err := s.running(r.Context(), id)
	if err != nil {
		return err
	}
	s.forward(w, r, p.api, withID(r.URL.EscapedPath(), "/daytona/toolbox/", e.id), false)
	return nil
}

// e2bSandbox forwards an envd or code-interpreter request to the host that
// runs sandbox id. The caller's access token was made by the gateway for
// its key; the host gets one made for the hosts' admin.
func (s *Server) e2bSandbox(w http.ResponseWriter, r *http.Request, id string) error {
	e, p, err := s.running(r.Context(), id)
	if err != nil {
		return err
	}
	tok := e2b.AccessToken([]byte(s.cfg.HostToken), auth.Admin, e.id)
	r.Header.Set("X-Access-Token", tok)
	if r.Header.Get("E2B-Traffic-Access-Token") != "" {
		r.Header.Set("E2B-Traffic-Access-Token", tok)
	}
	r.Header.Set("E2b-Sandbox-Id", e.id)
	// As a public route's: the caller's Authorization is envd's Basic
	// user, which the host's layer reads; the access token admits it.
	s.forward(w, r, p.api, r.URL.EscapedPath(), true)
	return nil
}

// running finds the sandbox among the caller's and has it on a host,
// starting it if it is suspended.
func (s *Server) running(ctx context.Context, id string) (entry, placement, error) {
	e, err := s.cluster.find(ctx, id)
	if err != nil {
		return e, placement{}, err
	}
	p := s.cluster.placementOf(e)
	if !p.onHost {
		p, err = s.run(ctx, e)
	}
	return e, p, err
}

// compatSandboxes is the cluster's sandboxes as daytona.Sandboxes and
// e2b.Sandboxes: the gateway's own lifecycle calls, their answers as
// records of the store.
type compatSandboxes struct{ s *Server }

var (
	_ daytona.Sandboxes = compatSandboxes{}
	_ e2b.Sandboxes     = compatSandboxes{}
)

func (c compatSandboxes) Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error) {
	sb, err := c.s.createAndWait(ctx, req)
	if err != nil {
		return nil, err
	}
	return recordOf(sb), nil
}

func (c compatSandboxes) List(ctx context.Context, f store.Filter) ([]*store.Sandbox, error) {
	all, err := c.s.cluster.list(ctx)
	if err != nil {
		return nil, err
	}
	var out []*store.Sandbox
	for _, sb := range c.s.views(ctx, all) {
		if (f.State == "" || string(sb.State) == f.State) && hasLabels(sb.Labels, f.Labels) {
			out = append(out, recordOf(sb))
		}
	}
	return out, nil
}

func (c compatSandboxes) Get(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	e, err := c.s.cluster.find(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	return recordOf(c.s.view(ctx, e)), nil
}

// Delete answers once the object is gone, whatever wait says: the
// layers' callers (E2B's kill, Daytona's delete) take a sandbox whose
// delete was answered to be gone, as on one host, where it is at once.
func (c compatSandboxes) Delete(ctx context.Context, idOrName string, _ bool) (*store.Sandbox, error) {
	e, err := c.s.cluster.find(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	sb, err := c.s.deleteEntry(ctx, e, true)
	if err != nil {
		return nil, err
	}
	return recordOf(sb), nil
}

// EnsureRunning is start: a suspended sandbox runs again (placed by
// kube-scheduler, restored from its archive).
func (c compatSandboxes) EnsureRunning(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	e, _, err := c.s.running(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	return recordOf(c.s.view(ctx, e)), nil
}

func (c compatSandboxes) Resume(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	return c.EnsureRunning(ctx, idOrName)
}

// Agent starts the sandbox and answers its record, without a client: the
// gateway reaches no agent itself (the calls that need one are forwarded
// to the host, daytonaToolbox and e2bSandbox).
func (c compatSandboxes) Agent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error) {
	sb, err := c.EnsureRunning(ctx, idOrName)
	return nil, sb, err
}

// Stop suspends the Sandbox object, as the gateway's stop does; force and
// the grace are the host's, which stops the sandbox as its pod is deleted.
func (c compatSandboxes) Stop(ctx context.Context, idOrName string, _ sandbox.StopOptions) (*store.Sandbox, error) {
	e, err := c.s.cluster.find(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	sb, err := c.s.suspendEntry(ctx, e)
	if err != nil {
		return nil, err
	}
	return recordOf(sb), nil
}

// Pause is the gateway's pause: a suspend through the object (pause.go).
func (c compatSandboxes) Pause(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	e, err := c.s.cluster.find(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	switch {
	case e.obj.DeletionTimestamp != nil:
		return nil, errdefs.Conflict(wire.CodeInvalidState, "sandbox %s is being deleted", e.ref())
	case e.obj.Spec.OperatingMode == asv1.SandboxOperatingModeSuspended:
		return nil, errdefs.Conflict(wire.CodeSandboxNotStarted, "sandbox %s is stopped: there is nothing to pause", e.ref())
	}
	sb, err := c.s.suspendEntry(ctx, e)
	if err != nil {
		return nil, err
	}
	return recordOf(sb), nil
}

func (c compatSandboxes) Update(ctx context.Context, idOrName string, req wire.UpdateSandboxRequest) (*store.Sandbox, error) {
	e, err := c.s.cluster.find(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	sb, err := c.s.updateEntry(ctx, e, req)
	if err != nil {
		return nil, err
	}
	return recordOf(sb), nil
}

// Touch is activity the host records itself: every toolbox and envd call
// reaches it.
func (c compatSandboxes) Touch(context.Context, string) {}

// MainExit: the gateway does not see a main process end; the host's
// layer answers the entrypoint's session (a toolbox route).
func (c compatSandboxes) MainExit(*store.Sandbox) (agentapi.MainExit, bool) {
	return agentapi.MainExit{}, false
}

// Events answers no state events: the cluster keeps no event log, and
// Daytona's SDK polls the sandbox besides listening.
func (c compatSandboxes) Events(context.Context, string, int64, int) ([]store.Event, error) {
	return nil, nil
}

// EventsChanged never fires (Events).
func (c compatSandboxes) EventsChanged() <-chan struct{} { return nil }

func (c compatSandboxes) Archive(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	e, err := c.s.cluster.find(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	sb, err := c.s.archiveEntry(ctx, e)
	if err != nil {
		return nil, err
	}
	return recordOf(sb), nil
}

func (c compatSandboxes) Fork(context.Context, string, wire.ForkRequest) (*sandbox.ForkResult, error) {
	return nil, notThroughGateway("fork", "a fork is made on the host outside the cluster's desired state")
}

func (c compatSandboxes) SetEgress(context.Context, string, wire.EgressPolicy) (*store.Sandbox, error) {
	return nil, notThroughGateway("changing a running sandbox's network", "set the egress policy at create")
}

func (c compatSandboxes) VolumeUsers(context.Context, string) ([]string, error) {
	return nil, notThroughGateway("volumes", "volumes are kept by each sbx host")
}

func (c compatSandboxes) CreateSnapshot(context.Context, string, wire.CreateSnapshotRequest) (*store.Snapshot, error) {
	return nil, notThroughGateway("snapshots", "snapshots are kept by each sbx host")
}

// GetSnapshot finds none: a name that is no snapshot is then read as
// what else it may be (an E2B template, a Daytona image), which the
// gateway refuses by name if it cannot honour it.
func (c compatSandboxes) GetSnapshot(_ context.Context, name string) (*store.Snapshot, error) {
	return nil, errdefs.NotFound(wire.CodeSnapshotNotFound, "snapshot %q not found: snapshots are kept by each sbx host, not through the cluster gateway", name)
}

func (c compatSandboxes) ListSnapshots(context.Context) ([]*store.Snapshot, error) {
	return nil, notThroughGateway("snapshots", "snapshots are kept by each sbx host")
}

func (c compatSandboxes) DeleteSnapshot(context.Context, string) error {
	return notThroughGateway("snapshots", "snapshots are kept by each sbx host")
}

// hostImages are the images every ready host has: a sandbox's pod may be
// placed on any of them.
type hostImages struct{ s *Server }

func (h hostImages) Get(ctx context.Context, name string) (*store.Image, error) {
	hosts := h.s.cluster.readyHosts()
	if len(hosts) == 0 {
		return nil, errdefs.Unavailable(wire.CodeSandboxUnavailable, "no sbx host is ready to say whether it has image %q", name)
	}
	var img wire.Image
	for _, api := range hosts {
		status, _, err := h.s.hostCall(ctx, http.MethodGet, api, "/v1/images/"+url.PathEscape(name), nil, &img)
		switch {
		case err != nil:
			return nil, errdefs.Unavailable(wire.CodeSandboxUnavailable, "the sbx host at %s did not answer: %v", api, err)
		case status == http.StatusNotFound:
			return nil, errdefs.NotFound(wire.CodeImageNotFound, "image %q is not on every sbx host of the cluster (not on %s): import it on each", name, api)
		case status != http.StatusOK:
			return nil, errdefs.Unavailable(wire.CodeSandboxUnavailable, "the sbx host at %s answered %d for image %q", api, status, name)
		}
	}
	return &store.Image{Name: img.Name, ID: img.ID, Source: img.Source, SizeBytes: img.SizeBytes, CreatedAt: img.CreatedAt, Team: img.Team}, nil
}

func (hostImages) List(context.Context) ([]*store.Image, error) {
	return nil, notThroughGateway("listing images", "images are kept by each sbx host")
}

func notThroughGateway(what, why string) error {
	return errdefs.Invalid(wire.CodeFeatureUnsupported, "%s is not served through the cluster gateway: %s", what, why)
}

// recordOf is the gateway's view of a sandbox as the store's record the
// compat layers read (the inverse of internal/api's toAPI).
func recordOf(sb wire.Sandbox) *store.Sandbox {
	rec := &store.Sandbox{
		ID: sb.ID, Name: sb.Name, Team: sb.Team, State: sb.State, Reason: sb.Reason, Error: sb.Error,
		CreatedAt: sb.CreatedAt,
		Spec: store.Spec{
			Image: sb.Image, Env: sb.Env, Labels: sb.Labels, CPU: sb.CPU, MemoryMiB: sb.MemoryMiB,
			PidsLimit: sb.PidsLimit, DiskMiB: sb.DiskMiB, Workdir: sb.Workdir, Class: sb.Class,
			Parent: sb.Parent, Snapshot: sb.Snapshot, Entrypoint: sb.Entrypoint, RestartPolicy: sb.RestartPolicy,
			Network: sb.Network, Volumes: sb.Volumes, Buckets: sb.Buckets,
			Policy: &store.Policy{
				AutoStopSeconds: sb.AutoStopSeconds, AutoPauseSeconds: sb.AutoPauseSeconds,
				AutoArchiveSeconds: sb.AutoArchiveSeconds, AutoDeleteSeconds: sb.AutoDeleteSeconds,
				TTLSeconds: sb.TTLSeconds, Ephemeral: sb.Ephemeral, KeepAlive: sb.KeepAlive,
			},
		},
	}
	if sb.Egress != nil {
		rec.Spec.Egress = &store.Egress{Mode: string(sb.Egress.Mode), CIDRs: sb.Egress.CIDRs, Domains: sb.Egress.Domains, HTTP: sb.Egress.HTTP}
	}
	rec.Spec.Policy.TTLFrom = timeOf(sb.TTLFrom)
	rec.StartedAt, rec.StoppedAt, rec.LastActivityAt = timeOf(sb.StartedAt), timeOf(sb.StoppedAt), timeOf(sb.LastActivityAt)
	if sb.ExpiresAt != nil {
		rec.ExpiresAt, rec.ExpiresAction = *sb.ExpiresAt, sb.ExpiresAction
	}
	return rec
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
