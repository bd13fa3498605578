package network

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
)

func TestSignatures(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPreviews(nil, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	exp := now.Add(time.Hour)
	rec := &store.Port{SandboxID: "sbx-a", Port: 8080, Token: "sbxp_1"}
	sig := p.Sign(rec, exp)
	e := strconv.FormatInt(exp.Unix(), 10)
	if !p.CheckSignature(rec, e, sig, now) {
		t.Fatal("a fresh signature does not verify")
	}
	for name, ok := range map[string]bool{
		"expired":      p.CheckSignature(rec, e, sig, exp),
		"other port":   p.CheckSignature(&store.Port{SandboxID: "sbx-a", Port: 8081, Token: "sbxp_1"}, e, sig, now),
		"other sb":     p.CheckSignature(&store.Port{SandboxID: "sbx-b", Port: 8080, Token: "sbxp_1"}, e, sig, now),
		"re-exposed":   p.CheckSignature(&store.Port{SandboxID: "sbx-a", Port: 8080, Token: "sbxp_2"}, e, sig, now),
		"later expiry": p.CheckSignature(rec, strconv.FormatInt(exp.Unix()+3600, 10), sig, now),
		"bad expiry":   p.CheckSignature(rec, "soon", sig, now),
		"empty sig":    p.CheckSignature(rec, e, "", now),
	} {
		if ok {
			t.Errorf("%s: signature accepted", name)
		}
	}
	// The key persists: a new Previews on the same dir (a daemon restart)
	// accepts the old signature; another dir does not.
	p2, err := NewPreviews(nil, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if !p2.CheckSignature(rec, e, sig, now) {
		t.Fatal("signature lost across a restart")
	}
	p3, _ := NewPreviews(nil, t.TempDir(), "")
	if p3.CheckSignature(rec, e, sig, now) {
		t.Fatal("another daemon's key accepted the signature")
	}
}

func TestTokens(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok := newToken()
		if seen[tok] || len(tok) < len("sbxp_")+22 {
			t.Fatalf("weak or repeated token %q", tok)
		}
		seen[tok] = true
	}
	rec := &store.Port{Token: "sbxp_abc"}
	if !CheckToken(rec, "sbxp_abc") || CheckToken(rec, "sbxp_abd") || CheckToken(rec, "") || CheckToken(&store.Port{}, "") {
		t.Fatal("CheckToken is wrong")
	}
}

func TestPreviewHosts(t *testing.T) {
	p, err := NewPreviews(nil, t.TempDir(), "https://Preview.Example.com:8443")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.HostURL("sbx-a", 3000); got != "https://3000-sbx-a.preview.example.com:8443/" {
		t.Fatalf("HostURL = %q", got)
	}
	cases := []struct {
		host string
		port int
		sb   string
		ok   bool
	}{
		{"3000-sbx-a.preview.example.com:8443", 3000, "sbx-a", true},
		{"3000-web.PREVIEW.example.com", 3000, "web", true},
		{"preview.example.com", 0, "", false},
		{"x.3000-web.preview.example.com", 0, "", false},
		{"web.preview.example.com", 0, "", false},
		{"70000-web.preview.example.com", 0, "", false},
		{"3000-.preview.example.com", 0, "", false},
		{"3000-web.example.com", 0, "", false},
		{"127.0.0.1:7423", 0, "", false},
	}
	for _, c := range cases {
		port, sb, ok := p.ParseHost(c.host)
		if port != c.port || sb != c.sb || ok != c.ok {
			t.Errorf("ParseHost(%q) = %d %q %t", c.host, port, sb, ok)
		}
	}
	none, _ := NewPreviews(nil, t.TempDir(), "")
	if _, _, ok := none.ParseHost("3000-web.preview.example.com"); ok || none.HostURL("x", 1) != "" {
		t.Fatal("no preview domain: no host-based previews")
	}
	if _, err := NewPreviews(nil, t.TempDir(), "ftp://x.com"); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Fatalf("bad scheme: %v", err)
	}
}

func TestKeyFileMode(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewPreviews(nil, dir, ""); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "preview.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("preview.key: %v %v", fi, err)
	}
}

func TestSecurePreviewResponse(t *testing.T) {
	const prefix = "/v1/sandboxes/a/ports/3000/"
	h := http.Header{}
	for _, c := range []string{
		"app=1; Path=/",
		"deep=2; Path=/api; HttpOnly",
		"nopath=3",
		"wide=4; Path=/; Domain=example.com",
		CookieName + "=forged; Path=/",
		"not a cookie",
	} {
		h.Add("Set-Cookie", c)
	}
	SecurePreviewResponse(h, prefix)
	want := []string{
		"app=1; Path=/v1/sandboxes/a/ports/3000/",
		"deep=2; Path=/v1/sandboxes/a/ports/3000/api; HttpOnly",
		"nopath=3; Path=/v1/sandboxes/a/ports/3000/",
		"wide=4; Path=/v1/sandboxes/a/ports/3000/",
	}
	if got := h.Values("Set-Cookie"); !slices.Equal(got, want) {
		t.Errorf("Set-Cookie:\n got %q\nwant %q", got, want)
	}
	for _, c := range h.Values("Set-Cookie") {
		if !strings.Contains(c, "Path="+prefix) {
			t.Errorf("cookie %q reaches outside its preview", c)
		}
	}
	if csp := h.Get("Content-Security-Policy"); csp != PreviewCSP || strings.Contains(csp, "allow-same-origin") {
		t.Errorf("CSP = %q", csp)
	}

	// Host-based: its own origin, no CSP sandbox; a Domain still goes.
	h = http.Header{"Set-Cookie": {"app=1; Path=/x; Domain=preview.example.com"}}
	SecurePreviewResponse(h, "/")
	if got := h.Values("Set-Cookie"); !slices.Equal(got, []string{"app=1; Path=/x"}) || h.Get("Content-Security-Policy") != "" {
		t.Errorf("host-based: %q, CSP %q", got, h.Get("Content-Security-Policy"))
	}
}
