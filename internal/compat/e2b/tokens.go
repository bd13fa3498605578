package e2b

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
)

// envd traffic carries no API key: E2B hands out a per-sandbox access token
// at create and connect, which the SDK sends as X-Access-Token (envd,
// /execute) or E2B-Traffic-Access-Token (the code interpreter's contexts).
// sbx's token is the creating principal's team and scopes, signed with
// HMAC-SHA256 over the sandbox id, so the Manager still sees whose sandbox
// it is. The token names the key it was made with; every use asks the key
// service whether that key still stands (auth.LookupKey), so revoking or
// expiring the key ends its tokens at once.

type tokenClaims struct {
	KeyID  string       `json:"k"`
	Team   string       `json:"t"`
	Scopes []auth.Scope `json:"s,omitempty"`
}

// accessToken is the token for sandbox id made by principal p.
func (s *Server) accessToken(p auth.Principal, id string) string {
	return AccessToken(s.cfg.TokenSecret, p, id)
}

// AccessToken is the access token for sandbox id made by principal p, as
// a layer whose Config.TokenSecret is secret makes and accepts it. The
// cluster gateway hands a request it admitted to a host with one made for
// the host's admin (internal/gateway/compat.go).
func AccessToken(secret []byte, p auth.Principal, id string) string {
	claims, _ := json.Marshal(tokenClaims{KeyID: p.KeyID, Team: p.Team, Scopes: p.Scopes})
	c := base64.RawURLEncoding.EncodeToString(claims)
	return c + "." + sign(secret, c, id)
}

func (s *Server) sign(claims, id string) string { return sign(s.cfg.TokenSecret, claims, id) }

func sign(secret []byte, claims, id string) string {
	m := hmac.New(sha256.New, append([]byte("sbx-e2b-envd\x00"), secret...))
	m.Write([]byte(id + "\x00" + claims))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

var errBadToken = errors.New("missing or wrong access token: send the envdAccessToken the sandbox was created or connected with (X-Access-Token)")

// checkAccessToken returns the principal of r's access token for sandbox id.
func (s *Server) checkAccessToken(r *http.Request, id string) (auth.Principal, error) {
	tok := r.Header.Get("X-Access-Token")
	if tok == "" {
		tok = r.Header.Get("E2B-Traffic-Access-Token")
	}
	c, claims, ok := parseToken(tok)
	if !ok || !hmac.Equal([]byte(tok[len(c)+1:]), []byte(s.sign(c, id))) {
		return auth.Principal{}, errBadToken
	}
	return s.tokenPrincipal(r.Context(), claims)
}

// parseToken splits tok into its encoded claims and their content; the
// signature is not checked.
func parseToken(tok string) (string, tokenClaims, bool) {
	c, _, ok := strings.Cut(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(c)
	var claims tokenClaims
	if !ok || err != nil || json.Unmarshal(raw, &claims) != nil {
		return "", tokenClaims{}, false
	}
	return c, claims, true
}

// tokenPrincipal is the principal of a token's key, if the key stands.
func (s *Server) tokenPrincipal(ctx context.Context, claims tokenClaims) (auth.Principal, error) {
	p, err := auth.LookupKey(ctx, s.gate.Keys, claims.KeyID)
	if err != nil {
		return auth.Principal{}, errKeyGone
	}
	if p.Team != claims.Team {
		return auth.Principal{}, errBadToken
	}
	return p, nil
}

var errKeyGone = errors.New("the API key this access token was made with is revoked or expired: create or connect to the sandbox again with a valid key")
