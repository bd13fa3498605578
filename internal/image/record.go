package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Record writes the image name over layers already present (an image
// build's: its base image's layers and committed ones), replacing any image
// of that name. Checking the layers and writing the record happen under
// m.mu, so a concurrent removal sees either the record or deletes a layer
// before the check, which then fails: never a record over a missing layer.
// The ID is the digest of the layers and the config.
func (m *Manager) Record(ctx context.Context, name, source string, layers []string, cfg store.ImageConfig) (*store.Image, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	blob, err := json.Marshal(struct {
		Layers []string
		Config store.ImageConfig
	}{layers, cfg})
	if err != nil {
		return nil, errdefs.Internal(err, "record image %s", name)
	}
	sum := sha256.Sum256(blob)
	img := &store.Image{Name: name, ID: "sha256:" + hex.EncodeToString(sum[:]), Layers: layers, Config: cfg,
		Source: source, CreatedAt: time.Now().UTC()}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range layers {
		size, ok := m.layerSize(layerHex(l))
		if !ok {
			return nil, errdefs.NotFound(wire.CodeImageNotFound, "record image %s: layer %s is gone", name, l)
		}
		img.SizeBytes += size
	}
	if err := m.rec.PutImage(ctx, img); err != nil {
		return nil, err
	}
	return img, nil
}
