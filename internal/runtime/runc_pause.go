package runtime

import (
	"context"
	"encoding/json"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

var _ Freezer = (*Runc)(nil)

// Pause freezes every process of the container with the cgroup freezer
// (runc pause: freezer.state FROZEN on cgroup v1, cgroup.freeze on v2). The
// processes keep their memory; they use no CPU until Resume.
func (r *Runc) Pause(ctx context.Context, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	if _, err := r.tool.run(ctx, "pause", id); err != nil {
		if notExist(err) {
			return errdefs.NotFound(sdk.CodeInstanceNotFound, "instance %s not found", id)
		}
		return errdefs.Internal(err, "pause instance %s", id)
	}
	return nil
}

// Resume thaws a paused container. Resuming a running one is not an error.
func (r *Runc) Resume(ctx context.Context, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	if _, err := r.tool.run(ctx, "resume", id); err != nil {
		if notExist(err) {
			return errdefs.NotFound(sdk.CodeInstanceNotFound, "instance %s not found", id)
		}
		if st, serr := r.paused(ctx, id); serr == nil && !st {
			return nil
		}
		return errdefs.Internal(err, "resume instance %s", id)
	}
	return nil
}

// Paused reports whether the container is frozen.
func (r *Runc) Paused(ctx context.Context, id string) (bool, error) {
	if err := validID(id); err != nil {
		return false, err
	}
	return r.paused(ctx, id)
}

func (r *Runc) paused(ctx context.Context, id string) (bool, error) {
	out, err := r.tool.run(ctx, "state", id)
	if err != nil {
		if notExist(err) {
			return false, errdefs.NotFound(sdk.CodeInstanceNotFound, "instance %s not found", id)
		}
		return false, errdefs.Internal(err, "state of instance %s", id)
	}
	return stateIs(out, "paused")
}

// stateIs reports whether a runc or runsc state document has status want.
func stateIs(doc []byte, want string) (bool, error) {
	var s struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return false, errdefs.Internal(err, "decode instance state")
	}
	return s.Status == want, nil
}
