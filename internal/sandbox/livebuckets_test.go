package sandbox

import (
	"context"
	"github.com/sbxhq/sbx/internal/auth"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

// A live bucket mount is refused, with nothing mounted, for a sandbox that
// does not run, for class gvisor, for a bad path, and an unmount of a path
// with no live mount says so.
func TestMountBucketRefusals(t *testing.T) {
	m, _, st := newFakeManager(t)
	ctx := auth.System(context.Background(), "test")
	for _, sb := range []*store.Sandbox{
		{ID: "sbx-stopped", State: sdk.StateStopped, Spec: store.Spec{Image: "base"}},
		{ID: "sbx-gvisor", State: sdk.StateStarted, Spec: store.Spec{Image: "base", Class: ClassGVisor}},
		{ID: "sbx-started", State: sdk.StateStarted, Spec: store.Spec{Image: "base"}},
	} {
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	b := sdk.BucketMount{Bucket: "data", Path: "/mnt/data", Endpoint: "https://s3.example.com", AccessKeyID: "a", SecretAccessKey: "s"}
	withPath := func(p string) sdk.BucketMount { c := b; c.Path = p; return c }
	cases := []struct {
		sb   string
		b    sdk.BucketMount
		code sdk.Code
	}{
		{"sbx-stopped", b, sdk.CodeSandboxNotStarted},
		{"sbx-gvisor", b, sdk.CodeLiveMountUnsupported},
		{"sbx-started", b, sdk.CodeSandboxNotStarted}, // a record, no instance
		{"sbx-started", withPath("relative"), sdk.CodeInvalidVolume},
		{"sbx-started", withPath("/proc/x"), sdk.CodeInvalidVolume},
		{"sbx-started", sdk.BucketMount{Bucket: "data", Path: "/mnt/data", Endpoint: "https://s3.example.com"}, sdk.CodeInvalidBucketMount},
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
	if err := m.UnmountBucket(ctx, "sbx-started", "/mnt/data"); errdefs.CodeOf(err) != sdk.CodeBucketMountNotFound {
		t.Errorf("unmount of nothing: %v", err)
	}
}
