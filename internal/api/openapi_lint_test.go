package api

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// The committed document (sdks/openapi.json) and the types generated from
// it (sdks/typescript/src/schema.ts, sdks/python/src/sbx/types.py) must be
// those of the current code; redocly must find nothing in it. After changing routes or
// sdk types:
//
//	SBX_UPDATE_OPENAPI=1 go test -run TestOpenAPI ./internal/api
const (
	docFile    = "../../sdks/openapi.json"
	tsDir      = "../../sdks/typescript"
	tsTypes    = tsDir + "/src/schema.ts"
	pyDir      = "../../sdks/python"
	pyTypes    = pyDir + "/src/sbx/types.py"
	updateDocs = "SBX_UPDATE_OPENAPI"
)

func documentJSON(t *testing.T) []byte {
	t.Helper()
	s, _ := newTestServer(t)
	raw, err := json.MarshalIndent(s.Document(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(raw, '\n')
}

func TestOpenAPIFileUpToDate(t *testing.T) {
	want := documentJSON(t)
	if os.Getenv(updateDocs) != "" {
		if err := os.WriteFile(docFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("sdks/openapi.json is not the current document: run %s=1 go test -run TestOpenAPI ./internal/api", updateDocs)
	}
}

// npmTool is a program of sdks/typescript's pinned devDependencies.
func npmTool(t *testing.T, name string) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join(tsDir, "node_modules/.bin", name))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run scripts/npm-install.sh", p)
	}
	return p
}

// writeDocument writes the current document to a temporary file for the
// tools, so they check the code, not a stale sdks/openapi.json.
func writeDocument(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(p, documentJSON(t), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpenAPILint: redocly's recommended-strict rules, with descriptions
// required of every operation, parameter, tag and schema property
// (sdks/typescript/redocly.yaml), report no error and no warning (exceptions with reasons: sdks/typescript/.redocly.lint-ignore.yaml,
// which names sdks/openapi.json, so it lints that file after checking it is
// current).
func TestOpenAPILint(t *testing.T) {
	redocly := npmTool(t, "redocly")
	if got, _ := os.ReadFile(docFile); !bytes.Equal(got, documentJSON(t)) {
		t.Fatalf("sdks/openapi.json is stale: run %s=1 go test -run TestOpenAPI ./internal/api", updateDocs)
	}
	cmd := exec.Command(redocly, "lint", "--config", "redocly.yaml", "--format", "json", "../openapi.json")
	cmd.Dir = tsDir
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	out, err := cmd.Output()
	var report struct {
		Totals   struct{ Errors, Warnings, Ignored int }
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Message  string
			Location []struct{ Pointer string }
		}
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("redocly lint: %v, %v: %s", err, jerr, out)
	}
	for _, p := range report.Problems {
		t.Errorf("redocly %s: %s at %v", p.RuleID, p.Message, p.Location)
	}
	if report.Totals.Errors+report.Totals.Warnings != 0 || err != nil {
		t.Fatalf("redocly lint: %+v, %v", report.Totals, err)
	}
	if report.Totals.Ignored > 2 {
		t.Errorf("%d ignored problems; the ignore file justifies 2", report.Totals.Ignored)
	}
}

// TestOpenAPITypeScriptTypes: openapi-typescript's output for the current
// document is the committed src/schema.ts, and it has required fields and
// enums (Sandbox.state is a non-optional union of the states).
func TestOpenAPITypeScriptTypes(t *testing.T) {
	gen := npmTool(t, "openapi-typescript")
	out := filepath.Join(t.TempDir(), "schema.ts")
	// A default is what the server assumes when a field is left out, so a
	// field with one stays optional (package.json's generate does the same).
	cmd := exec.Command(gen, writeDocument(t), "-o", out, "--default-non-nullable=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v: %s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(updateDocs) != "" {
		if err := os.WriteFile(tsTypes, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(tsTypes)
	if !bytes.Equal(got, want) {
		t.Errorf("sdks/typescript/src/schema.ts is not generated from the current document: run %s=1 go test -run TestOpenAPI ./internal/api", updateDocs)
	}
	sandbox := regexp.MustCompile(`(?s)\n        Sandbox: \{(.*?)\n        \};`).FindSubmatch(want)
	if sandbox == nil {
		t.Fatalf("no Sandbox type in the generated types")
	}
	for _, re := range []string{`\n\s+state: "creating" \| "starting" \| "started" \|`, `\n\s+id: string;`, `\n\s+class: "container" \| "gvisor";`, `\n\s+name\?: string;`} {
		if !regexp.MustCompile(re).Match(sandbox[1]) {
			t.Errorf("generated Sandbox type lacks %s:%s", re, sandbox[1])
		}
	}
}

// TestOpenAPIPythonTypes: sdks/python's TypedDicts (gen_types.py) are those
// of the current document.
func TestOpenAPIPythonTypes(t *testing.T) {
	python := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3" // Debian's, as integration/sdk_py_test.go
	}
	want, err := exec.Command(python, filepath.Join(pyDir, "gen_types.py"), writeDocument(t)).Output()
	if err != nil {
		t.Fatalf("gen_types.py: %v", err)
	}
	if os.Getenv(updateDocs) != "" {
		if err := os.WriteFile(pyTypes, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(pyTypes)
	if !bytes.Equal(got, want) {
		t.Errorf("sdks/python/src/sbx/types.py is not generated from the current document: run %s=1 go test -run TestOpenAPI ./internal/api", updateDocs)
	}
	if !bytes.Contains(want, []byte(`"state": Literal["creating", "starting", "started",`)) {
		t.Errorf("the Python Sandbox type has no required state enum")
	}
}
