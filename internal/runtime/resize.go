package runtime

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Resources are the limits of a running instance that can change without
// a restart. A zero field keeps its value.
type Resources struct {
	CPU       float64 // cores
	MemoryMiB int
	PidsLimit int
}

// Updater changes the cgroup limits of a running instance in place. Class
// gvisor has none: Debian's runsc has no "update" verb, so its sandboxes
// take new limits at their next start.
type Updater interface {
	// Update applies res to instance id. A memory limit the kernel cannot
	// reclaim down to fails with errdefs Conflict MEMORY_BELOW_USAGE and
	// changes nothing of the memory limit.
	Update(ctx context.Context, id string, res Resources) error
}

var _ Updater = (*Runc)(nil)

// Update runs "runc update", which writes the cgroup files of either
// layout (and on v1 orders memory and memory+swap so neither is ever
// below the other).
func (r *Runc) Update(ctx context.Context, id string, res Resources) error {
	if err := validID(id); err != nil {
		return err
	}
	args := updateArgs(res, swapAccounting())
	if len(args) == 0 {
		return nil
	}
	if _, err := r.tool.run(ctx, append(append([]string{"update"}, args...), id)...); err != nil {
		if notExist(err) {
			return errdefs.NotFound(wire.CodeInstanceNotFound, "instance %s not found", id)
		}
		if busy(err) {
			return errdefs.Conflict(wire.CodeMemoryBelowUsage, "instance %s uses more memory than %d MiB and the kernel cannot reclaim it", id, res.MemoryMiB)
		}
		return errdefs.Internal(err, "update the limits of instance %s", id)
	}
	return nil
}

// updateArgs are the flags of "runc update" for res: the same cgroup
// values as a start's spec (resources in spec.go).
func updateArgs(res Resources, swap bool) []string {
	var args []string
	if res.CPU > 0 {
		args = append(args, "--cpu-period", strconv.Itoa(cpuPeriod),
			"--cpu-quota", strconv.FormatInt(int64(res.CPU*cpuPeriod), 10))
	}
	if res.MemoryMiB > 0 {
		limit := strconv.FormatInt(int64(res.MemoryMiB)<<20, 10)
		args = append(args, "--memory", limit)
		if swap { // memory+swap equals memory: a sandbox never swaps
			args = append(args, "--memory-swap", limit)
		}
	}
	if res.PidsLimit > 0 {
		args = append(args, "--pids-limit", strconv.Itoa(res.PidsLimit))
	}
	return args
}

// busy reports whether the kernel refused a memory limit below what the
// cgroup holds (EBUSY from memory.limit_in_bytes or memory.max).
func busy(err error) bool {
	var te *toolError
	return errors.As(err, &te) && strings.Contains(te.output, "device or resource busy")
}
