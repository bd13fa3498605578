package node

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// valuesWait is how long a pod's sandbox waits for the Secret of its
// values: the gateway makes it right after the Sandbox object it is owned
// by (podspec/values.go), so a fast host can get the pod first.
const valuesWait = 30 * time.Second

// withValues is req with the env values and bucket keys of the Secret the
// pod's annotation names (none: req as it is).
func (p *Provider) withValues(ctx context.Context, pod *corev1.Pod, req wire.CreateSandboxRequest) (wire.CreateSandboxRequest, error) {
	name := podspec.ValuesRef(pod.Annotations)
	if name == "" {
		return req, nil
	}
	if p.secret == nil {
		return req, errdefs.Invalid(wire.CodeInvalidSandbox, "pod %s/%s: its values are in Secret %s, which this host cannot read", pod.Namespace, pod.Name, name)
	}
	deadline := time.Now().Add(valuesWait)
	for {
		s, err := p.secret(ctx, pod.Namespace, name)
		if err == nil {
			v, err := podspec.ValuesOf(s)
			if err == nil {
				req, err = podspec.Join(req, v)
			}
			if err != nil {
				return req, errdefs.Invalid(wire.CodeInvalidSandbox, "pod %s/%s: %v", pod.Namespace, pod.Name, err)
			}
			return req, nil
		}
		if !isNotFound(err) || time.Now().After(deadline) {
			return req, errdefs.Unavailable(wire.CodeSandboxUnavailable, "pod %s/%s: read Secret %s of its values: %v", pod.Namespace, pod.Name, name, err)
		}
		select {
		case <-ctx.Done():
			return req, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
