package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
)

// serviceValues parses a unit and returns each section.key's values.
func serviceValues(t *testing.T, text string) map[string][]string {
	t.Helper()
	opts, err := unit.DeserializeOptions(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse the unit: %v\n%s", err, text)
	}
	values := map[string][]string{}
	for _, o := range opts {
		k := o.Section + "." + o.Name
		values[k] = append(values[k], o.Value)
	}
	return values
}

// splitExecStart splits an ExecStart value the way systemd does for the
// quoting quoteUnitArg uses: blanks separate words, double quotes group,
// backslash escapes, %% is %, $$ is $.
func splitExecStart(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				word.WriteByte('\n')
			case 't':
				word.WriteByte('\t')
			default:
				word.WriteByte(s[i])
			}
		case c == '"':
			quoted, inWord = !quoted, true
		case !quoted && c == ' ':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
		case (c == '%' || c == '$') && i+1 < len(s) && s[i+1] == c:
			i++
			word.WriteByte(c)
			inWord = true
		case c == '%' || c == '$':
			t.Fatalf("unescaped %c in ExecStart %q", c, s)
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in ExecStart %q", s)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// TestInstallServicePrint checks the unit install-service prints: the
// shipped unit's settings (KillMode=process above all) with ExecStart and
// EnvironmentFile from the flags, serve flags after "--" passed through
// and quoted so systemd reads them back as given.
func TestInstallServicePrint(t *testing.T) {
	r := runCLI(t, "", "install-service", "--print", "--binary", "/opt/sbx/bin/sbx",
		"--data-dir", "/srv/sbx", "--listen", "0.0.0.0:7423", "--env-file", "/etc/sbx/prod.env",
		"--", "--tls-cert", "/etc/sbx/my cert.pem", "--runsc-platform", "systrap", "--subnet", "10.99.0.0/16")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("install-service --print: %+v", r)
	}
	v := serviceValues(t, r.stdout)
	for key, value := range map[string]string{
		"Service.KillMode":        "process",
		"Service.Delegate":        "yes",
		"Service.EnvironmentFile": "-/etc/sbx/prod.env",
	} {
		if got := v[key]; len(got) != 1 || got[0] != value {
			t.Errorf("%s = %q, want %q", key, got, value)
		}
	}
	if len(v["Service.ExecStart"]) != 1 {
		t.Fatalf("ExecStart = %q, want one", v["Service.ExecStart"])
	}
	got := splitExecStart(t, v["Service.ExecStart"][0])
	want := []string{"/opt/sbx/bin/sbx", "serve", "--data-dir", "/srv/sbx", "--listen", "0.0.0.0:7423",
		"--tls-cert", "/etc/sbx/my cert.pem", "--runsc-platform", "systrap", "--subnet", "10.99.0.0/16"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExecStart words = %q, want %q", got, want)
	}

	// No env file: the line goes; no flags: sbx serve's defaults.
	r = runCLI(t, "", "install-service", "--print", "--binary", "/usr/local/bin/sbx", "--env-file", "")
	v = serviceValues(t, r.stdout)
	if r.code != 0 || v["Service.EnvironmentFile"] != nil || !reflect.DeepEqual(v["Service.ExecStart"], []string{"/usr/local/bin/sbx serve"}) {
		t.Errorf("without --env-file: code %d, EnvironmentFile %q, ExecStart %q", r.code, v["Service.EnvironmentFile"], v["Service.ExecStart"])
	}
}

func TestQuoteUnitArg(t *testing.T) {
	for _, arg := range []string{"plain", "a b", `q"uote`, `back\slash`, "50%", "$HOME", "", "semi;colon", "it's", "tab\there"} {
		line := "/bin/sbx " + quoteUnitArg(arg)
		if got := splitExecStart(t, line); !reflect.DeepEqual(got, []string{"/bin/sbx", arg}) {
			t.Errorf("%q quoted as %q reads back as %q", arg, line, got)
		}
	}
}

// TestInstallServiceWritesUnit installs into a temporary root: the unit
// is written once, a second run with the same flags changes nothing, a
// different unit is refused without --force and replaced with it.
func TestInstallServiceWritesUnit(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "etc/systemd/system/sbx.service")
	install := func(args ...string) result {
		return runCLI(t, "", append([]string{"install-service", "--root", root, "--binary", "/usr/local/bin/sbx"}, args...)...)
	}
	r := install("--listen", "0.0.0.0:7423")
	if r.code != 0 || !strings.Contains(r.stdout, "systemctl daemon-reload && systemctl enable --now sbx") {
		t.Fatalf("install: %+v", r)
	}
	printed := runCLI(t, "", "install-service", "--print", "--binary", "/usr/local/bin/sbx", "--listen", "0.0.0.0:7423")
	written, err := os.ReadFile(path)
	if err != nil || string(written) != printed.stdout {
		t.Fatalf("written unit (err %v) differs from --print:\n%s\n---\n%s", err, written, printed.stdout)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("unit mode: %v %v, want 0644", fi.Mode(), err)
	}

	if r := install("--listen", "0.0.0.0:7423"); r.code != 0 || !strings.Contains(r.stdout, "up to date") {
		t.Errorf("same unit again: %+v", r)
	}
	r = install("--listen", "127.0.0.1:9000")
	if r.code != 1 || !strings.Contains(r.stderr, "--force") {
		t.Errorf("different unit without --force: %+v", r)
	}
	if now, _ := os.ReadFile(path); string(now) != string(written) {
		t.Errorf("a refused install changed the unit")
	}
	r = install("--listen", "127.0.0.1:9000", "--force")
	now, _ := os.ReadFile(path)
	if r.code != 0 || !strings.Contains(string(now), "--listen 127.0.0.1:9000") {
		t.Errorf("--force: %+v; unit now:\n%s", r, now)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files beside the unit: %v", entries)
	}
}

// TestInstallServiceRefusesBadFlags: a serve flag that does not exist or
// a relative path fails at install time and writes nothing.
func TestInstallServiceRefusesBadFlags(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{
		{"--", "--no-such-flag"},
		{"--", "stray-argument"},
		{"--data-dir", "relative/dir"},
		{"--binary", "sbx"},
		{"--env-file", "sbx.env"},
	} {
		r := runCLI(t, "", append([]string{"install-service", "--root", root, "--binary", "/usr/local/bin/sbx"}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "install-service --help") {
			t.Errorf("%q: %+v, want a usage error", args, r)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("refused installs wrote %v", entries)
	}
}

// TestInstallServiceUnitVerifies runs systemd's own checker on the unit
// install-service writes (systemd-analyze needs no running systemd).
func TestInstallServiceUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian package systemd; scripts/setup-tests.sh installs it)")
	}
	exe, err := os.Executable() // verify wants ExecStart's program to exist
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	r := runCLI(t, "", "install-service", "--root", root, "--binary", exe, "--data-dir", "/srv/sbx", "--", "--tls-cert", "/etc/sbx/a b.pem")
	if r.code != 0 {
		t.Fatalf("install: %+v", r)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", filepath.Join(root, "etc/systemd/system/sbx.service")).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
