package e2b

import (
	"context"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// E2B's volumes are sbx volumes (internal/volume): Volume.create, connect,
// getInfo, list and destroy, and create's volumeMounts. A volume's id is
// its sbx name. Volume content (Volume's file methods, the /volumecontent
// API) is not served: sbx reaches a volume's files through a sandbox that
// mounts it (refused.go).

// Volumes is the volume Manager as this layer needs it.
type Volumes interface {
	Create(ctx context.Context, name string, sizeMiB int) (*wire.Volume, error)
	Get(ctx context.Context, name string) (*wire.Volume, error)
	List(ctx context.Context) ([]wire.Volume, error)
	Delete(ctx context.Context, name string) error
}

// volumeJSON is E2B's Volume / VolumeAndToken. The token is for the volume
// content API, which sbx does not serve: it is empty.
type volumeJSON struct {
	VolumeID string  `json:"volumeID"`
	Name     string  `json:"name"`
	Token    *string `json:"token,omitempty"`
}

func (s *Server) volumes() (Volumes, error) {
	if s.cfg.Volumes == nil {
		return nil, errdefs.Unavailable(wire.CodeInvalidVolume, "this daemon keeps no volumes")
	}
	return s.cfg.Volumes, nil
}

func volumeAnswer(v *wire.Volume) volumeJSON {
	none := ""
	return volumeJSON{VolumeID: v.Name, Name: v.Name, Token: &none}
}

func (s *Server) createVolume(w http.ResponseWriter, r *http.Request, _ string) error {
	vols, err := s.volumes()
	if err != nil {
		return err
	}
	var body struct {
		Name string `json:"name"`
	}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	v, err := vols.Create(r.Context(), body.Name, 0)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, volumeAnswer(v))
	return nil
}

func (s *Server) getVolume(w http.ResponseWriter, r *http.Request, id string) error {
	vols, err := s.volumes()
	if err != nil {
		return err
	}
	v, err := vols.Get(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, volumeAnswer(v))
	return nil
}

func (s *Server) listVolumes(w http.ResponseWriter, r *http.Request, _ string) error {
	vols, err := s.volumes()
	if err != nil {
		return err
	}
	list, err := vols.List(r.Context())
	if err != nil {
		return err
	}
	out := []volumeJSON{}
	for _, v := range list {
		out = append(out, volumeJSON{VolumeID: v.Name, Name: v.Name})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// deleteVolume refuses a volume a sandbox mounts, as sbx's own API does.
func (s *Server) deleteVolume(w http.ResponseWriter, r *http.Request, id string) error {
	vols, err := s.volumes()
	if err != nil {
		return err
	}
	v, err := vols.Get(r.Context(), id)
	if err != nil {
		return err
	}
	users, err := s.sandboxes.VolumeUsers(r.Context(), v.Name)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return errdefs.Conflict(wire.CodeVolumeInUse, "volume %q is mounted by sandbox %s: kill them first", v.Name, strings.Join(users, ", "))
	}
	if err := vols.Delete(r.Context(), v.Name); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
