package sandbox

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// A sandbox's lifecycle policy decides what happens to it when nobody acts:
//
//	started  --autoStop idle-->  stopped  --autoArchive-->  archived
//	                                 \------autoDelete---------\----> deleted
//	started  --autoPause idle--> paused (instead of autoStop; class gvisor's default)
//	any state --ttl--> deleted
//
// plan turns the policy and the record into the next deadline and its
// action. The deadline is stored with the record (ExpiresAt, ExpiresAction)
// whenever the record is written, so one query finds what is due (see
// scheduler.go) and a deadline passed while the daemon was down fires once
// after it starts again.

// Actions a deadline can carry.
const (
	actionStop    = "stop"
	actionPause   = "pause"
	actionArchive = "archive"
	actionDelete  = "delete"
)

// maxPolicySeconds bounds every duration: ten years is "never" for all
// practical purposes and keeps time arithmetic far from overflowing.
const maxPolicySeconds = 10 * 365 * 24 * 3600

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// defaultPolicy is the policy of a sandbox that names none. An idle gvisor
// sandbox is paused (its processes kept on disk) rather than stopped.
func defaultPolicy(class string) store.Policy {
	p := store.Policy{
		AutoStopSeconds:    wire.DefaultAutoStopSeconds,
		AutoArchiveSeconds: wire.DefaultAutoArchiveSeconds,
		AutoDeleteSeconds:  wire.DefaultAutoDeleteSeconds,
	}
	if class == ClassGVisor {
		p.AutoStopSeconds, p.AutoPauseSeconds = 0, wire.DefaultAutoPauseSeconds
	}
	return p
}

// policyOf returns the policy in a spec; records from before policies
// existed get the defaults.
func policyOf(spec store.Spec) store.Policy {
	if spec.Policy == nil {
		return defaultPolicy(classOf(spec))
	}
	return *spec.Policy
}

// PolicyOf returns the lifecycle policy of a spec, with the defaults for
// records that name none.
func PolicyOf(spec store.Spec) store.Policy { return policyOf(spec) }

// newPolicy resolves a create request's policy fields against the defaults
// of the sandbox's class.
func newPolicy(req wire.CreateSandboxRequest, class string, now time.Time) (*store.Policy, error) {
	p := defaultPolicy(class)
	err := applyPolicy(&p, wire.UpdateSandboxRequest{
		AutoStopSeconds: req.AutoStopSeconds, AutoPauseSeconds: req.AutoPauseSeconds, AutoArchiveSeconds: req.AutoArchiveSeconds,
		AutoDeleteSeconds: req.AutoDeleteSeconds, TTLSeconds: &req.TTLSeconds,
		Ephemeral: &req.Ephemeral, KeepAlive: &req.KeepAlive,
	}, now)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// applyPolicy sets the fields req names, checks the result and normalises
// it: autoArchiveSeconds 0 means the maximum, ephemeral means autoDelete 0,
// and an idle sandbox is either stopped or paused: setting one of
// autoStopSeconds and autoPauseSeconds turns the other off. Setting the TTL
// starts it from now. On error p is unchanged.
func applyPolicy(p *store.Policy, req wire.UpdateSandboxRequest, now time.Time) error {
	n := *p
	check := func(field string, v *int, min, max int) error {
		if v != nil && (*v < min || *v > max) {
			return errdefs.Invalid(wire.CodeInvalidPolicy, "%s must be between %d and %d seconds, got %d", field, min, max, *v)
		}
		return nil
	}
	for _, err := range []error{
		check("autoStopSeconds", req.AutoStopSeconds, 0, maxPolicySeconds),
		check("autoPauseSeconds", req.AutoPauseSeconds, 0, maxPolicySeconds),
		check("autoArchiveSeconds", req.AutoArchiveSeconds, 0, wire.MaxAutoArchiveSeconds),
		check("autoDeleteSeconds", req.AutoDeleteSeconds, -1, maxPolicySeconds),
		check("ttlSeconds", req.TTLSeconds, 0, maxPolicySeconds),
	} {
		if err != nil {
			return err
		}
	}
	if req.AutoStopSeconds != nil && req.AutoPauseSeconds != nil && *req.AutoStopSeconds > 0 && *req.AutoPauseSeconds > 0 {
		return errdefs.Invalid(wire.CodeInvalidPolicy, "autoStopSeconds and autoPauseSeconds exclude each other: an idle sandbox is stopped or paused; set one of them to 0 or leave it out")
	}
	if req.AutoStopSeconds != nil {
		n.AutoStopSeconds = *req.AutoStopSeconds
		if n.AutoStopSeconds > 0 {
			n.AutoPauseSeconds = 0
		}
	}
	if req.AutoPauseSeconds != nil {
		n.AutoPauseSeconds = *req.AutoPauseSeconds
		if n.AutoPauseSeconds > 0 {
			n.AutoStopSeconds = 0
		}
	}
	if req.AutoArchiveSeconds != nil {
		n.AutoArchiveSeconds = *req.AutoArchiveSeconds
		if n.AutoArchiveSeconds == 0 {
			n.AutoArchiveSeconds = wire.MaxAutoArchiveSeconds
		}
	}
	if req.AutoDeleteSeconds != nil {
		n.AutoDeleteSeconds = *req.AutoDeleteSeconds
		if n.AutoDeleteSeconds != 0 {
			n.Ephemeral = false
		}
	}
	if req.TTLSeconds != nil && (*req.TTLSeconds != n.TTLSeconds || *req.TTLSeconds > 0) {
		n.TTLSeconds, n.TTLFrom = *req.TTLSeconds, now
		if n.TTLSeconds == 0 {
			n.TTLFrom = time.Time{}
		}
	}
	if req.KeepAlive != nil {
		n.KeepAlive = *req.KeepAlive
	}
	if req.Ephemeral != nil {
		switch {
		case *req.Ephemeral && req.AutoDeleteSeconds != nil && *req.AutoDeleteSeconds != 0:
			return errdefs.Invalid(wire.CodeInvalidPolicy, "ephemeral means autoDeleteSeconds 0; leave autoDeleteSeconds out or set it to 0")
		case *req.Ephemeral:
			n.Ephemeral, n.AutoDeleteSeconds = true, 0
		case n.Ephemeral: // ephemeral turned off: back to never deleting, unless told otherwise
			n.Ephemeral = false
			if req.AutoDeleteSeconds == nil {
				n.AutoDeleteSeconds = wire.DefaultAutoDeleteSeconds
			}
		}
	}
	*p = n
	return nil
}

// Restart policies of the main process.
var restartPolicies = []string{wire.RestartNever, wire.RestartOnFailure, wire.RestartAlways}

// validateMain checks the entrypoint and restart policy of a create request.
func validateMain(req *wire.CreateSandboxRequest) error {
	if req.RestartPolicy != "" && !slices.Contains(restartPolicies, req.RestartPolicy) {
		return errdefs.Invalid(wire.CodeInvalidRestartPolicy, "restartPolicy must be one of %s, got %q", strings.Join(restartPolicies, ", "), req.RestartPolicy)
	}
	if len(req.Entrypoint) == 0 {
		if req.RestartPolicy != "" {
			return errdefs.Invalid(wire.CodeInvalidRestartPolicy, "restartPolicy needs an entrypoint")
		}
		return nil
	}
	size := 0
	for _, a := range req.Entrypoint {
		size += len(a)
		if strings.ContainsRune(a, 0) {
			return errdefs.Invalid(wire.CodeInvalidEntrypoint, "entrypoint arguments must not contain NUL bytes")
		}
	}
	if req.Entrypoint[0] == "" || size > 64<<10 || len(req.Entrypoint) > 1024 {
		return errdefs.Invalid(wire.CodeInvalidEntrypoint, "entrypoint must be a non-empty command of at most 1024 arguments and 64 KiB")
	}
	return nil
}

// plan returns the next deadline of sb, its action and the reason the
// action will record. active is the last activity, held whether a request
// or stream is open now (which counts as activity until it closes). A zero
// time means no deadline.
func plan(sb *store.Sandbox, active time.Time, held bool, now time.Time) (at time.Time, action, reason string) {
	p := policyOf(sb.Spec)
	consider := func(t time.Time, a, r string) {
		if at.IsZero() || t.Before(at) {
			at, action, reason = t, a, r
		}
	}
	if p.TTLSeconds > 0 {
		from := p.TTLFrom
		if from.IsZero() {
			from = sb.CreatedAt
		}
		consider(from.Add(seconds(p.TTLSeconds)), actionDelete, "ttl")
	}
	stopped := sb.StoppedAt
	if stopped.IsZero() {
		stopped = sb.UpdatedAt
	}
	switch sb.State {
	case wire.StateStarted:
		last := later(active, sb.StartedAt)
		if held {
			last = now
		}
		switch {
		case p.KeepAlive:
		case p.AutoStopSeconds > 0:
			consider(last.Add(seconds(p.AutoStopSeconds)), actionStop, "idle")
		case p.AutoPauseSeconds > 0:
			consider(last.Add(seconds(p.AutoPauseSeconds)), actionPause, "idle")
		}
	case wire.StateStopped:
		// Deleting first on a tie: an ephemeral sandbox is never archived.
		if p.AutoDeleteSeconds >= 0 {
			consider(stopped.Add(seconds(p.AutoDeleteSeconds)), actionDelete, "auto-delete")
		}
		consider(stopped.Add(seconds(p.AutoArchiveSeconds)), actionArchive, "auto-archive")
	case wire.StateArchived:
		if p.AutoDeleteSeconds >= 0 {
			consider(stopped.Add(seconds(p.AutoDeleteSeconds)), actionDelete, "auto-delete")
		}
	}
	return at, action, reason
}

// beforeWrite prepares a state change of sb for the store: a start counts
// as activity, and the next deadline goes into the record with the state.
func (m *Manager) beforeWrite(sb *store.Sandbox, now time.Time) {
	if sb.State == wire.StateStarted {
		sb.LastActivityAt = now
		m.life.noteActivity(sb.ID, now)
	}
	m.setDeadline(sb, now)
}

// setDeadline puts sb's next deadline into the record.
func (m *Manager) setDeadline(sb *store.Sandbox, now time.Time) {
	active, held := m.life.activityOf(sb.ID)
	sb.ExpiresAt, sb.ExpiresAction, _ = plan(sb, later(active, sb.LastActivityAt), held, now)
}

// Update changes a sandbox's lifecycle policy, environment, limits and
// labels, and returns the sandbox with its new deadline.
func (m *Manager) Update(ctx context.Context, idOrName string, req wire.UpdateSandboxRequest) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := decide(opUpdatePolicy, sb); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	p := policyOf(sb.Spec)
	if err := applyPolicy(&p, req, now); err != nil {
		return nil, err
	}
	env := sb.Spec.Env
	if req.Env != nil { // env.go
		if _, err := decide(opSetEnv, sb); err != nil {
			return nil, err
		}
		if env, err = changedEnv(env, req.Env); err != nil {
			return nil, err
		}
	}
	res, resizing, err := resizeOf(req) // resize.go
	if err != nil {
		return nil, err
	}
	if resizing {
		if _, err := decide(opResize, sb); err != nil {
			return nil, err
		}
	}
	if req.Labels != nil {
		if err := validateLabels(req.Labels); err != nil {
			return nil, err
		}
	}
	prev := *sb
	if resizing {
		if err := m.resizeInstance(ctx, sb, res); err != nil {
			return nil, err
		}
		sb.Spec = withLimits(sb.Spec, res)
	}
	if req.Labels != nil {
		sb.Spec.Labels = req.Labels
	}
	sb.Spec.Policy = &p
	sb.Spec.Env = env
	m.setDeadline(sb, now) // changing the policy is not activity
	if err := m.cfg.Store.UpdateSandbox(ctx, sb, nil); err != nil {
		*sb = prev
		if resizing { // put the running instance back to what the record says
			_ = m.resizeInstance(ctx, sb, limitsOf(sb.Spec))
		}
		return nil, err
	}
	m.life.poke()
	if req.Env != nil {
		if err := m.pushEnv(ctx, sb, req.Env); err != nil {
			return nil, err
		}
	}
	return m.withActivity(sb), nil
}

// resolveLifecycle puts a create request's policy and main process into spec.
func resolveLifecycle(spec *store.Spec, req wire.CreateSandboxRequest, now time.Time) error {
	if len(req.Entrypoint) == 0 {
		req.Entrypoint = spec.Entrypoint // the image's ENTRYPOINT/CMD (resolveSpec), if any
	}
	if err := validateMain(&req); err != nil {
		return err
	}
	p, err := newPolicy(req, classOf(*spec), now)
	if err != nil {
		return err
	}
	spec.Policy = p
	spec.Entrypoint = req.Entrypoint
	if len(req.Entrypoint) > 0 {
		spec.RestartPolicy = req.RestartPolicy
		if spec.RestartPolicy == "" {
			spec.RestartPolicy = wire.RestartNever
		}
	}
	return nil
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
