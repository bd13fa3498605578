package image

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
)

// fakeRecords is an in-memory Records.
type fakeRecords struct {
	mu   sync.Mutex
	imgs map[string]store.Image
	puts int
}

func newFakeRecords() *fakeRecords { return &fakeRecords{imgs: map[string]store.Image{}} }

func (f *fakeRecords) PutImage(_ context.Context, img *store.Image) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.imgs[img.Name] = *img
	f.puts++
	return nil
}

func (f *fakeRecords) GetImage(_ context.Context, name string) (*store.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	img, ok := f.imgs[name]
	if !ok {
		return nil, errdefs.NotFound("IMAGE_NOT_FOUND", "image %q not found", name)
	}
	return &img, nil
}

func (f *fakeRecords) ListImages(context.Context) ([]*store.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*store.Image
	for _, img := range f.imgs {
		out = append(out, &img)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeRecords) DeleteImage(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.imgs[name]; !ok {
		return errdefs.NotFound("IMAGE_NOT_FOUND", "image %q not found", name)
	}
	delete(f.imgs, name)
	return nil
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// newTestManager returns a Manager on a fresh data dir.
func newTestManager(t *testing.T) (*Manager, *fakeRecords, string) {
	t.Helper()
	needRoot(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	rec := newFakeRecords()
	m, err := New(dataDir, rec)
	if err != nil {
		t.Fatal(err)
	}
	return m, rec, dataDir
}

var testTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// ent is one tar entry; Body sets Size for regular files.
type ent struct {
	tar.Header
	Body string
}

func file(name, body string) ent {
	return ent{Header: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644}, Body: body}
}

func dirEnt(name string) ent {
	return ent{Header: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

func symlink(name, target string) ent {
	return ent{Header: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}}
}

func makeTar(t *testing.T, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := e.Header
		if h.ModTime.IsZero() {
			h.ModTime = testTime
		}
		h.Size = int64(len(e.Body))
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// layerOf turns tar bytes into a (gzip-compressed) v1.Layer.
func layerOf(t *testing.T, tarBytes []byte) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarBytes)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// imageOf builds an image from layer tars with a config.
func imageOf(t *testing.T, cfg v1.Config, tars ...[]byte) v1.Image {
	t.Helper()
	img := empty.Image
	for _, tb := range tars {
		var err error
		if img, err = mutate.AppendLayers(img, layerOf(t, tb)); err != nil {
			t.Fatal(err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config = cfg
	cf.OS, cf.Architecture = "linux", "amd64"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// assertCode fails unless err carries kind and code.
func assertCode(t *testing.T, err error, kind errdefs.Kind, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if errdefs.KindOf(err) != kind || string(errdefs.CodeOf(err)) != code {
		t.Fatalf("got %v (kind %d, code %s), want kind %d code %s", err, errdefs.KindOf(err), errdefs.CodeOf(err), kind, code)
	}
}

// assertEmptyDirs fails if any of dirs has entries.
func assertEmptyDirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 0 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("%s is not empty: %v", d, names)
		}
	}
}
