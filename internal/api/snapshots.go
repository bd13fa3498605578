package api

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// Pause and resume, snapshots, forks and lineage.

func (s *Server) pauseSandbox(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandboxes.Pause(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
}

func (s *Server) resumeSandbox(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandboxes.Resume(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) {
	var req sdk.CreateSnapshotRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	snap, err := s.sandboxes.CreateSnapshot(r.Context(), r.PathValue("id"), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, snapshotToAPI(snap))
}

func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) {
	list, err := s.sandboxes.ListSnapshots(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]sdk.Snapshot, 0, len(list))
	for _, snap := range list {
		out = append(out, snapshotToAPI(snap))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request) {
	snap, err := s.sandboxes.GetSnapshot(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, snapshotToAPI(snap))
}

func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	if err := s.sandboxes.DeleteSnapshot(r.Context(), r.PathValue("name")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) forkSandbox(w http.ResponseWriter, r *http.Request) {
	var req sdk.ForkRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.sandboxes.Fork(r.Context(), r.PathValue("id"), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := sdk.ForkResult{Forks: sandboxesToAPI(res.Forks), Memory: res.Memory, Note: res.Note}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) listForks(w http.ResponseWriter, r *http.Request) {
	list, err := s.sandboxes.Forks(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sandboxesToAPI(list))
}

func (s *Server) getParent(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandboxes.Parent(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
}

func (s *Server) listAncestors(w http.ResponseWriter, r *http.Request) {
	list, err := s.sandboxes.Ancestors(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sandboxesToAPI(list))
}

func sandboxesToAPI(list []*store.Sandbox) []sdk.Sandbox {
	out := make([]sdk.Sandbox, 0, len(list))
	for _, sb := range list {
		out = append(out, toAPI(sb))
	}
	return out
}

func snapshotToAPI(snap *store.Snapshot) sdk.Snapshot {
	out := sdk.Snapshot{
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
