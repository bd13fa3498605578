package daytona

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// git.setConfig, getConfig and configureUser on the agent's git config
// (internal/agent/git_config.go): the global scope is the toolbox user's
// ~/.gitconfig, which the git command reads too.

func (h *Handler) gitSetConfig(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Key   string `json:"key"`
		Value string `json:"value"`
		Scope string `json:"scope"`
		Path  string `json:"path"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	if _, err := gitCall[wire.GitConfigValue](h, r, agentapi.GitConfig, wire.GitConfigRequest{Path: in.Path, Scope: in.Scope, Key: in.Key, Value: &in.Value}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) gitGetConfig(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	v, err := gitCall[wire.GitConfigValue](h, r, agentapi.GitConfig, wire.GitConfigRequest{Path: q.Get("path"), Scope: q.Get("scope"), Key: q.Get("key")})
	if err != nil {
		return err
	}
	out := map[string]string{}
	if v.Value != nil {
		out["value"] = *v.Value
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) gitConfigureUser(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Name  string `json:"name"`
		Email string `json:"email"`
		Scope string `json:"scope"`
		Path  string `json:"path"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	for _, kv := range [][2]string{{"user.name", in.Name}, {"user.email", in.Email}} {
		req := wire.GitConfigRequest{Path: in.Path, Scope: in.Scope, Key: kv[0], Value: &kv[1]}
		if _, err := gitCall[wire.GitConfigValue](h, r, agentapi.GitConfig, req); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// gitAuthenticate serves git.dangerouslyAuthenticate (POST /git/credentials):
// the credentials go into the sandbox's git credential store for one
// protocol and host (internal/agent/git_credentials.go), where clone, push
// and pull without credentials find them. Defaults as Daytona's: github.com
// over https.
func (h *Handler) gitAuthenticate(w http.ResponseWriter, r *http.Request) error {
	var in wire.GitCredentialsRequest
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	if in.Host == "" {
		in.Host = "github.com"
	}
	if in.Protocol == "" {
		in.Protocol = "https"
	}
	if _, err := gitCall[none](h, r, agentapi.GitCredentials, in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
