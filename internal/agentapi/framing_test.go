package agentapi

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	in := NewReader(strings.NewReader(`{"type":"start"}`+"\n"+`{"type":"exit"}`+"\n"), 64)
	var types []string
	for {
		line, err := in.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, EventType(line))
	}
	if strings.Join(types, ",") != "start,exit" || !ExecFinal[types[1]] || ExecFinal[types[0]] {
		t.Fatalf("types %v", types)
	}
}

func TestReaderLineTooLong(t *testing.T) {
	in := NewReader(strings.NewReader(`{"type":"start"}`+"\n"+strings.Repeat("x", 100)+"\n"), 64)
	if _, err := in.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("over-long line: %v", err)
	}
}

func TestWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	out := NewWriter(rec)
	if !out.Send(map[string]string{"type": "start"}) || !out.SendLine([]byte(`{"type":"exit"}`)) {
		t.Fatal("send failed")
	}
	if rec.Header().Get("Content-Type") != ContentTypeNDJSON || rec.Body.String() != "{\"type\":\"start\"}\n{\"type\":\"exit\"}\n" {
		t.Fatalf("%q %q", rec.Header(), rec.Body.String())
	}
}

// Every route is listed once, and each path is a rooted ServeMux pattern.
func TestRoutes(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Routes {
		if seen[r.Pattern()] || !strings.HasPrefix(r.Path, "/") {
			t.Errorf("route %s listed twice or not rooted", r.Pattern())
		}
		seen[r.Pattern()] = true
		if got, ok := Lookup(r.Method, r.Path); !ok || got != r {
			t.Errorf("Lookup(%s) = %v, %v", r.Pattern(), got, ok)
		}
	}
}
