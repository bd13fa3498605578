package api

import (
	"context"
	"io"
	"net/http"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Images is the image store the API serves.
type Images interface {
	List(ctx context.Context) ([]*store.Image, error)
	Get(ctx context.Context, name string) (*store.Image, error)
	Import(ctx context.Context, name string, r io.Reader) (*store.Image, error)
	Pull(ctx context.Context, ref, name string) (*store.Image, error)
	Remove(ctx context.Context, name string, inUse func(layers []string) bool) error
}

// imageUsers tells whether sandboxes still use an image or its layers.
type imageUsers interface {
	UsesImage(ctx context.Context, team, name string) (*store.Sandbox, error)
	UsesLayers(ctx context.Context, layers []string) (bool, error)
}

func (s *Server) listImages(w http.ResponseWriter, r *http.Request) error {
	list, err := s.images.List(r.Context())
	if err != nil {
		return err
	}
	out := make([]wire.Image, 0, len(list))
	for _, img := range list {
		out = append(out, imageToAPI(img))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getImage(w http.ResponseWriter, r *http.Request) error {
	img, err := s.images.Get(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, imageToAPI(img))
	return nil
}

func (s *Server) importImage(w http.ResponseWriter, r *http.Request) error {
	name := r.URL.Query().Get("name")
	if name == "" {
		return errdefs.Invalid(wire.CodeInvalidImageName, "missing query parameter name: POST /v1/images/import?name=NAME")
	}
	img, err := s.images.Import(r.Context(), name, r.Body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, imageToAPI(img))
	return nil
}

func (s *Server) pullImage(w http.ResponseWriter, r *http.Request) error {
	var req wire.PullRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Ref == "" {
		return errdefs.Invalid(wire.CodeInvalidImageRef, "ref is required, e.g. {\"ref\": \"registry.example:5000/app:1\"}")
	}
	name := req.Name
	if name == "" {
		name = req.Ref
	}
	img, err := s.images.Pull(r.Context(), req.Ref, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, imageToAPI(img))
	return nil
}

func (s *Server) deleteImage(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	// Only the owner deletes an image: another team's shared base image
	// (team default's) is not found to it before any use is looked at.
	img, err := s.images.Get(r.Context(), name)
	if err != nil {
		return err
	}
	if !auth.Sees(r.Context(), img.Team) {
		return errdefs.NotFound(wire.CodeImageNotFound, "image %q not found", name)
	}
	user, err := s.sandboxes.UsesImage(r.Context(), img.Team, name)
	if err != nil {
		return err
	}
	switch {
	case user != nil && auth.Sees(r.Context(), user.Team):
		return errdefs.Conflict(wire.CodeImageInUse, "image %q is used by sandbox %s; delete that sandbox first", name, user.ID)
	case user != nil:
		// Another team's sandbox: say so without naming it.
		return errdefs.Conflict(wire.CodeImageInUse, "image %q is in use by sandboxes of other teams (it is a shared base image); it cannot be deleted while they use it", name)
	}
	inUse := func(layers []string) bool {
		used, err := s.sandboxes.UsesLayers(r.Context(), layers)
		return err != nil || used // when unsure, keep the layers
	}
	if err := s.images.Remove(r.Context(), name, inUse); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func imageToAPI(img *store.Image) wire.Image {
	out := wire.Image{Name: img.Name, ID: img.ID, Layers: len(img.Layers), SizeBytes: img.SizeBytes, Source: img.Source, CreatedAt: img.CreatedAt, Team: img.Team}
	if c := img.Config; len(c.Env)+len(c.Entrypoint)+len(c.Cmd)+len(c.Labels) > 0 || c.WorkingDir != "" || c.User != "" {
		out.Config = &wire.ImageConfig{Env: c.Env, Entrypoint: c.Entrypoint, Cmd: c.Cmd, WorkingDir: c.WorkingDir, User: c.User, Labels: c.Labels}
	}
	return out
}
