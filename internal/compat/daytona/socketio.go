package daytona

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// A minimal socket.io v4 server (Engine.IO protocol 4, WebSocket transport
// only, the default namespace): the SDK connects to {apiUrl}/socket.io/ for
// sandbox state events, authenticating with {"token": <api key>} in its
// CONNECT packet. It gets "sandbox.state.updated" for every state change
// sbx records (the Manager's event log) from the moment it connected.
//
// Engine.IO packets are text frames: "0" open, "2" ping, "3" pong, "4"
// message; a socket.io packet rides in a message: "40" connect, "41"
// disconnect, "42" event, "44" connect error.

const (
	pingInterval = 25 * time.Second
	pingTimeout  = 20 * time.Second
	// eventPage is how many events one read of the log takes.
	eventPage = 1000
)

// socketOps is what each socket.io packet a client may send needs
// (internal/authz); "connect" subscribes to the state events of the key's
// team. Pings and disconnects need nothing: they follow a connect.
var socketOps = map[string]authz.Op{
	"connect": authz.Read,
}

func randomID() string {
	b := make([]byte, 10)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (h *Handler) socketIO(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Get("EIO") != "4" || q.Get("transport") != "websocket" {
		return invalid(wire.CodeInvalidParameter, "this socket.io endpoint speaks Engine.IO 4 over the websocket transport only (EIO=4&transport=websocket)")
	}
	ws, err := acceptWebSocket(w, r)
	if err != nil {
		return nil
	}
	defer ws.c.CloseNow()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	open, _ := json.Marshal(map[string]any{"sid": randomID(), "upgrades": []string{},
		"pingInterval": pingInterval.Milliseconds(), "pingTimeout": pingTimeout.Milliseconds(), "maxPayload": 1000000})
	if ws.writeText(ctx, "0"+string(open)) != nil {
		return nil
	}
	connected := make(chan connection, 1)
	go h.socketReader(ctx, cancel, ws, connected)
	var conn connection
	select {
	case conn = <-connected:
	case <-ctx.Done():
		return nil
	case <-time.After(pingInterval):
		return nil // no CONNECT
	}
	h.sendStateEvents(conn.ctx, ws, conn.after)
	return nil
}

// connection is an accepted CONNECT: the principal's context and the end
// of the event log when it was accepted (events after it are sent).
type connection struct {
	ctx   context.Context
	after int64
}

// socketReader answers the client's packets: CONNECT (authenticated), ping
// and DISCONNECT. It cancels the connection when the client goes away.
func (h *Handler) socketReader(ctx context.Context, cancel context.CancelFunc, ws *wsConn, connected chan<- connection) {
	defer cancel()
	for {
		typ, b, err := ws.c.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		pkt := parsePacket(string(b))
		switch pkt.kind {
		case packetPing:
			ws.writeText(ctx, "3")
		case packetConnect:
			p, err := h.cfg.Gate.Key(ctx, pkt.token)
			if err == nil {
				_, err = h.cfg.Gate.Admit(ctx, p, socketOps["connect"].At("SOCKETIO", apiPrefix+"/socket.io#connect"))
			}
			if err != nil {
				b, _ := json.Marshal(map[string]string{"message": "unauthorized: send an sbx API key with scope sandboxes:read as the token: " + err.Error()})
				ws.writeText(ctx, "44"+string(b))
				continue
			}
			pctx := auth.WithPrincipal(ctx, p)
			after, err := h.lastEventSeq(pctx) // before the answer: the client sees every change after it
			if err != nil {
				logErr("socket.io: read the event log", "err", err)
				return
			}
			b, _ := json.Marshal(map[string]string{"sid": randomID()})
			ws.writeText(ctx, "40"+string(b))
			select {
			case connected <- connection{pctx, after}:
			default:
			}
		case packetDisconnect:
			ws.closeNormal()
			return
		}
	}
}

// packetKind is what a client's text frame asks for, as far as this
// server reads it; everything else (pong, events, other namespaces) is
// ignored.
type packetKind int

const (
	packetIgnored packetKind = iota
	packetPing
	packetConnect
	packetDisconnect
)

type packet struct {
	kind  packetKind
	token string // CONNECT's auth token
}

// parsePacket reads one text frame. A CONNECT to the default namespace
// carries {"token": …}; one whose auth does not parse has no token, so it
// is refused like a wrong key.
func parsePacket(msg string) packet {
	switch {
	case msg == "2":
		return packet{kind: packetPing}
	case strings.HasPrefix(msg, "40"):
		var a struct {
			Token string `json:"token"`
		}
		if json.Unmarshal([]byte(msg[2:]), &a) != nil {
			a.Token = ""
		}
		return packet{kind: packetConnect, token: a.Token}
	case strings.HasPrefix(msg, "41"):
		return packet{kind: packetDisconnect}
	}
	return packet{}
}

// sendStateEvents follows the event log after seq after, sending each
// state change, and pings the client every pingInterval.
func (h *Handler) sendStateEvents(ctx context.Context, ws *wsConn, after int64) {
	ping := time.NewTicker(pingInterval)
	defer ping.Stop()
	for {
		changed := h.cfg.Sandboxes.EventsChanged()
		evs, err := h.cfg.Sandboxes.Events(ctx, "", after, eventPage)
		if err != nil {
			return
		}
		for _, ev := range evs {
			after = ev.Seq
			if ws.writeText(ctx, h.stateEvent(ctx, ev)) != nil {
				return
			}
		}
		if len(evs) == eventPage {
			continue
		}
		select {
		case <-changed:
		case <-ping.C:
			if ws.writeText(ctx, "2") != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// lastEventSeq is the sequence number of the newest recorded event.
func (h *Handler) lastEventSeq(ctx context.Context) (int64, error) {
	var after int64
	for {
		evs, err := h.cfg.Sandboxes.Events(ctx, "", after, eventPage)
		if err != nil {
			return 0, err
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].Seq
		}
		if len(evs) < eventPage {
			return after, nil
		}
	}
}

// stateEvent is the socket.io packet of one state change: the sandbox as
// it is now (the SDK reads sandbox.state, then newState).
func (h *Handler) stateEvent(ctx context.Context, ev store.Event) string {
	state := stateOf(ev.State)
	body := map[string]any{"newState": state, "sandbox": map[string]any{"id": ev.SandboxID, "state": state}}
	if ev.State != wire.StateDeleted {
		if sb, err := h.cfg.Sandboxes.Get(ctx, ev.SandboxID); err == nil {
			body["sandbox"] = toDTO(sb, "")
			delete(body, "newState")
			body["newState"] = stateOf(sb.State)
		}
	}
	b, _ := json.Marshal([]any{"sandbox.state.updated", body})
	return "42" + string(b)
}
