package sandbox

import (
	"context"
	"sync"

	"github.com/sbxhq/sbx/internal/store"
)

// startQuotas is a store that enforces the teams' maxRunning quota
// (store.SQLite). Creates are checked by the store itself, inside the
// insert; a start of an existing sandbox is checked here.
type startQuotas interface {
	CheckStart(ctx context.Context, team string) error
}

// startMu serialises the quota check and the state change of starts, so
// two starts in one team cannot both take the last running slot.
var startMu sync.Mutex

// reserveStart checks sb's team's running quota and, if it allows one
// more, holds the slot until release (call it once sb is "starting"; a
// second call does nothing).
func (m *Manager) reserveStart(ctx context.Context, sb *store.Sandbox) (release func(), err error) {
	q, ok := m.cfg.Store.(startQuotas)
	if !ok {
		return func() {}, nil
	}
	startMu.Lock()
	if err := q.CheckStart(ctx, sb.Team); err != nil {
		startMu.Unlock()
		return nil, err
	}
	return sync.OnceFunc(startMu.Unlock), nil
}
