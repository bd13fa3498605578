package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/auth/keys"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// BenchmarkAuth measures what a request pays for authentication: the
// bootstrap admin token (as before teams) against an API key (map lookup,
// SHA-256, rate limit) and an audited mutation, on a route whose handler
// does nearly nothing (a fake Manager). "before teams" is a server without
// tenancy: the admin token only, no rate limit, no audit log.
//
//	go test -run '^$' -bench BenchmarkAuth -benchtime 20000x ./internal/api
func BenchmarkAuth(b *testing.B) {
	// The access log would dominate; it costs the same before and after.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	st, err := store.OpenSQLite(filepath.Join(b.TempDir(), "sbx.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := keys.New(context.Background(), st, auth.AdminToken(testKey))
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	k, err := svc.Create(context.Background(), wire.CreateKeyRequest{Scopes: []string{wire.ScopeAdmin}})
	if err != nil {
		b.Fatal(err)
	}
	f := newFake()
	s := New(f, fakeImages{}, svc)
	audit := authz.NewAuditLog(st, time.Hour)
	defer audit.Close()
	s.SetTenancy(Tenancy{Keys: svc, Teams: st, Gate: &authz.Gate{Keys: svc, Audit: audit, Limits: auth.NewRateLimits(1e9, 1e9), RequestID: RequestID}})
	rec := do(s, "POST", "/v1/sandboxes", testKey, `{"name":"a"}`)
	var sb wire.Sandbox
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &sb) != nil {
		b.Fatal(rec.Code, rec.Body)
	}
	plain := New(f, fakeImages{}, auth.AdminToken(testKey)) // as before teams
	run := func(b *testing.B, method, path, key string, want int) {
		s := s
		if key == "" {
			s, key = plain, testKey
		}
		for b.Loop() {
			req := httptest.NewRequest(method, path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != want {
				b.Fatal(w.Code, w.Body)
			}
		}
	}
	b.Run("GET before teams", func(b *testing.B) { run(b, "GET", "/v1/sandboxes", "", 200) })
	b.Run("GET admin token", func(b *testing.B) { run(b, "GET", "/v1/sandboxes", testKey, 200) })
	b.Run("GET api key", func(b *testing.B) { run(b, "GET", "/v1/sandboxes", k.Key, 200) })
	b.Run("POST before teams", func(b *testing.B) { run(b, "POST", "/v1/sandboxes/"+sb.ID+"/stop", "", 200) })
	b.Run("POST audited api key", func(b *testing.B) { run(b, "POST", "/v1/sandboxes/"+sb.ID+"/stop", k.Key, 200) })
}
