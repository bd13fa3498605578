package agent

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// ownerOf is the uid and gid of path.
func ownerOf(t *testing.T, path string) [2]uint32 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return [2]uint32{st.Uid, st.Gid}
}

// A file written for an account is the account's, and so are the parent
// directories the write made; directories that were there keep their owner.
func TestFilesOwned(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	a := startAgent(t)
	want := [2]uint32{1234, 5678}
	var info wire.FileInfo
	a.call("PUT", "/files/owned?path=new/sub/f.txt&owner=1234:5678&mode=0600", []byte("hi"), http.StatusOK, &info)
	if info.Size != 2 || info.Mode != "0600" {
		t.Fatalf("write: %+v", info)
	}
	for _, p := range []string{"new", "new/sub", "new/sub/f.txt"} {
		if got := ownerOf(t, filepath.Join(a.cwd, p)); got != want {
			t.Errorf("%s is %v, want %v", p, got, want)
		}
	}
	if got := ownerOf(t, a.cwd); got == want {
		t.Errorf("the existing directory was handed over")
	}
	a.call("POST", "/files/mkdir/owned?path=d1/d2&owner=1234:5678&mode=0700", nil, http.StatusOK, &info)
	if info.Type != "dir" || info.Mode != "0700" || ownerOf(t, filepath.Join(a.cwd, "d1")) != want || ownerOf(t, filepath.Join(a.cwd, "d1/d2")) != want {
		t.Fatalf("mkdir: %+v", info)
	}
	a.call("POST", "/files/mkdir/owned?path=d1/d2&owner=1234", nil, http.StatusOK, &info) // parents: an existing directory is fine
	a.callErr("POST", "/files/mkdir/owned?path=d1/d2&owner=1234&parents=false", nil, http.StatusConflict, "FILE_EXISTS")
	a.callErr("PUT", "/files/owned?path=x&owner=nobody-by-that-name", []byte("x"), http.StatusBadRequest, wire.CodeUnknownUser)
	a.callErr("PUT", "/files/owned?path=x", []byte("x"), http.StatusBadRequest, wire.CodeInvalidParameter)
	if _, err := os.Stat(filepath.Join(a.cwd, "x")); !os.IsNotExist(err) {
		t.Fatal("a refused write made the file")
	}
}

// A context by name is started once and then found; a restart keeps its
// id and forgets its state; its run count is the context's own.
func TestContextEnsureAndRestart(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "bash")
	a := startAgent(t)
	var c wire.Context
	a.call("PUT", "/contexts/my-default", wire.CreateContextRequest{Language: "bash"}, http.StatusCreated, &c)
	if c.ID != "my-default" || c.Runs != 0 {
		t.Fatalf("ensure: %+v", c)
	}
	a.runIn(c.ID, wire.RunCodeRequest{Code: "x=41"})
	a.call("PUT", "/contexts/my-default", wire.CreateContextRequest{Language: "bash"}, http.StatusOK, &c)
	if c.Runs != 1 {
		t.Fatalf("the same context again: %+v", c)
	}
	if res := a.runIn(c.ID, wire.RunCodeRequest{Code: "echo $((x+1))"}); res.Stdout != "42\n" {
		t.Fatalf("state: %+v", res)
	}
	a.callErr("PUT", "/contexts/my-default", wire.CreateContextRequest{Language: "python"}, http.StatusConflict, wire.CodeContextExists)
	a.call("POST", "/contexts/my-default/restart", nil, http.StatusOK, &c)
	if c.ID != "my-default" || c.Runs != 0 || c.Language != "bash" {
		t.Fatalf("restart: %+v", c)
	}
	if res := a.runIn(c.ID, wire.RunCodeRequest{Code: "echo \"[$x]\""}); res.Stdout != "[]\n" {
		t.Fatalf("state after restart: %+v", res)
	}
	var list []wire.Context
	a.call("GET", "/contexts", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].ID != "my-default" || list[0].Runs != 1 {
		t.Fatalf("list after restart: %+v", list)
	}
	a.callErr("PUT", "/contexts/bad%20id", wire.CreateContextRequest{Language: "bash"}, http.StatusBadRequest, wire.CodeInvalidID)
	a.callErr("POST", "/contexts/ghost/restart", nil, http.StatusNotFound, wire.CodeContextNotFound)
}
