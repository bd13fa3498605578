package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

func TestCreateMakesASandboxObjectAndAnswersOnceItRuns(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"web","cpu":0.5,"memoryMiB":256}`)
	if !podspec.IsID(sb.ID) || sb.Name != "web" || sb.Team != "default" {
		t.Fatalf("created %+v", sb)
	}
	if sb.State != wire.StateStarted || sb.Reason != "host" {
		t.Fatalf("create answered %s/%s, want the host's view of a started sandbox", sb.State, sb.Reason)
	}
	o := f.object(sb.ID)
	if o.Spec.OperatingMode != asv1.SandboxOperatingModeRunning || o.Labels[podspec.LabelName] != "web" || o.Labels[podspec.LabelTeam] != "default" {
		t.Fatalf("object: mode %s labels %v", o.Spec.OperatingMode, o.Labels)
	}
	if got := o.Spec.PodTemplate.Spec.Containers[0].Resources.Requests.Cpu().MilliValue(); got != 500 {
		t.Fatalf("cpu request %dm", got)
	}
}

func TestCreateRefusesBadInputAndMakesNothing(t *testing.T) {
	f := newFixture(t)
	f.create(`{"name":"taken"}`)
	for _, c := range []struct {
		body   string
		status int
		code   wire.Code
	}{
		{`{"name":"ends-with-dash-"}`, 400, wire.CodeInvalidName},
		{`{"name":"sbx-reserved"}`, 400, wire.CodeInvalidName},
		{`{"name":"taken"}`, 409, wire.CodeNameTaken},
		{`{"cpu":-1}`, 400, wire.CodeInvalidCPU},
		{`{"snapshot":"s1"}`, 400, wire.CodeInvalidSnapshot},
		{`{"volumes":[{"name":"v","path":"/data"}]}`, 400, wire.CodeInvalidVolume},
		{`{"nope":1}`, 400, wire.CodeUnknownField},
	} {
		resp, b := f.call("POST", "/v1/sandboxes", c.body)
		wantError(t, resp, b, c.status, c.code)
	}
	list, err := f.agents.AgentsV1beta1().Sandboxes(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("objects after refused creates: %d (%v), want 1", len(list.Items), err)
	}
}

func TestAuthAndUnknownThingsAnswerLikeOneHost(t *testing.T) {
	f := newFixture(t)
	resp, b := f.callAs("", "GET", "/v1/sandboxes", "")
	wantError(t, resp, b, 401, wire.CodeUnauthorized)
	resp, b = f.callAs("wrong", "GET", "/v1/sandboxes", "")
	wantError(t, resp, b, 401, wire.CodeUnauthorized)
	resp, b = f.call("GET", "/v1/sandboxes/nosuch", "")
	wantError(t, resp, b, 404, wire.CodeSandboxNotFound)
	resp, b = f.call("POST", "/v1/sandboxes/sbx-aaaaaaaaaaaaaaaa/exec", `{"cmd":["true"]}`)
	wantError(t, resp, b, 404, wire.CodeSandboxNotFound)
	resp, b = f.call("GET", "/v1/nothing-here", "")
	wantError(t, resp, b, 404, wire.CodeRouteNotFound)
	resp, b = f.call("GET", "/v1/images", "")
	wantError(t, resp, b, 404, wire.CodeRouteNotFound)
	resp, _ = f.callAs("", "GET", "/healthz", "")
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
}

func TestToolboxCallsReachTheHostByIDWithTheHostsKey(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"runner"}`)
	resp, b := f.call("POST", "/v1/sandboxes/runner/files/mkdir?x=1", `{"path":"/a"}`)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "/v1/sandboxes/"+sb.ID+"/files/mkdir") {
		t.Fatalf("mkdir through the gateway: %d %s", resp.StatusCode, b)
	}
	seen := f.hosts["host-a"].requests()
	last := seen[len(seen)-1]
	if last.Auth != "Bearer "+hostToken || last.RawQuery != "x=1" || last.Method != "POST" {
		t.Fatalf("the host saw %+v", last)
	}
}

func TestNDJSONStreamsLineByLine(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{}`)
	req, _ := http.NewRequest("POST", f.gw.URL+"/v1/sandboxes/"+sb.ID+"/exec?stream=true", strings.NewReader(`{"cmd":["x"]}`))
	req.Header.Set("Authorization", "Bearer "+userKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	// The host holds its second line until the first has reached us: a
	// buffering proxy would deadlock here.
	if got := readLine(t, r); !strings.Contains(got, `"one"`) {
		t.Fatalf("first line %q", got)
	}
	close(f.hosts["host-a"].release)
	if got := readLine(t, r); !strings.Contains(got, `"exit"`) {
		t.Fatalf("second line %q", got)
	}
}

func TestTerminalWebSocketIsRelayed(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"term"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(f.gw.URL, "http") + "/v1/sandboxes/term/ptys/p1/attach"
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + userKey}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageBinary, []byte("ls\n")); err != nil {
		t.Fatal(err)
	}
	_, got, err := c.Read(ctx)
	if err != nil || string(got) != "echo:ls\n" {
		t.Fatalf("read %q %v", got, err)
	}
	seen := f.hosts["host-a"].requests()
	if !slices.ContainsFunc(seen, func(s seenRequest) bool { return s.Path == "/v1/sandboxes/"+sb.ID+"/ptys/p1/attach" }) {
		t.Fatalf("host saw %+v", seen)
	}
}

func TestStopSuspendsAndAToolboxCallStartsItAgain(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"lazy"}`)
	resp, b := f.call("POST", "/v1/sandboxes/lazy/stop", "")
	var got wire.Sandbox
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.State != wire.StateStopped {
		t.Fatalf("stop: %d %s", resp.StatusCode, b)
	}
	if f.object(sb.ID).Spec.OperatingMode != asv1.SandboxOperatingModeSuspended {
		t.Fatal("stop left the object Running")
	}
	// Calls that never start an instance answer as on one host, and leave it stopped.
	resp, b = f.call("GET", "/v1/sandboxes/lazy/processes", "")
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("list processes of a stopped sandbox: %d %s", resp.StatusCode, b)
	}
	resp, b = f.call("GET", "/v1/sandboxes/lazy/processes/p1", "")
	wantError(t, resp, b, 404, wire.CodeNotInCurrentInstance)
	resp, b = f.call("GET", "/v1/sandboxes/lazy/files?path=/a", "")
	wantError(t, resp, b, 409, wire.CodeSandboxNotRunning)
	resp, b = f.call("GET", "/v1/sandboxes/lazy", "")
	if json.Unmarshal(b, &got) != nil || got.State != wire.StateStopped || got.Name != "lazy" {
		t.Fatalf("get of a stopped sandbox: %s", b)
	}
	if f.object(sb.ID).Spec.OperatingMode != asv1.SandboxOperatingModeSuspended {
		t.Fatal("a lookup started the sandbox")
	}
	// A call that needs it running starts it (lazy start).
	resp, b = f.call("POST", "/v1/sandboxes/lazy/files/mkdir", `{"path":"/a"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("mkdir on a stopped sandbox: %d %s", resp.StatusCode, b)
	}
	if f.object(sb.ID).Spec.OperatingMode != asv1.SandboxOperatingModeRunning {
		t.Fatal("lazy start left the object Suspended")
	}
	// And stop + start through the API.
	f.call("POST", "/v1/sandboxes/lazy/stop?graceSeconds=1", "")
	resp, b = f.call("POST", "/v1/sandboxes/lazy/start", "")
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.State != wire.StateStarted {
		t.Fatalf("start: %d %s", resp.StatusCode, b)
	}
	resp, b = f.call("POST", "/v1/sandboxes/lazy/stop?graceSeconds=9999", "")
	wantError(t, resp, b, 400, wire.CodeInvalidGrace)
}

// TestListReadsTheHostsReportsFromThePods: a list shows each sandbox as
// its host reported it into its pod (started, since when) or as its object
// says (stopped), and asks no host.
func TestListReadsTheHostsReportsFromThePods(t *testing.T) {
	f := newFixture(t, "host-a", "host-b")
	a := f.create(`{"name":"a","labels":{"k":"v"}}`)
	b := f.create(`{"name":"b"}`)
	c := f.create(`{"name":"c"}`)
	f.call("POST", "/v1/sandboxes/c/stop", "")
	resp, body := f.call("GET", "/v1/sandboxes", "")
	var list []wire.Sandbox
	if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || len(list) != 3 {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	byID := map[string]wire.Sandbox{}
	for _, sb := range list {
		byID[sb.ID] = sb
	}
	for _, sb := range []wire.Sandbox{byID[a.ID], byID[b.ID]} {
		if sb.State != wire.StateStarted || sb.StartedAt == nil || sb.StartedAt.IsZero() {
			t.Fatalf("running sandbox not as its host reported it: %+v", sb)
		}
	}
	if byID[a.ID].Name != "a" || byID[a.ID].Labels["k"] != "v" {
		t.Fatalf("sandbox a: %+v", byID[a.ID])
	}
	if byID[c.ID].State != wire.StateStopped || byID[c.ID].Name != "c" {
		t.Fatalf("stopped sandbox: %+v", byID[c.ID])
	}
	if len(f.hosts["host-a"].sandboxes) == 0 || len(f.hosts["host-b"].sandboxes) == 0 {
		t.Fatal("the fake scheduler placed nothing on one host")
	}
	resp, body = f.call("GET", "/v1/sandboxes?state=stopped", "")
	if json.Unmarshal(body, &list) != nil || len(list) != 1 || list[0].ID != c.ID {
		t.Fatalf("state filter: %s", body)
	}
	resp, body = f.call("GET", "/v1/sandboxes?label=bad", "")
	wantError(t, resp, body, 400, wire.CodeInvalidLabel)
	for name, h := range f.hosts {
		for _, r := range h.requests() {
			if r.Path == "/v1/sandboxes" {
				t.Fatalf("a list asked host %s: %+v", name, r)
			}
		}
	}
}

func TestDeleteRemovesTheObject(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"gone"}`)
	resp, b := f.call("DELETE", "/v1/sandboxes/gone?wait=true", "")
	if resp.StatusCode != 204 {
		t.Fatalf("delete: %d %s", resp.StatusCode, b)
	}
	if _, err := f.agents.AgentsV1beta1().Sandboxes(ns).Get(context.Background(), sb.ID, metav1.GetOptions{}); err == nil {
		t.Fatal("the object is still there")
	}
	resp, b = f.call("GET", "/v1/sandboxes/gone", "")
	wantError(t, resp, b, 404, wire.CodeSandboxNotFound)
}

func TestEnsureGetsOrCreatesByName(t *testing.T) {
	f := newFixture(t)
	resp, b := f.call("PUT", "/v1/sandboxes/once", `{}`)
	if resp.StatusCode != 201 {
		t.Fatalf("first PUT: %d %s", resp.StatusCode, b)
	}
	resp, b = f.call("PUT", "/v1/sandboxes/once", `{}`)
	if resp.StatusCode != 200 {
		t.Fatalf("second PUT: %d %s", resp.StatusCode, b)
	}
	resp, b = f.call("PUT", "/v1/sandboxes/once", `{"name":"other"}`)
	wantError(t, resp, b, 400, wire.CodeNameMismatch)
}

func TestAnUnreachableHostIsUnavailable(t *testing.T) {
	f := newFixture(t)
	f.create(`{"name":"far"}`)
	f.hosts["host-a"].srv.Close()
	resp, b := f.call("POST", "/v1/sandboxes/far/files/mkdir", `{"path":"/a"}`)
	wantError(t, resp, b, 503, wire.CodeSandboxUnavailable)
}

func TestPreviewsKeepTheirTokenAndSwapTheGatewayKey(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"site"}`)
	resp, _ := f.callAs("", "GET", "/v1/sandboxes/site/ports/8080/index.html?sbx_token=tok", "")
	if resp.StatusCode != 200 {
		t.Fatalf("preview: %d", resp.StatusCode)
	}
	f.call("GET", "/v1/sandboxes/site/ports/8080/", "")
	seen := f.hosts["host-a"].requests()
	var previews []seenRequest
	for _, s := range seen {
		if strings.HasPrefix(s.Path, "/v1/sandboxes/"+sb.ID+"/ports/8080/") {
			previews = append(previews, s)
		}
	}
	if len(previews) != 2 || previews[0].Auth != "" || previews[0].RawQuery != "sbx_token=tok" || previews[1].Auth != "Bearer "+hostToken {
		t.Fatalf("previews at the host: %+v", previews)
	}
}

// The gateway serves every row of the API's route table: a sandbox-scoped
// row is never answered ROUTE_NOT_FOUND (unless refused on purpose).
func TestEverySandboxRouteIsServed(t *testing.T) {
	refused := map[string]bool{"forkSandbox": true}
	n := 0
	for _, rt := range api.Routes() {
		if strings.HasPrefix(rt.Pattern, "/v1/sandboxes/{id}/") && !refused[rt.Name] {
			n++
		}
		if rt.Name == "execCommand" && (!rt.StartsInstance || rt.Lookup) {
			t.Fatalf("exec row: %+v", rt)
		}
	}
	if n < 40 {
		t.Fatalf("only %d sandbox-scoped routes in the table", n)
	}
	f := newFixture(t)
	f.create(`{"name":"all"}`)
	for _, rt := range api.Routes() {
		if !strings.HasPrefix(rt.Pattern, "/v1/sandboxes/{id}/") || refused[rt.Name] || strings.HasSuffix(rt.Pattern, "/attach") {
			continue
		}
		path := strings.NewReplacer("{id}", "all", "{path...}", "x", "{", "", "}", "").Replace(rt.Pattern)
		resp, b := f.call(rt.Method, path, "")
		if strings.Contains(string(b), string(wire.CodeRouteNotFound)) {
			t.Errorf("%s %s: %d %s", rt.Method, path, resp.StatusCode, b)
		}
	}
}

func TestACreateThatNeverRunsIsUnavailableAndStaysAsked(t *testing.T) {
	f := newFixtureWithTimeout(t, 300*time.Millisecond)
	resp, b := f.call("POST", "/v1/sandboxes", `{"name":"stuck","image":"`+unschedulable+`"}`)
	wantError(t, resp, b, 503, wire.CodeSandboxUnavailable)
	if !strings.Contains(string(b), "kube-scheduler") {
		t.Fatalf("the message does not say why: %s", b)
	}
	resp, b = f.call("GET", "/v1/sandboxes/stuck", "")
	var sb wire.Sandbox
	if resp.StatusCode != 200 || json.Unmarshal(b, &sb) != nil || sb.State != wire.StateStarting || sb.Image != unschedulable {
		t.Fatalf("get of a sandbox waiting for a host: %d %s", resp.StatusCode, b)
	}
}

// A preview without the gateway's key never wakes a suspended sandbox: the
// token is checked on the host, which cannot check it for a sandbox that
// does not run. Unknown and stopped sandboxes answer alike.
func TestAnonymousPreviewDoesNotWakeASandbox(t *testing.T) {
	f := newFixture(t)
	sb := f.create(`{"name":"site"}`)
	f.call("POST", "/v1/sandboxes/site/stop", "")
	if f.object(sb.ID).Spec.OperatingMode != asv1.SandboxOperatingModeSuspended {
		t.Fatal("stop left the object Running")
	}
	for _, method := range []string{"GET", "POST"} {
		for _, name := range []string{"site", "nosuch"} {
			resp, b := f.callAs("", method, "/v1/sandboxes/"+name+"/ports/8080/?sbx_token=guess", "")
			wantError(t, resp, b, 401, wire.CodePreviewUnauthorized)
		}
	}
	if f.object(sb.ID).Spec.OperatingMode != asv1.SandboxOperatingModeSuspended {
		t.Fatal("an anonymous preview woke the sandbox")
	}
	// With the gateway's key a preview starts it (lazy start).
	if resp, b := f.call("POST", "/v1/sandboxes/site/ports/8080/", ""); resp.StatusCode != 200 {
		t.Fatalf("preview with the key: %d %s", resp.StatusCode, b)
	}
	if f.object(sb.ID).Spec.OperatingMode != asv1.SandboxOperatingModeRunning {
		t.Fatal("a preview with the key left the sandbox Suspended")
	}
}

// Two teams have a sandbox named "app": a preview without the gateway's
// key reaches each unambiguously (by id, "app--blue", or a bare name in
// team default only), never the other team's.
func TestAnonymousPreviewNamesOneTeamsSandbox(t *testing.T) {
	f := newFixture(t)
	blue := f.create(`{"name":"blueapp"}`)
	o := f.object(blue.ID)
	o.Labels[podspec.LabelTeam], o.Labels[podspec.LabelName] = "blue", "app"
	if _, err := f.agents.AgentsV1beta1().Sandboxes(ns).Update(context.Background(), o, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The watch cache shows blue's sandbox by its new name before going on.
	for got := (wire.Sandbox{}); got.Name != "app"; time.Sleep(10 * time.Millisecond) {
		_, b := f.call("GET", "/v1/sandboxes/"+blue.ID, "")
		json.Unmarshal(b, &got)
	}
	def := f.create(`{"name":"app"}`)
	for ref, want := range map[string]string{"app--blue": blue.ID, blue.ID: blue.ID, "app": def.ID, "app--default": def.ID} {
		resp, b := f.callAs("", "GET", "/v1/sandboxes/"+ref+"/ports/8080/?sbx_token=tok", "")
		if resp.StatusCode != 200 {
			t.Fatalf("preview of %s: %d %s", ref, resp.StatusCode, b)
		}
		seen := f.hosts["host-a"].requests()
		if last := seen[len(seen)-1]; !strings.HasPrefix(last.Path, "/v1/sandboxes/"+want+"/ports/8080/") {
			t.Fatalf("preview of %s reached %s, want sandbox %s", ref, last.Path, want)
		}
	}
	resp, b := f.callAs("", "GET", "/v1/sandboxes/blueapp--blue/ports/8080/", "")
	wantError(t, resp, b, 401, wire.CodePreviewUnauthorized)
}
