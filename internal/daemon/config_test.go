package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// Flags override the file: scalars replace, env merges key by key.
func TestSandboxDefaultsOverride(t *testing.T) {
	file := SandboxDefaults{CABundle: "/a.pem", Env: map[string]string{"A": "file", "B": "file"}, CPU: 2, MemoryMiB: 512,
		Egress: &wire.EgressPolicy{Mode: wire.EgressBlockAll}}
	got := file.Override(SandboxDefaults{Env: map[string]string{"B": "flag"}, MemoryMiB: 256})
	if got.CABundle != "/a.pem" || got.CPU != 2 || got.MemoryMiB != 256 || got.Env["A"] != "file" || got.Env["B"] != "flag" || got.Egress.Mode != wire.EgressBlockAll {
		t.Errorf("override: %+v", got)
	}
	if file.Env["B"] != "file" {
		t.Errorf("override changed the file's env: %v", file.Env)
	}
}

func TestLoadConfigFileRefusesUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(`{"sandboxDefaults": {"cpus": 2}}`), 0o600)
	if _, err := LoadConfigFile(path); err == nil || !strings.Contains(err.Error(), "cpus") {
		t.Errorf("unknown field: %v", err)
	}
	os.WriteFile(path, []byte(`{"sandboxDefaults": {"cpu": 2, "env": {"A": "1"}}}`), 0o600)
	if c, err := LoadConfigFile(path); err != nil || c.SandboxDefaults.CPU != 2 || c.SandboxDefaults.Env["A"] != "1" {
		t.Errorf("good file: %+v, %v", c, err)
	}
}

// The CA bundle holds certificates only: a key would reach every sandbox.
func TestCABundleTakesOnlyCertificates(t *testing.T) {
	cert := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	key := "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"
	for body, ok := range map[string]bool{cert: true, cert + key: false, "not pem": false} {
		if err := checkPEMCerts([]byte(body)); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", body, err, ok)
		}
	}
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, []byte(cert), 0o600)
	old := hostCABundle
	t.Cleanup(func() { hostCABundle = old })
	hostCABundle = filepath.Join(dir, "host.crt")
	os.WriteFile(hostCABundle, []byte("HOST"), 0o600)
	d, err := sandboxDefaults(dir, SandboxDefaults{CABundle: ca})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(d.CABundle); string(b) != "HOST\n"+cert {
		t.Errorf("bundle %q, want the host's CAs then the operator's", b)
	}
}
