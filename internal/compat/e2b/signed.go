package e2b

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/wire"
)

// Signed file URLs (sandbox.uploadUrl, downloadUrl): the SDK signs
// "path:operation:user:accessToken[:expiry]" (SHA-256, "v1_" + base64) with
// the sandbox's envd access token, and the URL carries the signature, not
// the token. The token is the daemon's signature over a key's principal
// (tokens.go), so the daemon recomputes the token of each key that may
// reach the sandbox (its team's keys that stand, and the admin key) and
// takes the one whose signature matches: a URL works while the key that
// made it stands and until its expiry, and dies with the key.

// keyLister is the key service as signed URLs need it (keys.Service).
type keyLister interface {
	List(team string) []wire.APIKey
}

var (
	errBadSignature = errors.New("wrong signature: this URL was not signed by uploadUrl/downloadUrl for this sandbox, path, user and expiry with an access token of a key that stands (a revoked key's URLs stop working)")
	errExpired      = errors.New("the signed URL has expired (signature_expiration): make a new one with uploadUrl/downloadUrl")
)

// signature is the SDK's getSignature.
func signature(path, operation, user, token, expiry string) string {
	raw := path + ":" + operation + ":" + user + ":" + token
	if expiry != "" {
		raw += ":" + expiry
	}
	sum := sha256.Sum256([]byte(raw))
	return "v1_" + strings.TrimRight(base64.StdEncoding.EncodeToString(sum[:]), "=")
}

// checkSignature returns the principal whose access token signed r, a
// request to envd's /files (path, below the sandbox URL) of sandbox id.
func (s *Server) checkSignature(r *http.Request, id, path string) (auth.Principal, error) {
	q := r.URL.Query()
	op := map[string]string{http.MethodGet: "read", http.MethodPost: "write"}[r.Method]
	if path != "/files" || op == "" {
		return auth.Principal{}, errors.New("a signature is accepted only by GET and POST /files (downloadUrl, uploadUrl)")
	}
	expiry := q.Get("signature_expiration")
	if expiry != "" {
		at, err := strconv.ParseInt(expiry, 10, 64)
		if err != nil {
			return auth.Principal{}, errBadSignature
		}
		if s.now().Unix() > at {
			return auth.Principal{}, errExpired
		}
	}
	ctx := r.Context()
	sb, err := s.sandboxes.Get(auth.System(ctx, "check an E2B signed file URL"), id)
	if err != nil {
		return auth.Principal{}, errBadSignature
	}
	team := sb.Team
	if team == "" {
		team = auth.DefaultTeam
	}
	ids := []string{auth.Admin.KeyID}
	if l, ok := s.gate.Keys.(keyLister); ok {
		for _, k := range l.List(team) {
			if k.RevokedAt == nil {
				ids = append(ids, k.ID)
			}
		}
	}
	want := []byte(q.Get("signature"))
	for _, kid := range ids {
		p, err := auth.LookupKey(ctx, s.gate.Keys, kid)
		if err != nil {
			continue // revoked or expired since: its URLs are dead
		}
		got := signature(q.Get("path"), op, q.Get("username"), s.accessToken(p, id), expiry)
		if subtle.ConstantTimeCompare([]byte(got), want) == 1 {
			return p, nil
		}
	}
	return auth.Principal{}, errBadSignature
}
