package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// quotaLockFor bounds how long a team's quota lock is held: a replica that
// died holding it blocks that team's creates no longer than this.
const quotaLockFor = 15 * time.Second

// createWithinQuota creates obj for team, within the team's maxSandboxes
// over the whole cluster. Gateway replicas share no memory, and a watch
// cache lags, so a create of a team with a quota holds the team's lock (a
// Lease in the sandboxes' namespace) while it counts the team's objects
// with a consistent read from the API server and creates its own.
func (s *Server) createWithinQuota(ctx context.Context, obj *asv1.Sandbox, team string) (*asv1.Sandbox, error) {
	api := s.cluster.Agents.AgentsV1beta1().Sandboxes(obj.Namespace)
	create := func() (*asv1.Sandbox, error) {
		return api.Create(ctx, obj, metav1.CreateOptions{FieldManager: "sbx-gateway"})
	}
	max := 0
	if s.cfg.Quota != nil {
		max = s.cfg.Quota(team).MaxSandboxes
	}
	if max == 0 {
		return create()
	}
	unlock, err := s.lockTeam(ctx, obj.Namespace, team)
	if err != nil {
		return nil, err
	}
	defer unlock()
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: podspec.LabelTeam + "=" + team})
	if err != nil {
		return nil, err
	}
	held := 0
	for _, o := range list.Items {
		if o.DeletionTimestamp == nil { // one being deleted holds nothing more
			held++
		}
	}
	if held >= max {
		return nil, errdefs.Forbidden(wire.CodeQuotaSandboxes, "team %q may hold at most %d sandboxes (quota maxSandboxes); delete one first", team, max)
	}
	return create()
}

// lockTeam takes team's quota lock: it creates the Lease, which only one
// replica can; one older than quotaLockFor is taken over.
func (s *Server) lockTeam(ctx context.Context, namespace, team string) (unlock func(), err error) {
	leases := s.cluster.Kube.CoordinationV1().Leases(namespace)
	sum := sha256.Sum256([]byte(team)) // a team name need not be a valid object name
	name := "sbx-quota-" + hex.EncodeToString(sum[:8])
	secs := int32(quotaLockFor / time.Second)
	for {
		now := metav1.NowMicro()
		l, err := leases.Create(ctx, &coordv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{podspec.LabelTeam: team}},
			Spec:       coordv1.LeaseSpec{LeaseDurationSeconds: &secs, AcquireTime: &now},
		}, metav1.CreateOptions{FieldManager: "sbx-gateway"})
		if err == nil {
			return func() {
				uid := l.UID
				if err := leases.Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
					slog.Warn("gateway: release a team's quota lock", "lease", name, "err", err)
				}
			}, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, errdefs.Unavailable(wire.CodeSandboxUnavailable, "the Kubernetes API did not take the team's quota lock: %v", err)
		}
		if held, err := leases.Get(ctx, name, metav1.GetOptions{}); err == nil && held.Spec.AcquireTime != nil &&
			time.Since(held.Spec.AcquireTime.Time) > quotaLockFor {
			uid := held.UID
			leases.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			continue
		}
		select {
		case <-ctx.Done():
			return nil, errdefs.Unavailable(wire.CodeCancelled, "gave up waiting for the team's quota lock: %v", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
