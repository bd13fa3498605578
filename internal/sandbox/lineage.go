package sandbox

import (
	"context"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Lineage: a fork records the id of the sandbox it was forked from in
// Spec.Parent. A sandbox with live forks cannot be deleted alone (409
// SANDBOX_HAS_FORKS); DeleteCascade deletes it with all its descendants.
// Like labels, the parent lives in the spec JSON: one host holds few enough
// sandboxes that a scan answers these queries.

// Forks returns the sandboxes forked from idOrName, oldest first.
func (m *Manager) Forks(ctx context.Context, idOrName string) ([]*store.Sandbox, error) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	return m.forksOf(ctx, sb.ID)
}

func (m *Manager) forksOf(ctx context.Context, id string) ([]*store.Sandbox, error) {
	all, err := m.cfg.Store.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return nil, err
	}
	out := []*store.Sandbox{}
	for _, sb := range all {
		if sb.Spec.Parent == id {
			out = append(out, sb)
		}
	}
	return out, nil
}

// Parent returns the sandbox idOrName was forked from.
func (m *Manager) Parent(ctx context.Context, idOrName string) (*store.Sandbox, error) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	if sb.Spec.Parent == "" {
		return nil, errdefs.NotFound(wire.CodeNoParent, "sandbox %s is not a fork", refOf(sb))
	}
	parent, err := m.cfg.Store.GetSandbox(ctx, sb.Spec.Parent)
	if errdefs.Is(err, errdefs.KindNotFound) {
		return nil, errdefs.NotFound(wire.CodeParentGone, "sandbox %s was forked from %s, which has been deleted", refOf(sb), sb.Spec.Parent)
	}
	return parent, err
}

// Ancestors returns the parent of idOrName, its parent and so on, nearest
// first, up to the first one that is no fork or has been deleted.
func (m *Manager) Ancestors(ctx context.Context, idOrName string) ([]*store.Sandbox, error) {
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	out := []*store.Sandbox{}
	seen := map[string]bool{sb.ID: true}
	for sb.Spec.Parent != "" && !seen[sb.Spec.Parent] {
		seen[sb.Spec.Parent] = true
		parent, err := m.cfg.Store.GetSandbox(ctx, sb.Spec.Parent)
		if errdefs.Is(err, errdefs.KindNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, parent)
		sb = parent
	}
	return out, nil
}

// refuseIfForked is Delete's check: a sandbox with forks goes only with them.
func (m *Manager) refuseIfForked(ctx context.Context, sb *store.Sandbox) error {
	forks, err := m.forksOf(ctx, sb.ID)
	if err != nil {
		return err
	}
	live := 0
	for _, f := range forks {
		if f.State != wire.StateDeleting {
			live++
		}
	}
	if live > 0 {
		return errdefs.Conflict(wire.CodeSandboxHasForks, "sandbox %s has %d fork(s); delete them first, or delete with cascade=true (sbx rm --cascade) to delete them too", refOf(sb), live)
	}
	return nil
}

// DeleteCascade deletes idOrName and every sandbox forked from it,
// directly or not, deepest first. Descendants are deleted before it returns;
// wait applies to idOrName itself.
func (m *Manager) DeleteCascade(ctx context.Context, idOrName string, wait bool) (*store.Sandbox, error) {
	ctx = context.WithoutCancel(ctx)
	sb, err := m.cfg.Store.GetSandbox(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	if err := m.deleteDescendants(ctx, sb.ID, map[string]bool{sb.ID: true}); err != nil {
		return nil, err
	}
	return m.Delete(ctx, sb.ID, wait)
}

func (m *Manager) deleteDescendants(ctx context.Context, id string, seen map[string]bool) error {
	forks, err := m.forksOf(ctx, id)
	if err != nil {
		return err
	}
	for _, f := range forks {
		if seen[f.ID] {
			continue
		}
		seen[f.ID] = true
		if err := m.deleteDescendants(ctx, f.ID, seen); err != nil {
			return err
		}
		if _, err := m.Delete(ctx, f.ID, true); err != nil && !errdefs.Is(err, errdefs.KindNotFound) {
			return err
		}
	}
	return nil
}
