package node

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// status is a pod's status from its sandbox: Running and Ready while the
// sandbox is started (its agent answered before the start returned),
// Running but not Ready while it is stopped or paused here (the host
// starts it again on the next call, as single-host sbx does), Pending
// while it is being made, Failed when it cannot be made.
func (p *Provider) status(ctx context.Context, pod *corev1.Pod) *corev1.PodStatus {
	k := key(pod.Namespace, pod.Name)
	p.mu.Lock()
	why := p.failed[k]
	p.mu.Unlock()
	st := &corev1.PodStatus{HostIP: p.hostIP, HostIPs: []corev1.HostIP{{IP: p.hostIP}}}
	if pod.Status.StartTime != nil {
		st.StartTime = pod.Status.StartTime
	}
	if why != "" {
		st.Phase, st.Reason, st.Message = corev1.PodFailed, "SandboxFailed", why
		return st
	}
	id := podspec.IDForPod(pod.Namespace, pod.Name)
	sb, err := p.m.Get(ctx, id)
	if err != nil {
		st.Phase = corev1.PodPending
		if !errdefs.Is(err, errdefs.KindNotFound) {
			st.Message = err.Error()
		}
		st.Conditions = conditions(false)
		return st
	}
	started := metav1.NewTime(sb.CreatedAt)
	if st.StartTime == nil {
		st.StartTime = &started
	}
	ready := sb.State == wire.StateStarted
	cs := corev1.ContainerStatus{
		Name: podspec.ContainerName, Image: sb.Spec.Image, ImageID: sb.Spec.ImageID,
		ContainerID: "sbx://" + sb.ID, Ready: ready, Started: &ready,
	}
	switch sb.State {
	case wire.StateCreating, wire.StateRestoring:
		st.Phase = corev1.PodPending
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating", Message: string(sb.State)}
	case wire.StateError:
		st.Phase = corev1.PodRunning
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: podspec.ReasonError, Message: sb.Error}
	default:
		st.Phase = corev1.PodRunning
		if ready {
			since := metav1.NewTime(sb.StartedAt)
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: since}
		} else {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: podspec.WaitingReason(sb.State), Message: "starts on the next call"}
		}
	}
	st.ContainerStatuses = []corev1.ContainerStatus{cs}
	st.Conditions = conditions(ready)
	if ready && p.addrs != nil {
		if ip, ok := p.addrs.AddressOf(sb.ID); ok {
			st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		}
	}
	return st
}

// conditions are a pod's conditions on this host: scheduled (it is here)
// and initialized, ready or not.
func conditions(ready bool) []corev1.PodCondition {
	r := corev1.ConditionFalse
	if ready {
		r = corev1.ConditionTrue
	}
	now := metav1.Now()
	return []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: r, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: r, LastTransitionTime: now},
	}
}

// terminated is the final status of a pod whose sandbox left this host.
func terminated(pod *corev1.Pod) *corev1.Pod {
	pod = pod.DeepCopy()
	now := metav1.Now()
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.Reason = "SandboxLeftHost"
	pod.Status.Conditions = conditions(false)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: podspec.ContainerName, Image: imageOf(pod),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: now}},
	}}
	return pod
}

func imageOf(pod *corev1.Pod) string {
	if len(pod.Spec.Containers) > 0 {
		return pod.Spec.Containers[0].Image
	}
	return ""
}
