package gateway

import (
	"net/http"

	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/errdefs"
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
