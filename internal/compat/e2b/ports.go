package e2b

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/store"
)

// A port other than envd's and the interpreter's, {port}-{id}.{domain}
// (getHost), is an sbx preview. E2B reaches every port of a sandbox with
// its traffic token (header e2b-traffic-access-token) and no expose call:
// a request with a valid one gets the port exposed, private, on its key's
// behalf (network.Previews.Link) and goes on to sbx's previews with that
// port's own token. Without the header the preview's own rules apply (an
// exposed public port, sbx's token, a signed URL).

// Ports is network.Previews as this layer needs it.
type Ports interface {
	Link(ctx context.Context, id string, port int) (*store.Port, error)
}

// trafficHeader is the header E2B's traffic token travels in.
const trafficHeader = "E2b-Traffic-Access-Token"

// trafficToken handles a request to port of sandbox id: it answers (and
// reports true) only when the request's traffic token is refused; with a
// valid one it lets sbx's previews serve it with the port's token.
func (s *Server) trafficToken(w http.ResponseWriter, r *http.Request, id, port string) bool {
	if s.cfg.Ports == nil || r.Header.Get(trafficHeader) == "" {
		return false
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	p, err := s.checkAccessToken(r, id) // tokens.go
	if err == nil && !p.Has(auth.ScopeExec) {
		err = errNoExec
	}
	if err != nil {
		writeEnvdError(w, http.StatusUnauthorized, err.Error())
		return true
	}
	rec, err := s.cfg.Ports.Link(auth.WithPrincipal(r.Context(), p), id, n)
	if err != nil {
		writeAPIError(w, err)
		return true
	}
	r.Header.Del(trafficHeader) // the sandbox's server gets no credential
	r.Header.Set(network.TokenHeader, rec.Token)
	return false
}

var errNoExec = errors.New("the API key of this traffic token lacks the exec scope, which reaching a sandbox's ports needs")
