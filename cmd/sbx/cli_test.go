package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// fakeDaemon serves mux with the daemon's token check and points the CLI at it.
func fakeDaemon(t *testing.T, mux *http.ServeMux) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			replyErr(w, http.StatusUnauthorized, "UNAUTHORIZED", "missing or wrong API key")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("SBX_HOST", srv.URL)
	t.Setenv("SBX_TOKEN", "tok")
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func replyErr(w http.ResponseWriter, status int, code sdk.Code, msg string) {
	reply(w, status, sdk.ErrorResponse{Error: sdk.ErrorBody{Code: code, Message: msg}})
}

type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the CLI in-process with stdin as its input.
func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func TestAPIErrorIsPrintedWithCode(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		replyErr(w, http.StatusNotFound, "SANDBOX_NOT_FOUND", `sandbox "nope" not found`)
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "get", "nope")
	if r.code != 1 || r.stdout != "" || r.stderr != "sbx: sandbox \"nope\" not found (SANDBOX_NOT_FOUND)\n" {
		t.Errorf("got %+v", r)
	}
}

func TestWrongTokenHint(t *testing.T) {
	fakeDaemon(t, http.NewServeMux())
	r := runCLI(t, "", "ls", "--token", "wrong")
	if r.code != 1 || !strings.Contains(r.stderr, "(UNAUTHORIZED)") || !strings.Contains(r.stderr, "--token") {
		t.Errorf("got %+v", r)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"get"},
		{"get", "a", "b"},
		{"create", "--label", "novalue"},
		{"ls", "-o", "yaml"},
		{"stop", "box", "--grace", "-1"},
		{"cp", "a", "b"},
		{"nosuchcommand"},
	} {
		r := runCLI(t, "", args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "sbx: ") || !strings.Contains(r.stderr, "--help' for usage.") {
			t.Errorf("%q: got %+v", args, r)
		}
	}
}

func TestListTableAndJSON(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		if got := r.URL.Query()["label"]; len(got) != 1 || got[0] != "team=ml" {
			t.Errorf("labels %q", got)
		}
		reply(w, http.StatusOK, []sdk.Sandbox{{ID: "sbx-1", Name: "box", State: sdk.StateStarted, Image: "alpine", CPU: 1, MemoryMiB: 512}})
	})
	fakeDaemon(t, mux)

	r := runCLI(t, "", "ls", "--label", "team=ml")
	if r.code != 0 || !strings.Contains(r.stdout, "NAME") || !strings.Contains(r.stdout, "sbx-1") || !strings.Contains(r.stdout, "512 MiB") {
		t.Errorf("table: %+v", r)
	}
	r = runCLI(t, "", "ls", "--label", "team=ml", "-o", "json")
	var list []sdk.Sandbox
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0].Name != "box" {
		t.Errorf("json: %+v (%v)", r, err)
	}
}

func TestEmptyListIsJSONArray(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/images", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "null")
	})
	fakeDaemon(t, mux)
	if r := runCLI(t, "", "image", "ls", "-o", "json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("got %+v", r)
	}
}

func TestCreateSendsFlags(t *testing.T) {
	mux := http.NewServeMux()
	var got sdk.CreateSandboxRequest
	mux.HandleFunc("POST /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		reply(w, http.StatusCreated, sdk.Sandbox{ID: "sbx-9", Name: got.Name, State: sdk.StateStarted})
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "create", "box", "--image", "alpine", "--env", "A=1=2", "--env", "B=",
		"--label", "team=ml", "--cpu", "0.5", "--memory", "256", "--pids", "64", "--workdir", "/w")
	if r.code != 0 || !strings.Contains(r.stdout, "sbx-9") {
		t.Fatalf("got %+v", r)
	}
	want := sdk.CreateSandboxRequest{Name: "box", Image: "alpine", Env: map[string]string{"A": "1=2", "B": ""},
		Labels: map[string]string{"team": "ml"}, CPU: 0.5, MemoryMiB: 256, PidsLimit: 64, Workdir: "/w"}
	if !equalJSON(got, want) {
		t.Errorf("request %+v, want %+v", got, want)
	}
}

func TestRemoveReportsEachFailure(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("DELETE /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "missing" {
			replyErr(w, http.StatusNotFound, "SANDBOX_NOT_FOUND", "sandbox \"missing\" not found")
			return
		}
		if r.URL.Query().Get("wait") != "false" {
			t.Errorf("--no-wait not sent: %q", r.URL.RawQuery)
		}
		w.WriteHeader(http.StatusAccepted)
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "rm", "--no-wait", "a", "missing", "b")
	if r.code != 1 || r.stdout != "a\nb\n" || r.stderr != "sbx: missing: sandbox \"missing\" not found (SANDBOX_NOT_FOUND)\n" {
		t.Errorf("got %+v", r)
	}
}

func TestStopGrace(t *testing.T) {
	mux := http.NewServeMux()
	var query string
	mux.HandleFunc("POST /v1/sandboxes/{id}/stop", func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		reply(w, http.StatusOK, sdk.Sandbox{ID: "sbx-1", State: sdk.StateStopped})
	})
	fakeDaemon(t, mux)
	if r := runCLI(t, "", "stop", "box", "--grace", "0"); r.code != 0 || query != "graceSeconds=0" {
		t.Errorf("got %+v, query %q", r, query)
	}
	if r := runCLI(t, "", "stop", "box", "--force"); r.code != 0 || query != "force=true" {
		t.Errorf("got %+v, query %q", r, query)
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
