package image

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
)

var testConfig = v1.Config{
	Env:        []string{"PATH=/bin", "A=1"},
	Entrypoint: []string{"/bin/entry"},
	Cmd:        []string{"serve", "--port=1"},
	WorkingDir: "/app",
	User:       "1000:1000",
}

// twoLayerImage has files in two layers, the second overriding the first.
func twoLayerImage(t *testing.T) (v1.Image, [][]byte) {
	tars := [][]byte{
		makeTar(t, dirEnt("app/"), file("app/one", "1"), file("app/shared", "bottom")),
		makeTar(t, file("app/two", "2"), file("app/shared", "top")),
	}
	return imageOf(t, testConfig, tars...), tars
}

// checkImported compares a record with the image it came from.
func checkImported(t *testing.T, m *Manager, got *store.Image, img v1.Image, tars [][]byte) {
	t.Helper()
	id, _ := img.ConfigName()
	if got.ID != id.String() {
		t.Errorf("ID %s, want config digest %s", got.ID, id)
	}
	cf, _ := img.ConfigFile()
	var want []string
	var size int64
	for i, d := range cf.RootFS.DiffIDs {
		want = append(want, d.String())
		size += int64(len(tars[i]))
	}
	if !slices.Equal(got.Layers, want) {
		t.Errorf("layers %v, want %v", got.Layers, want)
	}
	if got.SizeBytes != size {
		t.Errorf("size %d, want %d", got.SizeBytes, size)
	}
	c := got.Config
	if !slices.Equal(c.Env, testConfig.Env) || !slices.Equal(c.Entrypoint, testConfig.Entrypoint) ||
		!slices.Equal(c.Cmd, testConfig.Cmd) || c.WorkingDir != "/app" || c.User != "1000:1000" {
		t.Errorf("config %+v, want %+v", c, testConfig)
	}
	dirs := m.LayerDirs(got.Layers)
	for i, wantFile := range []string{"app/one", "app/two"} {
		if _, err := os.Stat(filepath.Join(dirs[i], wantFile)); err != nil {
			t.Errorf("layer %d: %v", i, err)
		}
	}
}

func TestImportOCILayout(t *testing.T) {
	m, _, dataDir := newTestManager(t)
	img, tars := twoLayerImage(t)
	other, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	// An arm64 image first: the importer must pick linux/amd64, not the first.
	if err := p.AppendImage(other, layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"})); err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"})); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := TarDir(&buf, dir); err != nil {
		t.Fatal(err)
	}
	got, err := m.Import(context.Background(), "oci", &buf)
	if err != nil {
		t.Fatal(err)
	}
	checkImported(t, m, got, img, tars)
	if got.Source != "import" {
		t.Errorf("source %q", got.Source)
	}
	assertEmptyDirs(t, filepath.Join(dataDir, "tmp"))

	// Two images and neither is linux/amd64: refused with a clear error.
	dir2 := t.TempDir()
	p2, _ := layout.Write(dir2, empty.Index)
	p2.AppendImage(other, layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
	p2.AppendImage(other, layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "s390x"}))
	buf.Reset()
	if err := TarDir(&buf, dir2); err != nil {
		t.Fatal(err)
	}
	_, err = m.Import(context.Background(), "oci2", &buf)
	assertCode(t, err, errdefs.KindInvalid, "INVALID_IMAGE")
}

func TestImportDockerSave(t *testing.T) {
	m, _, _ := newTestManager(t)
	img, tars := twoLayerImage(t)
	var buf bytes.Buffer
	if err := tarball.Write(name.MustParseReference("example.com/app:v1"), img, &buf); err != nil {
		t.Fatal(err)
	}
	got, err := m.Import(context.Background(), "docker", &buf)
	if err != nil {
		t.Fatal(err)
	}
	checkImported(t, m, got, img, tars)
	// The merged view of the two layers is what an overlay mount shows.
	target := t.TempDir()
	if err := MountRootfs(m.LayerDirs(got.Layers), filepath.Join(target, "u"), filepath.Join(target, "w"), filepath.Join(target, "m")); err != nil {
		t.Fatal(err)
	}
	defer Unmount(filepath.Join(target, "m"))
	if b, _ := os.ReadFile(filepath.Join(target, "m/app/shared")); string(b) != "top" {
		t.Errorf("app/shared = %q, want the top layer's", b)
	}
}

func TestImportCorruptOCILayer(t *testing.T) {
	m, _, dataDir := newTestManager(t)
	img, _ := twoLayerImage(t)
	dir := t.TempDir()
	p, _ := layout.Write(dir, empty.Index)
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	// Truncate the second layer's blob: the first layer unpacks, the second
	// fails, and neither may be left under layers/.
	layers, _ := img.Layers()
	d, _ := layers[1].Digest()
	blob := filepath.Join(dir, "blobs", d.Algorithm, d.Hex)
	b, _ := os.ReadFile(blob)
	if err := os.WriteFile(blob, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := TarDir(&buf, dir); err != nil {
		t.Fatal(err)
	}
	_, err := m.Import(context.Background(), "corrupt", &buf)
	assertCode(t, err, errdefs.KindInvalid, "INVALID_IMAGE")
	assertEmptyDirs(t, filepath.Join(dataDir, "layers"), filepath.Join(dataDir, "tmp"))
}

// countingRegistry serves registry.New and counts layer blob downloads.
func countingRegistry(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var blobs atomic.Int64
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			blobs.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &blobs
}

func TestPull(t *testing.T) {
	m, rec, _ := newTestManager(t)
	s, blobs := countingRegistry(t)
	host := strings.TrimPrefix(s.URL, "http://")
	img, tars := twoLayerImage(t)
	other, _ := random.Image(256, 1)
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: other, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
	)
	ref := host + "/test/app:v1"
	if err := remote.WriteIndex(mustRef(t, ref), idx); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	blobs.Store(0)
	got, err := m.Pull(ctx, ref, "")
	if err != nil {
		t.Fatal(err)
	}
	checkImported(t, m, got, img, tars)
	if got.Name != ref || got.Source != "pull:"+ref {
		t.Errorf("name %q source %q", got.Name, got.Source)
	}
	if _, err := rec.GetImage(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if n := blobs.Load(); n != 3 { // config + two layers
		t.Errorf("first pull fetched %d blobs, want 3", n)
	}
	// Present layers are not downloaded again, and the size is still known.
	blobs.Store(0)
	again, err := m.Pull(ctx, ref, "copy")
	if err != nil {
		t.Fatal(err)
	}
	if n := blobs.Load(); n != 1 {
		t.Errorf("second pull fetched %d blobs, want only the config", n)
	}
	if again.SizeBytes != got.SizeBytes || again.ID != got.ID {
		t.Errorf("second pull %+v, first %+v", again, got)
	}
}

func TestPullErrors(t *testing.T) {
	m, _, dataDir := newTestManager(t)
	ctx := context.Background()
	s, _ := countingRegistry(t)
	host := strings.TrimPrefix(s.URL, "http://")

	_, err := m.Pull(ctx, "not a ref!", "x")
	assertCode(t, err, errdefs.KindInvalid, "INVALID_IMAGE_REF")
	_, err = m.Pull(ctx, host+"/a:b", "Bad Name")
	assertCode(t, err, errdefs.KindInvalid, "INVALID_IMAGE_NAME")
	_, err = m.Pull(ctx, host+"/missing/repo:v1", "")
	assertCode(t, err, errdefs.KindNotFound, "IMAGE_NOT_FOUND")

	// Only arm64 in the index: there is nothing to run here.
	other, _ := random.Image(256, 1)
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: other, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
	if err := remote.WriteIndex(mustRef(t, host+"/arm:v1"), idx); err != nil {
		t.Fatal(err)
	}
	_, err = m.Pull(ctx, host+"/arm:v1", "")
	assertCode(t, err, errdefs.KindNotFound, "IMAGE_NOT_FOUND")

	// A registry that is gone.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadHost := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()
	_, err = m.Pull(ctx, deadHost+"/a:b", "")
	assertCode(t, err, errdefs.KindUnavailable, "REGISTRY_UNAVAILABLE")
	assertEmptyDirs(t, filepath.Join(dataDir, "layers"), filepath.Join(dataDir, "tmp"))
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustDockerSave(t *testing.T, img v1.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := tarball.Write(mustRef(t, "example.com/app:v1"), img, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
