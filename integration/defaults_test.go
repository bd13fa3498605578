package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// The operator's sandbox defaults (issue 16 item 9): a config file and
// --default-* flags over it. A sandbox sees the CA in its trust store and
// the env, gets the limits and the egress policy; a create request's own
// values override them.
func TestOperatorDefaults(t *testing.T) {
	dir := t.TempDir()
	caPEM := testCA(t)
	caFile := filepath.Join(dir, "proxy-ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.json")
	if err := os.WriteFile(config, []byte(`{"sandboxDefaults": {
		"caBundle": "`+caFile+`",
		"env": {"FROM_FILE": "file", "OVER": "file"},
		"egress": {"mode": "deny-list", "cidrs": ["192.0.2.1"]},
		"cpu": 0.5, "memoryMiB": 300, "pidsLimit": 200}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "--config", config, "--default-env", "OVER=flag", "--default-memory-mib", "256")
	ctx := context.Background()

	// Defaults: the file's, with the flags over them.
	sb := d.create(sdk.CreateSandboxRequest{Name: "plain"})
	if sb.CPU != 0.5 || sb.MemoryMiB != 256 || sb.PidsLimit != 200 {
		t.Errorf("limits %g CPU, %d MiB, %d pids; want 0.5, 256 (flag over file), 200", sb.CPU, sb.MemoryMiB, sb.PidsLimit)
	}
	out := d.exec("plain", `echo "$FROM_FILE $OVER $SSL_CERT_FILE $NODE_EXTRA_CA_CERTS"; cat /sys/fs/cgroup/memory/memory.limit_in_bytes`)
	if want := "file flag /etc/sbx/ca-certificates.crt /etc/sbx/ca-certificates.crt\n" + itoa(256<<20); out != want {
		t.Errorf("env and memory limit inside:\n%s\nwant\n%s", out, want)
	}
	ca := strings.TrimSpace(string(caPEM))
	for _, path := range []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/sbx/ca-certificates.crt"} {
		if store := d.exec("plain", "cat "+path); !strings.Contains(store, ca) {
			t.Errorf("%s inside lacks the operator's CA (%d bytes)", path, len(store))
		}
	}
	// Class gvisor mounts the same trust store.
	if _, err := exec.LookPath("runsc"); err == nil {
		d.create(sdk.CreateSandboxRequest{Name: "gv", Class: "gvisor"})
		if store := d.exec("gv", "cat /etc/ssl/certs/ca-certificates.crt"); !strings.Contains(store, ca) {
			t.Errorf("class gvisor: the trust store lacks the operator's CA (%d bytes)", len(store))
		}
	}
	if n, _ := d.client.GetNetwork(ctx, "plain"); n == nil || n.Egress == nil || n.Egress.Mode != sdk.EgressDenyList || !slices.Contains(n.Egress.CIDRs, "192.0.2.1/32") && !slices.Contains(n.Egress.CIDRs, "192.0.2.1") {
		t.Errorf("egress %+v, want the default deny-list of 192.0.2.1", n)
	}

	// A request's own values win.
	sb = d.create(sdk.CreateSandboxRequest{Name: "own", Env: map[string]string{"OVER": "request", "SSL_CERT_FILE": "/mine.pem"},
		CPU: 1, MemoryMiB: 128, PidsLimit: 100, Egress: &sdk.EgressPolicy{Mode: sdk.EgressAllowAll}})
	if sb.CPU != 1 || sb.MemoryMiB != 128 || sb.PidsLimit != 100 {
		t.Errorf("limits %g CPU, %d MiB, %d pids; want the request's 1, 128, 100", sb.CPU, sb.MemoryMiB, sb.PidsLimit)
	}
	if out := d.exec("own", `echo "$FROM_FILE $OVER $SSL_CERT_FILE"; cat /sys/fs/cgroup/memory/memory.limit_in_bytes`); out != "file request /mine.pem\n"+itoa(128<<20) {
		t.Errorf("env and memory limit inside: %q", out)
	}
	if n, _ := d.client.GetNetwork(ctx, "own"); n == nil || (n.Egress != nil && n.Egress.Mode != sdk.EgressAllowAll) {
		t.Errorf("egress %+v, want the request's allow-all", n)
	}
}

// A config file with a typo or a key in the CA bundle stops the daemon at
// start with a message naming it.
func TestOperatorDefaultsRefuseBadConfig(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"typo.json": `{"sandboxDefaults": {"memory": 10}}`,
		"env.json":  `{"sandboxDefaults": {"env": {"1BAD": "x"}}}`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, sbxBin, "serve", "--data-dir", filepath.Join(dir, "data"), "--listen", freeAddr(t), "--network", "none", "--config", path).CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil || timedOut || !strings.Contains(string(out), `"memory"`) && !strings.Contains(string(out), "1BAD") {
			t.Errorf("serve with %s: %v\n%s", name, err, out)
		}
	}
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

// testCA returns a self-signed CA certificate in PEM.
func testCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sbx test proxy CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
