package api

import (
	"context"
	"net/http"

	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// sandboxSnapshots is what pause, resume, snapshots and forks need of the
// Manager.
type sandboxSnapshots interface {
	Pause(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Resume(ctx context.Context, idOrName string) (*store.Sandbox, error)
	CreateSnapshot(ctx context.Context, idOrName string, req wire.CreateSnapshotRequest) (*store.Snapshot, error)
	ListSnapshots(ctx context.Context) ([]*store.Snapshot, error)
	GetSnapshot(ctx context.Context, name string) (*store.Snapshot, error)
	DeleteSnapshot(ctx context.Context, name string) error
	Fork(ctx context.Context, idOrName string, req wire.ForkRequest) (*sandbox.ForkResult, error)
	Forks(ctx context.Context, idOrName string) ([]*store.Sandbox, error)
	Parent(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Ancestors(ctx context.Context, idOrName string) ([]*store.Sandbox, error)
}

// Pause and resume, snapshots, forks and lineage.

func (s *Server) pauseSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Pause(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

func (s *Server) resumeSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Resume(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateSnapshotRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	snap, err := s.sandboxes.CreateSnapshot(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, snapshotToAPI(snap))
	return nil
}

func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) error {
	list, err := s.sandboxes.ListSnapshots(r.Context())
	if err != nil {
		return err
	}
	out := make([]wire.Snapshot, 0, len(list))
	for _, snap := range list {
		out = append(out, snapshotToAPI(snap))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request) error {
	snap, err := s.sandboxes.GetSnapshot(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, snapshotToAPI(snap))
	return nil
}

func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) error {
	if err := s.sandboxes.DeleteSnapshot(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) forkSandbox(w http.ResponseWriter, r *http.Request) error {
	var req wire.ForkRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	res, err := s.sandboxes.Fork(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	out := wire.ForkResult{Forks: sandboxesToAPI(res.Forks), Memory: res.Memory, Note: res.Note}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listForks(w http.ResponseWriter, r *http.Request) error {
	list, err := s.sandboxes.Forks(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sandboxesToAPI(list))
	return nil
}

func (s *Server) getParent(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Parent(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

func (s *Server) listAncestors(w http.ResponseWriter, r *http.Request) error {
	list, err := s.sandboxes.Ancestors(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sandboxesToAPI(list))
	return nil
}

func sandboxesToAPI(list []*store.Sandbox) []wire.Sandbox {
	out := make([]wire.Sandbox, 0, len(list))
	for _, sb := range list {
		out = append(out, toAPI(sb))
	}
	return out
}

func snapshotToAPI(snap *store.Snapshot) wire.Snapshot {
	out := wire.Snapshot{
		Name: snap.Name, Sandbox: snap.SandboxID, Class: classOf(snap.Spec), Image: snap.Spec.Image,
		Memory: snap.Memory, SizeBytes: snap.SizeBytes, CreatedAt: snap.CreatedAt,
		ExpiresInSeconds: snap.TTLSeconds,
	}
	if !snap.ExpiresAt.IsZero() {
		t := snap.ExpiresAt
		out.ExpiresAt = &t
	}
	return out
}

// classOf names a spec's class; records from before classes are containers.
func classOf(spec store.Spec) string {
	if spec.Class == "" {
		return sandbox.ClassContainer
	}
	return spec.Class
}
