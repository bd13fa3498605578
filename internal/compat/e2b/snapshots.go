package e2b

import (
	"context"
	"net/http"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// E2B's snapshots are sbx snapshots (of the filesystem; sbx keeps memory
// only for class gvisor, which E2B's API cannot ask for): createSnapshot,
// listSnapshots, deleteSnapshot (E2B deletes a snapshot as a template), and
// Sandbox.create(snapshotID) starts from one (createRequest).

// Snapshots is what this layer needs of the Manager's snapshots.
type Snapshots interface {
	CreateSnapshot(ctx context.Context, idOrName string, req wire.CreateSnapshotRequest) (*store.Snapshot, error)
	GetSnapshot(ctx context.Context, name string) (*store.Snapshot, error)
	ListSnapshots(ctx context.Context) ([]*store.Snapshot, error)
	DeleteSnapshot(ctx context.Context, name string) error
}

// snapshotJSON is E2B's SnapshotInfo.
type snapshotJSON struct {
	SnapshotID string   `json:"snapshotID"`
	Names      []string `json:"names"`
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request, id string) error {
	var body struct {
		Name string `json:"name"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &body, true); err != nil {
			return err
		}
	}
	if body.Name == "" {
		body.Name = "e2b-" + randomHex()
	}
	snap, err := s.sandboxes.CreateSnapshot(r.Context(), id, wire.CreateSnapshotRequest{Name: body.Name})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, snapshotJSON{SnapshotID: snap.Name, Names: []string{snap.Name}})
	return nil
}

// listSnapshots answers GET /snapshots with the sandboxID and name filters
// and X-Next-Token paging (the token is the offset), oldest first.
func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request, _ string) error {
	q := r.URL.Query()
	all, err := s.sandboxes.ListSnapshots(r.Context())
	if err != nil {
		return err
	}
	var out []snapshotJSON
	for _, snap := range all {
		if (q.Get("sandboxID") == "" || snap.SandboxID == q.Get("sandboxID")) && (q.Get("name") == "" || snap.Name == q.Get("name")) {
			out = append(out, snapshotJSON{SnapshotID: snap.Name, Names: []string{snap.Name}})
		}
	}
	return writePage(w, q, out)
}

// deleteTemplate deletes a snapshot (deleteSnapshot); sbx's templates
// (Config.Templates) are not E2B's to delete.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request, id string) error {
	if _, ok := s.cfg.Templates[id]; ok {
		return errdefs.Invalid(wire.CodeInvalidParameter, "template %q is an sbx image set by sbx serve --e2b-template; it cannot be deleted through E2B", id)
	}
	if err := s.sandboxes.DeleteSnapshot(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
