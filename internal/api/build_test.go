package api

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/build"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// baseImages knows the image "base" only.
type baseImages struct{ fakeImages }

func (baseImages) Get(ctx context.Context, name string) (*store.Image, error) {
	if name == "base" {
		return &store.Image{Name: "base"}, nil
	}
	return fakeImages{}.Get(ctx, name)
}

func (baseImages) Record(context.Context, string, string, []string, store.ImageConfig) (*store.Image, error) {
	panic("a refused build must not record an image")
}

func contextTar(t *testing.T, files map[string]string, links map[string]string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	for name, target := range links {
		tw.WriteHeader(&tar.Header{Name: name, Linkname: target, Typeflag: tar.TypeSymlink})
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// A build that cannot run is refused with a 400 before its stream starts,
// runs no sandbox (the builder has none) and leaves no context behind.
func TestBuildRefusedBeforeAnythingRuns(t *testing.T) {
	s, _ := newTestServer(t)
	tmp := t.TempDir()
	s.SetBuilder(build.New(nil, baseImages{}, tmp))
	for _, tc := range []struct {
		query string
		files map[string]string
		links map[string]string
		code  wire.Code
		msg   string
	}{
		{"name=x", map[string]string{"Dockerfile": "FROM base\nRUN true\nHEALTHCHECK CMD true\n"}, nil, wire.CodeDockerfileUnsupported, "line 3: HEALTHCHECK"},
		{"name=x", map[string]string{"Dockerfile": "FROM NOT-A-REF\n"}, nil, wire.CodeInvalidImageRef, "FROM NOT-A-REF"},
		{"name=x", map[string]string{"other": "x"}, nil, wire.CodeDockerfileInvalid, "no Dockerfile"},
		{"name=x", nil, map[string]string{"Dockerfile": "/etc/passwd"}, wire.CodeDockerfileInvalid, "no Dockerfile"},
		{"name=x&dockerfile=../../etc/passwd", map[string]string{"Dockerfile": "FROM base\n"}, nil, wire.CodeDockerfileInvalid, "no Dockerfile"},
		{"", map[string]string{"Dockerfile": "FROM base\n"}, nil, wire.CodeInvalidImageName, "name is required"},
		{"name=build-cache/abc", map[string]string{"Dockerfile": "FROM base\n"}, nil, wire.CodeInvalidImageName, "build cache"},
		{"name=x&buildArg=novalue", map[string]string{"Dockerfile": "FROM base\n"}, nil, wire.CodeInvalidParameter, "NAME=VALUE"},
		{"name=x&noCache=maybe", map[string]string{"Dockerfile": "FROM base\n"}, nil, wire.CodeInvalidParameter, "noCache"},
	} {
		req := httptest.NewRequest("POST", "/v1/images/build?"+tc.query, contextTar(t, tc.files, tc.links))
		req.Header.Set("Authorization", "Bearer "+testKey)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		var er wire.ErrorResponse
		json.Unmarshal(rec.Body.Bytes(), &er)
		if rec.Code != 400 || er.Error.Code != tc.code || !strings.Contains(er.Error.Message, tc.msg) {
			t.Errorf("%s %v: %d %s, want 400 %s naming %q", tc.query, tc.files, rec.Code, rec.Body, tc.code, tc.msg)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("contexts left behind: %v", left)
	}
}

// A FROM image sbx does not have is pulled inside the stream; a failed
// pull is the build's error event, naming the reference, and records nothing.
func TestBuildPullFailureIsAnErrorEvent(t *testing.T) {
	s, _ := newTestServer(t)
	s.SetBuilder(build.New(nil, baseImages{}, t.TempDir()))
	req := httptest.NewRequest("POST", "/v1/images/build?name=x", contextTar(t, map[string]string{"Dockerfile": "FROM registry.example/app:1\nRUN true\n"}, nil))
	req.Header.Set("Authorization", "Bearer "+testKey)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var types []string
	var last wire.BuildEvent
	for _, line := range strings.Split(strings.TrimSpace(rec.Body.String()), "\n") {
		last = wire.BuildEvent{}
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		types = append(types, last.Type)
	}
	if rec.Code != 200 || strings.Join(types, ",") != "pull,error" || last.Error.Code != wire.CodeRegistryUnavailable ||
		!strings.Contains(last.Error.Message, "FROM registry.example/app:1") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
