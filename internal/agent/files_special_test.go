package agent

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// TestFilesSpecialFiles: a socket, a fifo or a device is refused with a
// clear 4xx, never opened in a way that blocks, whatever the route.
func TestFilesSpecialFiles(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	sock := filepath.Join(newRunDir(t), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fifo := filepath.Join(a.cwd, "d", "fifo")
	must(t, os.Mkdir(filepath.Join(a.cwd, "d"), 0o755))
	must(t, syscall.Mkfifo(fifo, 0o600))
	must(t, os.Symlink(sock, filepath.Join(a.cwd, "d", "sock")))
	must(t, os.Symlink("/dev/zero", filepath.Join(a.cwd, "zero")))
	for _, p := range []string{sock, fifo, "d/sock", "zero"} {
		a.callErr("GET", "/files?"+q(p), nil, http.StatusBadRequest, "NOT_A_REGULAR_FILE")
		a.callErr("GET", "/files/tar?"+q(p), nil, http.StatusBadRequest, "NOT_A_DIRECTORY")
		a.callErr("GET", "/files/list?"+q(p), nil, http.StatusBadRequest, "NOT_A_DIRECTORY")
	}
	// A tar of the directory skips the fifo rather than block on it.
	names := tarNames(t, a, "d")
	if names != "sock->"+sock {
		t.Fatalf("tar of a directory with a fifo and a link: %q", names)
	}
	a.callErr("PUT", "/files/tar?"+q(fifo), nil, http.StatusBadRequest, "NOT_A_DIRECTORY")
}

func TestFilesListDepth(t *testing.T) {
	a := startAgent(t)
	a.put("top", "")
	a.put("d/one", "")
	a.put("d/e/two", "")
	a.put("d/e/f/three", "")
	must(t, os.Symlink(filepath.Join(a.cwd, "d"), filepath.Join(a.cwd, "link")))
	list := func(depth string) string {
		var out []wire.FileInfo
		a.call("GET", "/files/list?"+q(".", "depth", depth), nil, http.StatusOK, &out)
		var rel []string
		for _, f := range out {
			r, _ := filepath.Rel(a.cwd, f.Path)
			rel = append(rel, r)
		}
		return strings.Join(rel, ",")
	}
	for depth, want := range map[string]string{
		"1":  "d,link,top",
		"2":  "d,d/e,d/one,link,top",
		"3":  "d,d/e,d/e/f,d/e/two,d/one,link,top",
		"32": "d,d/e,d/e/f,d/e/f/three,d/e/two,d/one,link,top",
	} {
		if got := list(depth); got != want {
			t.Errorf("depth %s: %s, want %s", depth, got, want)
		}
	}
	for _, bad := range []string{"0", "-1", "33", "x", "1.5"} {
		a.callErr("GET", "/files/list?"+q(".", "depth", bad), nil, http.StatusBadRequest, "INVALID_DEPTH")
	}
	// Not parallel: the bound is a package variable.
	defer func(n int) { maxListEntries = n }(maxListEntries)
	maxListEntries = 8
	if got := list("32"); strings.Count(got, ",") != 7 {
		t.Fatalf("exactly the limit: %s", got)
	}
	maxListEntries = 7
	a.callErr("GET", "/files/list?"+q(".", "depth", "32"), nil, http.StatusBadRequest, "LIST_TOO_LARGE")
}

// TestFilesUploadThroughSymlink: an upload to a symlink writes its target;
// the link stays.
func TestFilesUploadThroughSymlink(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.put("real/target.txt", "old", "mode", "0600")
	must(t, os.Symlink("real/target.txt", filepath.Join(a.cwd, "rel")))
	must(t, os.Symlink(filepath.Join(a.cwd, "rel"), filepath.Join(a.cwd, "chain")))
	must(t, os.Mkdir(filepath.Join(a.cwd, "sub"), 0o755))
	must(t, os.Symlink("../real/target.txt", filepath.Join(a.cwd, "sub", "up")))
	must(t, os.Symlink("real/new/made.txt", filepath.Join(a.cwd, "dangling")))
	// sub2 leads to real/ through a link, so "../elsewhere" is real/../elsewhere.
	must(t, os.Symlink("real", filepath.Join(a.cwd, "via")))
	must(t, os.Symlink("../elsewhere.txt", filepath.Join(a.cwd, "real", "out")))

	for i, p := range []string{"rel", "chain", "sub/up"} {
		body := "new" + strconv.Itoa(i)
		info := a.put(p, body)
		if info.Path != filepath.Join(a.cwd, "real/target.txt") || info.Type != "file" || info.Mode != "0600" {
			t.Fatalf("upload via %s: %+v", p, info)
		}
		if got := a.get("real/target.txt"); got != body {
			t.Fatalf("upload via %s: target holds %q", p, got)
		}
		if fi, err := os.Lstat(filepath.Join(a.cwd, p)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link %s was replaced", p)
		}
	}
	a.put("dangling", "made")
	if got := a.get("real/new/made.txt"); got != "made" {
		t.Fatalf("dangling link target: %q", got)
	}
	a.put("via/out", "x")
	if got := a.get("elsewhere.txt"); got != "x" {
		t.Fatalf("link reached through a link: %q", got)
	}
	must(t, os.Symlink("loop", filepath.Join(a.cwd, "loop")))
	a.callErr("PUT", "/files?"+q("loop"), []byte("x"), http.StatusBadRequest, "INVALID_PATH")
	noUploadLeftovers(t, a.cwd)
}

// tarNames lists the entries of GET /files/tar for dir.
func tarNames(t *testing.T, a *testAgent, dir string) string {
	t.Helper()
	resp := a.do("GET", "/files/tar?"+url.Values{"path": {dir}}.Encode(), nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-tar" {
		t.Fatalf("GET tar %s: %d %s", dir, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return strings.Join(readTar(t, resp.Body), ",")
}
