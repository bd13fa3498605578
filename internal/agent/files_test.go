package agent

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"math/rand/v2"
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

func q(path string, extra ...string) string {
	v := url.Values{"path": {path}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v.Encode()
}

func (a *testAgent) put(path string, content string, extra ...string) wire.FileInfo {
	a.t.Helper()
	var info wire.FileInfo
	a.call("PUT", "/files?"+q(path, extra...), []byte(content), http.StatusOK, &info)
	return info
}

func (a *testAgent) get(path string) string {
	a.t.Helper()
	resp := a.do("GET", "/files?"+q(path), nil)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		a.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
		a.t.Fatalf("content type %q", ct)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(data)) {
		a.t.Fatalf("content length %q for %d bytes", cl, len(data))
	}
	return string(data)
}

func TestFilesPutGet(t *testing.T) {
	t.Parallel()
	a := startAgent(t)

	info := a.put("hello.txt", "hello", "mode", "0600")
	want := filepath.Join(a.cwd, "hello.txt")
	if info.Path != want || info.Name != "hello.txt" || info.Type != "file" || info.Size != 5 || info.Mode != "0600" || info.ModTime.IsZero() {
		t.Fatalf("put: %+v", info)
	}
	if got := a.get("hello.txt"); got != "hello" {
		t.Fatalf("get %q", got)
	}
	// Absolute path; replacing keeps the mode when none is given.
	info = a.put(want, "bye!")
	if info.Mode != "0600" || info.Size != 4 || a.get(want) != "bye!" {
		t.Fatalf("replace: %+v", info)
	}
	if info := a.put("x.sh", "", "mode", "4755"); info.Mode != "4755" || info.Size != 0 {
		t.Fatalf("setuid mode: %+v", info)
	}

	a.callErr("PUT", "/files?"+q("a/b/c.txt", "parents", "false"), []byte("x"), http.StatusNotFound, "PARENT_NOT_FOUND")
	if _, err := os.Stat(filepath.Join(a.cwd, "a")); !os.IsNotExist(err) {
		t.Fatal("parents=false made a directory")
	}
	// Parents are made by default, as E2B and Daytona do.
	if info := a.put("a/b/c.txt", "deep"); info.Path != filepath.Join(a.cwd, "a/b/c.txt") {
		t.Fatalf("parents by default: %+v", info)
	}
	if info := a.put("a/d/e.txt", "deep", "parents", "true"); info.Path != filepath.Join(a.cwd, "a/d/e.txt") {
		t.Fatalf("parents=true: %+v", info)
	}
	a.callErr("PUT", "/files?"+q("a"), []byte("x"), http.StatusConflict, "IS_A_DIRECTORY")
	a.callErr("PUT", "/files?"+q("/"), []byte("x"), http.StatusConflict, "IS_A_DIRECTORY")
	a.callErr("PUT", "/files?"+q("hello.txt/x"), []byte("x"), http.StatusBadRequest, "NOT_A_DIRECTORY")
	for _, m := range []string{"999", "abc", "", "17777", "-1"} {
		a.callErr("PUT", "/files?"+q("m.txt", "mode", m), []byte("x"), http.StatusBadRequest, "INVALID_MODE")
	}
	a.callErr("PUT", "/files?"+q(""), []byte("x"), http.StatusBadRequest, "INVALID_PATH")
	a.callErr("PUT", "/files?"+q("a\x00b"), []byte("x"), http.StatusBadRequest, "INVALID_PATH")
	a.callErr("PUT", "/files?"+q("p.txt", "parents", "perhaps"), []byte("x"), http.StatusBadRequest, "INVALID_PARAMETER")

	a.callErr("GET", "/files?"+q("missing"), nil, http.StatusNotFound, "FILE_NOT_FOUND")
	a.callErr("GET", "/files?"+q("a"), nil, http.StatusBadRequest, "IS_A_DIRECTORY")
	a.callErr("GET", "/files", nil, http.StatusBadRequest, "INVALID_PATH")
	if err := syscall.Mkfifo(filepath.Join(a.cwd, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.callErr("GET", "/files?"+q("fifo"), nil, http.StatusBadRequest, "NOT_A_REGULAR_FILE")
	noUploadLeftovers(t, a.cwd)
}

func noUploadLeftovers(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), uploadPrefix) {
			t.Errorf("temporary upload file left behind: %s", p)
		}
		return nil
	})
}

func TestFilesListStat(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.put("b.txt", "bb")
	a.put("a.txt", "a")
	a.put("d/inner", "x", "parents", "true")
	if err := os.Symlink("a.txt", filepath.Join(a.cwd, "link")); err != nil {
		t.Fatal(err)
	}

	var list []wire.FileInfo
	a.call("GET", "/files/list?"+q("."), nil, http.StatusOK, &list)
	var names []string
	for _, f := range list {
		names = append(names, f.Name+":"+f.Type)
	}
	if got := strings.Join(names, ","); got != "a.txt:file,b.txt:file,d:dir,link:symlink" {
		t.Fatalf("list: %s", got)
	}
	a.call("GET", "/files/list?"+q(a.cwd+"/d"), nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].Path != filepath.Join(a.cwd, "d/inner") {
		t.Fatalf("list d: %+v", list)
	}
	a.callErr("GET", "/files/list?"+q("a.txt"), nil, http.StatusBadRequest, "NOT_A_DIRECTORY")
	a.callErr("GET", "/files/list?"+q("nope"), nil, http.StatusNotFound, "FILE_NOT_FOUND")

	var info wire.FileInfo
	a.call("GET", "/files/stat?"+q("link"), nil, http.StatusOK, &info)
	if info.Type != "symlink" || info.Target != "a.txt" {
		t.Fatalf("stat link: %+v", info)
	}
	a.call("GET", "/files/stat?"+q("d"), nil, http.StatusOK, &info)
	if info.Type != "dir" || info.Name != "d" {
		t.Fatalf("stat dir: %+v", info)
	}
	a.callErr("GET", "/files/stat?"+q("nope"), nil, http.StatusNotFound, "FILE_NOT_FOUND")
	a.callErr("GET", "/files/stat?"+q(""), nil, http.StatusBadRequest, "INVALID_PATH")
}

func TestFilesMkdir(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	var info wire.FileInfo
	a.call("POST", "/files/mkdir", wire.MkdirRequest{Path: "m"}, http.StatusOK, &info)
	if info.Type != "dir" || info.Mode != "0755" || info.Path != filepath.Join(a.cwd, "m") {
		t.Fatalf("mkdir: %+v", info)
	}
	a.callErr("POST", "/files/mkdir", wire.MkdirRequest{Path: "m"}, http.StatusConflict, "FILE_EXISTS")
	a.call("POST", "/files/mkdir", wire.MkdirRequest{Path: "m", Parents: true}, http.StatusOK, &info)
	a.callErr("POST", "/files/mkdir", wire.MkdirRequest{Path: "x/y"}, http.StatusNotFound, "PARENT_NOT_FOUND")
	a.call("POST", "/files/mkdir", wire.MkdirRequest{Path: "x/y", Parents: true, Mode: "0700"}, http.StatusOK, &info)
	if info.Mode != "0700" || info.Type != "dir" {
		t.Fatalf("mkdir -p: %+v", info)
	}
	a.put("f", "file")
	a.callErr("POST", "/files/mkdir", wire.MkdirRequest{Path: "f", Parents: true}, http.StatusConflict, "FILE_EXISTS")
	a.callErr("POST", "/files/mkdir", wire.MkdirRequest{Path: "f"}, http.StatusConflict, "FILE_EXISTS")
	a.callErr("POST", "/files/mkdir", wire.MkdirRequest{Path: "n", Mode: "rwx"}, http.StatusBadRequest, "INVALID_MODE")
	a.callErr("POST", "/files/mkdir", wire.MkdirRequest{}, http.StatusBadRequest, "INVALID_PATH")
	a.callErr("POST", "/files/mkdir", map[string]any{"path": "z", "recursive": true}, http.StatusBadRequest, "UNKNOWN_FIELD")
	if _, err := os.Stat(filepath.Join(a.cwd, "n")); !os.IsNotExist(err) {
		t.Fatal("failed mkdir made something")
	}
}

func TestFilesMove(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.put("one", "1")
	a.put("two", "2")
	var info wire.FileInfo
	a.call("POST", "/files/move", wire.MoveRequest{From: "one", To: "moved"}, http.StatusOK, &info)
	if info.Path != filepath.Join(a.cwd, "moved") || info.Size != 1 {
		t.Fatalf("move: %+v", info)
	}
	a.callErr("POST", "/files/move", wire.MoveRequest{From: "moved", To: "two"}, http.StatusConflict, "FILE_EXISTS")
	if a.get("two") != "2" || a.get("moved") != "1" {
		t.Fatal("refused move changed files")
	}
	a.call("POST", "/files/move", wire.MoveRequest{From: "moved", To: "two", Overwrite: true}, http.StatusOK, &info)
	if a.get("two") != "1" {
		t.Fatal("overwrite did not replace")
	}
	a.callErr("POST", "/files/move", wire.MoveRequest{From: "one", To: "x"}, http.StatusNotFound, "FILE_NOT_FOUND")
	a.callErr("POST", "/files/move", wire.MoveRequest{From: "two", To: "no/dir/x"}, http.StatusNotFound, "PARENT_NOT_FOUND")
	a.call("POST", "/files/mkdir", wire.MkdirRequest{Path: "d/e", Parents: true}, http.StatusOK, nil)
	a.callErr("POST", "/files/move", wire.MoveRequest{From: "d", To: "d/e/f"}, http.StatusBadRequest, "INVALID_MOVE")
	a.callErr("POST", "/files/move", wire.MoveRequest{From: "two", To: "d", Overwrite: true}, http.StatusConflict, "IS_A_DIRECTORY")
	a.callErr("POST", "/files/move", wire.MoveRequest{From: "/", To: "x"}, http.StatusBadRequest, "INVALID_PATH")
	a.callErr("POST", "/files/move", wire.MoveRequest{From: "two"}, http.StatusBadRequest, "INVALID_PATH")
	// A directory replaces an empty directory when asked.
	a.call("POST", "/files/mkdir", wire.MkdirRequest{Path: "empty"}, http.StatusOK, nil)
	a.call("POST", "/files/move", wire.MoveRequest{From: "d", To: "empty", Overwrite: true}, http.StatusOK, &info)
	if info.Type != "dir" || info.Name != "empty" {
		t.Fatalf("dir over empty dir: %+v", info)
	}
}

func TestFilesDelete(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.put("f", "x")
	a.put("d/sub/g", "y", "parents", "true")

	a.call("DELETE", "/files?"+q("f"), nil, http.StatusNoContent, nil)
	a.callErr("GET", "/files/stat?"+q("f"), nil, http.StatusNotFound, "FILE_NOT_FOUND")
	a.callErr("DELETE", "/files?"+q("f"), nil, http.StatusNotFound, "FILE_NOT_FOUND")
	a.callErr("DELETE", "/files?"+q("d"), nil, http.StatusConflict, "DIR_NOT_EMPTY")
	a.callErr("DELETE", "/files?"+q("d", "recursive", "false"), nil, http.StatusConflict, "DIR_NOT_EMPTY")
	a.callErr("DELETE", "/files?"+q("/"), nil, http.StatusBadRequest, "INVALID_PATH")
	a.callErr("DELETE", "/files?"+q("/..//", "recursive", "true"), nil, http.StatusBadRequest, "INVALID_PATH")
	a.callErr("DELETE", "/files?"+q("d", "recursive", "yes please"), nil, http.StatusBadRequest, "INVALID_PARAMETER")
	a.call("DELETE", "/files?"+q("d", "recursive", "true"), nil, http.StatusNoContent, nil)
	if _, err := os.Stat(filepath.Join(a.cwd, "d")); !os.IsNotExist(err) {
		t.Fatal("recursive delete left the directory")
	}
	// A symlink is deleted, not what it points to, even recursively.
	keep := t.TempDir()
	os.WriteFile(filepath.Join(keep, "k"), []byte("k"), 0o644)
	os.Symlink(keep, filepath.Join(a.cwd, "ln"))
	a.call("DELETE", "/files?"+q("ln", "recursive", "true"), nil, http.StatusNoContent, nil)
	if _, err := os.Stat(filepath.Join(keep, "k")); err != nil {
		t.Fatal("deleting a symlink removed its target's contents")
	}
}

func TestFilesBigRoundTrip(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	const size = 100 << 20
	rng := rand.NewChaCha8([32]byte{1, 2, 3})
	up := sha256.New()
	body := io.TeeReader(io.LimitReader(rng, size), up)
	req, _ := http.NewRequest("PUT", "http://agent/files?"+q("big.bin"), body)
	req.ContentLength = size
	resp, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var info wire.FileInfo
	json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || info.Size != size {
		t.Fatalf("upload: %d %+v", resp.StatusCode, info)
	}

	resp = a.do("GET", "/files?"+q("big.bin"), nil)
	defer resp.Body.Close()
	down := sha256.New()
	n, err := io.Copy(down, resp.Body)
	if err != nil || n != size || resp.ContentLength != size {
		t.Fatalf("download: %d bytes, length %d, %v", n, resp.ContentLength, err)
	}
	if !bytes.Equal(up.Sum(nil), down.Sum(nil)) {
		t.Fatal("sha256 of the download differs from the upload")
	}
}

func TestFilesFailedUploadKeepsOld(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.put("keep.txt", "old content")

	// An upload that ends early: the body is cut off, then the server answers.
	conn, err := dialSocket(t.Context(), a.client.Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "PUT /files?"+q("keep.txt")+" HTTP/1.1\r\nHost: agent\r\nContent-Length: 1000000\r\n\r\npartial new content")
	conn.(interface{ CloseWrite() error }).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var er wire.ErrorResponse
	json.NewDecoder(resp.Body).Decode(&er)
	if resp.StatusCode != http.StatusBadRequest || er.Error.Code != "UPLOAD_INCOMPLETE" {
		t.Fatalf("cut upload: %d %+v", resp.StatusCode, er)
	}
	if got := a.get("keep.txt"); got != "old content" {
		t.Fatalf("old content replaced by %q", got)
	}
	noUploadLeftovers(t, a.cwd)
}
