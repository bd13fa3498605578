package gateway

import (
	"context"
	"net/http"

	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// pause is POST /v1/sandboxes/{id}/pause in a cluster: a suspend through
// the Sandbox object, as a host's idle pause is (docs/kubernetes/lifecycle.md).
// Pausing on the host would leave its pod bound there, Running but not
// Ready, behind Kubernetes' back; and the saved memory is local to that
// host while the next pod may land on another. The answer is the sandbox
// stopped, its files archived.
func (s *Server) pause(w http.ResponseWriter, r *http.Request) error {
	e, err := s.cluster.find(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	switch {
	case e.obj.DeletionTimestamp != nil:
		return errdefs.Conflict(wire.CodeInvalidState, "sandbox %s is being deleted", e.ref())
	case e.obj.Spec.OperatingMode == asv1.SandboxOperatingModeSuspended:
		return errdefs.Conflict(wire.CodeSandboxNotStarted, "sandbox %s is stopped: there is nothing to pause", e.ref())
	}
	return s.suspend(w, r, e)
}

// resume is POST /v1/sandboxes/{id}/resume: a suspended sandbox (paused or
// stopped through the gateway, or idle) runs again, placed by
// kube-scheduler and restored from its archive; one paused on its host
// (its pod still bound there) is the host's to resume.
func (s *Server) resume(proxy handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		e, err := s.cluster.find(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		if e.obj.Spec.OperatingMode != asv1.SandboxOperatingModeSuspended {
			return proxy(w, r)
		}
		return s.start(w, r)
	}
}

// archive is POST /v1/sandboxes/{id}/archive (archiveEntry).
func (s *Server) archive(w http.ResponseWriter, r *http.Request) error {
	e, err := s.cluster.find(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	sb, err := s.archiveEntry(r.Context(), e)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, sb)
	return nil
}

// archiveEntry archives a stopped sandbox's files into the blob store, as
// on one host, through its object: one suspended through it is there
// already (its host archived it as its pod went); one stopped, paused or
// archived on its host is suspended, which has the host hand it off into
// the blob store. A sandbox that runs or starts is refused as on one host.
func (s *Server) archiveEntry(ctx context.Context, e entry) (wire.Sandbox, error) {
	if e.obj.DeletionTimestamp != nil {
		return wire.Sandbox{}, errdefs.Conflict(wire.CodeInvalidState, "sandbox %s is being deleted", e.ref())
	}
	sb := s.view(ctx, e)
	switch {
	case e.obj.Spec.OperatingMode == asv1.SandboxOperatingModeSuspended && sb.State == wire.StateStopped:
		return sb, nil
	case sb.State == wire.StateStopped, sb.State == wire.StatePaused, sb.State == wire.StateArchived:
		return s.suspendEntry(ctx, e)
	}
	return wire.Sandbox{}, errdefs.Conflict(wire.CodeSandboxNotStopped, "sandbox %s is %s: stop it first (\"sbx stop %s\"); a stopped sandbox's files are in the blob store", e.ref(), sb.State, e.ref())
}
