package gateway

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/wire"
)

// What a user sees of a sandbox is the host's own record while a host has
// it, started or not (state, times, policy as the host applied it) and otherwise what the
// Sandbox object says: the create request it carries and a state read from
// its operating mode and pod.

// view is e as a user sees it.
func (s *Server) view(ctx context.Context, e entry) wire.Sandbox {
	p := s.cluster.placementOf(e)
	if p.onHost {
		var sb wire.Sandbox
		if err := s.hostGet(ctx, p.api, "/v1/sandboxes/"+e.id, &sb); err == nil {
			return merged(e, sb)
		}
	}
	return s.cluster.objectView(e, p)
}

// views is view for many sandboxes, from the watch caches alone: each
// host reports its sandboxes' states into their pods' statuses
// (podspec.HostState), so a list asks no host, however many there are.
func (s *Server) views(_ context.Context, all []entry) []wire.Sandbox {
	out := make([]wire.Sandbox, len(all))
	for i, e := range all {
		p := s.cluster.placementOf(e)
		out[i] = s.cluster.objectView(e, p)
		if !p.onHost || stateOf(e, p) != wire.StateStarting && stateOf(e, p) != wire.StateStarted {
			continue // being stopped or deleted: the object's word is the newer
		}
		if st, at, msg, ok := podspec.HostState(p.pod); ok {
			out[i].State, out[i].Error = st, msg
			if !at.IsZero() {
				out[i].StartedAt = &at
			}
		}
	}
	return out
}

// merged is a host's record with the cluster-wide identity the object
// holds (a host that restored the sandbox knows it by the same id).
func merged(e entry, sb wire.Sandbox) wire.Sandbox {
	sb.ID, sb.Team = e.id, e.team
	if sb.Name == "" {
		sb.Name = e.name
	}
	return sb
}

// objectView is e as its object describes it, for a sandbox no host runs.
func (c *Cluster) objectView(e entry, p placement) wire.Sandbox {
	tpl := e.obj.Spec.PodTemplate
	req, err := c.requestOf(e) // with its values (values.go)
	sb := wire.Sandbox{
		ID: e.id, Name: e.name, Team: e.team, State: stateOf(e, p), Reason: "cluster",
		Image: req.Image, Env: req.Env, Labels: req.Labels, CPU: req.CPU, MemoryMiB: req.MemoryMiB,
		PidsLimit: req.PidsLimit, DiskMiB: req.DiskMiB, Workdir: req.Workdir, Class: req.Class,
		CreatedAt: e.obj.CreationTimestamp.Time, TTLSeconds: req.TTLSeconds, Ephemeral: req.Ephemeral,
		KeepAlive: req.KeepAlive, Entrypoint: req.Entrypoint, RestartPolicy: req.RestartPolicy,
		Network: req.Network, Egress: req.Egress, Buckets: req.Buckets,
	}
	for i := range sb.Buckets {
		sb.Buckets[i].AccessKeyID, sb.Buckets[i].SecretAccessKey = "", "" // write-only, as on a host
	}
	if err != nil {
		sb.Error = err.Error()
	}
	if p.pod != nil && p.pod.Status.Phase == corev1.PodFailed {
		sb.Error = p.pod.Status.Message
	}
	if sb.Image == "" && len(tpl.Spec.Containers) > 0 {
		sb.Image = tpl.Spec.Containers[0].Image // the host's default, as podspec wrote it
	}
	if sb.Labels == nil {
		sb.Labels = map[string]string{}
	}
	if sb.Class == "" {
		sb.Class = sandbox.ClassContainer
	}
	sb.AutoStopSeconds, sb.AutoPauseSeconds = deref(req.AutoStopSeconds), deref(req.AutoPauseSeconds)
	sb.AutoArchiveSeconds, sb.AutoDeleteSeconds = deref(req.AutoArchiveSeconds), deref(req.AutoDeleteSeconds)
	return sb
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// stateOf reads a sandbox's state from its object and pod.
func stateOf(e entry, p placement) wire.State {
	switch {
	case e.obj.DeletionTimestamp != nil:
		return wire.StateDeleting
	case e.obj.Spec.OperatingMode == asv1.SandboxOperatingModeSuspended && p.pod != nil:
		return wire.StateStopping
	case e.obj.Spec.OperatingMode == asv1.SandboxOperatingModeSuspended:
		return wire.StateStopped
	case p.pod != nil && p.pod.Status.Phase == corev1.PodFailed:
		return wire.StateError
	case p.ready:
		return wire.StateStarted
	case p.pod != nil && p.pod.DeletionTimestamp != nil:
		return wire.StateStopping
	}
	return wire.StateStarting
}

// hostGet GETs path from the host's API into v.
func (s *Server) hostGet(ctx context.Context, base, path string, v any) error {
	status, _, err := s.hostCall(ctx, http.MethodGet, base, path, nil, v) // settings.go
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("GET %s%s: %s", base, path, http.StatusText(status))
	}
	return err
}
