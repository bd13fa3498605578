package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

func TestParseCopyArg(t *testing.T) {
	for in, want := range map[string]copyArg{
		"box:/workspace/a": {sandbox: "box", path: "/workspace/a"},
		"box:rel/a":        {sandbox: "box", path: "rel/a"},
		"box:":             {sandbox: "box", path: ""},
		"box:/a:b":         {sandbox: "box", path: "/a:b"},
		"-":                {path: "-"},
		"file.txt":         {path: "file.txt"},
		"./a:b":            {path: "./a:b"},
		"/abs/a:b":         {path: "/abs/a:b"},
		"dir/a:b":          {path: "dir/a:b"},
		":/x":              {path: ":/x"},
	} {
		if got := parseCopyArg(in); got != want {
			t.Errorf("%q: got %+v, want %+v", in, got, want)
		}
	}
}

func TestCheckCopyArgs(t *testing.T) {
	ok := [][2]string{{"a.txt", "box:/a.txt"}, {"box:/a.txt", "-"}, {"-", "box:/a"}}
	for _, p := range ok {
		if err := checkCopyArgs(parseCopyArg(p[0]), parseCopyArg(p[1])); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	bad := map[[2]string]string{
		{"a:/x", "b:/y"}: "both SRC and DST",
		{"a", "b"}:       "neither SRC nor DST",
		{"a", "box:"}:    `"box:" has no path`,
		{"", "box:/x"}:   "local path is empty",
	}
	for p, msg := range bad {
		err := checkCopyArgs(parseCopyArg(p[0]), parseCopyArg(p[1]))
		var u *usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err = %v, want usage error with %q", p, err, msg)
		}
	}
}

// fileDaemon is a sandbox filesystem of one directory, /ws, for cp tests.
func fileDaemon(t *testing.T, files map[string]string, modes map[string]string) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/files/stat", func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Query().Get("path")
		if p == "/ws" {
			reply(w, http.StatusOK, sdk.FileInfo{Path: p, Type: "dir"})
			return
		}
		if _, ok := files[p]; !ok {
			replyErr(w, http.StatusNotFound, "FILE_NOT_FOUND", "no such file "+p)
			return
		}
		reply(w, http.StatusOK, sdk.FileInfo{Path: p, Type: "file", Mode: "0750"})
	})
	mux.HandleFunc("GET /v1/sandboxes/{id}/files", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, files[r.URL.Query().Get("path")])
	})
	mux.HandleFunc("PUT /v1/sandboxes/{id}/files", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p := r.URL.Query().Get("path")
		files[p], modes[p] = string(b), r.URL.Query().Get("mode")
		reply(w, http.StatusOK, sdk.FileInfo{Path: p, Type: "file"})
	})
	fakeDaemon(t, mux)
}

func TestCopyUploadAndDownload(t *testing.T) {
	files, modes := map[string]string{"/ws/out.txt": "result"}, map[string]string{}
	fileDaemon(t, files, modes)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.sh")
	os.WriteFile(src, []byte("#!/bin/sh\n"), 0o755)

	// Into an existing remote directory: keeps the base name and mode.
	if r := runCLI(t, "", "cp", src, "box:/ws"); r.code != 0 {
		t.Fatalf("upload: %+v", r)
	}
	if files["/ws/in.sh"] != "#!/bin/sh\n" || modes["/ws/in.sh"] != "0755" {
		t.Errorf("uploaded %q mode %q", files["/ws/in.sh"], modes["/ws/in.sh"])
	}
	// From stdin to a new file: the daemon's default mode.
	if r := runCLI(t, "piped", "cp", "-", "box:/ws/new.txt"); r.code != 0 || files["/ws/new.txt"] != "piped" || modes["/ws/new.txt"] != "" {
		t.Errorf("stdin upload: %+v, files %v, modes %v", r, files, modes)
	}
	// Stdin has no name to put in a directory.
	if r := runCLI(t, "x", "cp", "-", "box:/ws/"); r.code != 1 || !strings.Contains(r.stderr, "is a directory") {
		t.Errorf("stdin to dir: %+v", r)
	}
	// A local directory is refused with advice.
	if r := runCLI(t, "", "cp", dir, "box:/ws/d"); r.code != 1 || !strings.Contains(r.stderr, "tar it first") {
		t.Errorf("dir upload: %+v", r)
	}

	// Into an existing local directory: keeps the base name and remote mode.
	if r := runCLI(t, "", "cp", "box:/ws/out.txt", dir); r.code != 0 {
		t.Fatalf("download: %+v", r)
	}
	got := filepath.Join(dir, "out.txt")
	if b, _ := os.ReadFile(got); string(b) != "result" {
		t.Errorf("downloaded %q", b)
	}
	if st, err := os.Stat(got); err != nil || st.Mode().Perm() != 0o750 {
		t.Errorf("mode: %v %v", st.Mode(), err)
	}
	if r := runCLI(t, "", "cp", "box:/ws/out.txt", "-"); r.code != 0 || r.stdout != "result" {
		t.Errorf("to stdout: %+v", r)
	}
	if r := runCLI(t, "", "cp", "box:/ws", dir); r.code != 1 || !strings.Contains(r.stderr, "directories are not supported yet") {
		t.Errorf("remote dir: %+v", r)
	}
	if r := runCLI(t, "", "cp", "box:/ws/missing", dir); r.code != 1 || !strings.Contains(r.stderr, "(FILE_NOT_FOUND)") {
		t.Errorf("missing: %+v", r)
	}
	// Nothing half-made: no temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("local dir holds %d entries, want in.sh and out.txt", len(entries))
	}
}
