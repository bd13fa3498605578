// Package node makes an sbx host a Kubernetes node through virtual-kubelet:
// pods that kube-scheduler binds to it run as sbx sandboxes (one pod = one
// sandbox, id derived from the pod, see package podspec), kubectl logs and
// exec reach them through the Manager, and a sandbox whose pod goes away
// while its agent-sandbox Sandbox object stays (suspend, eviction, a
// cordoned host's pods re-placed) is handed off to the shared blob store,
// from where whichever host gets its next pod takes it over.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	vkerrdefs "github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Sandboxes is what the provider needs of the sandbox Manager.
type Sandboxes interface {
	Get(ctx context.Context, idOrName string) (*store.Sandbox, error)
	List(ctx context.Context, f store.Filter) ([]*store.Sandbox, error)
	CreateWithID(ctx context.Context, id string, req wire.CreateSandboxRequest) (*store.Sandbox, error)
	Start(ctx context.Context, idOrName string) (*store.Sandbox, error)
	Delete(ctx context.Context, idOrName string, wait bool) (*store.Sandbox, error)
	Handoff(ctx context.Context, id, owner, pod string, opt sandbox.StopOptions) error
	Claim(ctx context.Context, id, pod string) (sandbox.Claim, error)
	Forget(ctx context.Context, id string) error
	Manifest(ctx context.Context, id string) (*sandbox.Transfer, error)
	// Checkpoint and SetRecovery: checkpoint.go.
	Checkpoint(ctx context.Context, id, owner, pod, since string) (sandbox.Checkpointed, error)
	SetRecovery(ctx context.Context, id string, rec *wire.Recovery) error
	Freeze(ctx context.Context, id string, frozen bool) error // watchdog.go
	TakeOver(ctx context.Context, id string, labels map[string]string) (*store.Sandbox, error)
	DropTransfer(ctx context.Context, id string) error
	Agent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error)
	MainLogPath(sb *store.Sandbox) (string, error)
	EventsChanged() <-chan struct{}
	SetLifeOwner(o sandbox.LifeOwner)
}

// Owners answers whether a pod's agent-sandbox Sandbox object still exists
// (the one of that UID, and is not being deleted): then the sandbox must
// survive its pod, and the object is made to hold ArchiveFinalizer first,
// so deleting it later drops the archive (finalizer.go).
type Owners interface {
	KeepArchive(ctx context.Context, namespace, name string, uid types.UID) (bool, error)
	// Suspend and Delete change the object of that uid (owner.go).
	Suspend(ctx context.Context, namespace, name string, uid types.UID) error
	Delete(ctx context.Context, namespace, name string, uid types.UID) error
}

// Addresses gives a running sandbox's IP (the network package), if any.
type Addresses interface {
	AddressOf(id string) (string, bool)
}

// Labels the host puts on the sandboxes it runs for pods, so that after a
// restart it knows which local sandboxes stand for which pods.
const (
	LabelPodNamespace = "sbx.dev/pod-namespace"
	LabelPodName      = "sbx.dev/pod-name"
	// annotationLocal marks a pod the provider made up from a local
	// sandbox (after a restart): Kubernetes has no such pod any more.
	annotationLocal = "sbx.dev/local"
)

// Provider implements virtual-kubelet's PodLifecycleHandler and
// PodNotifier over the sandbox Manager.
type Provider struct {
	m      Sandboxes
	owners Owners
	addrs  Addresses
	node   string
	hostIP string
	grace  time.Duration
	log    *slog.Logger
	// ensureTeam: Config.EnsureTeam.
	ensureTeam func(ctx context.Context, team string) error
	// secret reads a Secret of the pods' namespace (values.go).
	secret     func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	recoveries Recoveries // recovery.go; nil: not recorded in Kubernetes

	mu     sync.Mutex
	pods   map[string]*corev1.Pod // namespace/name → the pod as Kubernetes gave it
	failed map[string]string      // namespace/name → why its sandbox could not be made
	last   map[string]string      // namespace/name → fingerprint of the last status sent
	notify func(*corev1.Pod)
	frozen map[string]bool // ids the lease watchdog froze; nil when it froze none (watchdog.go)
}

// NewProvider returns a provider for node (its name) at hostIP.
func NewProvider(m Sandboxes, owners Owners, addrs Addresses, node, hostIP string, log *slog.Logger) *Provider {
	if log == nil {
		log = slog.Default()
	}
	return &Provider{m: m, owners: owners, addrs: addrs, node: node, hostIP: hostIP, grace: 5 * time.Second, log: log,
		pods: map[string]*corev1.Pod{}, failed: map[string]string{}, last: map[string]string{}}
}

func key(namespace, name string) string { return namespace + "/" + name }

// CreatePod runs the pod's sandbox: the local one if this host has it
// (a restart), else the handed-off one from the blob store, else a new one.
func (p *Provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	if pod.DeletionTimestamp != nil {
		// Being deleted: an update after DeletePod forgot it must not
		// start its sandbox again (it would outlive the pod).
		return nil
	}
	ctx = nodeScope(ctx)
	k := key(pod.Namespace, pod.Name)
	p.mu.Lock()
	p.pods[k] = pod.DeepCopy()
	delete(p.failed, k)
	p.mu.Unlock()
	err := p.ensure(ctx, pod)
	if err != nil {
		p.log.Error("kube: run pod", "pod", k, "err", err)
		if errdefs.KindOf(err) == errdefs.KindInvalid || errdefs.KindOf(err) == errdefs.KindNotFound {
			p.mu.Lock()
			p.failed[k] = err.Error() // will not get better by retrying: the pod fails
			p.mu.Unlock()
			err = nil
		}
	}
	p.sendStatus(ctx, k)
	return err
}

func (p *Provider) ensure(ctx context.Context, pod *corev1.Pod) error {
	id, req, team, err := podspec.RequestFromPod(pod)
	if err != nil {
		return errdefs.Invalid(wire.CodeInvalidSandbox, "%v", err)
	}
	if _, err := p.m.Get(ctx, id); err == nil {
		_, err = p.m.Start(ctx, id) // a no-op when started
		return err
	} else if errdefs.KindOf(err) != errdefs.KindNotFound {
		return err
	}
	// The fencing token first: from now on only this pod's host may write
	// the sandbox back (a cut-off host that ran its predecessor may not).
	prev, err := p.m.Claim(ctx, id, string(pod.UID))
	if err != nil {
		return err
	}
	// Then the team: a take-over restores the sandbox into it too (a
	// team's sandbox stopped on one host may start on one that has never
	// seen the team).
	if p.ensureTeam != nil {
		if err := p.ensureTeam(ctx, team); err != nil {
			return err
		}
	}
	labels := map[string]string{LabelPodNamespace: pod.Namespace, LabelPodName: pod.Name}
	owner := string(ownerOf(pod))
	tr, err := p.m.Manifest(ctx, id)
	if err != nil {
		return err
	}
	// A pod whose predecessor's host was lost (no handoff) comes back
	// from the newest checkpoint, or fresh: say so (recovery.go).
	rec := sandbox.Recovered(prev, string(pod.UID), tr, time.Now())
	if tr != nil && (tr.Owner == owner || tr.Owner == "") {
		if _, err := p.m.TakeOver(ctx, id, labels); err != nil {
			return err
		}
		return p.recovered(ctx, pod, id, rec)
	}
	if tr != nil {
		holder := tr.Owner
		rec = nil // the claim was the deleted owner's too
		// Left by a deleted object of the same namespace/name (its
		// finalizer was removed by hand): not this one's files.
		p.log.Info("kube: drop the archive of a deleted owner", "id", id, "owner", holder, "pod", key(pod.Namespace, pod.Name))
		if err := p.m.DropTransfer(ctx, id); err != nil {
			return err
		}
	}
	if req, err = p.withValues(ctx, pod, req); err != nil { // values.go
		return err
	}
	if req.Labels == nil {
		req.Labels = map[string]string{}
	}
	for k, v := range labels {
		req.Labels[k] = v
	}
	tctx := auth.WithPrincipal(ctx, auth.Principal{KeyID: "kube-node", Team: team})
	if _, err = p.m.CreateWithID(tctx, id, req); err != nil {
		return err
	}
	return p.recovered(ctx, pod, id, rec)
}

// UpdatePod keeps the newest copy of the pod (labels change when a warm
// pool's sandbox is claimed); the sandbox itself does not change. A pod
// not seen since a restart (virtual-kubelet found the local stand-in) is
// run as at its creation: its sandbox may have died with the host.
func (p *Provider) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	ctx = nodeScope(ctx)
	k := key(pod.Namespace, pod.Name)
	p.mu.Lock()
	_, known := p.pods[k]
	if known {
		p.pods[k] = pod.DeepCopy()
	}
	p.mu.Unlock()
	if !known {
		return p.CreatePod(ctx, pod)
	}
	return nil
}

// DeletePod ends the pod's sandbox here. While its Sandbox object stays,
// the sandbox is handed off (stopped, archived with a manifest, removed
// locally) so its next pod, on any host, takes it over; when the object
// is gone, the sandbox and its archive are deleted. A pod this provider
// made up after a restart (Kubernetes deleted the real one while this
// host was away) is only forgotten: another host may have its newer copy.
func (p *Provider) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	ctx = nodeScope(ctx)
	k := key(pod.Namespace, pod.Name)
	id := podspec.IDForPod(pod.Namespace, pod.Name)
	err := p.end(ctx, pod, id)
	if err != nil && errdefs.KindOf(err) != errdefs.KindNotFound {
		p.log.Error("kube: end pod", "pod", k, "err", err)
		return err
	}
	p.mu.Lock()
	known := p.pods[k]
	delete(p.pods, k)
	delete(p.failed, k)
	delete(p.last, k)
	notify := p.notify
	p.mu.Unlock()
	if known == nil {
		known = pod
	}
	if notify != nil && pod.Annotations[annotationLocal] == "" {
		notify(terminated(known))
	}
	if errdefs.KindOf(err) == errdefs.KindNotFound {
		return vkerrdefs.NotFound(err.Error())
	}
	return nil
}

func (p *Provider) end(ctx context.Context, pod *corev1.Pod, id string) error {
	if pod.Annotations[annotationLocal] != "" {
		p.log.Info("kube: forget a sandbox whose pod is gone", "id", id)
		return p.m.Forget(ctx, id)
	}
	keep, err := p.sandboxSurvives(ctx, pod)
	if err != nil {
		return err
	}
	if keep {
		p.log.Info("kube: hand off sandbox", "id", id, "pod", key(pod.Namespace, pod.Name))
		return p.m.Handoff(ctx, id, string(ownerOf(pod)), string(pod.UID), sandbox.StopOptions{Grace: p.grace})
	}
	p.log.Info("kube: delete sandbox", "id", id, "pod", key(pod.Namespace, pod.Name))
	_, derr := p.m.Delete(ctx, id, true)
	if derr != nil && errdefs.KindOf(derr) != errdefs.KindNotFound {
		return derr
	}
	if err := p.m.DropTransfer(ctx, id); err != nil {
		return err
	}
	return derr
}

// sandboxSurvives reports whether the pod's owning Sandbox object exists
// and is not being deleted (and makes it hold the archive's finalizer). A
// pod no Sandbox owns dies with its sandbox.
func (p *Provider) sandboxSurvives(ctx context.Context, pod *corev1.Pod) (bool, error) {
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "Sandbox" && p.owners != nil {
			return p.owners.KeepArchive(ctx, pod.Namespace, ref.Name, ref.UID)
		}
	}
	return false, nil
}

// ownerOf is the UID of the pod's Sandbox object ("" when none owns it):
// what a handed-off sandbox's manifest is bound to.
func ownerOf(pod *corev1.Pod) types.UID {
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "Sandbox" {
			return ref.UID
		}
	}
	return ""
}

// GetPod returns the pod as Kubernetes gave it, with its current status.
func (p *Provider) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	ctx = nodeScope(ctx)
	p.mu.Lock()
	pod := p.pods[key(namespace, name)]
	p.mu.Unlock()
	if pod == nil {
		// After a restart: the local sandbox stands for the pod.
		pods, err := p.localPods(ctx)
		if err != nil {
			return nil, err
		}
		for _, lp := range pods {
			if lp.Namespace == namespace && lp.Name == name {
				return lp, nil
			}
		}
		return nil, vkerrdefs.NotFoundf("pod %s/%s is not on this host", namespace, name)
	}
	pod = pod.DeepCopy()
	pod.Status = *p.status(ctx, pod)
	return pod, nil
}

// GetPodStatus is GetPod's status.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	ctx = nodeScope(ctx)
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods lists the pods this host runs: those Kubernetes gave it, and
// local sandboxes made for pods it has not heard of since a restart
// (virtual-kubelet deletes those Kubernetes no longer has).
func (p *Provider) GetPods(ctx context.Context) ([]*corev1.Pod, error) {
	ctx = nodeScope(ctx)
	p.mu.Lock()
	seen := map[string]bool{}
	var out []*corev1.Pod
	for k, pod := range p.pods {
		seen[k] = true
		out = append(out, pod.DeepCopy())
	}
	p.mu.Unlock()
	local, err := p.localPods(ctx)
	if err != nil {
		return nil, err
	}
	for _, lp := range local {
		if !seen[key(lp.Namespace, lp.Name)] {
			out = append(out, lp)
		}
	}
	for _, pod := range out {
		pod.Status = *p.status(ctx, pod)
	}
	return out, nil
}

// localPods are stand-in pods for the local sandboxes made for pods.
func (p *Provider) localPods(ctx context.Context) ([]*corev1.Pod, error) {
	sbs, err := p.m.List(ctx, store.Filter{})
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, sb := range sbs {
		ns, name := sb.Spec.Labels[LabelPodNamespace], sb.Spec.Labels[LabelPodName]
		if ns == "" || name == "" || podspec.IDForPod(ns, name) != sb.ID {
			continue
		}
		out = append(out, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{annotationLocal: "true"}},
			Spec:       corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: podspec.ContainerName, Image: sb.Spec.Image}}},
		})
	}
	return out, nil
}

// NotifyPods registers virtual-kubelet's status callback and starts
// sending statuses: at once after a create or delete, whenever the
// Manager records an event, and every few seconds.
func (p *Provider) NotifyPods(ctx context.Context, notify func(*corev1.Pod)) {
	ctx = nodeScope(ctx)
	p.mu.Lock()
	p.notify = notify
	p.mu.Unlock()
	go p.statusLoop(ctx)
}

func (p *Provider) statusLoop(ctx context.Context) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-p.m.EventsChanged():
		}
		p.mu.Lock()
		keys := make([]string, 0, len(p.pods))
		for k := range p.pods {
			keys = append(keys, k)
		}
		p.mu.Unlock()
		for _, k := range keys {
			p.sendStatus(ctx, k)
		}
	}
}

// sendStatus notifies the pod's status when it changed since the last.
func (p *Provider) sendStatus(ctx context.Context, k string) {
	p.mu.Lock()
	pod, notify := p.pods[k], p.notify
	p.mu.Unlock()
	if pod == nil || notify == nil {
		return
	}
	pod = pod.DeepCopy()
	pod.Status = *p.status(ctx, pod)
	fp := fingerprint(&pod.Status)
	p.mu.Lock()
	if p.last[k] == fp || p.pods[k] == nil {
		p.mu.Unlock()
		return
	}
	p.last[k] = fp
	p.mu.Unlock()
	notify(pod)
}

func fingerprint(s *corev1.PodStatus) string {
	fp := fmt.Sprintf("%s|%s|%s|%s", s.Phase, s.Reason, s.PodIP, s.Message)
	for _, c := range s.Conditions {
		fp += "|" + string(c.Type) + "=" + string(c.Status)
	}
	return fp
}

// isNotFound reports a Kubernetes or sbx not-found error.
func isNotFound(err error) bool {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return apierrors.IsNotFound(err)
	}
	return errdefs.KindOf(err) == errdefs.KindNotFound
}

// nodeScope is the scope of the kubelet's calls: the node runs every
// team's pods, so its lookups are the daemon's own work; a create acts for
// the pod's team (ensure).
func nodeScope(ctx context.Context) context.Context { return auth.System(ctx, "kube node provider") }
