package integration

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubeManifests: the host's RBAC reaches Secrets of namespace sbx
// only, and the node policy fences a host to its own virtual node: with a
// token bound to a DaemonSet-like pod on machine m1, sbx-host may write Node m1-sbx and
// its Lease but no other Node, and an unbound token may write none.
func TestKubeManifests(t *testing.T) {
	c := startCluster(t)
	// The CRDs, namespaces and host RBAC are applied already (startCluster);
	// TestKubeDeploy dry-runs the whole kustomization.
	c.kubectl("apply", "-f", filepath.Join(kubeDeploy, "host-node-policy.yaml"))

	// The host reads Secrets of the sandbox namespace only.
	for _, tc := range []struct{ verb, resource, ns, want string }{
		{"list", "secrets", "sbx", "yes"},
		{"get", "secrets", "sbx-system", "no"},
		{"list", "secrets", "default", "no"},
		{"list", "pods", "default", "no"},
		{"update", "sandboxes.agents.x-k8s.io", "sbx", "yes"},
		{"update", "sandboxes.agents.x-k8s.io", "default", "no"},
	} {
		out, _ := c.tryKubectl("auth", "can-i", tc.verb, tc.resource, "-n", tc.ns, "--as", "system:serviceaccount:sbx-system:sbx-host")
		if got := strings.TrimSpace(out); got != tc.want {
			t.Errorf("can sbx-host %s %s in %s: %q, want %s", tc.verb, tc.resource, tc.ns, got, tc.want)
		}
	}

	// Machine m1 and a pod of the host's service account placed on it (no
	// kubelet here runs it: the token only needs it bound).
	c.kubectlIn(`apiVersion: v1
kind: Node
metadata: {name: m1}
---
apiVersion: v1
kind: Pod
metadata: {name: host-on-m1, namespace: sbx-system}
spec:
  serviceAccountName: sbx-host
  nodeName: m1
  containers: [{name: sbx, image: sbx}]
`, "apply", "-f", "-")
	bound := strings.TrimSpace(c.kubectl("create", "token", "sbx-host", "-n", "sbx-system",
		"--bound-object-kind", "Pod", "--bound-object-name", "host-on-m1"))
	unbound := strings.TrimSpace(c.kubectl("create", "token", "sbx-host", "-n", "sbx-system"))
	as := func(token string, stdin string, args ...string) (string, error) {
		kc := c.writeKubeconfig("as.kubeconfig", token)
		cmd := exec.Command(filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", kc}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	node := func(name string) string {
		return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n"
	}
	lease := func(name string) string {
		return "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: " + name + ", namespace: kube-node-lease}\nspec: {holderIdentity: " + name + "}\n"
	}
	// The policy is enforced once the API server has loaded it.
	waitFor(t, 60*time.Second, "the node policy to refuse another host's Node", func() bool {
		out, err := as(bound, node("m2-sbx"), "create", "-f", "-")
		return err != nil && strings.Contains(out, "sbx-host may write only its own virtual node (m1-sbx)")
	})
	for _, obj := range []string{node("m1-sbx"), lease("m1-sbx")} {
		if out, err := as(bound, obj, "create", "-f", "-"); err != nil {
			t.Errorf("create as the host of m1:\n%s\n%v %s", obj, err, out)
		}
	}
	if out, err := as(bound, "", "label", "node", "m1-sbx", "sbx.dev/checked=true"); err != nil {
		t.Errorf("update its own node: %v %s", err, out)
	}
	for _, tc := range []struct{ token, stdin, want string }{
		{bound, lease("m2-sbx"), "own virtual node (m1-sbx)"},
		{unbound, node("m1-sbx"), "not bound to a scheduled pod"},
	} {
		if out, err := as(tc.token, tc.stdin, "create", "-f", "-"); err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("create as sbx-host:\n%s\ngot %v %s, want refused (%s)", tc.stdin, err, out, tc.want)
		}
	}
	c.kubectlIn(node("m2-sbx"), "apply", "-f", "-")
	for _, target := range []string{"m1", "m2-sbx"} {
		if out, err := as(bound, "", "label", "node", target, "sbx.dev/taken=true"); err == nil || !strings.Contains(out, "own virtual node") {
			t.Errorf("label node %s as the host of m1: %v %s (want refused)", target, err, out)
		}
	}
}
