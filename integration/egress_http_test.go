package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/sbxhq/sbx/internal/webhook"
	"github.com/sbxhq/sbx/sdk"
)

// outsideListener listens on addr in the outside namespace (listenIn of git_test.go).
func outsideListener(t *testing.T, out *outsideNet, addr string) net.Listener {
	t.Helper()
	h, err := netns.GetFromName(out.ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return listenIn(t, h, addr)
}

// outsidePKI is a CA of the test's own and leaves it signs: the "real"
// certificates of the outside servers.
type outsidePKI struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newOutsidePKI(t *testing.T) *outsidePKI {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "outside test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &outsidePKI{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (p *outsidePKI) leaf(t *testing.T, host string) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// seen is what the outside servers received.
type seen struct {
	mu   sync.Mutex
	reqs []seenReq
}

type seenReq struct {
	tls              bool
	host, path, auth string
}

func (s *seen) handler(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, seenReq{tls: r.TLS != nil, host: r.Host, path: r.URL.Path, auth: r.Header.Get("Authorization")})
	s.mu.Unlock()
	io.WriteString(w, "outside saw "+r.URL.Path) // never echoes the headers
}

// last returns the last request the servers saw for path.
func (s *seen) last(path string) (seenReq, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.reqs) - 1; i >= 0; i-- {
		if s.reqs[i].path == path {
			return s.reqs[i], true
		}
	}
	return seenReq{}, false
}

// pyGet is a python program run in the sandbox: GET argv[1] with the
// system trust store, print "STATUS BODY".
const pyGet = `
import sys, urllib.request, urllib.error
# NAME=VALUE headers; a VALUE of *N is N letters (a header too big for argv).
hdrs = {k: ("a" * int(v[1:]) if v.startswith("*") else v) for k, v in (h.split("=", 1) for h in sys.argv[2:])}
req = urllib.request.Request(sys.argv[1], headers=hdrs)
try:
    r = urllib.request.urlopen(req, timeout=30)
    print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    try:
        body = e.read().decode()
    except OSError:  # a 431 closes the connection with the big header unread
        body = ""
    print(e.code, body)
except Exception as e:
    print("ERR", e)
`

func (d *daemon) pyGet(sb, url string, headers ...string) string {
	d.t.Helper()
	res, err := d.client.Exec(context.Background(), sb, sdk.ExecRequest{Cmd: append([]string{"python3", "-c", pyGet, url}, headers...), TimeoutSeconds: 60})
	if err != nil {
		d.t.Fatalf("exec python in %s: %v", sb, err)
	}
	return strings.TrimSpace(res.Stdout + res.Stderr)
}

// TestEgressHTTP: a sandbox's HTTP and HTTPS to servers in an "outside"
// namespace goes through the daemon's egress proxy under its http rules.
func TestEgressHTTP(t *testing.T) {
	ctx := context.Background()
	out := newOutside(t)
	names := newTestDNS(t)
	names.set("api.test", out.a)
	names.set("plain.test", out.b)
	pki := newOutsidePKI(t)
	caFile := filepath.Join(t.TempDir(), "outside-ca.pem")
	os.WriteFile(caFile, pki.pem, 0o644)

	var s seen
	plainLeaf := pki.leaf(t, "plain.test")
	for _, l := range []struct {
		addr string
		cert *tls.Certificate
	}{{out.a.String() + ":80", nil}, {out.a.String() + ":443", ptr(pki.leaf(t, "api.test"))}, {out.b.String() + ":443", &plainLeaf}} {
		ln := outsideListener(t, out, l.addr)
		if l.cert != nil {
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*l.cert}})
		}
		srv := &http.Server{Handler: http.HandlerFunc(s.handler)}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}

	// The operator's handler, on loopback: checks the signature, moves
	// /hook/... to /changed/...; another never answers.
	const hookSecret = "hook-signing-secret"
	var badSignatures int
	var hmu sync.Mutex
	hooks := http.NewServeMux()
	hooks.HandleFunc("/modify", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		// Signed with the sandbox's team's key (the operator's key makes
		// sandboxes of team default), not the daemon's secret itself.
		if webhook.Signature(webhook.TeamKey(hookSecret, "default"), r.Header.Get("X-Sbx-Timestamp"), body) != r.Header.Get("X-Sbx-Signature") {
			hmu.Lock()
			badSignatures++
			hmu.Unlock()
		}
		var req sdk.HTTPHandlerRequest
		json.Unmarshal(body, &req)
		json.NewEncoder(w).Encode(sdk.HTTPHandlerAnswer{Action: sdk.HandlerModify, Request: &sdk.HTTPHandlerModified{URL: strings.Replace(req.URL, "/hook/", "/changed/", 1)}})
	})
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	hooks.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	hookLn, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hookSrv := &http.Server{Handler: hooks}
	go hookSrv.Serve(hookLn)
	t.Cleanup(func() { hookSrv.Close() })
	hookURL := "http://" + hookLn.Addr().String()

	// The outside namespace and the handler on loopback are below the
	// network floor: the operator allows them.
	d := startDaemon(t, "--egress-allow-private", out.subnet.String()+",127.0.0.1", "--dns-upstream", names.addr, "--egress-upstream-ca", caFile, "--webhook-secret", hookSecret)
	importPython(t, d)

	secretValue := "sk-test-" + base64.RawURLEncoding.EncodeToString(big.NewInt(time.Now().UnixNano()).Bytes())
	if _, err := d.client.CreateSecret(ctx, sdk.CreateSecretRequest{Name: "apikey", Value: secretValue, SecretHosts: sdk.SecretHosts{Hosts: []string{"api.test"}, AllowHTTP: true}}); err != nil {
		t.Fatal(err)
	}
	list, err := d.client.ListSecrets(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "apikey" || list[0].Size != len(secretValue) {
		t.Fatalf("list secrets: %+v %v", list, err)
	}
	if raw, _ := json.Marshal(list); strings.Contains(string(raw), secretValue) {
		t.Fatal("the API returned a secret's value")
	}

	rules := &sdk.HTTPEgress{Rules: []sdk.HTTPRule{
		{Host: "api.test", PathPrefix: "/denied", Action: sdk.HTTPActionDeny},
		{Host: "api.test", PathPrefix: "/hook/", Action: sdk.HTTPActionForward, Forward: &sdk.HTTPForwardTo{URL: hookURL + "/modify"}},
		{Host: "api.test", PathPrefix: "/closed/", Action: sdk.HTTPActionForward, Forward: &sdk.HTTPForwardTo{URL: hookURL + "/hang", TimeoutSeconds: 1}},
		{Host: "api.test", PathPrefix: "/open/", Action: sdk.HTTPActionForward, Forward: &sdk.HTTPForwardTo{URL: hookURL + "/hang", TimeoutSeconds: 1, FailOpen: true}},
		{Host: "api.test", Action: sdk.HTTPActionInject, Inject: []sdk.HTTPInject{{Header: "Authorization", Secret: "apikey", Prefix: "Bearer "}}},
	}}
	d.create(sdk.CreateSandboxRequest{Name: "web", Image: "python", Egress: &sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: rules}})

	var inside []string // everything the sandbox printed
	get := func(url string, headers ...string) string {
		t.Helper()
		got := d.pyGet("web", url, headers...)
		inside = append(inside, got)
		return got
	}
	// inject, over HTTP and over HTTPS (decrypted: the sandbox trusts sbx's CA).
	for _, scheme := range []string{"http", "https"} {
		if got := get(scheme + "://api.test/data"); got != "200 outside saw /data" {
			t.Fatalf("%s inject: %q", scheme, got)
		}
		r, _ := s.last("/data")
		if r.auth != "Bearer "+secretValue || r.tls != (scheme == "https") {
			t.Fatalf("%s: the server saw %+v, want the injected secret", scheme, r)
		}
	}
	// deny
	if got := get("http://api.test/denied/x"); !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "rule 0") {
		t.Fatalf("deny: %q", got)
	}
	if _, ok := s.last("/denied/x"); ok {
		t.Fatal("a denied request reached the server")
	}
	// forward: the handler moves the path.
	if got := get("http://api.test/hook/a"); got != "200 outside saw /changed/a" {
		t.Fatalf("forward: %q", got)
	}
	// a hanging handler: fail-closed answers 502 after the timeout; fail-open passes.
	if got := get("http://api.test/closed/a"); !strings.HasPrefix(got, "502 ") || !strings.Contains(got, "no answer within 1s") {
		t.Fatalf("hanging handler, fail-closed: %q", got)
	}
	if got := get("http://api.test/open/a"); got != "200 outside saw /open/a" {
		t.Fatalf("hanging handler, fail-open: %q", got)
	}
	hmu.Lock()
	if badSignatures > 0 {
		t.Errorf("%d handler requests were not signed with the webhook secret", badSignatures)
	}
	hmu.Unlock()
	// A host no rule names is not decrypted: its certificate is the real one.
	realPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: plainLeaf.Certificate[0]}))
	certOf := func(host string) string {
		res, err := d.client.Exec(ctx, "web", sdk.ExecRequest{Cmd: []string{"python3", "-c", "import ssl,sys; print(ssl.get_server_certificate((sys.argv[1], 443)))", host}, TimeoutSeconds: 60})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("get the certificate of %s: %v %+v", host, err, res)
		}
		return strings.TrimSpace(res.Stdout)
	}
	if got := certOf("plain.test"); got != strings.TrimSpace(realPEM) {
		t.Fatalf("plain.test shows another certificate than its own:\n%s", got)
	}
	if got := certOf("api.test"); got == "" || strings.Contains(realPEM, got) {
		t.Fatal("api.test: want sbx's minted certificate")
	}
	// A huge header from the sandbox: a clean 431, nothing forwarded.
	if got := get("http://api.test/big", "X-Big=*204800"); strings.Fields(got + " x")[0] != "431" {
		t.Fatalf("huge header: %q", got)
	}
	if _, ok := s.last("/big"); ok {
		t.Fatal("a request with a huge header reached the server")
	}

	// Through the proxy the host's own services and other sandboxes stay
	// out of reach, as for the sandbox's own packets.
	gw, err := d.client.GetNetwork(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if got := get("http://" + gw.Gateway + "/"); strings.HasPrefix(got, "200 ") {
		t.Fatalf("the gateway answered through the proxy: %q", got)
	}

	// The secret is nowhere inside: env, files, /proc, what it printed.
	finder := `
import base64, os, sys
s = base64.b64decode(sys.argv[1])
hits = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for f in ("environ", "cmdline"):
            try:
                if s in open("/proc/%s/%s" % (pid, f), "rb").read(): hits.append("/proc/%s/%s" % (pid, f))
            except OSError: pass
for top in ("/etc", "/root", "/tmp", "/workspace", "/home", "/run", "/var", "/opt", "/srv"):
    for dirpath, _, files in os.walk(top):
        for f in files:
            p = os.path.join(dirpath, f)
            try:
                if os.path.isfile(p) and os.path.getsize(p) < (8 << 20) and s in open(p, "rb").read(): hits.append(p)
            except OSError: pass
print("hits:", hits)
`
	res, err := d.client.Exec(ctx, "web", sdk.ExecRequest{Cmd: []string{"python3", "-c", finder, base64.StdEncoding.EncodeToString([]byte(secretValue))}, TimeoutSeconds: 120})
	if err != nil || strings.TrimSpace(res.Stdout) != "hits: []" {
		t.Fatalf("looking for the secret inside: %v %q %q", err, res.Stdout, res.Stderr)
	}
	for _, o := range inside {
		if strings.Contains(o, secretValue) {
			t.Fatalf("the sandbox saw the secret: %q", o)
		}
	}

	// The log lists every request with its rule.
	entries, err := d.client.EgressLog(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		method, path string
		rule         int
		action       string
		status       int
	}{
		{"GET", "/data", 4, "inject", 200}, {"GET", "/data", 4, "inject", 200}, {"GET", "/denied/x", 0, "deny", 403},
		{"GET", "/hook/a", 1, "forward", 200}, {"GET", "/closed/a", 2, "error", 502}, {"GET", "/open/a", 3, "forward", 200},
		{"TLS", "", -1, "passthrough", 0},
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Method+" "+e.Host+e.Path+" "+e.Action)
		if strings.Contains(e.Error, secretValue) {
			t.Fatal("the log holds the secret")
		}
	}
	for _, w := range want {
		found := false
		for _, e := range entries {
			if e.Method == w.method && e.Path == w.path && e.Rule == w.rule && e.Action == w.action && (w.status == 0 || e.Status == w.status) {
				found = true
			}
		}
		if !found {
			t.Errorf("the log lacks %+v; it has:\n%s", w, strings.Join(got, "\n"))
		}
	}

	// The same entries follow as NDJSON, and the counters are in /metrics.
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	var followed int
	err = d.client.FollowEgressLog(fctx, "web", func(e sdk.EgressLogEntry) error {
		if followed++; followed == len(entries) {
			cancel()
		}
		return nil
	})
	cancel()
	if followed != len(entries) {
		t.Fatalf("follow gave %d entries, want %d: %v", followed, len(entries), err)
	}
	fams := scrapeMetrics(t, "http://"+d.addr+"/metrics", d.token)
	if v, ok := series(fams, "sbx_egress_http_requests_total", map[string]string{"action": "inject"}); !ok || v < 2 {
		t.Errorf("sbx_egress_http_requests_total{action=inject} = %v (%t), want at least 2", v, ok)
	}

	// Rules change live: api.test denied outright, on the running sandbox.
	if _, err := d.client.SetEgress(ctx, "web", sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: &sdk.HTTPEgress{Rules: []sdk.HTTPRule{{Host: "api.test", Action: sdk.HTTPActionDeny}}}}); err != nil {
		t.Fatal(err)
	}
	if got := get("http://api.test/data"); !strings.HasPrefix(got, "403 ") {
		t.Fatalf("after the live change: %q", got)
	}
	// Without an http section the sandbox's HTTP goes straight out again.
	if _, err := d.client.SetEgress(ctx, "web", sdk.EgressPolicy{Mode: sdk.EgressAllowAll}); err != nil {
		t.Fatal(err)
	}
	if got := get("http://api.test/direct"); got != "200 outside saw /direct" {
		t.Fatalf("without rules: %q", got)
	}
	if r, _ := s.last("/direct"); r.auth != "" {
		t.Fatalf("a secret went out without an inject rule: %+v", r)
	}

	// Bad input: 400s with clear codes, the policy unchanged.
	for name, c := range map[string]struct {
		p    sdk.EgressPolicy
		code sdk.Code
	}{
		"bad action":             {sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: &sdk.HTTPEgress{Rules: []sdk.HTTPRule{{Host: "a.test", Action: "explode"}}}}, sdk.CodeInvalidHTTPRule},
		"bad host":               {sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: &sdk.HTTPEgress{Rules: []sdk.HTTPRule{{Host: "a.*.test", Action: "allow"}}}}, sdk.CodeInvalidHTTPRule},
		"secret to another host": {sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: &sdk.HTTPEgress{Rules: []sdk.HTTPRule{{Host: "*", Action: "inject", Inject: []sdk.HTTPInject{{Header: "X-Key", Secret: "apikey"}}}}}}, sdk.CodeInvalidHTTPRule},
		"unknown secret":         {sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: &sdk.HTTPEgress{Rules: []sdk.HTTPRule{{Host: "a.test", Action: "inject", Inject: []sdk.HTTPInject{{Header: "X-Key", Secret: "nope"}}}}}}, sdk.CodeUnknownSecret},
	} {
		_, err := d.client.SetEgress(ctx, "web", c.p)
		var ae *sdk.APIError
		if !asAPIError(err, &ae) || ae.StatusCode != 400 || ae.Code != c.code {
			t.Errorf("%s: %v, want 400 %s", name, err, c.code)
		}
	}
	if info, err := d.client.GetNetwork(ctx, "web"); err != nil || info.Egress.HTTP != nil {
		t.Fatalf("a refused change changed the policy: %+v %v", info, err)
	}
	if _, err := d.client.CreateSecret(ctx, sdk.CreateSecretRequest{Name: "bad/name", Value: "x", SecretHosts: sdk.SecretHosts{Hosts: []string{"api.test"}}}); !isCode(err, sdk.CodeInvalidSecret) {
		t.Errorf("bad secret name: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func asAPIError(err error, ae **sdk.APIError) bool {
	e, ok := err.(*sdk.APIError)
	*ae = e
	return ok
}

func isCode(err error, code sdk.Code) bool {
	var ae *sdk.APIError
	return asAPIError(err, &ae) && ae.Code == code
}

// TestEgressHTTPGVisor: a class gvisor sandbox's HTTP goes through the
// proxy too (gVisor's network stack sends from the sandbox's veth, where
// the redirect applies), and an inject rule reaches the server.
func TestEgressHTTPGVisor(t *testing.T) {
	ctx := context.Background()
	out := newOutside(t)
	names := newTestDNS(t)
	names.set("api.test", out.a)
	var s seen
	srv := &http.Server{Handler: http.HandlerFunc(s.handler)}
	go srv.Serve(outsideListener(t, out, out.a.String()+":80"))
	t.Cleanup(func() { srv.Close() })

	d := gvisorDaemon(t, "--egress-allow-private", out.subnet.String(), "--dns-upstream", names.addr)
	if _, err := d.client.CreateSecret(ctx, sdk.CreateSecretRequest{Name: "apikey", Value: "gvisor-secret-value", SecretHosts: sdk.SecretHosts{Hosts: []string{"api.test"}, AllowHTTP: true}}); err != nil {
		t.Fatal(err)
	}
	d.create(sdk.CreateSandboxRequest{Name: "gv", Class: "gvisor", Egress: &sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: &sdk.HTTPEgress{Rules: []sdk.HTTPRule{
		{Host: "api.test", Action: sdk.HTTPActionInject, Inject: []sdk.HTTPInject{{Header: "Authorization", Secret: "apikey"}}},
	}}}})
	d.mustFetch("gv", "http://api.test/gv", "outside saw /gv")
	if r, _ := s.last("/gv"); r.auth != "gvisor-secret-value" {
		t.Fatalf("the server saw %+v, want the injected secret", r)
	}
	entries, err := d.client.EgressLog(ctx, "gv")
	if err != nil || len(entries) != 1 || entries[0].Rule != 0 || entries[0].Action != sdk.HTTPActionInject || entries[0].Status != 200 {
		t.Fatalf("log: %+v %v", entries, err)
	}
}
