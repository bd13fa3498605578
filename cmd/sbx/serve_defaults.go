package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
	"github.com/sbxhq/sbx/internal/doctor"
)

// defaultsFlags are the operator's sandbox defaults of sbx serve: the
// --config file (JSON, see daemon.ConfigFile) and the --default-* flags,
// which override it.
type defaultsFlags struct {
	config    string
	caBundle  string
	env       []string
	egress    egressFlags // ports.go, under --default-egress, --default-allow, --default-deny
	cpu       float64
	memoryMiB int
	pidsLimit int
}

func (f *defaultsFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", `config file (JSON) with the sandbox defaults, e.g. /etc/sbx/config.json: {"sandboxDefaults": {"caBundle", "env", "egress", "cpu", "memoryMiB", "pidsLimit"}}; the --default-* flags override it (env SBX_CONFIG)`)
	fl.StringVar(&f.caBundle, "default-ca-bundle", "", "PEM file of CA certificates every sandbox trusts, added to the public CAs (a TLS-intercepting proxy's CA)")
	fl.StringArrayVar(&f.env, "default-env", nil, "KEY=VALUE every sandbox gets unless its create request sets KEY; repeatable")
	fl.StringVar(&f.egress.mode, "default-egress", "", "egress policy of sandboxes whose create request has none: allow-all, block-all, allow-list or deny-list")
	fl.StringArrayVar(&f.egress.allow, "default-allow", nil, "CIDR, address or domain of the default allow-list; repeatable")
	fl.StringArrayVar(&f.egress.deny, "default-deny", nil, "CIDR, address or domain of the default deny-list; repeatable")
	fl.Float64Var(&f.cpu, "default-cpu", 0, "CPUs of a sandbox whose create request names none (default 1)")
	fl.IntVar(&f.memoryMiB, "default-memory-mib", 0, "memory limit (MiB) of a sandbox whose create request names none (default 1024)")
	fl.IntVar(&f.pidsLimit, "default-pids", 0, "process limit of a sandbox whose create request names none (default 1024)")
}

func (f *defaultsFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	var d daemon.SandboxDefaults
	if path := setting(cmd, "config", f.config, "SBX_CONFIG"); path != "" {
		file, err := daemon.LoadConfigFile(path)
		if err != nil {
			return err
		}
		d = file.SandboxDefaults
	}
	over := daemon.SandboxDefaults{CABundle: f.caBundle, CPU: f.cpu, MemoryMiB: f.memoryMiB, PidsLimit: f.pidsLimit}
	for _, kv := range f.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--default-env wants KEY=VALUE, got %q", kv)
		}
		if over.Env == nil {
			over.Env = map[string]string{}
		}
		over.Env[k] = v
	}
	p, err := f.egress.policy()
	if err != nil {
		return usagef("default egress: %v", err)
	}
	over.Egress = p
	cfg.SandboxDefaults = d.Override(over)
	return nil
}

// checkConfigFile is sbx doctor's check of the config file.
func checkConfigFile(path string) doctor.Result {
	r := doctor.Result{Check: "config file", Status: doctor.OK, Detail: path + ": sandbox defaults are valid"}
	file, err := daemon.LoadConfigFile(path)
	if err == nil {
		err = file.SandboxDefaults.Check()
	}
	if err != nil {
		r.Status, r.Detail = doctor.Fail, err.Error()
		r.Fix = "correct the file (docs/operation.md, Sandbox defaults)"
	}
	return r
}
