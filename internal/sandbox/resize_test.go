package sandbox

import (
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/sdk"
)

func TestResizeOf(t *testing.T) {
	if _, resizing, err := resizeOf(sdk.UpdateSandboxRequest{KeepAlive: sdk.Ptr(true)}); resizing || err != nil {
		t.Errorf("an update without limits: resizing %v, %v", resizing, err)
	}
	res, resizing, err := resizeOf(sdk.UpdateSandboxRequest{MemoryMiB: sdk.Ptr(512)})
	if !resizing || err != nil || res != (runtime.Resources{MemoryMiB: 512}) {
		t.Errorf("memory only: %+v %v %v", res, resizing, err)
	}
	for _, bad := range []struct {
		req  sdk.UpdateSandboxRequest
		code sdk.Code
	}{
		{sdk.UpdateSandboxRequest{CPU: sdk.Ptr(0.0)}, sdk.CodeInvalidCPU},
		{sdk.UpdateSandboxRequest{CPU: sdk.Ptr(-1.0)}, sdk.CodeInvalidCPU},
		{sdk.UpdateSandboxRequest{CPU: sdk.Ptr(65.0)}, sdk.CodeInvalidCPU},
		{sdk.UpdateSandboxRequest{MemoryMiB: sdk.Ptr(0)}, sdk.CodeInvalidMemory},
		{sdk.UpdateSandboxRequest{MemoryMiB: sdk.Ptr(15)}, sdk.CodeInvalidMemory},
		{sdk.UpdateSandboxRequest{PidsLimit: sdk.Ptr(0)}, sdk.CodeInvalidPidsLimit},
		{sdk.UpdateSandboxRequest{PidsLimit: sdk.Ptr(1 << 23)}, sdk.CodeInvalidPidsLimit},
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
