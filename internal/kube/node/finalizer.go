package node

import (
	"context"
	"log/slog"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/kube/podspec"
)

// ArchiveFinalizer is on every Sandbox object whose sandbox a host handed
// off to the blob store: a suspended sandbox has no pod, so no host hears
// of its deletion through virtual-kubelet. Deleting the object, any host
// deletes its pod (if it has one again), drops the archive and removes the
// finalizer (reapArchives).
const ArchiveFinalizer = "sbx.dev/archive"

// reapResync is how often every host looks again at the Sandbox objects
// being deleted, to see whether their pods are gone yet.
const reapResync = 5 * time.Second

// sandboxObjects reads agent-sandbox Sandbox objects and puts the archive's
// finalizer on them.
type sandboxObjects struct{ dyn dynamic.Interface }

// KeepArchive reports whether the Sandbox namespace/name of that uid exists
// and is neither being deleted nor expired (owner.go), after making it hold
// ArchiveFinalizer (so the archive about to be written is dropped with the
// object).
func (s sandboxObjects) KeepArchive(ctx context.Context, namespace, name string, uid types.UID) (bool, error) {
	res := s.dyn.Resource(sandboxGVR).Namespace(namespace)
	for attempt := 0; ; attempt++ {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if isNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if obj.GetUID() != uid || obj.GetDeletionTimestamp() != nil || expired(obj, time.Now()) {
			return false, nil
		}
		if slices.Contains(obj.GetFinalizers(), ArchiveFinalizer) {
			return true, nil
		}
		obj.SetFinalizers(append(obj.GetFinalizers(), ArchiveFinalizer))
		_, err = res.Update(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			return true, nil
		}
		if !apierrors.IsConflict(err) || attempt == 4 {
			return false, err
		}
	}
}

// reapArchives finishes the deletion of Sandbox objects that hold
// ArchiveFinalizer, until ctx ends. Every host runs it; each step is
// idempotent, so two hosts doing the same one do no harm.
func reapArchives(ctx context.Context, dyn dynamic.Interface, client kubernetes.Interface, namespace string, m Sandboxes, log *slog.Logger) {
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, reapResync, namespace, nil)
	inf := f.ForResource(sandboxGVR).Informer()
	handle := func(o any) {
		if obj, ok := o.(*unstructured.Unstructured); ok {
			if err := reap(ctx, dyn, client, m, obj); err != nil {
				log.Warn("kube: finish deleting a Sandbox", "sandbox", obj.GetNamespace()+"/"+obj.GetName(), "err", err)
			}
		}
	}
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, o any) { handle(o) },
	})
	f.Start(ctx.Done())
}

// reap is one step of a deleted Sandbox: while its pod exists, delete the
// pod (the garbage collector waits for the finalizer, and its host drops
// the sandbox and archive, provider.DeletePod); then drop the archive and
// remove the finalizer.
func reap(ctx context.Context, dyn dynamic.Interface, client kubernetes.Interface, m Sandboxes, obj *unstructured.Unstructured) error {
	if obj.GetDeletionTimestamp() == nil || !slices.Contains(obj.GetFinalizers(), ArchiveFinalizer) {
		return nil
	}
	ns := obj.GetNamespace()
	podName := obj.GetName()
	if n := obj.GetAnnotations()[asv1.SandboxPodNameAnnotation]; n != "" {
		podName = n
	}
	pod, err := client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	switch {
	case err == nil && ownerOf(pod) == obj.GetUID():
		if pod.DeletionTimestamp == nil {
			uid := pod.UID
			err := client.CoreV1().Pods(ns).Delete(ctx, podName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !isNotFound(err) {
				return err
			}
		}
		return nil // the next look, once the pod is gone
	case err != nil && !isNotFound(err):
		return err
	}
	if err := m.DropTransfer(ctx, podspec.IDForPod(ns, podName)); err != nil {
		return err
	}
	obj = obj.DeepCopy()
	obj.SetFinalizers(slices.DeleteFunc(obj.GetFinalizers(), func(f string) bool { return f == ArchiveFinalizer }))
	_, err = dyn.Resource(sandboxGVR).Namespace(ns).Update(ctx, obj, metav1.UpdateOptions{})
	if isNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or changed: the next look
	}
	return err
}
