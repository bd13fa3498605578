package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// A live bucket mount is refused, with nothing mounted, for a sandbox that
// does not run, for class gvisor, for a bad path, and an unmount of a path
// with no live mount says so.
func TestMountBucketRefusals(t *testing.T) {
	m, _, st := newFakeManager(t)
	ctx := auth.System(context.Background(), "test")
	for _, sb := range []*store.Sandbox{
		{ID: "sbx-stopped", State: wire.StateStopped, Spec: store.Spec{Image: "base"}},
		{ID: "sbx-gvisor", State: wire.StateStarted, Spec: store.Spec{Image: "base", Class: ClassGVisor}},
		{ID: "sbx-started", State: wire.StateStarted, Spec: store.Spec{Image: "base"}},
	} {
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	b := wire.BucketMount{Bucket: "data", Path: "/mnt/data", Endpoint: "https://s3.example.com", AccessKeyID: "a", SecretAccessKey: "s"}
	withPath := func(p string) wire.BucketMount { c := b; c.Path = p; return c }
	cases := []struct {
		sb   string
		b    wire.BucketMount
		code wire.Code
	}{
		{"sbx-stopped", b, wire.CodeSandboxNotStarted},
		{"sbx-gvisor", b, wire.CodeLiveMountUnsupported},
		{"sbx-started", b, wire.CodeSandboxNotStarted}, // a record, no instance
		{"sbx-started", withPath("relative"), wire.CodeInvalidVolume},
		{"sbx-started", withPath("/proc/x"), wire.CodeInvalidVolume},
		{"sbx-started", wire.BucketMount{Bucket: "data", Path: "/mnt/data", Endpoint: "https://s3.example.com"}, wire.CodeInvalidBucketMount},
	}
	for _, c := range cases {
		_, err := m.MountBucket(ctx, c.sb, c.b)
		if errdefs.CodeOf(err) != c.code {
			t.Errorf("mount %+v into %s: %v, want %s", c.b, c.sb, err, c.code)
		}
		if dir, _ := m.liveDirs(c.sb, c.b.Path); exists(dir) {
			t.Errorf("a refused mount left %s", dir)
		}
	}
	if err := m.UnmountBucket(ctx, "sbx-started", "/mnt/data"); errdefs.CodeOf(err) != wire.CodeBucketMountNotFound {
		t.Errorf("unmount of nothing: %v", err)
	}
}
