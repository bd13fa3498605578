package agent

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func TestForwardTCP(t *testing.T) {
	a := startAgent(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c) // echo
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	conn, err := a.client.DialTCP(context.Background(), "localhost", port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping through the agent")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("ping through the agent"))
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "ping through the agent" {
		t.Fatalf("echo %q %v", buf, err)
	}

	// Nothing listening: a clear error before any upgrade.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln2.Addr().(*net.TCPAddr).Port
	ln2.Close()
	if _, err := a.client.DialTCP(context.Background(), "", closed); errdefs.CodeOf(err) != wire.CodePortNotListening {
		t.Fatalf("closed port: %v", err)
	}
	if _, err := a.client.DialTCP(context.Background(), "", 70000); errdefs.CodeOf(err) != wire.CodeInvalidPort {
		t.Fatalf("bad port: %v", err)
	}
	// Without the upgrade it is refused.
	resp := a.do("GET", "/forward?port=1", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("no upgrade: %d", resp.StatusCode)
	}
}
