package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var operationIDRe = regexp.MustCompile(`^[a-z][a-zA-Z0-9]+$`)

// TestRoutesHaveDocMetadata names every route row missing what the OpenAPI
// document needs: a unique lowerCamelCase name (operationId), a known tag,
// the line type of a stream, the frame type of a WebSocket.
func TestRoutesHaveDocMetadata(t *testing.T) {
	s, _ := newTestServer(t)
	seen := map[string]string{}
	for _, rt := range s.routes() {
		row := rt.method + " " + rt.pattern
		switch {
		case rt.name == "":
			t.Errorf("%s: no name (operationId) in its routes.go row, e.g. name: %q", row, operationID(rt))
		case !operationIDRe.MatchString(rt.name):
			t.Errorf("%s: name %q is not lowerCamelCase", row, rt.name)
		case seen[rt.name] != "":
			t.Errorf("%s: name %q is also the name of %s", row, rt.name, seen[rt.name])
		}
		seen[rt.name] = row
		if !slices.ContainsFunc(tags, func(tg struct{ name, doc string }) bool { return tg.name == tagOf(rt) }) {
			t.Errorf("%s: tag %q is not in openapi.go's tags", row, tagOf(rt))
		}
		_, nd := rt.response.(ndjson)
		streams := nd || slices.ContainsFunc(rt.query, func(p param) bool { return p.name == "stream" || p.name == "follow" })
		if streams && rt.events == nil {
			t.Errorf("%s: streams NDJSON but its row has no events: (the line type)", row)
		}
		if rt.status == http.StatusSwitchingProtocols && rt.frames == nil {
			t.Errorf("%s: a WebSocket without frames: (the text frame type)", row)
		}
		if rt.summary == "" {
			t.Errorf("%s: no summary", row)
		}
	}
}

// TestDocumentShape checks what the issue asks of the document: required
// fields, enums, stream line schemas, the WebSocket, error responses,
// readable ids, a public route.
func TestDocumentShape(t *testing.T) {
	s, _ := newTestServer(t)
	doc := roundTrip(t, s.Document())
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	sandbox := schemas["Sandbox"].(map[string]any)
	for _, f := range []string{"id", "state", "image", "class", "createdAt", "labels"} {
		if !slices.Contains(anyStrings(sandbox["required"]), f) {
			t.Errorf("Sandbox.required lacks %s: %v", f, sandbox["required"])
		}
	}
	if slices.Contains(anyStrings(sandbox["required"]), "name") {
		t.Errorf("Sandbox.name (omitempty) is required")
	}
	props := sandbox["properties"].(map[string]any)
	if e := anyStrings(props["state"].(map[string]any)["enum"]); !slices.Contains(e, "paused") || !slices.Contains(e, "archived") {
		t.Errorf("Sandbox.state enum %v", e)
	}
	if e := anyStrings(props["class"].(map[string]any)["enum"]); !slices.Equal(e, []string{"container", "gvisor"}) {
		t.Errorf("Sandbox.class enum %v", e)
	}
	code := schemas["ErrorBody"].(map[string]any)["properties"].(map[string]any)["code"].(map[string]any)
	if !slices.Contains(anyStrings(code["enum"]), "SANDBOX_NOT_FOUND") {
		t.Errorf("ErrorBody.code enum lacks SANDBOX_NOT_FOUND")
	}
	if got := anyStrings(schemas["ExecEvent"].(map[string]any)["x-final-events"]); !slices.Equal(got, []string{"exit", "end", "error"}) {
		t.Errorf("ExecEvent x-final-events %v", got)
	}
	// An event union: oneOf by type, each variant the fields with type fixed.
	execEvent := schemas["ExecEvent"].(map[string]any)
	if execEvent["discriminator"].(map[string]any)["propertyName"] != "type" || len(execEvent["oneOf"].([]any)) != 7 {
		t.Errorf("ExecEvent is not a oneOf discriminated by type: %v", execEvent)
	}
	exit := schemas["ExecEventExit"].(map[string]any)["allOf"].([]any)[1].(map[string]any)
	if exit["properties"].(map[string]any)["type"].(map[string]any)["const"] != "exit" || !slices.Contains(anyStrings(exit["required"]), "exitCode") {
		t.Errorf("ExecEventExit: %v", exit)
	}
	paths := doc["paths"].(map[string]any)
	op := func(path, method string) map[string]any { return paths[path].(map[string]any)[method].(map[string]any) }
	exec := op("/v1/sandboxes/{id}/exec", "post")
	if exec["operationId"] != "execCommand" || anyStrings(exec["tags"])[0] != "commands" {
		t.Errorf("exec: id %v tags %v", exec["operationId"], exec["tags"])
	}
	ok := exec["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)
	if ok["application/json"] == nil || ok["application/x-ndjson"].(map[string]any)["x-itemSchema"].(map[string]any)["$ref"] != "#/components/schemas/ExecEvent" {
		t.Errorf("exec 200 content %v", ok)
	}
	if exec["responses"].(map[string]any)["4XX"] == nil {
		t.Errorf("exec has no 4XX response")
	}
	attach := op("/v1/sandboxes/{id}/ptys/{pty}/attach", "get")["responses"].(map[string]any)["101"].(map[string]any)
	if attach["x-websocket"].(map[string]any)["textFrames"].(map[string]any)["$ref"] != "#/components/schemas/PTYControl" {
		t.Errorf("attach: %v", attach)
	}
	if op("/v1/openapi.json", "get")["security"] == nil {
		t.Errorf("the document is not public")
	}
	var label map[string]any
	for _, p := range op("/v1/sandboxes", "get")["parameters"].([]any) {
		if p.(map[string]any)["name"] == "label" {
			label = p.(map[string]any)
		}
	}
	if label["schema"].(map[string]any)["type"] != "array" {
		t.Errorf("label is not repeatable: %v", label)
	}
	// Every $ref resolves.
	raw, _ := json.Marshal(doc)
	for _, m := range regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)"`).FindAllStringSubmatch(string(raw), -1) {
		if schemas[m[1]] == nil {
			t.Errorf("dangling $ref %s", m[1])
		}
	}
}

// TestDocumentPublic: the document needs no key.
func TestDocumentPublic(t *testing.T) {
	s, _ := newTestServer(t)
	rec := do(s, "GET", "/v1/openapi.json", "", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"openapi":"3.1.0"`) {
		t.Fatalf("GET /v1/openapi.json without a key: %d %.200s", rec.Code, rec.Body)
	}
}

// TestResponsesMatchDocument sends every GET of the route table to the
// server (over fakes) and validates each JSON answer with the documented
// status against the document's schema: a field the Go code sends that the
// document lacks, a required one it leaves out, or a value outside an enum
// fails here.
func TestResponsesMatchDocument(t *testing.T) {
	s, _ := newTestServer(t)
	doc := roundTrip(t, s.Document())
	v := validator{schemas: doc["components"].(map[string]any)["schemas"].(map[string]any)}
	checked := 0
	for _, rt := range s.routes() {
		if rt.public || rt.response == nil {
			continue
		}
		rec := do(s, rt.method, samplePath(rt.pattern), testKey, sampleBody(rt))
		docPath := pathParamRe.ReplaceAllString(rt.pattern, "{$1}")
		resp, documented := doc["paths"].(map[string]any)[docPath].(map[string]any)[strings.ToLower(rt.method)].(map[string]any)["responses"].(map[string]any)[strconv.Itoa(rec.Code)].(map[string]any)
		if rec.Code >= 400 {
			resp, documented = doc["paths"].(map[string]any)[docPath].(map[string]any)[strings.ToLower(rt.method)].(map[string]any)["responses"].(map[string]any)[fmt.Sprintf("%dXX", rec.Code/100)].(map[string]any)
		}
		if !documented {
			t.Errorf("%s %s answered %d, not documented", rt.method, rt.pattern, rec.Code)
			continue
		}
		if rec.Code >= 400 && !strings.Contains(rt.pattern, "{id}") && strings.Contains(rec.Body.String(), `"SANDBOX_NOT_FOUND"`) {
			continue // the fakes answer SANDBOX_NOT_FOUND for any unknown object (a snapshot, …)
		}
		c, _ := resp["content"].(map[string]any)["application/json"].(map[string]any)
		if c == nil || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			continue
		}
		var body any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Errorf("%s %s: %v", rt.method, rt.pattern, err)
			continue
		}
		for _, e := range v.check(c["schema"].(map[string]any), body, "body") {
			t.Errorf("%s %s (%d): %s", rt.method, rt.pattern, rec.Code, e)
		}
		checked++
	}
	if checked < 30 {
		t.Fatalf("validated only %d answers", checked)
	}
	// NDJSON streams: every line against the route's line schema.
	lines := 0
	for _, rt := range s.routes() {
		if rt.events == nil {
			continue
		}
		if strings.HasSuffix(rt.pattern, "/watch") {
			continue // never ends by itself
		}
		path := samplePath(rt.pattern)
		if slices.ContainsFunc(rt.query, func(p param) bool { return p.name == "stream" }) {
			path += "?stream=true" // follow=true would never end
		}
		rec := do(s, rt.method, path, testKey, sampleBody(rt))
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/x-ndjson") {
			continue
		}
		item := map[string]any{"$ref": "#/components/schemas/" + reflect.TypeOf(rt.events).Name()}
		for _, line := range strings.Split(strings.TrimSpace(rec.Body.String()), "\n") {
			var ev any
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Errorf("%s %s: line %q: %v", rt.method, rt.pattern, line, err)
				continue
			}
			for _, e := range v.check(item, ev, "line") {
				t.Errorf("%s %s: %s", rt.method, rt.pattern, e)
			}
			lines++
		}
	}
	if lines < 1 { // without an agent only the daemon's own streams (main logs) answer
		t.Fatalf("validated only %d stream lines", lines)
	}
	t.Logf("validated %d answers and %d stream lines", checked, lines)
}

// sampleBody is a valid request body for the routes the fakes serve.
func sampleBody(rt route) string {
	switch rt.method + " " + rt.pattern {
	case "POST /v1/sandboxes", "PUT /v1/sandboxes/{id}":
		return `{}`
	case "POST /v1/sandboxes/{id}/exec":
		return `{"cmd":["true"]}`
	}
	if rt.body != nil {
		return `{}`
	}
	return ""
}

func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// validator checks a JSON value against the subset of JSON Schema the
// generator writes: $ref, type, properties, required, enum, items,
// additionalProperties. Properties not in the schema are errors, so a
// field the document forgot shows up.
type validator struct{ schemas map[string]any }

func (v validator) check(s map[string]any, val any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		return v.check(v.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any), val, at)
	}
	if d, ok := s["discriminator"].(map[string]any); ok {
		obj, _ := val.(map[string]any)
		tag, _ := obj[d["propertyName"].(string)].(string)
		ref, ok := d["mapping"].(map[string]any)[tag].(string)
		if !ok {
			return []string{fmt.Sprintf("%s: %s %q is none of the oneOf's", at, d["propertyName"], tag)}
		}
		return v.check(map[string]any{"$ref": ref}, val, at)
	}
	if all, ok := s["allOf"].([]any); ok { // one object of every part's properties
		merged := map[string]any{"type": "object", "properties": map[string]any{}}
		var required []any
		for _, part := range all {
			p := part.(map[string]any)
			if ref, ok := p["$ref"].(string); ok {
				p = v.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			}
			maps.Copy(merged["properties"].(map[string]any), p["properties"].(map[string]any))
			r, _ := p["required"].([]any)
			required = append(required, r...)
		}
		merged["required"] = required
		return v.check(merged, val, at)
	}
	if c, ok := s["const"]; ok && c != val {
		return []string{fmt.Sprintf("%s: %v, want %v", at, val, c)}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, val) {
		return []string{fmt.Sprintf("%s: %v is not in the enum", at, val)}
	}
	var errs []string
	switch s["type"] {
	case "object":
		obj, ok := val.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", at, val)}
		}
		for _, r := range anyStringsOrNil(s["required"]) {
			if _, ok := obj[r]; !ok {
				errs = append(errs, fmt.Sprintf("%s: required %s missing", at, r))
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, x := range obj {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, v.check(ps, x, at+"."+k)...)
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				errs = append(errs, v.check(ap, x, at+"."+k)...)
			} else {
				errs = append(errs, fmt.Sprintf("%s: property %s is not in the document", at, k))
			}
		}
	case "array":
		arr, ok := val.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an array", at, val)}
		}
		for i, x := range arr {
			errs = append(errs, v.check(s["items"].(map[string]any), x, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case "string":
		if _, ok := val.(string); !ok {
			errs = append(errs, fmt.Sprintf("%s: %T, want a string", at, val))
		}
	case "integer", "number":
		if _, ok := val.(float64); !ok {
			errs = append(errs, fmt.Sprintf("%s: %T, want a number", at, val))
		}
	case "boolean":
		if _, ok := val.(bool); !ok {
			errs = append(errs, fmt.Sprintf("%s: %T, want a boolean", at, val))
		}
	}
	return errs
}

func anyStringsOrNil(v any) []string {
	if v == nil {
		return nil
	}
	return anyStrings(v)
}
