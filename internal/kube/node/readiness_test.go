package node

import (
	"context"
	"log/slog"
	"testing"

	vknode "github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// TestMarkReadyAnswersTheNodeMonitor: the node monitor marking the node
// Ready Unknown (as after an API server restart) makes the host post
// Ready again at once, not at virtual-kubelet's next periodic status.
func TestMarkReadyAnswersTheNodeMonitor(t *testing.T) {
	cfg := Config{NodeName: "host-a", CPU: "4", Memory: "8Gi", Pods: 10, Address: "127.0.0.1", Port: DefaultPort, AdvertiseURL: "http://127.0.0.1:1"}
	spec, err := cfg.nodeSpec()
	if err != nil {
		t.Fatal(err)
	}
	client := kubefake.NewClientset(spec.DeepCopy())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The node controller's part: post what the provider sends.
	posted := make(chan corev1.NodeConditionType, 10)
	np := vknode.NewNaiveNodeProvider()
	np.NotifyNodeStatus(ctx, func(n *corev1.Node) {
		cur, err := client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		cur.Status = n.Status
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
		if nodeReady(n) {
			posted <- corev1.NodeReady
		}
	})
	go markReady(ctx, client, spec, np, slog.Default())

	wait := func(what string) {
		t.Helper()
		select {
		case <-posted:
		case <-ctx.Done():
			t.Fatalf("no Ready post %s", what)
		}
	}
	wait("when the node joins")
	// The node monitor's part: the lease is stale, the node is Unknown.
	n, err := client.CoreV1().Nodes().Get(ctx, "host-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			n.Status.Conditions[i].Status, n.Status.Conditions[i].Reason = corev1.ConditionUnknown, "NodeStatusUnknown"
		}
	}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("after the node monitor marked the node Unknown")
	if n, _ := client.CoreV1().Nodes().Get(ctx, "host-a", metav1.GetOptions{}); !nodeReady(n) {
		t.Fatalf("node after the re-post: %+v", n.Status.Conditions)
	}
}
