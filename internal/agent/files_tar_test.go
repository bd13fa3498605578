package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// readTar returns "name" for each entry, "name->link" for links.
func readTar(t *testing.T, r io.Reader) []string {
	t.Helper()
	tr := tar.NewReader(r)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		n := hdr.Name
		if hdr.Linkname != "" {
			n += "->" + hdr.Linkname
		}
		names = append(names, n)
	}
}

type entry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func makeTar(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ, mode := e.typ, e.mode
		if typ == 0 {
			typ = tar.TypeReg
		}
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: mode, Linkname: e.link, Size: int64(len(e.body))}
		if typ != tar.TypeReg {
			hdr.Size = 0
		}
		must(t, tw.WriteHeader(hdr))
		io.WriteString(tw, e.body)
	}
	must(t, tw.Close())
	return buf.Bytes()
}

// tree describes every path under dir: "name:mode[:content or ->link]".
func tree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s := rel + ":" + modeString(fi.Mode())
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			s += ":->" + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			s += ":" + string(b)
		}
		out = append(out, s)
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestFilesTarRoundTrip(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.put("src/a.txt", "a", "mode", "0600")
	a.put("src/sub/deep/b.sh", "#!/bin/sh", "mode", "0755")
	a.put("src/empty", "")
	must(t, os.Mkdir(filepath.Join(a.cwd, "src", "emptydir"), 0o700))
	must(t, os.Symlink("../a.txt", filepath.Join(a.cwd, "src", "sub", "link")))
	want := tree(t, filepath.Join(a.cwd, "src"))

	resp := a.do("GET", "/files/tar?"+q("src"), nil)
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET tar: %d %s", resp.StatusCode, data)
	}
	names := strings.Join(readTar(t, bytes.NewReader(data)), ",")
	if names != "a.txt,empty,emptydir/,sub/,sub/deep/,sub/deep/b.sh,sub/link->../a.txt" {
		t.Fatalf("tar entries: %s", names)
	}
	// Into a directory that does not exist yet (parents by default).
	var info wire.FileInfo
	a.call("PUT", "/files/tar?"+q("copy/of/src"), data, http.StatusOK, &info)
	if info.Type != "dir" || info.Path != filepath.Join(a.cwd, "copy/of/src") {
		t.Fatalf("PUT tar: %+v", info)
	}
	if got := tree(t, filepath.Join(a.cwd, "copy/of/src")); got != want {
		t.Fatalf("extracted\n%s\nwant\n%s", got, want)
	}
	// Gzip-compressed, merged into an existing directory: files replaced,
	// others kept.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(makeTar(t, entry{name: "a.txt", body: "A"}, entry{name: "sub/", typ: tar.TypeDir, mode: 0o755}, entry{name: "sub/new", body: "n"}))
	zw.Close()
	a.call("PUT", "/files/tar?"+q("src"), gz.Bytes(), http.StatusOK, nil)
	if a.get("src/a.txt") != "A" || a.get("src/sub/new") != "n" || a.get("src/sub/deep/b.sh") != "#!/bin/sh" {
		t.Fatal("merge into an existing directory")
	}
	a.callErr("PUT", "/files/tar?"+q("none/x", "parents", "false"), makeTar(t, entry{name: "f"}), http.StatusNotFound, "PARENT_NOT_FOUND")
	a.callErr("GET", "/files/tar?"+q("src/a.txt"), nil, http.StatusBadRequest, "NOT_A_DIRECTORY")
	a.callErr("GET", "/files/tar?"+q("nope"), nil, http.StatusNotFound, "FILE_NOT_FOUND")
	noUploadLeftovers(t, a.cwd)
}

// TestFilesTarRefused: a tar that would write outside its directory, or
// holds what cannot be extracted, is refused whole and changes nothing.
func TestFilesTarRefused(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	a.put("dst/keep", "keep")
	a.put("outside", "outside")
	must(t, os.Symlink("..", filepath.Join(a.cwd, "dst", "up")))
	before, outsideBefore := tree(t, filepath.Join(a.cwd, "dst")), tree(t, a.cwd)
	ok := entry{name: "fine.txt", body: "fine"} // first, so refusals come mid-stream
	for _, c := range []struct {
		code    string
		entries []entry
	}{
		{"TAR_UNSAFE_PATH", []entry{ok, {name: "../outside", body: "x"}}},
		{"TAR_UNSAFE_PATH", []entry{ok, {name: "a/../../outside", body: "x"}}},
		{"TAR_UNSAFE_PATH", []entry{ok, {name: "/etc/x", body: "x"}}},
		{"TAR_UNSAFE_PATH", []entry{ok, {name: "l", typ: tar.TypeSymlink, link: "/"}, {name: "l/outside", body: "x"}}},
		{"TAR_UNSAFE_PATH", []entry{ok, {name: "l", typ: tar.TypeSymlink, link: ".."}, {name: "l/x/y", body: "x"}}},
		{"TAR_UNSAFE_PATH", []entry{ok, {name: "h", typ: tar.TypeLink, link: "../outside"}}},
		{"TAR_UNSAFE_PATH", []entry{ok, {name: "h", typ: tar.TypeLink, link: "keep"}}}, // not in the tar
		{"TAR_UNSUPPORTED_ENTRY", []entry{ok, {name: "dev", typ: tar.TypeChar}}},
		{"TAR_UNSUPPORTED_ENTRY", []entry{ok, {name: "p", typ: tar.TypeFifo}}},
	} {
		a.callErr("PUT", "/files/tar?"+q("dst"), makeTar(t, c.entries...), http.StatusBadRequest, wire.Code(c.code))
	}
	data := makeTar(t, ok, entry{name: "big", body: strings.Repeat("x", 10000)})
	a.callErr("PUT", "/files/tar?"+q("dst"), data[:5000], http.StatusBadRequest, "TAR_INVALID")
	a.callErr("PUT", "/files/tar?"+q("dst"), []byte("not a tar at all, not at all"), http.StatusBadRequest, "TAR_INVALID")
	if got := tree(t, filepath.Join(a.cwd, "dst")); got != before {
		t.Fatalf("a refused tar changed the directory:\n%s\nwas\n%s", got, before)
	}
	if got := tree(t, a.cwd); got != outsideBefore {
		t.Fatalf("a refused tar changed files:\n%s\nwas\n%s", got, outsideBefore)
	}
	// A directory in the tar replaces a file or symlink, never follows it.
	a.call("PUT", "/files/tar?"+q("dst"), makeTar(t, entry{name: "keep/", typ: tar.TypeDir, mode: 0o750}, entry{name: "keep/x"}, entry{name: "up/y"}), http.StatusOK, nil)
	if got := tree(t, filepath.Join(a.cwd, "dst")); got != "keep/x:0644: keep:0750 up/y:0644: up:0755" {
		t.Fatalf("directories over a file and a symlink: %s", got)
	}
	if _, err := os.Stat(filepath.Join(a.cwd, "y")); err == nil {
		t.Fatal("an entry was written through a symlink")
	}
	must(t, os.MkdirAll(filepath.Join(a.cwd, "dst2", "isdir"), 0o755))
	before = tree(t, filepath.Join(a.cwd, "dst2"))
	a.callErr("PUT", "/files/tar?"+q("dst2"), makeTar(t, ok, entry{name: "isdir", body: "x"}), http.StatusConflict, "TAR_CONFLICT")
	if got := tree(t, filepath.Join(a.cwd, "dst2")); got != before {
		t.Fatalf("a refused tar changed the directory:\n%s\nwas\n%s", got, before)
	}
	if b, _ := os.ReadFile(filepath.Join(a.cwd, "outside")); string(b) != "outside" {
		t.Fatal("a file outside the directory changed")
	}
	noUploadLeftovers(t, a.cwd)
}
