package api

import (
	"context"
	"net/http"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Pools keeps warm pools (the Manager's, internal/sandbox/pool.go). Every
// call is scoped to the caller's team.
type Pools interface {
	CreatePool(ctx context.Context, req wire.CreatePoolRequest) (*wire.Pool, error)
	GetPool(ctx context.Context, name string) (*wire.Pool, error)
	ListPools(ctx context.Context) ([]wire.Pool, error)
	UpdatePool(ctx context.Context, name string, req wire.UpdatePoolRequest) (*wire.Pool, error)
	DeletePool(ctx context.Context, name string) error
}

// SetPools turns on the pool routes.
func (s *Server) SetPools(p Pools) { s.pools = p }

func (s *Server) poolsOrErr() (Pools, error) {
	if s.pools == nil {
		return nil, errdefs.Unavailable(wire.CodeInvalidPool, "this daemon has no warm pools")
	}
	return s.pools, nil
}

func (s *Server) createPool(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.poolsOrErr()
	if err != nil {
		return err
	}
	var req wire.CreatePoolRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := s.checkCreateSecrets(r.Context(), req.Template.Egress); err != nil { // secret.go
		return err
	}
	p, err := ps.CreatePool(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, p)
	return nil
}

func (s *Server) listPools(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.poolsOrErr()
	if err != nil {
		return err
	}
	list, err := ps.ListPools(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

func (s *Server) getPool(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.poolsOrErr()
	if err != nil {
		return err
	}
	p, err := ps.GetPool(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) updatePool(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.poolsOrErr()
	if err != nil {
		return err
	}
	var req wire.UpdatePoolRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	p, err := ps.UpdatePool(r.Context(), r.PathValue("name"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) deletePool(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.poolsOrErr()
	if err != nil {
		return err
	}
	if err := ps.DeletePool(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
