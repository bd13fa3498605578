package main

import (
	"fmt"
	"strings"
)

// parseKV turns repeated KEY=VALUE flag values into a map. The value may hold
// '=' and may be empty; the key may not. A later KEY wins. flag names the flag
// in errors ("--env").
func parseKV(flag string, pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, usagef("invalid %s %q: want KEY=VALUE", flag, p)
		}
		if k == "" {
			return nil, usagef("invalid %s %q: the key before '=' is empty", flag, p)
		}
		if strings.ContainsAny(k, " \t\n") {
			return nil, usagef("invalid %s %q: the key may not contain white space", flag, p)
		}
		m[k] = v
	}
	return m, nil
}

// describeKV formats a map as "a=1, b=2" in key order, for text output.
func describeKV(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%s", k, m[k])
	}
	return b.String()
}
