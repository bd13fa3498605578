package api

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

func (s *Server) listImages(w http.ResponseWriter, r *http.Request) {
	list, err := s.images.List(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]sdk.Image, 0, len(list))
	for _, img := range list {
		out = append(out, imageToAPI(img))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getImage(w http.ResponseWriter, r *http.Request) {
	img, err := s.images.Get(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, imageToAPI(img))
}

func (s *Server) importImage(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		writeError(w, r, errdefs.Invalid(sdk.CodeInvalidImageName, "missing query parameter name: POST /v1/images/import?name=NAME"))
		return
	}
	img, err := s.images.Import(r.Context(), name, r.Body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, imageToAPI(img))
}

func (s *Server) pullImage(w http.ResponseWriter, r *http.Request) {
	var req sdk.PullRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if req.Ref == "" {
		writeError(w, r, errdefs.Invalid(sdk.CodeInvalidImageRef, "ref is required, e.g. {\"ref\": \"registry.example:5000/app:1\"}"))
		return
	}
	name := req.Name
	if name == "" {
		name = req.Ref
	}
	img, err := s.images.Pull(r.Context(), req.Ref, name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, imageToAPI(img))
}

func (s *Server) deleteImage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	user, err := s.sandboxes.UsesImage(r.Context(), name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if user != nil {
		writeError(w, r, errdefs.Conflict(sdk.CodeImageInUse, "image %q is used by sandbox %s; delete that sandbox first", name, user.ID))
		return
	}
	inUse := func(layers []string) bool {
		used, err := s.sandboxes.UsesLayers(r.Context(), layers)
		return err != nil || used // when unsure, keep the layers
	}
	if err := s.images.Remove(r.Context(), name, inUse); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func imageToAPI(img *store.Image) sdk.Image {
	return sdk.Image{Name: img.Name, ID: img.ID, Layers: len(img.Layers), SizeBytes: img.SizeBytes, Source: img.Source, CreatedAt: img.CreatedAt}
}
