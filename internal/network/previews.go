package network

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Previews keeps the exposed ports of sandboxes and decides who may open
// them. A private port opens with the daemon's API key, the port's preview
// token (128 random bits, kept in the store so it survives restarts) or a
// URL signed with the daemon's preview key (HMAC-SHA256 over sandbox, port
// and expiry; the key lives in <data-dir>/preview.key).
type Previews struct {
	store  store.NetworkStore
	keys   auth.KeyLookup // checks the key a port's token came from; nil: none
	key    []byte
	scheme string // of host-based URLs: "http" or "https"
	domain string // wildcard preview domain, maybe with ":port"; "" for none
}

// Query parameters and cookie of the preview proxy.
const (
	TokenParam   = "sbx_token"
	ExpiresParam = "sbx_expires"
	SigParam     = "sbx_sig"
	TokenHeader  = "X-Sbx-Preview-Token"
	CookieName   = "sbx_preview"
)

// Limits of signed URLs.
const (
	DefaultSignedTTL = time.Hour
	MaxSignedTTL     = 30 * 24 * time.Hour
)

// NewPreviews returns the preview ports of the daemon whose data dir is
// dataDir. domain is the wildcard preview domain ("" for path-based URLs
// only), optionally with a scheme ("https://preview.example.com").
func NewPreviews(st store.NetworkStore, dataDir, domain string) (*Previews, error) {
	scheme, host := "http", domain
	if s, rest, ok := strings.Cut(domain, "://"); ok {
		scheme, host = s, rest
	}
	host = strings.TrimSuffix(strings.ToLower(host), "/")
	if scheme != "http" && scheme != "https" || strings.ContainsAny(host, "/?#@") {
		return nil, errdefs.Invalid(wire.CodeInvalidPreviewDomain, "preview domain %q: give a domain such as preview.example.com, optionally with a scheme and port", domain)
	}
	key, err := loadKey(filepath.Join(dataDir, "preview.key"))
	if err != nil {
		return nil, err
	}
	return &Previews{store: st, key: key, scheme: scheme, domain: host}, nil
}

// loadKey reads the preview signing key, creating it on first start.
func loadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) < 32 {
			return nil, fmt.Errorf("preview key %s is malformed; delete it to make a new one (signed URLs made with it stop working)", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	return key, os.Rename(tmp, path)
}

// Domain is the preview domain without scheme; "" when there is none.
func (p *Previews) Domain() string { return p.domain }

// SetKeys lets Expose check the API key an exposed port's token came from.
func (p *Previews) SetKeys(keys auth.KeyLookup) { p.keys = keys }

// Expose records port of sandbox id as exposed and returns it. Exposing an
// exposed port again returns it as it is, unless public differs: that is a
// Conflict (unexpose it first, which also retires its token). A port whose
// token died with the key that exposed it gets a new token, of the caller's
// key.
func (p *Previews) Expose(ctx context.Context, id string, port int, public bool) (*store.Port, error) {
	if port < 1 || port > 65535 {
		return nil, errdefs.Invalid(wire.CodeInvalidPort, "port must be from 1 to 65535, got %d", port)
	}
	if old, err := p.store.GetPort(ctx, id, port); err == nil {
		if old.Public != public {
			return nil, errdefs.Conflict(wire.CodePortExists, "port %d is already exposed with public=%t; unexpose it first", port, old.Public)
		}
		if !p.keyGone(ctx, old) {
			return old, nil
		}
		if err := p.store.DeletePort(ctx, id, port); err != nil && !errdefs.Is(err, errdefs.KindNotFound) {
			return nil, err
		}
	}
	// The token is derived from the caller's key: it dies with it.
	p0, _ := auth.FromContext(ctx)
	rec := &store.Port{SandboxID: id, Port: port, Public: public, Token: newToken(), CreatedBy: p0.KeyID}
	if err := p.store.CreatePort(ctx, rec); err != nil {
		if errdefs.Is(err, errdefs.KindConflict) { // a concurrent expose won
			return p.store.GetPort(ctx, id, port)
		}
		return nil, err
	}
	return rec, nil
}

// Link is the port as a preview link needs it: the exposed port, or the
// port newly exposed private.
func (p *Previews) Link(ctx context.Context, id string, port int) (*store.Port, error) {
	if old, err := p.store.GetPort(ctx, id, port); err == nil {
		return p.Expose(ctx, id, port, old.Public)
	}
	return p.Expose(ctx, id, port, false)
}

// keyGone reports whether the key rec's token came from is revoked or
// expired (so its token opens nothing).
func (p *Previews) keyGone(ctx context.Context, rec *store.Port) bool {
	if p.keys == nil || rec.CreatedBy == "" {
		return false
	}
	_, err := p.keys.LookupKey(ctx, rec.CreatedBy)
	return err != nil
}

// newToken returns 128 random bits, URL-safe.
func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "sbxp_" + base64.RawURLEncoding.EncodeToString(b)
}

// Unexpose removes an exposed port; NotFound if it was not exposed.
func (p *Previews) Unexpose(ctx context.Context, id string, port int) error {
	return p.store.DeletePort(ctx, id, port)
}

// List returns the exposed ports of a sandbox.
func (p *Previews) List(ctx context.Context, id string) ([]store.Port, error) {
	return p.store.ListPorts(ctx, id)
}

// Get returns an exposed port; NotFound if it is not exposed.
func (p *Previews) Get(ctx context.Context, id string, port int) (*store.Port, error) {
	return p.store.GetPort(ctx, id, port)
}

// CheckToken reports whether token is the port's preview token, in
// constant time.
func CheckToken(rec *store.Port, token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(rec.Token)) == 1
}

// Sign returns the signature of a preview of the exposed port rec that is
// valid until expires. The port's token is signed too, so unexposing the
// port retires its signed URLs even if it is exposed again.
func (p *Previews) Sign(rec *store.Port, expires time.Time) string {
	mac := hmac.New(sha256.New, p.key)
	fmt.Fprintf(mac, "sbx-preview\n%s\n%d\n%s\n%d", rec.SandboxID, rec.Port, rec.Token, expires.Unix())
	return hex.EncodeToString(mac.Sum(nil))
}

// CheckSignature reports whether sig signs a preview of rec until expires
// (unix seconds, as text), and that time has not passed.
func (p *Previews) CheckSignature(rec *store.Port, expires, sig string, now time.Time) bool {
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || now.Unix() >= exp {
		return false
	}
	want := p.Sign(rec, time.Unix(exp, 0))
	return hmac.Equal([]byte(sig), []byte(want))
}

// HostURL is the host-based preview URL of a port, "" without a preview domain.
func (p *Previews) HostURL(id string, port int) string {
	if p.domain == "" {
		return ""
	}
	return fmt.Sprintf("%s://%d-%s.%s/", p.scheme, port, id, p.domain)
}

// TeamSep joins a sandbox's name and its team in a preview URL:
// "<name>--<team>", in a path (/v1/sandboxes/app--blue/ports/8080/) or a
// host (8080-app--blue.<domain>).
const TeamSep = "--"

// PreviewTarget reads the sandbox part of a preview URL. Names are unique
// only within a team, so a URL names its sandbox unambiguously: by id
// ("sbx-…", unique everywhere), by "<name>--<team>" (split at the last
// "--", so a name may hold "--" and a team id that does cannot be named
// this way: use the id), or by a bare name, which a caller without an API
// key reaches only in team default and a key's caller in the key's team.
func PreviewTarget(ref string) (id, name, team string) {
	if strings.HasPrefix(ref, "sbx-") { // sandbox names may not start so (internal/sandbox/validate.go)
		return ref, "", ""
	}
	if i := strings.LastIndex(ref, TeamSep); i > 0 && i+len(TeamSep) < len(ref) {
		return "", ref[:i], ref[i+len(TeamSep):]
	}
	return "", ref, ""
}

// ParseHost splits a request's Host into port and sandbox id or name when it
// is a host-based preview name, "{port}-{sandbox}.{domain}".
func (p *Previews) ParseHost(host string) (port int, sandbox string, ok bool) {
	if p.domain == "" {
		return 0, "", false
	}
	host, domain := strings.ToLower(host), p.domain
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if d, _, err := net.SplitHostPort(domain); err == nil {
		domain = d
	}
	label, ok := strings.CutSuffix(host, "."+domain)
	if !ok || strings.Contains(label, ".") {
		return 0, "", false
	}
	ps, sb, ok := strings.Cut(label, "-")
	if !ok || sb == "" {
		return 0, "", false
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return 0, "", false
	}
	return port, sb, true
}

// PreviewCSP is sent with every path-based preview response. Path-based
// previews share one origin with each other and with the API; the CSP
// sandbox gives each page an opaque origin of its own, so its scripts cannot
// read another preview or the API with the browser's cookies. It allows
// what apps need, but not allow-same-origin.
const PreviewCSP = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads"

// SecurePreviewResponse adjusts the headers of a preview response before
// they reach the browser. prefix is the path the preview is served under,
// ending in "/"; "/" for a host-based preview, which has its own origin.
//
// A cookie the app sets is scoped to its preview: its Path is moved under
// prefix (the app sees paths without it), its Domain is dropped (it would
// reach every preview under the domain), and one named like sbx's own
// access cookie is dropped. So no preview sets cookies for the API's paths
// or for another preview.
func SecurePreviewResponse(h http.Header, prefix string) {
	lines := h.Values("Set-Cookie")
	h.Del("Set-Cookie")
	for _, line := range lines {
		c, err := http.ParseSetCookie(line)
		if err != nil || c.Name == CookieName {
			continue
		}
		c.Domain = ""
		if prefix != "/" {
			p := c.Path
			if !strings.HasPrefix(p, "/") {
				p = "/"
			}
			c.Path = strings.TrimSuffix(prefix, "/") + p
		}
		if v := c.String(); v != "" {
			h.Add("Set-Cookie", v)
		}
	}
	if prefix != "/" {
		h.Add("Content-Security-Policy", PreviewCSP)
	}
}
