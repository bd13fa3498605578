package integration

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// asKey sends one request with key and returns its status, error body and
// headers.
func (d *daemon) asKey(key, method, path, body string) (int, sdk.ErrorBody, http.Header) {
	d.t.Helper()
	req, err := http.NewRequest(method, d.baseURL()+path, strings.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := d.httpClient().Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e sdk.ErrorResponse
	json.Unmarshal(b, &e)
	return resp.StatusCode, e.Error, resp.Header
}

// errCode is the API error code of err, or "".
func errCode(err error) sdk.Code {
	var e *sdk.APIError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// teamKey makes team (unless it exists) and a key of it with scopes.
func (d *daemon) teamKey(team string, quotas sdk.Quotas, scopes ...string) (*sdk.Client, *sdk.CreatedKey) {
	d.t.Helper()
	ctx := context.Background()
	if _, err := d.client.CreateTeam(ctx, sdk.CreateTeamRequest{ID: team, Quotas: quotas}); err != nil && errCode(err) != sdk.CodeTeamExists {
		d.t.Fatal(err)
	}
	k, err := d.client.CreateKey(ctx, sdk.CreateKeyRequest{Name: team + "-test", Team: team, Scopes: scopes})
	if err != nil {
		d.t.Fatal(err)
	}
	return sdk.NewClient(d.baseURL(), k.Key, d.clientOptions()...), k
}

var allScopes = []string{sdk.ScopeAdmin, sdk.ScopeSandboxesWrite, sdk.ScopeSandboxesRead, sdk.ScopeExec, sdk.ScopeImages, sdk.ScopeTeamRead}

// TestTeamIsolationOnEveryRoute: for every operation of the OpenAPI
// document that names a sandbox, a key of team B (holding every scope,
// admin of its team) sent at team A's sandbox gets 404, and A's sandbox,
// files, snapshot, key and team are unchanged. Generated from the route
// table like TestGarbageToEveryRoute, so new routes are covered.
func TestTeamIsolationOnEveryRoute(t *testing.T) {
	d := startDaemon(t, "--rate-limit", "0")
	ctx := context.Background()
	clientA, keyA := d.teamKey("team-a", sdk.Quotas{}, allScopes...)
	_, keyB := d.teamKey("team-b", sdk.Quotas{}, allScopes...)
	sb, err := clientA.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "victim"})
	if err != nil {
		t.Fatal(err)
	}
	d.created[sb.ID] = true
	if sb.Team != "team-a" {
		t.Fatalf("a key of team-a made a sandbox of team %q", sb.Team)
	}
	if _, err := clientA.Upload(ctx, sb.ID, "/workspace/keep", strings.NewReader("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := clientA.CreateSnapshot(ctx, sb.ID, sdk.CreateSnapshotRequest{Name: "snap-a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := clientA.ExposePort(ctx, sb.ID, sdk.ExposePortRequest{Port: 8080}); err != nil {
		t.Fatal(err)
	}
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	tw.WriteHeader(&tar.Header{Name: "marker", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("a"))
	tw.Close()
	if img, err := clientA.ImportImage(ctx, "a-image", &tarball); err != nil || img.Team != "team-a" {
		t.Fatalf("import as team-a: %+v, %v", img, err)
	}
	state := func() string {
		got, err := clientA.GetSandbox(ctx, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		files, err := clientA.ListFiles(ctx, sb.ID, "/workspace")
		if err != nil {
			t.Fatal(err)
		}
		snaps, _ := clientA.ListSnapshots(ctx)
		ports, _ := clientA.ListPorts(ctx, sb.ID)
		keys, _ := d.client.ListKeys(ctx, "team-a")
		imgs, _ := clientA.ListImages(ctx)
		teams, _ := d.client.ListTeams(ctx)
		images, _ := json.Marshal(imgs) // by value: an image's config is a pointer
		return fmt.Sprintf("%s %s %s %v %v files=%v snaps=%d ports=%d keys=%d teams=%d images=%s",
			got.ID, got.Name, got.State, got.Labels, got.Env, files, len(snaps), len(ports), len(keys), len(teams), images)
	}
	before := state()

	fill := func(path string) string {
		name := "snap-a"
		if strings.HasPrefix(path, "/v1/images/") {
			name = "a-image"
		}
		r := strings.NewReplacer("{id}", sb.ID, "{name}", name, "{name...}", name, "{team}", "team-a", "{key}", keyA.ID,
			"{port}", "8080", "{path...}", "x", "{process}", "1", "{session}", "s", "{pty}", "p", "{cid}", "c")
		return r.Replace(path)
	}
	// Requests valid enough to reach the lookup: a route that checks its
	// input before it looks the sandbox up answers bad input with 400.
	valid := map[string]string{
		"POST /v1/sandboxes/{id}/snapshots": `{"name":"b-snap"}`,
		"POST /v1/sandboxes/{id}/wait":      "?state=started",
	}
	doc := d.openAPI()
	calls := 0
	for path, methods := range doc.Paths {
		owned := strings.Contains(path, "{id}") || strings.HasPrefix(path, "/v1/snapshots/") || strings.HasPrefix(path, "/v1/images/{") ||
			strings.HasPrefix(path, "/v1/teams/") || strings.HasPrefix(path, "/v1/keys/")
		if !owned {
			continue
		}
		for method := range methods {
			method = strings.ToUpper(method)
			p, body := fill(path), `{}`
			if v := valid[method+" "+path]; strings.HasPrefix(v, "?") {
				p += v
			} else if v != "" {
				body = v
			}
			status, e, _ := d.asKey(keyB.Key, method, p, body)
			calls++
			want := http.StatusNotFound
			if method == "PUT" && path == "/v1/sandboxes/{id}" {
				// Get-or-create by name: an id is no name B may take.
				want = http.StatusBadRequest
			}
			if status != want || e.Code == "" {
				t.Errorf("team-b %s %s: %d %s %q, want %d", method, p, status, e.Code, e.Message, want)
			}
			// By name too, where the path takes one.
			if strings.Contains(path, "{id}") && !(method == "PUT" && path == "/v1/sandboxes/{id}") {
				if status, e, _ := d.asKey(keyB.Key, method, strings.Replace(p, sb.ID, "victim", 1), body); status != http.StatusNotFound {
					t.Errorf("team-b %s %s by name: %d %s %q, want 404", method, strings.Replace(p, sb.ID, "victim", 1), status, e.Code, e.Message)
				}
				calls++
			}
		}
	}
	t.Logf("%d cross-team requests", calls)
	if calls < 100 {
		t.Errorf("only %d cross-team calls; is the document complete?", calls)
	}
	if after := state(); after != before {
		t.Errorf("team-b changed team-a's objects:\nbefore %s\nafter  %s", before, after)
	}

	// Lists and streams hold only the caller's team.
	clientB := sdk.NewClient(d.baseURL(), keyB.Key, d.clientOptions()...)
	if list, err := clientB.ListSandboxes(ctx, sdk.ListOptions{}); err != nil || len(list) != 0 {
		t.Errorf("team-b lists %d sandboxes (%v), want none", len(list), err)
	}
	if evs, err := clientB.ListEvents(ctx, "", sdk.EventOptions{}); err != nil || len(evs) != 0 {
		t.Errorf("team-b sees %d events (%v), want none", len(evs), err)
	}
	if evs, err := clientA.ListEvents(ctx, "", sdk.EventOptions{}); err != nil || len(evs) == 0 {
		t.Errorf("team-a sees %d events (%v), want its own", len(evs), err)
	}
	// Names are per team: B may have its own "victim".
	own, err := clientB.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "victim"})
	if err != nil {
		t.Fatalf("team-b cannot use a name team-a uses: %v", err)
	}
	d.created[own.ID] = true
	if got, err := clientB.GetSandbox(ctx, "victim"); err != nil || got.ID != own.ID {
		t.Errorf("team-b's victim is %+v, %v", got, err)
	}
	// The audit log of team-b holds its refused requests, and nothing of team-a's.
	entries, err := clientB.Audit(ctx, "", 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, e := range entries {
		if e.Team != "team-b" {
			t.Fatalf("team-b reads an audit entry of team %q", e.Team)
		}
		if e.Status == http.StatusNotFound && e.KeyID == keyB.ID {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("team-b's audit log holds none of its %d refused requests: %+v", calls, entries[:min(3, len(entries))])
	}
	if err := clientA.DeleteSnapshot(ctx, "snap-a"); err != nil {
		t.Error(err)
	}
	// Image names are per team: team-b's "a-image" is its own and team-a's
	// stays as it was.
	aImg, err := clientA.GetImage(ctx, "a-image")
	if err != nil {
		t.Fatal(err)
	}
	tw = tar.NewWriter(&tarball)
	tw.WriteHeader(&tar.Header{Name: "marker", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("b"))
	tw.Close()
	if img, err := clientB.ImportImage(ctx, "a-image", &tarball); err != nil || img.Team != "team-b" || img.ID == aImg.ID {
		t.Errorf("team-b's own a-image: %+v, %v", img, err)
	}
	if img, err := clientA.GetImage(ctx, "a-image"); err != nil || img.ID != aImg.ID || img.Team != "team-a" {
		t.Errorf("team-a's a-image after team-b's import: %+v, %v", img, err)
	}
}

// TestKeysScopesAndRevocation: a read-only key reads but cannot create,
// exec or delete (403 naming the scope); a revoked key is refused at once;
// no key secret is in the database file.
func TestKeysScopesAndRevocation(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "box"})
	ro, roKey := d.teamKey("default", sdk.Quotas{}, sdk.ScopeSandboxesRead)
	if _, err := ro.GetSandbox(ctx, "box"); err != nil {
		t.Fatalf("read-only key cannot read: %v", err)
	}
	for _, c := range []struct{ method, path, body, scope string }{
		{"POST", "/v1/sandboxes", `{"name":"other"}`, sdk.ScopeSandboxesWrite},
		{"POST", "/v1/sandboxes/box/exec", `{"cmd":["touch","/workspace/x"]}`, sdk.ScopeExec},
		{"DELETE", "/v1/sandboxes/box", "", sdk.ScopeSandboxesWrite},
		{"POST", "/v1/keys", `{"scopes":["admin"]}`, sdk.ScopeAdmin},
	} {
		status, e, _ := d.asKey(roKey.Key, c.method, c.path, c.body)
		if status != http.StatusForbidden || e.Code != sdk.CodeMissingScope || !strings.Contains(e.Message, c.scope) {
			t.Errorf("read-only %s %s: %d %s %q, want 403 MISSING_SCOPE naming %s", c.method, c.path, status, e.Code, e.Message, c.scope)
		}
	}
	if got, err := d.client.GetSandbox(ctx, sb.ID); err != nil || got.State != sdk.StateStarted {
		t.Fatalf("after refused requests: %+v, %v", got, err)
	}
	// A metrics:read key reads /metrics and nothing else.
	_, mKey := d.teamKey("default", sdk.Quotas{}, sdk.ScopeMetricsRead)
	if status, _, _ := d.asKey(mKey.Key, "GET", "/metrics", ""); status != http.StatusOK {
		t.Errorf("metrics key on /metrics: %d", status)
	}
	if status, _, _ := d.asKey(mKey.Key, "GET", "/v1/sandboxes", ""); status != http.StatusForbidden {
		t.Errorf("metrics key on /v1/sandboxes: %d, want 403", status)
	}
	// Revoked: refused on the very next request.
	if _, err := d.client.RevokeKey(ctx, roKey.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ro.GetSandbox(ctx, "box"); errCode(err) != sdk.CodeUnauthorized {
		t.Errorf("revoked key: %v, want UNAUTHORIZED", err)
	}
	keys, err := d.client.ListKeys(ctx, "")
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %+v, %v", keys, err)
	}
	// Expired: a 1 s key stops working once the second is past.
	exp, err := d.client.CreateKey(ctx, sdk.CreateKeyRequest{Scopes: []string{sdk.ScopeSandboxesRead}, TTLSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the 1 s key to expire", func() bool {
		status, _, _ := d.asKey(exp.Key, "GET", "/v1/sandboxes", "")
		return status == http.StatusUnauthorized
	})
	// No secret in the database files, in any form the key was shown.
	d.stop()
	var all []byte
	for _, f := range []string{"sbx.db", "sbx.db-wal"} {
		b, err := os.ReadFile(filepath.Join(d.dataDir, f))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for _, k := range []*sdk.CreatedKey{roKey, mKey, exp} {
		secret := strings.TrimPrefix(k.Key, "sbx_"+k.ID+"_")
		if len(all) == 0 || strings.Contains(string(all), secret) {
			t.Errorf("key %s: its secret is in the database (%d bytes read)", k.ID, len(all))
		}
	}
	d.start()
}

// TestQuotaUnderConcurrentCreates: 20 creates at once against a team quota
// of 5 sandboxes: exactly 5 succeed, the rest get 403 QUOTA_SANDBOXES, and
// the usage shows 5.
func TestQuotaUnderConcurrentCreates(t *testing.T) {
	d := startDaemon(t, "--rate-limit", "0")
	ctx := context.Background()
	c, _ := d.teamKey("quota", sdk.Quotas{MaxSandboxes: 5}, sdk.ScopeSandboxesWrite, sdk.ScopeSandboxesRead, sdk.ScopeTeamRead)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ok      int
		refused = map[sdk.Code]int{}
	)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: fmt.Sprintf("q%d", i), Network: "none"})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
				d.created[sb.ID] = true
				return
			}
			refused[errCode(err)]++
		}()
	}
	wg.Wait()
	if ok != 5 || refused[sdk.CodeQuotaSandboxes] != 15 {
		t.Fatalf("%d creates succeeded, refused %v; want 5 and 15 QUOTA_SANDBOXES", ok, refused)
	}
	u, err := c.TeamUsage(ctx, "quota")
	if err != nil || u.Sandboxes != 5 || u.Quotas.MaxSandboxes != 5 {
		t.Fatalf("usage %+v, %v", u, err)
	}
	// maxRunning: with all 5 stopped and a quota of 1 running, one starts
	// and the next start is refused.
	if _, err := d.client.SetQuotas(ctx, "quota", sdk.Quotas{MaxRunning: 1}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListSandboxes(ctx, sdk.ListOptions{})
	if err != nil || len(list) != 5 {
		t.Fatalf("list %d, %v", len(list), err)
	}
	for _, sb := range list {
		if _, err := c.StopSandbox(ctx, sb.ID, sdk.StopOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.StartSandbox(ctx, list[0].ID); err != nil {
		t.Fatalf("first start under maxRunning 1: %v", err)
	}
	if _, err := c.StartSandbox(ctx, list[1].ID); errCode(err) != sdk.CodeQuotaRunning {
		t.Fatalf("second start under maxRunning 1: %v, want QUOTA_RUNNING", err)
	}
}

// TestRateLimitPerKey: a burst past a key's bucket gets 429 with
// Retry-After; another key is unaffected.
func TestRateLimitPerKey(t *testing.T) {
	d := startDaemon(t, "--rate-limit", "0.5", "--rate-burst", "5")
	_, k1 := d.teamKey("default", sdk.Quotas{}, sdk.ScopeSandboxesRead)
	_, k2 := d.teamKey("default", sdk.Quotas{}, sdk.ScopeSandboxesRead)
	limited := 0
	var retry string
	for range 10 {
		status, e, h := d.asKey(k1.Key, "GET", "/v1/sandboxes", "")
		if status == http.StatusTooManyRequests {
			limited++
			retry = h.Get("Retry-After")
			if e.Code != sdk.CodeRateLimited {
				t.Errorf("429 with code %q", e.Code)
			}
		}
	}
	if limited < 5 || retry == "" || retry == "0" {
		t.Fatalf("%d of 10 requests limited, Retry-After %q; want at least 5 and a positive Retry-After", limited, retry)
	}
	if status, _, _ := d.asKey(k2.Key, "GET", "/v1/sandboxes", ""); status != http.StatusOK {
		t.Fatalf("the other key got %d", status)
	}
}
