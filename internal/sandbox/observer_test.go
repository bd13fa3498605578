package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/wire"
)

type recordingObserver struct {
	mu  sync.Mutex
	ops []string // "op reason ok|error"
}

func (r *recordingObserver) Operation(op, reason string, _ time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := "ok"
	if err != nil {
		out = "error"
	}
	r.ops = append(r.ops, op+" "+reason+" "+out)
}

func (r *recordingObserver) SchedulerLag(time.Duration) {}

// Every operation tells the Observer how it ended, failures included.
func TestObserverSeesOperations(t *testing.T) {
	m, _, _ := newFakeManager(t)
	obs := &recordingObserver{}
	m.cfg.Observer = obs
	// The fake runtime starts no agent: the create fails.
	if _, err := m.Create(auth.System(context.Background(), "test"), wire.CreateSandboxRequest{Name: "never"}); err == nil {
		t.Fatal("create succeeded without an agent")
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.ops) != 1 || obs.ops[0] != "create user error" {
		t.Errorf("observed %q, want [\"create user error\"]", obs.ops)
	}
}
