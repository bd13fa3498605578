package doctor

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A programUse is one place where the code runs (or looks up) a program.
type programUse struct {
	program string
	where   string // file:line
	bench   bool   // in the benchmark, whose peers scripts/bench-setup.sh installs
	test    bool   // in a test, whose programs scripts/setup-tests.sh may install
}

// TestSetupInstallsEveryProgram lists every program the Go code (daemon,
// CLI, tests, benchmark) executes, and the programs the scripts it runs
// look for, and fails when scripts/setup.sh does not install the Debian
// package that has one, or for a test's program neither setup.sh nor
// scripts/setup-tests.sh does. A fresh machine that ran setup.sh must run
// sbx, and after setup-tests.sh (which scripts/test.sh runs) the tests.
func TestSetupInstallsEveryProgram(t *testing.T) {
	root := repoRoot(t)
	uses := programUses(t, root)
	if len(uses) < 10 {
		t.Fatalf("found only %d program uses; the scan is broken: %v", len(uses), uses)
	}
	setup := scriptPackages(t, filepath.Join(root, "scripts/setup.sh"))
	tests := scriptPackages(t, filepath.Join(root, "scripts/setup-tests.sh"))
	bench := scriptPackages(t, filepath.Join(root, "scripts/bench-setup.sh"))
	for _, msg := range missingFromSetup(uses, setup, tests, bench) {
		t.Error(msg)
	}
	for _, u := range uses {
		if p := Programs[u.program]; p.Note != "" || basePackages[p.Package] {
			t.Logf("exempt: %s (%s) at %s: %s", u.program, p.Package, u.where, firstNonEmpty(p.Note, "package in every Debian installation"))
		}
	}
}

// TestMissingFromSetupNamesTheProgram checks the check: without nftables
// in setup.sh's list, nft is reported with its package; a program missing
// from the table is reported too.
func TestMissingFromSetupNamesTheProgram(t *testing.T) {
	uses := []programUse{{program: "nft", where: "a.go:1"}, {program: "uname", where: "b.go:2"},
		{program: "podman", where: "bench/c.go:3", bench: true}, {program: "frobnicate", where: "d.go:4"}}
	got := missingFromSetup(uses, map[string]bool{"runc": true}, nil, map[string]bool{"podman": true})
	if len(got) != 2 || !strings.Contains(got[0], `"nft"`) || !strings.Contains(got[0], "nftables") ||
		!strings.Contains(got[1], `"frobnicate"`) {
		t.Fatalf("missingFromSetup = %q; want nft (nftables) and frobnicate reported, uname and podman not", got)
	}
	if got := missingFromSetup(uses[:3], map[string]bool{"nftables": true}, nil, map[string]bool{"podman": true}); len(got) != 0 {
		t.Fatalf("missingFromSetup = %q with nftables installed, want nothing", got)
	}
	// A test's program may come from setup-tests.sh; the daemon's may not.
	tmux := []programUse{{program: "tmux", where: "integration/a_test.go:1", test: true}, {program: "tmux", where: "cmd/sbx/b.go:2"}}
	if got := missingFromSetup(tmux, nil, map[string]bool{"tmux": true}, nil); len(got) != 1 || !strings.Contains(got[0], "cmd/sbx/b.go:2") {
		t.Fatalf("missingFromSetup = %q, want only the daemon's use of tmux reported", got)
	}
}

// missingFromSetup returns one message per program whose package neither
// every Debian installation nor setup.sh (for a test also setup-tests.sh,
// for the benchmark also bench-setup.sh) provides.
func missingFromSetup(uses []programUse, setup, tests, bench map[string]bool) []string {
	var out []string
	for _, u := range uses {
		p, ok := Programs[u.program]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s runs %q, which internal/doctor's Programs table lacks: add it with its Debian package (and the package to scripts/setup.sh)", u.where, u.program))
		case p.Note != "" || basePackages[p.Package] || setup[p.Package]:
		case u.bench && (bench[p.Package] || tests[p.Package]):
		case u.test && tests[p.Package]:
		case u.test:
			out = append(out, fmt.Sprintf("%s runs %q from the Debian package %s, which neither scripts/setup.sh nor scripts/setup-tests.sh installs: add it to packages=(...) in setup-tests.sh", u.where, u.program, p.Package))
		default:
			out = append(out, fmt.Sprintf("%s runs %q from the Debian package %s, which scripts/setup.sh does not install: add it to packages=(...) there", u.where, u.program, p.Package))
		}
	}
	return out
}

func repoRoot(t *testing.T) string {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// programUses parses every Go file of the module (testdata, which runs
// inside sandboxes, aside) for exec.Command, exec.CommandContext and
// exec.LookPath with a string literal program, and the scripts those run
// for `command -v NAME`. Calls with a variable program take it from a
// LookPath or a path constant that the scan sees.
func programUses(t *testing.T, root string) []programUse {
	var uses []programUse
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, u := range execCalls(fset, f) {
			u.where = rel + ":" + u.where
			u.bench = strings.HasPrefix(rel, "bench/")
			u.test = strings.HasSuffix(rel, "_test.go")
			if strings.HasSuffix(u.program, ".sh") {
				script := filepath.Join(filepath.Dir(path), u.program)
				uses = append(uses, scriptUses(t, script, u)...)
				continue
			}
			u.program = filepath.Base(u.program)
			uses = append(uses, u)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return uses
}

// execCalls returns the string-literal programs of f's os/exec calls, with
// where set to the line.
func execCalls(fset *token.FileSet, f *ast.File) []programUse {
	execName := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"os/exec"` {
			execName = "exec"
			if imp.Name != nil {
				execName = imp.Name.Name
			}
		}
	}
	if execName == "" {
		return nil
	}
	argIndex := map[string]int{"Command": 0, "LookPath": 0, "CommandContext": 1}
	var out []programUse
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != execName {
			return true
		}
		i, ok := argIndex[sel.Sel.Name]
		if !ok || len(call.Args) <= i {
			return true
		}
		lit, ok := call.Args[i].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err == nil {
			out = append(out, programUse{program: s, where: strconv.Itoa(fset.Position(lit.Pos()).Line)})
		}
		return true
	})
	return out
}

var commandV = regexp.MustCompile(`command -v ([A-Za-z0-9._+-]+)`)

// scriptUses returns the programs a script the code runs looks for with
// `command -v`, which is how our scripts check what they need.
func scriptUses(t *testing.T, script string, caller programUse) []programUse {
	data, err := os.ReadFile(script)
	if err != nil {
		t.Errorf("%s runs %s: %v", caller.where, script, err)
		return nil
	}
	var out []programUse
	for _, m := range commandV.FindAllStringSubmatch(string(data), -1) {
		u := caller
		u.program = m[1]
		u.where = caller.where + " (" + filepath.Base(script) + ")"
		out = append(out, u)
	}
	return out
}

var packagesLine = regexp.MustCompile(`(?m)^packages=\(([^)]*)\)`)

// scriptPackages reads the packages=(...) list of an install script.
func scriptPackages(t *testing.T, path string) map[string]bool {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := packagesLine.FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s has no packages=(...) line", path)
	}
	out := map[string]bool{}
	list := regexp.MustCompile(`#[^\n]*`).ReplaceAllString(string(m[1]), "") // comments
	for _, p := range strings.Fields(list) {
		out[p] = true
	}
	return out
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
