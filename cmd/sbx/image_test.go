package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// importDaemon records what each import sent: the tar entry names, or the raw
// body when it is not a tar stream.
func importDaemon(t *testing.T, got map[string][]string) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/images/import", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("name")
		body, _ := io.ReadAll(r.Body)
		tr := tar.NewReader(strings.NewReader(string(body)))
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				got[name] = []string{"raw:" + string(body)}
				break
			}
			got[name] = append(got[name], h.Name)
		}
		sort.Strings(got[name])
		reply(w, http.StatusCreated, sdk.Image{Name: name, ID: "sha256:abc", Layers: 1})
	})
	fakeDaemon(t, mux)
}

func TestImageImport(t *testing.T) {
	got := map[string][]string{}
	importDaemon(t, got)

	rootfs := t.TempDir()
	os.MkdirAll(filepath.Join(rootfs, "etc"), 0o755)
	os.WriteFile(filepath.Join(rootfs, "etc", "hostname"), []byte("x"), 0o644)
	r := runCLI(t, "", "image", "import", "-o", "json", "fromdir", rootfs)
	var img sdk.Image
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &img) != nil || img.Name != "fromdir" {
		t.Fatalf("dir import: %+v", r)
	}
	if strings.Join(got["fromdir"], ",") != "etc/,etc/hostname" {
		t.Errorf("dir import sent %q", got["fromdir"])
	}

	tarball := filepath.Join(t.TempDir(), "rootfs.tar.gz")
	os.WriteFile(tarball, []byte("not really gzip"), 0o644)
	if r := runCLI(t, "", "image", "import", "fromfile", tarball); r.code != 0 || !strings.Contains(r.stdout, "Name:") {
		t.Errorf("file import: %+v", r)
	}
	if got["fromfile"][0] != "raw:not really gzip" {
		t.Errorf("file import sent %q", got["fromfile"])
	}
	if r := runCLI(t, "stdin bytes", "image", "import", "fromstdin", "-"); r.code != 0 || got["fromstdin"][0] != "raw:stdin bytes" {
		t.Errorf("stdin import: %+v, sent %q", r, got["fromstdin"])
	}
	if r := runCLI(t, "", "image", "import", "x", "/does/not/exist"); r.code != 1 || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("missing path: %+v", r)
	}
}
