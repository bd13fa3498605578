package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/webhook"
	"github.com/sbxhq/sbx/wire"
)

// TestTeamWebhooks: a team's events reach its webhook, signed, and no other
// team's do; the webhook survives a restart and stops when deleted.
func TestTeamWebhooks(t *testing.T) {
	got := make(chan wire.Event, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !webhook.Verify("s3cret", r.Header.Get("X-Sbx-Timestamp"), b, r.Header.Get("X-Sbx-Signature")) {
			t.Errorf("unsigned or badly signed delivery: %s", r.Header)
		}
		var e wire.Event
		json.Unmarshal(b, &e)
		got <- e
	}))
	defer srv.Close()
	ctx := context.Background()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, team := range []string{"a", "b"} {
		if err := st.CreateTeam(ctx, &store.Team{ID: team}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := newTeamHooks(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Set(ctx, "a", "not a url", ""); err == nil {
		t.Fatal("a bad URL was taken")
	}
	// A tenant's webhook on the host's loopback is below the network
	// floor until the operator allows it.
	defer netfloor.SetDefault(netfloor.Default())
	if err := h.Set(ctx, "a", srv.URL, "s3cret"); errdefs.CodeOf(err) != wire.CodeInvalidTeam || !strings.Contains(err.Error(), "network floor") {
		t.Fatalf("a webhook on loopback: %v, want refused below the floor", err)
	}
	netfloor.SetDefault(netfloor.New(netfloor.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}))
	if err := h.Set(ctx, "a", srv.URL, "s3cret"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	h, err = newTeamHooks(ctx, st) // as after a restart
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var operator []store.Event
	send := h.wrap(func(e store.Event) { operator = append(operator, e) })
	send(store.Event{Seq: 1, SandboxID: "sbx-b", Team: "b", State: wire.StateStarted})
	send(store.Event{Seq: 2, SandboxID: "sbx-a", Team: "a", State: wire.StateStarted})
	select {
	case e := <-got:
		if e.SandboxID != "sbx-a" || e.Team != "a" {
			t.Fatalf("team a's webhook got %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("team a's event never arrived")
	}
	if len(operator) != 2 {
		t.Fatalf("the operator's hook got %d events, want both", len(operator))
	}
	if err := h.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := h.Delete(ctx, "a"); err == nil {
		t.Fatal("deleted a missing webhook")
	}
	h.mu.Lock()
	left := len(h.senders)
	h.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d senders left after the delete", left)
	}
	// Team b has no webhook: its event (seq 1) went nowhere but to the
	// operator's hook; had it been sent to a's URL it would have arrived
	// before a's own (one sender delivers in order), which the check on
	// the first delivery above rules out.
}
