package agent

import (
	"context"
	"net/url"
	"os"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// gitCredentials stores req's credentials for its protocol and host in
// git's credential store, replacing any stored for the same, and turns the
// store on in the global git config: clone, push and pull without
// credentials find them there (storedAuth in git_remote.go).
func (s *server) gitCredentials(ctx context.Context, req wire.GitCredentialsRequest) (agentapi.None, error) {
	if req.Username == "" || req.Password == "" {
		return agentapi.None{}, errdefs.Invalid(wire.CodeInvalidParameter, "username and password are required")
	}
	if req.Protocol != "https" && req.Protocol != "http" {
		return agentapi.None{}, errdefs.Invalid(wire.CodeInvalidParameter, "protocol must be https or http, got %q", req.Protocol)
	}
	if u, err := url.Parse(req.Protocol + "://" + req.Host); err != nil || req.Host == "" || u.Host != req.Host || u.User != nil || u.Path != "" {
		return agentapi.None{}, errdefs.Invalid(wire.CodeInvalidParameter, "host must be a host name with an optional port, got %q", req.Host)
	}
	line := (&url.URL{Scheme: req.Protocol, User: url.UserPassword(req.Username, req.Password), Host: req.Host}).String()
	file := credentialsFile()
	old, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return agentapi.None{}, fsError(err, file)
	}
	var keep []string
	for _, l := range strings.Split(string(old), "\n") {
		if c, err := url.Parse(strings.TrimSpace(l)); l == "" || err == nil && c.Scheme == req.Protocol && c.Host == req.Host {
			continue // git's store keeps one line per host
		}
		keep = append(keep, l)
	}
	keep = append(keep, line)
	// A new file renamed over the old: the credentials are never in a
	// file readable by others, nor half written.
	tmp := file + ".sbx-tmp"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return agentapi.None{}, fsError(err, file)
	}
	_, err = f.WriteString(strings.Join(keep, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		os.Remove(tmp)
		return agentapi.None{}, fsError(err, file)
	}
	store := "store"
	_, err = s.gitConfig(ctx, wire.GitConfigRequest{Scope: "global", Key: "credential.helper", Value: &store})
	return agentapi.None{}, err
}
