package httpegress

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/wire"
)

// Limits of the http section of an egress policy.
const (
	maxRules          = 256
	maxInjects        = 16
	maxForwardTimeout = 60
	defaultTimeout    = 5
)

// ParseRules checks the http section of an egress policy and returns it
// normalised for the store (hosts and methods in canonical case). nil
// stays nil: the sandbox's HTTP is not proxied.
func ParseRules(h *wire.HTTPEgress) (*wire.HTTPEgress, error) {
	if h == nil {
		return nil, nil
	}
	if len(h.Rules) > maxRules {
		return nil, invalid("an http section takes at most %d rules", maxRules)
	}
	out := &wire.HTTPEgress{Rules: []wire.HTTPRule{}}
	for i, r := range h.Rules {
		n, err := parseRule(r)
		if e, ok := err.(*errdefs.Error); ok {
			e.Message = fmt.Sprintf("http rule %d: %s", i, e.Message)
			return nil, e
		}
		out.Rules = append(out.Rules, n)
	}
	return out, nil
}

func invalid(format string, a ...any) error {
	return errdefs.Invalid(wire.CodeInvalidHTTPRule, format, a...)
}

func parseRule(r wire.HTTPRule) (wire.HTTPRule, error) {
	host, err := parseHostPattern(r.Host)
	if err != nil {
		return r, err
	}
	r.Host = host
	r.Method = strings.ToUpper(r.Method)
	for _, c := range r.Method {
		if c < 'A' || c > 'Z' {
			return r, invalid("method %q: use letters only, such as GET or POST", r.Method)
		}
	}
	if r.PathPrefix != "" && !strings.HasPrefix(r.PathPrefix, "/") {
		return r, invalid("pathPrefix %q must start with /", r.PathPrefix)
	}
	has := map[string]bool{wire.HTTPActionInject: len(r.Inject) > 0, wire.HTTPActionRewrite: r.Rewrite != nil, wire.HTTPActionForward: r.Forward != nil}
	for action, set := range has {
		if set && action != r.Action {
			return r, invalid("%q goes with action %q only, not %q", action, action, r.Action)
		}
	}
	switch r.Action {
	case wire.HTTPActionAllow, wire.HTTPActionDeny:
	case wire.HTTPActionInject:
		if len(r.Inject) == 0 || len(r.Inject) > maxInjects {
			return r, invalid("action inject needs 1 to %d entries in inject", maxInjects)
		}
		for _, in := range r.Inject {
			if !validHeaderName(in.Header) {
				return r, invalid("inject header %q is not a valid header name", in.Header)
			}
			if err := CheckSecretName(in.Secret); err != nil {
				return r, err
			}
			if strings.ContainsAny(in.Prefix, "\r\n") {
				return r, invalid("inject prefix must not contain line breaks")
			}
		}
	case wire.HTTPActionRewrite:
		rw := r.Rewrite
		if rw == nil || *rw == (wire.HTTPRewrite{}) {
			return r, invalid("action rewrite needs rewrite with scheme, host or pathPrefix")
		}
		if rw.Scheme != "" && rw.Scheme != "http" && rw.Scheme != "https" {
			return r, invalid("rewrite scheme %q: use http or https", rw.Scheme)
		}
		if rw.Host != "" {
			if u, err := url.Parse("http://" + rw.Host); err != nil || u.Host != rw.Host || u.Hostname() == "" {
				return r, invalid("rewrite host %q: give a name or name:port", rw.Host)
			}
		}
		if rw.PathPrefix != "" && !strings.HasPrefix(rw.PathPrefix, "/") {
			return r, invalid("rewrite pathPrefix %q must start with /", rw.PathPrefix)
		}
	case wire.HTTPActionForward:
		f := r.Forward
		if f == nil {
			return r, invalid("action forward needs forward with a url")
		}
		u, err := url.Parse(f.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return r, invalid("forward url %q: give an http or https URL", f.URL)
		}
		if err := netfloor.Default().CheckURL(f.URL); err != nil {
			return r, invalid("forward url %q: %v", f.URL, err)
		}
		if f.TimeoutSeconds < 0 || f.TimeoutSeconds > maxForwardTimeout {
			return r, invalid("forward timeoutSeconds %d: from 1 to %d (0 for %d)", f.TimeoutSeconds, maxForwardTimeout, defaultTimeout)
		}
		fc := *f
		if fc.TimeoutSeconds == 0 {
			fc.TimeoutSeconds = defaultTimeout
		}
		r.Forward = &fc
	default:
		return r, invalid("unknown action %q: use allow, deny, inject, rewrite or forward", r.Action)
	}
	return r, nil
}

// parseHostPattern checks "*", "name", "*.name", optionally with ":port".
func parseHostPattern(s string) (string, error) {
	h := strings.TrimSuffix(strings.ToLower(s), ".")
	if h == "*" {
		return h, nil
	}
	rest := strings.TrimPrefix(h, "*.")
	if name, port, ok := strings.Cut(rest, ":"); ok {
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return "", invalid("host %q: bad port", s)
		}
		rest = name
	}
	if rest == "" || len(rest) > 253 {
		return "", invalid("host %q: give a name such as api.example.com, *.example.com or *", s)
	}
	for _, label := range strings.Split(rest, ".") {
		if label == "" || len(label) > 63 {
			return "", invalid("host %q: labels must be 1 to 63 characters", s)
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", invalid("host %q: use letters, digits, '-' and '_'; '*' only as \"*\" or a leading \"*.\"", s)
			}
		}
	}
	return h, nil
}

func validHeaderName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// CheckSecretName checks a secret's name: 1 to 64 of A-Z a-z 0-9 _ - .
func CheckSecretName(name string) error {
	ok := name != "" && len(name) <= 64
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			ok = false
		}
	}
	if !ok {
		return errdefs.Invalid(wire.CodeInvalidSecret, "secret name %q: use 1 to 64 letters, digits, '_', '-' and '.'", name)
	}
	return nil
}

// SecretNames lists the secrets the rules of h use.
func SecretNames(h *wire.HTTPEgress) []string {
	var out []string
	if h == nil {
		return nil
	}
	for _, r := range h.Rules {
		for _, in := range r.Inject {
			out = append(out, in.Secret)
		}
	}
	return out
}

// hostMatches reports whether host (lower-case, maybe with :port) matches
// pattern. A pattern without a port matches the name on any port.
func hostMatches(pattern, host string) bool {
	if pattern == "*" {
		return true
	}
	if !strings.Contains(pattern, ":") {
		if h, _, ok := strings.Cut(host, ":"); ok {
			host = h
		}
	}
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	return host == pattern
}

// match returns the index of the first rule matching the request, or -1.
func match(h *wire.HTTPEgress, method, host, path string) int {
	if h == nil {
		return -1
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for i, r := range h.Rules {
		if !hostMatches(r.Host, host) {
			continue
		}
		if r.Method != "" && r.Method != method {
			continue
		}
		if r.PathPrefix != "" && !strings.HasPrefix(path, r.PathPrefix) {
			continue
		}
		return i
	}
	return -1
}

// namesHost reports whether a rule names host (an SNI): then its HTTPS is
// decrypted so the rules can see its requests.
func namesHost(h *wire.HTTPEgress, host string) bool {
	if h == nil || host == "" {
		return false
	}
	host = strings.ToLower(host)
	for _, r := range h.Rules {
		if r.Host != "*" && hostMatches(r.Host, host) {
			return true
		}
	}
	return false
}
