package gateway

import (
	"context"
	"net/http"

	"github.com/sbxhq/sbx/internal/auth"
)

// hostAuth sets the credentials of a call to a host on behalf of the
// caller in ctx (or, for a public route, the key r carries). With
// ForwardIdentity the host gets the caller's own principal in header
// auth.HeaderPrincipal and no key: it runs the call as that caller (scope,
// team, audit) and believes the header only over the gateway's mutual TLS
// (internal/api/forwarded.go). Without, the hosts' shared admin key.
// Whatever header of that name a caller sent is dropped first: only the
// gateway says who a caller is.
func (s *Server) hostAuth(ctx context.Context, h http.Header, r *http.Request) {
	h.Del(auth.HeaderPrincipal)
	if !s.cfg.ForwardIdentity {
		h.Set("Authorization", "Bearer "+s.cfg.HostToken)
		return
	}
	h.Del("Authorization")
	p, ok := auth.FromContext(ctx)
	if !ok && r != nil {
		var err error
		if p, err = s.principal(r); err != nil {
			return
		}
		ok = true
	}
	if ok {
		h.Set(auth.HeaderPrincipal, p.Header())
	}
}
