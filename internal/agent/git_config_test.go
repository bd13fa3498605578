package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// Git config set through the agent is what the git command reads, and
// what git config wrote the agent reads back.
func TestGitConfig(t *testing.T) {
	home := isolateHome(t)
	a := startAgent(t)
	a.call("POST", "/git/init", wire.GitInitRequest{Path: "r"}, 200, nil)
	set := func(scope, path, key, value string) {
		t.Helper()
		a.call("POST", "/git/config", wire.GitConfigRequest{Scope: scope, Path: path, Key: key, Value: &value}, 200, nil)
	}
	get := func(scope, path, key string) *string {
		t.Helper()
		var v wire.GitConfigValue
		a.call("POST", "/git/config", wire.GitConfigRequest{Scope: scope, Path: path, Key: key}, 200, &v)
		return v.Value
	}
	set("", "", "user.name", "Ann Global")
	set("local", "r", "user.email", "bo@example.com")
	set("local", "r", "remote.origin.url", "file:///x")
	if got := get("global", "", "user.name"); got == nil || *got != "Ann Global" {
		t.Errorf("global user.name = %v", got)
	}
	if got := get("local", "r", "remote.origin.url"); got == nil || *got != "file:///x" {
		t.Errorf("local remote.origin.url = %v", got)
	}
	if got := get("local", "r", "no.such"); got != nil {
		t.Errorf("an unset option = %q, want none", *got)
	}
	if git, err := exec.LookPath("git"); err == nil { // the git command agrees
		out, err := exec.Command(git, "config", "--file", filepath.Join(home, ".gitconfig"), "user.name").Output()
		if err != nil || strings.TrimSpace(string(out)) != "Ann Global" {
			t.Errorf("git reads the global user.name as %q (%v)", out, err)
		}
		cmd := exec.Command(git, "config", "--local", "user.email")
		cmd.Dir = filepath.Join(a.cwd, "r")
		if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "bo@example.com" {
			t.Errorf("git reads the local user.email as %q (%v)", out, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	v := "x"
	a.callErr("POST", "/git/config", wire.GitConfigRequest{Scope: "system", Key: "a.b", Value: &v}, 400, wire.CodeInvalidParameter)
	a.callErr("POST", "/git/config", wire.GitConfigRequest{Key: "nodot", Value: &v}, 400, wire.CodeInvalidParameter)
	a.callErr("POST", "/git/config", wire.GitConfigRequest{Scope: "local", Path: "nope", Key: "a.b"}, 404, wire.CodeGitNotARepository)
}
