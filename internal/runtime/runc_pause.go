package runtime

import (
	"context"
)

var _ Freezer = (*Runc)(nil)

// Pause freezes every process of the container with the cgroup freezer
// (runc pause: freezer.state FROZEN on cgroup v1, cgroup.freeze on v2). The
// processes keep their memory; they use no CPU until Resume.
func (r *Runc) Pause(ctx context.Context, id string) error { return r.tool.freeze(ctx, "pause", id) }

// Resume thaws a paused container. Resuming a running one is not an error.
func (r *Runc) Resume(ctx context.Context, id string) error { return r.tool.freeze(ctx, "resume", id) }

// Paused reports whether the container is frozen.
func (r *Runc) Paused(ctx context.Context, id string) (bool, error) { return r.tool.paused(ctx, id) }
