package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	cws "github.com/coder/websocket"
	"github.com/sbxhq/sbx/sdk"
)

// Lifetime rules of issue 27: lookups never start an instance, handles of
// an earlier instance fail closed.

// getsThatDoNotStart lists, from the served OpenAPI document (built from
// the route table), every GET under /v1/sandboxes/{id}/ not marked
// x-starts-instance.
func (d *daemon) getsThatDoNotStart() []string {
	d.t.Helper()
	req, _ := http.NewRequest("GET", "http://"+d.addr+"/v1/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			StartsInstance *bool `json:"x-starts-instance"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		d.t.Fatal(err)
	}
	var paths []string
	for p, ops := range doc.Paths {
		op, ok := ops["get"]
		if !ok || !strings.HasPrefix(p, "/v1/sandboxes/{id}/") {
			continue
		}
		if op.StartsInstance == nil {
			d.t.Fatalf("GET %s does not say whether it starts an instance", p)
		}
		if !*op.StartsInstance {
			paths = append(paths, p)
		}
	}
	if len(paths) < 15 {
		d.t.Fatalf("only %d GET routes that do not start an instance: %v", len(paths), paths)
	}
	return paths
}

// assertLookupsLeave sends every GET that does not start an instance to
// the sandbox ref and checks that it stays in state with its lastActivityAt.
func (d *daemon) assertLookupsLeave(ref string, state sdk.State) {
	d.t.Helper()
	ctx := context.Background()
	before, err := d.client.GetSandbox(ctx, ref)
	if err != nil || before.State != state {
		d.t.Fatalf("sandbox %s before the lookups: %+v, %v; want %s", ref, before, err, state)
	}
	for _, p := range d.getsThatDoNotStart() {
		// {port}: the exposed port 8080, so a preview gets past its checks.
		path := strings.ReplaceAll(fillPath(strings.ReplaceAll(p, "{port}", "8080"), ""), "victim", ref)
		status, e := d.call("GET", path, "")
		if status >= 500 {
			d.t.Errorf("GET %s on a %s sandbox: %d %s", path, state, status, e.Code)
		}
		// Files, watch and previews read through a running instance: a
		// conflict that names the state.
		if rest := strings.TrimPrefix(p, "/v1/sandboxes/{id}"); strings.HasPrefix(rest, "/files") || rest == "/watch" || strings.HasPrefix(rest, "/ports/{port}/") {
			want := sdk.CodeSandboxNotRunning
			if state == sdk.StatePaused {
				want = sdk.CodeSandboxPaused
			}
			if status != http.StatusConflict || e.Code != want {
				d.t.Errorf("GET %s on a %s sandbox: %d %s, want 409 %s", path, state, status, e.Code, want)
			}
		}
		after, err := d.client.GetSandbox(ctx, ref)
		if err != nil {
			d.t.Fatal(err)
		}
		if after.State != state {
			d.t.Fatalf("GET %s moved a %s sandbox to %s", path, state, after.State)
		}
		if !after.LastActivityAt.Equal(*before.LastActivityAt) {
			d.t.Errorf("GET %s moved lastActivityAt of a %s sandbox from %v to %v", path, state, before.LastActivityAt, after.LastActivityAt)
		}
	}
}

func TestLookupsNeverStartAnInstance(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "look"})
	if _, err := d.client.ExposePort(ctx, "look", sdk.ExposePortRequest{Port: 8080}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.StartProcess(ctx, "look", sdk.StartProcessRequest{ID: "web", Cmd: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}

	// Paused (class container: the freezer): lookups answer 409
	// SANDBOX_PAUSED, they do not thaw it.
	if _, err := d.client.PauseSandbox(ctx, "look"); err != nil {
		t.Fatal(err)
	}
	d.assertLookupsLeave("look", sdk.StatePaused)
	if _, err := d.client.GetProcess(ctx, "look", "web"); sdk.Code(codeOf(err)) != sdk.CodeSandboxPaused {
		t.Errorf("get process of a paused sandbox: %v, want %s", err, sdk.CodeSandboxPaused)
	}
	if _, err := d.client.ResumeSandbox(ctx, "look"); err != nil {
		t.Fatal(err)
	}

	// Stopped: the instance's resources are gone with it.
	if _, err := d.client.StopSandbox(ctx, "look", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	d.assertLookupsLeave("look", sdk.StateStopped)
	if procs, err := d.client.ListProcesses(ctx, "look"); err != nil || len(procs) != 0 {
		t.Errorf("processes of a stopped sandbox: %v, %v; want none", procs, err)
	}
	if _, err := d.client.GetProcess(ctx, "look", "web"); sdk.Code(codeOf(err)) != sdk.CodeNotInCurrentInstance {
		t.Errorf("get process of a stopped sandbox: %v, want %s", err, sdk.CodeNotInCurrentInstance)
	}

	// An operation that needs the instance still starts it.
	if _, err := d.client.StartProcess(ctx, "look", sdk.StartProcessRequest{ID: "web", Cmd: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	if sb, _ := d.client.GetSandbox(ctx, "look"); sb.State != sdk.StateStarted {
		t.Errorf("after starting a process: %s, want started", sb.State)
	}
}

// A handle kept across a stop fails closed: start process web, stop,
// start, start another web; the first handle is refused, the second works,
// and the bare name reaches the new one.
func TestOldHandlesFailClosed(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "gen"})
	web := sdk.StartProcessRequest{ID: "web", Cmd: []string{"sleep", "600"}}
	first, err := d.client.StartProcess(ctx, "gen", web)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.Handle, "web@") {
		t.Fatalf("handle of the first web: %q", first.Handle)
	}
	if _, err := d.client.StopSandbox(ctx, "gen", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.StartSandbox(ctx, "gen"); err != nil {
		t.Fatal(err)
	}
	second, err := d.client.StartProcess(ctx, "gen", web)
	if err != nil {
		t.Fatal(err)
	}
	if second.Handle == first.Handle {
		t.Fatalf("both instances handed out %q", first.Handle)
	}
	if p, err := d.client.GetProcess(ctx, "gen", first.Handle); codeOf(err) != string(sdk.CodeStaleHandle) || !sdk.IsNotFound(err) {
		t.Errorf("old handle %s: %+v, %v; want 404 %s", first.Handle, p, err, sdk.CodeStaleHandle)
	}
	if _, err := d.client.SignalProcess(ctx, "gen", first.Handle, "KILL"); codeOf(err) != string(sdk.CodeStaleHandle) {
		t.Errorf("signal through the old handle: %v, want %s", err, sdk.CodeStaleHandle)
	}
	p, err := d.client.GetProcess(ctx, "gen", second.Handle)
	if err != nil || p.Pid != second.Pid || p.State != sdk.ProcessRunning {
		t.Errorf("new handle %s: %+v, %v", second.Handle, p, err)
	}
	if p, err := d.client.GetProcess(ctx, "gen", "web"); err != nil || p.Handle != second.Handle {
		t.Errorf("bare name web: %+v, %v; want the new process", p, err)
	}
}

// Environment on a live sandbox: set, exec sees it (a process started
// before does not); stop and start, still there; unset removes it.
func TestEnvOnALiveSandbox(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "env", Env: map[string]string{"KEEP": "k"}})
	before, err := d.client.StartProcess(ctx, "env", sdk.StartProcessRequest{Cmd: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := d.client.UpdateSandbox(ctx, "env", sdk.UpdateSandboxRequest{Env: map[string]*string{"GREETING": sdk.Ptr("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Env["GREETING"] != "hi" || sb.Env["KEEP"] != "k" {
		t.Errorf("env after the update: %v", sb.Env)
	}
	if got := d.exec("env", `echo "$GREETING/$KEEP"`); got != "hi/k" {
		t.Errorf("exec after the update sees %q, want hi/k", got)
	}
	if got := d.exec("env", "tr '\\0' '\\n' < /proc/"+strconv.Itoa(before.Pid)+"/environ | grep -c GREETING || true"); got != "0" {
		t.Errorf("a process started before the update got GREETING (%s)", got)
	}
	sess, err := d.client.CreateSession(ctx, "env", sdk.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := d.client.SessionExec(ctx, "env", sess.ID, sdk.SessionExecRequest{Command: `echo "$GREETING"`}); err != nil || strings.TrimSpace(res.Stdout) != "hi" {
		t.Errorf("a session created after the update: %+v, %v", res, err)
	}

	if _, err := d.client.StopSandbox(ctx, "env", sdk.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := d.exec("env", `echo "$GREETING"`); got != "hi" { // starts it again
		t.Errorf("after stop and start exec sees %q, want hi", got)
	}

	sb, err = d.client.UpdateSandbox(ctx, "env", sdk.UpdateSandboxRequest{Env: map[string]*string{"GREETING": nil}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sb.Env["GREETING"]; ok || sb.Env["KEEP"] != "k" {
		t.Errorf("env after the unset: %v", sb.Env)
	}
	if got := d.exec("env", `echo "${GREETING-unset}"`); got != "unset" {
		t.Errorf("exec after the unset sees %q", got)
	}
	if status, e := d.call("PATCH", "/v1/sandboxes/env", `{"env": {"1BAD": "x"}}`); status != 400 || e.Code != sdk.CodeInvalidEnv {
		t.Errorf("bad name: %d %s", status, e.Code)
	}
}

// Creation on first touch: off by default an exec on an unknown name is
// 404; with X-Sbx-Create-If-Missing, 20 concurrent first execs all succeed
// and make exactly one sandbox.
func TestCreateOnFirstTouch(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	if status, e := d.call("POST", "/v1/sandboxes/touched/exec", `{"shell": "true"}`); status != 404 || e.Code != sdk.CodeSandboxNotFound {
		t.Fatalf("exec on an unknown name without opting in: %d %s", status, e.Code)
	}

	const n = 20
	errs := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", "http://"+d.addr+"/v1/sandboxes/touched/exec", strings.NewReader(`{"shell": "echo `+strconv.Itoa(i)+`"}`))
			req.Header.Set("Authorization", "Bearer "+d.token)
			req.Header.Set("X-Sbx-Create-If-Missing", "true")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			var res sdk.ExecResult
			json.NewDecoder(resp.Body).Decode(&res)
			if resp.StatusCode != 200 || strings.TrimSpace(res.Stdout) != strconv.Itoa(i) {
				errs <- fmt.Sprintf("touch %d: %d %+v", i, resp.StatusCode, res)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	all, err := d.client.ListSandboxes(ctx, sdk.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, sb := range all {
		if sb.Name == "touched" {
			named++
			d.created[sb.ID] = true
		}
	}
	if named != 1 || len(all) != 1 {
		t.Errorf("%d sandboxes named touched among %d, want exactly one", named, len(all))
	}
}

// An exec stream whose instance is killed ends with INSTANCE_LOST naming
// the stop's reason: "user" for a forced stop through the API.
func TestBrokenStreamNamesTheStopReason(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "cut"})
	req, _ := http.NewRequest("POST", "http://"+d.addr+"/v1/sandboxes/cut/exec?stream=true", strings.NewReader(`{"shell": "echo started; sleep 300"}`))
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := json.NewDecoder(resp.Body)
	stopped := false
	for {
		var ev struct {
			Type  string         `json:"type"`
			Error *sdk.ErrorBody `json:"error"`
		}
		if err := events.Decode(&ev); err != nil {
			t.Fatalf("stream ended without an error event: %v", err)
		}
		if ev.Type == "stdout" && !stopped {
			stopped = true
			if _, err := d.client.StopSandbox(ctx, "cut", sdk.StopOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
		}
		if ev.Type == "error" {
			if ev.Error == nil || ev.Error.Code != sdk.CodeInstanceLost || ev.Error.Reason != "user" || !strings.Contains(ev.Error.Message, "user") {
				t.Errorf("error event %+v, want INSTANCE_LOST with reason user", ev.Error)
			}
			return
		}
		if ev.Type == "exit" {
			t.Fatalf("the command exited instead of losing its instance")
		}
	}
}

// A terminal whose instance ends says why, like an exec stream: a final
// "error" frame (INSTANCE_LOST, reason user) and a close frame 1001 whose
// reason names the stop reason.
func TestPTYEndNamesTheStopReason(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	d.create(sdk.CreateSandboxRequest{Name: "term"})
	pty, err := d.client.CreatePTY(ctx, "term", sdk.CreatePTYRequest{Cmd: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := cws.Dial(ctx, "ws://"+d.addr+"/v1/sandboxes/term/ptys/"+pty.ID+"/attach", &cws.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + d.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx, cws.MessageBinary, []byte("echo rea''dy\n")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var lost *sdk.ErrorBody
	stopped := false
	for {
		typ, b, err := conn.Read(ctx)
		if err != nil {
			if !stopped {
				t.Fatalf("the terminal ended before the stop: %v (output %q)", err, out.String())
			}
			if cws.CloseStatus(err) != cws.StatusGoingAway || !strings.Contains(err.Error(), "instance ended: user") {
				t.Errorf("close %v, want 1001 naming reason user", err)
			}
			break
		}
		if typ == cws.MessageBinary {
			out.Write(b)
			if !stopped && strings.Contains(out.String(), "ready") {
				stopped = true
				if _, err := d.client.StopSandbox(ctx, "term", sdk.StopOptions{Force: true}); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		var ctl sdk.PTYControl
		if json.Unmarshal(b, &ctl) == nil && ctl.Type == "error" {
			lost = ctl.Error
		}
	}
	if lost == nil || lost.Code != sdk.CodeInstanceLost || lost.Reason != "user" {
		t.Errorf("final frame %+v, want INSTANCE_LOST with reason user", lost)
	}
}
