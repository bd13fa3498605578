package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// writeArchive writes img as one tar holding an OCI image layout and
// Docker's manifest.json over the same blobs (main.go says why both).
func writeArchive(out, name, arch string, img v1.Image, mtime time.Time) error {
	tag := name[strings.LastIndex(name, ":")+1:]
	if !strings.Contains(name, ":") || strings.Contains(tag, "/") {
		return fmt.Errorf("-name %s: want registry/repository:tag", name)
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	mdigest, err := img.Digest()
	if err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	cdigest, err := img.ConfigName()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIManifestSchema1,
			Digest:    mdigest,
			Size:      int64(len(manifest)),
			Platform:  &v1.Platform{OS: "linux", Architecture: arch},
			Annotations: map[string]string{
				"io.containerd.image.name":          name,
				"org.opencontainers.image.ref.name": tag,
			},
		}},
	})
	if err != nil {
		return err
	}
	docker := []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: blob(cdigest), RepoTags: []string{name}}}

	f, err := os.Create(out + ".tmp")
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	put := func(name string, size int64, body io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: mtime}); err != nil {
			return err
		}
		_, err := io.Copy(tw, body)
		return err
	}
	putBytes := func(name string, b []byte) error { return put(name, int64(len(b)), bytes.NewReader(b)) }
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: mtime}); err != nil {
			return err
		}
	}
	if err := putBytes(blob(cdigest), config); err != nil {
		return err
	}
	seen := map[v1.Hash]bool{}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		docker[0].Layers = append(docker[0].Layers, blob(d))
		if seen[d] {
			continue
		}
		seen[d] = true
		size, err := l.Size()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		err = put(blob(d), size, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	if err := putBytes(blob(mdigest), manifest); err != nil {
		return err
	}
	dockerJSON, err := json.Marshal(docker)
	if err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		body []byte
	}{
		{"index.json", index},
		{"manifest.json", dockerJSON},
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	} {
		if err := putBytes(p.name, p.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(out+".tmp", out)
}
