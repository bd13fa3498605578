package image

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
)

func TestRemove(t *testing.T) {
	m, rec, dataDir := newTestManager(t)
	ctx := context.Background()
	l1 := makeTar(t, file("one", "1"))
	l2 := makeTar(t, file("two", "2"))
	l3 := makeTar(t, file("three", "3"))
	a, err := m.Import(ctx, "a", bytes.NewReader(mustDockerSave(t, imageOf(t, testConfig, l1, l2))))
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Import(ctx, "b", bytes.NewReader(mustDockerSave(t, imageOf(t, testConfig, l2, l3))))
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Import(ctx, "c", bytes.NewReader(makeTar(t, file("four", "4"))))
	if err != nil {
		t.Fatal(err)
	}
	present := func(layer string) bool {
		_, ok := m.layerSize(layerHex(layer))
		_, err := os.Stat(m.LayerDirs([]string{layer})[0])
		return ok && err == nil
	}
	var asked [][]string
	claimC := func(layers []string) bool {
		asked = append(asked, layers)
		return slices.Contains(layers, c.Layers[0])
	}

	// a's first layer goes; the one b shares stays.
	if err := m.Remove(ctx, "a", claimC); err != nil {
		t.Fatal(err)
	}
	if present(a.Layers[0]) || !present(a.Layers[1]) || !present(b.Layers[1]) {
		t.Fatalf("after removing a: %v %v %v", present(a.Layers[0]), present(a.Layers[1]), present(b.Layers[1]))
	}
	if len(asked) != 1 || !slices.Equal(asked[0], a.Layers[:1]) {
		t.Errorf("inUse asked %v, want only the unreferenced layer", asked)
	}
	// c's layer is claimed by a sandbox: the record goes, the layer stays.
	if err := m.Remove(ctx, "c", claimC); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.GetImage(ctx, "c"); !errdefs.Is(err, errdefs.KindNotFound) || !present(c.Layers[0]) {
		t.Fatalf("after removing c: record %v, layer present %v", err, present(c.Layers[0]))
	}
	if err := m.Remove(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	if present(b.Layers[0]) || present(b.Layers[1]) {
		t.Fatal("b's layers survived")
	}
	assertCode(t, m.Remove(ctx, "b", nil), errdefs.KindNotFound, "IMAGE_NOT_FOUND")
	assertCode(t, m.Remove(ctx, "B!", nil), errdefs.KindInvalid, "INVALID_IMAGE_NAME")

	// Prune drops c's layer once nothing claims it.
	if err := m.Prune(ctx, claimC); err != nil || !present(c.Layers[0]) {
		t.Fatalf("prune with claim: %v", err)
	}
	stray := filepath.Join(dataDir, "layers", strings.Repeat("ab", 32)+".size")
	if err := os.WriteFile(stray, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Prune(ctx, nil); err != nil {
		t.Fatal(err)
	}
	assertEmptyDirs(t, filepath.Join(dataDir, "layers"), filepath.Join(dataDir, "tmp"))
}

// A layer whose size file is gone (a crash in the middle of deleting it) is
// not present: the next import unpacks it again and completes it.
func TestHalfDeletedLayerIsRebuilt(t *testing.T) {
	m, _, _ := newTestManager(t)
	tb := makeTar(t, file("f", "x"))
	img, err := m.Import(context.Background(), "a", bytes.NewReader(tb))
	if err != nil {
		t.Fatal(err)
	}
	hex := layerHex(img.Layers[0])
	os.Remove(m.sizeFile(hex))
	if _, ok := m.layerSize(hex); ok {
		t.Fatal("layer without size file counts as present")
	}
	if _, err := m.Import(context.Background(), "b", bytes.NewReader(tb)); err != nil {
		t.Fatal(err)
	}
	if size, ok := m.layerSize(hex); !ok || size != int64(len(tb)) {
		t.Fatalf("layer size %d, %v", size, ok)
	}
}

// TestRemoveRacesImport imports and removes images sharing one layer from two
// goroutines. Whenever an import has returned, its layer must be on disk.
func TestRemoveRacesImport(t *testing.T) {
	m, _, dataDir := newTestManager(t)
	tb := makeTar(t, file("shared", "s"))
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, name := range []string{"x", "y"} {
		wg.Go(func() {
			for range 100 {
				img, err := m.Import(context.Background(), name, bytes.NewReader(tb))
				if err != nil {
					errs <- err
					return
				}
				if _, ok := m.layerSize(layerHex(img.Layers[0])); !ok {
					errs <- fmt.Errorf("%s: layer missing right after import", name)
					return
				}
				if err := m.Remove(context.Background(), name, nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	assertEmptyDirs(t, filepath.Join(dataDir, "layers"), filepath.Join(dataDir, "tmp"))
	if len(m.pins) != 0 {
		t.Fatalf("pins left: %v", m.pins)
	}
}
