package api

// SetForwarders makes the API take the principal of header
// auth.HeaderPrincipal from a client whose verified TLS certificate names
// one of names: the cluster gateway, which admitted the request under the
// caller's key and forwards it to this host (docs/kubernetes/teams.md).
// The check is the gate's (internal/authz/forwarded.go), so every surface
// behind the same gate believes the same clients; call it after
// SetTenancy. nil (the default): the header is refused from everyone.
func (s *Server) SetForwarders(names []string) { s.gate.Forwarders = names }
