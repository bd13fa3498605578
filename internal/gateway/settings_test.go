package gateway

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// A PATCH reaches the host running the sandbox and is kept in the Sandbox
// object: a suspended sandbox shows it, its next pod carries it, a TTL is
// the object's shutdownTime; a bad one is refused before anything changes.
func TestUpdateKeepsTheSettingsInTheObject(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"cfg","env":{"KEEP":"1","DROP":"2"}}`)
	resp, b := f.call("PATCH", "/v1/sandboxes/cfg", `{"autoStopSeconds":1234,"env":{"NEW":"3","DROP":null},"ttlSeconds":60}`)
	if resp.StatusCode != 200 {
		t.Fatalf("patch: %d %s", resp.StatusCode, b)
	}
	reached := false
	for _, r := range f.hosts["host-a"].requests() {
		reached = reached || (r.Method == "PATCH" && r.Path == "/v1/sandboxes/"+sb.ID && r.Auth == "Bearer "+hostToken)
	}
	if !reached {
		t.Fatalf("the PATCH did not reach the host: %+v", f.hosts["host-a"].requests())
	}
	o := f.object(sb.ID)
	if pub, _ := podspec.RequestOf(o); len(pub.Env) != 0 {
		t.Fatalf("env values in the object: %v", pub.Env)
	}
	req, err := f.request(sb.ID)
	if err != nil || req.AutoStopSeconds == nil || *req.AutoStopSeconds != 1234 || req.AutoPauseSeconds == nil || *req.AutoPauseSeconds != 0 {
		t.Fatalf("object's request after the patch: %+v %v", req, err)
	}
	if want := map[string]string{"KEEP": "1", "NEW": "3"}; len(req.Env) != 2 || req.Env["KEEP"] != want["KEEP"] || req.Env["NEW"] != want["NEW"] {
		t.Fatalf("object's env: %v, want %v", req.Env, want)
	}
	if o.Spec.ShutdownTime == nil || o.Spec.ShutdownPolicy == nil || *o.Spec.ShutdownPolicy != asv1.ShutdownPolicyDelete ||
		time.Until(o.Spec.ShutdownTime.Time) > time.Minute || time.Until(o.Spec.ShutdownTime.Time) < 50*time.Second {
		t.Fatalf("TTL in the object: %v %v", o.Spec.ShutdownTime, o.Spec.ShutdownPolicy)
	}

	f.call("POST", "/v1/sandboxes/cfg/stop", "")
	before := len(f.hosts["host-a"].requests())
	resp, b = f.call("PATCH", "/v1/sandboxes/cfg", `{"labels":{"stage":"two"},"memoryMiB":512,"ttlSeconds":0}`)
	var got wire.Sandbox
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.State != wire.StateStopped || got.Labels["stage"] != "two" ||
		got.MemoryMiB != 512 || got.AutoStopSeconds != 1234 || got.Env["NEW"] != "3" {
		t.Fatalf("patch of a suspended sandbox: %d %s", resp.StatusCode, b)
	}
	if n := len(f.hosts["host-a"].requests()); n != before {
		t.Fatalf("a suspended sandbox's PATCH went to a host")
	}
	o = f.object(sb.ID)
	if mem := o.Spec.PodTemplate.Spec.Containers[0].Resources.Requests.Memory().Value(); mem != 512<<20 {
		t.Fatalf("memory request %d, want 512 MiB for kube-scheduler", mem)
	}
	if o.Spec.ShutdownTime != nil {
		t.Fatalf("ttlSeconds 0 left shutdownTime %v", o.Spec.ShutdownTime)
	}
	resp, b = f.call("GET", "/v1/sandboxes/cfg", "")
	if json.Unmarshal(b, &got) != nil || got.Labels["stage"] != "two" || got.AutoStopSeconds != 1234 {
		t.Fatalf("get of the suspended sandbox: %s", b)
	}

	resp, b = f.call("PATCH", "/v1/sandboxes/cfg", `{"autoStopSeconds":-1}`)
	wantError(t, resp, b, 400, wire.CodeInvalidPolicy)
	resp, b = f.call("PATCH", "/v1/sandboxes/cfg", `{"env":{"1BAD":"x"}}`)
	wantError(t, resp, b, 400, wire.CodeInvalidEnv)
	if req, _ := f.request(sb.ID); req.AutoStopSeconds == nil || req.Env["NEW"] != "3" || *req.AutoStopSeconds != 1234 {
		t.Fatalf("a refused PATCH changed the object: %+v", req)
	}
}

// request is the create request of sandbox id's object with the values of
// its Secret, as its host reads them.
func (f *fixture) request(id string) (wire.CreateSandboxRequest, error) {
	o := f.object(id)
	req, err := podspec.RequestOf(o)
	if err != nil {
		return req, err
	}
	sec, err := f.kube.CoreV1().Secrets(ns).Get(context.Background(), podspec.ValuesRef(o.Spec.PodTemplate.ObjectMeta.Annotations), metav1.GetOptions{})
	if err != nil {
		return req, err
	}
	if sec.OwnerReferences[0].Name != id {
		f.t.Fatalf("values Secret's owner: %+v", sec.OwnerReferences)
	}
	v, err := podspec.ValuesOf(sec)
	if err != nil {
		return req, err
	}
	return podspec.Join(req, v)
}
