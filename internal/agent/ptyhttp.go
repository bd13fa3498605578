package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

func (s *server) handleCreatePTY(w http.ResponseWriter, r *http.Request) {
	var req wire.CreatePTYRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	term, err := s.createPTY(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, term.toAPI())
}

func (s *server) handleListPTYs(w http.ResponseWriter, r *http.Request) {
	out := []wire.PTY{}
	for _, term := range s.ptys.list() {
		out = append(out, term.toAPI())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) withPTY(h func(http.ResponseWriter, *http.Request, *terminal)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("pty")
		term, ok := s.ptys.get(id)
		if !ok {
			writeError(w, errdefs.NotFound(wire.CodePTYNotFound, "no terminal %q in this sandbox", id))
			return
		}
		h(w, r, term)
	}
}

func (s *server) handleGetPTY(w http.ResponseWriter, r *http.Request, term *terminal) {
	writeJSON(w, http.StatusOK, term.toAPI())
}

func (s *server) handleDeletePTY(w http.ResponseWriter, r *http.Request, term *terminal) {
	term.kill()
	s.ptys.remove(term)
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) handleResizePTY(w http.ResponseWriter, r *http.Request, term *terminal) {
	var req wire.ResizeRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := term.resize(req.Cols, req.Rows); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, term.toAPI())
}

// ptyWriteTimeout bounds one WebSocket write to an attached client.
const ptyWriteTimeout = time.Minute

// handleAttachPTY connects a WebSocket to the terminal: binary frames are
// bytes both ways, text frames JSON PTYControl. The client first gets the
// retained recent output (unless ?replay=false), then output as it comes;
// once the program has exited and its output is sent, an "exit" frame and a
// normal close. A client that goes away only detaches.
func (s *server) handleAttachPTY(w http.ResponseWriter, r *http.Request, term *terminal) {
	replay := true
	if v := r.URL.Query().Get("replay"); v != "" {
		b, err := httpjson.BoolParam(r, "replay")
		if err != nil {
			writeError(w, err)
			return
		}
		replay = b
	}
	// Origins are not checked: a browser cannot send the daemon's bearer
	// token on a WebSocket, so only authenticated clients get this far.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	term.mu.Lock()
	term.attached++
	term.mu.Unlock()
	defer func() {
		term.mu.Lock()
		term.attached--
		term.mu.Unlock()
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer cancel() // the client is gone: detach
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageBinary {
				term.input(data) // fails only once the program is gone
				continue
			}
			var ctl wire.PTYControl
			if json.Unmarshal(data, &ctl) == nil && ctl.Type == "resize" {
				term.resize(ctl.Cols, ctl.Rows) // a bad size is ignored, as a terminal would
			}
		}
	}()

	var after int64
	if !replay {
		after = term.out.last()
	}
	quit := s.streamsDone()
	var batch bytes.Buffer
	for {
		chunks, closed, changed := term.out.since(after)
		if len(chunks) > 0 {
			batch.Reset()
			for _, c := range chunks {
				batch.Write(c.data)
			}
			after = chunks[len(chunks)-1].seq
			wctx, wcancel := context.WithTimeout(ctx, ptyWriteTimeout)
			err := conn.Write(wctx, websocket.MessageBinary, batch.Bytes())
			wcancel()
			if err != nil {
				return
			}
		}
		if closed {
			term.mu.Lock()
			b, _ := json.Marshal(wire.PTYControl{Type: "exit", ExitCode: term.exitCode, Signal: term.signal})
			term.mu.Unlock()
			wctx, wcancel := context.WithTimeout(ctx, ptyWriteTimeout)
			defer wcancel()
			if conn.Write(wctx, websocket.MessageText, b) == nil {
				conn.Close(websocket.StatusNormalClosure, "exited")
			}
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-quit:
			conn.Close(websocket.StatusGoingAway, "the sandbox is stopping")
			return
		}
	}
}
