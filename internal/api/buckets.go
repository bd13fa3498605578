package api

import (
	"context"
	"net/http"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// LiveBuckets mounts buckets into running sandboxes (the Manager's).
type LiveBuckets interface {
	MountBucket(ctx context.Context, idOrName string, b wire.BucketMount) (*wire.BucketMount, error)
	UnmountBucket(ctx context.Context, idOrName, path string) error
}

func (s *Server) liveBuckets() (LiveBuckets, error) {
	if s.storage == nil || s.storage.Buckets == nil {
		return nil, errdefs.Unavailable(wire.CodeLiveMountUnsupported, "this daemon cannot mount buckets into running sandboxes")
	}
	return s.storage.Buckets, nil
}

func (s *Server) mountBucket(w http.ResponseWriter, r *http.Request) error {
	lb, err := s.liveBuckets()
	if err != nil {
		return err
	}
	var req wire.BucketMount
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	b, err := lb.MountBucket(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, b)
	return nil
}

func (s *Server) unmountBucket(w http.ResponseWriter, r *http.Request) error {
	lb, err := s.liveBuckets()
	if err != nil {
		return err
	}
	// The sandbox first: another team's is not found, whatever the query.
	if _, err := s.sandboxes.Get(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	path := r.URL.Query().Get("path")
	if path == "" {
		return errdefs.Invalid(wire.CodeInvalidBucketMount, "give the mount's path: ?path=/mnt/bucket")
	}
	if err := lb.UnmountBucket(r.Context(), r.PathValue("id"), path); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
