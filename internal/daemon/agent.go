package daemon

import (
	"log/slog"
	"os"

	"github.com/sbxhq/sbx/internal/sandbox"
)

// installAgent installs the agent binary new instances run (see
// sandbox.AgentSource) into the data dir and returns the copy's path.
func installAgent(cfg Config) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	src, err := sandbox.AgentSource(cfg.AgentBinary, self, slog.Default())
	if err != nil {
		return "", err
	}
	slog.Info("agent binary", "path", src)
	return sandbox.InstallAgent(cfg.DataDir, src)
}
