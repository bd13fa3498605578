package integration

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// sbxAs runs the CLI against the daemon with token (d.sbx with another key).
func (d *daemon) sbxAs(token, stdin string, args ...string) (string, int) {
	d.t.Helper()
	cmd := exec.Command(sbxBin, args...)
	cmd.Env = append(os.Environ(), "SBX_HOST=http://"+d.addr, "SBX_TOKEN="+token)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		d.t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// TestEgressSecretREADME follows docs/egress-http.md's plain-HTTP secret example
// ("Give sandboxes credentials without giving them the secret") with the
// CLI, as a new user would on a fresh data dir, with the operator's key and
// with a team key, before and after a daemon restart: the secret reaches
// the server (api.test, served in a namespace of the test's own).
func TestEgressSecretREADME(t *testing.T) {
	out := newOutside(t)
	names := newTestDNS(t)
	names.set("api.test", out.a)
	var s seen
	ln := outsideListener(t, out, out.a.String()+":80")
	srv := &http.Server{Handler: http.HandlerFunc(s.handler)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	d := startDaemon(t, "--egress-allow-private", out.subnet.String(), "--dns-upstream", names.addr) // the stand-in server is on a private address
	_, team := d.teamKey("red", sdk.Quotas{}, allScopes...)
	rules := filepath.Join(t.TempDir(), "rules.json")
	os.WriteFile(rules, []byte(`{"rules": [
  {"host": "api.test", "action": "inject",
   "inject": [{"header": "Authorization", "secret": "apikey", "prefix": "Bearer "}]}
]}`), 0o644)

	users := []struct{ who, token, value string }{{"admin", d.token, "sk-admin-value"}, {"team", team.Key, "sk-team-value"}}
	run := func(token string, stdin string, args ...string) string {
		t.Helper()
		o, code := d.sbxAs(token, stdin, args...)
		if code != 0 {
			t.Fatalf("sbx %s: exit %d: %s", strings.Join(args, " "), code, o)
		}
		return o
	}
	for _, u := range users {
		run(u.token, u.value, "secret", "create", "apikey", "--host", "api.test", "--allow-http")
		if ls := run(u.token, "", "secret", "ls"); !strings.Contains(ls, "apikey") {
			t.Fatalf("%s: secret ls: %s", u.who, ls)
		}
		var sb sdk.Sandbox
		json.Unmarshal([]byte(run(u.token, "", "create", "agent-"+u.who, "-o", "json")), &sb)
		d.created[sb.ID] = true
		run(u.token, "", "egress", "set", "agent-"+u.who, "--egress", "allow-all", "--http", rules)
	}
	// A rule that would send the secret anywhere is refused, by name.
	anywhere := filepath.Join(t.TempDir(), "anywhere.json")
	os.WriteFile(anywhere, []byte(`{"rules": [{"host": "*", "action": "inject", "inject": [{"header": "Authorization", "secret": "apikey"}]}]}`), 0o644)
	if o, code := d.sbxAs(d.token, "", "egress", "set", "agent-admin", "--egress", "allow-all", "--http", anywhere); code == 0 ||
		!strings.Contains(o, "rule 0") || !strings.Contains(o, `secret "apikey"`) || !strings.Contains(o, `host "*"`) {
		t.Fatalf("a rule for *: exit %d: %s", code, o)
	}
	check := func(when string) {
		t.Helper()
		for _, u := range users {
			path := "/" + u.who + "-" + when
			got := run(u.token, "", "exec", "agent-"+u.who, "--", "wget", "-q", "-O", "-", "http://api.test"+path)
			if strings.TrimSpace(got) != "outside saw "+path {
				t.Fatalf("%s %s: %q", u.who, when, got)
			}
			if r, _ := s.last(path); r.auth != "Bearer "+u.value {
				t.Fatalf("%s %s: the server saw %+v", u.who, when, r)
			}
		}
	}
	check("before")
	d.stop()
	d.start()
	check("after")
}
