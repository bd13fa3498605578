package agentapi

import (
	"encoding/json"
	"fmt"
)

// A sandbox may have a main process (its entrypoint, e.g. a dev server)
// that the agent starts and supervises (internal/agent/mainproc.go). The
// daemon passes it in the agent's environment (MainEnv); its output goes to
// MainLogFile in the run directory, and how it ended to MainExitFile, which
// the daemon reads to record the stop with reason "main-exit".
const (
	MainEnv      = "SBX_MAIN"  // JSON of MainSpec
	MainLogFile  = "main.log"  // in the run directory; rotated to main.log.1
	MainExitFile = "main.exit" // JSON of MainExit
)

// MainSpec is the main process: a command and its restart policy.
type MainSpec struct {
	Cmd     []string `json:"cmd"`
	Restart string   `json:"restart"` // wire.RestartNever, RestartOnFailure, RestartAlways
}

// MainExit is how the main process ended, as the marker records it.
type MainExit struct {
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	Restarts int    `json:"restarts"`
}

// Describe says how the process ended, e.g. "exited with code 3".
func (e MainExit) Describe() string {
	s := fmt.Sprintf("exited with code %d", e.ExitCode)
	if e.Signal != "" {
		s = "was killed by " + e.Signal
	}
	if e.Restarts > 0 {
		s += fmt.Sprintf(" after %d restarts", e.Restarts)
	}
	return s
}

// MainEnvValue encodes spec for MainEnv.
func MainEnvValue(spec MainSpec) string {
	b, _ := json.Marshal(spec)
	return string(b)
}
