package sandbox

import (
	"slices"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func TestImageMainOnlyForBuiltImages(t *testing.T) {
	cfg := store.ImageConfig{Entrypoint: []string{"/app"}, Cmd: []string{"-v"}}
	if got := imageMain(&store.Image{Source: store.SourceBuild, Config: cfg}); !slices.Equal(got, []string{"/app", "-v"}) {
		t.Fatalf("built image: main %q", got)
	}
	for _, src := range []string{"pull:debian:12", "import", "base", "build-cache"} {
		if got := imageMain(&store.Image{Source: src, Config: cfg}); got != nil {
			t.Fatalf("%s image: main %q, want none", src, got)
		}
	}
	// resolveLifecycle makes the image's main the sandbox's, restart policy
	// included; a request's own entrypoint wins.
	spec := store.Spec{Entrypoint: []string{"/app", "-v"}}
	if err := resolveLifecycle(&spec, wire.CreateSandboxRequest{RestartPolicy: wire.RestartAlways}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.Entrypoint, []string{"/app", "-v"}) || spec.RestartPolicy != wire.RestartAlways {
		t.Fatalf("from the image: %q restart %q", spec.Entrypoint, spec.RestartPolicy)
	}
	spec = store.Spec{Entrypoint: []string{"/app", "-v"}}
	if err := resolveLifecycle(&spec, wire.CreateSandboxRequest{Entrypoint: []string{"/own"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.Entrypoint, []string{"/own"}) || spec.RestartPolicy != wire.RestartNever {
		t.Fatalf("own entrypoint: %q restart %q", spec.Entrypoint, spec.RestartPolicy)
	}
}
