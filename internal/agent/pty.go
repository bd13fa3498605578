package agent

import (
	"errors"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// A terminal is a pseudo-terminal whose program (a shell by default) is the
// leader of its own session with the terminal as controlling tty, so job
// control, Ctrl-C and window sizes work as on a real terminal. Its output
// goes to a small outputLog that attached clients follow and that a client
// attaching later gets replayed. It runs until its program exits or it is
// deleted; clients come and go.

// ptyReplayLimit is how much recent output a terminal keeps for replay.
var ptyReplayLimit = 64 << 10

const maxTermSize = 1000

type terminal struct {
	id      string
	argv    []string
	cwd     string
	pid     int
	created time.Time
	master  *os.File
	out     *outputLog
	exited  chan struct{} // closed once the exit status is known

	writeMu sync.Mutex // also guards master against use after close
	closed  bool

	mu       sync.Mutex
	cols     int
	rows     int
	attached int
	ended    time.Time
	exitCode int
	signal   string
}

// ptyTable is the agent's terminals by id. The zero value is ready.
type ptyTable struct{ idTable[*terminal] }

func (term *terminal) tableKey() (string, time.Time) { return term.id, term.created }

func checkSize(cols, rows int) error {
	if cols < 1 || rows < 1 || cols > maxTermSize || rows > maxTermSize {
		return errdefs.Invalid(wire.CodeInvalidSize, "cols and rows must be 1-%d, got %dx%d", maxTermSize, cols, rows)
	}
	return nil
}

func (s *server) createPTY(req *wire.CreatePTYRequest) (*terminal, error) {
	cols, rows := req.Cols, req.Rows
	if cols == 0 {
		cols = 80
	}
	if rows == 0 {
		rows = 24
	}
	if err := checkSize(cols, rows); err != nil {
		return nil, err
	}
	argv := req.Cmd
	if len(argv) == 0 {
		argv = []string{defaultShell()}
	}
	env := maps.Clone(req.Env)
	if _, ok := env["TERM"]; !ok {
		if env == nil {
			env = map[string]string{}
		}
		env["TERM"] = "xterm-256color"
	}
	c, err := s.prepare(&wire.ExecRequest{Cmd: argv, Cwd: req.Cwd, Env: env, User: req.User})
	if err != nil {
		return nil, err
	}
	t := &s.ptys
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = make(map[string]*terminal)
	}
	id, err := checkID(req.ID, "pty", func(id string) bool { return t.byID[id] != nil })
	if err != nil {
		return nil, err
	}
	if old := t.byID[id]; old != nil && !old.hasExited() {
		return nil, errdefs.Conflict(wire.CodePTYExists, "terminal %q is still running; delete it first", id)
	}

	master, tty, err := openPTY()
	if err != nil {
		return nil, err
	}
	if err := setWinsize(master, cols, rows); err != nil {
		master.Close()
		tty.Close()
		return nil, errdefs.Internal(err, "set terminal size")
	}
	if c.cred != nil { // the terminal is its program's, as login makes it
		if err := tty.Chown(int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			master.Close()
			tty.Close()
			return nil, errdefs.Internal(err, "hand the terminal over")
		}
	}
	proc, err := s.startOnTerminal(c, tty)
	tty.Close() // the program has its own; the last close makes reads end with EIO
	if err != nil {
		master.Close()
		return nil, err
	}
	term := &terminal{
		id: id, argv: c.argv, cwd: c.dir, pid: proc.pid, created: time.Now(), master: master,
		out: newOutputLog(ptyReplayLimit), exited: make(chan struct{}), cols: cols, rows: rows,
	}
	go s.superviseTerminal(term, proc)
	t.byID[id] = term
	var exited []*terminal
	for _, o := range t.byID {
		if o.hasExited() {
			exited = append(exited, o)
		}
	}
	if len(exited) > keepExited {
		slices.SortFunc(exited, func(a, b *terminal) int { return a.created.Compare(b.created) })
		for _, o := range exited[:len(exited)-keepExited] {
			delete(t.byID, o.id)
		}
	}
	return term, nil
}

// openPTY allocates a pseudo-terminal pair. The master is non-blocking, so
// closing it ends a pending read.
func openPTY() (master, tty *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, errdefs.Unavailable(wire.CodePTYUnavailable, "open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		return nil, nil, errdefs.Internal(err, "unlock pty")
	}
	// TIOCGPTPEER opens the other end by the master, not by a path that
	// could name a different devpts instance.
	sfd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
		if err != nil {
			unix.Close(fd)
			return nil, nil, errdefs.Internal(err, "get pty number")
		}
		s, err := unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(fd)
			return nil, nil, errdefs.Internal(err, "open pty %d", n)
		}
		sfd = uintptr(s)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), os.NewFile(sfd, "pty"), nil
}

// setWinsize sets the terminal size. It goes through SyscallConn because
// File.Fd would switch the master back to blocking mode.
func setWinsize(master *os.File, cols, rows int) error {
	rc, err := master.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	err = rc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
	return errors.Join(err, ierr)
}

// startOnTerminal forks c as the leader of a new session whose controlling
// terminal is tty, and records its group for shutdown.
func (s *server) startOnTerminal(c *command, tty *os.File) (*child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, errdefs.Unavailable(wire.CodeShuttingDown, "the agent is shutting down")
	}
	fd := tty.Fd()
	proc, err := startChild(c.path, c.argv, &syscall.ProcAttr{
		Dir:   c.dir,
		Env:   c.env,
		Files: []uintptr{fd, fd, fd},
		Sys:   &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: c.cred},
	})
	if err != nil {
		return nil, startError(c.argv[0], err)
	}
	s.groups[proc.pid] = struct{}{}
	return proc, nil
}

func (s *server) superviseTerminal(term *terminal, proc *child) {
	defer s.forgetGroup(term.pid)
	drained := make(chan struct{})
	go func() {
		pump(term.master, "pty", term.out) // ends with EIO once no one holds the tty
		close(drained)
	}()
	ws := <-proc.done
	code, sig := exitOf(ws)
	term.mu.Lock()
	term.ended, term.exitCode, term.signal = time.Now(), code, sig
	term.mu.Unlock()
	close(term.exited)

	grace := time.NewTimer(exitDrainGrace)
	defer grace.Stop()
	select {
	case <-drained:
	case <-grace.C:
	}
	term.writeMu.Lock()
	term.closed = true
	term.master.Close()
	term.writeMu.Unlock()
	<-drained
	term.out.close()
}

func (term *terminal) hasExited() bool {
	select {
	case <-term.exited:
		return true
	default:
		return false
	}
}

// input writes keystrokes to the terminal.
func (term *terminal) input(b []byte) error {
	term.writeMu.Lock()
	defer term.writeMu.Unlock()
	if term.closed {
		return os.ErrClosed
	}
	_, err := term.master.Write(b)
	return err
}

func (term *terminal) resize(cols, rows int) error {
	if err := checkSize(cols, rows); err != nil {
		return err
	}
	term.writeMu.Lock()
	defer term.writeMu.Unlock()
	if term.closed {
		return errdefs.Conflict(wire.CodeProcessExited, "the program of terminal %q has exited", term.id)
	}
	if err := setWinsize(term.master, cols, rows); err != nil {
		return errdefs.Internal(err, "set terminal size")
	}
	term.mu.Lock()
	term.cols, term.rows = cols, rows
	term.mu.Unlock()
	return nil
}

// kill SIGKILLs every process of the terminal's session.
func (term *terminal) kill() {
	killSession(term.pid)
	select {
	case <-term.exited:
	case <-time.After(killWait):
	}
}

func (term *terminal) toAPI() wire.PTY {
	term.mu.Lock()
	defer term.mu.Unlock()
	out := wire.PTY{ID: term.id, Handle: handleOf(term.id), Pid: term.pid, Cmd: term.argv, Cwd: term.cwd, Cols: term.cols, Rows: term.rows,
		State: wire.ProcessRunning, Attached: term.attached, CreatedAt: term.created}
	if term.hasExited() {
		code, ended := term.exitCode, term.ended
		out.State, out.ExitCode, out.Signal, out.EndedAt = wire.ProcessExited, &code, term.signal, &ended
	}
	return out
}
