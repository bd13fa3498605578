package httpegress

import "testing"

func TestSecretHosts(t *testing.T) {
	sec := SecretValue{Hosts: []string{"api.example.com", "*.svc.example", "legacy.example:8080"}}
	covers := map[string]bool{
		"api.example.com": true, "api.example.com:443": true, "api.example.com:80": false, "api.example.com:8443": false,
		"a.svc.example": true, "*.b.svc.example": true, "*.svc.example": true, "svc.example": false,
		"legacy.example:8080": true, "legacy.example": true, "*": false, "*.example.com": false, "evil.example": false,
	}
	for rule, want := range covers {
		if got := SecretCoversRule(sec, rule); got != want {
			t.Errorf("SecretCoversRule(%s) = %v", rule, got)
		}
	}
	allows := []struct {
		scheme, host   string
		want, withHTTP bool
	}{
		{"https", "api.example.com", true, true}, {"https", "API.example.com.", true, true},
		{"https", "api.example.com:443", true, true}, {"https", "api.example.com:8443", false, false},
		{"http", "api.example.com", false, true}, {"http", "api.example.com:443", false, false},
		{"https", "x.svc.example", true, true}, {"https", "svc.example", false, false},
		{"https", "xsvc.example", false, false}, {"https", "api.example.com.evil", false, false},
		{"https", "legacy.example:8080", true, true}, {"http", "legacy.example:8080", false, true},
		{"https", "legacy.example", false, false}, {"ftp", "api.example.com", false, false},
		{"https", "[::1]:443", false, false},
	}
	for _, c := range allows {
		if got := SecretAllows(sec, c.scheme, c.host); got != c.want {
			t.Errorf("SecretAllows(%s://%s) = %v", c.scheme, c.host, got)
		}
		withHTTP := sec
		withHTTP.AllowHTTP = true
		if got := SecretAllows(withHTTP, c.scheme, c.host); got != c.withHTTP {
			t.Errorf("allowHttp: SecretAllows(%s://%s) = %v", c.scheme, c.host, got)
		}
	}
	for _, bad := range [][]string{nil, {"*"}, {" * "}, {"a b"}, {"api.example.com:x"}} {
		if _, err := ParseSecretHosts("k", bad); err == nil {
			t.Errorf("ParseSecretHosts(%q) accepted", bad)
		}
	}
	if got, err := ParseSecretHosts("k", []string{"API.Example.com."}); err != nil || got[0] != "api.example.com" {
		t.Errorf("ParseSecretHosts = %q, %v", got, err)
	}
}
