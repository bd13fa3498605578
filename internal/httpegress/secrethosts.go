package httpegress

import (
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// A secret names the hosts it may be sent to: "api.example.com" or
// "*.example.com" (the names below it), optionally with ":port". Without a
// port a host means port 443 over HTTPS, and port 80 over plain HTTP,
// which only a secret with allowHttp may use. "*" is refused: a secret
// that may go anywhere is one any egress editor can send to their server.

// maxSecretHosts bounds a secret's hosts.
const maxSecretHosts = 32

// SecretValue is an opened secret and where it may be sent.
type SecretValue struct {
	Value     string
	Hosts     []string
	AllowHTTP bool
}

// ParseSecretHosts checks a secret's hosts and returns them normalised.
func ParseSecretHosts(name string, hosts []string) ([]string, error) {
	bad := func(format string, a ...any) error {
		return errdefs.Invalid(wire.CodeInvalidSecret, "secret %q: "+format, append([]any{name}, a...)...)
	}
	if len(hosts) == 0 || len(hosts) > maxSecretHosts {
		return nil, bad("give 1 to %d hosts it may be sent to (hosts; sbx secret create --host api.example.com)", maxSecretHosts)
	}
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if strings.TrimSpace(h) == "*" {
			return nil, bad("host \"*\": name the hosts the secret may be sent to")
		}
		n, err := parseHostPattern(h)
		if err != nil {
			return nil, bad("%s", err.(*errdefs.Error).Message)
		}
		out = append(out, n)
	}
	return out, nil
}

// splitPort is pattern's name and port ("" when it has none).
func splitPort(pattern string) (string, string) {
	name, port, _ := strings.Cut(pattern, ":")
	return name, port
}

// nameCovers reports whether the secret's host name s (maybe "*.d")
// covers the rule's host name r (maybe "*.d" too).
func nameCovers(s, r string) bool {
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		return strings.HasSuffix(r, "."+rest)
	}
	return s == r
}

// SecretCoversRule reports whether a rule for host pattern rule (as
// ParseRules leaves it) sends the secret only to names its hosts allow.
// A port the rule names must be one the secret allows; the scheme and a
// port the rule leaves open are checked per request (SecretAllows).
func SecretCoversRule(sec SecretValue, rule string) bool {
	if rule == "*" {
		return false
	}
	rn, rp := splitPort(rule)
	for _, h := range sec.Hosts {
		sn, sp := splitPort(h)
		if !nameCovers(sn, rn) {
			continue
		}
		if rp == "" || rp == sp || sp == "" && (rp == "443" || rp == "80" && sec.AllowHTTP) {
			return true
		}
	}
	return false
}

// SecretAllows reports whether the secret may be sent to host (a
// request's host, maybe with :port) over scheme.
func SecretAllows(sec SecretValue, scheme, host string) bool {
	if scheme != "https" && !(scheme == "http" && sec.AllowHTTP) {
		return false
	}
	name, port := splitPort(strings.ToLower(host))
	name = strings.TrimSuffix(name, ".")
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	if _, err := strconv.Atoi(port); err != nil {
		return false
	}
	for _, h := range sec.Hosts {
		sn, sp := splitPort(h)
		if sp == "" {
			sp = map[string]string{"https": "443", "http": "80"}[scheme]
		}
		if sp == port && (sn == name || strings.HasPrefix(sn, "*.") && strings.HasSuffix(name, sn[1:])) {
			return true
		}
	}
	return false
}
