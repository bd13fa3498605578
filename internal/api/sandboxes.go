package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (s *Server) createSandbox(w http.ResponseWriter, r *http.Request) {
	var req sdk.CreateSandboxRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	sb, err := s.sandboxes.Create(r.Context(), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toAPI(sb))
}

func (s *Server) ensureSandbox(w http.ResponseWriter, r *http.Request) {
	var req sdk.CreateSandboxRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	sb, created, err := s.sandboxes.Ensure(r.Context(), r.PathValue("id"), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toAPI(sb))
}

func (s *Server) listSandboxes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.Filter{State: q.Get("state")}
	for _, l := range q["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			writeError(w, r, errdefs.Invalid(sdk.CodeInvalidLabel, "label filter %q must look like key=value", l))
			return
		}
		if f.Labels == nil {
			f.Labels = map[string]string{}
		}
		f.Labels[k] = v
	}
	list, err := s.sandboxes.List(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]sdk.Sandbox, 0, len(list))
	for _, sb := range list {
		out = append(out, toAPI(sb))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getSandbox(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
}

func (s *Server) deleteSandbox(w http.ResponseWriter, r *http.Request) {
	wait, err := httpjson.BoolParam(r, "wait")
	if err != nil {
		writeError(w, r, err)
		return
	}
	cascade, err := httpjson.BoolParam(r, "cascade")
	if err != nil {
		writeError(w, r, err)
		return
	}
	del := s.sandboxes.Delete
	if cascade {
		del = s.sandboxes.DeleteCascade // with its forks (lineage.go)
	}
	sb, err := del(r.Context(), r.PathValue("id"), wait)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if wait {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusAccepted, toAPI(sb))
}

func (s *Server) startSandbox(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandboxes.Start(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
}

func (s *Server) stopSandbox(w http.ResponseWriter, r *http.Request) {
	force, err := httpjson.BoolParam(r, "force")
	if err != nil {
		writeError(w, r, err)
		return
	}
	opt := sandbox.StopOptions{Force: force}
	if g := r.URL.Query().Get("graceSeconds"); g != "" {
		n, err := strconv.Atoi(g)
		if err != nil || n < 0 || n > 3600 {
			writeError(w, r, errdefs.Invalid(sdk.CodeInvalidGrace, "graceSeconds must be a whole number from 0 to 3600, got %q", g))
			return
		}
		opt.Grace = time.Duration(n) * time.Second
		opt.Force = opt.Force || n == 0
	}
	sb, err := s.sandboxes.Stop(r.Context(), r.PathValue("id"), opt)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
}

// toAPI turns a stored record into its wire form.
func toAPI(sb *store.Sandbox) sdk.Sandbox {
	out := sdk.Sandbox{
		ID: sb.ID, Name: sb.Name, State: sdk.State(sb.State), Reason: sb.Reason, Error: sb.Error,
		Image: sb.Spec.Image, Env: sb.Spec.Env, Labels: sb.Spec.Labels,
		CPU: sb.Spec.CPU, MemoryMiB: sb.Spec.MemoryMiB, PidsLimit: sb.Spec.PidsLimit, Workdir: sb.Spec.Workdir,
		DiskMiB: sb.Spec.DiskMiB, CreatedAt: sb.CreatedAt,
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	lifecycleToAPI(sb, &out)
	out.Class, out.Parent, out.Snapshot = classOf(sb.Spec), sb.Spec.Parent, sb.Spec.Snapshot // snapshots.go
	out.Network, out.Egress = networkOf(sb.Spec)                                             // see ports.go
	if !sb.StartedAt.IsZero() {
		t := sb.StartedAt
		out.StartedAt = &t
	}
	if !sb.StoppedAt.IsZero() {
		t := sb.StoppedAt
		out.StoppedAt = &t
	}
	return out
}
