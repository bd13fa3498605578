package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/sdk"
)

// call sends a raw request with the daemon's key and decodes an error body.
func (d *daemon) call(method, path, body string) (int, sdk.ErrorBody) {
	d.t.Helper()
	req, err := http.NewRequest(method, "http://"+d.addr+path, strings.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e sdk.ErrorResponse
	json.Unmarshal(b, &e)
	return resp.StatusCode, e.Error
}

func TestBadInputChangesNothing(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "taken"})
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown image", "POST", "/v1/sandboxes", `{"image":"nope"}`, 404, "IMAGE_NOT_FOUND"},
		{"bad name", "POST", "/v1/sandboxes", `{"name":"Bad_Name"}`, 400, "INVALID_NAME"},
		{"reserved prefix", "POST", "/v1/sandboxes", `{"name":"sbx-x"}`, 400, "INVALID_NAME"},
		{"duplicate name", "POST", "/v1/sandboxes", `{"name":"taken"}`, 409, "NAME_TAKEN"},
		{"negative memory", "POST", "/v1/sandboxes", `{"memoryMiB":-1}`, 400, "INVALID_MEMORY"},
		{"negative cpu", "POST", "/v1/sandboxes", `{"cpu":-2}`, 400, "INVALID_CPU"},
		{"relative workdir", "POST", "/v1/sandboxes", `{"workdir":"w"}`, 400, "INVALID_WORKDIR"},
		{"bad env key", "POST", "/v1/sandboxes", `{"env":{"1X":"y"}}`, 400, "INVALID_ENV"},
		{"malformed json", "POST", "/v1/sandboxes", `{"name":`, 400, "INVALID_JSON"},
		{"not an object", "POST", "/v1/sandboxes", `[1,2]`, 400, "INVALID_JSON"},
		{"wrong type", "POST", "/v1/sandboxes", `{"memoryMiB":"lots"}`, 400, "INVALID_JSON"},
		{"unknown field", "POST", "/v1/sandboxes", `{"nmae":"x"}`, 400, "UNKNOWN_FIELD"},
		{"trailing data", "POST", "/v1/sandboxes", `{} {}`, 400, "INVALID_JSON"},
		{"deep nesting", "POST", "/v1/sandboxes", `{"labels":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, 400, "INVALID_JSON"},
		{"huge body", "POST", "/v1/sandboxes", `{"name":"` + strings.Repeat("a", 2<<20) + `"}`, 413, "BODY_TOO_LARGE"},
		{"missing sandbox", "GET", "/v1/sandboxes/nope", ``, 404, "SANDBOX_NOT_FOUND"},
		{"exec missing sandbox", "POST", "/v1/sandboxes/nope/exec", `{"cmd":["true"]}`, 404, "SANDBOX_NOT_FOUND"},
		{"exec without command", "POST", "/v1/sandboxes/taken/exec", `{}`, 400, "INVALID_EXEC"},
		{"exec unknown field", "POST", "/v1/sandboxes/taken/exec", `{"cmd":["true"],"bogus":1}`, 400, "UNKNOWN_FIELD"},
		{"bad grace", "POST", "/v1/sandboxes/taken/stop?graceSeconds=-1", ``, 400, "INVALID_GRACE"},
		{"bad bool", "DELETE", "/v1/sandboxes/taken?wait=maybe", ``, 400, "INVALID_PARAMETER"},
		{"path with NUL", "GET", "/v1/sandboxes/taken/files?path=%00", ``, 400, "INVALID_PATH"},
		{"empty path", "GET", "/v1/sandboxes/taken/files?path=", ``, 400, "INVALID_PATH"},
		{"unknown route", "GET", "/v1/nothing", ``, 404, "ROUTE_NOT_FOUND"},
		{"bad image name", "POST", "/v1/images/import?name=UPPER", `x`, 400, "INVALID_IMAGE_NAME"},
		{"garbage image", "POST", "/v1/images/import?name=junk", `this is not a tar`, 400, "INVALID_IMAGE"},
		{"pull without ref", "POST", "/v1/images/pull", `{}`, 400, "INVALID_IMAGE_REF"},
		{"base image in use", "DELETE", "/v1/images/base", ``, 409, "IMAGE_IN_USE"},
	}
	for _, c := range cases {
		status, e := d.call(c.method, c.path, c.body)
		if status != c.status || string(e.Code) != c.code || e.Message == "" {
			t.Errorf("%s: got %d %s %q, want %d %s", c.name, status, e.Code, e.Message, c.status, c.code)
		}
	}
	list, err := d.client.ListSandboxes(ctx, sdk.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Errorf("bad input created sandboxes: %d, %v", len(list), err)
	}
	imgs, err := d.client.ListImages(ctx)
	if err != nil || len(imgs) != 1 {
		t.Errorf("bad input changed images: %v, %v", imgs, err)
	}
	// The daemon is still healthy.
	if res, err := d.client.Exec(ctx, "taken", sdk.ExecRequest{Cmd: []string{"true"}}); err != nil || res.ExitCode != 0 {
		t.Errorf("daemon unhealthy after bad input: %v %v", res, err)
	}
}

func TestAuth(t *testing.T) {
	d := startDaemon(t)
	for _, auth := range []string{"", "Bearer wrong", "Basic " + d.token, d.token} {
		req, _ := http.NewRequest("GET", "http://"+d.addr+"/v1/sandboxes", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
	if status, _ := d.call("GET", "/v1/sandboxes", ""); status != 200 {
		t.Errorf("right key: status %d", status)
	}
}

// TestOpenAPIMatchesRoutes checks that every operation in the served document
// is routed (no 404 ROUTE_NOT_FOUND, no 405) and that no route is missing
// from it.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	d := startDaemon(t)
	req, _ := http.NewRequest("GET", "http://"+d.addr+"/v1/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if doc.OpenAPI == "" || len(doc.Paths) < 10 {
		t.Fatalf("document too small: %+v", doc)
	}
	ops := 0
	for path, methods := range doc.Paths {
		for method := range methods {
			ops++
			p := strings.NewReplacer("{id}", "no-such-sandbox", "{name}", "no-such-image").Replace(path)
			status, e := d.call(strings.ToUpper(method), p, "")
			if e.Code == "ROUTE_NOT_FOUND" || status == http.StatusMethodNotAllowed {
				t.Errorf("%s %s is documented but not routed (%d %s)", method, path, status, e.Code)
			}
		}
	}
	// Routes the document does not list answer ROUTE_NOT_FOUND.
	for _, probe := range []struct{ method, path string }{{"PATCH", "/v1/images/x"}, {"GET", "/v1/sandboxes/x/bogus"}, {"POST", "/v1/images/x/y"}} {
		if _, ok := doc.Paths[probe.path]; ok {
			continue
		}
		status, e := d.call(probe.method, probe.path, "")
		if status != 404 && status != 405 {
			t.Errorf("%s %s undocumented but answered %d %s", probe.method, probe.path, status, e.Code)
		}
	}
	if ops < 20 {
		t.Errorf("only %d operations documented", ops)
	}
}
