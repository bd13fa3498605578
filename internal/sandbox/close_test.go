package sandbox

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
)

// A closed Manager leaves no goroutine of its own behind: its scheduler,
// snapshot sweeper, pool filler and instance monitors end, and so do the
// connections it held to agents. The instance and its agent run on
// (docs/architecture.md, invariant 5); only the agent's side of the
// connection is left, which the test's server owns.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	before := goleak.IgnoreCurrent()

	rt := &fakeRuntime{containers: map[string]runtime.Status{}}
	m, err := New(Config{DataDir: t.TempDir(), Store: st, Images: fakeImages{}, Rootfs: fakeRootfs{},
		Runtimes: map[string]runtime.Runtime{ClassContainer: rt}, ReadyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := auth.System(context.Background(), "test")
	if err := m.Reconcile(ctx); err != nil { // starts the scheduler
		t.Fatal(err)
	}
	m.StartSnapshotSweeper(time.Hour)
	if err := m.StartPools(ctx); err != nil {
		t.Fatal(err)
	}

	// A started sandbox whose agent answers, reached once through the Manager.
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true,"pid":1}`))
	})}
	t.Cleanup(func() { srv.Close() })
	sb := startWithAgent(t, m, rt, st, "sbx-close", func(ln net.Listener) { srv.Serve(ln) })
	client, _, err := m.AgentIfRunning(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Health(ctx); err != nil {
		t.Fatal(err)
	}

	m.Close()
	goleak.VerifyNone(t, before,
		goleak.IgnoreAnyFunction("net/http.(*Server).Serve"), // the agent's side
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"))
}
