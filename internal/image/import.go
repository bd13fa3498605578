package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/sbxhq/sbx/internal/diskspace"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

const expected = "expected a tar stream (plain, gzip or zstd) of a root filesystem, an OCI image layout or a `docker save` archive"

func invalidImage(format string, args ...any) error {
	return errdefs.Invalid(wire.CodeInvalidImage, format, args...)
}

// Import reads one tar stream, optionally gzip- or zstd-compressed, and stores
// it as image name, replacing any image of that name. The stream is one of:
//   - an OCI image layout (oci-layout and index.json at the root); the
//     linux/amd64 image, or the only image, is imported;
//   - a `docker save` archive (manifest.json at the root) holding one image;
//   - anything else: a root filesystem, imported as a single layer.
func (m *Manager) Import(ctx context.Context, name string, r io.Reader) (*store.Image, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := m.disk.Check("import an image"); err != nil {
		return nil, err
	}
	return m.save(ctx, name, "import", func() (*store.Image, error) { return m.importStream(ctx, r) })
}

// save builds an image and writes its record. build returns the image with its
// layers pinned (see reuse and commitLayer); they are unpinned once the record
// is written, under m.mu, so a removal sees either the record or the pins.
func (m *Manager) save(ctx context.Context, name, source string, build func() (*store.Image, error)) (*store.Image, error) {
	img, err := build()
	if diskspace.IsNoSpace(err) {
		return nil, diskspace.Full(err, "store an image")
	}
	if err != nil {
		return nil, err
	}
	img.Name, img.Source, img.CreatedAt = name, source, time.Now().UTC()
	m.mu.Lock()
	err = m.rec.PutImage(ctx, img)
	m.unpinLocked(img.Layers)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return img, nil
}

// importStream spools r to a file (the image formats need random access) and
// builds the image it holds. The record is not stored.
func (m *Manager) importStream(ctx context.Context, r io.Reader) (*store.Image, error) {
	work, err := os.MkdirTemp(m.tmpDir, "import-")
	if err != nil {
		return nil, errdefs.Internal(err, "importing image")
	}
	defer os.RemoveAll(work)
	spool := filepath.Join(work, "image.tar")
	if err := spoolTar(ctx, r, spool); err != nil {
		return nil, err
	}
	kind, err := classify(spool)
	if err != nil {
		return nil, err
	}
	switch kind {
	case kindOCI:
		dir := filepath.Join(work, "layout")
		if err := unpackFile(spool, dir); err != nil {
			return nil, err
		}
		idx, err := layout.ImageIndexFromPath(dir)
		if err != nil {
			return nil, invalidImage("reading OCI image layout: %v", err)
		}
		img, err := pickImage(idx, 0)
		if err != nil {
			return nil, err
		}
		return m.fromImage(ctx, img, work, localReadErr)
	case kindDocker:
		img, err := tarball.Image(func() (io.ReadCloser, error) { return os.Open(spool) }, nil)
		if err != nil {
			return nil, invalidImage("reading docker save archive (it must hold exactly one image): %v", err)
		}
		return m.fromImage(ctx, img, work, localReadErr)
	default:
		return m.fromRootfs(spool, work)
	}
}

// localReadErr makes an error reading a local archive an Invalid one; errdefs
// errors (a refused entry, a disk failure) keep their kind.
func localReadErr(err error) error {
	var e *errdefs.Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return invalidImage("reading image: %v", err)
}

// spoolTar copies r, decompressed, to the file dst.
func spoolTar(ctx context.Context, r io.Reader, dst string) error {
	br := bufio.NewReader(&ctxReader{ctx, r})
	magic, _ := br.Peek(4)
	var src io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return invalidImage("reading gzip stream: %v", err)
		}
		defer zr.Close()
		src = zr
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br)
		if err != nil {
			return invalidImage("reading zstd stream: %v", err)
		}
		defer zr.Close()
		src = zr
	}
	f, err := os.Create(dst)
	if err != nil {
		return errdefs.Internal(err, "spooling image")
	}
	rs := &srcReader{r: src}
	_, err = io.Copy(f, rs)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case rs.err != nil:
		return invalidImage("reading image stream: %v", err)
	default:
		return errdefs.Internal(err, "spooling image")
	}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

type archiveKind int

const (
	kindRootfs archiveKind = iota
	kindOCI
	kindDocker
)

// rootfsDirs are names whose presence at the root makes a tar a root
// filesystem even if it has a manifest.json.
var rootfsDirs = []string{"bin", "etc", "usr", "lib", "sbin", "var", "dev", "proc", "sys", "root", "home", "tmp"}

// classify reads every header of the tar file, so a corrupt, truncated or
// empty archive is refused before anything is written.
func classify(file string) (archiveKind, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, errdefs.Internal(err, "reading image")
	}
	defer f.Close()
	top := map[string]bool{}
	entries := 0
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil && err != tar.ErrInsecurePath {
			return 0, invalidImage("not a valid image archive (%s): %v", expected, err)
		}
		entries++
		name := path.Clean("./" + strings.TrimLeft(hdr.Name, "/"))
		top[strings.Split(name, "/")[0]] = true
	}
	if entries == 0 {
		return 0, invalidImage("the image archive is empty; %s", expected)
	}
	if top["oci-layout"] && top["index.json"] {
		return kindOCI, nil
	}
	if top["manifest.json"] {
		for _, d := range rootfsDirs {
			if top[d] {
				return kindRootfs, nil
			}
		}
		return kindDocker, nil
	}
	return kindRootfs, nil
}

func unpackFile(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return errdefs.Internal(err, "reading image")
	}
	defer f.Close()
	if err := os.Mkdir(dir, 0o700); err != nil {
		return errdefs.Internal(err, "reading image")
	}
	_, _, err = unpack(f, dir)
	return localReadErr(err)
}

// fromRootfs imports a root filesystem tar as a one-layer image, staging it
// in work.
func (m *Manager) fromRootfs(file, work string) (*store.Image, error) {
	hex, size, err := fileDigest(file)
	if err != nil {
		return nil, err
	}
	if _, ok := m.reuse(hex); !ok {
		dir, err := os.MkdirTemp(work, "layer-")
		if err != nil {
			return nil, errdefs.Internal(err, "importing image")
		}
		f, err := os.Open(file)
		if err != nil {
			return nil, errdefs.Internal(err, "importing image")
		}
		defer f.Close()
		if _, _, err := unpack(f, dir); err != nil {
			return nil, localReadErr(err)
		}
		if err := m.commitLayer(dir, hex, size); err != nil {
			return nil, err
		}
	}
	return &store.Image{ID: "sha256:" + hex, Layers: []string{"sha256:" + hex}, SizeBytes: size}, nil
}

func fileDigest(file string) (string, int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", 0, errdefs.Internal(err, "reading image")
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, errdefs.Internal(err, "reading image")
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// fromImage unpacks the layers of img that are not present yet and builds its
// record. readErr classifies errors reading img (local file or registry).
// Layers are staged in work, which the caller removes, and committed only once
// all have unpacked, so a failure leaves nothing under layers/.
func (m *Manager) fromImage(ctx context.Context, img v1.Image, work string, readErr func(error) error) (_ *store.Image, err error) {
	id, err := img.ConfigName()
	if err != nil {
		return nil, readErr(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, readErr(err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, readErr(err)
	}
	out := &store.Image{ID: id.String(), Config: store.ImageConfig{
		Env:        cfg.Config.Env,
		Entrypoint: cfg.Config.Entrypoint,
		Cmd:        cfg.Config.Cmd,
		WorkingDir: cfg.Config.WorkingDir,
		User:       cfg.Config.User,
	}}
	type staged struct {
		dir, hex string
		size     int64
	}
	var todo []staged
	var pinned []string
	defer func() {
		if err != nil {
			m.mu.Lock()
			m.unpinLocked(pinned)
			m.mu.Unlock()
		}
	}()
	sizes := map[string]int64{}
	for i, l := range layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		diffID, err := l.DiffID()
		if err != nil {
			return nil, readErr(err)
		}
		if diffID.Algorithm != "sha256" || !hexRE.MatchString(diffID.Hex) {
			return nil, invalidImage("layer %d has an unsupported digest %q", i, diffID)
		}
		size, ok := sizes[diffID.Hex]
		if !ok {
			if size, ok = m.reuse(diffID.Hex); ok {
				pinned = append(pinned, diffID.Hex)
			}
		}
		if !ok {
			dir, err := os.MkdirTemp(work, "layer-")
			if err != nil {
				return nil, errdefs.Internal(err, "importing image")
			}
			var hex string
			hex, size, err = unpackLayer(l, dir)
			if err != nil {
				var re *readError
				if errors.As(err, &re) {
					return nil, readErr(fmt.Errorf("layer %d: %w", i, re.err))
				}
				return nil, err
			}
			if hex != diffID.Hex {
				return nil, invalidImage("layer %d: its content has digest sha256:%s, not %s as the image says", i, hex, diffID)
			}
			todo = append(todo, staged{dir, hex, size})
		}
		sizes[diffID.Hex] = size
		out.Layers = append(out.Layers, diffID.String())
		out.SizeBytes += size
	}
	for _, s := range todo {
		if err := m.commitLayer(s.dir, s.hex, s.size); err != nil {
			return nil, err
		}
		pinned = append(pinned, s.hex)
	}
	return out, nil
}

func unpackLayer(l v1.Layer, dir string) (string, int64, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return "", 0, &readError{err}
	}
	hex, size, err := unpack(rc, dir)
	// Close reports a digest mismatch of a verified stream.
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = &readError{cerr}
	}
	return hex, size, err
}

// pickImage chooses the linux/amd64 image of an index, or its only image,
// looking into nested indexes.
func pickImage(idx v1.ImageIndex, depth int) (v1.Image, error) {
	if depth > 3 {
		return nil, invalidImage("OCI image index nests too deep")
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, invalidImage("reading OCI image index: %v", err)
	}
	var images []v1.Descriptor
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, invalidImage("reading OCI image index %s: %v", d.Digest, err)
			}
			img, err := pickImage(child, depth+1)
			if err == nil {
				return img, nil
			}
		case d.MediaType.IsImage():
			images = append(images, d)
		}
	}
	var pick *v1.Descriptor
	for i, d := range images {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == "amd64" {
			pick = &images[i]
			break
		}
	}
	if pick == nil && len(images) == 1 {
		pick = &images[0]
	}
	if pick == nil {
		return nil, invalidImage("the OCI image layout holds %d images and none for linux/amd64", len(images))
	}
	img, err := idx.Image(pick.Digest)
	if err != nil {
		return nil, invalidImage("reading OCI image %s: %v", pick.Digest, err)
	}
	return img, nil
}
