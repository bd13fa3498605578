package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// lastLine returns the last NDJSON object of a stream, decoded loosely, the
// way a JavaScript or Python client sees it.
func lastLine(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s %v", resp.StatusCode, body, err)
	}
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("%q: %v", body, err)
	}
	return m
}

// TestExitEventsCarryZeroExitCode: the final event of a streamed exec and
// of process logs says exitCode 0 rather than leaving it out (issue 13.14).
func TestExitEventsCarryZeroExitCode(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	exit := lastLine(t, a.do("POST", "/exec?stream=true", wire.ExecRequest{Cmd: []string{"true"}}))
	if exit["type"] != "exit" || exit["exitCode"] != 0.0 || exit["timedOut"] != false || exit["durationMs"] == nil {
		t.Fatalf("exec exit event: %v", exit)
	}
	a.startProc(wire.StartProcessRequest{ID: "ok", Cmd: []string{"true"}})
	a.waitProc("ok")
	exit = lastLine(t, a.do("GET", "/processes/ok/logs", nil))
	if exit["type"] != "exit" || exit["exitCode"] != 0.0 || exit["timedOut"] != false {
		t.Fatalf("process logs exit event: %v", exit)
	}
}
