package daemon

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"
)

// TestWarnPlaintext: only a non-loopback address without TLS is warned about.
func TestWarnPlaintext(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	for _, c := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:7423", false}, {"[::1]:7423", false}, {"0.0.0.0:7423", true}, {"[::]:7423", true}, {"10.1.2.3:7423", true}} {
		buf.Reset()
		addr, _ := net.ResolveTCPAddr("tcp", c.addr)
		warnPlaintext(addr)
		if got := strings.Contains(buf.String(), "without TLS"); got != c.warn {
			t.Errorf("%s: warned %v, want %v (%q)", c.addr, got, c.warn, buf.String())
		}
	}
}

// TestWithTLSBadFiles: a missing certificate fails the start with the flags' names.
func TestWithTLSBadFiles(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = withTLS(ln, Config{TLSCert: "/nonexistent/c.pem", TLSKey: "/nonexistent/k.pem"})
	if err == nil || !strings.Contains(err.Error(), "--tls-cert /nonexistent/c.pem") {
		t.Fatalf("got %v", err)
	}
}
