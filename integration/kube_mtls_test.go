package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// clusterPKI is what docs/kubernetes/deploy.md has an operator make: a CA,
// the hosts' API certificate (DNS name sbx-host) and the gateway's client
// certificate (CN sbx-gateway), as files.
type clusterPKI struct {
	dir                  string
	caPEM                []byte
	ca                   *x509.Certificate
	caKey                *ecdsa.PrivateKey
	caFile               string
	hostCert, hostKey    string
	gwCertFile, gwKeyFil string
	gw                   tls.Certificate
}

func newClusterPKI(t *testing.T) *clusterPKI {
	t.Helper()
	p := &clusterPKI{dir: t.TempDir()}
	p.ca, p.caKey, p.caPEM = newTestCA(t, "sbx-cluster-ca")
	p.caFile = p.write(t, "ca.crt", p.caPEM)
	_, hostPEM, hostKeyPEM := p.issue(t, "sbx-host", []string{"sbx-host"}, x509.ExtKeyUsageServerAuth)
	p.hostCert, p.hostKey = p.write(t, "host.crt", hostPEM), p.write(t, "host.key", hostKeyPEM)
	var gwPEM, gwKeyPEM []byte
	p.gw, gwPEM, gwKeyPEM = p.issue(t, "sbx-gateway", nil, x509.ExtKeyUsageClientAuth)
	p.gwCertFile, p.gwKeyFil = p.write(t, "gateway.crt", gwPEM), p.write(t, "gateway.key", gwKeyPEM)
	return p
}

func (p *clusterPKI) write(t *testing.T, name string, b []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newTestCA(t *testing.T, cn string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	return ca, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// issue signs a certificate for cn (and 127.0.0.1, where the tests' hosts
// listen) with the cluster CA.
func (p *clusterPKI) issue(t *testing.T, cn string, dns []string, usage x509.ExtKeyUsage) (tls.Certificate, []byte, []byte) {
	return issueCert(t, p.ca, p.caKey, cn, dns, usage)
}

func issueCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, dns []string, usage x509.ExtKeyUsage) (tls.Certificate, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// startMTLSHost is startSharedKeyHost serving its API over mutual TLS, as
// deploy/kubernetes/host-daemonset.yaml runs it: only the gateway's
// certificate is served (the test's own client presents it too).
func startMTLSHost(t *testing.T, gc *gatewayCluster, p *clusterPKI, node string, kubeletPort string) *gatewayHost {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte(gc.key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(gc.srv.Flags(gc.bucket, "cluster"),
		"--kube-node", "--kubeconfig", gc.cluster.serviceAccountKubeconfig("sbx-system", "sbx-host"), "--kube-node-name", node,
		"--kube-node-port", kubeletPort, "--kube-node-client-ca", gc.cluster.kubeletCA,
		"--kube-node-cpu", "8", "--kube-node-memory", "16Gi",
		"--tls-cert", p.hostCert, "--tls-key", p.hostKey, "--tls-client-ca", p.caFile)
	d := &daemon{t: t, dataDir: dir, addr: freeAddr(t), created: map[string]bool{}, ca: p.caPEM, cert: []tls.Certificate{p.gw}}
	d.args = plainDisk(netArgs(t, args))
	d.watchCensus()
	t.Cleanup(d.cleanup)
	d.start()
	return &gatewayHost{daemon: d, node: node}
}

// mtlsGatewayFlags are the flags that make the gateway reach the hosts
// over mutual TLS (TestKubeDeploy checks that deploy/kubernetes gives them).
func mtlsGatewayFlags(p *clusterPKI) []string {
	return []string{"--host-ca", p.caFile, "--host-client-cert", p.gwCertFile, "--host-client-key", p.gwKeyFil}
}

// TestKubeMTLS: a host started as the DaemonSet runs it (--tls-client-ca)
// serves sandbox traffic the gateway forwards with its client certificate,
// and refuses, in the TLS handshake, every other client that reaches its
// port directly even with the admin key: none, one for another name signed
// by the cluster CA, one named sbx-gateway from another CA. Its kubelet API
// still serves kube-apiserver only (kubectl exec works; the gateway's
// certificate is refused there).
func TestKubeMTLS(t *testing.T) {
	gc := startGatewayCluster(t) // no plain hosts
	c := gc.cluster
	p := newClusterPKI(t)
	const node = "sbx-mtls"
	kubeletPort := portOf(freeAddr(t))
	host := startMTLSHost(t, gc, p, node, kubeletPort)
	waitFor(t, 90*time.Second, node+" to be a Ready node", func() bool {
		return c.kubeField("node", node, `{.status.conditions[?(@.type=="Ready")].status}`) == "True"
	})
	if api := c.kubeField("node", node, `{.metadata.annotations.sbx\.dev/api}`); !strings.HasPrefix(api, "https://") {
		t.Fatalf("the node advertises %q, not https", api)
	}
	gc.gw.stop()
	gw := startGateway(t, c, gc.gwKC, gc.keyFile, gc.key, freeAddr(t), mtlsGatewayFlags(p)...)
	ctx := context.Background()

	sb, err := gw.client.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "mtls", CPU: 0.5, MemoryMiB: 256})
	if err != nil {
		t.Fatalf("create through the gateway: %v", err)
	}
	res, err := gw.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "echo through-$((40+2))"})
	if err != nil || res.Stdout != "through-42\n" {
		t.Fatalf("exec through the gateway over mutual TLS: %+v %v", res, err)
	}
	checkTerminal(t, gw.client, sb.ID) // a WebSocket through the proxy, over mutual TLS
	if got, err := gw.client.GetSandbox(ctx, sb.ID); err != nil || got.State != sdk.StateStarted {
		t.Fatalf("get (the gateway's merged view reads the host): %+v %v", got, err)
	}

	// Clients that reach the host's port directly, each with the admin key.
	other, otherKey, _ := newTestCA(t, "someone-else")
	intruder, _, _ := p.issue(t, "sbx-intruder", []string{"sbx-intruder"}, x509.ExtKeyUsageClientAuth)
	forged, _, _ := issueCert(t, other, otherKey, "sbx-gateway", nil, x509.ExtKeyUsageClientAuth)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	direct := func(addr, path string, certs ...tls.Certificate) (int, error) {
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, InsecureSkipVerify: path == "kubelet", Certificates: certs}}}
		req, _ := http.NewRequest("GET", "https://"+addr+"/v1/sandboxes/"+sb.ID, nil)
		if path == "kubelet" {
			req.URL.Path = "/containerLogs/sbx/" + sb.ID + "/sandbox"
		}
		req.Header.Set("Authorization", "Bearer "+gc.key)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := direct(host.addr, "api", p.gw); err != nil || code != 200 {
		t.Fatalf("the gateway's certificate on the host's API: %d %v", code, err)
	}
	hostPair, err := tls.LoadX509KeyPair(p.hostCert, p.hostKey)
	if err != nil {
		t.Fatal(err)
	}
	for what, certs := range map[string][]tls.Certificate{
		"no client certificate":               nil,
		"another name the cluster CA signed":  {intruder},
		"the gateway's name from another CA":  {forged},
		"the hosts' own (server) certificate": {hostPair},
	} {
		if code, err := direct(host.addr, "api", certs...); err == nil {
			t.Errorf("%s reached the host's API with the admin key: %d", what, code)
		}
	}

	// The kubelet API keeps its pin on kube-apiserver's certificate.
	kubelet := net.JoinHostPort("127.0.0.1", kubeletPort)
	if code, err := direct(kubelet, "kubelet", p.gw); err == nil {
		t.Errorf("the gateway's certificate reached the kubelet API: %d", code)
	}
	if out := c.kubectl("exec", "-n", "sbx", sb.ID, "--", "echo", "kubelet-ok"); strings.TrimSpace(out) != "kubelet-ok" {
		t.Fatalf("kubectl exec through the kubelet API: %q", out)
	}
	if err := gw.client.DeleteSandbox(ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
}
