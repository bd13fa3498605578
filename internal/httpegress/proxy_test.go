package httpegress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/wire"
)

type fakeSandboxes struct{ sb Sandbox }

// fakeSecrets has one secret, "the-secret", that may go to hosts (over
// HTTP too unless httpsOnly).
type fakeSecrets struct {
	hosts     []string
	httpsOnly bool
}

func (f fakeSecrets) Open(context.Context, string, string) (SecretValue, error) {
	return SecretValue{Value: "the-secret", Hosts: f.hosts, AllowHTTP: !f.httpsOnly}, nil
}

func (f fakeSandboxes) HTTPSandbox(netip.Addr) (Sandbox, bool)             { return f.sb, true }
func (f fakeSandboxes) EgressAllows(src, dst netip.Addr, host string) bool { return true }
func (f fakeSandboxes) DialAllows(src, dst netip.Addr, host string) bool   { return true }

// front serves requests as the proxy would for one sandbox connection to
// the upstream server up (its original destination).
// Its secrets may go to secretHosts.
func front(t *testing.T, up *httptest.Server, rules *wire.HTTPEgress, secretHosts ...string) (*httptest.Server, *Log) {
	return frontWith(t, up, rules, fakeSecrets{hosts: secretHosts})
}

func frontWith(t *testing.T, up *httptest.Server, rules *wire.HTTPEgress, secrets Secrets) (*httptest.Server, *Log) {
	t.Helper()
	log := NewLog()
	p := New(Config{Sandboxes: fakeSandboxes{Sandbox{ID: "sb", HTTP: rules}}, Secrets: secrets, Log: log})
	cn := &conn{p: p, src: netip.MustParseAddr("10.0.0.2"), dst: netip.MustParseAddrPort(up.Listener.Addr().String()), scheme: "http"}
	t.Cleanup(cn.closeIdle)
	f := httptest.NewServer(http.HandlerFunc(cn.serveHTTP))
	t.Cleanup(f.Close)
	return f, log
}

// TestStreamsPassThrough: a response body reaches the sandbox as the
// server sends it, not once it ends.
func TestStreamsPassThrough(t *testing.T) {
	next := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-next
		io.WriteString(w, "second\n")
	}))
	defer up.Close()
	f, log := front(t, up, &wire.HTTPEgress{Rules: []wire.HTTPRule{{Host: "api.test", Action: "allow"}}})
	req, _ := http.NewRequest("GET", f.URL+"/stream", nil)
	req.Host = "api.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("first chunk: %q %v", line, err) // would block forever if buffered
	}
	close(next)
	if rest, _ := io.ReadAll(br); string(rest) != "second\n" {
		t.Fatalf("rest: %q", rest)
	}
	resp.Body.Close()
	waitLog(t, log, func(es []wire.EgressLogEntry) bool {
		return len(es) == 1 && es[0].Rule == 0 && es[0].Status == 200 && es[0].Bytes == int64(len("first\nsecond\n")) && es[0].Host == "api.test"
	})
}

// TestWebSocketPassesThrough: an upgrade is spliced both ways.
func TestWebSocketPassesThrough(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "want an upgrade", 400)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		buf := make([]byte, 4)
		io.ReadFull(brw, buf)
		c.Write([]byte(strings.ToUpper(string(buf))))
	}))
	defer up.Close()
	f, _ := front(t, up, nil)
	c, err := net.Dial("tcp", f.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	io.WriteString(c, "ping")
	buf := make([]byte, 4)
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "PING" {
		t.Fatalf("echo: %q %v", buf, err)
	}
}

// TestDenyAnswers403: a deny rule answers without going out.
func TestDenyAnswers403(t *testing.T) {
	hits := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer up.Close()
	f, log := front(t, up, &wire.HTTPEgress{Rules: []wire.HTTPRule{{Host: "*", PathPrefix: "/admin", Action: "deny"}}})
	req, _ := http.NewRequest("POST", f.URL+"/admin/x", strings.NewReader("body"))
	req.Host = "api.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "rule 0") || hits != 0 {
		t.Fatalf("deny: %d %q, upstream hits %d", resp.StatusCode, body, hits)
	}
	waitLog(t, log, func(es []wire.EgressLogEntry) bool {
		return len(es) == 1 && es[0].Action == "deny" && es[0].Status == 403 && es[0].Method == "POST"
	})
}

// waitLog waits for the log entry written when a request's handler returns.
func waitLog(t *testing.T, l *Log, ok func([]wire.EgressLogEntry) bool) {
	t.Helper()
	recent, next, stop := l.Follow("sb")
	defer stop()
	deadline := time.After(10 * time.Second)
	for !ok(recent) {
		select {
		case e := <-next:
			recent = append(recent, e)
		case <-deadline:
			t.Fatalf("the log has %+v", recent)
		}
	}
}

// TestInjectNeverReusesAnotherDecisionsConnection: over plain HTTP the
// sandbox chooses the Host header. A first request with the inject rule's
// host that no rule matches goes to the sandbox's own destination (an
// attacker's server); a second one on the same connection that the inject
// rule matches must not ride that upstream connection: the secret goes
// only to the rule's host, dialled by name.
func TestInjectNeverReusesAnotherDecisionsConnection(t *testing.T) {
	got := func(who string, to chan<- string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			to <- who + " " + r.URL.Path + " " + r.Header.Get("Authorization")
		}))
	}
	seen := make(chan string, 4)
	real := got("real", seen)
	defer real.Close()
	attacker := got("attacker", seen)
	defer attacker.Close()
	_, port, _ := net.SplitHostPort(real.Listener.Addr().String())
	host := "localhost:" + port // the rule's host: resolved by the proxy to the real server
	rules := &wire.HTTPEgress{Rules: []wire.HTTPRule{{Host: host, PathPrefix: "/inject", Action: wire.HTTPActionInject,
		Inject: []wire.HTTPInject{{Header: "Authorization", Secret: "apikey"}}}}}
	f, _ := front(t, attacker, rules, host) // the sandbox connected to the attacker
	c, err := net.Dial("tcp", f.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for _, path := range []string{"/open", "/inject"} {
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	want := []string{"attacker /open ", "real /inject the-secret"}
	for _, w := range want {
		if g := <-seen; g != w {
			t.Fatalf("upstream saw %q, want %q", g, w)
		}
	}
}

// TestInjectOnlyWhereTheSecretMayGo: at request time the proxy adds a
// secret only for a scheme, host and port the secret allows, whatever the
// rule matched; otherwise 403 and nothing goes out.
func TestInjectOnlyWhereTheSecretMayGo(t *testing.T) {
	hits := make(chan string, 8)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- r.Header.Get("Authorization")
	}))
	defer up.Close()
	rules := &wire.HTTPEgress{Rules: []wire.HTTPRule{{Host: "*", Action: wire.HTTPActionInject, // as stored before hosts existed
		Inject: []wire.HTTPInject{{Header: "Authorization", Secret: "apikey"}}}}}
	for _, c := range []struct {
		name    string
		secrets fakeSecrets
		host    string
	}{
		{"https only", fakeSecrets{hosts: []string{"api.test"}, httpsOnly: true}, "api.test"},
		{"no hosts (made before hosts)", fakeSecrets{}, "api.test"},
		{"another host", fakeSecrets{hosts: []string{"api.test"}}, "evil.test"},
		{"another port", fakeSecrets{hosts: []string{"api.test"}}, "api.test:8080"},
	} {
		f, _ := frontWith(t, up, rules, c.secrets)
		req, _ := http.NewRequest("GET", f.URL+"/x", nil)
		req.Host = c.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `secret "apikey" may not be sent`) {
			t.Errorf("%s: %d %q", c.name, resp.StatusCode, body)
		}
	}
	select {
	case h := <-hits:
		t.Fatalf("the server got a request (Authorization %q)", h)
	default:
	}
}

type brokenSecrets struct{}

func (brokenSecrets) Open(context.Context, string, string) (SecretValue, error) {
	return SecretValue{}, errors.New(`secret "apikey" of team red does not open with this daemon's key`)
}

// TestSecretThatDoesNotOpenSaysWhy: a 502 for a secret names why it did
// not open, in the answer and the log entry.
func TestSecretThatDoesNotOpenSaysWhy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the request went out") }))
	defer up.Close()
	rules := &wire.HTTPEgress{Rules: []wire.HTTPRule{{Host: "api.test", Action: wire.HTTPActionInject,
		Inject: []wire.HTTPInject{{Header: "Authorization", Secret: "apikey"}}}}}
	f, log := frontWith(t, up, rules, brokenSecrets{})
	req, _ := http.NewRequest("GET", f.URL+"/x", nil)
	req.Host = "api.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "does not open with this daemon's key") {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	waitLog(t, log, func(es []wire.EgressLogEntry) bool {
		return len(es) == 1 && strings.Contains(es[0].Error, "does not open")
	})
}
