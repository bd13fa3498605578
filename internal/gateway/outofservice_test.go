package gateway

import (
	"context"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/sbxhq/sbx/internal/kube/podspec"
)

// An sbx node NotReady past the grace is tainted out-of-service once; a
// node NotReady for less, a Ready one and a node that is not an sbx host
// are not; the taint goes when the node is Ready again.
func TestOutOfService(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	node := func(name string, host bool, ready corev1.ConditionStatus, since time.Duration) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if host {
			n.Labels[podspec.LabelHost] = "true"
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, LastTransitionTime: metav1.NewTime(now.Add(-since))}}
		return n
	}
	kube := fake.NewSimpleClientset(
		node("lost", true, corev1.ConditionUnknown, 2*time.Minute),
		node("late", true, corev1.ConditionUnknown, 30*time.Second),
		node("fine", true, corev1.ConditionTrue, time.Hour),
		node("other", false, corev1.ConditionUnknown, time.Hour),
	)
	ctx := context.Background()
	tainted := func(name string) bool {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return hasTaint(n, TaintOutOfService)
	}
	for range 2 { // a second pass changes nothing
		if err := outOfService(ctx, kube, time.Minute, now, slog.Default()); err != nil {
			t.Fatal(err)
		}
		n, _ := kube.CoreV1().Nodes().Get(ctx, "lost", metav1.GetOptions{})
		if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Effect != corev1.TaintEffectNoExecute {
			t.Fatalf("lost node's taints: %+v", n.Spec.Taints)
		}
		for _, name := range []string{"late", "fine", "other"} {
			if tainted(name) {
				t.Fatalf("%s was tainted", name)
			}
		}
	}

	n, _ := kube.CoreV1().Nodes().Get(ctx, "lost", metav1.GetOptions{})
	n.Status.Conditions[0].Status = corev1.ConditionTrue
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: podspec.LabelHost, Value: "true", Effect: corev1.TaintEffectNoSchedule})
	if _, err := kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := outOfService(ctx, kube, time.Minute, now, slog.Default()); err != nil {
		t.Fatal(err)
	}
	n, _ = kube.CoreV1().Nodes().Get(ctx, "lost", metav1.GetOptions{})
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != podspec.LabelHost || n.Annotations[annotationTainted] != "" {
		t.Fatalf("Ready again: taints %+v, annotations %v: want only the host's own taint", n.Spec.Taints, n.Annotations)
	}
}
