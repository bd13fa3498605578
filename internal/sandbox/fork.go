package sandbox

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Forks.
//
// A fork is a new sandbox that starts as an exact copy of another, its
// parent: the same spec, a copy of the parent's upper directory (so writes
// on either side are invisible to the other), and for class gvisor every
// process with its memory. The parent's memory is saved once (it is paused
// for that, its filesystem copied meanwhile, then resumed) and restored in
// each fork. For class container only the filesystem is copied: the forks'
// processes start fresh.

// maxForks bounds the count of one fork request.
const maxForks = 16

// ForkResult is what Fork made.
type ForkResult struct {
	Forks  []*store.Sandbox
	Memory bool   // the forks run the parent's processes
	Note   string // what was not copied, if anything
}

// Fork makes req.Count forks of idOrName. Either all are made or, on error,
// none remains.
func (m *Manager) Fork(ctx context.Context, idOrName string, req wire.ForkRequest) (_ *ForkResult, err error) {
	defer m.observe("fork", "user", time.Now(), &err)
	ctx = context.WithoutCancel(ctx)
	names, err := forkNames(req)
	if err != nil {
		return nil, err
	}
	staging, err := m.stagingDir("fork-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)
	parent, memory, finish, err := m.captureForFork(ctx, idOrName, staging)
	if err != nil {
		return nil, err
	}
	// The parent goes back to work (a started gvisor parent is released and
	// restored) alongside the forks' restores, and may still be at it when
	// Fork returns: it stays locked meanwhile, so calls to it wait, and if
	// its restore fails it stays paused, which is no failure of the forks.
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := finish(); err != nil {
			m.log.Error("fork: the parent did not go back to work", "id", parent.ID, "err", err)
		}
	}()

	res := &ForkResult{Memory: memory, Forks: make([]*store.Sandbox, len(names))}
	if !memory {
		res.Note = "the filesystem was copied; processes were not (" + forkNote(parent) + "): each fork starts fresh"
	}
	// Restores are CPU-bound; two at a time keeps the host responsive.
	errs := make([]error, len(names))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			res.Forks[i], errs[i] = m.createFork(ctx, parent, name, staging, memory)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			continue
		}
		for _, sb := range res.Forks {
			if sb != nil {
				if _, derr := m.Delete(ctx, sb.ID, true); derr != nil {
					m.log.Error("remove fork after a failed fork", "id", sb.ID, "err", derr)
				}
			}
		}
		if len(names) > 1 {
			err = fmt.Errorf("fork %d of %d: %w", i+1, len(names), err)
		}
		return nil, err
	}
	return res, nil
}

func forkNote(parent *store.Sandbox) string {
	if classOf(parent.Spec) == ClassContainer {
		return "class container keeps no memory image"
	}
	return "the parent was " + string(parent.State)
}

// forkNames validates a fork request and returns one name per fork ("" for
// unnamed ones).
func forkNames(req wire.ForkRequest) ([]string, error) {
	n := req.Count
	if n == 0 {
		n = 1
	}
	if n < 1 || n > maxForks {
		return nil, errdefs.Invalid(wire.CodeInvalidCount, "count must be between 1 and %d, got %d", maxForks, req.Count)
	}
	names := make([]string, n)
	for i := range names {
		switch {
		case req.Name == "":
		case n == 1:
			names[i] = req.Name
		default:
			names[i] = fmt.Sprintf("%s-%d", req.Name, i+1)
		}
		if names[i] != "" {
			if err := ValidateName(names[i]); err != nil {
				return nil, err
			}
		}
	}
	return names, nil
}

// captureForFork copies the parent's upper directory to staging/upper and,
// for a gvisor parent that is started or paused, links its memory image to
// staging/memory. A started container is frozen during the copy. A started
// gvisor parent is checkpointed and its files copied at once; what is slow
// (its old instance going away, its restore) is left to finish, which the
// caller runs alongside the forks' restores and must always call. The
// parent stays locked until finish returns.
func (m *Manager) captureForFork(ctx context.Context, idOrName, staging string) (parent *store.Sandbox, memory bool, finish func() error, err error) {
	sb, unlock, err := m.lock(ctx, idOrName)
	if err != nil {
		return nil, false, nil, err
	}
	// release unlocks the parent; on error it runs here, unless the parent
	// was already handed to resume (which unlocks it).
	release := func() error { unlock(); return nil }
	defer func() {
		if err != nil && release != nil {
			release()
		}
	}()
	if _, err := decide(opFork, sb); err != nil {
		return nil, false, nil, err
	}
	upper := filepath.Join(staging, "upper")
	if err := os.Mkdir(upper, 0o755); err != nil {
		return nil, false, nil, errdefs.Internal(err, "create staging directory")
	}
	copyUpper := func(src string) error { return copyTree(ctx, src, upper) }
	parent = new(store.Sandbox)
	*parent = *sb

	state := sb.State
	switch {
	case classOf(sb.Spec) != ClassGVisor || (state != wire.StateStarted && state != wire.StatePaused):
		return parent, false, release, m.withQuietUpper(ctx, sb, copyUpper)
	case state == wire.StatePaused:
		if err := m.withUpper(ctx, sb, copyUpper); err != nil {
			return nil, false, nil, err
		}
		return parent, true, release, m.linkMemory(sb, staging)
	}

	// Started gvisor: checkpoint, copy the files as the image saw them,
	// then release and resume the parent in finish.
	if err := m.transition(ctx, sb, wire.StatePausing, "fork", ""); err != nil {
		return nil, false, nil, err
	}
	if err := m.checkpoint(ctx, sb); err != nil {
		if m.hasInstance(sb.ID) {
			m.transition(ctx, sb, wire.StateStarted, "fork-failed", err.Error())
		} else {
			m.releaseSaved(ctx, sb)
			m.transition(ctx, sb, wire.StateError, "fork-failed", err.Error())
		}
		return nil, false, nil, err
	}
	resume := func() error {
		defer unlock()
		if err := m.releaseSaved(ctx, sb); err != nil {
			m.log.Warn("release checkpointed instance", "id", sb.ID, "err", err)
		}
		if err := m.transition(ctx, sb, wire.StatePaused, "fork", ""); err != nil {
			return err
		}
		if err := m.resumeLocked(ctx, sb, "fork"); err != nil {
			return errdefs.Internal(err, "resume sandbox %s after saving its memory for the fork (it stays paused)", refOf(sb))
		}
		return nil
	}
	err = copyUpper(m.mountedUpper(sb))
	if err == nil {
		err = m.linkMemory(sb, staging)
	}
	if err != nil {
		release = nil
		if rerr := resume(); rerr != nil {
			m.log.Error("resume after a failed fork", "id", sb.ID, "err", rerr)
		}
		return nil, false, nil, err
	}
	return parent, true, resume, nil
}

func (m *Manager) linkMemory(sb *store.Sandbox, staging string) error {
	if err := linkDir(m.checkpointDir(sb.ID), filepath.Join(staging, "memory")); err != nil {
		return errdefs.Internal(err, "link memory image of %s", sb.ID)
	}
	return nil
}

// createFork makes one fork of parent from what captureForFork staged.
func (m *Manager) createFork(ctx context.Context, parent *store.Sandbox, name, staging string, memory bool) (*store.Sandbox, error) {
	if name != "" {
		unlock := m.names.Lock(name)
		defer unlock()
	}
	spec := parent.Spec
	spec.Parent, spec.Snapshot = parent.ID, ""
	spec.Layers = slices.Clone(parent.Spec.Layers)
	spec.Env, spec.Labels = maps.Clone(parent.Spec.Env), maps.Clone(parent.Spec.Labels)
	if p := parent.Spec.Policy; p != nil {
		policy := *p
		spec.Policy = &policy
	}
	sb := &store.Sandbox{ID: newID(), Name: name, State: wire.StateCreating, Reason: "fork", Spec: spec, CreatedAt: time.Now().UTC()}
	unlock := m.locks.Lock(sb.ID)
	defer unlock()
	if err := m.cfg.Store.CreateSandbox(ctx, sb); err != nil {
		return nil, err
	}
	err := m.withUpper(ctx, sb, func(upper string) error {
		if err := os.RemoveAll(upper); err != nil {
			return errdefs.Internal(err, "prepare upper directory of %s", sb.ID)
		}
		if err := os.Mkdir(upper, 0o755); err != nil {
			return errdefs.Internal(err, "prepare upper directory of %s", sb.ID)
		}
		return copyTree(ctx, filepath.Join(staging, "upper"), upper)
	})
	if err == nil && memory {
		// runInstance restores a creating sandbox that has a memory image.
		if err = linkDir(filepath.Join(staging, "memory"), m.checkpointDir(sb.ID)); err != nil {
			err = errdefs.Internal(err, "link memory image into fork %s", sb.ID)
		}
	}
	if err == nil {
		err = m.startInstance(ctx, sb)
	}
	if err == nil {
		err = m.transition(ctx, sb, wire.StateStarted, "fork", "")
	}
	if err != nil {
		m.removeAll(ctx, sb)
		return nil, err
	}
	return sb, nil
}
