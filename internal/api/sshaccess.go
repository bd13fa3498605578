package api

import (
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/sshgw"
	"github.com/sbxhq/sbx/wire"
)

// SSH access: tokens and public keys that let SSH clients into a sandbox
// through the daemon's SSH gateway (package sshgw). The API only manages
// them; the gateway checks them.

// sshState is set by SetSSH when the daemon runs the gateway.
type sshState struct {
	access  *sshgw.Access
	listen  string // the gateway's address, for the ready-to-paste command
	hostKey string // its public key, authorized_keys form
}

// SetSSH enables the ssh-access routes for a gateway listening on listen
// with host key hostKey (authorized_keys form).
func (s *Server) SetSSH(access *sshgw.Access, listen, hostKey string) {
	s.ssh = &sshState{access: access, listen: listen, hostKey: hostKey}
}

// SSHAccess is the gateway's access records, nil without the gateway.
func (s *Server) SSHAccess() *sshgw.Access {
	if s.ssh == nil {
		return nil
	}
	return s.ssh.access
}

func (s *Server) sshAccess() (*sshgw.Access, error) {
	if s.ssh == nil {
		return nil, errdefs.Unavailable(wire.CodeSSHDisabled, "this daemon runs without the SSH gateway: start sbx serve with --ssh-listen")
	}
	return s.ssh.access, nil
}

// The SSH routes check their input and the sandbox (another team's is not
// found) before saying the gateway is off.

func (s *Server) createSSHAccess(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateSSHAccessRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	access, err := s.sshAccess()
	if err != nil {
		return err
	}
	p, _ := auth.FromContext(r.Context())
	rec, token, err := access.Create(r.Context(), sb.ID, p, req)
	if err != nil {
		return err
	}
	out := sshgw.ToAPI(rec)
	out.Token = token
	user := token
	if token == "" {
		user = sb.ID // a public key logs in as the sandbox
	}
	host, port := s.sshEndpoint(r)
	out.Command = fmt.Sprintf("ssh -p %s %s@%s", port, user, host)
	out.Host, out.HostKey = host, s.ssh.hostKey
	out.Port, _ = strconv.Atoi(port)
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// sshEndpoint is the host and port clients reach the gateway at: its
// listen address, or the host the API was reached at when it listens on
// every address.
func (s *Server) sshEndpoint(r *http.Request) (host, port string) {
	host, port, err := net.SplitHostPort(s.ssh.listen)
	if err != nil {
		return s.ssh.listen, "22"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = r.Host
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			host = h
		}
	}
	if _, err := strconv.Atoi(port); err != nil {
		port = "22"
	}
	return host, port
}

func (s *Server) listSSHAccess(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	access, err := s.sshAccess()
	if err != nil { // no gateway: nothing can log in
		writeJSON(w, http.StatusOK, []wire.SSHAccess{})
		return nil
	}
	list, err := access.List(r.Context(), sb.ID)
	if err != nil {
		return err
	}
	out := make([]wire.SSHAccess, 0, len(list))
	for i := range list {
		out = append(out, sshgw.ToAPI(&list[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) revokeSSHAccess(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	access, err := s.sshAccess()
	if err != nil {
		return err
	}
	if err := access.Revoke(r.Context(), sb.ID, r.PathValue("access")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
