package daytona

import (
	"net/http"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// computerUse restartProcess, getProcessLogs and getProcessErrors on one
// program of sbx's desktop (internal/agent/desktop_programs.go). The
// programs are sbx's: xvfb, wm, panel, vnc, novnc (getProcessStatus lists
// them); their output is since they last started.

func (h *Handler) computerUseRestart(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	st, err := agentapi.Call[wire.DesktopProgram](r.Context(), c, agentapi.DesktopProgramRestart, at(name), nil)
	if err != nil {
		return err
	}
	msg := "Process " + name + " restarted"
	if !st.Running {
		msg = "Process " + name + " was stopped and is not running again yet"
	}
	writeJSON(w, http.StatusOK, map[string]any{"processName": name, "message": msg})
	return nil
}

// computerUseLogs serves …/logs (stdout) or, with errors, …/errors (stderr).
func (h *Handler) computerUseLogs(errors bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, _, err := h.agentFor(r)
		if err != nil {
			return err
		}
		name := r.PathValue("name")
		logs, err := agentapi.Call[wire.DesktopProgramLogs](r.Context(), c, agentapi.DesktopProgramLogs, at(name), nil)
		if err != nil {
			return err
		}
		if errors {
			writeJSON(w, http.StatusOK, map[string]any{"processName": name, "errors": logs.Stderr})
		} else {
			writeJSON(w, http.StatusOK, map[string]any{"processName": name, "logs": logs.Stdout})
		}
		return nil
	}
}
