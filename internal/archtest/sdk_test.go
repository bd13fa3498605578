package archtest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	module  = "github.com/sbxhq/sbx"
	sdkPath = module + "/sdk"
	fixHint = "go run ./internal/tools/wiresplit -rewrite internal cmd/sbx-agent"
)

// sdkUsers are the packages under internal/ that may import the Go client
// (package sdk), each with why: they call the API through the client. Every
// other internal package takes the API's types and codes from package wire,
// so that the daemon does not depend on its own client.
var sdkUsers = map[string]string{
	"internal/chaos":   "drives a daemon through the Go client to break it on purpose",
	"internal/loadgen": "drives a daemon through the Go client to measure it",
	"internal/mcp":     "the MCP server answers its tools by calling the sbx API through the Go client",
}

// TestOnlyClientUsersImportSDK fails when a package under internal/ (its
// tests included) imports package sdk without being one of sdkUsers, and
// when one of sdkUsers no longer does.
func TestOnlyClientUsersImportSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		module+"/internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 30 {
		t.Fatalf("go list listed only %d packages", len(lines))
	}
	seen := map[string]bool{}
	for _, line := range lines {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module+"/")
		if !slices.Contains(f[1:], sdkPath) {
			continue
		}
		seen[pkg] = true
		if sdkUsers[pkg] == "" {
			t.Errorf("%s imports %s: take the API's types from package wire (%s), or, if it calls the API through the client, add it to sdkUsers with why", pkg, sdkPath, fixHint)
		}
	}
	for pkg := range sdkUsers {
		if !seen[pkg] {
			t.Errorf("%s is in sdkUsers but does not import %s: remove it", pkg, sdkPath)
		}
	}
}

// TestWireNamesFromWire fails when a Go file under internal/ or
// cmd/sbx-agent names a type, code or helper of package wire through its
// alias in package sdk: the client users of sdkUsers keep sdk for the
// client only.
func TestWireNamesFromWire(t *testing.T) {
	wire := exported(t, filepath.Join("..", "..", "wire", "*.go"))
	if !wire["CodeSandboxNotFound"] || !wire["CreateSandboxRequest"] {
		t.Fatalf("found %d names in wire/, not its types and codes", len(wire))
	}
	quoted := []byte(strconv.Quote(sdkPath))
	for _, dir := range []string{filepath.Join("..", "..", "internal"), filepath.Join("..", "..", "cmd", "sbx-agent")} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil || !bytes.Contains(src, quoted) {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, src, 0)
			if err != nil {
				return err
			}
			name := ""
			for _, is := range f.Imports {
				if is.Path.Value == string(quoted) {
					name = "sdk"
					if is.Name != nil {
						name = is.Name.Name
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if se, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := se.X.(*ast.Ident); ok && id.Name == name && id.Obj == nil && wire[se.Sel.Name] {
						t.Errorf("%s: %s.%s: name it wire.%s (%s)", fset.Position(se.Pos()), name, se.Sel.Name, se.Sel.Name, fixHint)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestWireAliased: every exported name of package wire is one of sdk too,
// declared in the generated sdk/wire_aliases.go, so the client's users find
// each type, code and helper of the API there. A new name in wire/ fails
// this until go generate ./sdk (internal/tools/wiresplit) writes its alias.
func TestWireAliased(t *testing.T) {
	wire := exported(t, filepath.Join("..", "..", "wire", "*.go"))
	aliases := exported(t, filepath.Join("..", "..", "sdk", "wire_aliases.go"))
	if len(wire) < 100 {
		t.Fatalf("found %d names in wire/", len(wire))
	}
	for n := range wire {
		if !aliases[n] {
			t.Errorf("wire.%s has no alias in sdk: run go generate ./sdk", n)
		}
	}
	for n := range aliases {
		if !wire[n] {
			t.Errorf("sdk aliases %s, which wire does not declare: run go generate ./sdk", n)
		}
	}
}

// exported are the exported package-level names of the non-test files
// matching glob.
func exported(t *testing.T, glob string) map[string]bool {
	t.Helper()
	names, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for n := range f.Scope.Objects {
			if ast.IsExported(n) {
				out[n] = true
			}
		}
	}
	return out
}
