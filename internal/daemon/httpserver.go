package daemon

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// HTTPLimits bound what clients of the API can hold of the daemon without a
// key: idle connections are closed, and no client address (nor all of them
// together) can take every file descriptor.
//
// There is no read or write timeout on whole requests: exec streams, log
// and event follows, watches and PTY WebSockets run for hours.
type HTTPLimits struct {
	HeaderTimeout time.Duration // to read a request's headers; default 10 s
	IdleTimeout   time.Duration // a keep-alive connection waiting for its next request; default 2 min
	MaxConns      int           // open connections in all; 0 default, <0 none
	MaxClientConn int           // open connections per client address; 0 default, <0 none
}

// Defaults of HTTPLimits. A Kubernetes gateway or a reverse proxy comes from
// one address: raise MaxClientConn for it.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxConns      = 16384
	DefaultMaxClientConn = 1024
)

func (l HTTPLimits) withDefaults() HTTPLimits {
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultHeaderTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxClientConn == 0 {
		l.MaxClientConn = DefaultMaxClientConn
	}
	return l
}

// newHTTPServer is the API's server with the timeouts of lim.
func newHTTPServer(h http.Handler, lim HTTPLimits) *http.Server {
	lim = lim.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.HeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
	}
}

// limitConns wraps the API's listener so that it holds at most lim's
// connections: one past a cap is closed as soon as it is accepted.
func limitConns(ln net.Listener, lim HTTPLimits) net.Listener {
	lim = lim.withDefaults()
	return &limitListener{Listener: ln, max: lim.MaxConns, perClient: lim.MaxClientConn, byAddr: map[netip.Addr]int{}}
}

type limitListener struct {
	net.Listener
	max, perClient int // <0: no limit

	mu       sync.Mutex
	total    int
	byAddr   map[netip.Addr]int
	lastWarn time.Time
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := clientAddr(c.RemoteAddr())
		if l.acquire(addr) {
			return &limitConn{Conn: c, release: func() { l.release(addr) }}, nil
		}
		c.Close()
	}
}

func (l *limitListener) acquire(addr netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if (l.max >= 0 && l.total >= l.max) || (l.perClient >= 0 && l.byAddr[addr] >= l.perClient) {
		if now := time.Now(); now.Sub(l.lastWarn) > 10*time.Second { // one line, not one per connection
			l.lastWarn = now
			slog.Warn("refusing API connections over the limit", "client", addr, "clientConns", l.byAddr[addr], "conns", l.total)
		}
		return false
	}
	l.total++
	l.byAddr[addr]++
	return true
}

func (l *limitListener) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// clientAddr is the address a connection comes from; unix sockets and the
// like share the zero address.
func clientAddr(a net.Addr) netip.Addr {
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// limitConn gives its slot back once, when closed (also after a hijack:
// the WebSocket owner closes the same conn).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// ReadFrom keeps the connection's own ReadFrom reachable, so net/http sends
// a file with sendfile(2) (a download, internal/api/files_fd.go).
func (c *limitConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// raiseFileLimit lifts the daemon's open-files limit as far as the kernel
// allows (fs.nr_open): every client connection, sandbox socket and log is
// a file, and the usual limits are far below what the connection caps allow.
func raiseFileLimit() {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return
	}
	want := rl.Max
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n > want {
			want = n
		}
	}
	nl := syscall.Rlimit{Cur: want, Max: want}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nl); err != nil {
		// Not allowed to raise the hard limit: take the soft one up to it.
		nl = syscall.Rlimit{Cur: rl.Max, Max: rl.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nl); err != nil {
			slog.Warn("raise the open-files limit", "err", err)
		}
	}
}
