package agent

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// handleForwardTCP connects to host:port from inside the sandbox and, once
// connected, turns the request's connection into that TCP connection
// (HTTP Upgrade "tcp"). The SSH gateway forwards ports with it (ssh -L),
// including to servers that listen on the sandbox's loopback only.
func (s *server) handleForwardTCP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	port, err := strconv.Atoi(q.Get("port"))
	if err != nil || port < 1 || port > 65535 {
		writeError(w, errdefs.Invalid(wire.CodeInvalidPort, "port must be a number from 1 to 65535, got %q", q.Get("port")))
		return
	}
	host := q.Get("host")
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	if r.Header.Get("Upgrade") != agentapi.UpgradeTCP {
		writeError(w, errdefs.Invalid(wire.CodeInvalidTarget, "send Connection: Upgrade and Upgrade: %s", agentapi.UpgradeTCP))
		return
	}
	target, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 10*time.Second)
	if err != nil {
		writeError(w, errdefs.Unavailable(wire.CodePortNotListening, "connect to %s:%d inside the sandbox: %v", host, port, err))
		return
	}
	defer target.Close()
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeError(w, errdefs.Internal(err, "take over the connection"))
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Time{})
	if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+agentapi.UpgradeTCP+"\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(target, buf) // buf holds what the client sent after the headers
		if tc, ok := target.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		io.Copy(conn, target)
		done <- struct{}{}
	}()
	<-done
	<-done
}
