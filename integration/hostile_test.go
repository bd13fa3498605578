package integration

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Hostile code inside a sandbox. TestInstanceHardening (hardening_test.go)
// checks the configuration (capabilities, limits, no_new_privs); these tests
// attack it and check that the attacks fail, that the daemon and the other
// sandboxes do not notice, and that the sandbox can be recovered or removed.

// hostileBin builds testdata/hostile once per test binary, next to the sbx
// binary (TestMain removes that directory).
var hostileBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(sbxBin), "hostile")
	build := exec.Command("go", "build", "-o", bin, "./testdata/hostile")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build testdata/hostile: %v\n%s", err, out)
	}
	return bin, nil
})

// hostMarker writes a file with random content on the host and returns its
// path and content. Tests check it is never read or changed from inside.
func hostMarker(t *testing.T) (path, secret string) {
	t.Helper()
	b := make([]byte, 16)
	rand.Read(b)
	secret = "host-secret-" + hex.EncodeToString(b)
	path = filepath.Join(t.TempDir(), "marker")
	if err := os.WriteFile(path, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, secret
}

func checkMarker(t *testing.T, path, secret string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != secret {
		t.Errorf("host marker changed: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files appeared next to the host marker: %d entries", len(entries))
	}
}

// TestHostileSyscalls runs testdata/hostile inside a sandbox: every attempt at
// raw sockets, mounts, module loading, kernel knobs, devices, namespaces,
// host processes and a chroot escape must fail.
func TestHostileSyscalls(t *testing.T) {
	bin, err := hostileBin()
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	marker, secret := hostMarker(t)
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := d.client.Upload(ctx, sb.ID, "/tmp/hostile", f, 0o755); err != nil {
		t.Fatal(err)
	}
	hostPid := d.cmd.Process.Pid
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"/tmp/hostile", strconv.Itoa(hostPid), marker}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("hostile: exit %d, stderr %s", res.ExitCode, res.Stderr)
	}
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(res.Stdout))
	for sc.Scan() {
		var a struct{ Check, Errno, Note string }
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		got[a.Check] = a.Errno
		if a.Errno == "" {
			t.Errorf("%s succeeded inside the sandbox (%s)", a.Check, a.Note)
		}
	}
	// Host processes must be invisible (ESRCH, ENOENT), not merely refused:
	// EPERM would mean the sandbox can see them.
	invisible := map[string][]string{
		"kill -0 host pid":                     {"ESRCH"},
		"ptrace attach host pid":               {"ESRCH"},
		"open /proc/HOST_PID/root":             {"ENOENT"},
		"read host marker after chroot escape": {"ENOENT", "EPERM"},
		"raw socket":                           {"EPERM"},
		"packet socket":                        {"EPERM"},
		"init_module":                          {"EPERM"},
		"finit_module":                         {"EPERM"},
		"mknod block 8:0":                      {"EPERM"},
		// The agent is non-dumpable and seccomp refuses ptrace of pid 1.
		"ptrace attach pid 1":  {"EPERM"},
		"ptrace seize pid 1":   {"EPERM"},
		"read /proc/1/mem":     {"EACCES", "EPERM"},
		"read /proc/1/environ": {"EACCES", "EPERM"},
	}
	if hostPid < 1000 {
		t.Logf("host pid %d is small enough to exist inside; not asserting invisibility", hostPid)
		delete(invisible, "kill -0 host pid")
		delete(invisible, "ptrace attach host pid")
	}
	for check, want := range invisible {
		if e, ok := got[check]; !ok || !slices.Contains(want, e) {
			t.Errorf("%s: errno %q, want one of %v", check, e, want)
		}
	}
	if len(got) < 35 {
		t.Errorf("only %d attempts reported; the helper stopped early?\n%s", len(got), res.Stdout)
	}

	// The same through busybox, as a script would do it.
	res, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "head -c 4096 /dev/urandom > /tmp/evil.ko; insmod /tmp/evil.ko"})
	if err != nil || res.ExitCode == 0 || !strings.Contains(res.Stderr, "not permitted") {
		t.Errorf("insmod: %+v, %v", res, err)
	}

	// /proc shows the sandbox's own processes only: a handful of small pids.
	res, err = d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "for p in /proc/[0-9]*; do echo ${p#/proc/} $(cat $p/comm 2>/dev/null); done"})
	if err != nil {
		t.Fatal(err)
	}
	procs := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(procs) > 8 {
		t.Errorf("the sandbox sees %d processes:\n%s", len(procs), res.Stdout)
	}
	for _, p := range procs {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		if pid == hostPid || pid > 1000 {
			t.Errorf("the sandbox sees pid %d (%s)", pid, p)
		}
	}
	checkMarker(t, marker, secret)
}

// TestForkBomb: a fork bomb is held by the pids limit while the daemon and
// another sandbox carry on. Its background processes outlive the exec (as
// any `cmd &` does), so the bomb goes on; the sandbox still runs commands
// (or, if the agent itself could not get a thread, it stopped), and a stop
// ends the bomb: after a start the sandbox is clean.
func TestForkBomb(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	const limit = 64
	bomb := d.create(sdk.CreateSandboxRequest{Name: "bomb", PidsLimit: limit})
	other := d.create(sdk.CreateSandboxRequest{Name: "bystander"})
	cg := cgroupDir("pids", bomb.ID)
	if _, err := os.Stat(cg); err != nil {
		t.Fatalf("no pids cgroup at %s", cg)
	}

	type outcome struct {
		res *sdk.ExecResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := d.client.Exec(ctx, bomb.ID, sdk.ExecRequest{Shell: "f() { f | f & }; f; wait", TimeoutSeconds: 5})
		done <- outcome{res, err}
	}()
	waitFor(t, 60*time.Second, "the fork bomb to hit the pids limit", func() bool {
		return cgroupCounter(filepath.Join(cg, "pids.events"), "max") > 0
	})
	// While it is held: never above the limit, and everyone else works.
	if n := cgroupValue(filepath.Join(cg, "pids.current")); n > limit {
		t.Errorf("pids.current = %d, above the limit %d", n, limit)
	}
	if res, err := d.client.Exec(ctx, other.ID, sdk.ExecRequest{Shell: "echo ok"}); err != nil || res.Stdout != "ok\n" {
		t.Errorf("bystander during the bomb: %+v, %v", res, err)
	}
	if _, err := d.client.ListSandboxes(ctx, sdk.ListOptions{}); err != nil {
		t.Errorf("daemon during the bomb: %v", err)
	}
	// The bomb's own shell returns (or times out) while its offspring go on.
	if o := <-done; o.err != nil {
		t.Logf("bomb exec: %v", o.err)
	}

	// Still usable: a command runs while the bomb holds the limit, or the
	// instance died (the agent could not start a thread) and it stopped.
	var state sdk.State
	waitFor(t, 60*time.Second, "the bombed sandbox to run commands or stop", func() bool {
		sb, err := d.client.GetSandbox(ctx, bomb.ID)
		if err != nil {
			return false
		}
		state = sb.State
		if state == sdk.StateStopped {
			return true
		}
		res, err := d.client.Exec(ctx, bomb.ID, sdk.ExecRequest{Cmd: []string{"true"}, TimeoutSeconds: 10})
		return err == nil && res.ExitCode == 0
	})
	t.Logf("after the bomb's exec the sandbox is %s", state)
	grace := 1
	if _, err := d.client.StopSandbox(ctx, bomb.ID, sdk.StopOptions{GraceSeconds: &grace}); err != nil {
		t.Fatalf("stop during the bomb: %v", err)
	}
	if _, err := d.client.StartSandbox(ctx, bomb.ID); err != nil {
		t.Fatalf("start after the bomb: %v", err)
	}
	if n := cgroupValue(filepath.Join(cg, "pids.current")); n > 16 {
		t.Errorf("%d processes in the sandbox after stop and start", n)
	}
	if res, err := d.client.Exec(ctx, bomb.ID, sdk.ExecRequest{Shell: "echo ok"}); err != nil || res.Stdout != "ok\n" {
		t.Errorf("exec after stop and start: %+v, %v", res, err)
	}
	if err := d.client.DeleteSandbox(ctx, bomb.ID, true); err != nil {
		t.Errorf("delete after the bomb: %v", err)
	}
}

// TestMemoryBomb: a process allocating past memoryMiB is killed by the
// kernel's OOM killer inside the sandbox's cgroup; the exec reports SIGKILL,
// the sandbox stays usable, and nothing else notices. (Which process dies
// is the kernel's choice: the biggest, which is the bomb, not the agent;
// TestOOMKillsAgent in faults_test.go covers the agent dying.)
func TestMemoryBomb(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "membomb", MemoryMiB: 64})
	other := d.create(sdk.CreateSandboxRequest{Name: "bystander"})
	cg := cgroupDir("memory", sb.ID)
	if _, err := os.Stat(cg); err != nil {
		t.Fatalf("no memory cgroup at %s", cg)
	}
	oomEvents := cgroupFile("memory", sb.ID, "memory.oom_control")
	oomBefore := cgroupCounter(oomEvents, "oom_kill")

	// dd reads 256 MiB of zeros into one buffer: it must fault in every page.
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != "SIGKILL" || res.ExitCode != 137 {
		t.Errorf("memory bomb: %+v, want SIGKILL and 137", res)
	}
	if n := cgroupCounter(oomEvents, "oom_kill"); n <= oomBefore {
		t.Errorf("no OOM kill recorded in the cgroup (oom_kill %d)", n)
	}
	if max := cgroupValue(filepath.Join(cg, "memory.max_usage_in_bytes")); max > 64<<20 {
		t.Errorf("memory use peaked at %d bytes, above the 64 MiB limit", max)
	}
	got, err := d.client.GetSandbox(ctx, sb.ID)
	if err != nil || got.State != sdk.StateStarted {
		t.Errorf("after the memory bomb: %+v, %v", got, err)
	}
	for _, id := range []string{sb.ID, other.ID} {
		if res, err := d.client.Exec(ctx, id, sdk.ExecRequest{Shell: "echo ok"}); err != nil || res.Stdout != "ok\n" {
			t.Errorf("exec in %s after the memory bomb: %+v, %v", id, res, err)
		}
	}
}

// TestSandboxesCannotReachEachOther: one sandbox's files, processes, loopback
// services and agent socket are invisible to another, by any path.
func TestSandboxesCannotReachEachOther(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	a := d.create(sdk.CreateSandboxRequest{Name: "alice"})
	b := d.create(sdk.CreateSandboxRequest{Name: "bob"})
	run := func(id, shell string) *sdk.ExecResult {
		t.Helper()
		res, err := d.client.Exec(ctx, id, sdk.ExecRequest{Shell: shell, TimeoutSeconds: 30})
		if err != nil {
			t.Fatalf("%s: %v", shell, err)
		}
		return res
	}
	run(a.ID, "echo alice-secret > /workspace/a-secret; sleep 4242 >/dev/null 2>&1 & httpd -p 127.0.0.1:7777 -h /workspace")
	// (nc, not wget: Debian's static busybox wget crashes.)
	get := "printf 'GET /a-secret HTTP/1.0\\r\\n\\r\\n' | nc -w 5 127.0.0.1 7777; echo exit=$?"
	if res := run(a.ID, get); !strings.Contains(res.Stdout, "alice-secret") {
		t.Fatalf("alice cannot reach her own server: %+v", res)
	}
	if res := run(b.ID, get); strings.Contains(res.Stdout, "alice-secret") || strings.Contains(res.Stdout, "exit=0") {
		t.Errorf("bob reached alice's loopback server: %+v", res)
	}
	if res := run(b.ID, "ps -o pid,args"); strings.Contains(res.Stdout, "4242") || strings.Contains(res.Stdout, "httpd") {
		t.Errorf("bob sees alice's processes:\n%s", res.Stdout)
	}
	if res := run(b.ID, "find / -xdev -name 'a-secr*' 2>/dev/null"); res.Stdout != "" {
		t.Errorf("bob finds alice's files:\n%s", res.Stdout)
	}
	// His run directory: his socket, his agent's log, his resolv.conf.
	if res := run(b.ID, "ls -A /.sbx/run | tr '\\n' ' '"); strings.TrimSpace(res.Stdout) != ".resolv.conf agent-output.log agent.sock" {
		t.Errorf("bob's /.sbx/run holds more than his own files: %q", res.Stdout)
	}
	// Through the file API, with paths that would lead to alice's files on
	// the host.
	for _, p := range []string{
		"/workspace/a-secret",
		"../../" + a.ID + "/upper/workspace/a-secret",
		filepath.Join(d.dataDir, "sandboxes", a.ID, "upper/workspace/a-secret"),
		filepath.Join(d.dataDir, "sandboxes", a.ID, "rootfs/workspace/a-secret"),
		"/proc/1/root/../../" + a.ID + "/rootfs/workspace/a-secret",
	} {
		rc, err := d.client.Download(ctx, b.ID, p)
		if err == nil {
			body, _ := io.ReadAll(rc)
			rc.Close()
			t.Errorf("bob downloaded %s: %q", p, body)
		} else if !sdk.IsNotFound(err) {
			t.Errorf("download %s: want not found, got %v", p, err)
		}
	}
}

// TestFileAPIRaceWithSymlinkSwap: code inside swaps a directory for a symlink
// to / as fast as it can while the host uploads and downloads through that
// directory. The agent runs inside the sandbox's root, so whatever the race,
// a host file is never read or written.
func TestFileAPIRaceWithSymlinkSwap(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	marker, secret := hostMarker(t)
	rel := strings.TrimPrefix(marker, "/")
	// The swapper: /workspace/d is a directory, then a symlink to /, then a
	// directory again, forever.
	_, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: `
		(while :; do rm -rf /workspace/d; mkdir -p /workspace/d; rm -rf /workspace/d; ln -s / /workspace/d; done) >/dev/null 2>&1 &
		echo $! > /tmp/swapper.pid`})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{
		"/workspace/d/" + rel,
		"/workspace/d/../../../../" + rel,
		"/workspace/d/" + filepath.Dir(rel),
		marker,
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	uploads, leaks := 0, 0
	for w := range 4 {
		wg.Go(func() {
			for i := range 40 {
				p := paths[(w+i)%len(paths)]
				if _, err := d.client.Upload(ctx, sb.ID, p, strings.NewReader("from the api"), 0o644, sdk.WithParents()); err == nil {
					mu.Lock()
					uploads++
					mu.Unlock()
				}
				if rc, err := d.client.Download(ctx, sb.ID, p); err == nil {
					body, _ := io.ReadAll(rc)
					rc.Close()
					if strings.Contains(string(body), secret) {
						mu.Lock()
						leaks++
						mu.Unlock()
					}
				}
				d.client.ListFiles(ctx, sb.ID, filepath.Dir(p))
			}
		})
	}
	wg.Wait()
	if _, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "kill $(cat /tmp/swapper.pid)"}); err != nil {
		t.Error(err)
	}
	t.Logf("%d uploads went through (inside the sandbox)", uploads)
	if leaks > 0 {
		t.Errorf("%d downloads returned the host marker", leaks)
	}
	checkMarker(t, marker, secret)
	// The uploads that landed are inside the sandbox, at the marker's path
	// in its own root.
	if res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"cat", marker}}); err == nil && res.ExitCode == 0 && res.Stdout != "from the api" {
		t.Errorf("the sandbox's copy at %s holds %q", marker, res.Stdout)
	}
}

// TestGarbageToEveryRoute sends garbage to every operation the OpenAPI
// document lists that can change something (POST, PUT, DELETE): bad path
// ids, malformed and hostile JSON bodies, and ill-typed query parameters.
// Each must get a 4xx with a coded error (never a 5xx), and nothing may
// change. New routes are covered as they are added to the route table.
func TestGarbageToEveryRoute(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{Name: "victim", Labels: map[string]string{"k": "v"}})
	if _, err := d.client.Upload(ctx, sb.ID, "/workspace/keep", strings.NewReader("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := d.stateSnapshot()
	doc := d.openAPI()

	// No valid name among them: PUT /v1/sandboxes/{id} would create it.
	garbageIDs := []string{"..%2F..%2Fetc", "%00", "UPPER_case", strings.Repeat("x", 300), "sbx-aaaaaaaaaaaaaaaa"}
	tooLarge := `{"name":"` + strings.Repeat("a", 2<<20) + `"}`
	calls := 0
	for path, methods := range doc.Paths {
		for method, op := range methods {
			method = strings.ToUpper(method)
			if method != "POST" && method != "PUT" && method != "DELETE" {
				continue
			}
			// Garbage in the path: every {param} replaced.
			if strings.Contains(path, "{") {
				for _, g := range garbageIDs {
					d.expect4xx(t, method, fillPath(path, g), `{}`)
					calls++
				}
			}
			valid := fillPath(path, "")
			// Garbage bodies where the operation takes JSON.
			if schema, ok := op.jsonBody(); ok {
				bodies := []string{`{"x":`, `{} {}`, "\x00\xff\xfe", `{"a":NaN}`, tooLarge,
					`{"deep":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`}
				if strings.HasPrefix(schema, "#/") {
					bodies = append(bodies, `[1,2]`, `"a string"`, `{"surelyNotAField":1}`)
				}
				for _, body := range bodies {
					d.expect4xx(t, method, valid, body)
					calls++
				}
			}
			// Ill-typed query parameters.
			for _, p := range op.Parameters {
				var bad string
				switch {
				case p.In != "query":
					continue
				case p.Schema.Type == "boolean":
					bad = "maybe"
				case p.Schema.Type == "integer" || p.Schema.Type == "number":
					bad = "12abc"
				case p.Name == "path":
					bad = "%00"
				default:
					continue
				}
				d.expect4xx(t, method, valid+"?"+p.Name+"="+bad, `{}`)
				calls++
			}
		}
	}
	t.Logf("%d garbage requests to %d documented paths", calls, len(doc.Paths))
	if calls < 50 {
		t.Errorf("only %d garbage calls made; is the document complete?", calls)
	}
	if after := d.stateSnapshot(); after != before {
		t.Errorf("garbage changed the daemon's state:\nbefore %s\nafter  %s", before, after)
	}
	if res, err := d.client.Exec(ctx, "victim", sdk.ExecRequest{Cmd: []string{"cat", "/workspace/keep"}}); err != nil || res.Stdout != "keep" {
		t.Errorf("victim after the garbage: %+v, %v", res, err)
	}
}

type openAPIDoc struct {
	Paths map[string]map[string]openAPIOp `json:"paths"`
}

type openAPIOp struct {
	Parameters []struct {
		Name, In string
		Schema   struct{ Type string }
	} `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema struct {
				Ref  string `json:"$ref"`
				Type string `json:"type"`
			} `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
}

// jsonBody reports whether the operation takes a JSON body, and its schema
// reference ("#/components/…") or type.
func (op openAPIOp) jsonBody() (string, bool) {
	if op.RequestBody == nil {
		return "", false
	}
	c, ok := op.RequestBody.Content["application/json"]
	if !ok {
		return "", false
	}
	if c.Schema.Ref != "" {
		return c.Schema.Ref, true
	}
	return c.Schema.Type, true
}

func (d *daemon) openAPI() openAPIDoc {
	d.t.Helper()
	req, _ := http.NewRequest("GET", "http://"+d.addr+"/v1/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc openAPIDoc
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		d.t.Fatal(err)
	}
	return doc
}

// fillPath puts value into every {param} of a documented path; an empty value
// means a valid one: the sandbox "victim", the image "base", "x" otherwise.
func fillPath(path, value string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		j := strings.IndexByte(path[i:], '}')
		name := strings.TrimSuffix(path[i+1:i+j], "...")
		b.WriteString(path[:i])
		v := value
		if v == "" {
			switch name {
			case "id":
				v = "victim"
			case "name":
				v = "base"
			default:
				v = "x"
			}
		}
		b.WriteString(v)
		path = path[i+j+1:]
	}
}

// expect4xx sends one request and checks for a 4xx with a coded error body.
func (d *daemon) expect4xx(t *testing.T, method, path, body string) {
	t.Helper()
	status, e := d.call(method, path, body)
	if status < 400 || status >= 500 || e.Code == "" || e.Message == "" {
		short := body
		if len(short) > 40 {
			short = short[:40] + "…"
		}
		t.Errorf("%s %s with %q: %d %s %q, want a 4xx with a code and message", method, trim(path, 80), short, status, e.Code, e.Message)
	}
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// stateSnapshot describes what garbage must not change: every sandbox's
// identity, state and spec, the images, and the files of each sandbox's
// /workspace. Times of activity are left out on purpose.
func (d *daemon) stateSnapshot() string {
	d.t.Helper()
	ctx := context.Background()
	list, err := d.client.ListSandboxes(ctx, sdk.ListOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	var b strings.Builder
	for _, sb := range list {
		fmt.Fprintf(&b, "%s %s %s %s %s %v %v %g %d %d %s;", sb.ID, sb.Name, sb.State, sb.Reason, sb.Image, sb.Labels, sb.Env, sb.CPU, sb.MemoryMiB, sb.PidsLimit, sb.Workdir)
		if sb.State == sdk.StateStarted {
			files, err := d.client.ListFiles(ctx, sb.ID, "/workspace")
			if err != nil {
				d.t.Fatal(err)
			}
			for _, f := range files {
				fmt.Fprintf(&b, " %s:%d", f.Name, f.Size)
			}
		}
	}
	imgs, err := d.client.ListImages(ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	for _, img := range imgs {
		fmt.Fprintf(&b, " image %s %s;", img.Name, img.ID)
	}
	return b.String()
}

// cgroupValue reads a cgroup file holding one number; -1 if unreadable.
func cgroupValue(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// cgroupCounter reads "key value" from a cgroup file such as pids.events or
// memory.oom_control; -1 if missing.
func cgroupCounter(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return -1
}
