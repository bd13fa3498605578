package sdk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestWireAliased: every exported name of package wire is one of sdk too,
// declared in the generated wire_aliases.go, so the client's users find each
// type, code and helper of the API here. A new name in wire/ fails this
// until go generate ./sdk (internal/tools/wiresplit) writes its alias.
func TestWireAliased(t *testing.T) {
	wire := names(t, filepath.Join("..", "wire", "*.go"))
	aliases := names(t, "wire_aliases.go")
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

// names are the exported package-level names of the non-test files matching glob.
func names(t *testing.T, glob string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, name := range files {
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
