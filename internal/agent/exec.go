package agent

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Tunables; variables so tests can shrink them.
var (
	// outputLimit caps each of stdout and stderr in a non-streamed result.
	outputLimit = 16 << 20
	// exitDrainGrace is how long output is still read after the command
	// exits. A background process that inherited the pipes would otherwise
	// hold the exec open for as long as it lives.
	exitDrainGrace = 2 * time.Second
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// execOutput receives what a running command does. write is called from two
// goroutines at once (one per stream) and must not keep p.
type execOutput interface {
	started(pid int)
	write(stream string, p []byte)
}

// command is a validated ExecRequest, ready to start.
type command struct {
	path    string // resolved executable
	argv    []string
	dir     string
	env     []string
	stdin   string
	timeout time.Duration       // 0: none
	cred    *syscall.Credential // nil: the agent's own (root)
	// stdinStream, when set, is copied to the command's stdin as it
	// comes (exec/attach) instead of stdin; stdinDone is closed when that
	// copy ends.
	stdinStream io.Reader
	stdinDone   chan struct{}
}

// prepare validates req and resolves the executable, cwd and environment.
func (s *server) prepare(req *wire.ExecRequest) (*command, error) {
	if (len(req.Cmd) > 0) == (req.Shell != "") {
		return nil, errdefs.Invalid(wire.CodeInvalidExec, "set exactly one of cmd (argv) and shell (a /bin/sh -c script)")
	}
	c := &command{stdin: req.Stdin, argv: req.Cmd}
	if req.Shell != "" {
		c.argv = []string{"/bin/sh", "-c", req.Shell}
	}
	if c.argv[0] == "" {
		return nil, errdefs.Invalid(wire.CodeInvalidExec, "cmd[0] is empty")
	}
	for _, a := range c.argv {
		if strings.ContainsRune(a, 0) {
			return nil, errdefs.Invalid(wire.CodeInvalidExec, "command arguments must not contain NUL bytes")
		}
	}
	t := req.TimeoutSeconds
	if t < 0 || math.IsNaN(t) || t > 1e8 {
		return nil, errdefs.Invalid(wire.CodeInvalidExec, "timeoutSeconds must be a number of seconds from 0 (none) to 1e8")
	}
	c.timeout = time.Duration(t * float64(time.Second))

	dir := s.cwd
	if req.Cwd != "" {
		var err error
		if dir, err = s.path(req.Cwd); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, errdefs.Invalid(wire.CodeCwdNotFound, "working directory %s does not exist or is not a directory", dir)
	}
	c.dir = dir

	var err error
	base := os.Environ()
	if req.User != "" { // userexec.go
		var home string
		if c.cred, home, err = lookupUser(req.User); err != nil {
			return nil, err
		}
		base = withUserEnv(base, req.User, home)
	}
	if c.env, err = mergeEnv(base, req.Env); err != nil {
		return nil, err
	}
	if c.path, err = lookPath(c.argv[0], c.dir, c.env); err != nil {
		return nil, err
	}
	return c, nil
}

// mergeEnv returns base with extra applied over it; new keys come last, sorted.
func mergeEnv(base []string, extra map[string]string) ([]string, error) {
	for k, v := range extra {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return nil, errdefs.Invalid(wire.CodeInvalidEnv, "bad environment variable %q: names must be non-empty without '=' or NUL, values without NUL", k)
		}
	}
	env := make([]string, 0, len(base)+len(extra))
	seen := make(map[string]bool)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if v, ok := extra[k]; ok {
			kv = k + "=" + v
			seen[k] = true
		}
		env = append(env, kv)
	}
	var added []string
	for k, v := range extra {
		if !seen[k] {
			added = append(added, k+"="+v)
		}
	}
	slices.Sort(added)
	return append(env, added...), nil
}

// lookPath finds name the way a shell would, using the command's own PATH.
func lookPath(name, dir string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", errdefs.Invalid(wire.CodeCommandNotFound, "command %q: %v", name, err)
		}
		return p, nil
	}
	path := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", errdefs.Invalid(wire.CodeCommandNotFound, "command %q not found in PATH %s", name, path)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return errors.New("no such file")
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Mode()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}

// runExec starts c, feeds its output to out and returns once it has exited
// and its output is drained. A timeout or a cancelled ctx kills the whole
// process group. Errors are returned only for failures before the start.
func (s *server) runExec(ctx context.Context, c *command, out execOutput) (wire.ExecResult, error) {
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return wire.ExecResult{}, errdefs.Internal(err, "create pipe")
	}
	defer stdoutR.Close()
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		stdoutW.Close()
		return wire.ExecResult{}, errdefs.Internal(err, "create pipe")
	}
	defer stderrR.Close()
	var stdinR, stdinW *os.File
	if c.stdin != "" || c.stdinStream != nil {
		stdinR, stdinW, err = os.Pipe()
	} else {
		stdinR, err = os.Open(os.DevNull)
	}
	if err != nil {
		stdoutW.Close()
		stderrW.Close()
		return wire.ExecResult{}, errdefs.Internal(err, "open stdin")
	}
	if stdinW != nil {
		defer stdinW.Close() // unblocks the writer if nobody reads stdin
	}

	proc, err := s.start(c, stdinR, stdoutW, stderrW)
	// The child has its own copies; ours must go so EOF can happen.
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	if err != nil {
		return wire.ExecResult{}, err
	}
	defer s.forgetGroup(proc.pid)
	begin := time.Now()
	out.started(proc.pid)

	if stdinW != nil {
		go func() {
			if c.stdinStream != nil {
				io.Copy(stdinW, c.stdinStream) // ends at the client's EOF, or when the request ends
				close(c.stdinDone)
			} else {
				io.WriteString(stdinW, c.stdin) // EPIPE if the command does not read it all: fine
			}
			stdinW.Close()
		}()
	}
	var readers sync.WaitGroup
	for stream, r := range map[string]*os.File{"stdout": stdoutR, "stderr": stderrR} {
		readers.Go(func() { pump(r, stream, out) })
	}
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()

	var timeout <-chan time.Time
	if c.timeout > 0 {
		t := time.NewTimer(c.timeout)
		defer t.Stop()
		timeout = t.C
	}
	var ws syscall.WaitStatus
	timedOut := false
	select {
	case ws = <-proc.done:
	case <-timeout:
		timedOut = true
		syscall.Kill(-proc.pid, syscall.SIGKILL)
		ws = <-proc.done
	case <-ctx.Done():
		syscall.Kill(-proc.pid, syscall.SIGKILL)
		ws = <-proc.done
	}

	grace := time.NewTimer(exitDrainGrace)
	defer grace.Stop()
	select {
	case <-drained:
	case <-grace.C:
	case <-ctx.Done():
	}
	// Closing the read ends ends the readers even if a background process
	// still holds the write ends.
	stdoutR.Close()
	stderrR.Close()
	<-drained

	res := wire.ExecResult{TimedOut: timedOut, DurationMs: time.Since(begin).Milliseconds()}
	res.ExitCode, res.Signal = exitOf(ws)
	return res, nil
}

// start forks the command into its own process group and records the group
// for shutdown. It holds s.mu so a shutdown cannot miss a process.
func (s *server) start(c *command, stdin, stdout, stderr *os.File) (*child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, errdefs.Unavailable(wire.CodeShuttingDown, "the agent is shutting down")
	}
	proc, err := startChild(c.path, c.argv, &syscall.ProcAttr{
		Dir:   c.dir,
		Env:   c.env,
		Files: []uintptr{stdin.Fd(), stdout.Fd(), stderr.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Credential: c.cred},
	})
	if err != nil {
		return nil, startError(c.argv[0], err)
	}
	s.groups[proc.pid] = struct{}{}
	return proc, nil
}

// forgetGroup drops a finished command's process group unless background
// processes still live in it; those are found again at shutdown.
func (s *server) forgetGroup(pgid int) {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		s.mu.Lock()
		delete(s.groups, pgid)
		s.mu.Unlock()
	}
}

func startError(name string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOENT):
		return errdefs.Invalid(wire.CodeCommandNotFound, "cannot run %q: no such file (missing script interpreter?)", name)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EPERM):
		return errdefs.Invalid(wire.CodeCommandNotExecutable, "cannot run %q: %v", name, err)
	case errors.Is(err, syscall.E2BIG):
		return errdefs.Invalid(wire.CodeInvalidExec, "arguments and environment are too long")
	case errors.Is(err, syscall.EAGAIN):
		return errdefs.Unavailable(wire.CodeProcessLimit, "cannot start a process: process limit reached")
	}
	return errdefs.Internal(err, "start %q", name)
}

// Output buffers start small and grow when a read fills them: most
// commands write little, and a background process or terminal that sits
// idle holds its buffers as long as it lives (tune.go).
const (
	pumpMinBuf = 4 << 10
	pumpMaxBuf = 32 << 10
)

func pump(r *os.File, stream string, out execOutput) {
	buf := make([]byte, pumpMinBuf)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			out.write(stream, buf[:n])
		}
		if n == len(buf) && len(buf) < pumpMaxBuf {
			buf = make([]byte, 2*len(buf))
		}
		if err != nil {
			return
		}
	}
}

// exitOf reports a wait status the way a shell does: 128+n for signal n.
func exitOf(ws syscall.WaitStatus) (code int, signal string) {
	if ws.Signaled() {
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	return ws.ExitStatus(), ""
}
