package httpegress

import (
	"bufio"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sbxhq/sbx/wire"
)

// serveHTTP applies the sandbox's rules to one request and answers it.
func (cn *conn) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := cn.p
	start := time.Now()
	e := wire.EgressLogEntry{Time: start, Scheme: cn.scheme, Method: r.Method, Host: r.Host, Path: r.URL.Path, Rule: -1, Action: wire.HTTPActionAllow}
	rw := &countingWriter{ResponseWriter: w}
	sb, ok := p.cfg.Sandboxes.HTTPSandbox(cn.src)
	defer func() {
		e.Status, e.Bytes, e.DurationMs = rw.status, rw.bytes, ms(time.Since(start))
		if sb.ID != "" {
			p.record(sb.ID, e)
		}
	}()
	fail := func(status int, action, format string, a ...any) {
		e.Action, e.Error = action, fmt.Sprintf(format, a...)
		http.Error(rw, "sbx egress: "+e.Error, status)
	}
	if !ok {
		fail(http.StatusBadGateway, "error", "this sandbox is no longer proxied")
		return
	}
	host := r.Host
	if cn.scheme == "https" && !strings.EqualFold(hostOnly(host), cn.sni) {
		// The rules matched the connection by its server name; a request
		// for another host on it would dodge them.
		fail(http.StatusMisdirectedRequest, "deny", "host %q does not match the TLS server name %q", host, cn.sni)
		return
	}
	if cn.scheme == "http" && !p.cfg.Sandboxes.EgressAllows(cn.src, cn.dst.Addr(), hostOnly(host)) {
		fail(http.StatusForbidden, "deny", "the egress policy of this sandbox refuses host %s", hostOnly(host))
		return
	}
	// The outbound request: by default to where the sandbox was going.
	r.URL.Scheme, r.URL.Host = cn.scheme, host
	dialTo := cn.dst.String()
	idx := match(sb.HTTP, r.Method, host, r.URL.Path)
	e.Rule = idx
	if idx >= 0 {
		rule := sb.HTTP.Rules[idx]
		e.Action = rule.Action
		switch rule.Action {
		case wire.HTTPActionDeny:
			fail(http.StatusForbidden, wire.HTTPActionDeny, "rule %d (host %s) of this sandbox's egress policy denies %s %s%s", idx, rule.Host, r.Method, host, r.URL.Path)
			return
		case wire.HTTPActionInject:
			for _, in := range rule.Inject {
				sec, err := p.cfg.Secrets.Open(auth.System(r.Context(), "egress inject"), sb.Team, in.Secret) // the sandbox's own team, named
				if err != nil {
					p.cfg.Logger.Warn("egress proxy: a secret did not open", "sandbox", sb.ID, "team", sb.Team, "rule", idx, "secret", in.Secret, "err", err)
					fail(http.StatusBadGateway, "error", "rule %d: secret %q is not available: %v", idx, in.Secret, err)
					return
				}
				// Checked here as well as when the rule was written: the
				// secret's hosts may have changed since, and the rule's
				// pattern leaves the scheme and port to the request.
				if !SecretAllows(sec, cn.scheme, host) {
					fail(http.StatusForbidden, "deny", "rule %d: secret %q may not be sent to %s://%s (%s)", idx, in.Secret, cn.scheme, host, hostsNote(sec))
					return
				}
				r.Header.Set(in.Header, in.Prefix+sec.Value)
			}
			// Dial the name, not the address the sandbox chose: over plain
			// HTTP the Host header is the sandbox's word alone, and a
			// secret must go only where the name really leads.
			dialTo = ""
		case wire.HTTPActionRewrite:
			rewrite(r, rule)
			if r.URL.Host != host || r.URL.Scheme != cn.scheme {
				dialTo = ""
			}
		case wire.HTTPActionForward:
			done, moved := cn.forward(rw, r, sb, idx, rule.Forward, &e)
			if done {
				return
			}
			if moved {
				dialTo = ""
			}
		}
	}
	r.Host = r.URL.Host
	tr := cn.transportFor(upstreamKey{dialTo: dialTo, scheme: r.URL.Scheme, host: strings.ToLower(r.URL.Host), rule: idx})
	cn.upstreamProxy(tr, func(err error) { e.Error = err.Error() }).ServeHTTP(rw, r)
}

// hostsNote says, in a refusal, where a secret may go.
func hostsNote(sec SecretValue) string {
	if len(sec.Hosts) == 0 {
		return "it has no hosts yet: set them with sbx secret hosts"
	}
	note := "its hosts: " + strings.Join(sec.Hosts, ", ")
	if !sec.AllowHTTP {
		note += "; HTTPS only"
	}
	return note
}

func rewrite(r *http.Request, rule wire.HTTPRule) {
	rw := rule.Rewrite
	if rw.Scheme != "" {
		r.URL.Scheme = rw.Scheme
	}
	if rw.Host != "" {
		r.URL.Host = rw.Host
	}
	if rw.PathPrefix != "" {
		rest := strings.TrimPrefix(r.URL.Path, rule.PathPrefix)
		r.URL.Path = strings.TrimSuffix(rw.PathPrefix, "/") + "/" + strings.TrimPrefix(rest, "/")
		r.URL.RawPath = ""
	}
}

// hostOnly is host without its port, lower-case.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// countingWriter records the status and body bytes of an answer. Unwrap
// lets http.ResponseController reach the connection (flushes, upgrades).
type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *countingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return http.NewResponseController(w.ResponseWriter).Hijack()
}
