// Package drain moves every sandbox off one sbx host of a cluster (sbx
// gateway drain): it cordons the host's node, then moves each sandbox
// through its agent-sandbox Sandbox object, as Kubernetes moves any pod:
// the pod is evicted, its host hands the sandbox off to the shared bucket
// (internal/kube/node DeletePod: stop, archive, forget), agent-sandbox
// makes the object's next pod, kube-scheduler places it on another host
// (this one is cordoned) and that host restores the sandbox from the
// bucket. A sandbox stopped on its host is suspended instead, so it stays
// stopped and starts on another host when it is next used.
//
// It talks to the Kubernetes API with the operator's credentials, not to
// the gateway: cordoning is node administration, which the gateway's
// service account may not do (deploy/kubernetes/gateway.yaml), and a
// drain must work while the gateway is down or being upgraded.
package drain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	asclient "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned"

	"github.com/sbxhq/sbx/internal/kube/podspec"
)

// Options of a drain.
type Options struct {
	Namespace string        // of the Sandbox objects and their pods; default "sbx"
	Parallel  int           // sandboxes moved at once; default 4
	Timeout   time.Duration // for each sandbox to leave and come back; default 5 minutes
	Poll      time.Duration // how often progress is read; default 500 ms
}

// Result is what became of one sandbox.
type Result struct {
	Pod     string // the pod on the drained node (= the Sandbox object's name)
	ID      string // the sbx sandbox id
	Name    string // its sbx name, if any
	Team    string
	Action  string // "moved" (running again on To) or "suspended" (archived, stopped)
	To      string // the node it runs on now ("moved")
	Took    time.Duration
	Err     error // nil: done
	Started bool  // the report is the start of the move, not its end
}

// Drain cordons node and moves every sandbox pod of opt.Namespace off it,
// calling report as each move starts and ends (from several goroutines,
// one at a time). It returns an error if the node is not an sbx host or
// cannot be cordoned, or if any sandbox could not be moved.
func Drain(ctx context.Context, kube kubernetes.Interface, agents asclient.Interface, node string, opt Options, report func(Result)) error {
	if opt.Namespace == "" {
		opt.Namespace = "sbx"
	}
	if opt.Parallel <= 0 {
		opt.Parallel = 4
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Minute
	}
	if opt.Poll <= 0 {
		opt.Poll = 500 * time.Millisecond
	}
	n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", node, err)
	}
	if n.Labels[podspec.LabelHost] != "true" {
		return fmt.Errorf("node %s is not an sbx host (no label %s=true): drain it with kubectl drain", node, podspec.LabelHost)
	}
	if !n.Spec.Unschedulable {
		// Cordoned first, so kube-scheduler places no pod here again.
		if _, err := kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{FieldManager: "sbx-drain"}); err != nil {
			return fmt.Errorf("cordon node %s: %w", node, err)
		}
	}
	pods, err := podsOn(ctx, kube, opt.Namespace, node)
	if err != nil {
		return err
	}
	d := &drainer{kube: kube, agents: agents, node: node, opt: opt}
	var mu sync.Mutex
	say := func(r Result) {
		mu.Lock()
		defer mu.Unlock()
		if report != nil {
			report(r)
		}
	}
	sem := make(chan struct{}, opt.Parallel)
	var wg sync.WaitGroup
	failed := 0
	for _, pod := range pods {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r := d.move(ctx, pod, say)
			if r.Err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
			say(r)
		})
	}
	wg.Wait()
	if failed > 0 {
		return fmt.Errorf("%d of %d sandboxes were not moved off %s; the node stays cordoned", failed, len(pods), node)
	}
	left, err := podsOn(ctx, kube, opt.Namespace, node)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("%d sandbox pods were placed on %s while it was drained (e.g. %s): drain it again", len(left), node, left[0].Name)
	}
	return nil
}

// podsOn lists the pods of namespace bound to node.
func podsOn(ctx context.Context, kube kubernetes.Interface, namespace, node string) ([]corev1.Pod, error) {
	list, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return nil, fmt.Errorf("list the pods on %s: %w", node, err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Spec.NodeName == node { // a client that ignores field selectors (fakes) lists them all
			out = append(out, p)
		}
	}
	return out, nil
}

type drainer struct {
	kube   kubernetes.Interface
	agents asclient.Interface
	node   string
	opt    Options
}

// move moves one pod's sandbox off the node and says how it went.
func (d *drainer) move(ctx context.Context, pod corev1.Pod, say func(Result)) Result {
	began := time.Now()
	r := Result{Pod: pod.Name, ID: podspec.IDForPod(pod.Namespace, pod.Name), Name: pod.Labels[podspec.LabelName], Team: pod.Labels[podspec.LabelTeam]}
	done := func(err error) Result {
		r.Took, r.Err = time.Since(began), err
		return r
	}
	owner := ""
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "Sandbox" {
			owner = ref.Name
		}
	}
	if owner == "" {
		// Its sandbox dies with it: there is no object to make another.
		return done(fmt.Errorf("pod %s is not owned by a Sandbox object, so nothing would place it again: delete it yourself", pod.Name))
	}
	ctx, cancel := context.WithTimeout(ctx, d.opt.Timeout)
	defer cancel()
	objs := d.agents.AgentsV1beta1().Sandboxes(pod.Namespace)
	obj, err := objs.Get(ctx, owner, metav1.GetOptions{})
	if err != nil {
		return done(fmt.Errorf("Sandbox %s: %w", owner, err))
	}
	start := r
	start.Started = true
	say(start)
	switch {
	case obj.Spec.OperatingMode == asv1.SandboxOperatingModeSuspended:
		r.Action = "suspended" // already on its way out
	case pod.DeletionTimestamp != nil:
		r.Action = "moved" // already evicted: its successor is to come
	case pod.Status.Phase == corev1.PodRunning && !ready(&pod):
		// Stopped on its host: suspended, it stays stopped, archived.
		r.Action = "suspended"
		patch := fmt.Appendf(nil, `{"spec":{"operatingMode":%q}}`, asv1.SandboxOperatingModeSuspended)
		if _, err := objs.Patch(ctx, owner, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "sbx-drain"}); err != nil {
			return done(fmt.Errorf("suspend Sandbox %s: %w", owner, err))
		}
	default:
		r.Action = "moved"
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}}
		if err := d.kube.CoreV1().Pods(pod.Namespace).EvictV1(ctx, ev); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return done(fmt.Errorf("evict pod %s: %w", pod.Name, err))
		}
	}
	// The old pod goes once its host has archived the sandbox.
	if err := d.poll(ctx, func() (bool, error) {
		cur, err := d.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && cur.UID != pod.UID, err
	}); err != nil {
		return done(fmt.Errorf("waiting for host %s to archive it: %w", d.node, err))
	}
	if r.Action == "suspended" {
		return done(nil)
	}
	// Its next pod runs on another host, restored from the archive.
	if err := d.poll(ctx, func() (bool, error) {
		cur, err := d.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if cur.UID == pod.UID || cur.Spec.NodeName == "" {
			return false, nil
		}
		if cur.Spec.NodeName == d.node {
			return false, fmt.Errorf("its new pod was placed on %s again", d.node)
		}
		if cur.Status.Phase == corev1.PodFailed {
			return false, fmt.Errorf("its new pod failed on %s: %s", cur.Spec.NodeName, cur.Status.Message)
		}
		r.To = cur.Spec.NodeName
		return ready(cur), nil
	}); err != nil {
		where := "no host took it"
		if r.To != "" {
			where = "host " + r.To + " has not made it ready"
		}
		return done(fmt.Errorf("archived, but %s: %w", where, err))
	}
	return done(nil)
}

// poll calls check every Poll until it says done or fails, or ctx ends.
func (d *drainer) poll(ctx context.Context, check func() (bool, error)) error {
	tick := time.NewTicker(d.opt.Poll)
	defer tick.Stop()
	for {
		ok, err := check()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return fmt.Errorf("not done within %s", d.opt.Timeout)
			}
			return context.Cause(ctx)
		case <-tick.C:
		}
	}
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
