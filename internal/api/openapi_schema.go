package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
)

// JSON schemas of the Go types, by reflection.
//
// The rule for "required", one for both directions since most types are
// used in one only:
//   - a field without omitempty or omitzero is required: the server always
//     sends it (a response), or needs it (a request; the server's validation
//     answers 400 when it is empty);
//   - a field with omitempty or omitzero is optional;
//   - fields of an embedded pointer struct (EventLine's *Event) are optional,
//     since the pointer may be nil;
//   - optionalFields lists request fields without omitempty that still have a
//     default on the server (an empty value is not an error).
//
// Enums come from typeEnums (typed Go constants) and fieldEnums.
//
// Descriptions and defaults come from the doc comments of the types and
// fields in wire/, which go generate copies into openapi_docs_gen.go
// (internal/sdkdoc): a field's default is the JSON value of its comment's
// "Default: V." sentence.

// optionalFields are non-omitempty request fields with a server default,
// by "GoType.jsonName".
var optionalFields = map[string]bool{
	"SignalRequest.signal": true, // default SIGTERM
}

var (
	timeType       = reflect.TypeOf(time.Time{})
	rawMessageType = reflect.TypeOf(json.RawMessage{})
)

// schemaOf returns a JSON schema for t, adding named structs to schemas.
func schemaOf(t reflect.Type, schemas map[string]any) map[string]any {
	if t.Kind() == reflect.Pointer {
		return schemaOf(t.Elem(), schemas)
	}
	if vs, ok := typeEnums[t]; ok {
		return map[string]any{"type": "string", "enum": vs}
	}
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == rawMessageType:
		return map[string]any{"description": "any JSON value"}
	case t.Kind() == reflect.Struct:
		name := t.Name()
		if _, done := schemas[name]; !done {
			schemas[name] = map[string]any{} // breaks cycles
			if variants, ok := eventUnions[name]; ok {
				schemas[name] = unionSchema(t, variants, schemas)
			} else {
				schemas[name] = structSchema(t, name, schemas)
			}
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return map[string]any{"type": "string", "contentEncoding": "base64"}
	case t.Kind() == reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), schemas)}
	case t.Kind() == reflect.Map:
		vs := schemaOf(t.Elem(), schemas)
		if typ, ok := vs["type"].(string); ok && t.Elem().Kind() == reflect.Pointer {
			vs["type"] = []string{typ, "null"} // a null value means something (PATCH env: unset)
		}
		return map[string]any{"type": "object", "additionalProperties": vs}
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return map[string]any{"type": "integer"}
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return map[string]any{"type": "number"}
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	case t.Kind() == reflect.Interface:
		return map[string]any{"description": "any JSON value"}
	}
	return map[string]any{}
}

// addFields adds t's JSON fields to props, flattening embedded structs as
// encoding/json does; owner names the schema for the enum and optional
// tables. Fields later in t win over embedded ones, as in encoding/json.
func addFields(t reflect.Type, owner string, viaPointer bool, props map[string]any, required *[]string, schemas map[string]any) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			et := f.Type
			ptr := et.Kind() == reflect.Pointer
			if ptr {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				addFields(et, owner, viaPointer || ptr, props, required, schemas)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := schemaOf(f.Type, schemas)
		if vs, ok := fieldEnums[owner+"."+name]; ok {
			s = map[string]any{"type": "string", "enum": vs}
		}
		// The field's doc comment in wire/ (openapi_docs_gen.go, go generate).
		if doc := sdkDocs[t.Name()+"."+f.Name]; doc != "" {
			s["description"] = doc
		}
		if def, ok := sdkDefaults[t.Name()+"."+f.Name]; ok {
			s["default"] = json.RawMessage(def)
		}
		props[name] = s
		*required = slices.DeleteFunc(*required, func(r string) bool { return r == name })
		omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		if !omit && !viaPointer && !optionalFields[owner+"."+name] {
			*required = append(*required, name)
		}
	}
}

// structSchema is the object schema of struct t, documented from wire/.
func structSchema(t reflect.Type, owner string, schemas map[string]any) map[string]any {
	props := map[string]any{}
	var required []string
	addFields(t, owner, false, props, &required, schemas)
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		slices.Sort(required)
		s["required"] = required
	}
	if doc := sdkDocs[t.Name()]; doc != "" {
		s["description"] = doc
	}
	return s
}

// unionSchema is an event type of eventUnions: a oneOf of one schema per
// value of its "type", discriminated by it. Each variant is the type's
// fields (NameFields, every one optional but type) with type fixed to its
// value and the fields it always has required, so a generated client
// narrows on type and still reads any field of the union.
func unionSchema(t reflect.Type, variants []eventVariant, schemas map[string]any) map[string]any {
	name := t.Name()
	fields := structSchema(t, name, schemas)
	values := make([]string, len(variants))
	for i, v := range variants {
		values[i] = v.value
	}
	props := fields["properties"].(map[string]any)
	props["type"].(map[string]any)["enum"] = values
	fields["required"] = []string{"type"}
	fieldsName := name + "Fields"
	schemas[fieldsName] = fields
	var oneOf []any
	mapping := map[string]any{}
	for _, v := range variants {
		vname := name + strings.ToUpper(v.value[:1]) + v.value[1:]
		ref := "#/components/schemas/" + vname
		schemas[vname] = map[string]any{
			"description": "One " + name + " whose type is \"" + v.value + "\".",
			"allOf": []any{
				map[string]any{"$ref": "#/components/schemas/" + fieldsName},
				map[string]any{
					"type":       "object",
					"properties": map[string]any{"type": map[string]any{"type": "string", "const": v.value, "description": props["type"].(map[string]any)["description"]}},
					"required":   append([]string{"type"}, v.required...),
				},
			},
		}
		oneOf = append(oneOf, map[string]any{"$ref": ref})
		mapping[v.value] = ref
	}
	desc := fields["description"]
	if ends, ok := streamEnds[name]; ok {
		desc = strings.TrimSpace(sdkDocs[name] + " One line of an NDJSON stream. A stream ends after an event of type " +
			strings.Join(ends, " or ") + ".")
	}
	s := map[string]any{
		"description":   desc,
		"oneOf":         oneOf,
		"discriminator": map[string]any{"propertyName": "type", "mapping": mapping},
	}
	if ends, ok := streamEnds[name]; ok {
		s["x-final-events"] = ends
	}
	return s
}
