package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// A sandbox may have a main process (its entrypoint, e.g. a dev server)
// that the agent starts and supervises. The daemon passes it in the agent's
// environment (MainEnv, removed before anything else starts, so no command
// inherits it). Its stdout and stderr go, together, to MainLogFile in the
// run directory, which is on the host: the log outlives the instance.
//
// When it exits and its restart policy does not restart it, the agent writes
// MainExitFile next to the log and shuts down (SIGTERM to everything, the
// grace period, SIGKILL), which ends the instance; the daemon reads the
// marker and records the stop with reason "main-exit".

// The names shared with the daemon are in internal/agentapi/mainproc.go.

// Tunables; variables so tests can shrink them.
var (
	// mainLogMax is the size at which main.log is rotated to main.log.1, so
	// the log takes at most twice this on the host.
	mainLogMax int64 = 8 << 20
	// mainRestartMax bounds the wait between restarts, which doubles from
	// one second while the process keeps failing within a minute.
	mainRestartMax = 30 * time.Second
	// logTimeEvery is how far apart the write times kept beside main.log
	// are at least: writes closer together share the first one's record.
	logTimeEvery = time.Millisecond
)

// startMain starts supervising the main process named in the environment,
// if any. runDir is where the log and the exit marker go.
func (s *server) startMain(runDir string) {
	v, ok := os.LookupEnv(agentapi.MainEnv)
	if !ok {
		return
	}
	os.Unsetenv(agentapi.MainEnv)
	var spec agentapi.MainSpec
	if err := json.Unmarshal([]byte(v), &spec); err != nil || len(spec.Cmd) == 0 {
		logf("ignoring malformed %s: %v", agentapi.MainEnv, err)
		return
	}
	go s.superviseMain(spec, runDir)
}

func (s *server) superviseMain(spec agentapi.MainSpec, runDir string) {
	log := &rotatingLog{path: filepath.Join(runDir, agentapi.MainLogFile), max: mainLogMax}
	defer log.Close()
	wait := time.Second
	for restarts := 0; ; restarts++ {
		began := time.Now()
		ws, err := s.runMain(spec, log)
		if s.isClosing() {
			return // the shutdown ended it: not the main process's doing
		}
		var ex agentapi.MainExit
		if err != nil {
			fmt.Fprintf(log, "[sbx] cannot start the main process: %v\n", err)
			ex.ExitCode = 127
		} else {
			ex.ExitCode, ex.Signal = exitOf(ws)
		}
		ex.Restarts = restarts
		restart := spec.Restart == wire.RestartAlways || (spec.Restart == wire.RestartOnFailure && ex.ExitCode != 0)
		if !restart {
			fmt.Fprintf(log, "[sbx] the main process %s; stopping the sandbox\n", ex.Describe())
			s.mainExited(ex, runDir)
			return
		}
		if time.Since(began) > time.Minute {
			wait = time.Second
		}
		fmt.Fprintf(log, "[sbx] the main process %s; restarting in %s\n", agentapi.MainExit{ExitCode: ex.ExitCode, Signal: ex.Signal}.Describe(), wait)
		time.Sleep(wait)
		wait = min(2*wait, mainRestartMax)
	}
}

// runMain runs the main process once and returns its wait status.
func (s *server) runMain(spec agentapi.MainSpec, log io.Writer) (syscall.WaitStatus, error) {
	c, err := s.prepare(&wire.ExecRequest{Cmd: spec.Cmd})
	if err != nil {
		return 0, err
	}
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return 0, err
	}
	defer r.Close()
	proc, err := s.start(c, stdin, w, w) // one pipe for both keeps their order
	stdin.Close()
	w.Close()
	if err != nil {
		return 0, err
	}
	defer s.forgetGroup(proc.pid)
	copied := make(chan struct{})
	go func() { io.Copy(log, r); close(copied) }()
	ws := <-proc.done
	// Background children may hold the pipe open; read what is there, then stop.
	select {
	case <-copied:
	case <-time.After(exitDrainGrace):
		r.Close()
		<-copied
	}
	return ws, nil
}

// mainState remembers whether the daemon has seen this agent answer.
type mainState struct {
	once   sync.Once
	health chan struct{} // closed at the first health check
	mu     sync.Mutex
}

func (m *mainState) healthChan() chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.health == nil {
		m.health = make(chan struct{})
	}
	return m.health
}

func (m *mainState) seen() {
	ch := m.healthChan()
	m.once.Do(func() { close(ch) })
}

// seenWait bounds how long an exited main process keeps the agent up for
// the daemon's first health check.
var seenWait = time.Minute

// mainExited leaves the exit marker and shuts the agent down, but not
// before the daemon has seen the agent answer: a main process that exits at
// once would otherwise end the instance while the daemon still waits for
// it to come up, and its start would fail instead of stopping with
// "main-exit".
func (s *server) mainExited(ex agentapi.MainExit, runDir string) {
	select {
	case <-s.main.healthChan():
	case <-time.After(seenWait):
	}
	b, _ := json.Marshal(ex)
	p := filepath.Join(runDir, agentapi.MainExitFile)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err == nil {
		err = os.Rename(tmp, p)
		if err != nil {
			logf("write exit marker: %v", err)
		}
	}
	select {
	case s.shutdownReq <- signalGrace:
	default: // a shutdown is already under way
	}
}

func (s *server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// rotatingLog appends to path and, when it would grow past max, moves it
// to path.1 (replacing the older one) and starts afresh. Beside it it keeps
// when the writes happened (agentapi.LogTimesSuffix), which is rotated with
// it, and also when it reaches max/32: many tiny writes must not fill the
// run directory (internal/runtime/rundir.go) with records.
type rotatingLog struct {
	path string
	max  int64

	mu        sync.Mutex
	f         *os.File
	times     *os.File // path + agentapi.LogTimesSuffix
	size      int64
	timesSize int64
	lastTime  time.Time // of the newest record
}

func (l *rotatingLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil && (l.size+int64(len(p)) > l.max && l.size > 0 || l.max >= 32 && l.timesSize >= l.max/32) {
		l.closeFiles()
		os.Rename(l.path, l.path+".1")
		os.Rename(l.path+agentapi.LogTimesSuffix, l.path+".1"+agentapi.LogTimesSuffix)
	}
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return 0, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return 0, err
		}
		times, err := os.OpenFile(l.path+agentapi.LogTimesSuffix, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			f.Close()
			return 0, err
		}
		ti, err := times.Stat()
		if err != nil {
			f.Close()
			times.Close()
			return 0, err
		}
		l.f, l.times, l.size, l.timesSize, l.lastTime = f, times, fi.Size(), ti.Size(), time.Time{}
	}
	// The record goes first, so every byte in the log has one.
	if now := time.Now(); l.lastTime.IsZero() || now.Sub(l.lastTime) >= logTimeEvery {
		if err := agentapi.AppendLogTime(l.times, agentapi.LogTime{Offset: l.size, Time: now}); err != nil {
			return 0, err
		}
		l.timesSize += agentapi.LogTimeSize
		l.lastTime = now
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

func (l *rotatingLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.closeFiles()
}

func (l *rotatingLog) closeFiles() error {
	err := l.f.Close()
	l.times.Close()
	l.f, l.times = nil, nil
	return err
}
