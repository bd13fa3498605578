package podspec

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sbxhq/sbx/wire"
)

// The host reports its sandbox's state in the pod's container status
// (internal/kube/node/status.go): Running while started, Waiting with
// reason ContainerCreating (message: creating or restoring), SandboxError
// (message: the error) or "Sandbox" and the state (SandboxStopped,
// SandboxPaused, …) otherwise. The gateway reads it back from its watch
// cache, so a list asks no host.

// ReasonError is the Waiting reason of a sandbox in state error.
const ReasonError = "SandboxError"

// WaitingReason is the Waiting reason a host writes for state s.
func WaitingReason(s wire.State) string {
	if s == "" {
		return "Sandbox"
	}
	return "Sandbox" + strings.ToUpper(string(s[:1])) + string(s[1:])
}

// HostState is the sandbox's state as its host last reported it in pod,
// with when it started (zero unless started) and its error; ok is false
// when the host has reported nothing yet.
func HostState(pod *corev1.Pod) (state wire.State, startedAt time.Time, errMsg string, ok bool) {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != ContainerName {
			continue
		}
		switch w := cs.State.Waiting; {
		case cs.State.Running != nil:
			return wire.StateStarted, cs.State.Running.StartedAt.Time, "", true
		case w == nil:
		case w.Reason == "ContainerCreating":
			return wire.State(w.Message), time.Time{}, "", true
		case w.Reason == ReasonError:
			return wire.StateError, time.Time{}, w.Message, true
		case strings.HasPrefix(w.Reason, "Sandbox") && len(w.Reason) > len("Sandbox"):
			s := strings.TrimPrefix(w.Reason, "Sandbox")
			return wire.State(strings.ToLower(s[:1]) + s[1:]), time.Time{}, "", true
		}
	}
	return "", time.Time{}, "", false
}
