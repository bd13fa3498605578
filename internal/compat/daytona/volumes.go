package daytona

import (
	"net/http"
	"net/url"

	"github.com/sbxhq/sbx/wire"
)

// Daytona's volumes are sbx's named volumes (POST /v1/volumes and the
// rest, internal/volume): a volume's id is its name, and a create's
// volumes entry {volumeId, mountPath} mounts it as sbx's {name, path}.

// volumeDTO is Daytona's VolumeDto.
type volumeDTO struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	OrganizationID string  `json:"organizationId"`
	State          string  `json:"state"`
	CreatedAt      string  `json:"createdAt"`
	UpdatedAt      string  `json:"updatedAt"`
	LastUsedAt     *string `json:"lastUsedAt"`
	ErrorReason    *string `json:"errorReason"`
}

func toVolumeDTO(v wire.Volume) volumeDTO {
	return volumeDTO{ID: v.Name, Name: v.Name, OrganizationID: organizationID, State: "ready",
		CreatedAt: stamp(v.CreatedAt), UpdatedAt: stamp(v.CreatedAt)}
}

// sandboxVolume is Daytona's SandboxVolume, a create's volumes entry.
type sandboxVolume struct {
	VolumeID  string `json:"volumeId"`
	MountPath string `json:"mountPath"`
	Subpath   string `json:"subpath,omitempty"`
}

// volumeMounts turns a create's volumes into sbx's mounts.
func volumeMounts(in []sandboxVolume) ([]wire.VolumeMount, error) {
	var out []wire.VolumeMount
	for _, v := range in {
		if v.Subpath != "" {
			return nil, invalid(wire.CodeFeatureUnsupported, "volumes: subpath is not supported by sbx's Daytona compatibility layer (sbx mounts a whole volume)")
		}
		out = append(out, wire.VolumeMount{Name: v.VolumeID, Path: v.MountPath})
	}
	return out, nil
}

func (h *Handler) listVolumes(w http.ResponseWriter, r *http.Request) error {
	var list []wire.Volume
	if err := h.nativeJSON(r, "GET", "/v1/volumes", nil, nil, &list); err != nil {
		return err
	}
	out := make([]volumeDTO, 0, len(list))
	for _, v := range list {
		out = append(out, toVolumeDTO(v))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getVolume serves GET /volumes/{id} and /volumes/by-name/{name}: the same.
func (h *Handler) getVolume(w http.ResponseWriter, r *http.Request) error {
	var v wire.Volume
	if err := h.nativeJSON(r, "GET", "/v1/volumes/"+url.PathEscape(r.PathValue("name")), nil, nil, &v); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toVolumeDTO(v))
	return nil
}

func (h *Handler) createVolume(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	var v wire.Volume
	if err := h.nativeJSON(r, "POST", "/v1/volumes", nil, wire.CreateVolumeRequest{Name: in.Name}, &v); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toVolumeDTO(v))
	return nil
}

func (h *Handler) deleteVolume(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.native(r, "DELETE", "/v1/volumes/"+url.PathEscape(r.PathValue("name")), nil, nil, ""); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
