package api

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/sdkdoc"
)

// TestSDKDocsGenerated: wire/enums_gen.go (every Code and State) and
// openapi_docs_gen.go (the doc comments of wire's types and fields) are those
// of the current wire/ source.
func TestSDKDocsGenerated(t *testing.T) {
	root, _ := filepath.Abs("../..")
	files, err := sdkdoc.Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, _ := os.ReadFile(filepath.Join(root, name))
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./internal/api", name)
		}
	}
}

// minDescribed is the share of the document's properties that must carry a
// description (issue 38).
const minDescribed = 0.95

// TestOpenAPIDescriptions computes the share of the document's properties
// (every entry of every "properties", inline ones included) that have a
// description, and names those without one. The per-operation error schemas
// ("ExecCommandError", errorSchema) are left out: 145 copies of one
// described shape would hide the sdk fields' share. Run with -v for the
// number:
//
//	go test -run TestOpenAPIDescriptions -v ./internal/api
func TestOpenAPIDescriptions(t *testing.T) {
	s, _ := newTestServer(t)
	doc := roundTrip(t, s.Document())
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, rt := range s.routes() {
		id := operationID(rt)
		delete(schemas, strings.ToUpper(id[:1])+id[1:]+"Error")
	}
	var total int
	var missing []string
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name, p := range props {
					total++
					if d, _ := p.(map[string]any)["description"].(string); d == "" {
						missing = append(missing, at+"."+name)
					}
				}
			}
			for k, x := range v {
				walk(x, at+"/"+k)
			}
		case []any:
			for _, x := range v {
				walk(x, at)
			}
		}
	}
	walk(doc, "#")
	sort.Strings(missing)
	missing = slices.Compact(missing)
	share := float64(total-len(missing)) / float64(total)
	t.Logf("%d of %d properties described (%.1f%%)", total-len(missing), total, 100*share)
	if share < minDescribed || testing.Verbose() {
		for _, m := range missing {
			t.Logf("no description: %s", m)
		}
	}
	if share < minDescribed {
		t.Fatalf("%.1f%% of properties described, want at least %.0f%%: write the doc comment of the field in wire/, then go generate ./internal/api",
			100*share, 100*minDescribed)
	}
}

// TestRequestExamples: every JSON request body has an example (the row's
// body value, routes.go), and the example is valid under the body's schema.
func TestRequestExamples(t *testing.T) {
	s, _ := newTestServer(t)
	doc := roundTrip(t, s.Document())
	v := validator{schemas: doc["components"].(map[string]any)["schemas"].(map[string]any)}
	for _, rt := range s.routes() {
		if rt.body == nil || rt.body == (rawBody{}) {
			continue
		}
		row := rt.method + " " + rt.pattern
		if reflect.ValueOf(rt.body).IsZero() {
			t.Errorf("%s: its body is the zero %T: fill it in as the document's example", row, rt.body)
			continue
		}
		docPath := pathParamRe.ReplaceAllString(rt.pattern, "{$1}")
		op := doc["paths"].(map[string]any)[docPath].(map[string]any)[strings.ToLower(rt.method)].(map[string]any)
		c := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)
		for _, e := range v.check(c["schema"].(map[string]any), c["example"], "example") {
			t.Errorf("%s: %s", row, e)
		}
	}
}

// TestParamDefaults: a query parameter whose doc names a default has it in
// its schema, as a value of its type.
func TestParamDefaults(t *testing.T) {
	s, _ := newTestServer(t)
	for _, rt := range s.routes() {
		for _, q := range rt.query {
			if !paramDefaultRe.MatchString(q.doc) {
				continue
			}
			if _, ok := paramSchema(q)["default"]; !ok {
				t.Errorf("%s %s: ?%s names a default that is no %s: %q", rt.method, rt.pattern, q.name, q.typ, q.doc)
			}
		}
	}
	stop := map[string]any{}
	for _, rt := range s.routes() {
		if rt.name == "stopSandbox" {
			stop = paramSchema(rt.query[0])
		}
	}
	if stop["default"] != 10 {
		t.Errorf("stopSandbox graceSeconds: %v, want default 10", stop)
	}
}
