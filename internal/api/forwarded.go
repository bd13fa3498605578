package api

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/mtls"
	"github.com/sbxhq/sbx/wire"
)

// SetForwarders makes the API take the principal of header
// auth.HeaderPrincipal from a client whose verified TLS certificate names
// one of names: the cluster gateway, which admitted the request under the
// caller's key and forwards it to this host (docs/kubernetes/teams.md).
// nil (the default): the header is refused from everyone.
func (s *Server) SetForwarders(names []string) { s.forwarders = names }

// forwardedPrincipal is the principal of header value v, if r came over a
// connection of a forwarder. A header from anyone else is refused, not
// ignored: a caller that sends one is trying to be someone it is not.
func (s *Server) forwardedPrincipal(r *http.Request, v string) (auth.Principal, error) {
	if len(s.forwarders) == 0 || r.TLS == nil || mtls.CheckName(*r.TLS, s.forwarders, "forwarder") != nil {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "header %s is accepted only from the cluster gateway, over mutual TLS with its client certificate", auth.HeaderPrincipal)
	}
	p, err := auth.PrincipalFromHeader(v)
	if err != nil {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "header %s: %v", auth.HeaderPrincipal, err)
	}
	return p, nil
}
