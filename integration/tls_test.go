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
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// baseURL is the daemon's API URL: https when it serves TLS.
func (d *daemon) baseURL() string {
	if d.ca != nil {
		return "https://" + d.addr
	}
	return "http://" + d.addr
}

// httpClient is a plain HTTP client that trusts the daemon's CA.
func (d *daemon) httpClient() *http.Client {
	if d.ca == nil {
		return http.DefaultClient
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(d.ca)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: d.cert}, DisableKeepAlives: true}}
}

func (d *daemon) clientOptions() []sdk.Option {
	switch {
	case d.ca == nil:
		return nil
	case d.cert != nil:
		return []sdk.Option{sdk.WithHTTPClient(d.httpClient())}
	}
	return []sdk.Option{sdk.WithCACert(d.ca)}
}

// testPKI writes a new CA and a server certificate for 127.0.0.1 signed by
// it into dir; it returns the CA's PEM and the certificate and key files.
func testPKI(t *testing.T, dir string) (caPEM []byte, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sbx test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "sbx test daemon"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	certFile, keyFile = filepath.Join(dir, "daemon.crt"), filepath.Join(dir, "daemon.key")
	write := func(path string, b *pem.Block) {
		if err := os.WriteFile(path, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(certFile, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	write(keyFile, &pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	write(filepath.Join(dir, "ca.crt"), &pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return caPEM, certFile, keyFile
}

// startTLSDaemon is startDaemon serving https with a certificate of a new
// test CA; the daemon's client and health checks trust that CA.
func startTLSDaemon(t *testing.T, args ...string) (d *daemon, caFile string) {
	t.Helper()
	pki := t.TempDir()
	caPEM, cert, key := testPKI(t, pki)
	d = &daemon{t: t, dataDir: t.TempDir(), addr: freeAddr(t), created: map[string]bool{}, ca: caPEM}
	d.args = netArgs(t, append([]string{"--tls-cert", cert, "--tls-key", key}, args...))
	t.Cleanup(d.cleanup)
	d.start()
	return d, filepath.Join(pki, "ca.crt")
}

// TestTLS: over https the SDK creates a sandbox, execs and attaches a PTY
// (a WebSocket), a preview is served, the CLI works with SBX_CA_CERT, and a
// plain-http client gets a clear error at once.
func TestTLS(t *testing.T) {
	d, caFile := startTLSDaemon(t)
	ctx := context.Background()
	c := d.client
	d.create(sdk.CreateSandboxRequest{Name: "tls"})
	res, err := c.Exec(ctx, "tls", sdk.ExecRequest{Shell: "mkdir -p /www && echo over-tls > /www/index.html && busybox httpd -p 8080 -h /www && echo ok"})
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Stdout, "ok") {
		t.Fatalf("exec over https: %+v %v", res, err)
	}

	// A preview over https.
	port, err := c.ExposePort(ctx, "tls", sdk.ExposePortRequest{Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(port.PathURL, "https://") {
		t.Errorf("preview URL %q is not https", port.PathURL)
	}
	hc := d.httpClient()
	var body string
	waitFor(t, 10*time.Second, "the preview over https", func() bool {
		resp, err := hc.Get(d.baseURL() + "/v1/sandboxes/tls/ports/8080/index.html?sbx_token=" + port.Token)
		if err != nil {
			t.Fatalf("preview over https: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == 200
	})
	if strings.TrimSpace(body) != "over-tls" {
		t.Fatalf("preview body %q", body)
	}

	// A PTY attach: a WebSocket through the TLS listener.
	p, err := c.CreatePTY(ctx, "tls", sdk.CreatePTYRequest{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.AttachPTY(ctx, "tls", p.ID)
	if err != nil {
		t.Fatalf("attach a PTY over https: %v", err)
	}
	var seen strings.Builder
	conn.Write([]byte("echo pty-$((6*7))\n"))
	readUntil(t, conn, &seen, "pty-42")
	conn.Close()

	// A plain-http client is told to use https, and does not hang.
	plainCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err = sdk.NewClient("http://"+d.addr, d.token).ListSandboxes(plainCtx, sdk.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "serves https: use https://") {
		t.Fatalf("plain http client: %v, want a hint to use https", err)
	}
	// An https client without the CA is refused by certificate.
	if _, err := sdk.NewClient(d.baseURL(), d.token).ListSandboxes(ctx, sdk.ListOptions{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client without the CA: %v", err)
	}

	// The CLI, with the CA from SBX_CA_CERT; without it, a hint names the fix.
	cli := func(env ...string) (string, error) {
		cmd := exec.Command(sbxBin, "ls")
		cmd.Env = append(os.Environ(), append([]string{"SBX_HOST=" + d.baseURL(), "SBX_TOKEN=" + d.token}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := cli("SBX_CA_CERT=" + caFile); err != nil || !strings.Contains(out, "tls") {
		t.Fatalf("sbx ls with SBX_CA_CERT: %v\n%s", err, out)
	}
	if out, err := cli(); err == nil || !strings.Contains(out, "SBX_CA_CERT") {
		t.Fatalf("sbx ls without the CA: %v\n%s", err, out)
	}
}
