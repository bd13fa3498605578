package sdkdoc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writePkg(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestParse: docs of types and fields (doc comment and trailing comment
// together, as one paragraph), "Default: V." defaults, and constants with
// the defining file's first.
func TestParse(t *testing.T) {
	dir := writePkg(t, map[string]string{
		"a.go": `package p

const (
	KindLate Kind = "late"
)
`,
		"b.go": `package p

// Kind is a kind.
type Kind string

const (
	KindFirst  Kind = "first"
	KindSecond Kind = "second"
)

// Req is a request.
type Req struct {
	// How many, at most
	// ten. Default: 3.
	Count int ` + "`json:\"count\"`" + ` // not zero
	Name  string ` + "`json:\"name\"`" + `
	hidden int
}
`,
		"b_test.go": `package p

const KindTest Kind = "test"
`,
	})
	info, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Docs["Req"]; got != "Req is a request." {
		t.Errorf("type doc %q", got)
	}
	if got := info.Docs["Req.Count"]; got != "How many, at most ten. Default: 3. not zero" {
		t.Errorf("field doc %q", got)
	}
	if _, ok := info.Docs["Req.Name"]; ok {
		t.Errorf("an undocumented field has a doc")
	}
	if got := info.Defaults["Req.Count"]; got != "3" {
		t.Errorf("default %q", got)
	}
	var names []string
	for _, c := range info.Consts["Kind"] {
		names = append(names, c.Name+"="+c.Value)
	}
	if want := []string{"KindFirst=first", "KindSecond=second", "KindLate=late"}; !slices.Equal(names, want) {
		t.Errorf("constants %v, want %v", names, want)
	}
}

// TestParseBadDefault: a "Default:" that is no JSON value is an error that
// names the field, not a default silently left out.
func TestParseBadDefault(t *testing.T) {
	dir := writePkg(t, map[string]string{"a.go": `package p

type Req struct {
	// Default: never.
	Keep bool ` + "`json:\"keep\"`" + `
}
`})
	_, err := Parse(dir)
	if err == nil || !strings.Contains(err.Error(), "Req.Keep") {
		t.Fatalf("Parse: %v, want an error naming Req.Keep", err)
	}
}
