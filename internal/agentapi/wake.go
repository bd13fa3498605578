package agentapi

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
)

// Wake makes the suspended agent of the instance with run directory runDir
// listen again (see WakeFile). The directory is writable from inside the
// sandbox: the file is made without following a symlink.
func Wake(runDir string) error {
	fd, err := unix.Open(filepath.Join(runDir, WakeFile), unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	if err != nil {
		return errdefs.Internal(err, "wake agent in %s", runDir)
	}
	return unix.Close(fd)
}
