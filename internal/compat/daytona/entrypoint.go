package daytona

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Daytona's entrypoint session is sbx's main process: the sandbox's
// entrypoint (create's entrypoint), supervised by the agent. Its output is
// sbx's main log (GET /v1/sandboxes/{id}/logs), which keeps stdout and
// stderr as one stream: the layer answers it as output and stdout, with
// stderr empty (docs/compat/daytona.md). A sandbox without an entrypoint
// has an empty entrypoint session.

const entrypointSession = "entrypoint"

// entrypointSession serves GET /process/session/entrypoint.
func (h *Handler) entrypointSession(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	d := sessionDTO{SessionID: entrypointSession, Commands: []commandDTO{}}
	if len(sb.Spec.Entrypoint) > 0 {
		c := commandDTO{ID: entrypointSession, Command: shellJoin(sb.Spec.Entrypoint)}
		if ex, ok := h.cfg.Sandboxes.MainExit(sb); ok {
			code := ex.ExitCode
			c.ExitCode = &code
		}
		d.Commands = append(d.Commands, c)
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// entrypointLogs serves GET /process/session/entrypoint/logs: the main
// log as JSON, or with follow=true a WebSocket of stdout frames until the
// sandbox stops.
func (h *Handler) entrypointLogs(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	follow := r.URL.Query().Get("follow") == "true"
	if len(sb.Spec.Entrypoint) == 0 {
		if !follow {
			writeJSON(w, http.StatusOK, map[string]string{"output": "", "stdout": "", "stderr": ""})
			return nil
		}
		ws, err := acceptWebSocket(w, r)
		if err == nil {
			ws.closeNormal()
		}
		return nil
	}
	q := url.Values{}
	if follow {
		q.Set("follow", "true")
	}
	body, err := h.nativeStream(r, "GET", "/v1/sandboxes/"+url.PathEscape(sb.ID)+"/logs", q)
	if err != nil {
		return err
	}
	defer body.Close()
	rd := agentapi.NewReader(body, agentapi.MaxLine)
	if !follow {
		var out strings.Builder
		for {
			line, err := rd.Next()
			if err != nil {
				break
			}
			var l wire.LogLine
			if json.Unmarshal(line, &l) != nil {
				continue
			}
			if l.Type == "error" && l.Error != nil {
				return errdefs.Unavailable(l.Error.Code, "%s", l.Error.Message)
			}
			out.Write(l.Data)
		}
		writeJSON(w, http.StatusOK, map[string]string{"output": out.String(), "stdout": out.String(), "stderr": ""})
		return nil
	}
	ws, err := acceptWebSocket(w, r)
	if err != nil {
		return nil // Accept has answered
	}
	for {
		line, err := rd.Next()
		if err != nil {
			return nil
		}
		var l wire.LogLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch l.Type {
		case "data":
			if err := ws.write(r.Context(), append(append([]byte{}, stdoutPrefix...), l.Data...)); err != nil {
				return nil
			}
		case "end", "error":
			ws.closeNormal()
			return nil
		}
	}
}

// shellJoin is argv as one command line, quoted where a shell would need it.
func shellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			parts[i] = a
		} else {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}

// nativeStream calls sbx's GET route path as the caller of r, like native,
// and returns its body as it is written: for streams (follow=true). An
// error answer is returned as its error. The call ends with r's context.
func (h *Handler) nativeStream(r *http.Request, method, path string, query url.Values) (io.ReadCloser, error) {
	if h.cfg.API == nil {
		return nil, errdefs.Unavailable(wire.CodeInternal, "sbx's API is not mounted beside the Daytona layer")
	}
	ctx, cancel := context.WithCancel(r.Context())
	req, err := http.NewRequestWithContext(ctx, method, path, http.NoBody)
	if err != nil {
		cancel()
		return nil, errdefs.Internal(err, "call %s %s", method, path)
	}
	req.URL.RawQuery = query.Encode()
	req.Host, req.RemoteAddr, req.TLS = r.Host, r.RemoteAddr, r.TLS
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	pr, pw := io.Pipe()
	sw := &streamWriter{header: http.Header{}, pw: pw, started: make(chan int, 1)}
	go func() {
		h.cfg.API.ServeHTTP(sw, req)
		sw.WriteHeader(http.StatusOK) // a route that wrote nothing
		pw.Close()
	}()
	status := <-sw.started
	if status < 400 {
		return &cancelReader{ReadCloser: pr, cancel: cancel}, nil
	}
	b, _ := io.ReadAll(io.LimitReader(pr, 1<<20))
	cancel()
	pr.Close()
	var e wire.ErrorResponse
	if json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
		return nil, errdefs.Internal(nil, "%s %s answered %d", method, path, status)
	}
	return nil, &errdefs.Error{Kind: httpjson.KindOf(status), Code: e.Error.Code, Message: e.Error.Message}
}

// streamWriter is the answer of a route called in process, read as it is
// written.
type streamWriter struct {
	header  http.Header
	pw      *io.PipeWriter
	started chan int // the status, once
	sent    bool
}

func (w *streamWriter) Header() http.Header { return w.header }
func (w *streamWriter) WriteHeader(status int) {
	if !w.sent {
		w.sent = true
		w.started <- status
	}
}
func (w *streamWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}
func (w *streamWriter) Flush() {}

type cancelReader struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelReader) Close() error {
	c.cancel()
	return c.ReadCloser.Close()
}
