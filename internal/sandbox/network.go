package sandbox

import (
	"context"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Network connects instances to the network (package network implements
// it). With Config.Network nil every instance gets a fresh network namespace
// with loopback only, and only mode "none" is accepted.
type Network interface {
	// Resolve checks the network settings of a create request and returns
	// the mode and egress policy to store in the Spec.
	Resolve(mode string, egress *wire.EgressPolicy) (string, *store.Egress, error)
	// Setup prepares the network of sb's next instance and sets the network
	// fields of inst (NetNSPath, ResolvConf). On error nothing is left.
	Setup(ctx context.Context, sb *store.Sandbox, inst *runtime.Instance) error
	// Restore re-installs the rules of a running instance after a daemon start.
	Restore(ctx context.Context, sb *store.Sandbox) error
	// Teardown removes everything Setup made for a sandbox and releases its
	// address. It is idempotent and safe when Setup never ran.
	Teardown(ctx context.Context, id string) error
	// SetEgress applies sb.Spec.Egress to sb's running instance, if any.
	SetEgress(ctx context.Context, sb *store.Sandbox) error
	// OpenConns describes the TCP connections of a running sandbox that
	// are not closed: open lists the established ones; closing lists those
	// on their way to closed, the last of which may take up to wait.
	OpenConns(id string) (open, closing []string, wait time.Duration, err error)
	// WaitPort waits until something accepts connections on port of sb's
	// running instance, up to timeout.
	WaitPort(ctx context.Context, id string, port int, timeout time.Duration) error
}

// resolveNetwork fills in the network mode and egress policy of a new spec.
func (m *Manager) resolveNetwork(req wire.CreateSandboxRequest, spec *store.Spec) error {
	if m.cfg.Network == nil {
		if (req.Network != "" && req.Network != wire.NetworkNone) || req.Egress != nil {
			return errdefs.Invalid(wire.CodeNetworkUnavailable, "this daemon runs without networking: only network \"none\" is available")
		}
		spec.Network = wire.NetworkNone
		return nil
	}
	mode, egress, err := m.cfg.Network.Resolve(req.Network, req.Egress)
	if err != nil {
		return err
	}
	spec.Network, spec.Egress = mode, egress
	return nil
}

// setupNetwork is the network step of startInstance.
func (m *Manager) setupNetwork(ctx context.Context, sb *store.Sandbox, inst *runtime.Instance) error {
	if m.cfg.Network == nil {
		return nil
	}
	return m.cfg.Network.Setup(ctx, sb, inst)
}

// teardownNetwork is the network step of stopInstance.
func (m *Manager) teardownNetwork(ctx context.Context, id string) error {
	if m.cfg.Network == nil {
		return nil
	}
	return m.cfg.Network.Teardown(ctx, id)
}

// restoreNetwork is the network step of reattaching a running instance.
func (m *Manager) restoreNetwork(ctx context.Context, sb *store.Sandbox) {
	if m.cfg.Network == nil {
		return
	}
	if err := m.cfg.Network.Restore(ctx, sb); err != nil {
		m.log.Error("restore network of a running sandbox", "id", sb.ID, "err", err)
	}
}

// SetEgress replaces the egress policy of a bridge sandbox and applies it
// to its running instance at once. The new policy is recorded first; if it
// cannot be applied the old one is put back.
func (m *Manager) SetEgress(ctx context.Context, idOrName string, p wire.EgressPolicy) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := decide(opSetEgress, sb); err != nil {
		return nil, err
	}
	if m.cfg.Network == nil || sb.Spec.Network != wire.NetworkBridge {
		return nil, errdefs.Conflict(wire.CodeNoEgress, "sandbox %s has network %q; egress policies apply to network bridge", refOf(sb), sb.Spec.Network)
	}
	_, egress, err := m.cfg.Network.Resolve(wire.NetworkBridge, &p)
	if err != nil {
		return nil, err
	}
	old := sb.Spec.Egress
	sb.Spec.Egress = egress
	if err := m.cfg.Store.UpdateSandbox(ctx, sb, nil); err != nil {
		return nil, err
	}
	if err := m.cfg.Network.SetEgress(ctx, sb); err != nil {
		sb.Spec.Egress = old
		if rerr := m.cfg.Store.UpdateSandbox(ctx, sb, nil); rerr != nil {
			m.log.Error("put back the old egress policy", "id", sb.ID, "err", rerr)
		}
		return nil, err
	}
	return sb, nil
}
