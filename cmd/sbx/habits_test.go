package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// TestLogsTailSinceTimestamps: the flags become the logs route's query (the
// daemon selects), each line gets its chunk's time, and bad values and
// flags given with a PROCESS are usage errors naming the flag.
func TestLogsTailSinceTimestamps(t *testing.T) {
	now = func() time.Time { return time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC) }
	defer func() { now = time.Now }()
	mux := http.NewServeMux()
	var query string
	mux.HandleFunc("GET /v1/sandboxes/{id}/logs", func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		io.WriteString(w, `{"type":"data","data":"b25lCnR3","time":"2026-12-04T11:58:00.5Z"}
{"type":"data","data":"bwp0aHJlZQo=","time":"2026-12-04T11:59:00Z"}
{"type":"end"}
`)
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "logs", "web", "--tail", "3", "--since", "5m", "--timestamps")
	if query != "since=2026-12-04T11%3A55%3A00Z&tail=3&timestamps=true" {
		t.Errorf("query %q", query)
	}
	want := "2026-12-04T11:58:00.500000000Z one\n2026-12-04T11:58:00.500000000Z two\n2026-12-04T11:59:00.000000000Z three\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("%+v, want stdout %q", r, want)
	}
	if r := runCLI(t, "", "logs", "web"); r.code != 0 || query != "" || r.stdout != "one\ntwo\nthree\n" {
		t.Errorf("plain logs: query %q, %+v", query, r)
	}
	for args, flag := range map[string]string{
		"logs web --tail -2":          "--tail",
		"logs web --tail x":           "--tail",
		"logs web --since yesterday":  "--since",
		"logs web build-1 --tail 5":   "--tail",
		"logs web build-1 -t":         "--timestamps",
		"logs web build-1 --since 1m": "--since",
	} {
		if r := runCLI(t, "", strings.Fields(args)...); r.code != 1 || !strings.Contains(r.stderr, flag) {
			t.Errorf("%s: %+v, want a usage error naming %s", args, r, flag)
		}
	}
}

// TestCompletion: the completion script exists for each shell, and names
// complete from the daemon's lists, leaving out those already given.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if r := runCLI(t, "", "completion", sh); r.code != 0 || !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: code %d, %d bytes", sh, r.code, len(r.stdout))
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, []sdk.Sandbox{{ID: "sbx-1", Name: "web"}, {ID: "sbx-2", Name: "worker"}, {ID: "sbx-3"}})
	})
	mux.HandleFunc("GET /v1/images", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, []sdk.Image{{Name: "python:3.12"}, {Name: "busybox"}})
	})
	mux.HandleFunc("GET /v1/snapshots", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, []sdk.Snapshot{{Name: "base-1"}})
	})
	mux.HandleFunc("GET /v1/volumes", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, []sdk.Volume{{Name: "data"}, {Name: "cache"}})
	})
	fakeDaemon(t, mux)
	for args, want := range map[string]string{
		"exec w":             "web worker",
		"exec ":              "web worker sbx-3",
		"exec web ":          "", // only the first argument is a sandbox
		"rm web ":            "worker sbx-3",
		"logs ":              "web worker sbx-3",
		"port expose ":       "web worker sbx-3", // SANDBOX in its usage
		"image rm ":          "python:3.12 busybox",
		"create --image py":  "python:3.12",
		"create --snapshot ": "base-1",
		"snapshot rm ":       "base-1",
		"volume rm data ":    "cache",
		"volume get ":        "data cache",
	} {
		words := strings.Split(args, " ")
		r := runCLI(t, "", append([]string{"__complete"}, words...)...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || len(lines) == 0 || lines[len(lines)-1] != ":4" {
			t.Errorf("%q: %+v", args, r)
			continue
		}
		if got := strings.Join(lines[:len(lines)-1], " "); got != want {
			t.Errorf("%q completes %q, want %q", args, got, want)
		}
	}
}

// TestFormatTemplate: --format runs a Go template per listed item or on the
// one shown, "table" adds aligned columns under a header, and it refuses
// -o, -q and a bad template.
func TestFormatTemplate(t *testing.T) {
	mux := http.NewServeMux()
	list := []sdk.Sandbox{{ID: "sbx-1", Name: "web", State: sdk.StateStarted, Labels: map[string]string{"env": "dev"}}, {ID: "sbx-22", Name: "db", State: sdk.StateStopped}}
	mux.HandleFunc("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) { reply(w, http.StatusOK, list) })
	mux.HandleFunc("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) { reply(w, http.StatusOK, list[0]) })
	mux.HandleFunc("GET /v1/volumes", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, []sdk.Volume{{Name: "data", SizeMiB: 1024}})
	})
	fakeDaemon(t, mux)
	for args, want := range map[string]string{
		"ls --format {{.ID}}":                       "sbx-1\nsbx-22\n",
		`ls --format {{.Name}}:{{.State}}\t{{.ID}}`: "web:started\tsbx-1\ndb:stopped\tsbx-22\n",
		`ls --format table_{{.Name}}\t{{.ID}}`:      "NAME   ID\nweb    sbx-1\ndb     sbx-22\n",
		`get web --format {{index_.Labels_"env"}}`:  "dev\n",
		`get web --format {{json_.Labels}}`:         "{\"env\":\"dev\"}\n",
		`get web --format {{upper_.Name}}`:          "WEB\n",
		`volume ls --format {{.Name}}={{.SizeMiB}}`: "data=1024\n",
	} {
		// "_" stands for a space inside one argument.
		words := strings.Fields(args)
		for i := range words {
			words[i] = strings.ReplaceAll(words[i], "_", " ")
		}
		if r := runCLI(t, "", words...); r.code != 0 || r.stdout != want {
			t.Errorf("%s: %+v, want stdout %q", args, r, want)
		}
	}
	for _, args := range [][]string{
		{"ls", "--format", "{{.ID}}", "-o", "json"},
		{"ls", "--format", "{{.ID}}", "-q"},
		{"ls", "--format", "{{.ID"},
		{"ls", "--format", "table"},
	} {
		if r := runCLI(t, "", args...); r.code != 1 || !strings.Contains(r.stderr, "--") {
			t.Errorf("%q: %+v, want a usage error", args, r)
		}
	}
	if r := runCLI(t, "", "ls", "--format", "{{.Nope}}"); r.code != 1 || !strings.Contains(r.stderr, "Nope") {
		t.Errorf("unknown field: %+v", r)
	}
}
