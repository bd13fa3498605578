package drain

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	asfake "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned/fake"

	"github.com/sbxhq/sbx/internal/kube/podspec"
)

func pod(name, node string, owned, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "sbx", UID: types.UID(name + "-1")},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if owned {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "Sandbox", Name: name, UID: "obj-" + types.UID(name)}}
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return p
}

// Drain cordons the host, moves a running sandbox (its pod evicted, its
// successor ready on another node), suspends one stopped on the host,
// reports a pod no Sandbox owns as not moved, and fails for that one.
func TestDrain(t *testing.T) {
	host := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{podspec.LabelHost: "true"}}}
	plain := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	kube := kubefake.NewClientset(host, plain, pod("running", "a", true, true), pod("stopped", "a", true, false), pod("bare", "a", false, true), pod("elsewhere", "b", true, true))
	agents := asfake.NewSimpleClientset()
	for _, name := range []string{"running", "stopped"} {
		sb := &asv1.Sandbox{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "sbx"}, Spec: asv1.SandboxSpec{OperatingMode: asv1.SandboxOperatingModeRunning}}
		if _, err := agents.AgentsV1beta1().Sandboxes("sbx").Create(context.Background(), sb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	// Kubernetes' part: an evicted pod's host hands it off and agent-sandbox
	// makes its successor, which kube-scheduler places on b; a suspended
	// Sandbox's pod goes.
	kube.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		name := a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName()
		go func() {
			kube.Tracker().Delete(pods, "sbx", name)
			next := pod(name, "b", true, true)
			next.UID = types.UID(name + "-2")
			kube.Tracker().Add(next)
		}()
		return true, nil, nil
	})
	agents.PrependReactor("patch", "sandboxes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		kube.Tracker().Delete(pods, "sbx", a.(k8stesting.PatchAction).GetName())
		return false, nil, nil
	})
	ctx := context.Background()
	opt := Options{Poll: 10 * time.Millisecond, Timeout: 10 * time.Second}
	if err := Drain(ctx, kube, agents, "worker", opt, nil); err == nil || !strings.Contains(err.Error(), "not an sbx host") {
		t.Fatalf("drain of a node that is no sbx host: %v", err)
	}
	got := map[string]Result{}
	err := Drain(ctx, kube, agents, "a", opt, func(r Result) {
		if !r.Started {
			got[r.Pod] = r
		}
	})
	if err == nil || !strings.Contains(err.Error(), "1 of 3") {
		t.Fatalf("drain: %v, want 1 of 3 not moved", err)
	}
	if r := got["running"]; r.Err != nil || r.Action != "moved" || r.To != "b" {
		t.Errorf("running: %+v", r)
	}
	if r := got["stopped"]; r.Err != nil || r.Action != "suspended" {
		t.Errorf("stopped: %+v", r)
	}
	if r := got["bare"]; r.Err == nil || !strings.Contains(r.Err.Error(), "not owned by a Sandbox") {
		t.Errorf("bare: %+v", r)
	}
	if _, ok := got["elsewhere"]; ok {
		t.Error("a pod of another node was moved")
	}
	if n, _ := kube.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{}); !n.Spec.Unschedulable {
		t.Error("the node is not cordoned")
	}
	if sb, _ := agents.AgentsV1beta1().Sandboxes("sbx").Get(ctx, "stopped", metav1.GetOptions{}); sb.Spec.OperatingMode != asv1.SandboxOperatingModeSuspended {
		t.Errorf("the stopped one's operatingMode: %s", sb.Spec.OperatingMode)
	}
}
