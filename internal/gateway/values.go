package gateway

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// A sandbox's env values and bucket keys live in a Secret its object owns,
// never in the object (internal/kube/podspec/values.go). The gateway
// writes it after the object (it needs the object's UID to be owned by
// it, so Kubernetes deletes it with the object) and reads it back, from a
// watch cache of those Secrets only, to show a sandbox no host runs.

// valuesCache is a watch cache of the namespace's values Secrets.
type valuesCache struct {
	inf    informers.SharedInformerFactory
	lister corelisters.SecretNamespaceLister
	synced cache.InformerSynced
}

func newValuesCache(kube kubernetes.Interface, namespace string) *valuesCache {
	inf := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = podspec.LabelValues + "=true" }))
	si := inf.Core().V1().Secrets()
	return &valuesCache{inf: inf, lister: si.Lister().Secrets(namespace), synced: si.Informer().HasSynced}
}

// requestOf is e's create request with its values, from the caches.
func (c *Cluster) requestOf(e entry) (wire.CreateSandboxRequest, error) {
	req, err := podspec.RequestOf(e.obj)
	ref := podspec.ValuesRef(e.obj.Spec.PodTemplate.ObjectMeta.Annotations)
	if err != nil || ref == "" {
		return req, err
	}
	s, err := c.values.lister.Get(ref)
	if apierrors.IsNotFound(err) {
		return req, nil // not written yet: the create is still on its way
	}
	if err != nil {
		return req, err
	}
	v, err := podspec.ValuesOf(s)
	if err != nil {
		return req, err
	}
	return podspec.Join(req, v)
}

// writeValues keeps v in the Secret of obj (made, so it has a UID),
// creating it or replacing its values.
func (s *Server) writeValues(ctx context.Context, obj *asv1.Sandbox, v podspec.Values) error {
	api := s.cluster.Kube.CoreV1().Secrets(obj.Namespace)
	want := podspec.ValuesSecret(obj, v)
	_, err := api.Create(ctx, want, metav1.CreateOptions{FieldManager: "sbx-gateway"})
	if apierrors.IsAlreadyExists(err) {
		var cur = want
		if cur, err = api.Get(ctx, want.Name, metav1.GetOptions{}); err == nil {
			cur.Data = want.Data
			_, err = api.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "sbx-gateway"})
		}
	}
	if err != nil {
		return errdefs.Unavailable(wire.CodeSandboxUnavailable, "keep the env values and bucket keys of sandbox %s in Secret %s: %v", obj.Name, want.Name, err)
	}
	return nil
}

// valuesNow is e's request with its values read from the API server (not
// the cache: a PATCH must not lose a value written a moment ago).
func (s *Server) valuesNow(ctx context.Context, e entry, req wire.CreateSandboxRequest) (wire.CreateSandboxRequest, error) {
	ref := podspec.ValuesRef(e.obj.Spec.PodTemplate.ObjectMeta.Annotations)
	if ref == "" {
		return req, nil
	}
	sec, err := s.cluster.Kube.CoreV1().Secrets(e.obj.Namespace).Get(ctx, ref, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return req, nil
	}
	if err != nil {
		return req, errdefs.Unavailable(wire.CodeSandboxUnavailable, "read the values of sandbox %s: %v", e.ref(), err)
	}
	v, err := podspec.ValuesOf(sec)
	if err != nil {
		return req, errdefs.Internal(err, "sandbox %s", e.ref())
	}
	return podspec.Join(req, v)
}
