package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// sandboxLifecycle is what the sandbox handlers need of the Manager.
type sandboxLifecycle interface {
	Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error)
	Ensure(ctx context.Context, name string, req wire.CreateSandboxRequest) (sb *store.Sandbox, created bool, err error)
	List(ctx context.Context, f store.Filter) ([]*store.Sandbox, error)
	Get(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Delete(ctx context.Context, idOrName string, wait bool) (*store.Sandbox, error)
	DeleteCascade(ctx context.Context, idOrName string, wait bool) (*store.Sandbox, error)
	Start(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Stop(ctx context.Context, idOrName string, opt sandbox.StopOptions) (*store.Sandbox, error)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func (s *Server) createSandbox(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateSandboxRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := s.checkCreateSecrets(r.Context(), req.Egress); err != nil { // secret.go
		return err
	}
	sb, err := s.sandboxes.Create(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toAPI(sb))
	return nil
}

func (s *Server) ensureSandbox(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateSandboxRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := s.checkCreateSecrets(r.Context(), req.Egress); err != nil { // secret.go
		return err
	}
	sb, created, err := s.sandboxes.Ensure(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toAPI(sb))
	return nil
}

func (s *Server) listSandboxes(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := store.Filter{State: q.Get("state")}
	for _, l := range q["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return errdefs.Invalid(wire.CodeInvalidLabel, "label filter %q must look like key=value", l)
		}
		if f.Labels == nil {
			f.Labels = map[string]string{}
		}
		f.Labels[k] = v
	}
	list, err := s.sandboxes.List(r.Context(), f)
	if err != nil {
		return err
	}
	out := make([]wire.Sandbox, 0, len(list))
	for _, sb := range list {
		out = append(out, toAPI(sb))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

func (s *Server) deleteSandbox(w http.ResponseWriter, r *http.Request) error {
	wait, err := httpjson.BoolParam(r, "wait")
	if err != nil {
		return err
	}
	cascade, err := httpjson.BoolParam(r, "cascade")
	if err != nil {
		return err
	}
	del := s.sandboxes.Delete
	if cascade {
		del = s.sandboxes.DeleteCascade // with its forks (lineage.go)
	}
	sb, err := del(r.Context(), r.PathValue("id"), wait)
	if err != nil {
		return err
	}
	if wait {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	writeJSON(w, http.StatusAccepted, toAPI(sb))
	return nil
}

func (s *Server) startSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Start(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

func (s *Server) stopSandbox(w http.ResponseWriter, r *http.Request) error {
	force, err := httpjson.BoolParam(r, "force")
	if err != nil {
		return err
	}
	opt := sandbox.StopOptions{Force: force}
	if g := r.URL.Query().Get("graceSeconds"); g != "" {
		n, err := strconv.Atoi(g)
		if err != nil || n < 0 || n > 3600 {
			return errdefs.Invalid(wire.CodeInvalidGrace, "graceSeconds must be a whole number from 0 to 3600, got %q", g)
		}
		opt.Grace = time.Duration(n) * time.Second
		opt.Force = opt.Force || n == 0
	}
	sb, err := s.sandboxes.Stop(r.Context(), r.PathValue("id"), opt)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

// toAPI turns a stored record into its wire form.
func toAPI(sb *store.Sandbox) wire.Sandbox {
	out := wire.Sandbox{
		ID: sb.ID, Name: sb.Name, Team: sb.Team, State: wire.State(sb.State), Reason: sb.Reason, Error: sb.Error,
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
	out.Volumes = sb.Spec.Volumes
	out.Recovery = sb.Spec.Recovery
	for _, b := range sb.Spec.Buckets {
		b.AccessKeyID, b.SecretAccessKey = "", "" // write-only
		out.Buckets = append(out.Buckets, b)
	}
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
