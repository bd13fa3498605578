package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/wire"
)

var metav1PatchOptions = metav1.PatchOptions{FieldManager: "sbx-gateway"}

// create makes the Sandbox object and answers once the sandbox runs, as a
// create on one host does.
func (s *Server) create(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateSandboxRequest
	if err := httpjson.Decode(w, r, &req); err != nil {
		return err
	}
	sb, err := s.createAndWait(r.Context(), req)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, sb)
	return nil
}

// ensure is PUT /v1/sandboxes/{name}: the sandbox with this name, made if
// missing.
func (s *Server) ensure(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateSandboxRequest
	if err := httpjson.Decode(w, r, &req); err != nil {
		return err
	}
	name := r.PathValue("id")
	if req.Name != "" && req.Name != name {
		return errdefs.Invalid(wire.CodeNameMismatch, "the body names sandbox %q but the path names %q; leave name out of the body", req.Name, name)
	}
	if e, err := s.cluster.find(r.Context(), name); err == nil {
		httpjson.Write(w, http.StatusOK, s.view(r.Context(), e))
		return nil
	}
	req.Name = name
	sb, err := s.createAndWait(r.Context(), req)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, sb)
	return nil
}

func (s *Server) createAndWait(ctx context.Context, req wire.CreateSandboxRequest) (wire.Sandbox, error) {
	if err := validateForCluster(&req); err != nil {
		return wire.Sandbox{}, err
	}
	team := auth.TeamOf(ctx)
	if req.Name != "" {
		all, err := s.cluster.list(auth.WithPrincipal(ctx, auth.Principal{Team: team}))
		if err != nil {
			return wire.Sandbox{}, err
		}
		for _, e := range all {
			if e.name == req.Name {
				return wire.Sandbox{}, errdefs.Conflict(wire.CodeNameTaken, "a sandbox named %q already exists; pick another name or use PUT /v1/sandboxes/{name} to get it", req.Name)
			}
		}
	}
	obj := podspec.SandboxFor(sandbox.NewID(), req, team)
	obj.Namespace = s.cluster.Namespace
	made, err := s.createWithinQuota(ctx, obj, team) // quota.go
	var refused *errdefs.Error
	if errors.As(err, &refused) {
		return wire.Sandbox{}, err
	}
	if apierrors.IsAlreadyExists(err) {
		return wire.Sandbox{}, errdefs.Conflict(wire.CodeIDTaken, "a sandbox with id %q already exists", obj.Name)
	}
	if err != nil {
		return wire.Sandbox{}, kubeError(err, entryOf(obj))
	}
	e := entryOf(made)
	if _, err := s.waitReady(ctx, e, false); err != nil {
		return wire.Sandbox{}, err
	}
	return s.view(ctx, e), nil
}

// validateForCluster checks req as a host would, and refuses what a
// cluster cannot honour: a name Kubernetes cannot carry as a label, and
// host-local objects (snapshots, volumes) a pod could land far from.
func validateForCluster(req *wire.CreateSandboxRequest) error {
	if err := sandbox.ValidateCreate(req); err != nil {
		return err
	}
	switch {
	case req.Name != "" && !podspec.ValidLabelValue(req.Name):
		return errdefs.Invalid(wire.CodeInvalidName, "invalid sandbox name %q in cluster mode: it must also be a Kubernetes label value (end with a letter or digit)", req.Name)
	case req.Snapshot != "":
		return errdefs.Invalid(wire.CodeInvalidSnapshot, "snapshots are kept by each sbx host; a sandbox created through the cluster gateway starts from an image")
	case len(req.Volumes) > 0:
		return errdefs.Invalid(wire.CodeInvalidVolume, "volumes are kept by each sbx host; a sandbox created through the cluster gateway cannot mount one (use buckets)")
	}
	return nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) error {
	e, err := s.cluster.find(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, s.view(r.Context(), e))
	return nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	state := q.Get("state")
	want := map[string]string{}
	for _, l := range q["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return errdefs.Invalid(wire.CodeInvalidLabel, "label filter %q must look like key=value", l)
		}
		want[k] = v
	}
	all, err := s.cluster.list(r.Context())
	if err != nil {
		return err
	}
	out := []wire.Sandbox{}
	for _, sb := range s.views(r.Context(), all) {
		if state != "" && string(sb.State) != state {
			continue
		}
		if hasLabels(sb.Labels, want) {
			out = append(out, sb)
		}
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// stop suspends the Sandbox: agent-sandbox deletes its pod and the host
// stops the sandbox and archives it to the shared blob store. It answers
// once the pod is gone, as a stop on one host answers once stopped.
func (s *Server) stop(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpjson.BoolParam(r, "force"); err != nil {
		return err
	}
	if g := r.URL.Query().Get("graceSeconds"); g != "" {
		if n, err := strconv.Atoi(g); err != nil || n < 0 || n > 3600 {
			return errdefs.Invalid(wire.CodeInvalidGrace, "graceSeconds must be a whole number from 0 to 3600, got %q", g)
		}
	}
	e, err := s.cluster.find(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.suspend(w, r, e)
}

// suspend sets e's operatingMode Suspended (agent-sandbox deletes the pod,
// its host archives the sandbox) and answers once the pod is gone.
func (s *Server) suspend(w http.ResponseWriter, r *http.Request, e entry) error {
	var err error
	if e.obj.Spec.OperatingMode != asv1.SandboxOperatingModeSuspended {
		if e, err = s.setMode(r.Context(), e, asv1.SandboxOperatingModeSuspended); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ReadyTimeout)
	defer cancel()
	err = s.cluster.waitFor(ctx, func() (bool, error) { return s.cluster.placementOf(e).pod == nil, nil })
	if err != nil {
		return errdefs.Unavailable(wire.CodeSandboxUnavailable, "sandbox %s is asked to stop but its pod is not gone yet: %v", e.ref(), err)
	}
	httpjson.Write(w, http.StatusOK, s.view(r.Context(), e))
	return nil
}

func (s *Server) start(w http.ResponseWriter, r *http.Request) error {
	e, err := s.cluster.find(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if e.obj.DeletionTimestamp != nil {
		return errdefs.Conflict(wire.CodeInvalidState, "sandbox %s is being deleted", e.ref())
	}
	if p := s.cluster.placementOf(e); p.onHost && !p.ready {
		s.forward(w, r, p.api, hostPath(r, e.id), false) // stopped on its host: the host starts it
		return nil
	}
	if _, err := s.run(r.Context(), e); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, s.view(r.Context(), e))
	return nil
}

// delete deletes the Sandbox; its pod goes with it (owner reference) and
// the host deletes the sandbox and its archive.
func (s *Server) delete(w http.ResponseWriter, r *http.Request) error {
	wait, err := httpjson.BoolParam(r, "wait")
	if err != nil {
		return err
	}
	if _, err := httpjson.BoolParam(r, "cascade"); err != nil {
		return err
	}
	e, err := s.cluster.find(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	sb := s.view(r.Context(), e)
	policy := metav1.DeletePropagationBackground
	err = s.cluster.Agents.AgentsV1beta1().Sandboxes(e.obj.Namespace).Delete(r.Context(), e.obj.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil && !apierrors.IsNotFound(err) {
		return kubeError(err, e)
	}
	if !wait {
		sb.State = wire.StateDeleting
		httpjson.Write(w, http.StatusAccepted, sb)
		return nil
	}
	err = s.cluster.waitFor(r.Context(), func() (bool, error) {
		_, gone, err := s.cluster.refresh(e)
		return gone && s.cluster.placementOf(e).pod == nil, err
	})
	if err != nil {
		return errdefs.Unavailable(wire.CodeCancelled, "sandbox %s is being deleted: %v", e.ref(), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// kubeError is an error of the Kubernetes API in the sbx API's terms.
func kubeError(err error, e entry) error {
	switch {
	case apierrors.IsNotFound(err):
		return errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", e.ref())
	case apierrors.IsConflict(err):
		return errdefs.Conflict(wire.CodeSandboxBusy, "sandbox %s changed meanwhile; retry", e.ref())
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return errdefs.Invalid(wire.CodeInvalidSandbox, "the cluster refused sandbox %s: %v", e.ref(), err)
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return errdefs.Internal(err, "the gateway's Kubernetes credentials may not change sandbox %s", e.ref())
	}
	return errdefs.Unavailable(wire.CodeSandboxUnavailable, "the Kubernetes API did not take the change to sandbox %s: %v", e.ref(), err)
}
