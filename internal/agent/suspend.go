package agent

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/sbxhq/sbx/internal/agentapi"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Suspending the agent for a gVisor checkpoint.
//
// gVisor cannot save a unix socket that is bound on the host, and the agent's
// socket is one (runsc --host-uds): a checkpoint taken while the agent listens
// or holds a connection fails and ends the instance. So before a checkpoint
// the daemon calls POST /suspend; the agent answers, then closes its listener
// and every connection and removes the socket file, which tells the daemon it
// may checkpoint. After a restore the daemon creates the file WakeFile next to
// the socket (or sends SIGUSR1) and the agent listens again, in whatever run
// directory the restored instance has.
//
// If some other process in the sandbox holds a unix socket bound on the
// sandbox's disk (also a host socket under runsc), the checkpoint would fail
// all the same; then /suspend answers 409 CHECKPOINT_REFUSED and the agent
// goes on serving.

// suspendable is the agent's listener. Its socket can be closed and opened
// again while the http.Server serving it keeps running.
type suspendable struct {
	sock     string
	accepted chan net.Conn
	done     chan struct{} // closed by Close
	once     sync.Once

	mu   sync.Mutex
	l    *net.UnixListener // nil while suspended or closed
	open map[*trackedConn]struct{}
}

// listenSuspendable listens on sock like listen; POST /suspend closes the
// socket and SIGUSR1 or WakeFile opens it again.
func listenSuspendable(sock string) (net.Listener, error) {
	l, err := listen(sock)
	if err != nil {
		return nil, err
	}
	s := &suspendable{
		sock:     sock,
		accepted: make(chan net.Conn),
		done:     make(chan struct{}),
		l:        l,
		open:     map[*trackedConn]struct{}{},
	}
	go s.acceptFrom(l)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(sigs)
		for {
			select {
			case <-s.done:
				return
			case <-sigs:
				s.resume()
			}
		}
	}()
	return s, nil
}

// acceptFrom hands the connections of one underlying listener to Accept
// until that listener is closed.
func (s *suspendable) acceptFrom(l *net.UnixListener) {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors
			continue
		}
		tc := s.track(c, l)
		if tc == nil {
			continue
		}
		select {
		case s.accepted <- tc:
		case <-s.done:
			tc.Close()
			return
		}
	}
}

// track records an open connection; it closes and drops one accepted just as
// its listener was suspended.
func (s *suspendable) track(c net.Conn, from *net.UnixListener) *trackedConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.l != from {
		c.Close()
		return nil
	}
	tc := &trackedConn{Conn: c, s: s}
	s.open[tc] = struct{}{}
	return tc
}

func (s *suspendable) Accept() (net.Conn, error) {
	select {
	case c := <-s.accepted:
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

// Close stops listening for good. Open connections are the server's to close.
func (s *suspendable) Close() error {
	s.once.Do(func() { close(s.done) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.l != nil {
		s.l.Close()
		s.l = nil
	}
	return nil
}

func (s *suspendable) Addr() net.Addr { return &net.UnixAddr{Name: s.sock, Net: "unix"} }

func (s *suspendable) wakeFile() string {
	return filepath.Join(filepath.Dir(s.sock), agentapi.WakeFile)
}

// suspendAddr is the local address of the agent's connections; through it a
// request handler finds the listener (see handleSuspend).
type suspendAddr struct {
	net.UnixAddr
	s *suspendable
}

// handleSuspend is POST /suspend: answer, then close the socket and every
// connection (see suspend).
func (s *server) handleSuspend(w http.ResponseWriter, r *http.Request) {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(*suspendAddr)
	if !ok {
		writeError(w, errdefs.Conflict(wire.CodeSuspendUnsupported, "this agent's listener cannot be suspended"))
		return
	}
	if reason := hostSockets(filepath.Dir(addr.s.sock)); reason != "" {
		writeError(w, errdefs.Conflict(wire.CodeCheckpointRefused, "%s", reason))
		return
	}
	// Whole once flushed (httpjson.Write sends its length): suspend may
	// close the connection before this handler returns.
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	go addr.s.suspend()
}

// suspend closes the socket and every connection, then removes the socket
// file to tell the daemon it may checkpoint, and waits to be woken.
func (s *suspendable) suspend() {
	os.Remove(s.wakeFile()) // a stale one would wake us at once
	s.mu.Lock()
	var gone []string // the sockets being closed, as /proc/self/fd shows them
	if s.l != nil {
		gone = append(gone, socketID(s.l))
		s.l.Close()
		s.l = nil
	}
	for c := range s.open {
		gone = append(gone, socketID(c.Conn))
		c.Conn.Close()
	}
	clear(s.open)
	s.mu.Unlock()
	// Close returns before the runtime has closed the descriptor of a
	// connection that was busy; the checkpoint must not see any of them.
	deadline := time.Now().Add(2 * time.Second)
	for stillOpen(gone) && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	if err := os.Remove(s.sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		logf("suspend: remove socket: %v", err)
	}
	// Poll for the wake file. The checkpoint catches us here; the restored
	// instance goes on polling until the daemon creates it.
	for {
		select {
		case <-s.done:
			return
		case <-time.After(5 * time.Millisecond):
		}
		if _, err := os.Lstat(s.wakeFile()); err == nil {
			s.resume()
		}
		s.mu.Lock()
		listening := s.l != nil
		s.mu.Unlock()
		if listening {
			return
		}
	}
}

// resume listens again; it does nothing if the agent already listens.
func (s *suspendable) resume() {
	select {
	case <-s.done:
		return
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.l != nil {
		return
	}
	os.Remove(s.wakeFile())
	l, err := listen(s.sock)
	if err != nil {
		logf("resume: %v", err)
		return
	}
	s.l = l
	go s.acceptFrom(l)
}

type trackedConn struct {
	net.Conn
	s *suspendable
}

func (c *trackedConn) LocalAddr() net.Addr {
	return &suspendAddr{UnixAddr: net.UnixAddr{Name: c.s.sock, Net: "unix"}, s: c.s}
}

func (c *trackedConn) Close() error {
	c.s.mu.Lock()
	delete(c.s.open, c)
	c.s.mu.Unlock()
	return c.Conn.Close()
}

// socketID names the socket of c as /proc/self/fd does ("socket:[123]").
func socketID(c any) string {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return ""
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return ""
	}
	var id string
	raw.Control(func(fd uintptr) {
		id, _ = os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	})
	return id
}

// stillOpen reports whether any descriptor of this process is one of the
// sockets ids.
func stillOpen(ids []string) bool {
	want := map[string]bool{}
	for _, id := range ids {
		if id != "" {
			want[id] = true
		}
	}
	if len(want) == 0 {
		return false
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && want[target] {
			return true
		}
	}
	return false
}

// hostSockets names a unix socket bound on a file system other than tmpfs
// (one the sandbox shares with the host), outside the agent's own socket
// directory; "" if there is none. Abstract sockets and sockets on tmpfs
// live inside gVisor and are saved with it.
func hostSockets(ownDir string) string {
	f, err := os.Open(procNetUnix)
	if err != nil {
		return ""
	}
	defer f.Close()
	return boundOnDisk(f, readMounts(), ownDir)
}

// procNetUnix lists the unix sockets of the agent's network namespace; tests,
// which run on the host, point it elsewhere.
var procNetUnix = "/proc/net/unix"

// boundOnDisk is hostSockets over a /proc/net/unix table and mounts.
func boundOnDisk(table io.Reader, mounts []mount, ownDir string) string {
	sc := bufio.NewScanner(table)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		p := strings.Join(fields[7:], " ")
		if strings.HasPrefix(p, "@") || p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return fmt.Sprintf("a process holds a unix socket bound at the relative path %q, which may be on the sandbox's disk: gVisor cannot checkpoint a socket there; close it first", p)
		}
		if filepath.Dir(p) == ownDir {
			continue
		}
		if fsType(mounts, p) != "tmpfs" {
			return fmt.Sprintf("a process holds a unix socket bound at %s, on the sandbox's disk: gVisor cannot checkpoint such a socket; close it first, or bind it under /tmp, /dev/shm or an abstract address", p)
		}
	}
	return ""
}

type mount struct{ dir, fstype string }

func readMounts() []mount {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	var out []mount
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 3 {
			out = append(out, mount{unescapeMountinfo(f[1]), f[2]})
		}
	}
	return out
}

// fsType returns the type of the file system p is on: the last-listed mount
// with the longest mount point that contains p.
func fsType(mounts []mount, p string) string {
	best, typ := -1, ""
	for _, m := range mounts {
		if (p == m.dir || strings.HasPrefix(p, strings.TrimSuffix(m.dir, "/")+"/")) && len(m.dir) >= best {
			best, typ = len(m.dir), m.fstype
		}
	}
	return typ
}

// unescapeMountinfo decodes the octal escapes (\040 for space) of mount paths.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var n int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &n); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// handleSync flushes written file data to the files' backing store
// (POST /sync). Under gVisor that is the host: gVisor keeps written data in
// its own page cache for a while, and a snapshot copies the host files.
func (s *server) handleSync(w http.ResponseWriter, r *http.Request) {
	syscall.Sync()
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}
