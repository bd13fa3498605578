package sandbox

import (
	"context"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// resizeOf returns the limits an update asks for (zero fields: unchanged)
// and whether it asks for any, after checking them like create does. Unlike
// create, 0 is no "take the default": an update names the new limit.
func resizeOf(req wire.UpdateSandboxRequest) (runtime.Resources, bool, error) {
	var res runtime.Resources
	if req.CPU == nil && req.MemoryMiB == nil && req.PidsLimit == nil {
		return res, false, nil
	}
	if req.CPU != nil {
		if res.CPU = *req.CPU; res.CPU == 0 {
			return res, false, errdefs.Invalid(wire.CodeInvalidCPU, "cpu must be between 0.01 and %d cores, got 0", maxCPU)
		}
	}
	if req.MemoryMiB != nil {
		if res.MemoryMiB = *req.MemoryMiB; res.MemoryMiB == 0 {
			return res, false, errdefs.Invalid(wire.CodeInvalidMemory, "memoryMiB must be between %d and %d, got 0", minMemoryMiB, maxMemoryMiB)
		}
	}
	if req.PidsLimit != nil {
		if res.PidsLimit = *req.PidsLimit; res.PidsLimit == 0 {
			return res, false, errdefs.Invalid(wire.CodeInvalidPidsLimit, "pidsLimit must be between %d and %d, got 0", minPids, maxPids)
		}
	}
	return res, true, validateLimits(res.CPU, res.MemoryMiB, res.PidsLimit)
}

// withLimits returns spec with the limits of res that are set.
func withLimits(spec store.Spec, res runtime.Resources) store.Spec {
	if res.CPU != 0 {
		spec.CPU = res.CPU
	}
	if res.MemoryMiB != 0 {
		spec.MemoryMiB = res.MemoryMiB
	}
	if res.PidsLimit != 0 {
		spec.PidsLimit = res.PidsLimit
	}
	return spec
}

// resizeInstance writes res to the cgroups of sb's running instance, if it
// runs and its runtime can (class container); otherwise the limits wait in
// the spec for the next start. A memory limit below what the instance uses
// now is refused, changing nothing.
func (m *Manager) resizeInstance(ctx context.Context, sb *store.Sandbox, res runtime.Resources) error {
	if sb.State != wire.StateStarted {
		return nil
	}
	up, ok := m.runtimeOf(sb).(runtime.Updater)
	if !ok {
		return nil // class gvisor: runsc has no update; the next start takes them
	}
	if res.MemoryMiB != 0 {
		used := runtime.ReadCgroupStats(sb.ID).MemoryBytes
		if limit := uint64(res.MemoryMiB) << 20; used > limit {
			return errdefs.Conflict(wire.CodeMemoryBelowUsage, "cannot lower the memory limit of sandbox %s to %d MiB: it uses %d MiB now; free memory in it first, or stop it and update it while stopped", refOf(sb), res.MemoryMiB, (used+1<<20-1)>>20)
		}
	}
	return up.Update(ctx, sb.ID, res)
}

// limitsOf returns spec's limits as resources, to put them back.
func limitsOf(spec store.Spec) runtime.Resources {
	return runtime.Resources{CPU: spec.CPU, MemoryMiB: spec.MemoryMiB, PidsLimit: spec.PidsLimit}
}
