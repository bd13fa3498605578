package codescan

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const repoRoot = "../../.."

// TestEveryCodeIsDeclared fails when Go source anywhere in the repository
// uses an error code that wire/codes.go does not declare: a typo in a
// literal would otherwise reach clients as a code nobody documents.
func TestEveryCodeIsDeclared(t *testing.T) {
	declared, err := Declared(filepath.Join(repoRoot, "wire", "codes.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(declared) < 100 {
		t.Fatalf("found only %d codes in wire/codes.go", len(declared))
	}
	files, err := GoFiles(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range Literals(fset, f) {
			seen++
			if _, ok := declared[u.Value]; !ok {
				t.Errorf("%s: code %q is not declared in wire/codes.go", u.Pos, u.Value)
			}
		}
	}
	t.Logf("%d literal codes left in non-test source", seen)
}

// TestSweptPackagesUseConstants keeps Go source free of literal codes.
func TestSweptPackagesUseConstants(t *testing.T) {
	for _, dir := range []string{"internal", "cmd", "sdk", "wire", "bench"} {
		files, err := GoFiles(filepath.Join(repoRoot, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range files {
			if strings.Contains(p, "codescan") || strings.HasSuffix(p, "codes.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range Literals(fset, f) {
				t.Errorf("%s: literal code %q: use wire.%s", u.Pos, u.Value, "Code…")
			}
		}
	}
}

// TestRewrite checks the sweep on a file that needs the wire import.
func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.go")
	src := `package x

import "github.com/sbxhq/sbx/internal/errdefs"

func f(err error) error {
	if errdefs.CodeOf(err) == "SANDBOX_NOT_FOUND" {
		return nil
	}
	return errdefs.Invalid("INVALID_JSON", "bad %s", "NOT_A_CODE_ARG")
}

var e = &errdefs.Error{Code: "NO_SUCH_CODE_EVER", Message: "m"}
`
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, changed, unknown, err := Rewrite(p, map[string]string{"SANDBOX_NOT_FOUND": "CodeSandboxNotFound", "INVALID_JSON": "CodeInvalidJSON"})
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	got := string(out)
	for _, want := range []string{`"github.com/sbxhq/sbx/wire"`, `errdefs.CodeOf(err) == wire.CodeSandboxNotFound`, `errdefs.Invalid(wire.CodeInvalidJSON, "bad %s", "NOT_A_CODE_ARG")`, `Code: "NO_SUCH_CODE_EVER"`} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten source lacks %s:\n%s", want, got)
		}
	}
	if len(unknown) != 1 || unknown[0].Value != "NO_SUCH_CODE_EVER" {
		t.Errorf("unknown = %v, want NO_SUCH_CODE_EVER", unknown)
	}
}
