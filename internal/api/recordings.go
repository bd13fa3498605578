package api

import "github.com/sbxhq/sbx/wire"

// Screen recordings are the agent's (internal/agent/desktop_recording.go),
// proxied like every toolbox route.

// recordingCodes are the codes of the agent's /desktop/recordings routes.
func recordingCodes(agentPath string) []wire.Code {
	switch agentPath {
	case "/desktop/recordings":
		return []wire.Code{wire.CodeDesktopNotRunning, wire.CodeDesktopUnavailable, wire.CodeRecordingActive, wire.CodeShuttingDown, wire.CodeCommandNotFound}
	case "/desktop/recordings/{recording}/stop":
		return []wire.Code{wire.CodeRecordingNotFound, wire.CodeRecordingNotActive}
	case "/desktop/recordings/{recording}/file":
		return []wire.Code{wire.CodeRecordingNotFound, wire.CodeRecordingActive, wire.CodeFileNotFound}
	}
	return []wire.Code{wire.CodeRecordingNotFound}
}
