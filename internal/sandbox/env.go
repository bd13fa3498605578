package sandbox

import (
	"context"
	"maps"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Environment on a live sandbox (PATCH /v1/sandboxes/{id} with env): the
// change goes into the spec, so every later instance starts with it, and
// to the running instance's agent, so every process started from now on
// gets it. Running processes keep theirs. Unsetting removes a variable the
// spec sets; one the image sets comes back with the next instance.

// changedEnv returns env with change applied (nil unsets), or the error of
// the first bad variable.
func changedEnv(env map[string]string, change map[string]*string) (map[string]string, error) {
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range change {
		if !envKeyRe.MatchString(k) {
			return nil, errdefs.Invalid(wire.CodeInvalidEnv, "invalid environment variable name %q: use letters, digits and '_', not starting with a digit", k)
		}
		if v == nil {
			delete(out, k)
			continue
		}
		if len(*v) > maxEnvValue || strings.ContainsRune(*v, 0) {
			return nil, errdefs.Invalid(wire.CodeInvalidEnv, "environment variable %s: value too long or contains a NUL byte", k)
		}
		out[k] = *v
	}
	if len(out) > maxEnv {
		return nil, errdefs.Invalid(wire.CodeInvalidEnv, "at most %d environment variables", maxEnv)
	}
	return out, nil
}

// pushEnv gives a locked, started sandbox's running agent the change.
func (m *Manager) pushEnv(ctx context.Context, sb *store.Sandbox, change map[string]*string) error {
	m.mu.Lock()
	inst := m.instances[sb.ID]
	m.mu.Unlock()
	if inst == nil || sb.State != wire.StateStarted {
		return nil // the next instance starts with the spec's env
	}
	ctx, cancel := context.WithTimeout(ctx, m.agentCallTimeout())
	defer cancel()
	if err := inst.agent.SetEnv(ctx, change); err != nil {
		return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeSandboxUnavailable,
			Message: "the environment is recorded and applies from the next start, but the running instance did not take it: retry", Err: err}
	}
	return nil
}
