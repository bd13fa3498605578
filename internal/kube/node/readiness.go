package node

import (
	"context"
	"log/slog"
	"time"

	vknode "github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// With a node lease, virtual-kubelet posts the node's status only once a
// minute. When the API server or the host's lease lags past the node
// monitor's grace period, kube-controller-manager marks the node Ready
// Unknown and taints it unreachable, and kube-scheduler places nothing on
// it until the next status post: a create through the gateway waited up
// to a minute after every API server restart (BENCHMARKS.md). The kubelet
// re-posts its status as soon as the API's copy differs from its own;
// keepReady does the same.

// readyStatus is spec's status as a Ready node posts it.
func readyStatus(spec *corev1.Node) *corev1.Node {
	n := spec.DeepCopy()
	n.Status.Phase = corev1.NodeRunning
	now := metav1.Now()
	for i, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			n.Status.Conditions[i] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", Message: "Kubelet is ready", LastHeartbeatTime: now, LastTransitionTime: now}
		}
	}
	return n
}

// markReady posts spec as Ready once the node controller runs, and again
// whenever the API server's copy of the node says otherwise, until ctx
// ends. np is the node controller's provider (nodeutil marks a node Ready
// once only, when given none).
func markReady(ctx context.Context, client kubernetes.Interface, spec *corev1.Node, np *vknode.NaiveNodeProviderV2, log *slog.Logger) {
	post := make(chan struct{}, 1)
	poke := func() {
		select {
		case post <- struct{}{}:
		default:
		}
	}
	inf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "metadata.name=" + spec.Name
	}))
	notReady := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && n.Name == spec.Name && !nodeReady(n) {
			poke()
		}
	}
	inf.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{ //nolint:errcheck // never removed
		AddFunc:    notReady,
		UpdateFunc: func(_, obj any) { notReady(obj) },
	})
	inf.Start(ctx.Done())
	poke() // the first post: the node joins Ready
	for {
		select {
		case <-ctx.Done():
			return
		case <-post:
		}
		if err := np.UpdateStatus(ctx, readyStatus(spec)); err != nil {
			if ctx.Err() == nil {
				log.Warn("kube: post the node's Ready status", "node", spec.Name, "err", err)
			}
			continue
		}
		// One post a second at most: the node controller sends it at once,
		// and a node monitor that marks it down again gets an answer soon.
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
