package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/sdk"
)

// kubeHost is one sbx host joined to the cluster as a node.
type kubeHost struct {
	*daemon
	node string
}

// startKubeHost starts sbx serve --kube-node on its own data dir, bridge
// and subnet, archiving to the shared bucket, acting as the sbx-host
// service account of deploy/kubernetes/host-rbac.yaml.
func startKubeHost(t *testing.T, c *cluster, srv *s3test.Server, bucket, node, kubeconfig string, extra ...string) *kubeHost {
	t.Helper()
	args := append(srv.Flags(bucket, "cluster"),
		"--kube-node", "--kubeconfig", kubeconfig, "--kube-node-name", node,
		"--kube-node-port", portOf(freeAddr(t)), "--kube-node-client-ca", c.kubeletCA,
		"--kube-node-cpu", "8", "--kube-node-memory", "16Gi")
	args = append(args, extra...)
	return &kubeHost{daemon: startDaemon(t, args...), node: node}
}

// endInstances ends every sandbox instance of h. A dead or cut-off machine
// takes its network with it; here the hosts share one kernel, so h's veths
// (named after sandbox ids, which another host may now run) go too.
func (h *kubeHost) endInstances() {
	runcRoot := filepath.Join(h.dataDir, "runc")
	if out, err := exec.Command("runc", "--root", runcRoot, "list", "-q").Output(); err == nil {
		for _, cid := range strings.Fields(string(out)) {
			exec.Command("runc", "--root", runcRoot, "kill", "--all", cid, "KILL").Run()
		}
	}
	if b := h.flag("--bridge"); b != "" {
		links, _ := exec.Command("ip", "-o", "link", "show", "master", b).Output()
		for _, line := range strings.Split(string(links), "\n") {
			if f := strings.Fields(line); len(f) > 1 {
				exec.Command("ip", "link", "del", strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0]).Run()
			}
		}
	}
}

// jsonpath reads one field of a Kubernetes object ("" when it is missing).
func (c *cluster) jsonpath(kind, name, path string) string {
	out, err := c.tryKubectl("get", kind, name, "-n", "sbx", "-o", "jsonpath="+path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func (c *cluster) sandboxReady(name string) bool {
	return c.jsonpath("sandbox", name, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
}

// sandboxPodYAML is a plain agent-sandbox Sandbox (no sbx annotation):
// the host maps it from its container.
const sandboxPodYAML = `apiVersion: agents.x-k8s.io/v1beta1
kind: Sandbox
metadata:
  name: %NAME%
  namespace: sbx
spec:
  podTemplate:
    metadata: {}
    spec:
      nodeSelector: {sbx.dev/host: "true"}
      tolerations:
      - {key: sbx.dev/host, operator: Equal, value: "true", effect: NoSchedule}
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
      containers:
      - name: main
        image: base
        command: [/bin/sh, -c, "echo hello-from-main; exec sleep 100000"]
        resources:
          requests: {cpu: 250m, memory: 128Mi}
`

// TestKubeNode: two sbx hosts join a real control plane as nodes; an
// agent-sandbox Sandbox made with kubectl runs as a real sbx sandbox
// (exec, kubectl exec and logs); a warm pool's claim is served; a
// suspended sandbox resumes on the other host when its own is cordoned,
// files intact; a killed host's sandbox comes back on the other host from
// its last archive, and what was written after it does not.
func TestKubeNode(t *testing.T) {
	c := startCluster(t)
	srv := s3test.Start(t)
	bucket := srv.Bucket()
	hostKC := c.serviceAccountKubeconfig("sbx-system", "sbx-host")
	hosts := map[string]*kubeHost{}
	for _, name := range []string{"sbx-host-a", "sbx-host-b"} {
		hosts[name] = startKubeHost(t, c, srv, bucket, name, hostKC)
	}
	// A re-placed pod keeps its sandbox id, and here both hosts share one
	// kernel (cgroup and /run/sbx names are by id), so the census of one
	// host would count the sandboxes the other now runs: both are cleaned
	// up before either census is checked (census_test.go).
	t.Cleanup(func() {
		for _, h := range hosts {
			h.cleanup()
		}
	})
	ctx := context.Background()
	for name, h := range hosts {
		waitFor(t, 60*time.Second, name+" to be a Ready node", func() bool {
			return c.jsonpath("node", name, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
		})
		var node struct {
			Metadata struct {
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				Taints []struct{ Key, Value, Effect string } `json:"taints"`
			} `json:"spec"`
			Status struct {
				Capacity map[string]string `json:"capacity"`
			} `json:"status"`
		}
		if err := json.Unmarshal([]byte(c.kubectl("get", "node", name, "-o", "json")), &node); err != nil {
			t.Fatal(err)
		}
		if node.Metadata.Labels[podspec.LabelHost] != "true" || node.Metadata.Annotations[podspec.AnnotationAPI] != "http://"+h.addr {
			t.Errorf("node %s: labels %v annotations %v", name, node.Metadata.Labels, node.Metadata.Annotations)
		}
		// The node lifecycle controller's not-ready taint may not be gone yet.
		tainted := false
		for _, taint := range node.Spec.Taints {
			tainted = tainted || (taint.Key == podspec.LabelHost && taint.Value == "true" && taint.Effect == "NoSchedule")
		}
		if !tainted {
			t.Errorf("node %s taints: %+v (want %s=true:NoSchedule)", name, node.Spec.Taints, podspec.LabelHost)
		}
		if node.Status.Capacity["cpu"] != "8" || node.Status.Capacity["memory"] != "16Gi" {
			t.Errorf("node %s capacity: %v", name, node.Status.Capacity)
		}
	}
	hostOf := func(pod string) *kubeHost {
		return hosts[c.jsonpath("pod", pod, "{.spec.nodeName}")]
	}
	other := func(h *kubeHost) *kubeHost {
		for _, o := range hosts {
			if o != h {
				return o
			}
		}
		return nil
	}

	// A Sandbox written with kubectl becomes a real sbx sandbox.
	c.kubectlIn(strings.ReplaceAll(sandboxPodYAML, "%NAME%", "plain"), "apply", "-f", "-")
	waitFor(t, 90*time.Second, "Sandbox plain to be Ready", func() bool { return c.sandboxReady("plain") })
	id := podspec.IDForPod("sbx", "plain")
	first := hostOf("plain")
	if first == nil {
		t.Fatalf("pod plain is on %q, not on an sbx host", c.jsonpath("pod", "plain", "{.spec.nodeName}"))
	}
	sb, err := first.client.GetSandbox(ctx, id)
	if err != nil || sb.State != sdk.StateStarted || sb.Image != "base" {
		t.Fatalf("sandbox %s on %s: %+v %v", id, first.node, sb, err)
	}
	if res, err := first.client.Exec(ctx, id, sdk.ExecRequest{Shell: "echo kept > /root/before"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v %v", res, err)
	}
	out, err := c.tryKubectl("exec", "-n", "sbx", "plain", "--", "sh", "-c", "cat /root/before; echo to-stderr >&2; exit 3")
	var exitErr *exec.ExitError
	if !strings.Contains(out, "kept") || !strings.Contains(out, "to-stderr") || !asExit(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Errorf("kubectl exec: %q %v (want the file, stderr and exit code 3)", out, err)
	}
	waitFor(t, 30*time.Second, "kubectl logs to show the main process's output", func() bool {
		out, err := c.tryKubectl("logs", "-n", "sbx", "plain")
		return err == nil && strings.Contains(out, "hello-from-main")
	})
	if ip := c.jsonpath("pod", "plain", "{.status.podIP}"); ip == "" {
		t.Error("the pod has no IP")
	}

	// A warm pool's claim is served from a sandbox already running.
	c.kubectlIn(warmPoolYAML, "apply", "-f", "-")
	waitFor(t, 120*time.Second, "the warm pool to have 2 ready sandboxes", func() bool {
		return c.jsonpath("sandboxwarmpool", "pool", "{.status.readyReplicas}") == "2"
	})
	began := time.Now()
	c.kubectlIn(claimYAML, "apply", "-f", "-")
	var claimed string
	waitFor(t, 60*time.Second, "the claim to be Ready", func() bool {
		if c.jsonpath("sandboxclaim", "claim-1", `{.status.conditions[?(@.type=="Ready")].status}`) != "True" {
			return false
		}
		claimed = c.jsonpath("sandboxclaim", "claim-1", "{.status.sandbox.name}")
		return claimed != ""
	})
	t.Logf("SandboxClaim from a warm pool Ready after %v (kubectl apply to Ready condition)", time.Since(began).Round(time.Millisecond))
	if h := hostOf(claimed); h == nil {
		t.Errorf("claimed sandbox %s is not on an sbx host", claimed)
	} else if res, err := h.client.Exec(ctx, podspec.IDForPod("sbx", claimed), sdk.ExecRequest{Cmd: []string{"echo", "claimed"}}); err != nil || res.Stdout != "claimed\n" {
		t.Errorf("exec in the claimed sandbox: %+v %v", res, err)
	}

	// Suspend: the pod goes, the sandbox is handed off to the bucket.
	c.kubectl("patch", "sandbox", "plain", "-n", "sbx", "--type", "merge", "-p", `{"spec":{"operatingMode":"Suspended"}}`)
	waitFor(t, 60*time.Second, "the suspended sandbox to leave its host", func() bool {
		_, err := first.client.GetSandbox(ctx, id)
		return sdk.IsNotFound(err)
	})
	manifest := filepath.Join(srv.Root, bucket, "cluster", "sandboxes", id, "sandbox.json")
	if _, err := os.Stat(manifest); err != nil {
		t.Fatalf("no manifest in the bucket: %v", err)
	}
	// Cordon its host; resume: it comes back on the other host, files intact.
	c.kubectl("cordon", first.node)
	c.kubectl("patch", "sandbox", "plain", "-n", "sbx", "--type", "merge", "-p", `{"spec":{"operatingMode":"Running"}}`)
	waitFor(t, 90*time.Second, "Sandbox plain to be Ready again", func() bool { return c.sandboxReady("plain") })
	second := hostOf("plain")
	if second != other(first) {
		t.Fatalf("resumed on %v, want the other host %s", second, other(first).node)
	}
	res, err := second.client.Exec(ctx, id, sdk.ExecRequest{Cmd: []string{"cat", "/root/before"}})
	if err != nil || res.Stdout != "kept\n" {
		t.Fatalf("file after the move: %+v %v", res, err)
	}
	c.kubectl("uncordon", first.node)

	// Written after the last archive: lost with the host.
	if res, err := second.client.Exec(ctx, id, sdk.ExecRequest{Shell: "echo lost > /root/after"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v %v", res, err)
	}
	// Kill the host: its daemon and every sandbox it runs.
	second.kill9()
	second.endInstances()
	second.removeNetwork()
	for _, m := range mountsUnder(second.dataDir) { // its sandboxes' netns and rootfs mounts
		syscall.Unmount(m, syscall.MNT_DETACH)
	}
	// and its claims on user id ranges (/run is per machine).
	claims, _ := filepath.Glob("/run/sbx/idranges/[0-9]*")
	for _, claim := range claims {
		if b, err := os.ReadFile(claim); err == nil && strings.HasPrefix(string(b), second.dataDir+"/") {
			os.Remove(claim)
		}
	}
	lost := time.Now()
	waitFor(t, 90*time.Second, "the killed host to be NotReady", func() bool {
		return c.jsonpath("node", second.node, `{.status.conditions[?(@.type=="Ready")].status}`) != "True"
	})
	// The operator's word that the host is gone (Kubernetes cannot tell a
	// dead host from a cut-off one, and two copies of a sandbox must not
	// run): its pods are force-deleted and placed again.
	c.kubectl("taint", "node", second.node, "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute")
	waitFor(t, 150*time.Second, "Sandbox plain to be Ready on the surviving host", func() bool {
		return c.sandboxReady("plain") && hostOf("plain") == first
	})
	t.Logf("lost host's sandbox Ready on the other host %v after the kill", time.Since(lost).Round(time.Second))
	res, err = first.client.Exec(ctx, id, sdk.ExecRequest{Shell: "cat /root/before; ls /root"})
	if err != nil || !strings.HasPrefix(res.Stdout, "kept\n") || strings.Contains(res.Stdout, "after") {
		t.Fatalf("after the host loss: %+v %v (want /root/before from the archive, no /root/after)", res, err)
	}

	// Deleting the Sandbox object deletes the sandbox and its archive.
	c.kubectl("delete", "sandbox", "plain", "-n", "sbx", "--wait=false")
	waitFor(t, 60*time.Second, "the deleted Sandbox's sandbox to go", func() bool {
		_, err := first.client.GetSandbox(ctx, id)
		return sdk.IsNotFound(err)
	})
	waitFor(t, 30*time.Second, "its manifest to leave the bucket", func() bool {
		_, err := os.Stat(manifest)
		return os.IsNotExist(err)
	})
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*target = e
	return ok
}

const warmPoolYAML = `apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxTemplate
metadata:
  name: tpl
  namespace: sbx
spec:
  podTemplate:
    metadata: {}
    spec:
      nodeSelector: {sbx.dev/host: "true"}
      tolerations:
      - {key: sbx.dev/host, operator: Equal, value: "true", effect: NoSchedule}
      containers:
      - name: main
        image: base
        command: [/bin/sh, -c, "exec sleep 100000"]
        resources:
          requests: {cpu: 100m, memory: 64Mi}
---
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxWarmPool
metadata:
  name: pool
  namespace: sbx
spec:
  replicas: 2
  sandboxTemplateRef:
    name: tpl
`

const claimYAML = `apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxClaim
metadata:
  name: claim-1
  namespace: sbx
spec:
  warmPoolRef:
    name: pool
`
