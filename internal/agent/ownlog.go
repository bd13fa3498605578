package agent

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/agentapi"
)

// The agent's own output (its log lines, and a Go panic's trace) goes to
// OutputLogFile in the run directory, rotated once at outputLogMax. runc
// starts the agent with a host file (the instance log) as stdout and stderr;
// that file has no cap and is outside the sandbox's disk limit, so the agent
// keeps it only for what it says before redirectOutput (issue 13.2). The run
// directory is a size-capped tmpfs (runtime.RunDirMiB), so even code inside
// writing to the file directly cannot take more than the cap.
//
// The descriptors are files, not a pipe to a reader goroutine, so a fatal
// error's trace still lands in the log as the process dies.

// OutputLogFile is the agent's log in the run directory; rotated to ".1".
const OutputLogFile = agentapi.AgentOutput

// outputLogMax is the size at which the agent's log is rotated; a variable so
// tests can shrink it.
var outputLogMax int64 = 1 << 20

// outputFDs are the descriptors the log file is made; tests point them
// elsewhere.
var outputFDs = []int{1, 2}

// redirectOutput points stdout and stderr at the log in runDir, and the
// agent's log lines through a writer that rotates it. Only PID 1 does it:
// the agent run by tests in a host process keeps that process's output.
func redirectOutput(runDir string) error {
	if os.Getpid() != 1 {
		return nil
	}
	path := filepath.Join(runDir, OutputLogFile)
	if err := pointOutputAt(path); err != nil {
		return err
	}
	log.SetOutput(&logOutput{path: path}) // slog's default handler writes through it
	return nil
}

// logOutput writes log lines to the log file and rotates it when a line
// takes it past outputLogMax. Rotating on write, not on a timer, lets an
// idle agent sleep: a ticker woke every idle sandbox each second, and made
// it look busy to the dashboard's sampler (internal/ui/history.go).
type logOutput struct {
	mu   sync.Mutex
	path string
}

func (o *logOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fd := outputFDs[len(outputFDs)-1]
	n, err := unix.Write(fd, p)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Size >= outputLogMax {
		if err := os.Rename(o.path, o.path+".1"); err != nil {
			// Code inside removed or replaced it: start afresh all the same.
			os.Remove(o.path)
		}
		pointOutputAt(o.path)
	}
	return n, err
}

// pointOutputAt opens path and makes it the process's stdout and stderr.
// Code inside can plant anything there: a link is not followed, a fifo does
// not block the open, and only a regular file is taken.
func pointOutputAt(path string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("open agent log: %w", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("agent log %s is not a regular file", path)
	}
	for _, target := range outputFDs {
		if err := unix.Dup3(fd, target, 0); err != nil {
			return fmt.Errorf("redirect agent output: %w", err)
		}
	}
	return nil
}
