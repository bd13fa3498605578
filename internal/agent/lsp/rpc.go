package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"
)

// JSON-RPC 2.0 over a language server's stdio, framed as LSP frames it:
// "Content-Length: N\r\n\r\n" and N bytes of JSON.

// maxMessage bounds one message from a server; a bigger one ends the
// connection (a server gone wrong must not grow the agent).
const maxMessage = 16 << 20

// writeWait bounds writing one message to a server.
const writeWait = 30 * time.Second

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type reply struct {
	result json.RawMessage
	err    error
}

// conn is a JSON-RPC connection to one server.
type conn struct {
	w io.Writer

	wmu sync.Mutex // one frame at a time

	mu      sync.Mutex
	next    int
	pending map[int]chan reply
	err     error         // why the connection ended
	done    chan struct{} // closed when reading ends

	answering chan struct{} // bounds the answers to the server in flight
}

func newConn(r io.Reader, w io.Writer) *conn {
	c := &conn{w: w, pending: map[int]chan reply{}, done: make(chan struct{}), answering: make(chan struct{}, 16)}
	go c.read(bufio.NewReaderSize(r, 64<<10))
	return c
}

// call sends a request and waits for its answer, ctx, or the end of the
// connection.
func (c *conn) call(ctx context.Context, method string, params any, result any) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.send(message{JSONRPC: "2.0", ID: json.RawMessage(strconv.Itoa(id)), Method: method, Params: mustJSON(params)}); err != nil {
		return err
	}
	select {
	case rep := <-ch:
		if rep.err != nil {
			return rep.err
		}
		if result == nil || len(rep.result) == 0 {
			return nil
		}
		if err := json.Unmarshal(rep.result, result); err != nil {
			return fmt.Errorf("%s: the server's answer does not parse: %v", method, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.closedErr()
	}
}

// notify sends a notification (no answer).
func (c *conn) notify(method string, params any) error {
	return c.send(message{JSONRPC: "2.0", Method: method, Params: mustJSON(params)})
}

func (c *conn) send(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	// A server that stops reading its input must not hold a caller (and the
	// locks it holds) forever: pipes take a deadline.
	if d, ok := c.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		d.SetWriteDeadline(time.Now().Add(writeWait))
	}
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n", len(b)); err != nil {
		return fmt.Errorf("write to the language server: %w", err)
	}
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("write to the language server: %w", err)
	}
	return nil
}

func (c *conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// read dispatches the server's messages until its output ends: answers to
// their callers; requests from the server get a neutral answer (it must
// not wait on a client that has none to give); notifications (diagnostics,
// logs, progress) are dropped.
func (c *conn) read(r *bufio.Reader) {
	err := c.readLoop(r)
	c.mu.Lock()
	c.err = err
	for id, ch := range c.pending {
		ch <- reply{err: err}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

func (c *conn) readLoop(r *bufio.Reader) error {
	tp := textproto.NewReader(r)
	for {
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("the language server closed its output")
			}
			return fmt.Errorf("reading from the language server: %v", err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(h.Get("Content-Length")))
		if err != nil || n < 0 {
			return fmt.Errorf("the language server sent a frame without a valid Content-Length")
		}
		if n > maxMessage {
			return fmt.Errorf("the language server sent a %d-byte message (the bound is %d)", n, maxMessage)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return fmt.Errorf("reading from the language server: %v", err)
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			continue // not JSON-RPC: skip it
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // a request from the server
			c.answerServer(m)
		case m.Method == "" && len(m.ID) > 0: // an answer
			id, err := strconv.Atoi(string(m.ID))
			if err != nil {
				continue
			}
			c.mu.Lock()
			ch := c.pending[id]
			c.mu.Unlock()
			if ch == nil {
				continue
			}
			if m.Error != nil {
				ch <- reply{err: fmt.Errorf("the language server answered error %d: %s", m.Error.Code, m.Error.Message)}
			} else {
				ch <- reply{result: m.Result}
			}
		}
	}
}

// answerServer answers a request from the server: workspace/configuration
// with one null per item asked (no settings), everything else (progress
// tokens, capability registration, …) with null.
func (c *conn) answerServer(m message) {
	result := json.RawMessage("null")
	if m.Method == "workspace/configuration" {
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(m.Params, &p)
		result = mustJSON(make([]any, len(p.Items)))
	}
	// Not on the reading goroutine: a server that does not read its input
	// must not stop us reading its output. A server with too many
	// unanswered requests gets no more answers.
	select {
	case c.answering <- struct{}{}:
		go func() {
			c.send(message{JSONRPC: "2.0", ID: m.ID, Result: result})
			<-c.answering
		}()
	default:
	}
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
