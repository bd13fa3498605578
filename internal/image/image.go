// Package image keeps the read-only layers sandboxes start from and assembles
// them into a root filesystem.
//
// Terms: a layer is one unpacked tree under <data>/layers/<hex>, where hex is the
// sha256 of the layer's uncompressed tar (the OCI diffID without "sha256:").
// Layers are content-addressed and shared by every image and sandbox that lists
// them. An image is a record (store.Image) naming its layers bottom first.
//
// Contract:
//   - A directory under layers/ is always a complete layer: it is unpacked under
//     tmp/ and renamed into place, and renamed out to tmp/ before it is deleted.
//     New empties tmp/, so a crash leaves nothing half-made.
//   - A layer is present when both layers/<hex>/ and layers/<hex>.size exist; the
//     size file holds the uncompressed tar size, so a dedupe skip (even on pull,
//     without a download) still knows the image size.
//   - Imports, pulls and removals run in parallel. An import pins each layer it
//     reuses or adds until its record is written, so a removal never deletes a
//     layer that a record is about to reference.
package image

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/diskspace"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Records is the part of store.Store the image manager uses.
type Records interface {
	PutImage(ctx context.Context, img *store.Image) error
	GetImage(ctx context.Context, name string) (*store.Image, error)
	ListImages(ctx context.Context) ([]*store.Image, error)
	DeleteImage(ctx context.Context, name string) error
}

// Manager imports, pulls and removes images and owns the layer directories.
type Manager struct {
	layersDir string
	tmpDir    string
	rec       Records
	busybox   string // host busybox used by EnsureBase

	// mu orders the steps that make a layer used (reuse or commit, then the
	// record) against deleting unused layers. pins counts, per layer hex, the
	// unfinished imports that rely on it.
	mu   sync.Mutex
	pins map[string]int

	disk *diskspace.Guard // refuses imports below the data dir's reserve; nil: none
}

// GuardDisk makes imports and pulls refuse to start while the data dir's
// disk is below g's reserve, and report a full disk as 507.
func (m *Manager) GuardDisk(g *diskspace.Guard) { m.disk = g }

// New returns a Manager keeping layers under dataDir/layers. It empties
// dataDir/tmp, which holds only work a crash interrupted.
func New(dataDir string, rec Records) (*Manager, error) {
	m := &Manager{
		layersDir: filepath.Join(dataDir, "layers"),
		tmpDir:    filepath.Join(dataDir, "tmp"),
		rec:       rec,
		busybox:   HostBusybox,
		pins:      map[string]int{},
	}
	if err := os.RemoveAll(m.tmpDir); err != nil {
		return nil, errdefs.Internal(err, "cleaning %s", m.tmpDir)
	}
	// 0700: layers hold setuid files and devices owned by image uids.
	for _, d := range []string{m.layersDir, m.tmpDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, errdefs.Internal(err, "creating %s", d)
		}
	}
	return m, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:@-]{0,127}$`)

// ValidateName checks an image name.
func ValidateName(name string) error {
	if !nameRE.MatchString(name) {
		return errdefs.Invalid(wire.CodeInvalidImageName,
			"invalid image name %q: use 1 to 128 of a-z 0-9 . _ / : @ -, starting with a letter or digit", name)
	}
	return nil
}

// Get returns the image record with name.
func (m *Manager) Get(ctx context.Context, name string) (*store.Image, error) {
	return m.rec.GetImage(ctx, name)
}

// List returns every image record.
func (m *Manager) List(ctx context.Context) ([]*store.Image, error) {
	return m.rec.ListImages(ctx)
}

// LayerDirs maps layer digests to their host directories, keeping the order
// (bottom first, as in store.Image.Layers).
func (m *Manager) LayerDirs(layers []string) []string {
	dirs := make([]string, len(layers))
	for i, l := range layers {
		dirs[i] = m.layerDir(layerHex(l))
	}
	return dirs
}

// Remove deletes the image record, then each of its layers that no other image
// references and inUse does not claim. inUse is asked about one layer at a time
// (a one-element slice of "sha256:…" digests) and reports whether any sandbox
// still uses it; nil means nothing is in use. inUse must not call the Manager.
// A missing image gives the store's NotFound error.
func (m *Manager) Remove(ctx context.Context, name string, inUse func(layers []string) bool) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	img, err := m.rec.GetImage(ctx, name)
	if err != nil {
		return err
	}
	if err := m.rec.DeleteImage(ctx, name); err != nil {
		return err
	}
	return m.removeUnused(ctx, img.Layers, inUse)
}

// Prune deletes every layer on disk that no image references and inUse does not
// claim, such as the layers of an image replaced by a later import.
func (m *Manager) Prune(ctx context.Context, inUse func(layers []string) bool) error {
	ents, err := os.ReadDir(m.layersDir)
	if err != nil {
		return errdefs.Internal(err, "listing layers")
	}
	var all []string
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".size") // a size file alone is a crash mid-commit
		if hexRE.MatchString(name) {
			all = append(all, "sha256:"+name)
		}
	}
	return m.removeUnused(ctx, all, inUse)
}

// removeUnused deletes the candidate layers that no record references, no
// import has pinned and inUse does not claim. Holding m.mu from listing the
// records to the last delete orders it against save, which writes its record
// and unpins under m.mu too: either the record is seen or the pin is.
func (m *Manager) removeUnused(ctx context.Context, candidates []string, inUse func([]string) bool) error {
	trash, err := os.MkdirTemp(m.tmpDir, "rm-")
	if err != nil {
		return errdefs.Internal(err, "removing layers")
	}
	defer os.RemoveAll(trash) // the slow part, outside the lock

	m.mu.Lock()
	defer m.mu.Unlock()
	// Every team's images keep their layers, whoever removes this one.
	imgs, err := m.rec.ListImages(auth.System(ctx, "layers of every image"))
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, img := range imgs {
		for _, l := range img.Layers {
			keep[layerHex(l)] = true
		}
	}
	var errs []error
	for _, l := range candidates {
		hex := layerHex(l)
		if keep[hex] || m.pins[hex] > 0 || (inUse != nil && inUse([]string{"sha256:" + hex})) {
			continue
		}
		keep[hex] = true // a digest listed twice is deleted once
		if err := m.deleteLayer(hex, trash); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deleteLayer drops the size file first (the layer stops being present), then
// moves the tree out of layers/ in one rename so no half-deleted tree remains.
func (m *Manager) deleteLayer(hex, trash string) error {
	if err := os.Remove(m.sizeFile(hex)); err != nil && !os.IsNotExist(err) {
		return errdefs.Internal(err, "removing layer %s", hex)
	}
	if err := os.Rename(m.layerDir(hex), filepath.Join(trash, hex)); err != nil && !os.IsNotExist(err) {
		return errdefs.Internal(err, "removing layer %s", hex)
	}
	return nil
}

var hexRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// layerHex turns "sha256:<hex>" into <hex>; a bare hex passes through.
func layerHex(digest string) string {
	return filepath.Base(strings.TrimPrefix(digest, "sha256:"))
}

func (m *Manager) layerDir(hex string) string { return filepath.Join(m.layersDir, hex) }
func (m *Manager) sizeFile(hex string) string { return filepath.Join(m.layersDir, hex+".size") }

// layerSize returns the size of a present layer, or ok=false if it is absent.
func (m *Manager) layerSize(hex string) (size int64, ok bool) {
	b, err := os.ReadFile(m.sizeFile(hex))
	if err != nil {
		return 0, false
	}
	size, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, false
	}
	if fi, err := os.Lstat(m.layerDir(hex)); err != nil || !fi.IsDir() {
		return 0, false
	}
	return size, true
}

// reuse pins a present layer for an import and returns its size; ok is false
// if the layer is absent.
func (m *Manager) reuse(hex string) (size int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size, ok = m.layerSize(hex); ok {
		m.pins[hex]++
	}
	return size, ok
}

// commitLayer moves an unpacked tree staged under tmp/ to layers/<hex> and pins
// it. If another import got there first, the existing tree wins and staged is
// discarded. The size file goes first: a tree without it is not present.
func (m *Manager) commitLayer(staged, hex string, size int64) error {
	sizeTmp := staged + ".size"
	if err := os.WriteFile(sizeTmp, []byte(strconv.FormatInt(size, 10)+"\n"), 0o600); err != nil {
		return errdefs.Internal(err, "writing size of layer %s", hex)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := os.Rename(sizeTmp, m.sizeFile(hex)); err != nil {
		return errdefs.Internal(err, "writing size of layer %s", hex)
	}
	if err := os.Rename(staged, m.layerDir(hex)); err != nil {
		if fi, serr := os.Lstat(m.layerDir(hex)); serr != nil || !fi.IsDir() {
			return errdefs.Internal(err, "committing layer %s", hex)
		}
		// staged stays in the import's work dir, which the caller removes.
	}
	m.pins[hex]++
	return nil
}

// unpinLocked releases the pins an import took: one per distinct layer.
func (m *Manager) unpinLocked(layers []string) {
	seen := map[string]bool{}
	for _, l := range layers {
		hex := layerHex(l)
		if seen[hex] {
			continue
		}
		seen[hex] = true
		if m.pins[hex]--; m.pins[hex] <= 0 {
			delete(m.pins, hex)
		}
	}
}
