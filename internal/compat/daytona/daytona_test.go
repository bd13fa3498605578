package daytona

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// fakeSandboxes is the Manager for tests of the translation above it.
type fakeSandboxes struct {
	mu        sync.Mutex
	events    []store.Event
	changed   chan struct{}
	sandboxes []*store.Sandbox
	created   []wire.CreateSandboxRequest
	updated   []wire.UpdateSandboxRequest
	principal auth.Principal // of the last call
}

var errNotHere = errdefs.Internal(nil, "not in the fake")

func (f *fakeSandboxes) Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error) {
	f.principal, _ = auth.FromContext(ctx)
	f.created = append(f.created, req)
	sb := &store.Sandbox{ID: fmt.Sprintf("sbx-%d", len(f.sandboxes)), Name: req.Name, State: wire.StateStarted,
		Spec: store.Spec{Image: req.Image, Labels: req.Labels, Env: req.Env, CPU: 1, MemoryMiB: 1536}, CreatedAt: time.Unix(int64(len(f.sandboxes)), 0)}
	f.sandboxes = append(f.sandboxes, sb)
	return sb, nil
}
func (f *fakeSandboxes) List(ctx context.Context, _ store.Filter) ([]*store.Sandbox, error) {
	f.principal, _ = auth.FromContext(ctx)
	return f.sandboxes, nil
}
func (f *fakeSandboxes) Get(_ context.Context, id string) (*store.Sandbox, error) {
	for _, sb := range f.sandboxes {
		if sb.ID == id || sb.Name == id {
			return sb, nil
		}
	}
	return nil, errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", id)
}
func (f *fakeSandboxes) Delete(context.Context, string, bool) (*store.Sandbox, error) {
	return nil, errNotHere
}
func (f *fakeSandboxes) EnsureRunning(context.Context, string) (*store.Sandbox, error) {
	return nil, errNotHere
}
func (f *fakeSandboxes) Stop(context.Context, string, sandbox.StopOptions) (*store.Sandbox, error) {
	return nil, errNotHere
}
func (f *fakeSandboxes) Archive(context.Context, string) (*store.Sandbox, error) {
	return nil, errNotHere
}
func (f *fakeSandboxes) Pause(context.Context, string) (*store.Sandbox, error) {
	return nil, errNotHere
}
func (f *fakeSandboxes) Update(ctx context.Context, id string, req wire.UpdateSandboxRequest) (*store.Sandbox, error) {
	f.updated = append(f.updated, req)
	return f.Get(ctx, id)
}
func (f *fakeSandboxes) Fork(context.Context, string, wire.ForkRequest) (*sandbox.ForkResult, error) {
	return nil, errNotHere
}
func (f *fakeSandboxes) CreateSnapshot(context.Context, string, wire.CreateSnapshotRequest) (*store.Snapshot, error) {
	return nil, errNotHere
}
func (f *fakeSandboxes) Touch(context.Context, string) {}
func (f *fakeSandboxes) GetSnapshot(_ context.Context, name string) (*store.Snapshot, error) {
	return nil, errdefs.NotFound(wire.CodeSnapshotNotFound, "no snapshot %q", name)
}
func (f *fakeSandboxes) ListSnapshots(context.Context) ([]*store.Snapshot, error) { return nil, nil }
func (f *fakeSandboxes) Agent(context.Context, string) (*agentapi.Client, *store.Sandbox, error) {
	return nil, nil, errNotHere
}
func (f *fakeSandboxes) MainExit(*store.Sandbox) (agentapi.MainExit, bool) {
	return agentapi.MainExit{}, false
}
func (f *fakeSandboxes) Events(_ context.Context, _ string, after int64, limit int) ([]store.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.Event
	for _, ev := range f.events {
		if ev.Seq > after && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, nil
}
func (f *fakeSandboxes) EventsChanged() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

// record appends an event and wakes the followers.
func (f *fakeSandboxes) record(ev store.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev.Seq = int64(len(f.events) + 1)
	f.events = append(f.events, ev)
	if f.changed != nil {
		close(f.changed)
	}
	f.changed = make(chan struct{})
}

type fakeImages map[string]bool

func (f fakeImages) List(context.Context) ([]*store.Image, error) {
	var out []*store.Image
	for name := range f {
		out = append(out, &store.Image{Name: name})
	}
	return out, nil
}

func (f fakeImages) Get(_ context.Context, name string) (*store.Image, error) {
	if !f[name] {
		return nil, errdefs.NotFound(wire.CodeImageNotFound, "no image %q", name)
	}
	return &store.Image{Name: name}, nil
}

const testKey = "k3y"

func newTest() (*Handler, *fakeSandboxes) {
	f := &fakeSandboxes{}
	return New(Config{Sandboxes: f, Images: fakeImages{"python": true}, Gate: &authz.Gate{Keys: auth.AdminToken(testKey)}}), f
}

func do(h http.Handler, method, path, body string) (*httptest.ResponseRecorder, map[string]any) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var m map[string]any
	json.Unmarshal(rec.Body.Bytes(), &m)
	return rec, m
}

func TestMinutesAndSeconds(t *testing.T) {
	for _, c := range []struct{ min, sec int }{{0, 0}, {1, 60}, {30, 1800}, {-1, -1}, {-7, -1}} {
		m := c.min
		if got := *minutesToSeconds(&m); got != c.sec {
			t.Errorf("minutesToSeconds(%d) = %d, want %d", c.min, got, c.sec)
		}
	}
	if minutesToSeconds(nil) != nil {
		t.Error("nil minutes must stay nil (the daemon's default)")
	}
	for _, c := range []struct{ sec, min int }{{-1, -1}, {0, 0}, {3600, 60}, {90, 1}} {
		if got := deleteMinutes(c.sec); got != c.min {
			t.Errorf("deleteMinutes(%d) = %d, want %d", c.sec, got, c.min)
		}
	}
}

func TestStates(t *testing.T) {
	for sbx, want := range map[wire.State]string{
		wire.StateStarted: "started", wire.StateStopped: "stopped", wire.StateDeleting: "destroying",
		wire.StateDeleted: "destroyed", wire.StateArchived: "archived", wire.StatePaused: "paused",
		wire.StateError: "error", wire.StateRestoring: "restoring", "made-up": "unknown",
	} {
		if got := stateOf(sbx); got != want {
			t.Errorf("stateOf(%s) = %s, want %s", sbx, got, want)
		}
	}
}

func TestToDTO(t *testing.T) {
	sb := &store.Sandbox{ID: "sbx-1", State: wire.StateStarted, Spec: store.Spec{Image: "python", CPU: 0.5, MemoryMiB: 1536, DiskMiB: 2048,
		Policy: &store.Policy{AutoStopSeconds: 1800, AutoArchiveSeconds: 7200, AutoDeleteSeconds: -1}, Network: wire.NetworkNone}}
	d := toDTO(sb, "http://h/daytona/toolbox")
	if d.Name != "sbx-1" || d.Snapshot != "python" || d.CPU != 1 || d.Memory != 2 || d.Disk != 2 ||
		d.AutoStopInterval != 30 || d.AutoArchiveInterval != 120 || d.AutoDeleteInterval != -1 ||
		!d.NetworkBlockAll || d.ToolboxProxyURL != "http://h/daytona/toolbox" || d.Labels == nil || d.Env == nil {
		t.Errorf("toDTO = %+v", d)
	}
}

func TestOnlyFrom(t *testing.T) {
	if img, ok := onlyFrom("# comment\n\nFROM python\n"); !ok || img != "python" {
		t.Errorf("FROM python: %q, %v", img, ok)
	}
	for _, df := range []string{"", "FROM a\nRUN true\n", "FROM a AS b\n", "FROM a\nFROM b\n", "COPY . /x\n"} {
		if img, ok := onlyFrom(df); ok {
			t.Errorf("%q: want a build, got only FROM %q", df, img)
		}
	}
}

func TestErrorMapping(t *testing.T) {
	for _, c := range []struct {
		err    error
		path   string
		status int
		code   string
		source string
	}{
		{errdefs.NotFound(wire.CodeSandboxNotFound, "x"), "/daytona/api/sandbox/x", 404, "SANDBOX_NOT_FOUND", sourceAPI},
		{errdefs.NotFound(wire.CodeFileNotFound, "x"), "/daytona/toolbox/x/files", 404, "FILE_NOT_FOUND", sourceDaemon},
		{errdefs.Invalid(wire.CodeInvalidJSON, "x"), "/daytona/api/sandbox", 400, "INVALID_JSON", sourceAPI},
		{errdefs.Conflict(wire.CodeInvalidState, "x"), "/daytona/api/sandbox/x/archive", 409, "INVALID_STATE", sourceAPI},
		{errdefs.Unauthorized(wire.CodeUnauthorized, "x"), "/daytona/api/sandbox", 401, "UNAUTHORIZED", sourceAPI},
		{fmt.Errorf("plain"), "/daytona/api/sandbox", 500, "INTERNAL", sourceAPI},
		{withStatus(408, errdefs.Unavailable(wire.CodeProcessExecTimeout, "x")), "/daytona/toolbox/x/process/execute", 408, "PROCESS_EXECUTION_TIMEOUT", sourceDaemon},
	} {
		status, body := toDaytona(c.err, c.path)
		if status != c.status || body.StatusCode != c.status || body.Code != c.code || body.Source != c.source || body.Message == "" || body.Error != http.StatusText(c.status) {
			t.Errorf("%v: got %d %+v", c.err, status, body)
		}
	}
}

func TestCreateTranslates(t *testing.T) {
	h, f := newTest()
	rec, body := do(h, "POST", "/daytona/api/sandbox", `{"name":"n","buildInfo":{"dockerfileContent":"FROM python\n"},"labels":{"a":"b"},
		"env":{"X":"1"},"cpu":2,"memory":2,"disk":3,"autoStopInterval":15,"autoArchiveInterval":0,"autoDeleteInterval":-1,"networkAllowList":"10.0.0.0/8"}`)
	if rec.Code != 200 || body["state"] != "started" || body["toolboxProxyUrl"] != "http://example.com/daytona/toolbox" {
		t.Fatalf("create: %d %v", rec.Code, body)
	}
	req := f.created[0]
	if req.Image != "python" || req.Name != "n" || req.CPU != 2 || req.MemoryMiB != 2048 || req.DiskMiB != 3072 ||
		*req.AutoStopSeconds != 900 || *req.AutoArchiveSeconds != 0 || *req.AutoDeleteSeconds != -1 ||
		req.Egress == nil || req.Egress.Mode != wire.EgressAllowList || req.Egress.CIDRs[0] != "10.0.0.0/8" {
		t.Errorf("translated to %+v", req)
	}
	if f.principal.KeyID != auth.Admin.KeyID {
		t.Errorf("the Manager got principal %+v, want the admin's", f.principal)
	}
	// A snapshot that names an image is that image.
	do(h, "POST", "/daytona/api/sandbox", `{"snapshot":"python","autoPauseInterval":5}`)
	if req := f.created[1]; req.Image != "python" || req.Snapshot != "" || *req.AutoPauseSeconds != 300 || *req.AutoStopSeconds != 0 {
		t.Errorf("snapshot python → %+v", req)
	}
}

func TestBadInputMakesNothing(t *testing.T) {
	h, f := newTest()
	for _, c := range []struct{ body, code string }{
		{`{`, "INVALID_JSON"},
		{`{"volumes":[{"volumeId":"v","mountPath":"/v","subpath":"s"}]}`, "FEATURE_UNSUPPORTED"},
		{`{"buildInfo":{"dockerfileContent":"FROM python\n","contextHashes":["abc"]}}`, "DOCKERFILE_UNSUPPORTED"},
		{`{"buildInfo":{"dockerfileContent":"FROM nope\n"}}`, "IMAGE_NOT_FOUND"},
		{`{"gpu":1}`, "FEATURE_UNSUPPORTED"},
		{`{"secrets":[{"A":"b"}]}`, "FEATURE_UNSUPPORTED"},
		{`{"user":"daytona"}`, "FEATURE_UNSUPPORTED"},
		{`{"autoStopInterval":-1}`, "INVALID_PARAMETER"},
		{`{"memory":-1}`, "INVALID_PARAMETER"},
		{`{"name":"a","cpuQuota":2}`, "FEATURE_UNSUPPORTED"},                                       // a field Daytona's model lacks: named, not dropped
		{`{"volumes":[{"volumeId":"v","mountPath":"/v","readOnly":true}]}`, "FEATURE_UNSUPPORTED"}, // inside too
	} {
		rec, body := do(h, "POST", "/daytona/api/sandbox", c.body)
		if msg, _ := body["message"].(string); c.code == "FEATURE_UNSUPPORTED" && strings.Contains(c.body, "Quota") && !strings.Contains(msg, "cpuQuota") {
			t.Errorf("%s: %q does not name the field", c.body, msg)
		}
		if rec.Code != 400 || body["code"] != c.code || body["statusCode"] != float64(400) || body["message"] == "" {
			t.Errorf("%s: got %d %v, want 400 %s", c.body, rec.Code, body, c.code)
		}
	}
	if len(f.created) != 0 {
		t.Errorf("bad input reached the Manager: %+v", f.created)
	}
	req := httptest.NewRequest("GET", "/daytona/api/sandbox", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), `"code":"UNAUTHORIZED"`) {
		t.Errorf("no key: %d %s", rec.Code, rec.Body)
	}
}

func TestListPages(t *testing.T) {
	h, _ := newTest()
	for i := range 3 {
		do(h, "POST", "/daytona/api/sandbox", fmt.Sprintf(`{"name":"s%d"}`, i))
	}
	var names []string
	cursor := ""
	for range 5 {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/daytona/api/sandbox?limit=2&cursor="+cursor, nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		h.ServeHTTP(rec, req)
		var page listPage
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			names = append(names, it.Name)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if strings.Join(names, ",") != "s0,s1,s2" {
		t.Errorf("pages gave %v", names)
	}
	if rec, _ := do(h, "GET", "/daytona/api/sandbox?limit=0", ""); rec.Code != 400 {
		t.Errorf("limit=0: %d", rec.Code)
	}
}

func TestIntervalSetters(t *testing.T) {
	h, f := newTest()
	do(h, "POST", "/daytona/api/sandbox", `{"name":"a"}`)
	for path, check := range map[string]func(wire.UpdateSandboxRequest) bool{
		"autostop/10":   func(u wire.UpdateSandboxRequest) bool { return *u.AutoStopSeconds == 600 },
		"autoarchive/0": func(u wire.UpdateSandboxRequest) bool { return *u.AutoArchiveSeconds == 0 },
		"autodelete/-1": func(u wire.UpdateSandboxRequest) bool { return *u.AutoDeleteSeconds == -1 },
		"autopause/2":   func(u wire.UpdateSandboxRequest) bool { return *u.AutoPauseSeconds == 120 },
		"ttl/60":        func(u wire.UpdateSandboxRequest) bool { return *u.TTLSeconds == 3600 },
	} {
		f.updated = nil
		rec, _ := do(h, "POST", "/daytona/api/sandbox/a/"+path, "")
		if rec.Code != 200 || len(f.updated) != 1 || !check(f.updated[0]) {
			t.Errorf("%s: %d %+v", path, rec.Code, f.updated)
		}
	}
	for _, path := range []string{"autostop/-1", "autostop/x", "autodelete/-2"} {
		f.updated = nil
		if rec, _ := do(h, "POST", "/daytona/api/sandbox/a/"+path, ""); rec.Code != 400 || len(f.updated) != 0 {
			t.Errorf("%s: %d, updates %+v", path, rec.Code, f.updated)
		}
	}
}

// The socket.io endpoint: Engine.IO open, a refused and an accepted
// CONNECT, ping answered, and a state change after connecting as a
// sandbox.state.updated event (earlier ones are not replayed).
func TestSocketIO(t *testing.T) {
	h, f := newTest()
	f.record(store.Event{SandboxID: "old", State: wire.StateStarted})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/daytona/api/socket.io/?EIO=4&transport=websocket"
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	read := func() string {
		t.Helper()
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write := func(s string) {
		t.Helper()
		if err := c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if open := read(); !strings.HasPrefix(open, `0{"maxPayload"`) || !strings.Contains(open, `"pingInterval":25000`) {
		t.Fatalf("open packet: %s", open)
	}
	write(`40{"token":"wrong"}`)
	if got := read(); !strings.HasPrefix(got, "44") {
		t.Fatalf("wrong token: %s, want a CONNECT_ERROR", got)
	}
	write(`40{"token":"` + testKey + `"}`)
	if got := read(); !strings.HasPrefix(got, `40{"sid":`) {
		t.Fatalf("connect: %s", got)
	}
	write("2")
	if got := read(); got != "3" {
		t.Fatalf("ping: %s, want pong", got)
	}
	sb, _ := f.Create(ctx, wire.CreateSandboxRequest{Name: "live"})
	f.record(store.Event{SandboxID: sb.ID, State: wire.StateStopped})
	got := read()
	var ev []json.RawMessage
	if !strings.HasPrefix(got, "42") || json.Unmarshal([]byte(got[2:]), &ev) != nil || len(ev) != 2 || string(ev[0]) != `"sandbox.state.updated"` {
		t.Fatalf("event: %s", got)
	}
	var body struct {
		Sandbox  sandboxDTO `json:"sandbox"`
		NewState string     `json:"newState"`
	}
	json.Unmarshal(ev[1], &body)
	if body.Sandbox.ID != sb.ID || body.NewState == "" {
		t.Fatalf("event body: %s", ev[1])
	}
	write("41")
}
