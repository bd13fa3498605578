package agent

import (
	"errors"
	"math"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// killWait bounds the wait for processes to vanish after SIGKILL (a process
// stuck in uninterruptible sleep must not keep the agent up forever).
const killWait = 5 * time.Second

func (s *server) handleShutdown(w http.ResponseWriter, r *http.Request) {
	grace := signalGrace
	if v := r.URL.Query().Get("graceSeconds"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || f > 3600 {
			writeError(w, errdefs.Invalid(wire.CodeInvalidGrace, "graceSeconds must be a number of seconds from 0 to 3600, got %q", v))
			return
		}
		grace = time.Duration(f * float64(time.Second))
	}
	select {
	case s.shutdownReq <- grace:
	default: // a shutdown is already under way
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"ok": true})
}

// stopProcesses sends SIGTERM to every process, waits up to grace for them to
// go, then SIGKILLs the rest. As PID 1 that is every other process in the pid
// namespace; otherwise it is the process groups the agent started.
func (s *server) stopProcesses(grace time.Duration) {
	s.mu.Lock()
	s.closing = true
	groups := make([]int, 0, len(s.groups))
	for g := range s.groups {
		groups = append(groups, g)
	}
	s.mu.Unlock()

	pid1 := os.Getpid() == 1
	signalAll := func(sig syscall.Signal) (alive bool) {
		if pid1 {
			// kill(-1) reaches every process we may signal except ourselves;
			// ESRCH means there is none left.
			return !errors.Is(syscall.Kill(-1, sig), syscall.ESRCH)
		}
		for _, g := range groups {
			if !errors.Is(syscall.Kill(-g, sig), syscall.ESRCH) {
				alive = true
			}
		}
		return alive
	}
	waitGone := func(d time.Duration) {
		deadline := time.Now().Add(d)
		for signalAll(0) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if grace > 0 {
		signalAll(syscall.SIGTERM)
		waitGone(grace)
	}
	signalAll(syscall.SIGKILL)
	waitGone(killWait)
}
