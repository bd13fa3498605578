package podspec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sbxhq/sbx/wire"
)

// podOf is the pod agent-sandbox's controller makes from a Sandbox: the
// template's metadata and spec under the Sandbox's name.
func podOf(id string, tpl *corev1.PodSpec, labels, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: "sbx", Labels: labels, Annotations: annotations}, Spec: *tpl}
}

func TestSandboxForRoundTrips(t *testing.T) {
	stop := 60
	req := wire.CreateSandboxRequest{Name: "grader-1", Image: "python", CPU: 0.5, MemoryMiB: 256,
		Env: map[string]string{"A": "value-of-a"}, AutoStopSeconds: &stop, Entrypoint: []string{"sleep", "1"},
		Buckets: []wire.BucketMount{{Bucket: "b", Path: "/mnt/b", Endpoint: "http://s3", AccessKeyID: "key-id-1", SecretAccessKey: "secret-key-1"}}}
	sb := SandboxFor("sbx-abcdefghijklmnop", req, "blue")
	if sb.Name != "sbx-abcdefghijklmnop" || sb.Spec.OperatingMode != "Running" {
		t.Fatalf("object: %s %s", sb.Name, sb.Spec.OperatingMode)
	}
	if sb.Labels[LabelName] != "grader-1" || sb.Labels[LabelTeam] != "blue" {
		t.Fatalf("labels: %v", sb.Labels)
	}
	tpl := sb.Spec.PodTemplate
	c := tpl.Spec.Containers[0]
	if c.Name != ContainerName || c.Image != "python" {
		t.Fatalf("container: %+v", c)
	}
	if got := c.Resources.Requests.Cpu().MilliValue(); got != 500 {
		t.Fatalf("cpu request %dm, want 500m", got)
	}
	if got := c.Resources.Limits.Memory().Value(); got != 256<<20 {
		t.Fatalf("memory limit %d", got)
	}
	if tpl.Spec.NodeSelector[LabelHost] != "true" {
		t.Fatalf("nodeSelector: %v", tpl.Spec.NodeSelector)
	}
	// No value of the request is in the object: the Secret it names holds them.
	raw, _ := json.Marshal(sb)
	for _, v := range []string{"value-of-a", "key-id-1", "secret-key-1"} {
		if strings.Contains(string(raw), v) {
			t.Fatalf("the Sandbox object carries %q: %s", v, raw)
		}
	}
	ref := ValuesRef(tpl.ObjectMeta.Annotations)
	if ref != ValuesSecretName(sb.Name) {
		t.Fatalf("values reference %q", ref)
	}
	sb.Namespace, sb.UID = "sbx", "uid-1"
	_, vals := Split(req)
	sec := ValuesSecret(sb, vals)
	if sec.Name != ref || len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != "uid-1" || sec.OwnerReferences[0].Kind != "Sandbox" {
		t.Fatalf("values secret: %+v", sec.ObjectMeta)
	}
	id, back, team, err := RequestFromPod(podOf(sb.Name, &tpl.Spec, tpl.ObjectMeta.Labels, tpl.ObjectMeta.Annotations))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ValuesOf(sec)
	if err != nil {
		t.Fatal(err)
	}
	if back, err = Join(back, got); err != nil {
		t.Fatal(err)
	}
	if id != sb.Name || team != "blue" || !reflect.DeepEqual(back, req) {
		t.Fatalf("round trip: id %s team %s req %+v", id, team, back)
	}
}

func TestSandboxForDefaultsLetTheSchedulerPlaceIt(t *testing.T) {
	sb := SandboxFor("sbx-abcdefghijklmnop", wire.CreateSandboxRequest{}, "")
	c := sb.Spec.PodTemplate.Spec.Containers[0]
	if c.Image != DefaultImage || sb.Labels[LabelTeam] != DefaultTeam {
		t.Fatalf("image %q team %q", c.Image, sb.Labels[LabelTeam])
	}
	if _, ok := sb.Labels[LabelName]; ok {
		t.Fatal("an unnamed sandbox has a name label")
	}
	if c.Resources.Requests.Cpu().MilliValue() != 1000 || c.Resources.Requests.Memory().Value() != DefaultMemoryMiB<<20 {
		t.Fatalf("default requests: %v", c.Resources.Requests)
	}
	var unreachable *corev1.Toleration
	for i, tol := range sb.Spec.PodTemplate.Spec.Tolerations {
		if tol.Key == corev1.TaintNodeUnreachable {
			unreachable = &sb.Spec.PodTemplate.Spec.Tolerations[i]
		}
	}
	if unreachable == nil || unreachable.TolerationSeconds == nil || *unreachable.TolerationSeconds != EvictAfterSeconds {
		t.Fatalf("unreachable toleration: %+v", unreachable)
	}
	// The object name must be a DNS-1123 subdomain, the pod name too.
	if errs := validation.IsDNS1123Subdomain(sb.Name); len(errs) > 0 {
		t.Fatal(errs)
	}
}

func TestRequestFromPlainPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "my-sandbox", Namespace: "default", Labels: map[string]string{LabelName: "mine"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "main", Image: "python", Command: []string{"python3"}, Args: []string{"-m", "http.server"},
			WorkingDir: "/srv", Env: []corev1.EnvVar{{Name: "X", Value: "y"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
		}}},
	}
	id, req, team, err := RequestFromPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.CreateSandboxRequest{Name: "mine", Image: "python", Workdir: "/srv", Env: map[string]string{"X": "y"},
		Entrypoint: []string{"python3", "-m", "http.server"}, CPU: 0.25, MemoryMiB: 512}
	if !reflect.DeepEqual(req, want) || team != DefaultTeam {
		t.Fatalf("req %+v team %s", req, team)
	}
	if !IsID(id) || id != IDForPod("default", "my-sandbox") || id == IDForPod("other", "my-sandbox") {
		t.Fatalf("id %q is not stable per namespace/name", id)
	}
}

func TestRequestFromPodRefusesWhatItCannotRun(t *testing.T) {
	two := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}
	if _, _, _, err := RequestFromPod(two); err == nil {
		t.Fatal("two containers accepted")
	}
	secret := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "a", Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{}}}}}}}
	if _, _, _, err := RequestFromPod(secret); err == nil {
		t.Fatal("valueFrom accepted")
	}
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{AnnotationSpec: "{"}}}
	if _, _, _, err := RequestFromPod(bad); err == nil {
		t.Fatal("broken annotation accepted")
	}
}

func TestValidLabelValue(t *testing.T) {
	for s, ok := range map[string]bool{"grader-1": true, "": true, "a.b_c": true, "-x": false, "with space": false, string(make([]byte, 64)): false} {
		if ValidLabelValue(s) != ok {
			t.Errorf("ValidLabelValue(%q) = %v", s, !ok)
		}
	}
}

// Updated applies a PATCH as a host applies it to its record.
func TestUpdatedAppliesAPatchAsAHostDoes(t *testing.T) {
	req := wire.CreateSandboxRequest{AutoPauseSeconds: new(60), Ephemeral: true, Env: map[string]string{"A": "1", "B": "2"},
		Labels: map[string]string{"x": "1"}, CPU: 1}
	got := Updated(req, wire.UpdateSandboxRequest{AutoStopSeconds: new(30), AutoDeleteSeconds: new(600),
		Env: map[string]*string{"A": nil, "C": new("3")}, Labels: map[string]string{"y": "2"}, MemoryMiB: new(512)})
	if *got.AutoStopSeconds != 30 || *got.AutoPauseSeconds != 0 || got.Ephemeral || *got.AutoDeleteSeconds != 600 {
		t.Fatalf("policy: stop %v pause %v ephemeral %v delete %v", *got.AutoStopSeconds, *got.AutoPauseSeconds, got.Ephemeral, *got.AutoDeleteSeconds)
	}
	if !reflect.DeepEqual(got.Env, map[string]string{"B": "2", "C": "3"}) || !reflect.DeepEqual(got.Labels, map[string]string{"y": "2"}) {
		t.Fatalf("env %v labels %v", got.Env, got.Labels)
	}
	if got.CPU != 1 || got.MemoryMiB != 512 {
		t.Fatalf("limits: cpu %v memory %v", got.CPU, got.MemoryMiB)
	}
	if req.Env["A"] != "1" {
		t.Fatal("Updated changed the request it was given")
	}
	if again := Updated(got, wire.UpdateSandboxRequest{Ephemeral: new(true)}); !again.Ephemeral || again.AutoDeleteSeconds != nil {
		t.Fatalf("ephemeral: %v, autoDelete %v", again.Ephemeral, again.AutoDeleteSeconds)
	}
}

// A TTL is the object's shutdownTime with policy Delete; 0 removes it.
func TestSetTTL(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sb := SandboxFor("sbx-abcdefghijklmnop", wire.CreateSandboxRequest{}, "")
	if sb.Spec.ShutdownTime != nil {
		t.Fatalf("no TTL, shutdownTime %v", sb.Spec.ShutdownTime)
	}
	SetTTL(sb, 90, now)
	if !sb.Spec.ShutdownTime.Time.Equal(now.Add(90*time.Second)) || *sb.Spec.ShutdownPolicy != "Delete" {
		t.Fatalf("TTL 90: %v %v", sb.Spec.ShutdownTime, *sb.Spec.ShutdownPolicy)
	}
	SetTTL(sb, 0, now)
	if sb.Spec.ShutdownTime != nil || sb.Spec.ShutdownPolicy != nil {
		t.Fatal("TTL 0 left a shutdownTime")
	}
}
