package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Code contexts: a long-lived interpreter per context, started and reaped by
// the agent like any process, whose driver program (languages.go, drivers/)
// speaks a line protocol on fds 3 (requests) and 4 (frames), apart from the
// user's stdout and stderr on fds 1 and 2. Contexts live in the agent's
// memory only: when the instance stops they are gone, and a run or lookup
// then answers CONTEXT_NOT_FOUND. (A gVisor pause keeps the whole process
// tree, contexts included.)

// Tunables; variables so tests can shrink them.
var (
	defaultContextIdle = 24 * time.Hour
	// contextStartTimeout bounds the wait for a new interpreter's "ready".
	contextStartTimeout = 30 * time.Second
	// interruptGrace is how long an interrupted run may take to stop after
	// SIGINT before the interpreter is killed (and the context with it).
	interruptGrace = 5 * time.Second
	// interruptRepeat re-sends SIGINT while a python or javascript run has
	// not stopped: one that lands between two runs is ignored by the driver.
	interruptRepeat = 250 * time.Millisecond
)

// maxIdleSeconds bounds contextIdleSeconds (about three years).
const maxIdleSeconds = 1e8

// contextSet is the agent's live contexts. The zero value is ready to use.
type contextSet struct {
	mu sync.Mutex
	m  map[string]*codeContext
}

func (cs *contextSet) add(c *codeContext) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = make(map[string]*codeContext)
	}
	cs.m[c.id] = c
}

func (cs *contextSet) remove(id string) {
	cs.mu.Lock()
	delete(cs.m, id)
	cs.mu.Unlock()
}

// get returns a live context or CONTEXT_NOT_FOUND.
func (cs *contextSet) get(id string) (*codeContext, error) {
	cs.mu.Lock()
	c := cs.m[id]
	cs.mu.Unlock()
	if c == nil || c.isDead() {
		return nil, contextNotFound(id)
	}
	return c, nil
}

func (cs *contextSet) list() []*codeContext {
	cs.mu.Lock()
	var out []*codeContext
	for _, c := range cs.m {
		if !c.isDead() {
			out = append(out, c)
		}
	}
	cs.mu.Unlock()
	slices.SortFunc(out, func(a, b *codeContext) int {
		if d := a.created.Compare(b.created); d != 0 {
			return d
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

func contextNotFound(id string) error {
	return errdefs.NotFound(wire.CodeContextNotFound,
		"context %q does not exist: it was deleted, it expired, its interpreter exited, or the sandbox's instance was stopped since it was created", id)
}

// codeContext is one interpreter.
type codeContext struct {
	id      string
	lang    *language
	cwd     string
	idle    time.Duration // 0: never expires
	created time.Time

	proc           *child
	reqW           *os.File // requests: the driver's fd 3, or bash's stdin
	framesR        *os.File
	stdout, stderr *outPump
	ready          chan struct{} // closed on the driver's "ready" frame

	sem  chan struct{} // held by the run in progress
	dead chan struct{} // closed when the interpreter has exited
	exit syscall.WaitStatus

	mu        sync.Mutex
	seq       int64
	cur       *activeRun // the run frames go to
	running   bool
	lastUsed  time.Time
	idleTimer *time.Timer
	onGone    func()       // removes the context from its set
	spec      *contextSpec // what it was started with: a restart starts it again
}

// newContextID returns "ctx-" and 16 random hex digits.
func newContextID() string {
	var b [8]byte
	rand.Read(b[:])
	return "ctx-" + hex.EncodeToString(b[:])
}

// contextSpec is a validated request for an interpreter.
type contextSpec struct {
	id   string // "" for a new one (newContextID)
	lang *language
	bin  string
	dir  string
	env  []string
	idle time.Duration
}

// prepareContext validates the language, working directory and environment.
func (s *server) prepareContext(langName, cwd string, env map[string]string, idleSeconds *int) (*contextSpec, error) {
	dir := s.cwd
	if cwd != "" {
		var err error
		if dir, err = s.path(cwd); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, errdefs.Invalid(wire.CodeCwdNotFound, "working directory %s does not exist or is not a directory", dir)
	}
	merged, err := mergeEnv(os.Environ(), env)
	if err != nil {
		return nil, err
	}
	lang, bin, err := lookupLanguage(langName, true, dir, merged)
	if err != nil {
		return nil, err
	}
	for _, kv := range lang.env {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := env[k]; !set {
			merged = append(merged, kv)
		}
	}
	idle := defaultContextIdle
	if idleSeconds != nil {
		if *idleSeconds < 0 || *idleSeconds > maxIdleSeconds {
			return nil, errdefs.Invalid(wire.CodeInvalidIdle, "contextIdleSeconds must be from 0 (never expire) to %g, got %d", float64(maxIdleSeconds), *idleSeconds)
		}
		idle = time.Duration(*idleSeconds) * time.Second
	}
	return &contextSpec{lang: lang, bin: bin, dir: dir, env: merged, idle: idle}, nil
}

// startContext starts an interpreter and waits until its driver is ready.
// The context is not in any set yet; on error nothing is left running.
func (s *server) startContext(ctx context.Context, spec *contextSpec) (*codeContext, error) {
	c := &codeContext{
		id:      cmp.Or(spec.id, newContextID()),
		spec:    spec,
		lang:    spec.lang,
		cwd:     spec.dir,
		idle:    spec.idle,
		created: time.Now().UTC(),
		ready:   make(chan struct{}),
		sem:     make(chan struct{}, 1),
		dead:    make(chan struct{}),
	}
	c.lastUsed = c.created

	// Every pipe end the child gets is closed here once it is started; the
	// ends the agent keeps are closed when the context is gone.
	var childEnds, ours []*os.File
	fail := func(err error) (*codeContext, error) {
		for _, f := range append(childEnds, ours...) {
			f.Close()
		}
		return nil, err
	}
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err != nil {
			return nil, nil, errdefs.Internal(err, "create pipe")
		}
		return r, w, nil
	}
	reqR, reqW, err := pipe()
	if err != nil {
		return fail(err)
	}
	childEnds, ours = append(childEnds, reqR), append(ours, reqW)
	framesR, framesW, err := pipe()
	if err != nil {
		return fail(err)
	}
	childEnds, ours = append(childEnds, framesW), append(ours, framesR)
	outR, outW, err := pipe()
	if err != nil {
		return fail(err)
	}
	childEnds, ours = append(childEnds, outW), append(ours, outR)
	errR, errW, err := pipe()
	if err != nil {
		return fail(err)
	}
	childEnds, ours = append(childEnds, errW), append(ours, errR)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return fail(errdefs.Internal(err, "open %s", os.DevNull))
	}
	childEnds = append(childEnds, devnull)

	// fds: 0 stdin, 1 stdout, 2 stderr, 3 requests, 4 frames. Bash reads
	// its command lines on stdin, so it gets the requests there instead.
	files := []uintptr{devnull.Fd(), outW.Fd(), errW.Fd(), reqR.Fd(), framesW.Fd()}
	if spec.lang.bashLines {
		files[0], files[3] = reqR.Fd(), devnull.Fd()
	}
	if c.stdout, err = newOutPump("stdout", outR); err != nil {
		return fail(errdefs.Internal(err, "watch stdout"))
	}
	if c.stderr, err = newOutPump("stderr", errR); err != nil {
		return fail(errdefs.Internal(err, "watch stderr"))
	}
	argv := spec.lang.driver(spec.bin)
	proc, err := s.startWithFiles(spec.bin, argv, spec.dir, spec.env, files)
	for _, f := range childEnds {
		f.Close()
	}
	childEnds = nil
	if err != nil {
		return fail(err)
	}
	c.proc, c.reqW, c.framesR = proc, reqW, framesR

	// Start-up noise (bash's job-control warnings, a first prompt) is kept
	// to explain a failed start, and dropped otherwise.
	startup := &runCollector{collected{stdout: capBuffer{limit: 4 << 10}, stderr: capBuffer{limit: 4 << 10}}}
	c.stdout.attach(startup)
	c.stderr.attach(startup)
	go c.stdout.loop()
	go c.stderr.loop()
	go func() {
		err := readFrames(framesR, c.deliverFrame)
		if errors.Is(err, errFrameTooLarge) {
			logf("context %s: %v; killing it", c.id, err)
			c.kill()
		}
	}()
	go c.watch(s)

	if spec.lang.bashLines {
		io.WriteString(reqW, bashSetupLine)
	}
	t := time.NewTimer(contextStartTimeout)
	defer t.Stop()
	var failure string
	select {
	case <-c.ready:
	case <-c.dead:
		code, sig := exitOf(c.exit)
		failure = fmt.Sprintf("exited during start-up (status %d%s)", code, sigSuffix(sig))
	case <-t.C:
		failure = fmt.Sprintf("did not start within %s", contextStartTimeout)
	case <-ctx.Done():
		failure = "start was cancelled"
	}
	if failure != "" {
		c.kill()
		select {
		case <-c.dead:
		case <-time.After(killWait):
		}
		c.stdout.drainAndDetach()
		c.stderr.drainAndDetach()
		msg := strings.TrimSpace(startup.stderr.String() + startup.stdout.String())
		if msg != "" {
			msg = ": " + msg
		}
		return nil, errdefs.Invalid(wire.CodeInterpreterFailed, "the %s interpreter (%s) %s%s", spec.lang.name, spec.bin, failure, msg)
	}
	c.stdout.drainAndDetach()
	c.stderr.drainAndDetach()
	if c.idle > 0 {
		c.idleTimer = time.AfterFunc(c.idle, c.expire)
	}
	return c, nil
}

func sigSuffix(sig string) string {
	if sig == "" {
		return ""
	}
	return ", " + sig
}

// startWithFiles is server.start with extra files: it forks into a new
// process group, registered for shutdown, unless shutdown has begun.
func (s *server) startWithFiles(path string, argv []string, dir string, env []string, files []uintptr) (*child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, errdefs.Unavailable(wire.CodeShuttingDown, "the agent is shutting down")
	}
	proc, err := startChild(path, argv, &syscall.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return nil, startError(argv[0], err)
	}
	s.groups[proc.pid] = struct{}{}
	return proc, nil
}

// watch waits for the interpreter to exit, then ends the context: the rest
// of its process group is killed (background jobs die with the context),
// it leaves its set, and once no run holds it its pipes are closed.
func (c *codeContext) watch(s *server) {
	c.exit = <-c.proc.done
	close(c.dead)
	syscall.Kill(-c.proc.pid, syscall.SIGKILL)
	s.forgetGroup(c.proc.pid)
	c.mu.Lock()
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	gone := c.onGone
	c.mu.Unlock()
	if gone != nil {
		gone()
	}
	c.sem <- struct{}{} // wait for the run in progress; never released
	c.reqW.Close()
	c.framesR.Close()
	c.stdout.f.Close()
	c.stderr.f.Close()
}

func (c *codeContext) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// kill ends the interpreter and everything it started.
func (c *codeContext) kill() { syscall.Kill(-c.proc.pid, syscall.SIGKILL) }

// expire ends an idle context; a run in progress restarts the clock when
// it ends instead.
func (c *codeContext) expire() {
	c.mu.Lock()
	running := c.running
	c.mu.Unlock()
	if !running {
		c.kill()
	}
}

// deliverFrame passes a frame to the run it belongs to. Frames of a run
// that already ended (a late "done" after an interrupt) are dropped.
func (c *codeContext) deliverFrame(f driverFrame) {
	if f.Type == "ready" {
		select {
		case <-c.ready:
		default:
			close(c.ready)
		}
		return
	}
	c.mu.Lock()
	r := c.cur
	c.mu.Unlock()
	if r == nil || r.seq != f.Seq {
		return
	}
	select {
	case r.frames <- f:
	case <-r.finished:
	}
}

// info describes the context for the API.
func (c *codeContext) info() wire.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	ci := wire.Context{
		ID: c.id, Handle: handleOf(c.id), Language: c.lang.name, Cwd: c.cwd, Pid: c.proc.pid,
		IdleSeconds: int(c.idle / time.Second), CreatedAt: c.created, LastUsedAt: c.lastUsed, Runs: c.seq,
	}
	if c.idle > 0 && !c.running {
		t := c.lastUsed.Add(c.idle)
		ci.ExpiresAt = &t
	}
	return ci
}
