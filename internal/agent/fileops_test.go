package agent

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// grep, glob and replace work on a tree next to the files; grep skips
// binary files and stops at its bound, replace keeps a file's mode.
func TestFileOps(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one needle\ntwo\nneedle three\n", 0o640)
	write("sub/b.md", "needle\n", 0o644)
	write("c.bin", "needle\x00", 0o644)

	var g wire.GrepResult
	a.call("POST", "/files/grep", wire.GrepRequest{Path: dir, Pattern: "needle"}, http.StatusOK, &g)
	if len(g.Matches) != 3 || g.Truncated || g.Matches[0] != (wire.GrepMatch{File: filepath.Join(dir, "a.txt"), Line: 1, Content: "one needle"}) {
		t.Fatalf("grep: %+v", g)
	}
	a.call("POST", "/files/grep", wire.GrepRequest{Path: dir, Pattern: "needle", Max: 2}, http.StatusOK, &g)
	if len(g.Matches) != 2 || !g.Truncated {
		t.Fatalf("grep with max 2: %+v", g)
	}
	a.call("POST", "/files/grep", wire.GrepRequest{Path: dir, Pattern: "^needle (t|x)", Regex: true}, http.StatusOK, &g)
	if len(g.Matches) != 1 || g.Matches[0].Content != "needle three" {
		t.Fatalf("grep with a regular expression: %+v", g)
	}
	a.callErr("POST", "/files/grep", wire.GrepRequest{Path: dir, Pattern: "(", Regex: true}, http.StatusBadRequest, wire.CodeInvalidParameter)
	var gl wire.GlobResult
	a.call("POST", "/files/glob", wire.GlobRequest{Path: dir, Pattern: "*.md"}, http.StatusOK, &gl)
	if len(gl.Files) != 1 || gl.Files[0] != filepath.Join(dir, "sub/b.md") {
		t.Fatalf("glob: %+v", gl)
	}
	a.callErr("POST", "/files/glob", wire.GlobRequest{Path: dir, Pattern: "["}, http.StatusBadRequest, wire.CodeInvalidParameter)
	a.callErr("POST", "/files/grep", wire.GrepRequest{Path: filepath.Join(dir, "nope"), Pattern: "x"}, http.StatusNotFound, wire.CodeFileNotFound)

	var rep []wire.ReplaceResult
	a.call("POST", "/files/replace", wire.ReplaceRequest{Files: []string{filepath.Join(dir, "a.txt"), filepath.Join(dir, "gone")}, Old: "needle", New: "pin"}, http.StatusOK, &rep)
	if len(rep) != 2 || rep[0].Replaced != 2 || rep[0].Error != "" || rep[1].Error == "" {
		t.Fatalf("replace: %+v", rep)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	fi, _ := os.Stat(filepath.Join(dir, "a.txt"))
	if string(b) != "one pin\ntwo\npin three\n" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("after replace: %q %v", b, fi.Mode())
	}

	var info wire.FileInfo
	a.call("POST", "/files/permissions", wire.PermissionsRequest{Path: filepath.Join(dir, "sub/b.md"), Mode: "600", Owner: "54321", Group: "54329"}, http.StatusOK, &info)
	if info.Mode != "0600" || info.Owner != strconv.Itoa(54321) || info.Group != "54329" {
		t.Fatalf("permissions: %+v", info)
	}
	a.callErr("POST", "/files/permissions", wire.PermissionsRequest{Path: dir, Owner: "no-such-user"}, http.StatusBadRequest, wire.CodeUnknownUser)
}
