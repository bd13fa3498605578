package daytona

import (
	"context"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// wsConn is a server-side WebSocket whose writes may come from several
// goroutines.
type wsConn struct {
	c  *websocket.Conn
	mu sync.Mutex
}

// acceptWebSocket upgrades the request; on failure Accept has answered.
// Offered subprotocols are accepted as the SDK sends them.
func acceptWebSocket(w http.ResponseWriter, r *http.Request, subprotocols ...string) (*wsConn, error) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: subprotocols})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	return &wsConn{c: c}, nil
}

func (ws *wsConn) write(ctx context.Context, b []byte) error {
	return ws.send(ctx, websocket.MessageBinary, b)
}

func (ws *wsConn) writeText(ctx context.Context, s string) error {
	return ws.send(ctx, websocket.MessageText, []byte(s))
}

func (ws *wsConn) send(ctx context.Context, typ websocket.MessageType, b []byte) error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.c.Write(ctx, typ, b)
}

func (ws *wsConn) closeNormal() { ws.c.Close(websocket.StatusNormalClosure, "") }
