package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

func TestParseMiB(t *testing.T) {
	for in, want := range map[string]int{
		"512": 512, "512m": 512, "512M": 512, "512mb": 512, "512MiB": 512, "2g": 2048, "1.5g": 1536,
		"2GiB": 2048, "1024k": 1, "1048576b": 1, "1t": 1 << 20, "0": 0,
	} {
		if got, err := parseMiB(in); err != nil || got != want {
			t.Errorf("parseMiB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "m", "-1g", "1.5", "1000k", "12x", "g2", "NaN", "inf"} {
		if got, err := parseMiB(in); err == nil {
			t.Errorf("parseMiB(%q) = %d, want an error", in, got)
		}
	}
}

// TestCreateTakesDockerSizes: --memory 512m --disk 2g send MiB; a size
// that is not whole MiB is a usage error naming the flag.
func TestCreateTakesDockerSizes(t *testing.T) {
	mux := http.NewServeMux()
	var got sdk.CreateSandboxRequest
	mux.HandleFunc("POST /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		reply(w, http.StatusCreated, sdk.Sandbox{ID: "sbx-9", Name: got.Name, State: sdk.StateStarted})
	})
	fakeDaemon(t, mux)
	if r := runCLI(t, "", "create", "box", "--memory", "512m", "--disk", "2g"); r.code != 0 || got.MemoryMiB != 512 || got.DiskMiB != 2048 {
		t.Errorf("%+v: request %+v", r, got)
	}
	if r := runCLI(t, "", "create", "box", "--memory", "100k"); r.code != 1 || !strings.Contains(r.stderr, "--memory") || !strings.Contains(r.stderr, "whole number of MiB") {
		t.Errorf("--memory 100k: %+v", r)
	}
}

// TestListQuietAndFilter: -q prints ids only; --filter label=… and
// state=… become the list's query; another filter is refused by name.
func TestListQuietAndFilter(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if got := q["label"]; len(got) != 2 || got[0] != "env=dev" || got[1] != "team=ml" || q.Get("state") != "started" {
			t.Errorf("query %q", r.URL.RawQuery)
		}
		reply(w, http.StatusOK, []sdk.Sandbox{{ID: "sbx-1", Name: "a"}, {ID: "sbx-2", Name: "b"}})
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "ls", "-q", "--label", "env=dev", "--filter", "label=team=ml", "--filter", "status=started")
	if r.code != 0 || r.stdout != "sbx-1\nsbx-2\n" {
		t.Errorf("ls -q --filter: %+v", r)
	}
	for _, args := range [][]string{
		{"ls", "--filter", "name=a"},
		{"ls", "--filter", "state=started", "--filter", "state=stopped"},
		{"ls", "-q", "-o", "json"},
	} {
		if r := runCLI(t, "", args...); r.code != 1 || !strings.Contains(r.stderr, "--help") {
			t.Errorf("%q: %+v, want a usage error", args, r)
		}
	}
}
