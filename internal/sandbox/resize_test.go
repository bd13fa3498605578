package sandbox

import (
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func TestResizeOf(t *testing.T) {
	if _, resizing, err := resizeOf(wire.UpdateSandboxRequest{KeepAlive: wire.Ptr(true)}); resizing || err != nil {
		t.Errorf("an update without limits: resizing %v, %v", resizing, err)
	}
	res, resizing, err := resizeOf(wire.UpdateSandboxRequest{MemoryMiB: wire.Ptr(512)})
	if !resizing || err != nil || res != (runtime.Resources{MemoryMiB: 512}) {
		t.Errorf("memory only: %+v %v %v", res, resizing, err)
	}
	for _, bad := range []struct {
		req  wire.UpdateSandboxRequest
		code wire.Code
	}{
		{wire.UpdateSandboxRequest{CPU: wire.Ptr(0.0)}, wire.CodeInvalidCPU},
		{wire.UpdateSandboxRequest{CPU: wire.Ptr(-1.0)}, wire.CodeInvalidCPU},
		{wire.UpdateSandboxRequest{CPU: wire.Ptr(65.0)}, wire.CodeInvalidCPU},
		{wire.UpdateSandboxRequest{MemoryMiB: wire.Ptr(0)}, wire.CodeInvalidMemory},
		{wire.UpdateSandboxRequest{MemoryMiB: wire.Ptr(15)}, wire.CodeInvalidMemory},
		{wire.UpdateSandboxRequest{PidsLimit: wire.Ptr(0)}, wire.CodeInvalidPidsLimit},
		{wire.UpdateSandboxRequest{PidsLimit: wire.Ptr(1 << 23)}, wire.CodeInvalidPidsLimit},
	} {
		if _, _, err := resizeOf(bad.req); !errdefs.Is(err, errdefs.KindInvalid) || errdefs.CodeOf(err) != bad.code {
			t.Errorf("%+v: %v, want %s", bad.req, err, bad.code)
		}
	}
	spec := withLimits(store.Spec{CPU: 1, MemoryMiB: 256, PidsLimit: 128}, runtime.Resources{PidsLimit: 64})
	if spec.CPU != 1 || spec.MemoryMiB != 256 || spec.PidsLimit != 64 {
		t.Errorf("withLimits changed what was not asked: %+v", spec)
	}
}
