package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Classes: how an instance is isolated.
const (
	ClassContainer = "container" // runc: namespaces, cgroups, seccomp
	ClassGVisor    = "gvisor"    // runsc: a user-space kernel; memory can be saved
)

// classOf returns the class of a spec; records made before classes existed
// are containers.
func classOf(spec store.Spec) string {
	if spec.Class == "" {
		return ClassContainer
	}
	return spec.Class
}

// runtimeFor returns the runtime of a class, or why there is none.
func (m *Manager) runtimeFor(class string) (runtime.Runtime, error) {
	if rt := m.cfg.Runtimes[class]; rt != nil {
		return rt, nil
	}
	switch class {
	case ClassContainer, ClassGVisor:
		tool := map[string]string{ClassContainer: "runc", ClassGVisor: "runsc"}[class]
		return nil, errdefs.Unavailable(wire.CodeClassUnavailable,
			"class %q is not available on this host: %s is not installed; install it with `apt-get install %s` and restart sbx serve", class, tool, tool)
	}
	return nil, errdefs.Invalid(wire.CodeInvalidClass, "class must be %q or %q, got %q", ClassContainer, ClassGVisor, class)
}

// runtimeOf returns the runtime that runs sb's instances. A class whose
// runtime is missing gets one that has no instances, so stopping and
// deleting such a sandbox still works.
func (m *Manager) runtimeOf(sb *store.Sandbox) runtime.Runtime {
	rt, err := m.runtimeFor(classOf(sb.Spec))
	if err != nil {
		return noRuntime{err}
	}
	return rt
}

// runtimes returns every configured runtime by class.
func (m *Manager) runtimes() map[string]runtime.Runtime {
	out := map[string]runtime.Runtime{}
	for class, rt := range m.cfg.Runtimes {
		if rt != nil {
			out[class] = rt
		}
	}
	return out
}

// noRuntime stands in for a runtime that is not installed.
type noRuntime struct{ err error }

func (n noRuntime) Start(context.Context, *runtime.Instance) (runtime.Status, error) {
	return runtime.Status{}, n.err
}
func (n noRuntime) State(_ context.Context, id string) (runtime.Status, error) {
	return runtime.Status{}, errdefs.NotFound(wire.CodeInstanceNotFound, "instance %s not found", id)
}
func (noRuntime) Kill(context.Context, string, syscall.Signal) error { return nil }
func (noRuntime) Delete(context.Context, string) error               { return nil }
func (noRuntime) List(context.Context) ([]string, error)             { return nil, nil }

// checkpointDir holds the memory image of a paused gvisor sandbox, or the
// image a new sandbox (a fork, or one made from a memory snapshot) starts
// from.
func (m *Manager) checkpointDir(id string) string {
	return filepath.Join(m.dirsOf(id).root, "checkpoint")
}

// runInstance starts sb's instance: from a memory image when one waits for
// it (a resume, a fork, the first start of a sandbox made from a memory
// snapshot), fresh otherwise. A restored agent is told to listen again.
func (m *Manager) runInstance(ctx context.Context, sb *store.Sandbox, inst *runtime.Instance) (runtime.Status, error) {
	rt, err := m.runtimeFor(classOf(sb.Spec))
	if err != nil {
		return runtime.Status{}, err
	}
	dir := m.checkpointDir(sb.ID)
	restore := false
	switch sb.State {
	case wire.StateResuming:
		restore = true
	case wire.StateCreating:
		if exists(dir) {
			restore = true
		} else if sb.Spec.Snapshot != "" {
			if restore, err = m.linkSnapshotMemory(ctx, teamOf(sb), sb.Spec.Snapshot, dir); err != nil {
				return runtime.Status{}, err
			}
		}
	}
	if !restore {
		// A memory image left by an interrupted operation is stale now.
		if err := os.RemoveAll(dir); err != nil {
			return runtime.Status{}, errdefs.Internal(err, "remove stale memory image of %s", sb.ID)
		}
		return rt.Start(ctx, inst)
	}
	cp, ok := rt.(runtime.Checkpointer)
	if !ok {
		return runtime.Status{}, errdefs.Invalid(wire.CodeMemoryUnsupported, "class %s cannot restore memory", classOf(sb.Spec))
	}
	inst.AgentBinary = m.imageAgent(dir, sb.ID) // agentbin.go: the agent the image's processes run
	st, err := cp.Restore(ctx, inst, dir)
	if sb.State == wire.StateCreating {
		// A new sandbox restores once; its image was only linked here.
		os.RemoveAll(dir)
	}
	if err != nil {
		return runtime.Status{}, err
	}
	// The restored agent waits, suspended, for this file to listen again.
	if err := agentapi.Wake(inst.RunDir); err != nil {
		return runtime.Status{}, err
	}
	return st, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// linkDir hard-links every file of the directory src into dst (created;
// emptied first). Memory images are large and never written after they are
// made, so links share them at no cost.
func linkDir(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := os.Link(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// listInstances returns a bare record (id and class) for every instance
// the runtimes hold.
func (m *Manager) listInstances(ctx context.Context) ([]*store.Sandbox, error) {
	var out []*store.Sandbox
	for class, rt := range m.runtimes() {
		ids, err := rt.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			out = append(out, &store.Sandbox{ID: id, Spec: store.Spec{Class: class}})
		}
	}
	return out, nil
}
