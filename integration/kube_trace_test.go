package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	asclient "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned"
	asinformers "sigs.k8s.io/agent-sandbox/clients/k8s/informers/externalversions"
)

// podTrace is when a watcher saw each step of one sandbox's way to Ready:
// the Sandbox object, its pod, the pod bound to a node, Running, Ready.
type podTrace struct {
	object, pod, bound, running, ready time.Time
	node                               string
}

// tracer watches namespace sbx's Sandbox objects and pods and notes the
// time each step of a sandbox's start reached it, to tell where a slow
// create → first exec spends its time (the API's own timestamps are whole
// seconds).
type tracer struct {
	mu     sync.Mutex
	traces map[string]*podTrace // by object (= pod) name
	cancel context.CancelFunc
}

func startTracer(t *testing.T, kubeconfig string) *tracer {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(rc)
	agents := asclient.NewForConfigOrDie(rc)
	ctx, cancel := context.WithCancel(context.Background())
	tr := &tracer{traces: map[string]*podTrace{}, cancel: cancel}
	t.Cleanup(cancel)
	kinf := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace("sbx"))
	ainf := asinformers.NewSharedInformerFactoryWithOptions(agents, 0, asinformers.WithNamespace("sbx"))
	ainf.Agents().V1beta1().Sandboxes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{ //nolint:errcheck
		AddFunc: func(obj any) {
			m, _ := cache.MetaNamespaceKeyFunc(obj)
			tr.note(strings.TrimPrefix(m, "sbx/"), func(p *podTrace, now time.Time) { setOnce(&p.object, now) })
		},
	})
	onPod := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		tr.note(pod.Name, func(p *podTrace, now time.Time) {
			setOnce(&p.pod, now)
			if pod.Spec.NodeName != "" {
				setOnce(&p.bound, now)
				p.node = pod.Spec.NodeName
			}
			if pod.Status.Phase == corev1.PodRunning {
				setOnce(&p.running, now)
			}
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					setOnce(&p.ready, now)
				}
			}
		})
	}
	kinf.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{ //nolint:errcheck
		AddFunc:    onPod,
		UpdateFunc: func(_, obj any) { onPod(obj) },
	})
	kinf.Start(ctx.Done())
	ainf.Start(ctx.Done())
	kinf.WaitForCacheSync(ctx.Done())
	ainf.WaitForCacheSync(ctx.Done())
	return tr
}

func setOnce(t *time.Time, now time.Time) {
	if t.IsZero() {
		*t = now
	}
}

func (tr *tracer) note(name string, f func(*podTrace, time.Time)) {
	now := time.Now()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	p := tr.traces[name]
	if p == nil {
		p = &podTrace{}
		tr.traces[name] = p
	}
	f(p, now)
}

// report is one line per traced sandbox, slowest object → Ready first:
// the milliseconds from the object to each later step.
func (tr *tracer) report() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	type row struct {
		name  string
		total time.Duration
		line  string
	}
	var rows []row
	ms := func(from, to time.Time) string {
		if from.IsZero() || to.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%d", to.Sub(from).Milliseconds())
	}
	for name, p := range tr.traces {
		if p.object.IsZero() || p.ready.IsZero() {
			continue
		}
		rows = append(rows, row{name, p.ready.Sub(p.object), fmt.Sprintf("%s %s: pod %s, bound %s, running %s, ready %s ms (at %s)",
			name, p.node, ms(p.object, p.pod), ms(p.object, p.bound), ms(p.object, p.running), ms(p.object, p.ready),
			p.object.Format("15:04:05.000"))})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].total > rows[j].total })
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.line + "\n")
	}
	return b.String()
}
