package agent

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// watchStream opens a watch and returns a function that reads the next
// event (skipping heartbeats).
func (a *testAgent) watch(query url.Values) func() wire.WatchEvent {
	a.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://agent/watch?"+query.Encode(), nil)
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		a.t.Fatalf("watch: status %d", resp.StatusCode)
	}
	dec := json.NewDecoder(resp.Body)
	next := func() wire.WatchEvent {
		a.t.Helper()
		for {
			var ev wire.WatchEvent
			if err := dec.Decode(&ev); err != nil {
				a.t.Fatalf("watch stream: %v", err)
			}
			if ev.Type != "heartbeat" {
				return ev
			}
		}
	}
	if ev := next(); ev.Type != "ready" {
		a.t.Fatalf("first event %+v", ev)
	}
	return next
}

// watchNewDir makes the directory w in the agent's working directory and
// watches it recursively, with query's further parameters.
func (a *testAgent) watchNewDir(query url.Values) (root string, next func() wire.WatchEvent) {
	a.t.Helper()
	root = filepath.Join(a.cwd, "w")
	must(a.t, os.Mkdir(root, 0o755))
	q := url.Values{"path": {"w"}, "recursive": {"true"}}
	maps.Copy(q, query)
	return root, a.watch(q)
}

func describe(ev wire.WatchEvent) string {
	s := ev.Type + " " + ev.Path
	if ev.IsDir {
		s += "/"
	}
	if ev.OldPath != "" {
		s += " from " + ev.OldPath
	}
	return s
}

func expectEvents(t *testing.T, next func() wire.WatchEvent, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := describe(next()); got != w {
			t.Fatalf("got %q, want %q", got, w)
		}
	}
}

func TestWatchOrder(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	root, next := a.watchNewDir(url.Values{"exclude": {"*.tmp", "skip"}})
	f := filepath.Join(root, "a.txt")
	must(t, os.WriteFile(f, []byte("one"), 0o644))
	fh, _ := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
	fh.Write([]byte("two"))
	fh.Write([]byte("three")) // back-to-back writes merge
	fh.Close()
	must(t, os.WriteFile(filepath.Join(root, "x.tmp"), nil, 0o644)) // excluded
	must(t, os.Rename(f, filepath.Join(root, "b.txt")))
	must(t, os.Remove(filepath.Join(root, "b.txt")))
	expectEvents(t, next,
		"create "+f,
		"write "+f,
		"rename "+root+"/b.txt from "+f,
		"remove "+root+"/b.txt",
	)
	// A new directory is watched, and what was made in it before the watch
	// was in place is reported too.
	sub := filepath.Join(root, "d1", "d2")
	must(t, os.MkdirAll(filepath.Join(root, "skip", "inner"), 0o755)) // excluded
	must(t, os.MkdirAll(sub, 0o755))
	must(t, os.WriteFile(filepath.Join(sub, "deep"), []byte("x"), 0o644))
	expectEvents(t, next,
		"create "+root+"/d1/",
		"create "+sub+"/",
		"create "+sub+"/deep",
	)
	must(t, os.Rename(filepath.Join(root, "d1"), filepath.Join(root, "D1")))
	must(t, os.WriteFile(filepath.Join(root, "D1", "d2", "after"), nil, 0o644))
	ev := next()
	if describe(ev) == "write "+sub+"/deep" { // the scan and the watch raced
		ev = next()
	}
	if got := describe(ev); got != "rename "+root+"/D1/ from "+root+"/d1" {
		t.Fatalf("got %q, want the rename of d1", got)
	}
	expectEvents(t, next, "create "+root+"/D1/d2/after")
	// Removing the root ends the watch with an error event.
	must(t, os.RemoveAll(root))
	for {
		ev := next()
		if ev.Type == "error" {
			if ev.Error == nil || ev.Error.Code != "WATCH_ROOT_GONE" {
				t.Fatalf("end: %+v", ev)
			}
			break
		}
	}
}

func TestWatchFileAndErrors(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	f := filepath.Join(a.cwd, "log.txt")
	must(t, os.WriteFile(f, nil, 0o644))
	next := a.watch(url.Values{"path": {f}})
	must(t, os.WriteFile(filepath.Join(a.cwd, "other"), nil, 0o644)) // not the watched file
	must(t, os.WriteFile(f, []byte("x"), 0o644))
	must(t, os.WriteFile(f+".new", []byte("y"), 0o644))
	must(t, os.Rename(f+".new", f)) // an editor's save
	expectEvents(t, next, "write "+f, "create "+f)

	a.callErr("GET", "/watch?path=nope", nil, http.StatusNotFound, "PATH_NOT_FOUND")
	a.callErr("GET", "/watch?path=.&include=[", nil, http.StatusBadRequest, "INVALID_GLOB")
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, rel string
		want         bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true},
		{"*.go", "main.go.txt", false},
		{"node_modules", "x/node_modules", true},
		{"src/*.ts", "src/a.ts", true},
		{"src/*.ts", "src/a/b.ts", false},
		{"src/**/*.ts", "src/a/b.ts", true},
		{"src/**/*.ts", "src/b.ts", true},
		{"**/gen/*", "a/b/gen/x", true},
		{"**/gen/*", "gen/x", true},
		{"src/**", "src/a/b", true},
		{"src/**", "other/a", false},
	}
	for _, c := range cases {
		if got := globMatch(c.pattern, c.rel); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v", c.pattern, c.rel, got)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWatchUpload: an upload through the file API is reported as a create
// (new file) and a write of its final path, never as its temporary file.
func TestWatchUpload(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	root, next := a.watchNewDir(nil)
	f := filepath.Join(root, "up.txt")
	a.put(f, "one")
	expectEvents(t, next, "create "+f, "write "+f)
	a.put(f, "two")
	must(t, os.WriteFile(filepath.Join(root, "marker"), nil, 0o644))
	expectEvents(t, next, "write "+f, "create "+root+"/marker")
	// A tar upload: each new file and directory once, by its final path,
	// however its extraction races the watch of each new directory. (The
	// file is empty: a write into a directory watched in time would be a
	// true event of its own.)
	a.call("PUT", "/files/tar?"+q("w/t"), makeTar(t, entry{name: "d/", typ: tar.TypeDir, mode: 0o755}, entry{name: "d/f"}), http.StatusOK, nil)
	must(t, os.WriteFile(filepath.Join(root, "marker2"), nil, 0o644))
	expectEvents(t, next, "create "+root+"/t/", "create "+root+"/t/d/", "create "+root+"/t/d/f", "create "+root+"/marker2")

	// Watching the file itself.
	next = a.watch(url.Values{"path": {f}})
	a.put(f, "three")
	must(t, os.WriteFile(f, []byte("four"), 0o644))
	expectEvents(t, next, "write "+f, "write "+f)
}

// TestWatchScanNoRepeats: directories made while the watch is catching up
// with their parents are each reported created exactly once, however the
// scan of a new directory and the kernel's events for it interleave.
func TestWatchScanNoRepeats(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	root, next := a.watchNewDir(nil)
	want := map[string]bool{}
	for i := range 40 {
		d := filepath.Join(root, fmt.Sprint("i", i))
		for _, p := range []string{d, d + "/a", d + "/a/b", d + "/a/b/c"} {
			must(t, os.Mkdir(p, 0o755))
			want["create "+p+"/"] = true
			f := p + "/f"
			must(t, os.WriteFile(f, nil, 0o644))
			want["create "+f] = true
		}
	}
	marker := filepath.Join(root, "marker")
	must(t, os.WriteFile(marker, nil, 0o644))
	seen := map[string]bool{}
	for {
		got := describe(next())
		if got == "create "+marker {
			break
		}
		if seen[got] || !want[got] {
			t.Fatalf("unexpected or repeated event %q", got)
		}
		seen[got] = true
	}
	if len(seen) != len(want) {
		t.Fatalf("saw %d of %d creates", len(seen), len(want))
	}
}
