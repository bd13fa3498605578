package httpegress

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"
)

// maxHello bounds what the proxy reads of a ClientHello before deciding.
const maxHello = 16 << 10

var errHelloRead = errors.New("hello read")

// peekSNI reads the TLS ClientHello at the start of br without consuming
// it and returns the server name it asks for ("" when none). It lets
// crypto/tls parse the hello (no hand-written parser to get wrong) over a
// connection that only replays the peeked bytes and refuses writes.
func peekSNI(br *bufio.Reader) (string, error) {
	// A TLS record header: type 22 (handshake), version, length.
	hdr, err := br.Peek(5)
	if err != nil {
		return "", err
	}
	if hdr[0] != 0x16 {
		return "", errors.New("not a TLS handshake")
	}
	n := 5 + (int(hdr[3])<<8 | int(hdr[4]))
	if n > maxHello {
		return "", errors.New("ClientHello too large")
	}
	rec, err := br.Peek(n)
	if err != nil {
		return "", err
	}
	var name string
	var got bool
	cfg := &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		name, got = h.ServerName, true
		return nil, errHelloRead
	}}
	tls.Server(&replayConn{r: bytesReader(rec)}, cfg).Handshake()
	if !got {
		return "", errors.New("malformed ClientHello")
	}
	return name, nil
}

func bytesReader(b []byte) io.Reader { return &sliceReader{b: b} }

type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// replayConn is a net.Conn that reads from r and drops writes.
type replayConn struct {
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error)         { return c.r.Read(p) }
func (c *replayConn) Write(p []byte) (int, error)        { return 0, io.ErrClosedPipe }
func (c *replayConn) Close() error                       { return nil }
func (c *replayConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (c *replayConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (c *replayConn) SetDeadline(t time.Time) error      { return nil }
func (c *replayConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(t time.Time) error { return nil }

// bufConn is a connection whose first bytes were peeked into br.
type bufConn struct {
	net.Conn
	br *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.br.Read(p) }
