package agent

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// A session is one long-lived shell that runs the commands sent to it, so
// the working directory, variables and functions of one command are there
// for the next. The shell reads a framed protocol on its stdin: each command
// is sent as
//
//	__sbx_run() { eval '<command>' </dev/null; }; __sbx_in=1 __sbx_run; printf '\n%s %d\n' <marker> $? >&8; printf '\n%s 0\n' <marker> >&9
//
// where fds 8 and 9 are the shell's original stdout and stderr (so a command
// that redirects its own output cannot hide the marker) and the marker is
// unique per command. Output up to the marker on each stream is the
// command's; the number after the stdout marker is its exit status. The
// command's stdin is /dev/null so it cannot eat the protocol.
//
// A syntax error would make a non-interactive shell exit, so each command is
// first checked with `<shell> -n -c`.
//
// A timeout stops the whole command line, not just the process running at
// that moment: the shell gets SIGUSR1, whose trap returns from __sbx_run
// (skipping the rest of the list) while __sbx_in is set — it is set only
// for the call, so a late signal at the top level is ignored — and every
// process below the shell is killed. Both repeat until the marker comes
// (one signal unwinds one function level, so a builtin right after a call
// of the user's own function may still run before the next signal). If it
// does not come (the command reset the trap, say) the shell is killed and
// the session's shell has ended; the next command starts a fresh one from
// the session's original cwd and environment.
//
// Running inside a function, a command can use `local`, and its positional
// parameters ($1, set --) are the function's and do not carry over.

// sessionSetup is what a session's shell runs first: keep its own output
// for the markers, and install the interrupt trap (see above).
const sessionSetup = "exec 8>&1 9>&2\n" +
	"trap '[ -n \"${__sbx_in-}\" ] && return 137 2>/dev/null' USR1\n"

// Tunables; variables so tests can shrink them.
var (
	// sessionInterruptGrace is how long the shell has to print its marker
	// after a timeout interrupted its command line.
	sessionInterruptGrace = 2 * time.Second
	// sessionStrayLimit bounds output that arrives between commands (from
	// background jobs); older bytes are dropped.
	sessionStrayLimit = 1 << 20
)

type session struct {
	id      string
	start   *command // how its shell is started, again after it ended
	env     map[string]string
	created time.Time
	nonce   string

	turn chan struct{} // holds a token while a command runs
	cmds sessionCmds   // recorded commands (sessioncmds.go)

	mu       sync.Mutex
	sh       *shellProc // the current shell; replaced (holding turn) once it ended
	deleted  bool       // no shell may start any more
	n        int        // commands sent
	busy     bool
	lastUsed time.Time
}

// shellProc is one run of a session's shell.
type shellProc struct {
	pid      int
	stdin    *os.File
	out      [2]*pipeBuffer // stdout, stderr
	gone     chan struct{}  // closed once the shell has exited
	exitCode int            // the shell's; set before gone is closed
}

// sessionTable is the agent's sessions by id. The zero value is ready.
type sessionTable struct{ idTable[*session] }

func (ss *session) tableKey() (string, time.Time) { return ss.id, ss.created }

// defaultShell is bash when the image has it, else sh.
func defaultShell() string {
	if executable("/bin/bash") == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

func (s *server) createSession(req *wire.CreateSessionRequest) (*session, error) {
	shell := req.Shell
	if shell == "" {
		shell = defaultShell()
	}
	c, err := s.prepare(&wire.ExecRequest{Cmd: []string{shell}, Cwd: req.Cwd, Env: req.Env, TimeoutSeconds: req.TimeoutSeconds, User: req.User})
	if err != nil {
		return nil, err
	}
	t := &s.sessions
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = make(map[string]*session)
	}
	id, err := checkID(req.ID, "sess", func(id string) bool { return t.byID[id] != nil })
	if err != nil {
		return nil, err
	}
	if t.byID[id] != nil {
		return nil, errdefs.Conflict(wire.CodeSessionExists, "session %q exists; delete it first", id)
	}
	sh, err := s.startShell(c)
	if err != nil {
		return nil, err
	}
	var nonce [8]byte
	for i := range nonce {
		nonce[i] = byte(rand.Uint32())
	}
	ss := &session{
		id: id, start: c, env: req.Env, created: time.Now(), sh: sh,
		nonce: hex.EncodeToString(nonce[:]), turn: make(chan struct{}, 1),
	}
	ss.lastUsed = ss.created
	t.byID[id] = ss
	return ss, nil
}

// startShell starts a session shell and sets it up for the protocol.
func (s *server) startShell(c *command) (*shellProc, error) {
	var files [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	var err error
	for i := 0; i < 6; i += 2 {
		if files[i], files[i+1], err = os.Pipe(); err != nil {
			closeAll(files[:i])
			return nil, errdefs.Internal(err, "create pipe")
		}
	}
	proc, err := s.start(c, files[0], files[3], files[5])
	closeAll([]*os.File{files[0], files[3], files[5]})
	if err != nil {
		closeAll([]*os.File{files[1], files[2], files[4]})
		return nil, err
	}
	sh := &shellProc{pid: proc.pid, stdin: files[1], gone: make(chan struct{}),
		out: [2]*pipeBuffer{newPipeBuffer(files[2]), newPipeBuffer(files[4])}}
	go func() {
		ws := <-proc.done
		sh.exitCode, _ = exitOf(ws)
		close(sh.gone)
		sh.stdin.Close()
		s.forgetGroup(proc.pid)
	}()
	if _, err := sh.stdin.WriteString(sessionSetup); err != nil {
		sh.kill()
		return nil, errdefs.Internal(err, "set up the session shell")
	}
	return sh, nil
}

func (sh *shellProc) ended() bool {
	select {
	case <-sh.gone:
		return true
	default:
		return false
	}
}

// kill ends the shell and everything it started.
func (sh *shellProc) kill() {
	killDescendants(sh.pid)
	syscall.Kill(-sh.pid, syscall.SIGKILL)
	select {
	case <-sh.gone:
	case <-time.After(killWait):
	}
}

// interrupt stops the command line the shell is running: the signal first,
// so that the shell, once the process it waits for is killed, returns
// instead of going on with the list.
func (sh *shellProc) interrupt() {
	syscall.Kill(sh.pid, syscall.SIGUSR1)
	killDescendants(sh.pid)
}

func (ss *session) toAPI() wire.Session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := wire.Session{ID: ss.id, Handle: handleOf(ss.id), Shell: ss.start.path, Pid: ss.sh.pid, Env: ss.env, TimeoutSeconds: ss.start.timeout.Seconds(),
		State: wire.SessionIdle, CreatedAt: ss.created, LastUsedAt: ss.lastUsed}
	if ss.busy {
		out.State = wire.SessionBusy
	}
	if ss.sh.ended() {
		code := ss.sh.exitCode
		out.State, out.ExitCode = wire.SessionEnded, &code
	}
	return out
}

// kill ends the session's shell for good.
func (ss *session) kill() {
	ss.mu.Lock()
	ss.deleted = true
	sh := ss.sh
	ss.mu.Unlock()
	sh.kill()
}

// shell returns the session's shell, first starting a fresh one if the
// last has ended (restarted is then true). The caller holds the turn.
func (s *server) shell(ss *session) (sh *shellProc, restarted bool, err error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.sh.ended() {
		return ss.sh, false, nil
	}
	if ss.deleted {
		return nil, false, errdefs.NotFound(wire.CodeSessionNotFound, "session %q was deleted", ss.id)
	}
	// What the old shell left running in the background goes with it: a
	// delete reaches only the current shell's processes.
	syscall.Kill(-ss.sh.pid, syscall.SIGKILL)
	if ss.sh, err = s.startShell(ss.start); err != nil {
		return nil, false, err
	}
	return ss.sh, true, nil
}

// sessionResult is the end of one command.
type sessionResult struct {
	exitCode       int
	timedOut       bool
	sessionEnded   bool
	shellRestarted bool
	duration       time.Duration
}

// runInSession runs one command in the shell and feeds its output to out. Errors
// are returned only when the command did not start.
func (s *server) runInSession(ctx context.Context, ss *session, text string, timeout time.Duration, out execOutput) (sessionResult, error) {
	return s.runInSessionFrom(ctx, ss, text, "/dev/null", timeout, out)
}

// runInSessionFrom is runInSession with the command's stdin read from the
// file at stdin.
func (s *server) runInSessionFrom(ctx context.Context, ss *session, text, stdin string, timeout time.Duration, out execOutput) (sessionResult, error) {
	if text == "" || strings.ContainsRune(text, 0) {
		return sessionResult{}, errdefs.Invalid(wire.CodeInvalidCommand, "command must be non-empty shell text without NUL bytes")
	}
	select {
	case ss.turn <- struct{}{}:
	case <-ctx.Done():
		return sessionResult{}, errdefs.Unavailable(wire.CodeCancelled, "the request was cancelled while waiting for the session")
	}
	defer func() { <-ss.turn }()
	sh, restarted, err := s.shell(ss)
	if err != nil {
		return sessionResult{}, err
	}
	ss.mu.Lock()
	ss.busy = true
	ss.lastUsed = time.Now()
	ss.n++
	marker := fmt.Sprintf("__SBX_%s_%d", ss.nonce, ss.n)
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		ss.busy = false
		ss.lastUsed = time.Now()
		ss.mu.Unlock()
	}()
	begin := time.Now()

	if msg, ok := s.checkSyntax(ctx, ss, text); !ok {
		out.started(sh.pid)
		out.write("stderr", msg)
		return sessionResult{exitCode: 2, shellRestarted: restarted, duration: time.Since(begin)}, nil
	}
	script := "__sbx_run() { eval '" + strings.ReplaceAll(text, "'", `'\''`) + "'" + sessionStdin(stdin) + "; }; __sbx_in=1 __sbx_run; " +
		"printf '\\n%s %d\\n' " + marker + " $? >&8; printf '\\n%s 0\\n' " + marker + " >&9\n"
	sh.stdin.SetWriteDeadline(time.Now().Add(stdinWriteTimeout))
	if _, err := sh.stdin.WriteString(script); err != nil {
		if sh.ended() {
			return sessionResult{}, errdefs.Unavailable(wire.CodeSessionEnded, "the shell of session %q ended before it read the command; send it again", ss.id)
		}
		return sessionResult{}, errdefs.Unavailable(wire.CodeSessionBlocked, "the shell of session %q does not read commands: %v", ss.id, err)
	}
	out.started(sh.pid)

	scan := [2]*markerScanner{{marker: []byte("\n" + marker + " ")}, {marker: []byte("\n" + marker + " ")}}
	streams := [2]string{"stdout", "stderr"}
	var expire, grace <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	done := ctx.Done()
	gone := sh.gone
	var interrupt <-chan time.Time
	stopInterrupt := func() {}
	defer func() { stopInterrupt() }()
	startInterrupt := func() <-chan time.Time {
		t := time.NewTicker(25 * time.Millisecond)
		stopInterrupt = t.Stop
		return t.C
	}
	res := sessionResult{shellRestarted: restarted}
	for {
		var changed [2]<-chan struct{}
		eof := 0
		for i, pb := range sh.out {
			data, atEOF, ch := pb.take(scan[i].done)
			changed[i] = ch
			if atEOF {
				eof++
			}
			if len(data) > 0 && !scan[i].done {
				if p := scan[i].feed(data); len(p) > 0 {
					out.write(streams[i], p)
				}
				if scan[i].done {
					pb.putBack(scan[i].rest)
				}
			}
		}
		if scan[0].done && scan[1].done {
			res.exitCode = scan[0].status
			break
		}
		if eof == 2 || (gone == nil && grace == nil) {
			// The shell is gone and its output is drained (or the grace
			// for that passed), or it closed its output: the session has
			// ended with it. What the scanners held back as a possible
			// marker start was output after all.
			for i := range scan {
				if !scan[i].done && len(scan[i].buf) > 0 {
					out.write(streams[i], scan[i].buf)
				}
			}
			select {
			case <-sh.gone:
			case <-time.After(sessionInterruptGrace):
				syscall.Kill(-sh.pid, syscall.SIGKILL)
				<-sh.gone
			}
			res.exitCode = sh.exitCode
			res.sessionEnded = true
			break
		}
		select {
		case <-changed[0]:
		case <-changed[1]:
		case <-gone:
			gone = nil
			grace = time.After(sessionInterruptGrace)
		case <-expire:
			res.timedOut = true
			expire, done, interrupt = nil, nil, startInterrupt()
			sh.interrupt()
			grace = time.After(sessionInterruptGrace)
		case <-done:
			expire, done, interrupt = nil, nil, startInterrupt()
			sh.interrupt()
			grace = time.After(sessionInterruptGrace)
		case <-interrupt:
			// One signal unwinds one function level, and a process the
			// list started meanwhile must go too: keep on until the marker.
			sh.interrupt()
		case <-grace:
			// The marker did not come: the shell itself is stuck.
			grace = nil
			syscall.Kill(-sh.pid, syscall.SIGKILL)
			<-sh.gone
			gone = nil
		}
	}
	if res.timedOut {
		// Whatever ran after the deadline (the rest of the list, or the
		// shell's own exit) is not the command's status: it was killed.
		res.exitCode = 128 + int(syscall.SIGKILL)
	}
	res.duration = time.Since(begin)
	return res, nil
}

// checkSyntax parses text with the session's shell without running it.
func (s *server) checkSyntax(ctx context.Context, ss *session, text string) ([]byte, bool) {
	c := &command{path: ss.start.path, argv: []string{ss.start.path, "-n", "-c", text}, dir: "/", env: []string{"PATH=" + defaultPath}, timeout: 10 * time.Second}
	out := &collected{stdout: capBuffer{limit: 4096}, stderr: capBuffer{limit: 4096}}
	res, err := s.runExec(ctx, c, out)
	if err != nil || res.ExitCode == 0 {
		return nil, true // a check that cannot run must not block the command
	}
	return out.stderr.Bytes(), false
}

// markerScanner passes output through until the marker line, holding back
// anything that may be the start of it.
type markerScanner struct {
	marker []byte // "\n<marker> "
	buf    []byte
	done   bool
	status int
	rest   []byte // bytes after the marker line
}

// feed takes more output and returns the part that is certainly the
// command's. The result is valid until the next call.
func (m *markerScanner) feed(data []byte) []byte {
	m.buf = append(m.buf, data...)
	if i := bytes.Index(m.buf, m.marker); i >= 0 {
		tail := m.buf[i+len(m.marker):]
		j := bytes.IndexByte(tail, '\n')
		if j < 0 {
			out := m.buf[:i]
			m.buf = append([]byte(nil), m.buf[i:]...)
			return out
		}
		m.status, _ = strconv.Atoi(string(tail[:j]))
		m.done = true
		m.rest = append([]byte(nil), tail[j+1:]...)
		return m.buf[:i]
	}
	// Keep the longest tail that is a prefix of the marker.
	keep := 0
	for k := min(len(m.buf), len(m.marker)-1); k > 0; k-- {
		if bytes.HasPrefix(m.marker, m.buf[len(m.buf)-k:]) {
			keep = k
			break
		}
	}
	out := m.buf[:len(m.buf)-keep]
	m.buf = append([]byte(nil), m.buf[len(m.buf)-keep:]...)
	return out
}

// pipeBuffer reads a pipe all the time, so background jobs of a session
// never block on a full pipe between commands, and hands the bytes to
// whoever runs the current command.
type pipeBuffer struct {
	mu      sync.Mutex
	buf     []byte
	eof     bool
	changed chan struct{}
}

func newPipeBuffer(f *os.File) *pipeBuffer {
	pb := &pipeBuffer{changed: make(chan struct{})}
	go func() {
		defer f.Close()
		b := make([]byte, 32<<10)
		for {
			n, err := f.Read(b)
			pb.mu.Lock()
			pb.buf = append(pb.buf, b[:n]...)
			if over := len(pb.buf) - sessionStrayLimit; over > 0 {
				pb.buf = append(pb.buf[:0], pb.buf[over:]...)
			}
			if err != nil {
				pb.eof = true
			}
			close(pb.changed)
			pb.changed = make(chan struct{})
			pb.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return pb
}

// take returns the buffered bytes (none when hold is set, leaving them for
// the next command), whether the pipe is at its end, and a channel closed
// when that changes.
func (pb *pipeBuffer) take(hold bool) ([]byte, bool, <-chan struct{}) {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	var data []byte
	if !hold {
		data, pb.buf = pb.buf, nil
	}
	return data, pb.eof, pb.changed
}

// putBack returns bytes read past a command's end to the front.
func (pb *pipeBuffer) putBack(b []byte) {
	if len(b) == 0 {
		return
	}
	pb.mu.Lock()
	defer pb.mu.Unlock()
	pb.buf = append(append([]byte(nil), b...), pb.buf...)
}
