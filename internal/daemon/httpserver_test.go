package daemon

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestLimitConns: past the per-client cap a connection is closed at once;
// closing one gives its slot back.
func TestLimitConns(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitConns(raw, HTTPLimits{MaxClientConn: 2, MaxConns: -1})
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	dial()
	a := <-accepted
	<-accepted
	over := dial()
	over.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := over.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a third connection from one address: read %v, want EOF", err)
	}
	a.Close()
	dial()
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("a closed connection did not give its slot back")
	}
}
