package httpegress

import (
	"bufio"
	"context"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// serveHTTP applies the sandbox's rules to one request and answers it.
func (cn *conn) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := cn.p
	start := time.Now()
	e := sdk.EgressLogEntry{Time: start, Scheme: cn.scheme, Method: r.Method, Host: r.Host, Path: r.URL.Path, Rule: -1, Action: sdk.HTTPActionAllow}
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
		case sdk.HTTPActionDeny:
			fail(http.StatusForbidden, sdk.HTTPActionDeny, "rule %d (host %s) of this sandbox's egress policy denies %s %s%s", idx, rule.Host, r.Method, host, r.URL.Path)
			return
		case sdk.HTTPActionInject:
			for _, in := range rule.Inject {
				v, err := p.cfg.Secrets.Value(auth.System(r.Context(), "egress inject"), sb.Team, in.Secret) // the sandbox's own team, named
				if err != nil {
					fail(http.StatusBadGateway, "error", "rule %d: secret %q is not available", idx, in.Secret)
					return
				}
				r.Header.Set(in.Header, in.Prefix+v)
			}
			// Dial the name, not the address the sandbox chose: over plain
			// HTTP the Host header is the sandbox's word alone, and a
			// secret must go only where the name really leads.
			dialTo = ""
		case sdk.HTTPActionRewrite:
			rewrite(r, rule)
			if r.URL.Host != host || r.URL.Scheme != cn.scheme {
				dialTo = ""
			}
		case sdk.HTTPActionForward:
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
	ctx := context.WithValue(r.Context(), dialKey{}, dialTo)
	cn.upstreamProxy(func(err error) { e.Error = err.Error() }).ServeHTTP(rw, r.WithContext(ctx))
}

func rewrite(r *http.Request, rule sdk.HTTPRule) {
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
