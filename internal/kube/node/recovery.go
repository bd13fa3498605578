package node

import (
	"context"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// Host loss (docs/kubernetes/lifecycle.md): this host saves each running
// sandbox of a Sandbox object every CheckpointInterval (checkpointLoop),
// and a pod re-placed here after its host was lost comes back from the
// newest save; what it lost is recorded on the sandbox (the API's
// recovery field), as an Event and as condition ConditionHostLost on its
// Sandbox object.

// ConditionHostLost is the Sandbox object's condition that says its
// sandbox came back after the loss of its host, and from what.
const ConditionHostLost = "SbxHostLost"

// DefaultCheckpointInterval is how often a running sandbox is saved.
const DefaultCheckpointInterval = 5 * time.Minute

// Recoveries records a recovery on the pod's Sandbox object.
type Recoveries interface {
	Recovered(ctx context.Context, pod *corev1.Pod, rec *wire.Recovery) error
}

// recovered records rec (nil: nothing was lost) on sandbox id and on the
// pod's Sandbox object. The sandbox runs either way: a failure to record
// on the object is logged, not the pod's failure.
func (p *Provider) recovered(ctx context.Context, pod *corev1.Pod, id string, rec *wire.Recovery) error {
	if rec == nil {
		return nil
	}
	p.log.Warn("kube: sandbox came back after its host was lost", "id", id, "pod", key(pod.Namespace, pod.Name), "from", rec.From, "message", rec.Message)
	if err := p.m.SetRecovery(ctx, id, rec); err != nil {
		return err
	}
	if p.recoveries != nil {
		if err := p.recoveries.Recovered(ctx, pod, rec); err != nil {
			p.log.Error("kube: record the recovery on the Sandbox object", "id", id, "err", err)
		}
	}
	return nil
}

var eventGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// Recovered sets ConditionHostLost on the pod's Sandbox object and
// records a Warning Event about it.
func (s sandboxObjects) Recovered(ctx context.Context, pod *corev1.Pod, rec *wire.Recovery) error {
	var ref *metav1.OwnerReference
	for i := range pod.OwnerReferences {
		if pod.OwnerReferences[i].Kind == "Sandbox" {
			ref = &pod.OwnerReferences[i]
		}
	}
	if ref == nil {
		return nil
	}
	reason := map[string]string{"checkpoint": "RestoredFromCheckpoint", "archive": "RestoredFromArchive", "fresh": "StartedFresh"}[rec.From]
	now := metav1.NewTime(rec.At)
	ev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"generateName": ref.Name + ".", "namespace": pod.Namespace},
		"involvedObject": map[string]any{
			"apiVersion": ref.APIVersion, "kind": ref.Kind, "name": ref.Name, "namespace": pod.Namespace, "uid": string(ref.UID),
		},
		"type": corev1.EventTypeWarning, "reason": reason, "message": rec.Message,
		"source":         map[string]any{"component": "sbx-host", "host": pod.Spec.NodeName},
		"firstTimestamp": now.UTC().Format(time.RFC3339), "lastTimestamp": now.UTC().Format(time.RFC3339), "count": int64(1),
	}}
	if _, err := s.dyn.Resource(eventGVR).Namespace(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return err
	}
	cond := map[string]any{
		"type": ConditionHostLost, "status": "True", "reason": reason, "message": rec.Message,
		"lastTransitionTime": now.UTC().Format(time.RFC3339),
	}
	if err := s.setCondition(ctx, pod.Namespace, ref, cond); err != nil {
		return err
	}
	// agent-sandbox's controller merge-patches the whole status.conditions
	// list it computed from its informer cache, so a reconcile that read
	// the object just before this write takes the condition away again. It
	// converges within seconds: look again a few times and put it back.
	go func() {
		ctx := context.WithoutCancel(ctx)
		for wait := time.Second; wait <= 16*time.Second; wait *= 2 {
			time.Sleep(wait)
			if err := s.setCondition(ctx, pod.Namespace, ref, cond); err != nil {
				return
			}
		}
	}()
	return nil
}

// setCondition puts cond on the Sandbox ref names, in place of one of its
// type, unless the object has it already.
func (s sandboxObjects) setCondition(ctx context.Context, namespace string, ref *metav1.OwnerReference, cond map[string]any) error {
	res := s.dyn.Resource(sandboxGVR).Namespace(namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil || obj.GetUID() != ref.UID {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		kept := conds[:0]
		for _, c := range conds {
			m, ok := c.(map[string]any)
			if ok && m["type"] == cond["type"] && m["reason"] == cond["reason"] && m["message"] == cond["message"] {
				return nil // there already
			}
			if !ok || m["type"] != cond["type"] {
				kept = append(kept, c)
			}
		}
		c := maps.Clone(cond)
		c["observedGeneration"] = obj.GetGeneration()
		if err := unstructured.SetNestedSlice(obj.Object, append(kept, c), "status", "conditions"); err != nil {
			return err
		}
		_, err = res.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: "sbx-host"})
		return err
	})
}

// checkpointLoop saves every running sandbox of a Sandbox object each
// interval (sandbox.Manager.Checkpoint: only when its files changed, and
// only while this host's pod holds its claim). A pod no Sandbox owns dies
// with its host's copy, so it has nothing to come back from.
func (p *Provider) checkpointLoop(ctx context.Context, every time.Duration) {
	ctx = nodeScope(ctx)
	last := map[string]string{} // id → fingerprint of its last checkpoint
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if p.isolated() {
			continue // frozen by the lease watchdog: a checkpoint would thaw nothing, but fence nothing either
		}
		p.mu.Lock()
		pods := make([]*corev1.Pod, 0, len(p.pods))
		for _, pod := range p.pods {
			pods = append(pods, pod)
		}
		p.mu.Unlock()
		seen := map[string]bool{}
		for _, pod := range pods {
			owner := ownerOf(pod)
			if owner == "" || pod.DeletionTimestamp != nil {
				continue
			}
			id := podspec.IDForPod(pod.Namespace, pod.Name)
			seen[id] = true
			res, err := p.m.Checkpoint(ctx, id, string(owner), string(pod.UID), last[id])
			switch {
			case errdefs.KindOf(err) == errdefs.KindNotFound:
			case err != nil:
				p.log.Error("kube: checkpoint", "id", id, "err", err)
			case res.Fenced:
				p.log.Warn("kube: checkpoint fenced: another pod holds the sandbox", "id", id, "pod", key(pod.Namespace, pod.Name))
			case !res.Unchanged:
				last[id] = res.Fingerprint
				p.log.Info("kube: checkpoint", "id", id, "bytes", res.Bytes, "frozen", res.Frozen, "at", res.At)
			}
		}
		for id := range last {
			if !seen[id] {
				delete(last, id)
			}
		}
	}
}
