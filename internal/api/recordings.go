package api

import "github.com/sbxhq/sbx/sdk"

// Screen recordings are the agent's (internal/agent/desktop_recording.go),
// proxied like every toolbox route.

// recordingCodes are the codes of the agent's /desktop/recordings routes.
func recordingCodes(agentPath string) []sdk.Code {
	switch agentPath {
	case "/desktop/recordings":
		return []sdk.Code{sdk.CodeDesktopNotRunning, sdk.CodeDesktopUnavailable, sdk.CodeRecordingActive, sdk.CodeShuttingDown, sdk.CodeCommandNotFound}
	case "/desktop/recordings/{recording}/stop":
		return []sdk.Code{sdk.CodeRecordingNotFound, sdk.CodeRecordingNotActive}
	case "/desktop/recordings/{recording}/file":
		return []sdk.Code{sdk.CodeRecordingNotFound, sdk.CodeRecordingActive, sdk.CodeFileNotFound}
	}
	return []sdk.Code{sdk.CodeRecordingNotFound}
}
