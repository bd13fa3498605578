package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Volumes keeps named volumes (package volume).
type Volumes interface {
	Create(ctx context.Context, name string, sizeMiB int) (*wire.Volume, error)
	Get(ctx context.Context, name string) (*wire.Volume, error) // another team's: VOLUME_NOT_FOUND
	List(ctx context.Context) ([]wire.Volume, error)
	Delete(ctx context.Context, name string) error
}

// Storage is what the volume and backup routes need; set with SetStorage.
type Storage struct {
	Volumes Volumes
	// VolumeUsers lists the sandboxes that mount a volume (the Manager's).
	VolumeUsers func(ctx context.Context, name string) ([]string, error)
	Backups     Backups     // backups.go; nil: no backup routes
	Buckets     LiveBuckets // buckets.go; nil: no live bucket mounts
}

// SetStorage turns on the volume routes.
func (s *Server) SetStorage(st Storage) { s.storage = &st }

func (s *Server) volumes() (Volumes, error) {
	if s.storage == nil || s.storage.Volumes == nil {
		return nil, errdefs.Unavailable(wire.CodeInvalidVolume, "this daemon has no volumes")
	}
	return s.storage.Volumes, nil
}

func (s *Server) withUsers(ctx context.Context, v *wire.Volume) error {
	users, err := s.storage.VolumeUsers(ctx, v.Name)
	v.UsedBy = users
	return err
}

func (s *Server) createVolume(w http.ResponseWriter, r *http.Request) error {
	vols, err := s.volumes()
	if err != nil {
		return err
	}
	var req wire.CreateVolumeRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	v, err := vols.Create(r.Context(), req.Name, req.SizeMiB)
	if err != nil {
		return err
	}
	v.UsedBy = []string{}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) listVolumes(w http.ResponseWriter, r *http.Request) error {
	vols, err := s.volumes()
	if err != nil {
		return err
	}
	list, err := vols.List(r.Context())
	if err != nil {
		return err
	}
	for i := range list {
		if err := s.withUsers(r.Context(), &list[i]); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

func (s *Server) getVolume(w http.ResponseWriter, r *http.Request) error {
	vols, err := s.volumes()
	if err != nil {
		return err
	}
	v, err := vols.Get(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	if err := s.withUsers(r.Context(), v); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// deleteVolume refuses while a sandbox mounts the volume, unless force.
func (s *Server) deleteVolume(w http.ResponseWriter, r *http.Request) error {
	vols, err := s.volumes()
	if err != nil {
		return err
	}
	force := false
	if q := r.URL.Query().Get("force"); q != "" {
		if force, err = strconv.ParseBool(q); err != nil {
			return errdefs.Invalid(wire.CodeInvalidVolume, "force must be true or false, got %q", q)
		}
	}
	v, err := vols.Get(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	if err := s.withUsers(r.Context(), v); err != nil {
		return err
	}
	if len(v.UsedBy) > 0 && !force {
		return errdefs.Conflict(wire.CodeVolumeInUse, "volume %q is mounted by sandbox %s: delete them first, or pass force=true (they then fail to start)", v.Name, strings.Join(v.UsedBy, ", "))
	}
	if err := vols.Delete(r.Context(), v.Name); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
