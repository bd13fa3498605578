package gateway

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/sbxhq/sbx/internal/kube/podspec"
)

// Automatic recovery from host loss (docs/kubernetes/lifecycle.md). An sbx
// node that has been NotReady for a grace is tainted out-of-service, so
// Kubernetes force-deletes its pods and agent-sandbox places them on other
// hosts, which restore each sandbox from its newest checkpoint. This is
// safe without a human because a host that cannot renew its lease freezes
// its sandboxes on its own (internal/kube/node/watchdog.go) and cannot
// write to the bucket once another pod claims a sandbox
// (internal/sandbox/import.go). When the node is Ready again, the taint the
// gateway put there is taken off (a taint put by someone else stays).
//
// No leader election among replicas: each change is an update at the
// node's resourceVersion, so of two replicas tainting the same node one
// gets a conflict, reads the node again and finds the taint there.

// TaintOutOfService is Kubernetes' taint for a node that is known to be
// down: its pods are deleted at once, volumes detached.
const TaintOutOfService = "node.kubernetes.io/out-of-service"

// annotationTainted marks a node the gateway tainted out-of-service.
const annotationTainted = "sbx.dev/out-of-service-since"

// RunOutOfService taints sbx nodes NotReady for after and untaints them
// when Ready, checking every few seconds until ctx ends.
func RunOutOfService(ctx context.Context, kube kubernetes.Interface, after time.Duration, log *slog.Logger) {
	every := min(max(after/4, time.Second), 10*time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := outOfService(ctx, kube, after, time.Now(), log); err != nil && ctx.Err() == nil {
			log.Error("gateway: out-of-service check", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// outOfService is one pass over the sbx nodes at now.
func outOfService(ctx context.Context, kube kubernetes.Interface, after time.Duration, now time.Time, log *slog.Logger) error {
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: podspec.LabelHost + "=true"})
	if err != nil {
		return err
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		down, since := notReady(n)
		switch {
		case down && now.Sub(since) >= after && !hasTaint(n, TaintOutOfService):
			log.Warn("gateway: node NotReady past the grace: tainting it out-of-service so its sandboxes move", "node", n.Name, "notReadySince", since)
			err = editNode(ctx, kube, n.Name, func(n *corev1.Node) bool {
				if hasTaint(n, TaintOutOfService) {
					return false
				}
				if down, since := notReady(n); !down || now.Sub(since) < after {
					return false
				}
				t := metav1.NewTime(now)
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: TaintOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute, TimeAdded: &t})
				if n.Annotations == nil {
					n.Annotations = map[string]string{}
				}
				n.Annotations[annotationTainted] = now.UTC().Format(time.RFC3339)
				return true
			})
		case !down && n.Annotations[annotationTainted] != "":
			log.Info("gateway: node Ready again: removing the out-of-service taint", "node", n.Name)
			err = editNode(ctx, kube, n.Name, func(n *corev1.Node) bool {
				if n.Annotations[annotationTainted] == "" {
					return false
				}
				delete(n.Annotations, annotationTainted)
				kept := n.Spec.Taints[:0]
				for _, t := range n.Spec.Taints {
					if t.Key != TaintOutOfService {
						kept = append(kept, t)
					}
				}
				n.Spec.Taints = kept
				return true
			})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// notReady reports whether n is not Ready, and since when.
func notReady(n *corev1.Node) (bool, time.Time) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return true, n.CreationTimestamp.Time
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// editNode applies edit (false: nothing to change) to the newest node,
// again on a conflict.
func editNode(ctx context.Context, kube kubernetes.Interface, name string, edit func(*corev1.Node) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil || !edit(n) {
			return err
		}
		_, err = kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "sbx-gateway"})
		return err
	})
}
