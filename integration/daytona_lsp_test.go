package integration

import (
	"strings"
	"testing"
)

// TestDaytonaSDKLsp runs testdata/daytona/lsp.mjs: Daytona's LspServer
// methods on the agent's language servers (internal/agent/lsp), pylsp in
// sbx's python image.
func TestDaytonaSDKLsp(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t)
	importPython(t, d)
	out := runDaytonaProgram(t, d, "lsp.mjs")
	for _, c := range []string{"python is python3", "start", "didOpen", "documentSymbols", "completions",
		"workspaceSymbols and sandboxSymbols", "didClose", "a file outside the project", "a file outside the project by ..",
		"the SDK checks the language", "a bogus language id", "typescript without its server", "a stopped server", "stop"} {
		if !strings.Contains(out, "ok "+c+"\n") {
			t.Errorf("case %q did not pass:\n%s", c, out)
		}
	}
	if !strings.Contains(out, "\ndone\n") {
		t.Errorf("lsp.mjs:\n%s", out)
	}
}

// TestDaytonaSDKRecording runs testdata/daytona/recording.mjs: Daytona's
// computerUse.recording on the agent's screen recordings (ffmpeg in sbx's
// desktop image).
func TestDaytonaSDKRecording(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t)
	importDesktop(t, d)
	out := runDaytonaProgram(t, d, "recording.mjs")
	for _, c := range []string{"recording without a desktop", "recording stop without start", "a recording id that is a path",
		"start", "download while recording", "stop", "stop a stopped recording", "get", "list", "the recording is a video",
		"download", "a deleted recording", "delete", "delete a running recording"} {
		if !strings.Contains(out, "ok "+c+"\n") {
			t.Errorf("case %q did not pass:\n%s", c, out)
		}
	}
	if !strings.Contains(out, "\ndone\n") {
		t.Errorf("recording.mjs:\n%s", out)
	}
}
