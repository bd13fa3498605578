package daytona

import (
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/sbxhq/sbx/wire"
)

// Daytona's warm pools are sbx's pools (POST /v1/pools, sdk/pool.go): a
// pool of a snapshot keeps that many started sandboxes of its image, and a
// create from the snapshot whose spec matches takes one. The pool's id is
// the sbx pool's name, made from the snapshot's; its size is sbx's min and
// max alike (Daytona's pools do not grow).

// warmPoolDTO is Daytona's WarmPool.
type warmPoolDTO struct {
	ID             string            `json:"id"`
	OrganizationID string            `json:"organizationId"`
	Snapshot       string            `json:"snapshot"`
	Target         string            `json:"target"`
	Pool           int               `json:"pool"`
	CurrentSize    int               `json:"currentSize"`
	CPU            int               `json:"cpu"`
	Mem            int               `json:"mem"`
	Disk           int               `json:"disk"`
	OSUser         string            `json:"osUser"`
	Env            map[string]string `json:"env"`
	CreatedAt      string            `json:"createdAt"`
	UpdatedAt      string            `json:"updatedAt"`
}

func toWarmPoolDTO(p wire.Pool) warmPoolDTO {
	env := p.Template.Env
	if env == nil {
		env = map[string]string{}
	}
	return warmPoolDTO{ID: p.Name, OrganizationID: organizationID, Snapshot: p.Template.Image, Target: target,
		Pool: p.Min, CurrentSize: p.Ready, CPU: int(math.Ceil(p.Template.CPU)), Mem: ceilDiv(p.Template.MemoryMiB, 1024),
		Disk: ceilDiv(p.Template.DiskMiB, 1024), OSUser: "root", Env: env, CreatedAt: stamp(p.CreatedAt), UpdatedAt: stamp(p.CreatedAt)}
}

// warmPoolName is the sbx pool of a snapshot: its name in pool name letters.
func warmPoolName(snapshot string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(snapshot))
	return "daytona-" + strings.Trim(name, "-")
}

func (h *Handler) listWarmPools(w http.ResponseWriter, r *http.Request) error {
	var list []wire.Pool
	if err := h.nativeJSON(r, "GET", "/v1/pools", nil, nil, &list); err != nil {
		return err
	}
	out := []warmPoolDTO{}
	for _, p := range list {
		if strings.HasPrefix(p.Name, "daytona-") {
			out = append(out, toWarmPoolDTO(p))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) createWarmPool(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Snapshot string `json:"snapshot"`
		Pool     int    `json:"pool"`
		Target   string `json:"target"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	switch {
	case in.Target != "" && in.Target != target:
		return invalid(wire.CodeFeatureUnsupported, "warm pool target %s is not supported (sbx has one target, %s)", in.Target, target)
	case in.Snapshot == "":
		return invalid(wire.CodeInvalidParameter, "snapshot is required: the image the pool's sandboxes start from")
	}
	if _, err := h.cfg.Images.Get(r.Context(), in.Snapshot); err != nil {
		return invalid(wire.CodeImageNotFound, "warm pools start sbx images; %q is not one (pools of sandbox snapshots are not supported)", in.Snapshot)
	}
	var p wire.Pool
	req := wire.CreatePoolRequest{Name: warmPoolName(in.Snapshot), Template: wire.PoolTemplate{Image: in.Snapshot}, Min: in.Pool, Max: in.Pool}
	if err := h.nativeJSON(r, "POST", "/v1/pools", nil, req, &p); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWarmPoolDTO(p))
	return nil
}

func (h *Handler) updateWarmPool(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Pool int `json:"pool"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	var p wire.Pool
	req := wire.UpdatePoolRequest{Min: &in.Pool, Max: &in.Pool}
	if err := h.nativeJSON(r, "PATCH", "/v1/pools/"+url.PathEscape(r.PathValue("wid")), nil, req, &p); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWarmPoolDTO(p))
	return nil
}

func (h *Handler) deleteWarmPool(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.native(r, "DELETE", "/v1/pools/"+url.PathEscape(r.PathValue("wid")), nil, nil, ""); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
