package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
	"github.com/sbxhq/sbx/sdk"
)

// gatewayProc is one `sbx gateway` process under test.
type gatewayProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	exited chan struct{}
	addr   string
	client *sdk.Client
}

// startGateway runs sbx gateway as the sbx-gateway service account of
// deploy/kubernetes/gateway.yaml (so the test exercises its RBAC) and
// waits until it answers.
func startGateway(t *testing.T, c *cluster, kubeconfig, keyFile, key, addr string, extra ...string) *gatewayProc {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(c.dir, "gateway.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	g := &gatewayProc{t: t, addr: addr, exited: make(chan struct{})}
	g.cmd = exec.Command(sbxBin, "gateway", "--kubeconfig", kubeconfig, "--kube-namespace", "sbx",
		"--listen", addr, "--admin-token-file", keyFile, "--ready-timeout", "3m")
	g.cmd.Args = append(g.cmd.Args, extra...)
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); close(g.exited) }()
	t.Cleanup(g.stop)
	g.client = sdk.NewClient("http://"+addr, key)
	waitFor(t, 60*time.Second, "the gateway to answer", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return g
}

func (g *gatewayProc) stop() {
	select {
	case <-g.exited:
		return
	default:
	}
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(15 * time.Second):
		g.cmd.Process.Kill()
		<-g.exited
	}
}

// gatewayHost is one sbx host joined to the cluster as a node.
type gatewayHost struct {
	*daemon
	node string
}

// kubeField reads one field of an object in namespace sbx ("" when missing).
func (c *cluster) kubeField(kind, name, path string) string {
	out, err := c.tryKubectl("get", kind, name, "-n", "sbx", "-o", "jsonpath="+path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// startSharedKeyHost starts sbx serve --kube-node on a data dir that holds the
// cluster's shared admin key, which the gateway presents to every host.
func startSharedKeyHost(t *testing.T, c *cluster, srv *s3test.Server, bucket, node, kubeconfig, key string, extra ...string) *gatewayHost {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(srv.Flags(bucket, "cluster"),
		"--kube-node", "--kubeconfig", kubeconfig, "--kube-node-name", node,
		"--kube-node-port", portOf(freeAddr(t)), "--kube-node-client-ca", c.kubeletCA,
		"--kube-node-cpu", "8", "--kube-node-memory", "16Gi")
	return &gatewayHost{daemon: startDaemonAt(t, dir, append(args, extra...)...), node: node}
}

// gatewayCluster is a control plane with sbx hosts that share one bucket
// and admin key, and a gateway over them.
type gatewayCluster struct {
	*cluster
	srv                *s3test.Server
	bucket             string
	key, keyFile, gwKC string
	hosts              map[string]*gatewayHost // by node name
	gw                 *gatewayProc
}

// startGatewayCluster starts a cluster with the gateway's manifests, a host
// per node name (each a Ready node before it returns) and a gateway.
func startGatewayCluster(t *testing.T, nodes ...string) *gatewayCluster {
	t.Helper()
	return startGatewayClusterWith(t, nil, nodes...)
}

// startGatewayClusterWith is startGatewayCluster with hostArgs added to
// every host's sbx serve.
func startGatewayClusterWith(t *testing.T, hostArgs []string, nodes ...string) *gatewayCluster {
	t.Helper()
	gc := &gatewayCluster{cluster: startCluster(t), srv: s3test.Start(t), hosts: map[string]*gatewayHost{}}
	c := gc.cluster
	c.kubectl("apply", "-f", filepath.Join(kubeDeploy, "gateway.yaml"))
	gc.bucket = gc.srv.Bucket()
	raw := make([]byte, 16)
	rand.Read(raw)
	gc.key = "sbx_" + hex.EncodeToString(raw)
	gc.keyFile = filepath.Join(c.dir, "admin.token")
	if err := os.WriteFile(gc.keyFile, []byte(gc.key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostKC := c.serviceAccountKubeconfig("sbx-system", "sbx-host")
	for _, name := range nodes {
		gc.hosts[name] = startSharedKeyHost(t, c, gc.srv, gc.bucket, name, hostKC, gc.key, hostArgs...)
	}
	for _, name := range nodes {
		waitFor(t, 90*time.Second, name+" to be a Ready node", func() bool {
			return c.kubeField("node", name, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
		})
	}
	gc.gwKC = c.serviceAccountKubeconfig("sbx-system", "sbx-gateway")
	gc.gw = startGateway(t, c, gc.gwKC, gc.keyFile, gc.key, freeAddr(t))
	return gc
}

// restartAPIServer stops kube-apiserver and starts it again with the same
// flags; etcd keeps the state.
func (c *cluster) restartAPIServer() { c.withAPIServerDown(func() {}) }

// withAPIServerDown stops kube-apiserver, runs during, and starts it again.
func (c *cluster) withAPIServerDown(during func()) {
	c.t.Helper()
	for i, p := range c.procs {
		if filepath.Base(p.Path) != "kube-apiserver" {
			continue
		}
		select {
		case <-c.exited[i]:
			continue // an earlier incarnation
		default:
		}
		p.Process.Signal(syscall.SIGTERM)
		<-c.exited[i]
		during()
		c.run("kube-apiserver", p.Path, p.Args[1:]...)
		waitFor(c.t, 90*time.Second, "kube-apiserver to be ready again", func() bool {
			out, err := c.tryKubectl("get", "--raw", "/readyz")
			return err == nil && strings.TrimSpace(out) == "ok"
		})
		return
	}
	c.t.Fatal("no running kube-apiserver")
}

// TestKubeGateway: sbx gateway over a real control plane and two sbx hosts:
// ten sandboxes created through it are spread over both hosts by
// kube-scheduler; exec, files, a terminal and a preview reach each
// through it; stop and start go through the Sandbox objects; a gateway
// restart and a kube-apiserver restart lose no sandbox. One cluster for all.
func TestKubeGateway(t *testing.T) {
	gc := startGatewayCluster(t, "sbx-gw-a", "sbx-gw-b")
	c, hosts, gw := gc.cluster, gc.hosts, gc.gw
	gwKC, keyFile, key, gwAddr := gc.gwKC, gc.keyFile, gc.key, gw.addr
	ctx := context.Background()

	// Ten sandboxes through the gateway, in parallel as users would.
	const n = 10
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			sb, err := gw.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: fmt.Sprintf("gw-%d", i), CPU: 0.5, MemoryMiB: 256})
			if err != nil {
				errs <- fmt.Errorf("create gw-%d: %w", i, err)
				return
			}
			if sb.State != sdk.StateStarted || sb.Name != fmt.Sprintf("gw-%d", i) {
				errs <- fmt.Errorf("create gw-%d answered %+v", i, sb)
			}
			ids[i] = sb.ID
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	perHost := map[string]int{}
	for _, id := range ids {
		node := c.kubeField("pod", id, "{.spec.nodeName}")
		if hosts[node] == nil {
			t.Fatalf("pod %s is on %q", id, node)
		}
		if _, err := hosts[node].client.GetSandbox(ctx, id); err != nil {
			t.Fatalf("sandbox %s is not on its node's host %s: %v", id, node, err)
		}
		perHost[node]++
	}
	if len(perHost) != 2 {
		t.Fatalf("kube-scheduler placed all ten on one host: %v", perHost)
	}
	t.Logf("placement: %v", perHost)

	t.Run("toolbox reaches each sandbox", func(t *testing.T) {
		for i, id := range ids {
			name := fmt.Sprintf("gw-%d", i)
			res, err := gw.client.Exec(ctx, name, sdk.ExecRequest{Shell: "echo $((6*7))"})
			if err != nil || res.ExitCode != 0 || !strings.HasPrefix(res.Stdout, "42\n") {
				t.Fatalf("exec on %s: %+v %v", name, res, err)
			}
			body := "file of " + id
			if _, err := gw.client.Upload(ctx, name, "/workspace/who", strings.NewReader(body), 0o644); err != nil {
				t.Fatalf("upload to %s: %v", name, err)
			}
			rc, err := gw.client.Download(ctx, id, "/workspace/who")
			if err != nil {
				t.Fatalf("download from %s: %v", name, err)
			}
			got, _ := io.ReadAll(rc)
			rc.Close()
			if string(got) != body {
				t.Fatalf("download from %s: %q", name, got)
			}
		}
		// A terminal (WebSocket) and a preview, on one sandbox of each host.
		seen := map[string]bool{}
		for _, id := range ids {
			node := c.kubeField("pod", id, "{.spec.nodeName}")
			if seen[node] {
				continue
			}
			seen[node] = true
			checkTerminal(t, gw.client, id)
			checkPreview(t, gw, id)
		}
	})

	t.Run("stop and start through the gateway", func(t *testing.T) {
		id := ids[0]
		if _, err := gw.client.Exec(ctx, id, sdk.ExecRequest{Shell: "echo kept > /workspace/kept"}); err != nil {
			t.Fatal(err)
		}
		sb, err := gw.client.StopSandbox(ctx, id, sdk.StopOptions{})
		if err != nil || sb.State != sdk.StateStopped {
			t.Fatalf("stop: %+v %v", sb, err)
		}
		if mode := c.kubeField("sandbox", id, "{.spec.operatingMode}"); mode != "Suspended" {
			t.Fatalf("operatingMode after stop: %q", mode)
		}
		if got, err := gw.client.GetSandbox(ctx, id); err != nil || got.State != sdk.StateStopped {
			t.Fatalf("get after stop: %+v %v", got, err)
		}
		var ae *sdk.APIError
		if _, err := gw.client.ListFiles(ctx, id, "/workspace"); !errors.As(err, &ae) || ae.Code != sdk.CodeSandboxNotRunning {
			t.Fatalf("listing files of a stopped sandbox: %v", err)
		}
		sb, err = gw.client.StartSandbox(ctx, id)
		if err != nil || sb.State != sdk.StateStarted {
			t.Fatalf("start: %+v %v", sb, err)
		}
		res, err := gw.client.Exec(ctx, id, sdk.ExecRequest{Shell: "cat /workspace/kept"})
		if err != nil || res.Stdout != "kept\n" {
			t.Fatalf("file after stop+start: %+v %v", res, err)
		}
		// Lazy start: a stopped sandbox's exec starts it.
		if _, err := gw.client.StopSandbox(ctx, ids[1], sdk.StopOptions{}); err != nil {
			t.Fatal(err)
		}
		res, err = gw.client.Exec(ctx, ids[1], sdk.ExecRequest{Shell: "cat /workspace/who"})
		if err != nil || res.Stdout != "file of "+ids[1] {
			t.Fatalf("exec on a stopped sandbox: %+v %v", res, err)
		}
	})

	allThere := func(t *testing.T, client *sdk.Client) {
		t.Helper()
		list, err := client.ListSandboxes(ctx, sdk.ListOptions{})
		if err != nil || len(list) != n {
			t.Fatalf("list: %d sandboxes, %v", len(list), err)
		}
		for _, id := range ids {
			res, err := client.Exec(ctx, id, sdk.ExecRequest{Shell: "cat /workspace/who"})
			if err != nil || res.Stdout != "file of "+id {
				t.Fatalf("exec on %s: %+v %v", id, res, err)
			}
		}
	}

	parent := t // the new gateway outlives this subtest
	t.Run("gateway restart loses nothing", func(t *testing.T) {
		gw.stop()
		gw = startGateway(parent, c, gwKC, keyFile, key, gwAddr)
		allThere(t, gw.client)
	})

	t.Run("control plane restart loses nothing", func(t *testing.T) {
		c.restartAPIServer()
		allThere(t, gw.client)
		if out := c.kubectl("get", "sandboxes", "-n", "sbx", "-o", "name"); strings.Count(out, "sandbox.agents.x-k8s.io/") != n {
			t.Fatalf("sandbox objects after the restart:\n%s", out)
		}
	})

	if os.Getenv("SBX_BENCH_GATEWAY") == "1" {
		benchGateway(t, c, gwAddr, keyFile)
	}

	t.Run("delete through the gateway", func(t *testing.T) {
		errs := make(chan error, len(ids))
		for _, id := range ids {
			go func() {
				if err := gw.client.DeleteSandbox(ctx, id, true); err != nil {
					errs <- fmt.Errorf("delete %s: %w", id, err)
					return
				}
				errs <- nil
			}()
		}
		for range ids {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if out := c.kubectl("get", "sandboxes", "-n", "sbx", "-o", "name"); strings.TrimSpace(out) != "" {
			t.Fatalf("objects left: %s", out)
		}
		for name, h := range hosts {
			waitFor(t, 60*time.Second, "host "+name+" to have deleted its sandboxes", func() bool {
				list, err := h.client.ListSandboxes(ctx, sdk.ListOptions{})
				return err == nil && len(list) == 0
			})
		}
	})
}

// checkTerminal opens a terminal through the gateway and reads a command's
// output from it.
func checkTerminal(t *testing.T, c *sdk.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pty, err := c.CreatePTY(ctx, id, sdk.CreatePTYRequest{Cmd: []string{"/bin/sh"}})
	if err != nil {
		t.Fatalf("create terminal on %s: %v", id, err)
	}
	conn, err := c.AttachPTY(ctx, id, pty.ID)
	if err != nil {
		t.Fatalf("attach terminal on %s: %v", id, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("echo term-$((40+2))\n")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), "term-42") {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("terminal on %s: %v after %q", id, err, out.String())
		}
		out.Write(buf[:n])
	}
}

// checkPreview serves a page in the sandbox and reads it through the
// gateway's path-based preview, with the port's token.
func checkPreview(t *testing.T, gw *gatewayProc, id string) {
	t.Helper()
	ctx := context.Background()
	c := gw.client
	if _, err := c.Exec(ctx, id, sdk.ExecRequest{Shell: "mkdir -p /tmp/www && echo page-of-" + id + " > /tmp/www/index.html"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartProcess(ctx, id, sdk.StartProcessRequest{ID: "web", Cmd: []string{"httpd", "-f", "-p", "8080", "-h", "/tmp/www"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForPort(ctx, id, "web", sdk.WaitForPortRequest{Port: 8080, TimeoutSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	p, err := c.ExposePort(ctx, id, sdk.ExposePortRequest{Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + gw.addr + "/v1/sandboxes/" + id + "/ports/8080/index.html?sbx_token=" + p.Token)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "page-of-"+id {
		t.Fatalf("preview of %s through the gateway: %d %q", id, resp.StatusCode, body)
	}
}

// benchGateway runs bench/gateway.go's scenario against this cluster:
// create → first exec through the gateway vs one sbx host, same run.
func benchGateway(t *testing.T, c *cluster, gwAddr, keyFile string) {
	tr := startTracer(t, c.kubeconfig)
	defer func() {
		t.Logf("where the gateway's creates spent their time (ms after the object reached a watcher), slowest first:\n%s", tr.report())
	}()
	cmd := exec.Command("go", "run", "../bench", "-sbx", sbxBin, "-systems", "sbx", "-scenarios", "gateway",
		"-gateway", "http://"+gwAddr, "-gateway-token-file", keyFile, "-create-n", os.Getenv("SBX_BENCH_GATEWAY_N"))
	if os.Getenv("SBX_BENCH_GATEWAY_N") == "" {
		cmd.Args = cmd.Args[:len(cmd.Args)-2]
	}
	out, err := cmd.CombinedOutput()
	t.Logf("bench gateway:\n%s", out)
	if err != nil {
		t.Errorf("bench: %v", err)
	}
}
