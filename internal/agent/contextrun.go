package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// activeRun is the run a context's frames go to.
type activeRun struct {
	seq      int64
	frames   chan driverFrame
	finished chan struct{} // closed when the run stops reading frames
}

// runTimeout validates timeoutSeconds as exec does.
func runTimeout(t float64) (time.Duration, error) {
	if t < 0 || math.IsNaN(t) || t > 1e8 {
		return 0, errdefs.Invalid(wire.CodeInvalidRun, "timeoutSeconds must be a number of seconds from 0 (none) to 1e8")
	}
	return time.Duration(t * float64(time.Second)), nil
}

// checkCode rejects what a language cannot be given.
func checkCode(lang *language, code string, env map[string]string) error {
	if lang.bashLines || lang.once != nil {
		if strings.ContainsRune(code, 0) {
			return errdefs.Invalid(wire.CodeInvalidRun, "%s code must not contain NUL bytes", lang.name)
		}
	}
	if lang.bashLines {
		for k := range env {
			if !bashName(k) {
				return errdefs.Invalid(wire.CodeInvalidEnv, "bad environment variable %q for bash: names are letters, digits and _ and do not start with a digit", k)
			}
		}
	}
	_, err := mergeEnv(nil, env) // the common name and value rules
	return err
}

// run runs code in c and returns once the driver reports the end of the run
// and its output is delivered. A timeout, or ctx ending (the caller went
// away), interrupts the code with SIGINT; if it has not stopped after
// interruptGrace the interpreter is killed and the context is gone. The
// error is CONTEXT_NOT_FOUND when the interpreter was gone before the run
// began; anything that happens during the run is in the result.
func (c *codeContext) run(ctx context.Context, code string, env map[string]string, timeout time.Duration, out runOutput) (wire.RunResult, error) {
	select {
	case c.sem <- struct{}{}:
	case <-c.dead:
		return wire.RunResult{}, contextNotFound(c.id)
	case <-ctx.Done():
		return wire.RunResult{}, errdefs.Unavailable(wire.CodeRunCancelled, "the caller went away while waiting for the context's previous run to end")
	}
	if c.isDead() {
		<-c.sem
		return wire.RunResult{}, contextNotFound(c.id)
	}
	defer func() { <-c.sem }()

	r := &activeRun{frames: make(chan driverFrame), finished: make(chan struct{})}
	c.mu.Lock()
	c.seq++
	r.seq = c.seq
	c.cur, c.running, c.lastUsed = r, true, time.Now().UTC()
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	c.mu.Unlock()

	out.begin()
	c.stdout.attach(out)
	c.stderr.attach(out)
	begin := time.Now()

	// One writer goroutine keeps the request and a later interrupt line in
	// order, and the run loop never blocks on a driver that stopped reading.
	// It ends when the context's request pipe is closed, at the latest.
	lines := make(chan string, 2)
	writeErr := make(chan error, 1)
	if c.lang.bashLines {
		lines <- bashRunLine(r.seq, code, env)
	} else {
		b, _ := json.Marshal(struct {
			Seq  int64             `json:"seq"`
			Code string            `json:"code"`
			Env  map[string]string `json:"env,omitempty"`
		}{r.seq, code, env})
		lines <- string(b) + "\n"
	}
	go func() {
		for l := range lines {
			if _, err := io.WriteString(c.reqW, l); err != nil {
				writeErr <- err
				return
			}
		}
	}()
	defer close(lines)

	res := wire.RunResult{Results: []wire.CodeResult{}}
	var timeoutC, graceC, repeatC, killedC <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	var ticker *time.Ticker
	var grace *time.Timer
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
		if grace != nil {
			grace.Stop()
		}
	}()
	interrupt := func() {
		if grace != nil {
			return // already interrupting
		}
		syscall.Kill(-c.proc.pid, syscall.SIGINT)
		if c.lang.bashLines {
			lines <- bashInterruptedLine(r.seq)
		} else {
			ticker = time.NewTicker(interruptRepeat)
			repeatC = ticker.C
		}
		grace = time.NewTimer(interruptGrace)
		graceC = grace.C
	}
	ctxDone := ctx.Done()
	lost := ""

loop:
	for {
		select {
		case f := <-r.frames:
			c.stdout.drain()
			c.stderr.drain()
			switch f.Type {
			case "result":
				var cr wire.CodeResult
				if json.Unmarshal(f.Data, &cr) == nil {
					cr.Main = f.Main
					res.Results = append(res.Results, cr)
					out.result(cr)
				}
			case "error":
				res.Error = &wire.CodeError{Name: f.Name, Value: f.Value, Traceback: f.Traceback}
			case "done":
				if f.ExitCode != nil && *f.ExitCode != 0 && res.Error == nil {
					res.Error = &wire.CodeError{Name: "ExitError", Value: fmt.Sprintf("exit status %d", *f.ExitCode)}
				}
				break loop
			}
		case <-c.dead:
			if lost == "" {
				lost = "exited (" + exitText(c.exit) + ") during the run"
			}
			break loop
		case <-writeErr:
			writeErr = nil // the driver stopped reading: it is exiting, <-c.dead follows
		case <-timeoutC:
			res.TimedOut = true
			interrupt()
		case <-ctxDone:
			ctxDone = nil
			interrupt()
		case <-repeatC:
			syscall.Kill(-c.proc.pid, syscall.SIGINT)
		case <-graceC:
			graceC = nil
			lost = fmt.Sprintf("did not stop within %s of SIGINT and was killed", interruptGrace)
			c.kill()
			t := time.NewTimer(killWait)
			defer t.Stop()
			killedC = t.C
		case <-killedC:
			break loop // stuck in the kernel; the watcher ends the context when it goes
		}
	}
	close(r.finished)
	c.stdout.drainAndDetach()
	c.stderr.drainAndDetach()
	if lost != "" {
		res.Error = &wire.CodeError{Name: "ContextLost",
			Value: fmt.Sprintf("the %s interpreter %s; the context is gone and a new one is needed", c.lang.name, lost)}
	}
	res.DurationMs = time.Since(begin).Milliseconds()

	c.mu.Lock()
	c.cur, c.running, c.lastUsed = nil, false, time.Now().UTC()
	if c.idleTimer != nil && !c.isDead() {
		c.idleTimer.Reset(c.idle)
	}
	c.mu.Unlock()
	return res, nil
}

// exitText describes how a process ended.
func exitText(ws syscall.WaitStatus) string {
	code, sig := exitOf(ws)
	if sig != "" {
		return "killed by " + sig
	}
	return fmt.Sprintf("status %d", code)
}
