// Package podspec is the encoding shared by sbx's Kubernetes gateway and its
// hosts: how an sbx create request becomes an agent-sandbox Sandbox object
// (SandboxFor) and how a pod placed on an sbx host becomes a create request
// again (RequestFromPod).
//
// The request travels as JSON in the pod template's annotation sbx.dev/spec,
// but for its env values and bucket keys, which are in a Secret the
// annotation sbx.dev/values names (values.go); the container's image and resources repeat the parts
// Kubernetes itself reads (the image for humans, cpu and memory for
// kube-scheduler). A pod without the annotation - a Sandbox written by hand
// or a SandboxClaim served from a warm pool - is mapped from its container.
package podspec

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/wire"
)

// Names every cluster component agrees on.
const (
	// AnnotationSpec holds the JSON of the wire.CreateSandboxRequest.
	AnnotationSpec = "sbx.dev/spec"
	// LabelName is the sbx sandbox name (if it has one).
	LabelName = "sbx.dev/name"
	// LabelTeam is the team owning the sandbox.
	LabelTeam = "sbx.dev/team"
	// LabelHost marks sbx hosts (node label "true"), and is the key of
	// their NoSchedule taint, so only sandbox pods land on them.
	LabelHost = "sbx.dev/host"
	// AnnotationAPI is a host node's sbx API URL, what the gateway proxies to.
	AnnotationAPI = "sbx.dev/api"
	// ContainerName is the one container of a sandbox pod.
	ContainerName = "sandbox"
	// DefaultTeam owns sandboxes whose objects carry no team label.
	DefaultTeam = "default"
)

// What kube-scheduler reserves for a request that leaves cpu or memory to
// the host's defaults (the daemon's own defaults, internal/sandbox).
const (
	DefaultCPU       = 1.0
	DefaultMemoryMiB = 1024
	DefaultImage     = "base"
)

// EvictAfterSeconds is how long a sandbox pod stays bound to an unreachable
// or not-ready host before the taint manager evicts it (and agent-sandbox
// recreates it elsewhere, restored from its archive).
const EvictAfterSeconds = 5

var (
	idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	idRe       = regexp.MustCompile(`^sbx-[a-z2-7]{16}$`)
	// labelValueRe is Kubernetes' label value syntax (63 characters at most).
	labelValueRe = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

// IsID reports whether s has the shape of an sbx sandbox id.
func IsID(s string) bool { return idRe.MatchString(s) }

// IDForPod is the sbx sandbox id of a pod: its name when that is an sbx id
// (pods of Sandboxes the gateway made), else an id derived from namespace
// and name, so a pod recreated under the same name (a Sandbox resumed, or
// re-placed after its host was lost) maps to the same sandbox and its archive.
func IDForPod(namespace, name string) string {
	if IsID(name) {
		return name
	}
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	return "sbx-" + idEncoding.EncodeToString(sum[:10])
}

// ValidLabelValue reports whether s can be a Kubernetes label value (the
// gateway refuses sandbox names that cannot, in cluster mode).
func ValidLabelValue(s string) bool { return labelValueRe.MatchString(s) }

// SandboxFor is the agent-sandbox Sandbox object for a new sbx sandbox: name =
// id, operating mode Running, and a pod template that kube-scheduler can place
// on an sbx host and the host can turn back into req (RequestFromPod).
func SandboxFor(id string, req wire.CreateSandboxRequest, team string) *asv1.Sandbox {
	if team == "" {
		team = DefaultTeam
	}
	labels := map[string]string{LabelTeam: team}
	if req.Name != "" {
		labels[LabelName] = req.Name
	}
	image := req.Image
	if image == "" {
		image = DefaultImage
	}
	if req.Snapshot != "" && req.Image == "" {
		image = "snapshot:" + req.Snapshot // shown by kubectl only; the host reads the annotation
	}
	noToken := false
	stopGrace := int64(5)
	sb := &asv1.Sandbox{
		TypeMeta:   metav1.TypeMeta{APIVersion: asv1.GroupVersion.String(), Kind: asv1.SandboxKind},
		ObjectMeta: metav1.ObjectMeta{Name: id, Labels: maps.Clone(labels)},
		Spec: asv1.SandboxSpec{
			OperatingMode: asv1.SandboxOperatingModeRunning,
			SandboxBlueprint: asv1.SandboxBlueprint{PodTemplate: asv1.PodTemplate{
				ObjectMeta: asv1.PodMetadata{Labels: maps.Clone(labels)},
				Spec: corev1.PodSpec{
					Containers:                   []corev1.Container{{Name: ContainerName, Image: image}},
					NodeSelector:                 map[string]string{LabelHost: "true"},
					Tolerations:                  Tolerations(),
					AutomountServiceAccountToken: &noToken,
					// The host stops the sandbox with its own grace (5 s) and
					// archives it before it answers; Kubernetes' default 30 s
					// only held every delete up.
					TerminationGracePeriodSeconds: &stopGrace,
				},
			}},
		},
	}
	SetRequest(sb, req) // the annotation and the container's resources
	SetTTL(sb, req.TTLSeconds, time.Now())
	return sb
}

// Resources is what kube-scheduler reserves for req (requests = limits).
func Resources(req wire.CreateSandboxRequest) corev1.ResourceList {
	cpu, mem := req.CPU, req.MemoryMiB
	if cpu == 0 {
		cpu = DefaultCPU
	}
	if mem == 0 {
		mem = DefaultMemoryMiB
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(cpu*1000+0.5), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(mem)<<20, resource.BinarySI),
	}
}

// SetTTL makes a TTL of seconds from now the object's own: agent-sandbox
// deletes the pod and then the object at shutdownTime (policy Delete),
// whether or not a host runs the sandbox then (a suspended one has no
// host to count). 0 removes the TTL.
func SetTTL(sb *asv1.Sandbox, seconds int, now time.Time) {
	if seconds <= 0 {
		sb.Spec.ShutdownTime, sb.Spec.ShutdownPolicy = nil, nil
		return
	}
	at := metav1.NewTime(now.Add(time.Duration(seconds) * time.Second).UTC().Truncate(time.Second))
	policy := asv1.ShutdownPolicyDelete
	sb.Spec.ShutdownTime, sb.Spec.ShutdownPolicy = &at, &policy
}

// RequestOf is the create request a Sandbox object's pods carry (its
// template's AnnotationSpec, without the Values its AnnotationValues
// names); a Sandbox written without one gives the request mapped from its
// container.
func RequestOf(sb *asv1.Sandbox) (wire.CreateSandboxRequest, error) {
	tpl := sb.Spec.PodTemplate
	_, req, _, err := RequestFromPod(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: sb.Name, Namespace: sb.Namespace, Labels: tpl.ObjectMeta.Labels, Annotations: tpl.ObjectMeta.Annotations},
		Spec:       tpl.Spec,
	})
	return req, err
}

// SetRequest writes req into the object's pod template (AnnotationSpec and
// the container's resources): the next pod, on whichever host, is made
// from it, and agent-sandbox copies the annotation onto the live pod.
// req's Values are left out (values.go): it returns them, for the caller
// to keep in the Secret that AnnotationValues then names.
func SetRequest(sb *asv1.Sandbox, req wire.CreateSandboxRequest) Values {
	pub, v := Split(req)
	spec, _ := json.Marshal(pub) // a struct of plain fields: cannot fail
	tpl := &sb.Spec.PodTemplate
	if tpl.ObjectMeta.Annotations == nil {
		tpl.ObjectMeta.Annotations = map[string]string{}
	}
	tpl.ObjectMeta.Annotations[AnnotationSpec] = string(spec)
	if !v.Empty() {
		tpl.ObjectMeta.Annotations[AnnotationValues] = ValuesSecretName(sb.Name)
	}
	if len(tpl.Spec.Containers) == 1 {
		res := Resources(req)
		tpl.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()}
	}
	return v
}

// Updated is req with a PATCH's upd applied as a host applies it to its
// record (internal/sandbox/policy.go applyPolicy, env.go changedEnv):
// absent fields keep their value, an env value of null unsets, labels
// replace; idle stop and idle pause exclude each other, and ephemeral is
// autoDelete 0.
func Updated(req wire.CreateSandboxRequest, upd wire.UpdateSandboxRequest) wire.CreateSandboxRequest {
	set := func(dst **int, v *int) {
		if v != nil {
			*dst = new(*v)
		}
	}
	set(&req.AutoStopSeconds, upd.AutoStopSeconds)
	set(&req.AutoPauseSeconds, upd.AutoPauseSeconds)
	set(&req.AutoArchiveSeconds, upd.AutoArchiveSeconds)
	set(&req.AutoDeleteSeconds, upd.AutoDeleteSeconds)
	if upd.AutoStopSeconds != nil && *upd.AutoStopSeconds > 0 {
		req.AutoPauseSeconds = new(0)
	}
	if upd.AutoPauseSeconds != nil && *upd.AutoPauseSeconds > 0 {
		req.AutoStopSeconds = new(0)
	}
	if upd.AutoDeleteSeconds != nil && *upd.AutoDeleteSeconds != 0 {
		req.Ephemeral = false
	}
	if upd.TTLSeconds != nil {
		req.TTLSeconds = *upd.TTLSeconds
	}
	if upd.Ephemeral != nil {
		req.Ephemeral = *upd.Ephemeral
		if req.Ephemeral {
			req.AutoDeleteSeconds = nil // ephemeral's own 0
		}
	}
	if upd.KeepAlive != nil {
		req.KeepAlive = *upd.KeepAlive
	}
	if upd.Env != nil {
		env := maps.Clone(req.Env)
		if env == nil {
			env = map[string]string{}
		}
		for k, v := range upd.Env {
			if v == nil {
				delete(env, k)
			} else {
				env[k] = *v
			}
		}
		req.Env = env
	}
	if upd.CPU != nil {
		req.CPU = *upd.CPU
	}
	if upd.MemoryMiB != nil {
		req.MemoryMiB = *upd.MemoryMiB
	}
	if upd.PidsLimit != nil {
		req.PidsLimit = *upd.PidsLimit
	}
	if upd.Labels != nil {
		req.Labels = maps.Clone(upd.Labels)
	}
	return req
}

// Tolerations lets a pod onto sbx hosts (their NoSchedule taint) and off a
// lost one fast (EvictAfterSeconds instead of the default 300).
func Tolerations() []corev1.Toleration {
	after := int64(EvictAfterSeconds)
	return []corev1.Toleration{
		{Key: LabelHost, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &after},
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &after},
	}
}

// RequestFromPod is the sbx sandbox a pod placed on an sbx host stands for:
// its id (IDForPod), the create request (without the Values of the Secret
// ValuesRef names: Join them) and the owning team.
func RequestFromPod(pod *corev1.Pod) (id string, req wire.CreateSandboxRequest, team string, err error) {
	id = IDForPod(pod.Namespace, pod.Name)
	team = pod.Labels[LabelTeam]
	if team == "" {
		team = DefaultTeam
	}
	if s, ok := pod.Annotations[AnnotationSpec]; ok {
		if err := json.Unmarshal([]byte(s), &req); err != nil {
			return "", req, "", fmt.Errorf("pod %s/%s: annotation %s is not a create request: %w", pod.Namespace, pod.Name, AnnotationSpec, err)
		}
		return id, req, team, nil
	}
	req, err = requestFromContainer(pod)
	return id, req, team, err
}

// requestFromContainer maps a plain pod (no sbx.dev/spec) from its one
// container. command+args become the supervised entrypoint (sbx has no
// separate image CMD override, so args alone replace the image's command).
func requestFromContainer(pod *corev1.Pod) (wire.CreateSandboxRequest, error) {
	var req wire.CreateSandboxRequest
	if len(pod.Spec.Containers) != 1 {
		return req, fmt.Errorf("pod %s/%s has %d containers; an sbx sandbox is one container", pod.Namespace, pod.Name, len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	req.Name = pod.Labels[LabelName]
	req.Image = c.Image
	req.Workdir = c.WorkingDir
	req.Entrypoint = append(append([]string(nil), c.Command...), c.Args...)
	if len(req.Entrypoint) == 0 {
		req.Entrypoint = nil
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			return req, fmt.Errorf("pod %s/%s: env %s uses valueFrom, which sbx hosts do not resolve; give a value", pod.Namespace, pod.Name, e.Name)
		}
		if req.Env == nil {
			req.Env = map[string]string{}
		}
		req.Env[e.Name] = e.Value
	}
	if q, ok := limitOrRequest(c.Resources, corev1.ResourceCPU); ok {
		req.CPU = float64(q.MilliValue()) / 1000
	}
	if q, ok := limitOrRequest(c.Resources, corev1.ResourceMemory); ok {
		req.MemoryMiB = int(q.Value() >> 20)
	}
	return req, nil
}

// limitOrRequest is the limit when set (what the container may use), else
// the request.
func limitOrRequest(r corev1.ResourceRequirements, name corev1.ResourceName) (resource.Quantity, bool) {
	if q, ok := r.Limits[name]; ok && !q.IsZero() {
		return q, true
	}
	q, ok := r.Requests[name]
	return q, ok && !q.IsZero()
}
