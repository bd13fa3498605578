package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

func ptyPath(idOrName, ptyID, suffix string) string {
	return sandboxPath(idOrName, "/ptys/"+url.PathEscape(ptyID)+suffix)
}

func checkPTY(idOrName, ptyID string) error {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return err
	}
	return checkName("pty id", ptyID)
}

// CreatePTY starts a program on a new terminal. Attach to see and type.
func (c *Client) CreatePTY(ctx context.Context, idOrName string, req CreatePTYRequest) (*PTY, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var p PTY
	if err := c.call(ctx, request{method: http.MethodPost, path: sandboxPath(idOrName, "/ptys"), in: req}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ListPTYs lists the sandbox's terminals.
func (c *Client) ListPTYs(ctx context.Context, idOrName string) ([]PTY, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	var list []PTY
	if err := c.call(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/ptys")}, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// GetPTY returns one terminal.
func (c *Client) GetPTY(ctx context.Context, idOrName, ptyID string) (*PTY, error) {
	if err := checkPTY(idOrName, ptyID); err != nil {
		return nil, err
	}
	var p PTY
	if err := c.call(ctx, request{method: http.MethodGet, path: ptyPath(idOrName, ptyID, "")}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// DeletePTY kills the terminal's program and everything in its session and
// forgets the terminal.
func (c *Client) DeletePTY(ctx context.Context, idOrName, ptyID string) error {
	if err := checkPTY(idOrName, ptyID); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodDelete, path: ptyPath(idOrName, ptyID, "")}, nil)
}

// ResizePTY sets the terminal's size; the program gets SIGWINCH.
func (c *Client) ResizePTY(ctx context.Context, idOrName, ptyID string, cols, rows int) error {
	if err := checkPTY(idOrName, ptyID); err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodPost, path: ptyPath(idOrName, ptyID, "/resize"), in: ResizeRequest{Cols: cols, Rows: rows}}, nil)
}

// AttachPTY connects to a terminal over a WebSocket. The first bytes read
// replay its recent output. Close detaches; the program keeps running.
func (c *Client) AttachPTY(ctx context.Context, idOrName, ptyID string) (*PTYConn, error) {
	if err := checkPTY(idOrName, ptyID); err != nil {
		return nil, err
	}
	if c.err != nil {
		return nil, c.err
	}
	u := c.host + ptyPath(idOrName, ptyID, "/attach")
	u = "ws" + strings.TrimPrefix(u, "http") // http→ws, https→wss
	h := http.Header{}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	ws, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusSwitchingProtocols {
			if resp.Body == nil {
				resp.Body = http.NoBody
			}
			return nil, decodeError(resp)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("attach to terminal %s: %w", ptyID, err)
	}
	ws.SetReadLimit(16 << 20)
	return &PTYConn{ws: ws}, nil
}

// PTYConn is an attached terminal. Read returns the terminal's output and
// io.EOF once the program has exited (see Exit); Write types. Read and Write
// may be used from different goroutines.
type PTYConn struct {
	ws *websocket.Conn

	rmu     sync.Mutex
	pending []byte

	mu     sync.Mutex
	exit   *PTYControl
	lost   *ErrorBody // the "error" frame: why the instance went away
	closed bool
}

// ErrDetached is returned by PTYConn.Read when the connection ended without
// the program's exit: the daemon or the instance went away, or Close was
// called.
var ErrDetached = errors.New("terminal connection ended before the program exited")

// Read reads terminal output.
func (p *PTYConn) Read(b []byte) (int, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	for len(p.pending) == 0 {
		if p.exited() {
			return 0, io.EOF
		}
		typ, data, err := p.ws.Read(context.Background())
		if err != nil {
			if p.exited() {
				return 0, io.EOF
			}
			if lost := p.Lost(); lost != nil {
				return 0, fmt.Errorf("%w: %s: %s", ErrDetached, lost.Code, lost.Message)
			}
			return 0, fmt.Errorf("%w: %v", ErrDetached, err)
		}
		if typ == websocket.MessageBinary {
			p.pending = data
			continue
		}
		var ctl PTYControl
		if json.Unmarshal(data, &ctl) == nil && ctl.Type == "exit" {
			p.mu.Lock()
			p.exit = &ctl
			p.mu.Unlock()
		}
		if ctl.Type == "error" && ctl.Error != nil {
			p.mu.Lock()
			p.lost = ctl.Error
			p.mu.Unlock()
		}
	}
	n := copy(b, p.pending)
	p.pending = p.pending[n:]
	return n, nil
}

// Lost is why the terminal's instance went away before the program exited
// (its Reason is the stop reason: user, idle, delete, crash, oom, …), or nil.
func (p *PTYConn) Lost() *ErrorBody {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lost
}

func (p *PTYConn) exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit != nil
}

// Write sends keystrokes (any bytes) to the terminal.
func (p *PTYConn) Write(b []byte) (int, error) {
	if err := p.ws.Write(context.Background(), websocket.MessageBinary, b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Resize sets the terminal's size.
func (p *PTYConn) Resize(ctx context.Context, cols, rows int) error {
	b, _ := json.Marshal(PTYControl{Type: "resize", Cols: cols, Rows: rows})
	return p.ws.Write(ctx, websocket.MessageText, b)
}

// Exit returns the program's exit code (128+N after signal N) and signal
// name once Read has returned io.EOF; ok is false before.
func (p *PTYConn) Exit() (code int, signal string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exit == nil {
		return 0, "", false
	}
	return p.exit.ExitCode, p.exit.Signal, true
}

// Close detaches from the terminal; the program keeps running.
func (p *PTYConn) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.ws.Close(websocket.StatusNormalClosure, "detach")
	return nil
}
