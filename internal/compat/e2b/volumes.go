package e2b

import (
	"context"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/volume"
	"github.com/sbxhq/sbx/wire"
)

// E2B's volumes are sbx volumes (internal/volume): Volume.create, connect,
// getInfo, list and destroy, and create's volumeMounts. A volume's id is
// its sbx name. Volume's file methods (the /volumecontent API,
// volumecontent.go) are sbx's volume file service (volume.Files).

// Volumes is the volume Manager as this layer needs it.
type Volumes interface {
	Create(ctx context.Context, name string, sizeMiB int) (*wire.Volume, error)
	Get(ctx context.Context, name string) (*wire.Volume, error)
	List(ctx context.Context) ([]wire.Volume, error)
	Delete(ctx context.Context, name string) error
	ID(ctx context.Context, name string) (string, error)
	Files(ctx context.Context, name string) (*volume.Files, error)
}

// volumeJSON is E2B's Volume / VolumeAndToken. The token is for the volume
// content API (volumecontent.go).
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

// volumeAnswer is v with the caller's token for its files.
func (s *Server) volumeAnswer(ctx context.Context, v *wire.Volume) (volumeJSON, error) {
	vols, err := s.volumes()
	if err != nil {
		return volumeJSON{}, err
	}
	id, err := vols.ID(ctx, v.Name)
	if err != nil {
		return volumeJSON{}, err
	}
	p, _ := auth.FromContext(ctx)
	tok := s.volumeToken(p, id)
	return volumeJSON{VolumeID: v.Name, Name: v.Name, Token: &tok}, nil
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
	out, err := s.volumeAnswer(r.Context(), v)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
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
	out, err := s.volumeAnswer(r.Context(), v)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
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
