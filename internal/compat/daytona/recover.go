package daytona

import (
	"net/http"

	"github.com/sbxhq/sbx/wire"
)

// recoverSandbox serves POST /sandbox/{id}/recover: Daytona's way out of
// an error state. On sbx a sandbox in state error has no instance and may
// be started again (the start row of internal/sandbox/transitions.go), so
// recover is that start; in any other state there is nothing to recover
// from and the call is refused, as on Daytona.
func (h *Handler) recoverSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if sb.State != wire.StateError {
		return invalid(wire.CodeInvalidParameter, "sandbox.recover: sandbox %s is %s, not in state error; only a sandbox in error can be recovered", r.PathValue("id"), stateOf(sb.State))
	}
	sb, err = h.cfg.Sandboxes.EnsureRunning(r.Context(), sb.ID)
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}
