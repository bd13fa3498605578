package authz

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/mtls"
	"github.com/sbxhq/sbx/wire"
)

// Forwarded is the principal the cluster gateway forwarded with r in
// header auth.HeaderPrincipal, having admitted r under the caller's own key
// (docs/kubernetes/teams.md); ok is false when r carries no such header.
// The header is believed only from a client whose verified TLS certificate
// names one of g.Forwarders. From anyone else it is refused, not ignored: a
// caller that sends one is trying to be someone it is not.
func (g *Gate) Forwarded(r *http.Request) (p auth.Principal, ok bool, err error) {
	v := r.Header.Get(auth.HeaderPrincipal)
	if v == "" {
		return auth.Principal{}, false, nil
	}
	if len(g.Forwarders) == 0 || r.TLS == nil || mtls.CheckName(*r.TLS, g.Forwarders, "forwarder") != nil {
		return auth.Principal{}, true, errdefs.Unauthorized(wire.CodeUnauthorized, "header %s is accepted only from the cluster gateway, over mutual TLS with its client certificate", auth.HeaderPrincipal)
	}
	if p, err = auth.PrincipalFromHeader(v); err != nil {
		return auth.Principal{}, true, errdefs.Unauthorized(wire.CodeUnauthorized, "header %s: %v", auth.HeaderPrincipal, err)
	}
	return p, true, nil
}
