package sandbox

import (
	"context"

	"github.com/sbxhq/sbx/internal/store"
)

// EnsureRunning brings a sandbox to started as its toolbox's first request
// does — a start, a resume or a restore, whichever the transition table
// (opToolbox) says its state needs — and returns it as it is then.
func (m *Manager) EnsureRunning(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	_, sb, err := m.Agent(ctx, idOrName)
	if err != nil {
		return sb, err
	}
	return m.Get(ctx, sb.ID)
}
