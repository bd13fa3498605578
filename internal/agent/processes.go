package agent

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Background processes outlive the request that started them: they are
// tied to no request context, only to the agent. Each runs in its own
// process group (signals reach its children too), with stdin on a pipe the
// client can write and close, and its output in a bounded outputLog.

// Tunables; variables so tests can shrink them.
var (
	// processLogLimit bounds the retained output of one process.
	processLogLimit = 4 << 20
	// keepExited is how many exited processes stay listed; the oldest
	// beyond that are forgotten when a new one starts.
	keepExited = 64
	// stdinWriteTimeout bounds a stdin write to a process that does not read.
	stdinWriteTimeout = 30 * time.Second
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// checkID validates a caller-chosen id, or makes one with prefix.
func checkID(id, prefix string, taken func(string) bool) (string, error) {
	if id == "" {
		for {
			id = fmt.Sprintf("%s-%08x", prefix, rand.Uint32())
			if !taken(id) {
				return id, nil
			}
		}
	}
	if !idPattern.MatchString(id) {
		return "", errdefs.Invalid(wire.CodeInvalidID, "id %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return id, nil
}

type process struct {
	id      string
	argv    []string
	cwd     string
	pid     int
	started time.Time
	out     *outputLog
	exited  chan struct{} // closed once the exit status is known and the output complete

	stdinMu sync.Mutex
	stdin   *os.File // nil once closed

	mu       sync.Mutex
	ended    time.Time
	exitCode int
	signal   string
	timedOut bool
}

// processTable is the agent's background processes by id. The zero value
// is ready to use.
type processTable struct{ idTable[*process] }

func (p *process) tableKey() (string, time.Time) { return p.id, p.started }

// startProcess starts req in the background and adds it to the table.
func (s *server) startProcess(req *wire.StartProcessRequest) (*process, error) {
	c, err := s.prepare(&wire.ExecRequest{Cmd: req.Cmd, Shell: req.Shell, Cwd: req.Cwd, Env: req.Env, TimeoutSeconds: req.TimeoutSeconds, User: req.User})
	if err != nil {
		return nil, err
	}
	t := &s.procs
	// The table stays locked across the fork, so two starts cannot both
	// claim one id.
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = make(map[string]*process)
	}
	id, err := checkID(req.ID, "proc", func(id string) bool { return t.byID[id] != nil })
	if err != nil {
		return nil, err
	}
	if old := t.byID[id]; old != nil && !old.hasExited() {
		return nil, errdefs.Conflict(wire.CodeProcessExists, "process %q is still running; signal or delete it first", id)
	}

	var files [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < 6; i += 2 {
		if files[i], files[i+1], err = os.Pipe(); err != nil {
			closeAll(files[:i])
			return nil, errdefs.Internal(err, "create pipe")
		}
	}
	proc, err := s.start(c, files[0], files[3], files[5])
	closeAll([]*os.File{files[0], files[3], files[5]}) // the child has its own copies
	if err != nil {
		closeAll([]*os.File{files[1], files[2], files[4]})
		return nil, err
	}
	p := &process{
		id: id, argv: c.argv, cwd: c.dir, pid: proc.pid, started: time.Now(),
		out: newOutputLog(processLogLimit), exited: make(chan struct{}), stdin: files[1],
	}
	go s.superviseProcess(p, proc, c.timeout, files[2], files[4])
	t.byID[id] = p
	t.evictExited()
	return p, nil
}

// evictExited forgets the oldest exited processes beyond keepExited.
func (t *processTable) evictExited() {
	var exited []*process
	for _, p := range t.byID {
		if p.hasExited() {
			exited = append(exited, p)
		}
	}
	if len(exited) <= keepExited {
		return
	}
	slices.SortFunc(exited, func(a, b *process) int { return a.endedAt().Compare(b.endedAt()) })
	for _, p := range exited[:len(exited)-keepExited] {
		delete(t.byID, p.id)
	}
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// superviseProcess collects the output and the exit status of p.
func (s *server) superviseProcess(p *process, proc *child, timeout time.Duration, stdout, stderr *os.File) {
	defer s.forgetGroup(p.pid)
	var readers sync.WaitGroup
	readers.Go(func() { pump(stdout, "stdout", p.out) })
	readers.Go(func() { pump(stderr, "stderr", p.out) })
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()

	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	var ws syscall.WaitStatus
	timedOut := false
	select {
	case ws = <-proc.done:
	case <-expire:
		timedOut = true
		syscall.Kill(-p.pid, syscall.SIGKILL)
		ws = <-proc.done
	}
	code, sig := exitOf(ws)
	p.mu.Lock()
	p.ended, p.exitCode, p.signal, p.timedOut = time.Now(), code, sig, timedOut
	p.mu.Unlock()

	// As for exec: output still in the pipes is read, but children that
	// inherited them do not keep the log open for as long as they live.
	// The process counts as exited once its output is complete, so that a
	// wait followed by a read of the logs sees all of it.
	grace := time.NewTimer(exitDrainGrace)
	defer grace.Stop()
	select {
	case <-drained:
	case <-grace.C:
	}
	stdout.Close()
	stderr.Close()
	<-drained
	p.out.close()
	p.closeStdin() // before exited: a wait must not see stdinOpen after the exit
	close(p.exited)
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *process) endedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

func (p *process) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin != nil {
		p.stdin.Close()
		p.stdin = nil
	}
}

func (p *process) toAPI() wire.Process {
	out := wire.Process{
		ID: p.id, Handle: handleOf(p.id), Pid: p.pid, Cmd: p.argv, Cwd: p.cwd, State: wire.ProcessRunning,
		StartedAt: p.started, LastSeq: p.out.last(),
	}
	if p.hasExited() {
		p.mu.Lock()
		code, ended := p.exitCode, p.ended
		out.State, out.ExitCode, out.Signal, out.TimedOut, out.EndedAt = wire.ProcessExited, &code, p.signal, p.timedOut, &ended
		p.mu.Unlock()
	}
	p.stdinMu.Lock()
	out.StdinOpen = p.stdin != nil
	p.stdinMu.Unlock()
	return out
}

// kill SIGKILLs the process group and waits (bounded) for the leader's exit.
func (p *process) kill() {
	syscall.Kill(-p.pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(killWait):
	}
}

// parseSignal accepts "TERM", "SIGTERM", "term" or "15"; "" is SIGTERM.
func parseSignal(v string) (syscall.Signal, error) {
	if v == "" {
		return syscall.SIGTERM, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 || n > 64 {
			return 0, errdefs.Invalid(wire.CodeInvalidSignal, "signal number %d is out of range 1-64", n)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(v)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, errdefs.Invalid(wire.CodeInvalidSignal, "unknown signal %q: use a name such as TERM, KILL, INT or HUP, or a number", v)
}
