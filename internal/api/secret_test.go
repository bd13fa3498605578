package api

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/secret"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// TestInjectRulesStayWithinTheSecretsHosts: a rule that would send a
// secret to a host it does not name ("*", another host, a wider wildcard,
// a port other than 443) is refused when written, naming the rule, the
// secret and the host; a secret from before hosts existed (none stored) is
// refused everywhere until its hosts are set.
func TestInjectRulesStayWithinTheSecretsHosts(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenSQLite(filepath.Join(dir, "sbx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, err := secret.Open(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t)
	s.SetEgressHTTP(EgressHTTP{Secrets: k})
	if rec := do(s, "POST", "/v1/secrets", testKey, `{"name": "apikey", "value": "v"}`); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "hosts") {
		t.Fatalf("a secret without hosts: %d %s", rec.Code, rec.Body)
	}
	if rec := do(s, "POST", "/v1/secrets", testKey, `{"name": "apikey", "value": "v", "hosts": ["api.example.com", "*.svc.example"]}`); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	// A secret stored before secrets had hosts.
	old := auth.WithPrincipal(context.Background(), auth.Admin)
	if err := st.PutSecret(old, &store.Secret{Team: auth.DefaultTeam, Name: "legacy", Sealed: make([]byte, 40), Size: 1}); err != nil {
		t.Fatal(err)
	}
	create := func(secret, host string) (int, string) {
		body := `{"name": "x", "egress": {"mode": "allow-all", "http": {"rules": [{"host": "other.example", "action": "allow"},
			{"host": "` + host + `", "action": "inject", "inject": [{"header": "Authorization", "secret": "` + secret + `"}]}]}}}`
		rec := do(s, "POST", "/v1/sandboxes", testKey, body)
		return rec.Code, rec.Body.String()
	}
	for _, host := range []string{"*", "evil.example", "*.example.com", "api.example.com:8443", "api.example.com.evil", "svc.example"} {
		code, body := create("apikey", host)
		if code != http.StatusBadRequest || !strings.Contains(body, string(wire.CodeInvalidHTTPRule)) ||
			!strings.Contains(body, "rule 1") || !strings.Contains(body, `secret \"apikey\"`) || !strings.Contains(body, host) {
			t.Errorf("rule for %s: %d %s", host, code, body)
		}
	}
	for _, host := range []string{"api.example.com", "API.example.com.", "api.example.com:443", "a.svc.example", "*.b.svc.example"} {
		if code, body := create("apikey", host); code == http.StatusBadRequest {
			t.Errorf("rule for %s refused: %s", host, body)
		}
	}
	// A pool's template is a create too.
	s.SetPools(acceptPools{})
	pool := `{"name": "p", "min": 1, "template": {"egress": {"mode": "allow-all", "http": {"rules": [
		{"host": "*", "action": "inject", "inject": [{"header": "Authorization", "secret": "apikey"}]}]}}}}`
	if rec := do(s, "POST", "/v1/pools", testKey, pool); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `host \"*\"`) {
		t.Errorf("a pool sending the secret anywhere: %d %s", rec.Code, rec.Body)
	}
	if code, body := create("legacy", "api.example.com"); code != http.StatusBadRequest || !strings.Contains(body, "no hosts") {
		t.Errorf("a secret without hosts: %d %s", code, body)
	}
	if rec := do(s, "PUT", "/v1/secrets/legacy/hosts", testKey, `{"hosts": ["api.example.com"]}`); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"hosts":["api.example.com"]`) {
		t.Fatalf("set hosts: %d %s", rec.Code, rec.Body)
	}
	if code, body := create("legacy", "api.example.com"); code == http.StatusBadRequest {
		t.Errorf("legacy after its hosts were set: %s", body)
	}
	if rec := do(s, "PUT", "/v1/secrets/nope/hosts", testKey, `{"hosts": ["api.example.com"]}`); rec.Code != http.StatusNotFound {
		t.Errorf("hosts of a missing secret: %d %s", rec.Code, rec.Body)
	}
}

// acceptPools accepts every pool.
type acceptPools struct{ Pools }

func (acceptPools) CreatePool(_ context.Context, req wire.CreatePoolRequest) (*wire.Pool, error) {
	return &wire.Pool{Name: req.Name, Template: req.Template, Min: req.Min}, nil
}
