package podspec

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/wire"
)

// The values of a create request that are or may be credentials - env
// values and bucket keys - never go into the Sandbox object or its pods,
// whose annotations anyone who may read them sees (and which etcd keeps
// unencrypted). They go into a Secret of the object's namespace, owned by
// the object (deleted with it by Kubernetes' garbage collector), that the
// template's annotation AnnotationValues names. The host reads it when it
// runs the pod (RBAC: deploy/kubernetes/host-rbac.yaml).
const (
	// AnnotationValues names the Secret holding the request's Values.
	AnnotationValues = "sbx.dev/values"
	// ValuesKey is the Secret's key whose value is the JSON of Values.
	ValuesKey = "values.json"
	// LabelValues marks the Secrets of Values (the gateway watches them).
	LabelValues = "sbx.dev/values"
)

// Values are the credentials of a create request.
type Values struct {
	Env map[string]string `json:"env,omitempty"`
	// Buckets' keys, by the bucket's index in the request.
	Buckets []BucketKeys `json:"buckets,omitempty"`
}

// BucketKeys are one bucket mount's S3 keys.
type BucketKeys struct {
	AccessKeyID     string `json:"accessKeyId,omitempty"`
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
}

// Empty reports whether v holds nothing.
func (v Values) Empty() bool {
	if len(v.Env) > 0 {
		return false
	}
	for _, b := range v.Buckets {
		if b != (BucketKeys{}) {
			return false
		}
	}
	return true
}

// Split is req without its Values, and the Values.
func Split(req wire.CreateSandboxRequest) (wire.CreateSandboxRequest, Values) {
	var v Values
	if len(req.Env) > 0 {
		v.Env = maps.Clone(req.Env)
	}
	req.Env = nil
	if len(req.Buckets) > 0 {
		bs := append([]wire.BucketMount(nil), req.Buckets...)
		v.Buckets = make([]BucketKeys, len(bs))
		for i := range bs {
			v.Buckets[i] = BucketKeys{AccessKeyID: bs[i].AccessKeyID, SecretAccessKey: bs[i].SecretAccessKey}
			bs[i].AccessKeyID, bs[i].SecretAccessKey = "", ""
		}
		req.Buckets = bs
	}
	return req, v
}

// Join puts v back into req (Split's inverse).
func Join(req wire.CreateSandboxRequest, v Values) (wire.CreateSandboxRequest, error) {
	if len(v.Buckets) > len(req.Buckets) {
		return req, fmt.Errorf("the values hold keys of %d buckets, the request mounts %d", len(v.Buckets), len(req.Buckets))
	}
	if len(v.Env) > 0 {
		env := maps.Clone(req.Env)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, v.Env)
		req.Env = env
	}
	if len(v.Buckets) > 0 {
		req.Buckets = append([]wire.BucketMount(nil), req.Buckets...)
		for i, k := range v.Buckets {
			req.Buckets[i].AccessKeyID, req.Buckets[i].SecretAccessKey = k.AccessKeyID, k.SecretAccessKey
		}
	}
	return req, nil
}

// ValuesSecretName is the name of the Secret of the object named name.
func ValuesSecretName(name string) string { return name + "-values" }

// ValuesRef is the name of the Secret the annotations reference ("": none).
func ValuesRef(annotations map[string]string) string { return annotations[AnnotationValues] }

// ValuesSecret is the Secret of v for the Sandbox obj (made, so it has a
// UID): obj owns it, so it is deleted with obj.
func ValuesSecret(obj *asv1.Sandbox, v Values) *corev1.Secret {
	b, _ := json.Marshal(v) // plain fields: cannot fail
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: ValuesSecretName(obj.Name), Namespace: obj.Namespace,
			Labels: map[string]string{LabelValues: "true", LabelTeam: obj.Labels[LabelTeam]},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: asv1.GroupVersion.String(), Kind: asv1.SandboxKind, Name: obj.Name, UID: obj.UID,
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{ValuesKey: b},
	}
}

// ValuesOf reads the Values of a Secret ValuesSecret made.
func ValuesOf(s *corev1.Secret) (Values, error) {
	var v Values
	raw, ok := s.Data[ValuesKey]
	if !ok {
		return v, fmt.Errorf("secret %s/%s has no key %s", s.Namespace, s.Name, ValuesKey)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("secret %s/%s: %s: %w", s.Namespace, s.Name, ValuesKey, err)
	}
	return v, nil
}
