package api

import (
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

var pathParamRe = regexp.MustCompile(`\{([a-zA-Z]+)(\.\.\.)?\}`)

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.Document())
	return nil
}

// Document returns the OpenAPI 3.1 document of the routes this server serves.
func (s *Server) Document() map[string]any {
	schemas := map[string]any{}
	paths := map[string]map[string]any{}
	for _, rt := range s.routes() {
		docPath := pathParamRe.ReplaceAllString(rt.pattern, "{$1}")
		op := map[string]any{"summary": rt.summary, "operationId": operationID(rt)}
		var params []any
		for _, m := range pathParamRe.FindAllStringSubmatch(rt.pattern, -1) {
			desc := "sandbox id or name"
			if m[1] == "name" {
				desc = "image name (may contain '/' and ':')"
			}
			if d, ok := pathParamDocs[m[1]]; ok { // interactive.go
				desc = d
			}
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "description": desc, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.doc, "schema": map[string]any{"type": q.typ}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.body != nil {
			op["requestBody"] = map[string]any{"required": true, "content": content(rt.body, schemas)}
		}
		resp := map[string]any{"description": http.StatusText(rt.status)}
		if rt.response != nil {
			resp["content"] = content(rt.response, schemas)
		}
		codes := codesOf(rt) // codes.go
		names := make([]string, len(codes))
		for i, c := range codes {
			names[i] = string(c)
		}
		responses := map[string]any{strconv.Itoa(rt.status): resp, "default": map[string]any{
			"description": "an error; error.code is one of " + strings.Join(names, ", "),
			"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/ErrorResponse"}}},
		}}
		op["x-error-codes"] = names
		op["x-starts-instance"] = startsInstance(rt) // lookup.go
		op["responses"] = responses
		if !rt.public || rt.scope != "" { // auth.go: the scope the key must hold
			op["security"] = []any{map[string]any{"bearer": []any{string(rt.scope)}}}
			op["x-scope"] = string(rt.scope)
		}
		if rt.public && rt.scope == "" {
			op["security"] = []any{}
		}
		if paths[docPath] == nil {
			paths[docPath] = map[string]any{}
		}
		paths[docPath][strings.ToLower(rt.method)] = op
	}
	schemaOf(reflect.TypeOf(sdk.ErrorResponse{}), schemas)
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": "sbx", "version": "1", "description": "Self-hosted sandboxes. Every /v1 route needs Authorization: Bearer <key>; the key must hold the scope an operation names (security, x-scope), else 403 MISSING_SCOPE. Another team's objects answer 404. Streams are NDJSON: one JSON object per line."},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "An API key (sbx key create) or the bootstrap admin token; an operation's security lists the scope the key must hold: " + strings.Join(sdk.Scopes(), ", ")}},
		},
		"security": []any{map[string]any{"bearer": []any{}}},
	}
}

func operationID(rt route) string {
	return strings.ToLower(rt.method) + strings.NewReplacer("/", "_", "{", "", "}", "", ".", "").Replace(rt.pattern)
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

var timeType = reflect.TypeOf(time.Time{})

// schemaOf returns a JSON schema for t, adding named structs to schemas.
func schemaOf(t reflect.Type, schemas map[string]any) map[string]any {
	if t.Kind() == reflect.Pointer {
		return schemaOf(t.Elem(), schemas)
	}
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.Struct:
		name := t.Name()
		if _, done := schemas[name]; !done {
			schemas[name] = map[string]any{} // breaks cycles
			props := map[string]any{}
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				tag := strings.Split(f.Tag.Get("json"), ",")[0]
				if tag == "-" || !f.IsExported() {
					continue
				}
				if tag == "" {
					tag = f.Name
				}
				props[tag] = schemaOf(f.Type, schemas)
			}
			schemas[name] = map[string]any{"type": "object", "properties": props}
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return map[string]any{"type": "string", "format": "byte"}
	case t.Kind() == reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), schemas)}
	case t.Kind() == reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), schemas)}
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return map[string]any{"type": "integer"}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return map[string]any{"type": "number"}
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	}
	return map[string]any{}
}
