package daemon

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/sandbox"
)

// classRuntimes returns the runtime of each sandbox class. runsc is
// optional: without it the daemon runs, and creating a sandbox of class
// gvisor fails with a message that says how to install it. agent is the
// static agent binary, which runs runsc's network set-up in its shim
// (runscshim).
//
// runsc is cfg.Runsc if set, else the one scripts/setup.sh installs
// (runtime.BundledRunsc), else Debian's on PATH with a warning.
func classRuntimes(cfg Config, runc runtime.Runtime, agent string) map[string]runtime.Runtime {
	out := map[string]runtime.Runtime{sandbox.ClassContainer: runc}
	// runsc's sandbox and gofer processes are orphaned to this process
	// instead of the host's init, which can be slow to reap them (every
	// `runsc delete` waits for that).
	if err := runtime.StartSubreaper(slog.Default()); err != nil {
		slog.Warn("runsc's processes are left to the host's init to reap (slower pause and stop of class gvisor)", "err", err)
	}
	opts := []runtime.Option{runtime.WithNetnsShim(agent)}
	bin := cfg.Runsc
	if bin == "" {
		found, fallback, err := runtime.FindRunsc()
		if err != nil {
			slog.Warn("class gvisor is not available", "err", err)
			return out
		}
		if fallback {
			slog.Warn("using Debian's runsc: a 2022 gVisor on the ptrace platform, several times slower to start, pause, resume and fork; install the current one with scripts/setup.sh",
				"runsc", found, "preferred", runtime.BundledRunsc)
		}
		bin = found
	}
	opts = append(opts, runtime.WithBinary(bin))
	if cfg.RunscPlatform != "" {
		opts = append(opts, runtime.WithPlatform(cfg.RunscPlatform))
	}
	runsc, err := runtime.NewRunsc(filepath.Join(cfg.DataDir, "runsc"), opts...)
	if err != nil {
		slog.Warn("class gvisor is not available", "err", err)
		return out
	}
	slog.Info("class gvisor", "runsc", runsc.Binary(), "platform", runsc.Platform(), "version", runsc.Version())
	out[sandbox.ClassGVisor] = runsc
	return out
}

// closeRuntimes lets each runtime release what its instances share (runsc's
// pinned null network namespace) when the daemon stops.
func closeRuntimes(runtimes map[string]runtime.Runtime) {
	for class, rt := range runtimes {
		if c, ok := rt.(interface{ Close(context.Context) error }); ok {
			if err := c.Close(context.Background()); err != nil {
				slog.Warn("release shared runtime state", "class", class, "err", err)
			}
		}
	}
}
