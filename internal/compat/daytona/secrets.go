package daytona

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Daytona's secrets are sbx's secrets (POST /v1/secrets and the rest,
// internal/secret): a secret's id is its name. sbx sends a secret only to
// the hosts it names, over HTTPS, and only where an HTTP egress inject
// rule of the sandbox puts it into a header: so hosts are required, and a
// secret has no placeholder (Daytona's way of putting it in a sandbox's
// environment; updateSecrets is refused, unsupported.go). Descriptions
// are not kept by sbx and are refused by name.

// secretDTO is Daytona's Secret.
type secretDTO struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	CreatedAt   string   `json:"createdAt"`
	UpdatedAt   string   `json:"updatedAt"`
	Placeholder string   `json:"placeholder"`
	Hosts       []string `json:"hosts"`
}

func toSecretDTO(s wire.SecretInfo) secretDTO {
	hosts := s.Hosts
	if hosts == nil {
		hosts = []string{}
	}
	return secretDTO{ID: s.Name, Name: s.Name, CreatedAt: stamp(s.CreatedAt), UpdatedAt: stamp(s.CreatedAt), Hosts: hosts}
}

// secretFields are the fields of Daytona's CreateSecret and UpdateSecret.
type secretFields struct {
	Name        string    `json:"name"`
	Value       *string   `json:"value"`
	Description string    `json:"description"`
	Hosts       *[]string `json:"hosts"`
}

func (f secretFields) check() error {
	if f.Description != "" {
		return invalid(wire.CodeFeatureUnsupported, "secret description is not supported by sbx's Daytona compatibility layer: sbx keeps a secret's name, value and hosts")
	}
	if f.Hosts != nil && len(*f.Hosts) == 0 {
		return invalid(wire.CodeInvalidSecret, "secret hosts must name at least one host: sbx sends a secret only to the hosts it names, never everywhere")
	}
	return nil
}

// secrets lists the caller's team's secrets.
func (h *Handler) secrets(r *http.Request) ([]wire.SecretInfo, error) {
	var list []wire.SecretInfo
	err := h.nativeJSON(r, "GET", "/v1/secrets", nil, nil, &list)
	return list, err
}

func (h *Handler) secretNamed(r *http.Request, name string) (wire.SecretInfo, error) {
	list, err := h.secrets(r)
	if err != nil {
		return wire.SecretInfo{}, err
	}
	for _, s := range list {
		if s.Name == name {
			return s, nil
		}
	}
	return wire.SecretInfo{}, errdefs.NotFound(wire.CodeSecretNotFound, "no secret %q", name)
}

// listSecrets serves GET /secret/paginated?cursor&limit&name&sort&order
// (and GET /secret, all of them as an array).
func (h *Handler) listSecrets(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for name := range q {
		if !slices.Contains([]string{"cursor", "limit", "name", "sort", "order"}, name) {
			return invalid(wire.CodeInvalidParameter, "the secret list filter %s is not supported by sbx's Daytona compatibility layer", name)
		}
	}
	offset, limit, err := pageParams(q)
	if err != nil {
		return err
	}
	sortBy := cmp.Or(q.Get("sort"), "createdAt")
	if sortBy != "name" && sortBy != "createdAt" && sortBy != "updatedAt" {
		return invalid(wire.CodeInvalidParameter, "sort %q is not one of name, createdAt, updatedAt", sortBy)
	}
	desc := false
	switch o := cmp.Or(q.Get("order"), "asc"); o {
	case "asc":
	case "desc":
		desc = true
	default:
		return invalid(wire.CodeInvalidParameter, "order %q is not asc or desc", o)
	}
	list, err := h.secrets(r)
	if err != nil {
		return err
	}
	items := []secretDTO{}
	for _, s := range list {
		if n := q.Get("name"); n == "" || strings.Contains(strings.ToLower(s.Name), strings.ToLower(n)) {
			items = append(items, toSecretDTO(s))
		}
	}
	slices.SortStableFunc(items, func(a, b secretDTO) int {
		c := cmp.Compare(a.CreatedAt, b.CreatedAt) // RFC 3339 in UTC: sorts as time
		if sortBy == "name" {
			c = cmp.Compare(a.Name, b.Name)
		}
		if desc {
			return -c
		}
		return c
	})
	if !strings.HasSuffix(r.URL.Path, "/paginated") {
		writeJSON(w, http.StatusOK, items)
		return nil
	}
	page := struct {
		Items      []secretDTO `json:"items"`
		Total      int         `json:"total"`
		NextCursor *string     `json:"nextCursor"`
	}{Total: len(items)}
	page.Items, page.NextCursor = pageOf(items, offset, limit)
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (h *Handler) getSecret(w http.ResponseWriter, r *http.Request) error {
	s, err := h.secretNamed(r, r.PathValue("sid"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toSecretDTO(s))
	return nil
}

func (h *Handler) createSecret(w http.ResponseWriter, r *http.Request) error {
	var in secretFields
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	if in.Hosts == nil {
		return invalid(wire.CodeInvalidSecret, "secret hosts are required: sbx sends a secret only to the hosts it names, never everywhere")
	}
	if in.Value == nil {
		return invalid(wire.CodeInvalidSecret, "secret value is required")
	}
	if _, err := h.secretNamed(r, in.Name); err == nil {
		return errdefs.Conflict(wire.CodeInvalidSecret, "a secret named %q exists: update it instead", in.Name)
	}
	var s wire.SecretInfo
	req := wire.CreateSecretRequest{Name: in.Name, Value: *in.Value, SecretHosts: wire.SecretHosts{Hosts: *in.Hosts}}
	if err := h.nativeJSON(r, "POST", "/v1/secrets", nil, req, &s); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toSecretDTO(s))
	return nil
}

// updateSecret serves PATCH /secret/{sid}: a new value replaces the secret
// (keeping its hosts unless new ones are given); new hosts alone are set
// in place.
func (h *Handler) updateSecret(w http.ResponseWriter, r *http.Request) error {
	var in secretFields
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	if in.Name != "" {
		return invalid(wire.CodeInvalidParameter, "a secret's name cannot change")
	}
	if err := in.check(); err != nil {
		return err
	}
	cur, err := h.secretNamed(r, r.PathValue("sid"))
	if err != nil {
		return err
	}
	hosts := cur.SecretHosts
	if in.Hosts != nil {
		hosts.Hosts = *in.Hosts
	}
	var s wire.SecretInfo
	switch {
	case in.Value != nil:
		err = h.nativeJSON(r, "POST", "/v1/secrets", nil, wire.CreateSecretRequest{Name: cur.Name, Value: *in.Value, SecretHosts: hosts}, &s)
	case in.Hosts != nil:
		err = h.nativeJSON(r, "PUT", "/v1/secrets/"+url.PathEscape(cur.Name)+"/hosts", nil, hosts, &s)
	default:
		s = cur
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toSecretDTO(s))
	return nil
}

func (h *Handler) deleteSecret(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.native(r, "DELETE", "/v1/secrets/"+url.PathEscape(r.PathValue("sid")), nil, nil, ""); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
