package packaging

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/sbxhq/sbx/internal/version"
)

// TestOCIImagesAreReproducible runs scripts/build-oci.sh twice, the first
// time with an empty cache (every package unpacked) and the second with
// the Debian layer it cached, and compares both archives byte for byte.
// Then it reads each archive both ways, as docker load (manifest.json)
// and as ctr import (the OCI layout's index.json) do: the same valid
// image, named as deploy/kubernetes names it, holding what the host runs.
func TestOCIImagesAreReproducible(t *testing.T) {
	for _, p := range []string{"git", "go", "apt-get", "apt-cache", "dpkg"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is needed: %v", p, err)
		}
	}
	cache := t.TempDir()
	var runs [2][]string
	for i := range runs {
		cmd := exec.Command("../scripts/build-oci.sh", filepath.Join(t.TempDir(), "oci"))
		cmd.Env = append(os.Environ(), "SBX_OCI_CACHE="+cache)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("build-oci.sh: %v\n%s", err, stderr.String())
		}
		runs[i] = strings.Fields(string(out))
		if cached := strings.Contains(stderr.String(), "Debian layer cached"); cached != (i == 1) {
			t.Errorf("build %d: Debian layer from the cache: %v, want %v\n%s", i+1, cached, i == 1, stderr.String())
		}
	}
	if len(runs[0]) != 2 || len(runs[1]) != 2 {
		t.Fatalf("build-oci.sh printed %q and %q, want the host's and the gateway's archive", runs[0], runs[1])
	}
	for i := range runs[0] {
		a, errA := os.ReadFile(runs[0][i])
		b, errB := os.ReadFile(runs[1][i])
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between a cold and a cached build", filepath.Base(runs[0][i]))
		}
	}

	host := readArchive(t, runs[0][0], "ghcr.io/sbxhq/sbx-host:"+version.Version)
	files := imageFiles(t, host)
	// What sbx serve runs (internal/doctor/programs.go), where Debian puts
	// it (mkoci fails a build that lacks a library one of them links), and
	// the packages' copyright files; no manuals.
	for _, f := range []string{"usr/local/bin/sbx", "usr/local/bin/sbx-agent", "usr/local/lib/sbx/runsc",
		"usr/sbin/runc", "usr/sbin/nft", "bin/ip", "sbin/mkfs.ext4", "bin/busybox", "usr/bin/unshare", "bin/mount",
		"usr/share/doc/runc/copyright", "usr/share/doc/libnftables1/copyright"} {
		if _, ok := files[f]; !ok {
			t.Errorf("the host image has no /%s", f)
		}
	}
	for f := range files {
		if strings.HasPrefix(f, "usr/share/man/") || strings.HasSuffix(f, "changelog.Debian.gz") {
			t.Errorf("the host image has /%s", f)
		}
	}
	if h := files["usr/local/bin/sbx"]; h != nil && h.Mode&0o111 == 0 {
		t.Errorf("/usr/local/bin/sbx is not executable: %o", h.Mode)
	}
	cfg, err := host.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/usr/local/bin/sbx"}) || !slices.Equal(cfg.Config.Cmd, []string{"serve"}) ||
		cfg.Architecture != runtime.GOARCH || cfg.Config.Labels["org.opencontainers.image.version"] != version.Version {
		t.Errorf("host image config: %+v", cfg)
	}

	gateway := readArchive(t, runs[0][1], "ghcr.io/sbxhq/sbx-gateway:"+version.Version)
	gwFiles := imageFiles(t, gateway)
	var regular []string
	for name, h := range gwFiles {
		if h.Typeflag == tar.TypeReg {
			regular = append(regular, name)
		}
	}
	if !slices.Equal(regular, []string{"usr/local/bin/sbx"}) {
		t.Errorf("the gateway image's files are %q, want sbx alone", regular)
	}
}

// readArchive reads an archive as docker load and as ctr import would and
// checks that both find the same valid image, called want.
func readArchive(t *testing.T, path, want string) v1.Image {
	t.Helper()
	tag, err := name.NewTag(want)
	if err != nil {
		t.Fatal(err)
	}
	docker, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("%s as docker load reads it (manifest.json, %s): %v", path, want, err)
	}
	if err := validate.Image(docker); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	dir := t.TempDir()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, h.Name)
		if h.Typeflag == tar.TypeDir {
			os.MkdirAll(dst, 0o755)
			continue
		}
		w, err := os.Create(dst)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(w, tr)
		w.Close()
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("%s as an OCI layout: %v", path, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations["io.containerd.image.name"] != want ||
		im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != version.Version {
		t.Fatalf("%s: index.json %+v, want one image called %s", path, im.Manifests, want)
	}
	oci, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	// manifest.json carries no manifest (docker load makes its own), so the
	// two agree on what Docker calls the image's id, its config, and layers.
	if err := validate.Image(oci); err != nil {
		t.Fatalf("%s as an OCI layout: %v", path, err)
	}
	c1, _ := docker.ConfigName()
	c2, _ := oci.ConfigName()
	l1, _ := docker.Layers()
	l2, _ := oci.Layers()
	if c1 != c2 || len(l1) != len(l2) {
		t.Fatalf("%s: manifest.json's image (config %s, %d layers) is not index.json's (config %s, %d layers)", path, c1, len(l1), c2, len(l2))
	}
	for i := range l1 {
		d1, _ := l1[i].Digest()
		d2, _ := l2[i].Digest()
		if d1 != d2 {
			t.Errorf("%s: layer %d is %s in manifest.json, %s in index.json", path, i, d1, d2)
		}
	}
	return docker
}

// imageFiles are the headers of the image's files, by path, as a
// container sees them (its layers in order).
func imageFiles(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		} else if err != nil {
			t.Fatal(err)
		}
		files[strings.Trim(h.Name, "/")] = h
	}
}
