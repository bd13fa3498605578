package daemon

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/wire"
)

// ConfigFile is the daemon's config file (sbx serve --config, JSON). Today
// it holds the operator's sandbox defaults; every other setting is a flag
// or an SBX_* variable. Unknown fields are an error, so a typo never goes
// unnoticed.
//
//	{
//	  "sandboxDefaults": {
//	    "caBundle": "/etc/sbx/proxy-ca.pem",
//	    "env": {"HTTPS_PROXY": "http://10.0.0.1:3128"},
//	    "egress": {"mode": "deny-list", "cidrs": ["169.254.169.254"]},
//	    "cpu": 2, "memoryMiB": 2048, "pidsLimit": 512
//	  }
//	}
type ConfigFile struct {
	SandboxDefaults SandboxDefaults `json:"sandboxDefaults"`
}

// SandboxDefaults are what every sandbox gets unless its create request
// says otherwise: env variables (the request's win, key by key), an egress
// policy (the request's replaces it), limits, and a CA bundle (PEM, one or
// more certificates) added to every instance's trust store.
type SandboxDefaults struct {
	CABundle  string             `json:"caBundle,omitempty"`
	Env       map[string]string  `json:"env,omitempty"`
	Egress    *wire.EgressPolicy `json:"egress,omitempty"`
	CPU       float64            `json:"cpu,omitempty"`
	MemoryMiB int                `json:"memoryMiB,omitempty"`
	PidsLimit int                `json:"pidsLimit,omitempty"`
}

// LoadConfigFile reads and checks the config file at path.
func LoadConfigFile(path string) (ConfigFile, error) {
	var c ConfigFile
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("config file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("config file %s: %w", path, err)
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return c, fmt.Errorf("config file %s: more than one JSON value", path)
	}
	return c, nil
}

// Override returns d with every value over sets (flags over the file);
// env is merged key by key.
func (d SandboxDefaults) Override(over SandboxDefaults) SandboxDefaults {
	if over.CABundle != "" {
		d.CABundle = over.CABundle
	}
	if len(over.Env) > 0 {
		env := map[string]string{}
		for k, v := range d.Env {
			env[k] = v
		}
		for k, v := range over.Env {
			env[k] = v
		}
		d.Env = env
	}
	if over.Egress != nil {
		d.Egress = over.Egress
	}
	if over.CPU != 0 {
		d.CPU = over.CPU
	}
	if over.MemoryMiB != 0 {
		d.MemoryMiB = over.MemoryMiB
	}
	if over.PidsLimit != 0 {
		d.PidsLimit = over.PidsLimit
	}
	return d
}

// hostCABundle is the host's trust store (Debian's), which the operator's
// CA is added to: a sandbox behind a TLS-intercepting proxy still trusts
// the public CAs for what the proxy passes through.
var hostCABundle = "/etc/ssl/certs/ca-certificates.crt"

// sandboxDefaults checks d and turns it into the Manager's defaults. The
// CA bundle is written to <dataDir>/defaults/ca-certificates.crt (the
// host's public CAs, then the operator's), which every instance mounts.
func sandboxDefaults(dataDir string, d SandboxDefaults) (sandbox.Defaults, error) {
	out := sandbox.Defaults{Env: d.Env, Egress: d.Egress, CPU: d.CPU, MemoryMiB: d.MemoryMiB, PidsLimit: d.PidsLimit}
	ca, err := d.check()
	if err != nil {
		return out, err
	}
	dir := filepath.Join(dataDir, "defaults")
	if d.CABundle == "" {
		os.RemoveAll(dir)
		return out, nil
	}
	bundle, err := os.ReadFile(hostCABundle)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return out, err
	}
	if len(bundle) > 0 && bundle[len(bundle)-1] != '\n' {
		bundle = append(bundle, '\n')
	}
	bundle = append(bundle, ca...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, err
	}
	out.CABundle = filepath.Join(dir, "ca-certificates.crt")
	tmp := out.CABundle + ".tmp"
	if err := os.WriteFile(tmp, bundle, 0o644); err != nil {
		return out, err
	}
	return out, os.Rename(tmp, out.CABundle)
}

// defaultDisk is the default disk of sandboxes: miB, or none on a host
// without mkfs.ext4, which every sandbox's create would then fail on.
func defaultDisk(miB int) int {
	if _, err := exec.LookPath("mkfs.ext4"); miB > 0 && err != nil {
		slog.Warn("sandboxes get no default disk limit: mkfs.ext4 is missing (Debian: e2fsprogs); one sandbox can fill the data disk", "default-disk-mib", miB)
		return 0
	}
	return miB
}

// Check reports what is wrong with d, as sbx serve would at start (sbx
// doctor --config).
func (d SandboxDefaults) Check() error {
	_, err := d.check()
	return err
}

// check validates d and returns the operator's CA bundle's PEM.
func (d SandboxDefaults) check() ([]byte, error) {
	if err := sandbox.ValidateDefaults(sandbox.Defaults{Env: d.Env, CPU: d.CPU, MemoryMiB: d.MemoryMiB, PidsLimit: d.PidsLimit}); err != nil {
		return nil, fmt.Errorf("sandbox defaults: %w", err)
	}
	if d.Egress != nil {
		if _, err := network.ParseEgress(d.Egress); err != nil {
			return nil, fmt.Errorf("sandbox defaults: egress: %w", err)
		}
	}
	if d.CABundle == "" {
		return nil, nil
	}
	ca, err := os.ReadFile(d.CABundle)
	if err != nil {
		return nil, fmt.Errorf("sandbox defaults: CA bundle: %w", err)
	}
	if err := checkPEMCerts(ca); err != nil {
		return nil, fmt.Errorf("sandbox defaults: CA bundle %s: %w", d.CABundle, err)
	}
	return ca, nil
}

// checkPEMCerts requires at least one certificate and nothing but
// certificates (a private key here would be handed to every sandbox).
func checkPEMCerts(b []byte) error {
	n := 0
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("holds a %s block; only CERTIFICATE blocks may be given to sandboxes", block.Type)
		}
		n++
	}
	if n == 0 {
		return errors.New("no PEM certificate in it")
	}
	return nil
}
