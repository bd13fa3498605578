package agent

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// maxLine bounds the unfinished line a log wait keeps per stream; a longer
// line is matched in pieces of this size.
const maxLine = 64 << 10

// portPollInterval is the pause between port probes.
var portPollInterval = 25 * time.Millisecond

func (s *server) handleWaitForLog(w http.ResponseWriter, r *http.Request, p *process) {
	var req wire.WaitForLogRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	match, err := lineMatcher(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	d, err := checkTimeout(req.TimeoutSeconds)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := deadline(r.Context(), d)
	defer cancel()
	m, err := p.waitForLine(ctx, req.Stream, match)
	if err != nil {
		if errdefs.KindOf(err) == errdefs.KindInternal { // the context ended
			err = waitError(ctx, fmt.Sprintf("no line of process %s matched", p.id), d)
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func lineMatcher(req *wire.WaitForLogRequest) (func(string) bool, error) {
	switch req.Stream {
	case "", "stdout", "stderr":
	default:
		return nil, errdefs.Invalid(wire.CodeInvalidStream, "stream must be stdout, stderr or empty for both, got %q", req.Stream)
	}
	if (req.Substring != "") == (req.Regex != "") {
		return nil, errdefs.Invalid(wire.CodeInvalidMatch, "set exactly one of substring and regex")
	}
	if req.Substring != "" {
		sub := req.Substring
		return func(line string) bool { return strings.Contains(line, sub) }, nil
	}
	re, err := regexp.Compile(req.Regex)
	if err != nil {
		return nil, errdefs.Invalid(wire.CodeInvalidRegex, "regex: %v", err)
	}
	return re.MatchString, nil
}

// waitForLine reads p's output from the oldest retained chunk until a line
// of stream ("" for both) satisfies match. It fails with PROCESS_EXITED
// when the output ends without one, and with an internal error when ctx ends.
func (p *process) waitForLine(ctx context.Context, stream string, match func(string) bool) (*wire.LogMatch, error) {
	partial := map[string][]byte{}
	var after int64
	for {
		chunks, closed, changed := p.out.since(after)
		for _, c := range chunks {
			after = c.seq
			if stream != "" && c.stream != stream {
				continue
			}
			buf := append(partial[c.stream], c.data...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				if line := string(buf[:i]); match(line) {
					return &wire.LogMatch{Line: line, Stream: c.stream, Seq: c.seq}, nil
				}
				buf = buf[i+1:]
			}
			for len(buf) > maxLine {
				if line := string(buf[:maxLine]); match(line) {
					return &wire.LogMatch{Line: line, Stream: c.stream, Seq: c.seq}, nil
				}
				buf = buf[maxLine:]
			}
			partial[c.stream] = append([]byte(nil), buf...)
		}
		if closed {
			// The unterminated last line of each stream counts too.
			for st, buf := range partial {
				if len(buf) > 0 && match(string(buf)) {
					return &wire.LogMatch{Line: string(buf), Stream: st, Seq: after}, nil
				}
			}
			p.mu.Lock()
			code := p.exitCode
			p.mu.Unlock()
			return nil, errdefs.Conflict(wire.CodeProcessExited, "process %s exited (code %d) before a matching line appeared", p.id, code)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *server) handleWaitForPort(w http.ResponseWriter, r *http.Request, p *process) {
	var req wire.WaitForPortRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	probe, err := portProbe(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	d, err := checkTimeout(req.TimeoutSeconds)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := deadline(r.Context(), d)
	defer cancel()
	begin := time.Now()
	tick := time.NewTicker(portPollInterval)
	defer tick.Stop()
	for {
		// Probe before looking at the exit, so a server that is up when its
		// launcher exits still counts.
		exited := p.hasExited()
		if status, ok := probe(ctx); ok {
			writeJSON(w, http.StatusOK, wire.PortReady{Port: req.Port, Status: status, ElapsedMs: time.Since(begin).Milliseconds()})
			return
		}
		if exited {
			writeError(w, errdefs.Conflict(wire.CodeProcessExited, "process %s exited before port %d was ready", p.id, req.Port))
			return
		}
		select {
		case <-tick.C:
		case <-p.exited:
		case <-ctx.Done():
			writeError(w, waitError(ctx, fmt.Sprintf("port %d was not ready", req.Port), d))
			return
		}
	}
}

// portProbe returns a check of req's readiness: a TCP connect, or an HTTP
// GET answered with the wanted status. The sandbox has its own network
// namespace, so 127.0.0.1 is the sandbox's loopback.
func portProbe(req *wire.WaitForPortRequest) (func(context.Context) (int, bool), error) {
	if req.Port < 1 || req.Port > 65535 {
		return nil, errdefs.Invalid(wire.CodeInvalidPort, "port must be 1-65535, got %d", req.Port)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(req.Port))
	switch req.Protocol {
	case "", "tcp":
		if req.Path != "" || req.Status != 0 {
			return nil, errdefs.Invalid(wire.CodeInvalidProbe, "path and status apply to protocol http only")
		}
		return func(ctx context.Context) (int, bool) {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return 0, false
			}
			c.Close()
			return 0, true
		}, nil
	case "http":
		path := req.Path
		if path == "" {
			path = "/"
		}
		if !strings.HasPrefix(path, "/") {
			return nil, errdefs.Invalid(wire.CodeInvalidProbe, "path must start with '/', got %q", path)
		}
		want := req.Status
		if want == 0 {
			want = http.StatusOK
		}
		if want < 100 || want > 599 {
			return nil, errdefs.Invalid(wire.CodeInvalidProbe, "status must be an HTTP status 100-599, got %d", want)
		}
		url := "http://" + addr + path
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		return func(ctx context.Context) (int, bool) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return 0, false
			}
			resp, err := client.Do(req)
			if err != nil {
				return 0, false
			}
			resp.Body.Close()
			return resp.StatusCode, resp.StatusCode == want
		}, nil
	}
	return nil, errdefs.Invalid(wire.CodeInvalidProbe, "protocol must be tcp or http, got %q", req.Protocol)
}
