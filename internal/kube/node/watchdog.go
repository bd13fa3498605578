package node

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// The lease watchdog. A host cut off from kube-apiserver cannot renew its
// node Lease; Kubernetes then marks the node NotReady, and after a grace
// the gateway taints it out-of-service (internal/gateway/outofservice.go),
// which lets the pods start on other hosts. Before that, the cut-off host
// freezes every sandbox it runs for a pod, so two copies never run at once
// and the old one writes nothing more (its blob store writes are fenced by
// the claim anyway, internal/sandbox/import.go). When the lease renews
// again the sandboxes go on; a pod that was re-placed meanwhile is deleted
// here by virtual-kubelet, and its stale copy is forgotten.

// DefaultFenceAfter is how long a host goes without renewing its Lease
// before it freezes its sandboxes: virtual-kubelet's lease duration (40 s),
// so the freeze comes when kube-controller-manager may first call the node
// NotReady, well before the gateway's --out-of-service-after grace ends.
const DefaultFenceAfter = 40 * time.Second

// leaseRenewed reads when the node's Lease was last renewed.
func leaseRenewed(leases coordinationv1client.LeaseInterface, node string) func(context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
		l, err := leases.Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return time.Time{}, err
		}
		if l.Spec.RenewTime == nil {
			return time.Time{}, nil
		}
		return l.Spec.RenewTime.Time, nil
	}
}

// watchLease checks the Lease every after/4 and calls fence when it went
// unrenewed for after (or could not be read for that long).
func (p *Provider) watchLease(ctx context.Context, renewed func(context.Context) (time.Time, error), after time.Duration) {
	ctx = nodeScope(ctx)
	lastOK := time.Now()
	tick := time.NewTicker(after / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, after/4)
		at, err := renewed(rctx)
		cancel()
		now := time.Now()
		if err == nil && now.Sub(at) < after {
			lastOK = now
		}
		p.fence(ctx, now.Sub(lastOK) >= after)
	}
}

// fence freezes (cut true) or thaws the sandboxes this host runs for pods.
func (p *Provider) fence(ctx context.Context, cut bool) {
	p.mu.Lock()
	was := p.frozen != nil
	p.mu.Unlock()
	if cut == was {
		return
	}
	if cut {
		p.log.Warn("kube: the node lease has not been renewed: freezing this host's sandboxes until it is")
		sbs, err := p.m.List(ctx, store.Filter{})
		if err != nil {
			p.log.Error("kube: list sandboxes to freeze", "err", err)
		}
		frozen := map[string]bool{}
		for _, sb := range sbs {
			if sb.Spec.Labels[LabelPodName] == "" || sb.State != wire.StateStarted {
				continue
			}
			if err := p.m.Freeze(ctx, sb.ID, true); err != nil {
				p.log.Error("kube: freeze", "id", sb.ID, "err", err)
				continue
			}
			frozen[sb.ID] = true
		}
		p.mu.Lock()
		p.frozen = frozen
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	frozen := p.frozen
	p.frozen = nil
	p.mu.Unlock()
	p.log.Info("kube: the node lease is renewed again: thawing this host's sandboxes", "count", len(frozen))
	for id := range frozen {
		if err := p.m.Freeze(ctx, id, false); err != nil {
			p.log.Error("kube: thaw", "id", id, "err", err)
		}
	}
}

// isolated reports whether the watchdog froze this host's sandboxes.
func (p *Provider) isolated() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frozen != nil
}
