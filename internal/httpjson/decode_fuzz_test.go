package httpjson

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// FuzzDecode sends arbitrary bodies through the strict request decoder into
// the API's request types. It must never panic; a refusal is an Invalid
// (400) or TooLarge (413) error with a code and a message, never an internal
// one; and whatever it accepts is exactly one JSON value that encoding/json
// reads the same way.
//
//	go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 1m ./internal/httpjson/
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `[1,2]`, `"x"`, `1`, `{"name":`, `{} {}`, `{}x`, `{"nmae":"x"}`,
		`{"name":"a","labels":{"k":"v"},"env":{"A":"1"},"cpu":0.5,"memoryMiB":64}`,
		`{"memoryMiB":"lots"}`, `{"memoryMiB":1e400}`, `{"memoryMiB":1.5}`, `{"labels":[1]}`,
		`{"cmd":["true"],"timeoutSeconds":-1}`, `{"cmd":[null]}`, `{"shell":"\ud800"}`,
		`{"name":"a","name":"b"}`, `{"NAME":"x"}`, "\xef\xbb\xbf{}", "{\"name\":\"\xff\"}",
		`{"labels":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
		`{"path":"/x","mode":"0755","parents":true}`, `{"from":"a","to":"b","overwrite":1}`,
	} {
		f.Add([]byte(s))
	}
	targets := []func() any{
		func() any { return new(wire.CreateSandboxRequest) },
		func() any { return new(wire.ExecRequest) },
		func() any { return new(wire.MkdirRequest) },
		func() any { return new(wire.MoveRequest) },
		func() any { return new(wire.PullRequest) },
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, newV := range targets {
			v := newV()
			w := httptest.NewRecorder()
			r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
			err := Decode(w, r, v)
			if err != nil {
				k := errdefs.KindOf(err)
				if (k != errdefs.KindInvalid && k != errdefs.KindTooLarge) || errdefs.CodeOf(err) == "" || err.Error() == "" {
					t.Fatalf("Decode(%q) into %T: %v (kind %v), want a coded Invalid or TooLarge error", body, v, err, k)
				}
				continue
			}
			if len(bytes.TrimSpace(body)) == 0 {
				continue // an empty body leaves v as it is
			}
			// Accepted: encoding/json agrees on the value.
			ref := newV()
			if jerr := json.Unmarshal(body, ref); jerr != nil {
				t.Fatalf("Decode accepted %q into %T, json.Unmarshal refuses it: %v", body, v, jerr)
			}
			if !reflect.DeepEqual(v, ref) {
				t.Fatalf("Decode(%q) = %+v, json.Unmarshal = %+v", body, v, ref)
			}
		}
	})
}
