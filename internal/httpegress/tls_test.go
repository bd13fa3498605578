package httpegress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"
)

// clientHello captures the first flight of a real TLS client.
func clientHello(t *testing.T, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	go func() {
		tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: serverName == ""}).Handshake()
	}()
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64<<10)
	n, err := b.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b.Close()
	return buf[:n]
}

func TestPeekSNI(t *testing.T) {
	hello := clientHello(t, "api.example.com")
	br := bufio.NewReaderSize(bytes.NewReader(hello), maxHello+5)
	name, err := peekSNI(br)
	if err != nil || name != "api.example.com" {
		t.Fatalf("peekSNI = %q, %v", name, err)
	}
	// Peeking consumes nothing: the hello can be replayed upstream.
	rest := make([]byte, len(hello))
	if n, _ := br.Read(rest); !bytes.Equal(rest[:n], hello[:n]) {
		t.Fatal("peekSNI consumed bytes")
	}
	if name, err := peekSNI(bufio.NewReader(bytes.NewReader(clientHello(t, "")))); err != nil || name != "" {
		t.Fatalf("no SNI: %q, %v", name, err)
	}
	for _, bad := range [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n"), {0x16, 3, 1, 0, 5, 1, 2, 3, 4, 5}, {0x16, 3, 1, 0xff, 0xff}} {
		if _, err := peekSNI(bufio.NewReader(bytes.NewReader(bad))); err == nil {
			t.Errorf("peekSNI(%q) succeeded", bad)
		}
	}
}

func TestLeafMinting(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadCA(dir) // the same CA after a restart
	if err != nil || !bytes.Equal(again.PEM, ca.PEM) {
		t.Fatalf("reload: %v", err)
	}
	leaf, err := ca.Leaf("api.example.com")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{DNSName: "api.example.com", Roots: pool}); err != nil {
		t.Fatalf("leaf does not verify against the CA: %v", err)
	}
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{DNSName: "other.example.com", Roots: pool}); err == nil {
		t.Fatal("leaf verifies for another host")
	}
	if cached, _ := ca.Leaf("api.example.com"); cached != leaf {
		t.Fatal("leaf not cached")
	}
	// A real TLS handshake with the minted leaf.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Server(a, &tls.Config{Certificates: []tls.Certificate{*leaf}}).Handshake()
	if err := tls.Client(b, &tls.Config{ServerName: "api.example.com", RootCAs: pool}).Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}
}
