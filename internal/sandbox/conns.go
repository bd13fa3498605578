package sandbox

import (
	"context"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// maxConnWait bounds how long saving a sandbox waits for its closing TCP
// connections to go away: gVisor keeps a connection it closed for 60 s.
const maxConnWait = 70 * time.Second

// waitConnsClosed makes sure a bridge sandbox holds no TCP connection that
// its runtime cannot save (Checkpointer.DropsConnections): such a save
// fails and ends the sandbox, so it must not be tried. Connections that are closing
// are waited for (gVisor keeps one it closed for 60 s); established ones,
// or closing ones that outlast maxConnWait, refuse the save with
// CHECKPOINT_REFUSED, and the sandbox runs on.
//
// A connection opened between this check and the save still ends the
// sandbox; with a runsc that drops connections nothing can.
func (m *Manager) waitConnsClosed(ctx context.Context, sb *store.Sandbox, cp runtime.Checkpointer) error {
	if cp.DropsConnections() || m.cfg.Network == nil || sb.Spec.Network != wire.NetworkBridge {
		return nil
	}
	deadline := time.Now().Add(maxConnWait)
	for {
		open, closing, wait, err := m.cfg.Network.OpenConns(sb.ID)
		if err != nil {
			return errdefs.Internal(err, "list the TCP connections of %s before saving it", sb.ID)
		}
		switch {
		case len(open) > 0:
			return errdefs.Conflict(wire.CodeCheckpointRefused, "cannot save the memory of sandbox %s: this runsc cannot save open TCP connections (%s); close them and retry, or run sbx serve with a newer runsc (--runsc), which drops them", refOf(sb), strings.Join(open, ", "))
		case len(closing) == 0:
			return nil
		case !time.Now().Before(deadline):
			return errdefs.Conflict(wire.CodeCheckpointRefused, "cannot save the memory of sandbox %s: TCP connections were still closing after %s (%s), and this runsc can only save closed ones; retry later, or run sbx serve with a newer runsc (--runsc), which drops them", refOf(sb), maxConnWait, strings.Join(closing, ", "))
		}
		wait = min(wait, time.Until(deadline))
		m.log.Info("waiting for TCP connections to close before saving", "id", sb.ID, "closing", len(closing), "for", wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		case <-m.closed:
			return errdefs.Unavailable(wire.CodeDaemonStopping, "the daemon is stopping")
		}
	}
}
