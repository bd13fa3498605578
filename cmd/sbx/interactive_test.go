package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

func TestExecFlagConflicts(t *testing.T) {
	for _, args := range [][]string{
		{"exec", "-t", "-d", "box", "--", "true"},
		{"exec", "--id", "x", "box", "--", "true"},
		{"exec", "-i", "-d", "box", "--", "true"},
		{"exec", "-t", "--timeout", "3", "box", "--", "true"},
	} {
		if r := runCLI(t, "", args...); r.code != 125 || !strings.Contains(r.stderr, "--help") {
			t.Errorf("%q: %+v, want a usage error (exit 125, as docker exec)", args, r)
		}
	}
}

func TestExecDetachedAndPs(t *testing.T) {
	mux := http.NewServeMux()
	var got sdk.StartProcessRequest
	mux.HandleFunc("POST /v1/sandboxes/box/processes", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(sdk.Process{ID: got.ID, State: sdk.ProcessRunning})
	})
	code := 143
	mux.HandleFunc("GET /v1/sandboxes/box/processes", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode([]sdk.Process{
			{ID: "web", Pid: 7, State: sdk.ProcessRunning, Cmd: []string{"httpd", "-f"}, StartedAt: time.Now()},
			{ID: "job", Pid: 9, State: sdk.ProcessExited, ExitCode: &code, Signal: "SIGTERM", Cmd: []string{"/bin/sh", "-c", "make"}, StartedAt: time.Now()},
		})
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "exec", "-d", "--id", "web", "--env", "A=1", "-u", "www", "box", "--", "httpd", "-f")
	if r.code != 0 || r.stdout != "web\n" || got.ID != "web" || got.Env["A"] != "1" || got.User != "www" || strings.Join(got.Cmd, " ") != "httpd -f" {
		t.Fatalf("exec -d: %+v, request %+v", r, got)
	}
	r = runCLI(t, "", "ps", "box")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "httpd -f") || !strings.Contains(lines[2], "143 (SIGTERM)") || !strings.Contains(lines[2], " make") {
		t.Fatalf("ps: %+v", r)
	}
}
