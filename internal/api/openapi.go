package api

import (
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/version"
	"github.com/sbxhq/sbx/wire"
)

// The OpenAPI 3.1 document, built from the route table (routes.go) and the
// Go types of wire/ (openapi_schema.go), served without a key at
// GET /v1/openapi.json. The SDKs under sdks/ are generated from it, and
// redocly lints it (sdks/typescript, TestOpenAPILint).

//go:generate go run ../sdkdoc/gen

// APIVersion is the version of the document: sbx's (internal/version).
const APIVersion = version.Version

var pathParamRe = regexp.MustCompile(`\{([a-zA-Z]+)(\.\.\.)?\}`)

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.Document())
	return nil
}

// tags are the groups of operations, in the order the document lists them.
var tags = []struct{ name, doc string }{
	{"sandboxes", "Create, list, start, stop, delete sandboxes; lifecycle policy, waits, events, logs of the main process"},
	{"commands", "Run a command and get its output, or stream it"},
	{"files", "Read, write, list, move files; tar streams; watch paths"},
	{"processes", "Background processes that outlive the request"},
	{"sessions", "Persistent shells where cd and exported variables persist"},
	{"pty", "Terminals, attached over a WebSocket"},
	{"code", "Code contexts: long-lived interpreters with rich results"},
	{"network", "Network, egress policy, exposed ports and previews"},
	{"snapshots", "Pause, resume, snapshots, forks and lineage"},
	{"images", "Images sandboxes start from"},
	{"system", "Health, metrics and this document"},
}

// tagOf is a route's tag: its own, else one derived from the path.
func tagOf(rt route) string {
	if rt.tag != "" {
		return rt.tag
	}
	rest, ok := strings.CutPrefix(rt.pattern, "/v1/sandboxes/{id}/")
	if !ok {
		switch {
		case strings.HasPrefix(rt.pattern, "/v1/snapshots"):
			return "snapshots"
		case strings.HasPrefix(rt.pattern, "/v1/images"):
			return "images"
		case strings.HasPrefix(rt.pattern, "/v1/"):
			return "sandboxes"
		}
		return "system"
	}
	first, _, _ := strings.Cut(rest, "/")
	switch first {
	case "exec":
		return "commands"
	case "files", "watch":
		return "files"
	case "processes":
		return "processes"
	case "sessions":
		return "sessions"
	case "ptys":
		return "pty"
	case "contexts", "run":
		return "code"
	case "network", "egress", "ports", "signed-urls":
		return "network"
	case "pause", "resume", "snapshots", "fork", "forks", "parent", "ancestors":
		return "snapshots"
	}
	return "sandboxes"
}

// operationID is a route's name, or for a row without one (merged from
// elsewhere; TestRoutesHaveDocMetadata fails on it) one made from the path.
func operationID(rt route) string {
	if rt.name != "" {
		return rt.name
	}
	id := strings.ToLower(rt.method)
	for _, seg := range strings.FieldsFunc(pathParamRe.ReplaceAllString(rt.pattern, ""), func(r rune) bool { return r == '/' || r == '-' || r == '.' }) {
		id += strings.ToUpper(seg[:1]) + seg[1:]
	}
	return id
}

// Document returns the OpenAPI 3.1 document of the routes this server serves.
func (s *Server) Document() map[string]any {
	schemas := map[string]any{}
	paths := map[string]map[string]any{}
	for _, rt := range s.routes() {
		docPath := pathParamRe.ReplaceAllString(rt.pattern, "{$1}")
		if paths[docPath] == nil {
			paths[docPath] = map[string]any{}
		}
		paths[docPath][strings.ToLower(rt.method)] = operation(rt, schemas)
	}
	var tagList []any
	for _, t := range tags {
		tagList = append(tagList, map[string]any{"name": t.name, "description": t.doc})
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "sbx",
			"version": APIVersion,
			"description": "Self-hosted sandboxes. Every /v1 route needs \"Authorization: Bearer <key>\" unless it says otherwise; " +
				"the key must hold the scope an operation names (security, x-scope), else 403 MISSING_SCOPE, and another team's objects answer 404. " +
				"Streams are NDJSON (application/x-ndjson): one JSON object per line, the line type in the response's schema, " +
				"the types that end a stream in its x-final-events. Errors are {\"error\": {\"code\", \"message\"}}; " +
				"x-error-codes lists the codes an operation can return.",
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"},
		},
		"servers": []any{map[string]any{"url": "http://127.0.0.1:7423", "description": "the daemon's default --listen address"}},
		"tags":    tagList,
		"paths":   paths,
		"components": map[string]any{
			"schemas":         schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "An API key (sbx key create) or the bootstrap admin key in <data-dir>/admin.token; an operation's security lists the scope the key must hold: " + strings.Join(wire.Scopes(), ", ")}},
		},
		"security": []any{map[string]any{"bearer": []any{}}},
	}
}

// operation is the document's entry for one route.
func operation(rt route, schemas map[string]any) map[string]any {
	op := map[string]any{"summary": summaryOf(rt.summary), "description": rt.summary, "operationId": operationID(rt), "tags": []string{tagOf(rt)}}
	var params []any
	for _, m := range pathParamRe.FindAllStringSubmatch(rt.pattern, -1) {
		desc := "sandbox id or name"
		if m[1] == "name" {
			desc = "image name (may contain '/' and ':')"
			if strings.HasPrefix(rt.pattern, "/v1/snapshots/") {
				desc = "snapshot name"
			}
		}
		if d, ok := pathParamDocs[m[1]]; ok { // interactive.go
			desc = d
		}
		if m[1] == "port" {
			desc = "an exposed port"
		}
		if m[1] == "cid" {
			desc = "code context id"
		}
		if m[1] == "path" {
			desc = "path forwarded to the port (may contain '/')"
		}
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "description": desc, "schema": map[string]any{"type": "string"}})
	}
	for _, q := range rt.query {
		params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.doc, "schema": paramSchema(q)})
	}
	if params != nil {
		op["parameters"] = params
	}
	if rt.body != nil {
		c := content(rt.body, schemas)
		if j, ok := c["application/json"].(map[string]any); ok {
			j["example"] = rt.body // the row's body value is its example (routes.go)
		}
		op["requestBody"] = map[string]any{"required": true, "content": c}
	}
	op["responses"] = responses(rt, schemas)
	codes := codesOf(rt) // codes.go
	names := strs(codes)
	op["x-error-codes"] = names
	op["x-starts-instance"] = startsInstance(rt) // lookup.go
	// auth.go: the scope the key must hold.
	if rt.scope != "" {
		op["security"] = []any{map[string]any{"bearer": []any{string(rt.scope)}}}
		op["x-scope"] = string(rt.scope)
	} else if rt.public {
		op["security"] = []any{}
	}
	return op
}

// summaryOf is the first clause of a route's summary: the document's
// summary is a title; the whole text is the description.
func summaryOf(s string) string {
	for _, sep := range []string{"; ", ": ", " (", ". "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	return s
}

// paramDefaultRe finds a query parameter's default in its doc: "(default V)",
// "(default V, …)" or "(default V; …)".
var paramDefaultRe = regexp.MustCompile(`\(default ([^,;):]+)[,;)]`)

func paramSchema(q param) map[string]any {
	switch q.typ {
	case "[]string":
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	case "state":
		return map[string]any{"type": "string", "enum": strs(wire.States())}
	}
	s := map[string]any{"type": q.typ}
	if m := paramDefaultRe.FindStringSubmatch(q.doc); m != nil {
		var err error
		switch q.typ {
		case "integer":
			s["default"], err = strconv.Atoi(m[1])
		case "number":
			s["default"], err = strconv.ParseFloat(m[1], 64)
		case "boolean":
			s["default"], err = strconv.ParseBool(m[1])
		default:
			s["default"] = m[1]
		}
		if err != nil {
			delete(s, "default") // prose, not a value; TestParamDefaults names it
		}
	}
	return s
}

// responses are a route's success responses and its errors.
func responses(rt route, schemas map[string]any) map[string]any {
	out := map[string]any{}
	ok := map[string]any{"description": http.StatusText(rt.status)}
	c := map[string]any{}
	if rt.response != nil {
		if _, nd := rt.response.(ndjson); !nd {
			c = content(rt.response, schemas)
		}
	}
	if rt.events != nil {
		c["application/x-ndjson"] = map[string]any{
			// JSON Schema 2020-12: a string whose content is NDJSON, each
			// line one event (OpenAPI 3.2 calls the line schema itemSchema).
			"schema": map[string]any{
				"type":             "string",
				"description":      "NDJSON: one " + reflect.TypeOf(rt.events).Name() + " per line",
				"contentMediaType": "application/x-ndjson",
				"contentSchema":    schemaOf(reflect.TypeOf(rt.events), schemas),
			},
			"x-itemSchema": schemaOf(reflect.TypeOf(rt.events), schemas),
		}
	}
	if len(c) > 0 {
		ok["content"] = c
	}
	if rt.frames != nil {
		ok["description"] = "Switching Protocols: a WebSocket"
		ok["x-websocket"] = map[string]any{
			"binaryFrames": "the terminal's bytes, both ways",
			"textFrames":   schemaOf(reflect.TypeOf(rt.frames), schemas),
			"close":        "after the server's \"exit\" frame; a client closing detaches",
		}
	}
	out[strconv.Itoa(rt.status)] = ok
	if rt.otherStatus != 0 {
		other := map[string]any{"description": http.StatusText(rt.otherStatus)}
		if rt.otherStatus != http.StatusNoContent && rt.response != nil {
			other["content"] = content(rt.response, schemas)
		}
		out[strconv.Itoa(rt.otherStatus)] = other
	}
	codes := strs(codesOf(rt))
	id := operationID(rt)
	name := strings.ToUpper(id[:1]) + id[1:] + "Error"
	schemas[name] = errorSchema(codes)
	for _, status := range []string{"4XX", "5XX"} {
		out[status] = map[string]any{
			"description": "an error; error.code is one of " + strings.Join(codes, ", "),
			"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + name}}},
		}
	}
	return out
}

// errorSchema is the error answer of an operation ({"error": ErrorBody})
// with error.code limited to its codes, so that a generated client knows
// which codes each operation returns; one per operation, named after it
// ("ExecCommandError").
func errorSchema(codes []string) map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []string{"error"},
		"properties": map[string]any{"error": map[string]any{
			"type":        "object",
			"description": "What went wrong: a stable code to compare against and a message for people",
			"required":    []string{"code", "message"},
			"properties": map[string]any{
				"code":    map[string]any{"type": "string", "enum": codes, "description": "The error's stable, machine-readable code"},
				"message": map[string]any{"type": "string", "description": "What went wrong, for people; it may change between versions"},
				"reason":  map[string]any{"type": "string", "description": "INSTANCE_LOST: why the instance ended, if known"},
			},
		}},
	}
}

func content(v any, schemas map[string]any) map[string]any {
	switch v.(type) {
	case rawBody:
		return map[string]any{"application/octet-stream": map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}}
	case ndjson:
		return map[string]any{"application/x-ndjson": map[string]any{"schema": map[string]any{"type": "string"}}}
	}
	return map[string]any{"application/json": map[string]any{"schema": schemaOf(reflect.TypeOf(v), schemas)}}
}
