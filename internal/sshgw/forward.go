package sshgw

import (
	"io"
	"sync"

	"golang.org/x/crypto/ssh"
)

// serveForward serves a direct-tcpip channel (ssh -L, editors' port
// forwards): the agent connects to the target from inside the sandbox, so
// "localhost" is the sandbox's loopback, whatever its network mode.
func (c *client) serveForward(nch ssh.NewChannel) {
	var target struct {
		Host       string
		Port       uint32
		OriginHost string
		OriginPort uint32
	}
	if err := ssh.Unmarshal(nch.ExtraData(), &target); err != nil || target.Port < 1 || target.Port > 65535 {
		nch.Reject(ssh.ConnectionFailed, "malformed direct-tcpip request")
		return
	}
	a, err := c.agent()
	if err != nil {
		nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	conn, err := a.DialTCP(c.ctx, target.Host, int(target.Port))
	if err != nil {
		nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	defer conn.Close()
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(ch, conn)
		ch.CloseWrite()
	}()
	io.Copy(conn, ch)
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		conn.Close()
	}
	wg.Wait()
}
