package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/coder/websocket"
	"github.com/sbxhq/sbx/wire"
)

// ptyReadLimit is the largest frame relayed either way: the agent batches
// terminal output into frames well below it.
const ptyReadLimit = 1 << 20

// attachPTY relays a terminal's WebSocket between the client and the agent,
// frame by frame, instead of passing the bytes through: when the agent's
// side breaks off (the instance stopped, crashed or was deleted) the client
// gets what an exec stream gets, a final text frame
// {"type":"error","error":{"code":"INSTANCE_LOST","reason":…}}, then a
// close frame (1001 going away) whose reason names the stop reason. The
// program's own end is passed on as the agent sends it: an "exit" frame and
// a normal close.
func (s *Server) attachPTY(w http.ResponseWriter, r *http.Request) error {
	client, sb, err := s.agentFor(r) // lookup.go: never starts the sandbox
	if err != nil {
		return err
	}
	u := "ws://agent" + agentPath(r)
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	agentConn, resp, err := websocket.Dial(r.Context(), u, &websocket.DialOptions{HTTPClient: &http.Client{Transport: client.Transport()}})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			// The agent's own answer (404 PTY_NOT_FOUND, …), as it is.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(resp.StatusCode)
			if resp.Body != nil {
				io.Copy(w, io.LimitReader(resp.Body, 64<<10))
			}
			return nil
		}
		return agentLost(err)
	}
	agentConn.SetReadLimit(ptyReadLimit)
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		agentConn.Close(websocket.StatusGoingAway, "the client's handshake failed")
		return nil // Accept has answered
	}
	conn.SetReadLimit(ptyReadLimit)
	// Attached to a running instance, a terminal is activity (a lookup
	// is not, but this one found the instance running).
	release := s.sandboxes.Hold(r.Context(), sb.ID)
	defer release()
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()

	var clientLeft atomic.Bool
	go func() { // client → agent: keystrokes and resizes
		defer cancel()
		for {
			typ, b, err := conn.Read(ctx)
			if err != nil {
				clientLeft.Store(true)
				agentConn.Close(websocket.StatusNormalClosure, "detached")
				return
			}
			if agentConn.Write(ctx, typ, b) != nil {
				return
			}
		}
	}()
	for { // agent → client: output, "exit"
		typ, b, err := agentConn.Read(ctx)
		if err != nil {
			if clientLeft.Load() {
				return nil
			}
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
				conn.Close(websocket.StatusNormalClosure, "exited")
				return nil
			}
			s.endPTY(ctx, conn, sb.ID)
			return nil
		}
		if conn.Write(ctx, typ, b) != nil {
			agentConn.Close(websocket.StatusNormalClosure, "detached")
			return nil
		}
	}
}

// endPTY tells the client of a terminal whose instance went away why, in a
// final error frame and the close frame's reason.
func (s *Server) endPTY(ctx context.Context, conn *websocket.Conn, id string) {
	lost := s.instanceLost(ctx, id) // stream.go: waits for the recorded reason
	b, _ := json.Marshal(wire.PTYControl{Type: "error", Error: &lost})
	conn.Write(ctx, websocket.MessageText, b)
	reason := "instance lost"
	if lost.Reason != "" {
		reason = "instance ended: " + lost.Reason
	}
	conn.Close(websocket.StatusGoingAway, reason)
}
