package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestDaytonaSDKCompat runs testdata/daytona/compat.mjs: methods of
// Daytona's SDK that must work as on Daytona or refuse with an error naming
// what sbx does not do. Each case prints its own ok or FAIL line.
func TestDaytonaSDKCompat(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t)
	importPython(t, d)
	out := runDaytonaProgram(t, d, "compat.mjs")
	if !strings.Contains(out, "\ndone\n") {
		t.Errorf("compat.mjs:\n%s", out)
	}
}

// A Daytona session command lives in the sandbox's agent, not in the
// daemon: after a daemon restart it is still there, takes its input, and
// its output and exit code are kept.
func TestDaytonaSessionSurvivesRestart(t *testing.T) {
	d := startDaemon(t)
	sb := d.create(sdk.CreateSandboxRequest{Name: "keep"})
	tb := d.baseURL() + "/daytona/toolbox/" + sb.ID + "/process/session"
	call := func(method, url, body string, want int) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+d.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.httpClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, raw, want)
		}
		var m map[string]any
		json.Unmarshal(raw, &m)
		return m
	}
	call("POST", tb, `{"sessionId":"s"}`, http.StatusCreated)
	started := call("POST", tb+"/s/exec", `{"command":"read x; echo \"got $x\"","runAsync":true,"suppressInputEcho":true}`, http.StatusAccepted)
	id, _ := started["cmdId"].(string)
	if id == "" {
		t.Fatalf("no cmdId in %v", started)
	}

	d.stop()
	d.start()

	call("POST", tb+"/s/command/"+id+"/input", `{"data":"hi\n"}`, http.StatusOK)
	var cmd map[string]any
	for range 200 {
		if cmd = call("GET", tb+"/s/command/"+id, "", http.StatusOK); cmd["exitCode"] != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if cmd["exitCode"] != float64(0) {
		t.Fatalf("the command after the restart: %v, want exit code 0", cmd)
	}
	if logs := call("GET", tb+"/s/command/"+id+"/logs", "", http.StatusOK); logs["stdout"] != "got hi\n" {
		t.Errorf("logs after the restart: %v, want stdout %q", logs, "got hi\n")
	}
	if s := call("GET", tb+"/s", "", http.StatusOK); len(s["commands"].([]any)) != 1 {
		t.Errorf("session after the restart: %v, want its one command", s)
	}
}

// Daytona's computerUse runs on sbx's desktop (the desktop image).
func TestDaytonaSDKComputerUse(t *testing.T) {
	needDaytonaSDK(t)
	d := startDaemon(t)
	importDesktop(t, d)
	if out := runDaytonaProgram(t, d, "computeruse.mjs"); !strings.Contains(out, "done\n") {
		t.Errorf("computeruse.mjs:\n%s", out)
	}
}
