package daemon

import (
	"log/slog"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/sandbox"
)

// classRuntimes returns the runtime of each sandbox class. runsc is
// optional: without it the daemon runs, and creating a sandbox of class
// gvisor fails with a message that says how to install it.
func classRuntimes(dataDir string, runc runtime.Runtime) map[string]runtime.Runtime {
	out := map[string]runtime.Runtime{sandbox.ClassContainer: runc}
	runsc, err := runtime.NewRunsc(filepath.Join(dataDir, "runsc"))
	if err != nil {
		slog.Warn("class gvisor is not available", "err", err)
		return out
	}
	out[sandbox.ClassGVisor] = runsc
	return out
}
