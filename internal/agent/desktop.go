package agent

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// The desktop: a virtual X display (Xvfb) with a window manager, a panel, a
// VNC server and noVNC's WebSocket bridge, started on request and
// supervised by the agent. Each program runs in its own process group like
// any process the agent starts, so stopping the sandbox stops them too
// (shutdown.go); one that exits while the desktop should run is started
// again after a short backoff. Programs other than Xvfb are optional: an
// image without a panel or VNC still gets a desktop that the API drives.

const (
	desktopDisplayNum = 99 // wire.DesktopDisplay
	desktopLogDir     = "/tmp/sbx-desktop"
	// desktopReadyWait bounds the wait for Xvfb to accept connections and
	// for the VNC and noVNC ports to listen.
	desktopReadyWait = 20 * time.Second
	// desktopStopWait is how long programs get after SIGTERM.
	desktopStopWait = 3 * time.Second
)

// desktop is the agent's desktop; the zero value is a stopped one.
type desktop struct {
	mu  sync.Mutex // serializes start and stop
	run *desktopRun
}

// desktopRun is one started desktop, from start to stop.
type desktopRun struct {
	width, height, depth int
	started              time.Time
	programs             []*desktopProgram
	stopping             chan struct{} // closed by stop: supervisors end
	ended                sync.WaitGroup

	xmu sync.Mutex // guards x
	x   *x11Conn   // dialed on first use, redialed after an error
}

// desktopProgram is one supervised program.
type desktopProgram struct {
	name string
	argv []string
	port int // a TCP port it listens on when ready; 0: none

	mu       sync.Mutex
	pid      int // 0 while not running
	restarts int
}

// desktopPrograms lists what a desktop runs, in start order; required ones
// must be in the image.
func desktopPrograms(w, h, depth int) []struct {
	name     string
	argv     []string
	port     int
	required bool
} {
	display := wire.DesktopDisplay
	return []struct {
		name     string
		argv     []string
		port     int
		required bool
	}{
		// -ac: any local client may connect (the sandbox is the boundary);
		// TCP is off, so only processes in the sandbox can reach it.
		{"xvfb", []string{"Xvfb", display, "-screen", "0", fmt.Sprintf("%dx%dx%d", w, h, depth), "-ac", "-nolisten", "tcp", "-dpi", "96"}, 0, true},
		{"wm", []string{"openbox", "--sm-disable"}, 0, false},
		{"panel", []string{"tint2"}, 0, false},
		{"vnc", []string{"x11vnc", "-display", display, "-forever", "-shared", "-nopw", "-localhost", "-rfbport", strconv.Itoa(wire.DesktopVNCPort), "-noxdamage", "-quiet"}, wire.DesktopVNCPort, false},
		{"novnc", []string{"websockify", "--web", "/usr/share/novnc", strconv.Itoa(wire.DesktopNoVNCPort), "127.0.0.1:" + strconv.Itoa(wire.DesktopVNCPort)}, wire.DesktopNoVNCPort, false},
	}
}

// desktopEnv is the environment of desktop programs and launched apps.
func desktopEnv() map[string]string {
	return map[string]string{"DISPLAY": wire.DesktopDisplay}
}

func (s *server) handleDesktopStart(w http.ResponseWriter, r *http.Request) {
	var req wire.DesktopStartRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	st, err := s.desktop.start(s, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *server) handleDesktopStop(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.desktop.stop())
}

func (s *server) handleDesktopStatus(w http.ResponseWriter, r *http.Request) {
	s.desktop.mu.Lock()
	defer s.desktop.mu.Unlock()
	writeJSON(w, http.StatusOK, s.desktop.run.status())
}

// checkDesktopSize validates and defaults a start request.
func checkDesktopSize(req *wire.DesktopStartRequest) error {
	if req.Width == 0 {
		req.Width = wire.DesktopDefaultW
	}
	if req.Height == 0 {
		req.Height = wire.DesktopDefaultH
	}
	if req.Depth == 0 {
		req.Depth = wire.DesktopDefaultBPP
	}
	for _, v := range []int{req.Width, req.Height} {
		if v < wire.DesktopMinSize || v > wire.DesktopMaxSize {
			return errdefs.Invalid(wire.CodeInvalidScreenSize, "width and height must be from %d to %d pixels, got %dx%d", wire.DesktopMinSize, wire.DesktopMaxSize, req.Width, req.Height)
		}
	}
	if req.Depth != 16 && req.Depth != 24 {
		return errdefs.Invalid(wire.CodeInvalidScreenSize, "depth must be 16 or 24 bits per pixel, got %d", req.Depth)
	}
	return nil
}

// start starts the desktop, or answers the running one when it has the
// requested size.
func (d *desktop) start(s *server, req wire.DesktopStartRequest) (wire.DesktopStatus, error) {
	if err := checkDesktopSize(&req); err != nil {
		return wire.DesktopStatus{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if run := d.run; run != nil {
		if run.width != req.Width || run.height != req.Height || run.depth != req.Depth {
			return wire.DesktopStatus{}, errdefs.Conflict(wire.CodeDesktopRunning, "the desktop runs at %dx%dx%d; stop it first to change its size", run.width, run.height, run.depth)
		}
		return run.status(), nil
	}
	run := &desktopRun{width: req.Width, height: req.Height, depth: req.Depth, started: time.Now(), stopping: make(chan struct{})}
	for _, p := range desktopPrograms(req.Width, req.Height, req.Depth) {
		if _, err := lookPath(p.argv[0], "/", os.Environ()); err != nil {
			if p.required {
				return wire.DesktopStatus{}, errdefs.Invalid(wire.CodeDesktopUnavailable, "this image has no %s: use an image with a desktop (scripts/build-desktop-image.sh builds one)", p.argv[0])
			}
			continue
		}
		run.programs = append(run.programs, &desktopProgram{name: p.name, argv: p.argv, port: p.port})
	}
	if _, err := lookPath("xdotool", "/", os.Environ()); err != nil {
		return wire.DesktopStatus{}, errdefs.Invalid(wire.CodeDesktopUnavailable, "this image has no xdotool, which the desktop's input needs")
	}
	os.MkdirAll(desktopLogDir, 0o755)
	os.MkdirAll("/tmp/.X11-unix", 0o1777)
	os.Chmod("/tmp/.X11-unix", 0o1777)

	// Xvfb first; the others need its display.
	run.supervise(s, run.programs[0])
	deadline := time.Now().Add(desktopReadyWait)
	for {
		x, err := dialX11(desktopDisplayNum, time.Second)
		if err == nil {
			run.x = x
			break
		}
		if time.Now().After(deadline) {
			run.shutdown()
			return wire.DesktopStatus{}, errdefs.Unavailable(wire.CodeDesktopUnavailable, "Xvfb did not accept connections within %s (see %s/xvfb.err.log): %v", desktopReadyWait, desktopLogDir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range run.programs[1:] {
		run.supervise(s, p)
	}
	for _, p := range run.programs {
		if p.port != 0 {
			waitListening(p.port, deadline)
		}
	}
	d.run = run
	return run.status(), nil
}

// waitListening waits until something accepts on 127.0.0.1:port, or the
// deadline; a program that is slow to listen is not an error (its status
// says whether it runs).
func waitListening(port int, deadline time.Time) {
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop stops the desktop's programs and answers the (stopped) status.
func (d *desktop) stop() wire.DesktopStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.run != nil {
		d.run.shutdown()
		d.run = nil
	}
	return d.run.status()
}

// running returns the running desktop, or 409 DESKTOP_NOT_RUNNING.
func (d *desktop) running() (*desktopRun, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.run == nil {
		return nil, errdefs.Conflict(wire.CodeDesktopNotRunning, "the desktop is not running: start it with POST /desktop/start (sbx desktop start)")
	}
	return d.run, nil
}

// supervise starts p and keeps it running until the desktop stops or the
// agent shuts down.
func (run *desktopRun) supervise(s *server, p *desktopProgram) {
	run.ended.Add(1)
	go func() {
		defer run.ended.Done()
		backoff := 250 * time.Millisecond
		for {
			began := time.Now()
			proc, err := run.startProgram(s, p)
			if err != nil {
				logf("desktop: start %s: %v", p.name, err)
			} else {
				p.mu.Lock()
				p.pid = proc.pid
				p.mu.Unlock()
				select {
				case <-proc.done:
				case <-run.stopping:
					<-proc.done // shutdown signals the group
				}
				s.forgetGroup(proc.pid)
				p.mu.Lock()
				p.pid = 0
				p.mu.Unlock()
			}
			select {
			case <-run.stopping:
				return
			default:
			}
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return
			}
			if time.Since(began) > 10*time.Second {
				backoff = 250 * time.Millisecond // it ran a while: a fresh crash
			}
			logf("desktop: %s exited; restarting in %s", p.name, backoff)
			select {
			case <-time.After(backoff):
			case <-run.stopping:
				return
			}
			backoff = min(2*backoff, 5*time.Second)
			p.mu.Lock()
			p.restarts++
			p.mu.Unlock()
		}
	}()
}

// startProgram starts p in its own process group, output to its log file.
func (run *desktopRun) startProgram(s *server, p *desktopProgram) (*child, error) {
	if p.name == "xvfb" { // a crashed server leaves its lock and socket behind
		os.Remove(fmt.Sprintf("/tmp/.X%d-lock", desktopDisplayNum))
		os.Remove(fmt.Sprintf("/tmp/.X11-unix/X%d", desktopDisplayNum))
	}
	c, err := s.prepare(&wire.ExecRequest{Cmd: p.argv, Cwd: "/", Env: desktopEnv()})
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(desktopLogDir, p.name+".log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	errLog, err := os.Create(filepath.Join(desktopLogDir, p.name+".err.log")) // desktop_programs.go reads both
	if err != nil {
		return nil, err
	}
	defer errLog.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	return s.start(c, null, log, errLog)
}

// shutdown ends every program: SIGTERM to each group, SIGKILL after
// desktopStopWait, and waits for the supervisors.
func (run *desktopRun) shutdown() {
	close(run.stopping)
	signal := func(sig syscall.Signal) {
		for _, p := range run.programs {
			p.mu.Lock()
			if p.pid != 0 {
				syscall.Kill(-p.pid, sig)
			}
			p.mu.Unlock()
		}
	}
	signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { run.ended.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(desktopStopWait):
		signal(syscall.SIGKILL)
		<-done
	}
	run.xmu.Lock()
	if run.x != nil {
		run.x.Close()
		run.x = nil
	}
	run.xmu.Unlock()
}

// status describes run; a nil run is a stopped desktop.
func (run *desktopRun) status() wire.DesktopStatus {
	if run == nil {
		return wire.DesktopStatus{Running: false}
	}
	started := run.started.UTC()
	st := wire.DesktopStatus{Running: true, Display: wire.DesktopDisplay, Width: run.width, Height: run.height, Depth: run.depth, StartedAt: &started}
	for _, p := range run.programs {
		p.mu.Lock()
		st.Programs = append(st.Programs, wire.DesktopProgram{Name: p.name, Pid: p.pid, Running: p.pid != 0, Restarts: p.restarts})
		if p.name == "novnc" {
			st.NoVNCPort = wire.DesktopNoVNCPort
		}
		p.mu.Unlock()
	}
	return st
}

// withX runs f on the desktop's X connection, dialing it when needed. A
// connection that fails (Xvfb was restarted) is dropped and f retried once
// on a fresh one.
func (run *desktopRun) withX(f func(*x11Conn) error) error {
	run.xmu.Lock()
	defer run.xmu.Unlock()
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if run.x == nil {
			x, derr := dialX11(desktopDisplayNum, 2*time.Second)
			if derr != nil {
				return errdefs.Unavailable(wire.CodeDesktopUnavailable, "the desktop's X server does not answer (restarting?): %v", derr)
			}
			run.x = x
		}
		run.x.mu.Lock()
		err = f(run.x)
		run.x.mu.Unlock()
		if _, isX := err.(*x11Error); err == nil || isX {
			return err
		}
		run.x.Close()
		run.x = nil
	}
	return errdefs.Unavailable(wire.CodeDesktopUnavailable, "the desktop's X server connection failed: %v", err)
}
