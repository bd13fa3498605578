package gateway

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	asclient "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned"
	asinformers "sigs.k8s.io/agent-sandbox/clients/k8s/informers/externalversions"
	aslisters "sigs.k8s.io/agent-sandbox/clients/k8s/listers/api/v1beta1"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// Cluster is the gateway's view of the cluster: watch caches (client-go
// informers) of the namespace's Sandbox objects and Pods and of the Nodes,
// and the clients that change them. Every replica keeps its own caches;
// the Kubernetes API is the only shared state, so replicas need no
// coordination of their own.
type Cluster struct {
	Namespace string
	Kube      kubernetes.Interface
	Agents    asclient.Interface

	kubeInf   informers.SharedInformerFactory
	agentsInf asinformers.SharedInformerFactory
	sandboxes aslisters.SandboxNamespaceLister
	index     cache.Indexer // the Sandbox objects by team, sbx name and id (indexTeam…)
	pods      corelisters.PodNamespaceLister
	nodes     corelisters.NodeLister
	synced    []cache.InformerSynced
	values    *valuesCache // values.go

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change a cache sees
}

// NewCluster returns the view of namespace; Start fills its caches.
func NewCluster(kube kubernetes.Interface, agents asclient.Interface, namespace string) *Cluster {
	c := &Cluster{Namespace: namespace, Kube: kube, Agents: agents, changed: make(chan struct{})}
	c.kubeInf = informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	c.agentsInf = asinformers.NewSharedInformerFactoryWithOptions(agents, 0, asinformers.WithNamespace(namespace))
	sbInf := c.agentsInf.Agents().V1beta1().Sandboxes()
	podInf := c.kubeInf.Core().V1().Pods()
	nodeInf := c.kubeInf.Core().V1().Nodes()
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.notify() },
		UpdateFunc: func(any, any) { c.notify() },
		DeleteFunc: func(any) { c.notify() },
	}
	// A list of one team and a lookup by name or id read one index entry,
	// not every team's objects (the gateway carries the whole cluster).
	err := sbInf.Informer().AddIndexers(cache.Indexers{
		indexTeam: func(o any) ([]string, error) { return []string{entryOf(o.(*asv1.Sandbox)).team}, nil },
		indexName: func(o any) ([]string, error) {
			e := entryOf(o.(*asv1.Sandbox))
			if e.name == "" {
				return []string{e.obj.Name}, nil // made with kubectl: found by the object's name
			}
			return []string{e.name}, nil
		},
		indexID: func(o any) ([]string, error) { return []string{entryOf(o.(*asv1.Sandbox)).id}, nil },
	})
	if err != nil {
		panic(err) // only an informer already started refuses indexers
	}
	c.index = sbInf.Informer().GetIndexer()
	for _, inf := range []cache.SharedIndexInformer{sbInf.Informer(), podInf.Informer(), nodeInf.Informer()} {
		inf.AddEventHandler(notify) //nolint:errcheck // the registration handle is only for removal
		c.synced = append(c.synced, inf.HasSynced)
	}
	c.sandboxes = sbInf.Lister().Sandboxes(namespace)
	c.pods = podInf.Lister().Pods(namespace)
	c.nodes = nodeInf.Lister()
	c.values = newValuesCache(kube, namespace)
	c.synced = append(c.synced, c.values.synced)
	return c
}

// Start runs the informers until ctx ends and waits up to syncTimeout for
// their first list.
func (c *Cluster) Start(ctx context.Context, syncTimeout time.Duration) error {
	c.kubeInf.Start(ctx.Done())
	c.agentsInf.Start(ctx.Done())
	c.values.inf.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), c.synced...) {
		return fmt.Errorf("gateway: the watch caches of namespace %s did not fill: %w", c.Namespace, context.Cause(syncCtx))
	}
	return nil
}

// Synced reports whether every cache holds its first list.
func (c *Cluster) Synced() bool {
	for _, s := range c.synced {
		if !s() {
			return false
		}
	}
	return true
}

func (c *Cluster) notify() {
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// waitFor calls done after every change the caches see until it reports
// true or an error, or ctx ends.
func (c *Cluster) waitFor(ctx context.Context, done func() (bool, error)) error {
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-ch:
		}
	}
}

// entry is a Sandbox object with what the gateway derives from it.
type entry struct {
	obj  *asv1.Sandbox
	id   string // the sbx sandbox id (podspec.IDForPod of the pod it makes)
	name string // the sbx name, if any
	team string
}

func entryOf(obj *asv1.Sandbox) entry {
	team := obj.Labels[podspec.LabelTeam]
	if team == "" {
		team = auth.DefaultTeam
	}
	return entry{obj: obj, id: podspec.IDForPod(obj.Namespace, obj.Name), name: obj.Labels[podspec.LabelName], team: team}
}

// ref is how messages name the sandbox: its name, else its id.
func (e entry) ref() string {
	if e.name != "" {
		return e.name
	}
	return e.id
}

// The Sandbox informer's indexes.
const (
	indexTeam = "team"
	indexName = "name" // the sbx name, else (made with kubectl) the object's name
	indexID   = "id"
)

// list returns the Sandbox objects the caller in ctx sees, oldest first.
func (c *Cluster) list(ctx context.Context) ([]entry, error) {
	var objs []any
	var err error
	if p, ok := auth.FromContext(ctx); ok && !p.AllTeams() {
		objs, err = c.index.ByIndex(indexTeam, auth.TeamOf(ctx))
	} else {
		objs = c.index.List()
	}
	if err != nil {
		return nil, errdefs.Internal(err, "list sandboxes from the watch cache")
	}
	return c.visible(ctx, objs), nil
}

// visible is objs as entries the caller in ctx may see, oldest first.
func (c *Cluster) visible(ctx context.Context, objs []any) []entry {
	out := make([]entry, 0, len(objs))
	for _, o := range objs {
		if e := entryOf(o.(*asv1.Sandbox)); auth.Sees(ctx, e.team) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ti, tj := out[i].obj.CreationTimestamp, out[j].obj.CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return out[i].id < out[j].id
	})
	return out
}

// find returns the sandbox idOrName names among those the caller in ctx
// sees: by id, by sbx name, or (a Sandbox made with kubectl) by the
// object's own name. Anything else is 404 SANDBOX_NOT_FOUND, as on one host.
func (c *Cluster) find(ctx context.Context, idOrName string) (entry, error) {
	if podspec.IsID(idOrName) {
		if o, err := c.sandboxes.Get(idOrName); err == nil {
			if e := entryOf(o); auth.Sees(ctx, e.team) {
				return e, nil
			}
		}
	}
	for _, index := range []string{indexID, indexName} {
		objs, err := c.index.ByIndex(index, idOrName)
		if err != nil {
			return entry{}, errdefs.Internal(err, "look sandbox %q up in the watch cache", idOrName)
		}
		if found := c.visible(ctx, objs); len(found) > 0 {
			return found[0], nil
		}
	}
	return entry{}, errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", idOrName)
}

// refresh returns e's object as the cache holds it now; gone reports a
// deleted one.
func (c *Cluster) refresh(e entry) (_ entry, gone bool, err error) {
	o, err := c.sandboxes.Get(e.obj.Name)
	if apierrors.IsNotFound(err) {
		return e, true, nil
	}
	if err != nil {
		return e, false, errdefs.Internal(err, "read sandbox %s from the watch cache", e.id)
	}
	return entryOf(o), false, nil
}

// placement is where a sandbox's pod is and whether it serves.
type placement struct {
	pod   *corev1.Pod // nil: no pod (suspended, or not made yet)
	node  string
	api   string // the host's sbx API URL (node annotation sbx.dev/api)
	ready bool   // the pod runs and its sandbox's agent answers
	// onHost: the pod is Running on a host that has its sandbox, started
	// or not (stopped or paused there: the host starts it on the next
	// call that needs it, as on one host).
	onHost bool
}

// podName is the pod agent-sandbox made for obj.
func podName(obj *asv1.Sandbox) string {
	if n := obj.Annotations[asv1.SandboxPodNameAnnotation]; n != "" {
		return n
	}
	return obj.Name
}

// placementOf returns where e runs, from the caches.
func (c *Cluster) placementOf(e entry) placement {
	pod, err := c.pods.Get(podName(e.obj))
	if err != nil {
		return placement{}
	}
	p := placement{pod: pod, node: pod.Spec.NodeName}
	if p.node != "" {
		if n, err := c.nodes.Get(p.node); err == nil {
			p.api = n.Annotations[podspec.AnnotationAPI]
		}
	}
	p.onHost = p.api != "" && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning
	p.ready = p.onHost && podReady(pod)
	return p
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyHosts returns the API URL of every host node that is Ready.
func (c *Cluster) readyHosts() []string {
	nodes, err := c.nodes.List(labels.SelectorFromSet(labels.Set{podspec.LabelHost: "true"}))
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range nodes {
		api := n.Annotations[podspec.AnnotationAPI]
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && api != "" {
				out = append(out, api)
			}
		}
	}
	sort.Strings(out)
	return out
}
