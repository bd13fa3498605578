package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A small module shaped like this one: a client with its wire types mixed
// in, and internal packages naming both through sdk.
var module = map[string]string{
	"go.mod": "module github.com/sbxhq/sbx\n\ngo 1.26\n",
	"sdk/client.go": `// Package sdk is a client.
package sdk

import (
	"context"
	"net/http"
)

// Client talks to a daemon.
type Client struct{ hc *http.Client }

// Get gets a thing.
func (c *Client) Get(ctx context.Context) (*Thing, error) { return &Thing{Name: label("x")}, nil }

// GetOptions are a call's parameters.
type GetOptions struct{ Deep bool }

// ErrGone is a client error.
var ErrGone = errString("gone")
`,
	"sdk/types.go": `package sdk

import (
	"fmt"
	"net/url"
)

// State is a state.
type State string

// The states.
const (
	StateA State = "a" // the first
)

// Thing is a thing.
type Thing struct {
	// Name names it.
	Name string ` + "`json:\"name\"`" + `
}

// String is its name.
func (t Thing) String() string { return fmt.Sprint(t.Name) }

// Ptr points at v.
func Ptr[T any](v T) *T { return &v }

// Pair is two of a kind.
type Pair[K comparable, V any] struct {
	Key K
	Val V
}

func label(s string) string { return s }

type errString string

func (e errString) Error() string { return string(e) }

func thingPath(name string) string { return "/things/" + url.PathEscape(name) }
`,
	"internal/x/x.go": `package x

import "github.com/sbxhq/sbx/sdk"

// F uses sdk.Thing and the client.
func F(c *sdk.Client) sdk.State {
	_ = sdk.Ptr(sdk.Thing{})
	_ = sdk.Pair[string, int]{}
	return sdk.StateA
}
`,
	"internal/y/y.go": `package y

import (
	"fmt"

	"github.com/sbxhq/sbx/sdk"
)

// G names only wire things (sdk.StateA).
func G() { fmt.Println(sdk.StateA) }
`,
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run runs the program's three steps over root and returns the tree after.
func run(t *testing.T, root string) map[string]string {
	t.Helper()
	sdkDir, wireDir := filepath.Join(root, "sdk"), filepath.Join(root, "wire")
	if _, err := split(sdkDir, wireDir, false); err != nil {
		t.Fatal(err)
	}
	if err := writeAliases(sdkDir, wireDir); err != nil {
		t.Fatal(err)
	}
	names, err := exportedNames(wireDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rewriteTree(filepath.Join(root, "internal"), names); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet after the split: %v\n%s", err, out)
	}
	tree := map[string]string{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			tree[rel] = string(b)
		}
		return err
	})
	return tree
}

func contains(t *testing.T, tree map[string]string, file string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(tree[file], w) {
			t.Errorf("%s lacks %q:\n%s", file, w, tree[file])
		}
	}
}

func lacks(t *testing.T, tree map[string]string, file string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(tree[file], b) {
			t.Errorf("%s has %q:\n%s", file, b, tree[file])
		}
	}
}

// TestSplit: the wire declarations move with their comments and methods,
// the client's stay, sdk aliases what moved, internal code names wire, a
// second run changes nothing, and a run after new sdk code moves that too.
func TestSplit(t *testing.T) {
	root := t.TempDir()
	write(t, root, module)
	tree := run(t, root)

	contains(t, tree, "wire/types.go", "package wire", "// Thing is a thing.\ntype Thing struct", "// Name names it.",
		"func (t Thing) String()", "StateA State = \"a\" // the first", "func Ptr[T any]", "type Pair[K comparable, V any]")
	lacks(t, tree, "wire/types.go", "thingPath", "net/url", "label") // label: unexported, and Client.Get calls it
	if _, ok := tree["sdk/types.go"]; !ok {
		t.Error("sdk/types.go went, but thingPath (net/url) is the client's")
	}
	contains(t, tree, "sdk/types.go", "func thingPath(", "func label(")
	lacks(t, tree, "sdk/types.go", "fmt", "type Thing")
	lacks(t, tree, "wire/client.go", "GetOptions", "ErrGone", "errString") // a call parameter, a variable, and what it needs
	contains(t, tree, "sdk/wire_aliases.go", "Thing = wire.Thing", "State = wire.State", "StateA = wire.StateA",
		"Pair[K comparable, V any] = wire.Pair[K, V]", "func Ptr[T any](v T) *T {\n\treturn wire.Ptr[T](v)")
	lacks(t, tree, "sdk/wire_aliases.go", "label")
	contains(t, tree, "internal/x/x.go", "c *sdk.Client", "wire.Ptr(wire.Thing{})", "wire.Pair[string, int]{}", "return wire.StateA",
		`"github.com/sbxhq/sbx/sdk"`, `"github.com/sbxhq/sbx/wire"`)
	contains(t, tree, "internal/y/y.go", "// G names only wire things (wire.StateA).", "fmt.Println(wire.StateA)")
	lacks(t, tree, "internal/y/y.go", `"github.com/sbxhq/sbx/sdk"`)

	if again := run(t, root); !maps.Equal(again, tree) {
		t.Error("a second run changed the tree")
	}

	// Later: someone adds a type and a state to sdk/, and names them sdk.X.
	write(t, root, map[string]string{
		"sdk/later.go":    "package sdk\n\n// Later came later.\ntype Later struct{ S State }\n\n// StateB is new.\nconst StateB State = \"b\"\n",
		"internal/y/z.go": "package y\n\nimport \"github.com/sbxhq/sbx/sdk\"\n\nvar _ = sdk.Later{S: sdk.StateB}\n",
	})
	tree = run(t, root)
	contains(t, tree, "wire/later.go", "// Later came later.\ntype Later struct", "const StateB State")
	contains(t, tree, "sdk/wire_aliases.go", "Later = wire.Later", "StateB = wire.StateB")
	contains(t, tree, "internal/y/z.go", "wire.Later{S: wire.StateB}")
	if _, ok := tree["sdk/later.go"]; ok {
		t.Error("sdk/later.go is left with nothing in it")
	}

	// A merge brings an edited copy of a moved declaration back into sdk/:
	// sdk's text wins and wire keeps one.
	write(t, root, map[string]string{
		"sdk/later.go": "package sdk\n\n// Later came later.\ntype Later struct {\n\tS State\n\tN int\n}\n",
	})
	tree = run(t, root)
	contains(t, tree, "wire/later.go", "N int", "const StateB State")
	if n := strings.Count(tree["wire/later.go"], "type Later"); n != 1 {
		t.Errorf("wire/later.go declares Later %d times", n)
	}
}
