package e2b

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// E2B's secrets are sbx secrets (internal/secret): values sbx's HTTP egress
// proxy adds to a sandbox's requests, never shown again. An sbx secret
// names the hosts it may be sent to, and E2B's Secret.create carries only
// a name, a value and string metadata: the hosts come from the metadata
// key "hosts" (comma-separated, sbx's host patterns) and plain HTTP from
// "allowHttp" ("true"); a secret without hosts is refused, naming them, so
// no secret is ever sendable everywhere. Any other metadata key is refused:
// sbx keeps none. A secret's id is its name.

// Secrets is the secret Keeper as this layer needs it.
type Secrets interface {
	Create(ctx context.Context, req wire.CreateSecretRequest) (*wire.SecretInfo, error)
	List(ctx context.Context) ([]wire.SecretInfo, error)
	Delete(ctx context.Context, name string) error
}

// secretJSON is E2B's SecretInfo. sbx keeps no versions of a secret:
// currentVersion is absent. createdAt and updatedAt are both when the value
// was last set (sbx keeps that one time).
type secretJSON struct {
	SecretID  string            `json:"secretID"`
	Name      string            `json:"name"`
	Metadata  map[string]string `json:"metadata"`
	CreatedAt time.Time         `json:"createdAt"`
	UpdatedAt time.Time         `json:"updatedAt"`
}

func secretAnswer(i wire.SecretInfo) secretJSON {
	md := map[string]string{"hosts": strings.Join(i.Hosts, ",")}
	if i.AllowHTTP {
		md["allowHttp"] = "true"
	}
	return secretJSON{SecretID: i.Name, Name: i.Name, Metadata: md, CreatedAt: i.CreatedAt, UpdatedAt: i.CreatedAt}
}

func (s *Server) secrets() (Secrets, error) {
	if s.cfg.Secrets == nil {
		return nil, errdefs.Unavailable(wire.CodeInvalidSecret, "this daemon keeps no secrets (sbx's HTTP egress proxy is off)")
	}
	return s.cfg.Secrets, nil
}

// secretHosts reads the hosts from E2B's metadata; nil metadata: none given.
func secretHosts(md map[string]string) (*wire.SecretHosts, error) {
	if md == nil {
		return nil, nil
	}
	var h wire.SecretHosts
	for k, v := range md {
		switch k {
		case "hosts":
			for _, host := range strings.Split(v, ",") {
				if host = strings.TrimSpace(host); host != "" {
					h.Hosts = append(h.Hosts, host)
				}
			}
		case "allowHttp":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, errdefs.Invalid(wire.CodeInvalidSecret, "metadata.allowHttp %q: give true or false", v)
			}
			h.AllowHTTP = b
		default:
			return nil, errdefs.Invalid(wire.CodeInvalidSecret, "metadata.%s is not supported by sbx's E2B layer: a secret's metadata holds only hosts (where it may be sent, comma-separated) and allowHttp", k)
		}
	}
	return &h, nil
}

var errNoHosts = errdefs.Invalid(wire.CodeInvalidSecret, "sbx secrets are sent only to the hosts they name: pass them in Secret.create's metadata, e.g. { metadata: { hosts: 'api.example.com,*.example.com' } }")

// ownSecret is the caller's team's secret name; SECRET_NOT_FOUND if none.
func ownSecret(ctx context.Context, sec Secrets, name string) (*wire.SecretInfo, error) {
	list, err := sec.List(ctx)
	if err != nil {
		return nil, err
	}
	team := auth.TeamOf(ctx)
	for _, i := range list {
		if i.Name == name && (i.Team == team || i.Team == "" && team == auth.DefaultTeam) {
			return &i, nil
		}
	}
	return nil, errdefs.NotFound(wire.CodeSecretNotFound, "secret %q not found", name)
}

func (s *Server) createSecret(w http.ResponseWriter, r *http.Request, _ string) error {
	sec, err := s.secrets()
	if err != nil {
		return err
	}
	var body struct {
		Name     string            `json:"name"`
		Value    string            `json:"value"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	h, err := secretHosts(body.Metadata)
	if err != nil {
		return err
	}
	if h == nil || len(h.Hosts) == 0 {
		return errNoHosts
	}
	if _, err := ownSecret(r.Context(), sec, body.Name); err == nil {
		return errdefs.Conflict(wire.CodeInvalidSecret, "secret %q already exists: Secret.update sets a new value", body.Name)
	}
	info, err := sec.Create(r.Context(), wire.CreateSecretRequest{Name: body.Name, Value: body.Value, SecretHosts: *h})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, secretAnswer(*info))
	return nil
}

// updateSecret sets a new value, and new hosts when metadata is given.
func (s *Server) updateSecret(w http.ResponseWriter, r *http.Request, name string) error {
	sec, err := s.secrets()
	if err != nil {
		return err
	}
	var body struct {
		Value    string            `json:"value"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	old, err := ownSecret(r.Context(), sec, name)
	if err != nil {
		return err
	}
	h, err := secretHosts(body.Metadata)
	if err != nil {
		return err
	}
	if h == nil {
		h = &old.SecretHosts
	} else if len(h.Hosts) == 0 {
		return errNoHosts
	}
	info, err := sec.Create(r.Context(), wire.CreateSecretRequest{Name: name, Value: body.Value, SecretHosts: *h})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, secretAnswer(*info))
	return nil
}

func (s *Server) getSecret(w http.ResponseWriter, r *http.Request, name string) error {
	sec, err := s.secrets()
	if err != nil {
		return err
	}
	info, err := ownSecret(r.Context(), sec, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, secretAnswer(*info))
	return nil
}

// listSecrets pages by name: nextToken is the last name of the page before.
func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request, _ string) error {
	sec, err := s.secrets()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	for k := range q {
		if k != "limit" && k != "nextToken" {
			return errdefs.Invalid(wire.CodeInvalidParameter, "query parameter %q is not supported by sbx's E2B layer (Secret.list takes limit and nextToken)", k)
		}
	}
	limit := 100
	if q.Has("limit") {
		if limit, err = strconv.Atoi(q.Get("limit")); err != nil || limit < 1 {
			return errdefs.Invalid(wire.CodeInvalidParameter, "limit %q: give a number of 1 or more", q.Get("limit"))
		}
	}
	list, err := sec.List(r.Context())
	if err != nil {
		return err
	}
	team := auth.TeamOf(r.Context())
	out := []secretJSON{}
	for _, i := range list {
		if (i.Team == team || i.Team == "" && team == auth.DefaultTeam) && i.Name > q.Get("nextToken") {
			out = append(out, secretAnswer(i))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) > limit {
		out = out[:limit]
		w.Header().Set("X-Next-Token", out[limit-1].Name)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request, name string) error {
	sec, err := s.secrets()
	if err != nil {
		return err
	}
	if _, err := ownSecret(r.Context(), sec, name); err != nil {
		return err
	}
	if err := sec.Delete(r.Context(), name); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
