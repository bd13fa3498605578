package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A Kubernetes control plane on loopback for the cluster tests (issue 21):
// etcd (Debian's), kube-apiserver, kube-scheduler, kube-controller-manager
// and agent-sandbox's controller with its CRDs, the binaries from
// scripts/build-kube.sh ($SBX_KUBE_BIN). No kubelet: sbx hosts join as
// nodes themselves (sbx serve --kube-node). Start-up takes ~20 s, so the
// cluster tests share one cluster per test function.

// kubeDeploy is the repository's manifests, applied as docs/kubernetes/index.md shows.
const kubeDeploy = "../deploy/kubernetes"

// nodeGracePeriod is how long a host may miss its lease before the node
// lifecycle controller calls it NotReady. virtual-kubelet renews the lease
// every 10 s; the margin keeps a loaded CI machine from flapping.
const nodeGracePeriod = "25s"

type cluster struct {
	t          *testing.T
	dir        string
	bin        string
	apiURL     string
	kubeconfig string // admin (system:masters)
	// kubeletCA signed kube-apiserver's kubelet client certificate: hosts
	// get it as --kube-node-client-ca so kubectl logs/exec reach them.
	kubeletCA string
	procs     []*exec.Cmd
	exited    []chan struct{}
}

// kubeBin is the directory of the control plane's binaries.
func kubeBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SBX_KUBE_BIN")
	if dir == "" {
		t.Fatal("SBX_KUBE_BIN is not set: run SBX_KUBE_BIN=$(scripts/build-kube.sh) before the cluster tests")
	}
	if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
		t.Fatalf("SBX_KUBE_BIN=%s is not a finished build (run scripts/build-kube.sh): %v", dir, err)
	}
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Fatal("etcd is not installed: apt-get install etcd-server (scripts/setup-tests.sh)")
	}
	return dir
}

// startCluster starts a control plane, applies the CRDs, namespaces and
// RBAC of deploy/kubernetes and returns once agent-sandbox's controller
// runs. Cleanup stops everything it started, by PID, API server before etcd.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, bin: kubeBin(t), dir: t.TempDir()}
	t.Cleanup(c.stop)
	pki := c.writePKI()
	etcdAddr, etcdPeer := freeAddr(t), freeAddr(t)
	c.run("etcd", "etcd", "--data-dir", filepath.Join(c.dir, "etcd"),
		"--listen-client-urls", "http://"+etcdAddr, "--advertise-client-urls", "http://"+etcdAddr,
		"--listen-peer-urls", "http://"+etcdPeer, "--initial-advertise-peer-urls", "http://"+etcdPeer,
		"--initial-cluster", "default=http://"+etcdPeer, "--log-level", "warn")
	apiAddr := freeAddr(t)
	host, port, _ := net.SplitHostPort(apiAddr)
	c.apiURL = "https://" + apiAddr
	c.run("kube-apiserver", filepath.Join(c.bin, "kube-apiserver"),
		"--etcd-servers", "http://"+etcdAddr,
		"--bind-address", host, "--secure-port", port, "--advertise-address", host,
		"--cert-dir", filepath.Join(c.dir, "apiserver-certs"),
		"--token-auth-file", pki.tokens,
		"--authorization-mode", "RBAC",
		"--allow-privileged=true", // as kubeadm's: the host DaemonSet is privileged
		"--service-cluster-ip-range", "10.254.0.0/16",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", pki.saKey, "--service-account-signing-key-file", pki.saKey,
		"--endpoint-reconciler-type", "none", // loopback has no endpoint the reconciler accepts
		"--kubelet-client-certificate", pki.kubeletCert, "--kubelet-client-key", pki.kubeletKey,
		"--kubelet-preferred-address-types", "InternalIP",
		"--enable-priority-and-fairness=false")
	c.kubeconfig = c.writeKubeconfig("admin.kubeconfig", pki.adminToken)
	c.waitAPI(pki.adminToken)
	c.run("kube-controller-manager", filepath.Join(c.bin, "kube-controller-manager"),
		"--kubeconfig", c.kubeconfig, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", portOf(freeAddr(t)),
		"--service-account-private-key-file", pki.saKey, "--use-service-account-credentials=false",
		"--node-monitor-period", "1s", "--node-monitor-grace-period", nodeGracePeriod)
	c.run("kube-scheduler", filepath.Join(c.bin, "kube-scheduler"),
		"--kubeconfig", c.kubeconfig, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", portOf(freeAddr(t)))
	c.kubectl("apply", "-f", filepath.Join(kubeDeploy, "crds"), "-f", filepath.Join(kubeDeploy, "namespaces.yaml"),
		"-f", filepath.Join(kubeDeploy, "host-rbac.yaml"))
	c.kubectl("wait", "--for", "condition=Established", "--timeout", "60s",
		"crd/sandboxes.agents.x-k8s.io", "crd/sandboxclaims.extensions.agents.x-k8s.io",
		"crd/sandboxtemplates.extensions.agents.x-k8s.io", "crd/sandboxwarmpools.extensions.agents.x-k8s.io")
	c.runEnv("agent-sandbox-controller", []string{"KUBECONFIG=" + c.kubeconfig}, filepath.Join(c.bin, "agent-sandbox-controller"),
		"--leader-elect=false", "--extensions", "--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	return c
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// run starts one component, its output in <dir>/<name>.log.
func (c *cluster) run(name, bin string, args ...string) { c.runEnv(name, nil, bin, args...) }

func (c *cluster) runEnv(name string, env []string, bin string, args ...string) {
	t := c.t
	t.Helper()
	logf, err := os.Create(filepath.Join(c.dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	c.procs = append(c.procs, cmd)
	c.exited = append(c.exited, exited)
}

// stop kills the components newest first (the API server before etcd)
// and shows the logs of a failed test.
func (c *cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited[i]:
		case <-time.After(10 * time.Second):
			c.procs[i].Process.Kill()
			<-c.exited[i]
		}
	}
	if c.t.Failed() {
		for _, name := range []string{"kube-controller-manager", "agent-sandbox-controller", "kube-scheduler"} {
			if b, err := os.ReadFile(filepath.Join(c.dir, name+".log")); err == nil {
				c.t.Logf("%s log:\n%s", name, lastLines(string(b), 30))
			}
		}
	}
}

// kubectl runs kubectl against the cluster as admin and returns its
// output; a failure fails the test.
func (c *cluster) kubectl(args ...string) string {
	c.t.Helper()
	out, err := c.tryKubectl(args...)
	if err != nil {
		c.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// tryKubectl is kubectl that returns its error.
func (c *cluster) tryKubectl(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kubectlIn is kubectl with stdin.
func (c *cluster) kubectlIn(stdin string, args ...string) string {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serviceAccountKubeconfig is a kubeconfig acting as a service account
// (a token from the TokenRequest API): how a DaemonSet's pod would talk
// to the API, so the tests exercise deploy/kubernetes's RBAC.
func (c *cluster) serviceAccountKubeconfig(namespace, name string) string {
	c.t.Helper()
	token := strings.TrimSpace(c.kubectl("create", "token", name, "-n", namespace, "--duration", "2h"))
	return c.writeKubeconfig(name+".kubeconfig", token)
}

func (c *cluster) writeKubeconfig(file, token string) string {
	path := filepath.Join(c.dir, file)
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: user
  user:
    token: %s
contexts:
- name: test
  context: {cluster: test, user: user}
current-context: test
`, c.apiURL, token)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return path
}

// waitAPI waits until kube-apiserver is ready.
func (c *cluster) waitAPI(token string) {
	c.t.Helper()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	waitFor(c.t, 90*time.Second, "kube-apiserver to be ready", func() bool {
		req, _ := http.NewRequest("GET", c.apiURL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

// pki is the cluster's keys: the static admin token, the service-account
// signing key, and a CA with the API server's kubelet client certificate.
type pki struct {
	tokens, adminToken      string
	saKey                   string
	kubeletCert, kubeletKey string
}

func (c *cluster) writePKI() pki {
	t := c.t
	t.Helper()
	dir := filepath.Join(c.dir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newKey := func() (*ecdsa.PrivateKey, []byte) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return k, der
	}
	var p pki
	_, saDER := newKey()
	p.saKey = write("sa.key", "EC PRIVATE KEY", saDER)

	caKey, _ := newKey()
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sbx-test-kubelet-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	c.kubeletCA = write("kubelet-ca.crt", "CERTIFICATE", caDER)
	ca, _ := x509.ParseCertificate(caDER)
	clKey, clDER := newKey()
	clTpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	certDER, err := x509.CreateCertificate(rand.Reader, clTpl, ca, &clKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.kubeletCert = write("kubelet-client.crt", "CERTIFICATE", certDER)
	p.kubeletKey = write("kubelet-client.key", "EC PRIVATE KEY", clDER)

	raw := make([]byte, 16)
	rand.Read(raw)
	p.adminToken = hex.EncodeToString(raw)
	p.tokens = filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(p.tokens, []byte(p.adminToken+`,admin,admin,"system:masters"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
