package api

import (
	"context"
	"net/http"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Backups keeps directory backups (package backup).
type Backups interface {
	Create(ctx context.Context, a *agentapi.Client, sandboxID string, req wire.CreateBackupRequest) (*wire.Backup, error)
	Get(ctx context.Context, id string) (*wire.Backup, error)
	List(ctx context.Context, sandboxID string) ([]wire.Backup, error)
	Delete(ctx context.Context, id string) error
	Restore(ctx context.Context, a *agentapi.Client, id, dir string) (*wire.Backup, error)
}

func (s *Server) backups() (Backups, error) {
	if s.storage == nil || s.storage.Backups == nil {
		return nil, errdefs.Unavailable(wire.CodeArchiveUnavailable, "this daemon has no blob store for backups")
	}
	return s.storage.Backups, nil
}

func (s *Server) createBackup(w http.ResponseWriter, r *http.Request) error {
	bk, err := s.backups()
	if err != nil {
		return err
	}
	var req wire.CreateBackupRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	a, sb, err := s.sandboxes.Agent(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	b, err := bk.Create(r.Context(), a, sb.ID, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, b)
	return nil
}

func (s *Server) listBackups(w http.ResponseWriter, r *http.Request) error {
	bk, err := s.backups()
	if err != nil {
		return err
	}
	id := ""
	if ref := r.URL.Query().Get("sandbox"); ref != "" {
		sb, err := s.sandboxes.Get(r.Context(), ref)
		if err != nil {
			return err
		}
		id = sb.ID
	}
	list, err := bk.List(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

func (s *Server) getBackup(w http.ResponseWriter, r *http.Request) error {
	bk, err := s.backups()
	if err != nil {
		return err
	}
	b, err := bk.Get(r.Context(), r.PathValue("backup"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

func (s *Server) deleteBackup(w http.ResponseWriter, r *http.Request) error {
	bk, err := s.backups()
	if err != nil {
		return err
	}
	if err := bk.Delete(r.Context(), r.PathValue("backup")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) restoreBackup(w http.ResponseWriter, r *http.Request) error {
	bk, err := s.backups()
	if err != nil {
		return err
	}
	var req wire.RestoreBackupRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Sandbox == "" {
		return errdefs.Invalid(wire.CodeInvalidBackup, "sandbox is required: the id or name of the sandbox to restore into")
	}
	if _, err := bk.Get(r.Context(), r.PathValue("backup")); err != nil {
		return err // before starting the sandbox for nothing
	}
	a, _, err := s.sandboxes.Agent(r.Context(), req.Sandbox)
	if err != nil {
		return err
	}
	b, err := bk.Restore(r.Context(), a, r.PathValue("backup"), req.Path)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}
