package main

import (
	"archive/tar"
	"bytes"
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
		modes[p+" parents"] = r.URL.Query().Get("parents")
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
	if modes["/ws/in.sh parents"] != "true" {
		t.Errorf("parents = %q, want true by default", modes["/ws/in.sh parents"])
	}
	if r := runCLI(t, "x", "cp", "--parents=false", "-", "box:/ws/np.txt"); r.code != 0 || modes["/ws/np.txt parents"] != "false" {
		t.Errorf("--parents=false: %+v, %v", r, modes)
	}
	// From stdin to a new file: the daemon's default mode.
	if r := runCLI(t, "piped", "cp", "-", "box:/ws/new.txt"); r.code != 0 || files["/ws/new.txt"] != "piped" || modes["/ws/new.txt"] != "" {
		t.Errorf("stdin upload: %+v, files %v, modes %v", r, files, modes)
	}
	// Stdin has no name to put in a directory.
	if r := runCLI(t, "x", "cp", "-", "box:/ws/"); r.code != 1 || !strings.Contains(r.stderr, "is a directory") {
		t.Errorf("stdin to dir: %+v", r)
	}
	// A local directory needs -r.
	if r := runCLI(t, "", "cp", dir, "box:/ws/d"); r.code != 1 || !strings.Contains(r.stderr, "copy it with -r") {
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
	if r := runCLI(t, "", "cp", "box:/ws", dir); r.code != 1 || !strings.Contains(r.stderr, "copy it with -r") {
		t.Errorf("remote dir: %+v", r)
	}
	if r := runCLI(t, "", "cp", "box:/ws/missing", dir); r.code != 1 || !strings.Contains(r.stderr, "(FILE_NOT_FOUND)") {
		t.Errorf("missing: %+v", r)
	}
	// Nothing half-made: no temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		for _, e := range entries {
			t.Log(e.Name())
		}
		t.Errorf("local dir holds %d entries, want in.sh and out.txt", len(entries))
	}
}

// TestCopyRecursive: cp -r sends and receives a directory as a tar, and
// places it as cp -r does.
func TestCopyRecursive(t *testing.T) {
	var got []string // tar entries received, by target directory
	remoteTar := makeTestTar(t, map[string]string{"r.txt": "remote", "sub/s.txt": "deep"})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/files/stat", func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Query().Get("path"); p {
		case "/ws", "/ws/res":
			reply(w, http.StatusOK, sdk.FileInfo{Path: p, Type: "dir"})
		default:
			replyErr(w, http.StatusNotFound, "FILE_NOT_FOUND", "no such file "+p)
		}
	})
	mux.HandleFunc("PUT /v1/sandboxes/{id}/files/tar", func(w http.ResponseWriter, r *http.Request) {
		tr := tar.NewReader(r.Body)
		for {
			hdr, err := tr.Next()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(tr)
			got = append(got, r.URL.Query().Get("path")+":"+hdr.Name+"="+string(b))
		}
		reply(w, http.StatusOK, sdk.FileInfo{Path: r.URL.Query().Get("path"), Type: "dir"})
	})
	mux.HandleFunc("GET /v1/sandboxes/{id}/files/tar", func(w http.ResponseWriter, r *http.Request) {
		w.Write(remoteTar)
	})
	fakeDaemon(t, mux)

	dir := t.TempDir()
	src := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(src, "lib"), 0o755)
	os.WriteFile(filepath.Join(src, "lib", "a.go"), []byte("package a"), 0o644)
	// Into an existing remote directory: under its base name.
	if r := runCLI(t, "", "cp", "-r", src, "box:/ws"); r.code != 0 {
		t.Fatalf("upload: %+v", r)
	}
	// To a new name: the directory itself.
	if r := runCLI(t, "", "cp", "-r", src, "box:/ws/renamed"); r.code != 0 {
		t.Fatalf("upload: %+v", r)
	}
	if s := strings.Join(got, " "); s != "/ws/proj:lib/= /ws/proj:lib/a.go=package a /ws/renamed:lib/= /ws/renamed:lib/a.go=package a" {
		t.Errorf("uploaded: %s", s)
	}
	// Out: into a new local directory, then into an existing one.
	if r := runCLI(t, "", "cp", "-r", "box:/ws/res", filepath.Join(dir, "out")); r.code != 0 {
		t.Fatalf("download: %+v", r)
	}
	if r := runCLI(t, "", "cp", "-r", "box:/ws/res", dir); r.code != 0 {
		t.Fatalf("download: %+v", r)
	}
	for _, p := range []string{"out/r.txt", "out/sub/s.txt", "res/r.txt", "res/sub/s.txt"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("download: %v", err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "res/sub/s.txt")); string(b) != "deep" {
		t.Errorf("downloaded %q", b)
	}
	// "-" is the tar itself.
	if r := runCLI(t, "", "cp", "-r", "box:/ws/res", "-"); r.code != 0 || r.stdout != string(remoteTar) {
		t.Errorf("tar to stdout: code %d, %d bytes", r.code, len(r.stdout))
	}
}

func makeTestTar(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		io.WriteString(tw, body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFilesList(t *testing.T) {
	var depth string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/files/list", func(w http.ResponseWriter, r *http.Request) {
		depth = r.URL.Query().Get("depth")
		reply(w, http.StatusOK, []sdk.FileInfo{
			{Path: "/ws/d", Name: "d", Type: "dir", Mode: "0755"},
			{Path: "/ws/d/f", Name: "f", Type: "file", Mode: "0644", Size: 2048},
			{Path: "/ws/l", Name: "l", Type: "symlink", Mode: "0777", Target: "d/f"},
		})
	})
	fakeDaemon(t, mux)
	r := runCLI(t, "", "files", "ls", "-R", "box:/ws")
	if r.code != 0 || depth != "32" {
		t.Fatalf("ls -R: depth %q, %+v", depth, r)
	}
	for _, want := range []string{" d/\n", " d/f\n", "2.0 KiB", " l -> d/f\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := runCLI(t, "", "files", "ls", "--depth", "3", "box:/ws"); r.code != 0 || depth != "3" {
		t.Errorf("--depth 3: depth %q, %+v", depth, r)
	}
	if r := runCLI(t, "", "files", "ls", "/ws"); r.code != 1 || !strings.Contains(r.stderr, "NAME:PATH") {
		t.Errorf("local path: %+v", r)
	}
}
