package daytona

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Signed file URLs (sandbox.downloadUrl, uploadUrl, rotateSigningKey).
// The SDK signs them itself, with the sandbox's signing key:
// "v1_" + base64url(HMAC-SHA256(key, "v1:files:METHOD:path:expires")).
//
// A sandbox's signing key is derived, never stored: from the daemon's
// secret, the sandbox, the API key that asked for it first (or rotated it
// last) and a nonce. The key id and nonce are kept in the sandbox's label
// signingLabel with a MAC of the daemon's, so a label written through
// sbx's API cannot name another key. A signed URL is served as that API
// key, and only while it stands: revoking the key ends every URL signed
// with a signing key it made (derived credentials die with their key,
// docs/teams.md); rotating makes a new nonce, which ends them too.

const signingLabel = ownLabelPrefix + "signing-key"

// signingRecord is what signingLabel holds: "keyID.nonce.mac".
type signingRecord struct{ keyID, nonce string }

func (h *Handler) signingMAC(sandboxID string, rec signingRecord) string {
	m := hmac.New(sha256.New, h.cfg.SigningSecret)
	fmt.Fprintf(m, "sbx-daytona-signing-label\n%s\n%s\n%s", sandboxID, rec.keyID, rec.nonce)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signingKey is the key the SDK signs with.
func (h *Handler) signingKey(sandboxID string, rec signingRecord) string {
	m := hmac.New(sha256.New, h.cfg.SigningSecret)
	fmt.Fprintf(m, "sbx-daytona-signing-key\n%s\n%s\n%s", sandboxID, rec.keyID, rec.nonce)
	return hex.EncodeToString(m.Sum(nil))
}

// signingOf reads a sandbox's signing record; false when it has none or
// the label was not written by the layer.
func (h *Handler) signingOf(sandboxID string, labels map[string]string) (signingRecord, bool) {
	parts := strings.Split(labels[signingLabel], ".")
	if len(parts) != 3 {
		return signingRecord{}, false
	}
	rec := signingRecord{keyID: parts[0], nonce: parts[1]}
	return rec, hmac.Equal([]byte(parts[2]), []byte(h.signingMAC(sandboxID, rec)))
}

func (h *Handler) signingReady() error {
	if len(h.cfg.SigningSecret) == 0 || h.cfg.Keys == nil {
		return errdefs.Unavailable(wire.CodeInternal, "signed file URLs need the daemon's signing secret and key service")
	}
	return nil
}

// getSigningKey serves GET /sandbox/{id}/signing-key: the sandbox's key,
// made with the caller's API key when it has none or the key that made it
// is gone.
func (h *Handler) getSigningKey(w http.ResponseWriter, r *http.Request) error {
	return h.sendSigningKey(w, r, false)
}

// rotateSigningKey serves POST /sandbox/{id}/signing-key/rotate: a new key,
// of the caller's API key; every URL signed with the old one ends.
func (h *Handler) rotateSigningKey(w http.ResponseWriter, r *http.Request) error {
	return h.sendSigningKey(w, r, true)
}

func (h *Handler) sendSigningKey(w http.ResponseWriter, r *http.Request, rotate bool) error {
	if err := h.signingReady(); err != nil {
		return err
	}
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	rec, ok := h.signingOf(sb.ID, sb.Spec.Labels)
	if ok && !rotate {
		if _, err := h.cfg.Keys.LookupKey(r.Context(), rec.keyID); err != nil {
			ok = false // its key is gone: so are its URLs; make a new one
		}
	}
	if !ok || rotate {
		p, _ := auth.FromContext(r.Context())
		b := make([]byte, 12)
		rand.Read(b)
		rec = signingRecord{keyID: p.KeyID, nonce: hex.EncodeToString(b)}
		labels := map[string]string{}
		for k, v := range sb.Spec.Labels {
			labels[k] = v
		}
		labels[signingLabel] = rec.keyID + "." + rec.nonce + "." + h.signingMAC(sb.ID, rec)
		if _, err := h.cfg.Sandboxes.Update(r.Context(), sb.ID, wire.UpdateSandboxRequest{Labels: labels}); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, h.signingKey(sb.ID, rec))
	return nil
}

// signedOr serves a toolbox file route: with signature in the query and
// no Authorization header as a signed URL (as the API key that made the
// signing key, through the gate as need), else as next, the route with an
// API key.
func (h *Handler) signedOr(need authz.Op, method string, serve, next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		if r.Header.Get("Authorization") != "" || q.Get("signature") == "" {
			return next(w, r)
		}
		p, err := h.checkSigned(r, method)
		if err != nil {
			return err
		}
		return h.serveAs(w, r, p, need, serve)
	}
}

// checkSigned checks r's signature and returns the principal of the API
// key the sandbox's signing key was made with. Every failure is the same
// 401, so a URL tells nothing about sandboxes it does not open.
func (h *Handler) checkSigned(r *http.Request, method string) (auth.Principal, error) {
	denied := errdefs.Unauthorized(wire.CodeUnauthorized, "the signed URL is not valid: expired, rotated, its API key revoked, or not signed for this file")
	if h.signingReady() != nil {
		return auth.Principal{}, denied
	}
	q := r.URL.Query()
	path, expires, sig := q.Get("path"), q.Get("expires"), q.Get("signature")
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || path == "" || (exp != 0 && time.Now().Unix() >= exp) {
		return auth.Principal{}, denied
	}
	ctx := auth.System(r.Context(), "daytona signed file URL")
	sb, err := h.cfg.Sandboxes.Get(ctx, r.PathValue("id"))
	if err != nil || sb.ID != r.PathValue("id") {
		return auth.Principal{}, denied
	}
	rec, ok := h.signingOf(sb.ID, sb.Spec.Labels)
	if !ok {
		return auth.Principal{}, denied
	}
	m := hmac.New(sha256.New, []byte(h.signingKey(sb.ID, rec)))
	fmt.Fprintf(m, "v1:files:%s:%s:%s", method, path, expires)
	if !hmac.Equal([]byte(sig), []byte("v1_"+base64.RawURLEncoding.EncodeToString(m.Sum(nil)))) {
		return auth.Principal{}, denied
	}
	p, err := h.cfg.Keys.LookupKey(r.Context(), rec.keyID)
	if err != nil || (p.Team != sb.Team && !p.AllTeams()) {
		return auth.Principal{}, denied
	}
	return p, nil
}

// uploadV2 serves POST /files/upload-v2?path: the multipart part "file"
// written to path (uploadUrl's route).
func (h *Handler) uploadV2(w http.ResponseWriter, r *http.Request) error {
	p, c, err := h.pathAgent(r)
	if err != nil {
		return err
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return invalid(wire.CodeInvalidParameter, "the body must be multipart/form-data with a part named file: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return invalid(wire.CodeInvalidParameter, "the body has no part named file")
		}
		if err != nil {
			return invalid(wire.CodeInvalidParameter, "reading the multipart body: %v", err)
		}
		if part.FormName() != "file" {
			return invalid(wire.CodeInvalidParameter, "unexpected form field %q: send the file as the part named file", part.FormName())
		}
		if err := putFile(r, c, p, part); err != nil {
			return err
		}
		w.WriteHeader(http.StatusOK)
		return nil
	}
}
