package sandbox

import (
	"context"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// InstanceEnd waits up to wait for the record of why a sandbox's instance
// ended, for a stream that broke off: the state it left started for and
// that state's reason (idle, user, delete, main-exit, oom, crash, …). A
// deleted sandbox reports deleted/delete. Empty if nothing was recorded in
// time: the stream broke for another reason, or the end is not noticed yet.
func (m *Manager) InstanceEnd(ctx context.Context, id string, wait time.Duration) (state wire.State, reason string) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		changed := m.EventsChanged()
		sb, err := m.cfg.Store.GetSandbox(ctx, id)
		switch {
		case errdefs.Is(err, errdefs.KindNotFound):
			return wire.StateDeleted, "delete"
		case err == nil && sb.State != wire.StateStarted:
			return sb.State, sb.Reason
		}
		select {
		case <-changed:
		case <-t.C:
			return "", ""
		case <-ctx.Done():
			return "", ""
		}
	}
}
