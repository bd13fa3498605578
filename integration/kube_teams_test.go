package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sbxhq/sbx/sdk"
)

// gatewayKey makes a key with sbx gateway key create, as
// docs/kubernetes/teams.md has an operator do: the key, and its entry of
// the keys file.
func gatewayKey(t *testing.T, team string, scopes ...string) (key, entry string) {
	t.Helper()
	cmd := exec.Command(sbxBin, "gateway", "key", "create", "--team", team, "--name", team+"-key", "--scope", strings.Join(scopes, ","))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sbx gateway key create: %v\n%s", err, stderr.String())
	}
	key, ok := strings.CutPrefix(strings.TrimSpace(stderr.String()), "key (shown once): ")
	if !ok || !strings.HasPrefix(key, "sbx_") {
		t.Fatalf("sbx gateway key create printed %q", stderr.String())
	}
	return key, string(out)
}

// auditLines reads a gateway's --audit-log.
func auditLines(t *testing.T, file string) []sdk.AuditEntry {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sdk.AuditEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct{ Audit sdk.AuditEntry }
		if err := yaml.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, line.Audit)
	}
	return out
}

// TestKubeTeams: two teams through two gateway replicas, with keys and
// quotas from the keys file (Secret sbx-gateway-keys). Each team sees and
// reaches only its own sandboxes, the same name in both included; a call
// naming the other team's sandbox is 404 whatever it is (get, exec, files,
// stop, delete, a preview with the key) and changes nothing; a read-only
// key cannot create; team B's maxSandboxes holds exactly under concurrent
// creates spread over both replicas; every write is in the audit log with
// its key and team, refusals included.
func TestKubeTeams(t *testing.T) {
	gc := startGatewayCluster(t, "sbx-teams-a", "sbx-teams-b")
	c := gc.cluster
	keyA, entryA := gatewayKey(t, "team-a", "sandboxes:read", "sandboxes:write", "exec")
	keyB, entryB := gatewayKey(t, "team-b", "sandboxes:read", "sandboxes:write", "exec")
	keyRO, entryRO := gatewayKey(t, "team-a", "sandboxes:read")
	keysFile := filepath.Join(c.dir, "keys.yaml")
	keysYAML := "teams:\n- name: team-b\n  quotas: {maxSandboxes: 3}\nkeys:\n" + entryA + entryB + entryRO
	if err := os.WriteFile(keysFile, []byte(keysYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	gc.gw.stop()
	var gws [2]*gatewayProc
	var audits [2]string
	for i := range gws {
		audits[i] = filepath.Join(c.dir, fmt.Sprintf("audit-%d.jsonl", i))
		gws[i] = startGateway(t, c, gc.gwKC, gc.keyFile, gc.key, freeAddr(t), "--keys-file", keysFile, "--audit-log", audits[i])
	}
	client := func(i int, key string) *sdk.Client { return sdk.NewClient("http://"+gws[i].addr, key) }
	a, b, ro := client(0, keyA), client(1, keyB), client(0, keyRO)
	ctx := context.Background()

	sbA, err := a.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "box", CPU: 0.5, MemoryMiB: 256})
	if err != nil || sbA.Team != "team-a" {
		t.Fatalf("team A's create: %+v %v", sbA, err)
	}
	sbB, err := b.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "box", CPU: 0.5, MemoryMiB: 256})
	if err != nil || sbB.Team != "team-b" {
		t.Fatalf("team B's create of the same name: %+v %v", sbB, err)
	}
	if got := c.kubeField("sandbox", sbB.ID, `{.metadata.labels.sbx\.dev/team}`); got != "team-b" {
		t.Fatalf("B's Sandbox object has team label %q", got)
	}
	for _, tc := range []struct {
		cl     *sdk.Client
		id, me string
	}{{a, sbA.ID, "a"}, {b, sbB.ID, "b"}} {
		if _, err := tc.cl.Exec(ctx, "box", sdk.ExecRequest{Shell: "echo " + tc.me + " > /workspace/who"}); err != nil {
			t.Fatalf("team %s's exec by name: %v", tc.me, err)
		}
		list, err := tc.cl.ListSandboxes(ctx, sdk.ListOptions{})
		if err != nil || len(list) != 1 || list[0].ID != tc.id {
			t.Fatalf("team %s's list: %+v %v", tc.me, list, err)
		}
	}

	t.Run("a team cannot see or touch the other's", func(t *testing.T) {
		notFound := func(what string, err error) {
			t.Helper()
			var ae *sdk.APIError
			if !errors.As(err, &ae) || ae.Code != sdk.CodeSandboxNotFound {
				t.Errorf("team A's %s of B's sandbox: %v, want 404 SANDBOX_NOT_FOUND", what, err)
			}
		}
		_, err := a.GetSandbox(ctx, sbB.ID)
		notFound("get", err)
		_, err = a.Exec(ctx, sbB.ID, sdk.ExecRequest{Shell: "echo pwned > /workspace/who"})
		notFound("exec", err)
		_, err = a.Download(ctx, sbB.ID, "/workspace/who")
		notFound("download", err)
		_, err = a.StopSandbox(ctx, sbB.ID, sdk.StopOptions{})
		notFound("stop", err)
		notFound("delete", a.DeleteSandbox(ctx, sbB.ID, true))
		req, _ := http.NewRequest("GET", "http://"+gws[0].addr+"/v1/sandboxes/"+sbB.ID+"/ports/8080/", nil)
		req.Header.Set("Authorization", "Bearer "+keyA)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("team A's key on B's preview: %d, want 404 as for any sandbox A does not have", resp.StatusCode)
		}
		// B's sandbox is untouched: running, its file as B wrote it.
		res, err := b.Exec(ctx, sbB.ID, sdk.ExecRequest{Shell: "cat /workspace/who"})
		if err != nil || res.Stdout != "b\n" {
			t.Fatalf("B's sandbox after A's attempts: %+v %v", res, err)
		}
		// The admin key sees both teams.
		if list, err := gws[0].client.ListSandboxes(ctx, sdk.ListOptions{}); err != nil || len(list) != 2 {
			t.Fatalf("the admin key's list: %d %v", len(list), err)
		}
	})

	t.Run("a read-only key cannot write", func(t *testing.T) {
		var ae *sdk.APIError
		if _, err := ro.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "ro"}); !errors.As(err, &ae) || ae.Code != sdk.CodeMissingScope {
			t.Fatalf("create with a sandboxes:read key: %v", err)
		}
		if list, err := ro.ListSandboxes(ctx, sdk.ListOptions{}); err != nil || len(list) != 1 || list[0].ID != sbA.ID {
			t.Fatalf("list with team A's read-only key: %+v %v", list, err)
		}
	})

	var madeB []string
	t.Run("quota holds over the cluster", func(t *testing.T) {
		// B holds 1 of 3: four creates at once, two through each replica.
		var mu sync.Mutex
		var quota int
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				sb, err := client(i%2, keyB).CreateSandbox(ctx, sdk.CreateSandboxRequest{CPU: 0.25, MemoryMiB: 128})
				mu.Lock()
				defer mu.Unlock()
				var ae *sdk.APIError
				switch {
				case err == nil:
					madeB = append(madeB, sb.ID)
				case errors.As(err, &ae) && ae.Code == sdk.CodeQuotaSandboxes && !strings.Contains(ae.Message, "team-a"):
					quota++
				default:
					t.Errorf("create %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if len(madeB) != 2 || quota != 2 {
			t.Fatalf("4 creates with 2 left of team B's quota: %d made, %d refused QUOTA_SANDBOXES", len(madeB), quota)
		}
		if out := c.kubectl("get", "sandboxes", "-n", "sbx", "-l", "sbx.dev/team=team-b", "-o", "name"); strings.Count(out, "sandbox.agents.x-k8s.io/") != 3 {
			t.Fatalf("team B's objects:\n%s", out)
		}
		// Team A has no quota: its creates are not counted against B's.
		sb, err := a.CreateSandbox(ctx, sdk.CreateSandboxRequest{CPU: 0.25, MemoryMiB: 128})
		if err != nil {
			t.Fatalf("team A's create while B is full: %v", err)
		}
		if err := a.DeleteSandbox(ctx, sb.ID, true); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("writes are audited", func(t *testing.T) {
		for _, id := range append(madeB, sbB.ID) {
			if err := b.DeleteSandbox(ctx, id, true); err != nil {
				t.Fatalf("B deletes %s: %v", id, err)
			}
		}
		if err := a.DeleteSandbox(ctx, sbA.ID, true); err != nil {
			t.Fatal(err)
		}
		gws[0].stop() // the audit log is written out on exit
		gws[1].stop()
		entries := append(auditLines(t, audits[0]), auditLines(t, audits[1])...)
		has := func(team, method, path string, status int, code sdk.Code) bool {
			for _, e := range entries {
				if e.Team == team && e.Method == method && e.Path == path && e.Status == status && e.Code == code && e.KeyID != "" {
					return true
				}
			}
			return false
		}
		for _, want := range []struct {
			team, method, path string
			status             int
			code               sdk.Code
		}{
			{"team-a", "POST", "/v1/sandboxes", 201, ""},
			{"team-b", "POST", "/v1/sandboxes", 201, ""},
			{"team-b", "POST", "/v1/sandboxes", 403, sdk.CodeQuotaSandboxes},
			{"team-a", "POST", "/v1/sandboxes", 403, sdk.CodeMissingScope},
			{"team-a", "POST", "/v1/sandboxes/" + sbB.ID + "/exec", 404, sdk.CodeSandboxNotFound},
			{"team-a", "DELETE", "/v1/sandboxes/" + sbB.ID, 404, sdk.CodeSandboxNotFound},
			{"team-b", "DELETE", "/v1/sandboxes/" + sbB.ID, 204, ""},
		} {
			if !has(want.team, want.method, want.path, want.status, want.code) {
				t.Errorf("no audit entry %+v among:\n%+v", want, entries)
			}
		}
		for _, e := range entries {
			if e.Method == "GET" {
				t.Errorf("a read was audited: %+v", e)
			}
		}
	})
}
