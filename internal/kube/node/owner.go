package node

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/store"
)

// In cluster mode a sandbox's Sandbox object owns its life: the host's own
// timers (idle stop or pause, auto-archive, TTL, auto-delete) change the
// object, and Kubernetes' answer (the pod deleted) does the rest through
// DeletePod, so the API, kubectl and the host never disagree
// (docs/kubernetes/lifecycle.md).

// Act is the sandbox Manager's LifeOwner: a due idle stop, pause or
// archive of a pod's sandbox suspends its Sandbox object (agent-sandbox
// deletes the pod, DeletePod hands the sandbox off), and a due TTL or
// auto-delete deletes the object (its pod goes with it, DeletePod deletes
// the sandbox and the finalizer its archive). A pod no Sandbox owns (made
// by hand) has no object to change: its sandbox keeps the host's timers.
func (p *Provider) Act(ctx context.Context, sb *store.Sandbox, action, reason string) (bool, error) {
	ns, name := sb.Spec.Labels[LabelPodNamespace], sb.Spec.Labels[LabelPodName]
	p.mu.Lock()
	pod := p.pods[key(ns, name)]
	p.mu.Unlock()
	if pod == nil || p.owners == nil {
		return false, nil
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Kind != "Sandbox" {
			continue
		}
		if action == "delete" {
			p.log.Info("kube: delete the Sandbox object", "sandbox", key(ns, ref.Name), "reason", reason)
			return true, p.owners.Delete(ctx, ns, ref.Name, ref.UID)
		}
		p.log.Info("kube: suspend the Sandbox object", "sandbox", key(ns, ref.Name), "action", action, "reason", reason)
		return true, p.owners.Suspend(ctx, ns, ref.Name, ref.UID)
	}
	return false, nil
}

// Suspend sets the Sandbox namespace/name of that uid to operatingMode
// Suspended; one of another uid (or none) is left alone.
func (s sandboxObjects) Suspend(ctx context.Context, namespace, name string, uid types.UID) error {
	return s.change(ctx, namespace, name, uid, func(obj *unstructured.Unstructured) error {
		return unstructured.SetNestedField(obj.Object, string(asv1.SandboxOperatingModeSuspended), "spec", "operatingMode")
	})
}

// Delete makes the Sandbox namespace/name of that uid expire now with
// shutdownPolicy Delete: agent-sandbox deletes its pod and then the object,
// exactly as for a TTL the gateway set (so the host needs no delete right
// on Sandbox objects, deploy/kubernetes/host-rbac.yaml).
func (s sandboxObjects) Delete(ctx context.Context, namespace, name string, uid types.UID) error {
	now := time.Now().UTC().Format(time.RFC3339)
	return s.change(ctx, namespace, name, uid, func(obj *unstructured.Unstructured) error {
		if err := unstructured.SetNestedField(obj.Object, now, "spec", "shutdownTime"); err != nil {
			return err
		}
		return unstructured.SetNestedField(obj.Object, string(asv1.ShutdownPolicyDelete), "spec", "shutdownPolicy")
	})
}

// change applies edit to the Sandbox namespace/name of that uid and
// updates it, again on a conflict; a gone object (or one of another uid,
// or being deleted) is left alone.
func (s sandboxObjects) change(ctx context.Context, namespace, name string, uid types.UID, edit func(*unstructured.Unstructured) error) error {
	res := s.dyn.Resource(sandboxGVR).Namespace(namespace)
	for attempt := 0; ; attempt++ {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.GetUID() != uid || obj.GetDeletionTimestamp() != nil {
			return nil
		}
		if err := edit(obj); err != nil {
			return err
		}
		_, err = res.Update(ctx, obj, metav1.UpdateOptions{FieldManager: "sbx-host"})
		if err == nil || isNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == 4 {
			return err
		}
	}
}

// expired reports whether obj's shutdownTime has come with shutdownPolicy
// Delete: agent-sandbox deletes its pod and then the object, so the
// sandbox is deleted with its pod rather than archived for a resume that
// cannot come.
func expired(obj *unstructured.Unstructured, now time.Time) bool {
	at, _, _ := unstructured.NestedString(obj.Object, "spec", "shutdownTime")
	policy, _, _ := unstructured.NestedString(obj.Object, "spec", "shutdownPolicy")
	t, err := time.Parse(time.RFC3339, at)
	return err == nil && policy == string(asv1.ShutdownPolicyDelete) && !now.Before(t)
}
