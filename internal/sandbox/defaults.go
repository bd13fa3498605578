package sandbox

import (
	"maps"
	"strings"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// The operator's sandbox defaults (sbx serve --config, --default-*):
// environment variables and an egress policy that a create request's own
// values override, and a CA bundle that is every instance's trust store.
// Env and egress are written into the sandbox's spec at create, so a later
// change of the defaults leaves existing sandboxes as they were; the CA
// bundle is mounted at each start, so a renewed proxy CA reaches every
// sandbox at its next start.

// caEnv names the mounted bundle for programs that do not read the
// system trust store, or read it only when told (Node.js, Python's
// requests, OpenSSL's SSL_CERT_FILE, curl).
var caEnv = []string{"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"}

// ValidateDefaults checks the operator's env and limits as a create
// request's would be checked, so a bad config fails at daemon start.
func ValidateDefaults(d Defaults) error {
	return validateCreate(&wire.CreateSandboxRequest{Env: d.Env, CPU: d.CPU, MemoryMiB: d.MemoryMiB, PidsLimit: d.PidsLimit, DiskMiB: d.DiskMiB})
}

// withOperatorDefaults fills in the default env under req's own variables
// and the default egress policy when req names none and has a network.
func (m *Manager) withOperatorDefaults(req wire.CreateSandboxRequest) wire.CreateSandboxRequest {
	d := m.cfg.Defaults
	if len(d.Env) > 0 {
		env := maps.Clone(d.Env)
		maps.Copy(env, req.Env)
		req.Env = env
	}
	if req.Egress == nil && d.Egress != nil && req.Network != wire.NetworkNone && m.cfg.Network != nil {
		egress := *d.Egress
		req.Egress = &egress
	}
	return req
}

// caBundle is the trust store an instance of spec mounts: with HTTP egress
// rules, the one that also trusts the egress proxy's CA; else the
// operator's, if any. Only those instances mount the proxy's bundle, so
// every other instance keeps its image's trust store, its mounts stay what
// a memory snapshot taken elsewhere expects, and no mount names the data
// directory.
func (m *Manager) caBundle(spec store.Spec) string {
	if e := spec.Egress; e != nil && e.HTTP != nil && m.cfg.Defaults.HTTPEgressCABundle != "" {
		return m.cfg.Defaults.HTTPEgressCABundle
	}
	return m.cfg.Defaults.CABundle
}

// withCAEnv adds the variables that point programs at the mounted CA
// bundle, unless the sandbox sets them itself.
func withCAEnv(env []string, bundle string) []string {
	if bundle == "" {
		return env
	}
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	for _, k := range caEnv {
		if !set[k] {
			env = append(env, k+"="+runtime.CABundlePaths[1])
		}
	}
	return env
}
