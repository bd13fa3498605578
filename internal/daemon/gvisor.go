package daemon

import (
	"log/slog"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/sandbox"
)

// classRuntimes returns the runtime of each sandbox class. runsc is
// optional: without it the daemon runs, and creating a sandbox of class
// gvisor fails with a message that says how to install it. sbx is the
// static sbx binary, which runs runsc's network set-up in its shim
// (runtime.RunscNetnsShim).
func classRuntimes(cfg Config, runc runtime.Runtime, sbx string) map[string]runtime.Runtime {
	out := map[string]runtime.Runtime{sandbox.ClassContainer: runc}
	opts := []runtime.Option{runtime.WithNetnsShim(sbx)}
	if cfg.Runsc != "" {
		opts = append(opts, runtime.WithBinary(cfg.Runsc))
	}
	if cfg.RunscPlatform != "" {
		opts = append(opts, runtime.WithPlatform(cfg.RunscPlatform))
	}
	runsc, err := runtime.NewRunsc(filepath.Join(cfg.DataDir, "runsc"), opts...)
	if err != nil {
		slog.Warn("class gvisor is not available", "err", err)
		return out
	}
	out[sandbox.ClassGVisor] = runsc
	return out
}
