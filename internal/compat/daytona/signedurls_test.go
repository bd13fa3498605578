package daytona

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

type fakeKeys map[string]auth.Principal

func (k fakeKeys) LookupKey(_ context.Context, id string) (auth.Principal, error) {
	if p, ok := k[id]; ok {
		return p, nil
	}
	return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "unknown API key")
}

// A signed URL is honoured only with the signature of its sandbox's key
// for that method, path and time, while the label is the layer's and the
// API key that made the key stands and belongs to the sandbox's team.
func TestCheckSigned(t *testing.T) {
	keys := fakeKeys{"k1": {KeyID: "k1", Team: "blue"}, "k2": {KeyID: "k2", Team: "red"}}
	sb := &store.Sandbox{ID: "sbx-1", Team: "blue", Spec: store.Spec{Labels: map[string]string{}}}
	h := New(Config{Sandboxes: &fakeSandboxes{sandboxes: []*store.Sandbox{sb}}, Keys: keys, SigningSecret: []byte("secret")})
	label := func(rec signingRecord, mac string) {
		sb.Spec.Labels[signingLabel] = rec.keyID + "." + rec.nonce + "." + mac
	}
	rec := signingRecord{keyID: "k1", nonce: "n1"}
	label(rec, h.signingMAC(sb.ID, rec))
	sign := func(key, method, path string, exp int64) string {
		m := hmac.New(sha256.New, []byte(key))
		fmt.Fprintf(m, "v1:files:%s:%s:%d", method, path, exp)
		return "v1_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	check := func(method, path string, exp int64, sig string) error {
		q := url.Values{"path": {path}, "expires": {strconv.FormatInt(exp, 10)}, "signature": {sig}}
		r := httptest.NewRequest(method, "/daytona/toolbox/sbx-1/files/download?"+q.Encode(), nil)
		r.SetPathValue("id", "sbx-1")
		_, err := h.checkSigned(r, method)
		return err
	}
	later := time.Now().Add(time.Hour).Unix()
	key := h.signingKey(sb.ID, rec)
	if err := check("GET", "/a", later, sign(key, "GET", "/a", later)); err != nil {
		t.Fatalf("a good URL: %v", err)
	}
	if err := check("GET", "/a", 0, sign(key, "GET", "/a", 0)); err != nil {
		t.Fatalf("a URL without expiry: %v", err)
	}
	for what, err := range map[string]error{
		"another path":      check("GET", "/b", later, sign(key, "GET", "/a", later)),
		"another method":    check("POST", "/a", later, sign(key, "GET", "/a", later)),
		"expired":           check("GET", "/a", 1, sign(key, "GET", "/a", 1)),
		"another nonce key": check("GET", "/a", later, sign(h.signingKey(sb.ID, signingRecord{"k1", "n2"}), "GET", "/a", later)),
	} {
		if err == nil {
			t.Errorf("%s: honoured", what)
		}
	}
	// A label written through sbx's API, naming another key: its MAC is wrong.
	label(signingRecord{keyID: "k2", nonce: "n1"}, h.signingMAC(sb.ID, rec))
	if err := check("GET", "/a", later, sign(h.signingKey(sb.ID, signingRecord{"k2", "n1"}), "GET", "/a", later)); err == nil {
		t.Error("a forged label: honoured")
	}
	// A key of another team, even with a label of the layer's.
	other := signingRecord{keyID: "k2", nonce: "n1"}
	label(other, h.signingMAC(sb.ID, other))
	if err := check("GET", "/a", later, sign(h.signingKey(sb.ID, other), "GET", "/a", later)); err == nil {
		t.Error("another team's key: honoured")
	}
	// Revoked: the URLs of its key end.
	label(rec, h.signingMAC(sb.ID, rec))
	delete(keys, "k1")
	if err := check("GET", "/a", later, sign(key, "GET", "/a", later)); err == nil {
		t.Error("a revoked key's URL: honoured")
	}
}
