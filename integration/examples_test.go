package integration

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// The programs of examples/ run here against a real daemon, as a user would
// run them: built with go build (or node for the TypeScript ones), pointed
// at the daemon through the environment only, their output checked.

// buildExample builds the Go program examples/<name> and returns its path.
func buildExample(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, "github.com/sbxhq/sbx/examples/"+name)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build examples/%s: %v\n%s", name, err, out)
	}
	return bin
}

// runExample runs an example program against d with SBX_HOST and SBX_TOKEN
// set, in dir (a temporary one when ""), and returns its output; a failure
// fails the test with the output.
func runExample(t *testing.T, d *daemon, dir, bin string, args ...string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SBX_HOST="+d.baseURL(), "SBX_TOKEN="+d.token)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s (%s):\n%s", filepath.Base(bin), strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(bin), err)
	}
	return string(out)
}

// wantLines fails unless out has each of lines as a whole line.
func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		have[strings.TrimSpace(l)] = true
	}
	for _, l := range lines {
		if !have[l] {
			t.Errorf("output has no line %q", l)
		}
	}
}

// TestExampleDataAnalysis: examples/data-analysis loads its CSV into a
// python context, and the numbers it prints are the CSV's (computed here by
// hand: north 8117.50, south 6800.00, best month 2026-06 with 2950.00);
// the chart it saves is a PNG with a picture in it (bars in two colours on
// white, not a blank image).
func TestExampleDataAnalysis(t *testing.T) {
	d := startDaemon(t)
	importPython(t, d)
	bin := buildExample(t, "data-analysis")
	dir := t.TempDir()
	out := runExample(t, d, dir, bin, "-out", "chart.png")
	wantLines(t, out, "rows: 12", "total revenue: 14917.50", "revenue north: 8117.50", "revenue south: 6800.00",
		"best month: 2026-06 (2950.00)", "chart: chart.png")
	b, err := os.ReadFile(filepath.Join(dir, "chart.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("chart.png is not a PNG: %v", err)
	}
	colours := map[[4]uint32]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, b, a}] = true
		}
	}
	if sz := bounds.Size(); sz.X < 400 || sz.Y < 200 || len(colours) < 4 {
		t.Errorf("chart is %v with %d colours, want a drawn chart of about 700x400", sz, len(colours))
	}
}

// TestExampleGrader: examples/grader grades its 200 bundled submissions in
// sandboxes of a warm pool, and each gets the verdict its kind calls for
// (the kind ends its name: 0007-loop.sh): correct → pass, wrong → fail,
// loop → timeout, net → net-refused, memory → oom. The pool is gone after.
func TestExampleGrader(t *testing.T) {
	d := startDaemon(t)
	bin := buildExample(t, "grader")
	out := runExample(t, d, "", bin, "-n", "200", "-parallel", "16")
	want := map[string]string{"correct": "pass", "wrong": "fail", "loop": "timeout", "net": "net-refused", "memory": "oom"}
	graded := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasSuffix(f[0], ".sh") {
			continue
		}
		graded++
		kind := strings.TrimSuffix(f[0][strings.Index(f[0], "-")+1:], ".sh")
		if f[1] != want[kind] {
			t.Errorf("%s: verdict %q, want %q (%s)", f[0], f[1], want[kind], line)
		}
	}
	if graded != 200 {
		t.Errorf("%d submissions in the table, want 200", graded)
	}
	wantLines(t, out, "verdicts: pass 120, fail 30, timeout 20, oom 10, net-refused 20, error 0")
	if pools, err := d.client.ListPools(context.Background()); err != nil || len(pools) != 0 {
		t.Errorf("pools after the grader: %+v, %v", pools, err)
	}
}

// TestExamplePerUserSandbox: examples/per-user-sandbox makes alice's
// sandbox on her first visit and waits until the idle policy stops it; the
// second visit finds the same sandbox stopped, and the note of the first
// visit is still in its file, read by a new instance.
func TestExamplePerUserSandbox(t *testing.T) {
	d := startDaemon(t)
	bin := buildExample(t, "per-user-sandbox")
	first := runExample(t, d, "", bin, "-user", "alice", "-note", "first visit", "-idle", "2s", "-wait-stop")
	sb, err := d.client.GetSandbox(context.Background(), "user-alice")
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, first, "created user-alice (id "+sb.ID+")", "first visit", "stopped (idle) after 2s without use")
	if sb.State != sdk.StateStopped || sb.Reason != "idle" || sb.StartedAt == nil {
		t.Fatalf("after the first visit: %s (%s), started %v; want stopped for idleness", sb.State, sb.Reason, sb.StartedAt)
	}

	second := runExample(t, d, "", bin, "-user", "alice", "-note", "second visit", "-idle", "2s")
	wantLines(t, second, "found user-alice (id "+sb.ID+"), stopped (idle)", "first visit", "second visit")
	again, err := d.client.GetSandbox(context.Background(), "user-alice")
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != sb.ID || again.StartedAt == nil || !again.StartedAt.After(*sb.StartedAt) {
		t.Errorf("second visit: id %s started %v; want %s in a new instance started after %v", again.ID, again.StartedAt, sb.ID, sb.StartedAt)
	}
	if trail := d.eventTrail("user-alice"); count(trail, "started/lazy") != 1 {
		t.Errorf("events: %v; want one lazy start (by the second visit's command)", trail)
	}
}

// TestExampleComputerUse: examples/computer-use opens a page in chromium on
// the sandbox's desktop, clicks its text box and types; the page's title
// (which the page sets from the box) shows the typed text, and the two
// screenshots are full-screen PNGs that differ.
func TestExampleComputerUse(t *testing.T) {
	d := startDaemon(t)
	importDesktop(t, d)
	bin := buildExample(t, "computer-use")
	dir := t.TempDir()
	out := runExample(t, d, dir, bin, "-out", dir)
	wantLines(t, out, `typed "hello from sbx"`, "page title: typed: hello from sbx", "first and last screenshots differ: true")
	var shots [][]byte
	for _, name := range []string{"shot-1.png", "shot-2.png"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s is not a PNG: %v", name, err)
		}
		if sz := img.Bounds().Size(); sz.X != 1024 || sz.Y != 768 {
			t.Errorf("%s is %v, want 1024x768", name, sz)
		}
		shots = append(shots, b)
	}
	if bytes.Equal(shots[0], shots[1]) {
		t.Error("the screenshots before and after typing are the same")
	}
}

// runNodeExample runs node script in examples/<dir> with env and returns
// its output; the SDK it uses is installed by scripts/npm-install.sh.
func runNodeExample(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	dir = filepath.Join("..", "examples", dir)
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		t.Fatalf("the SDK of %s is not installed: run scripts/npm-install.sh (%v)", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("node %s (%s):\n%s", script, time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	return string(out)
}

// TestExampleMigrate: the E2B and the Daytona script of examples/migrate-*
// run unchanged on sbx, configured only by their SDKs' environment
// variables, and print what the code they ran computed.
func TestExampleMigrate(t *testing.T) {
	d := startDaemon(t)
	importPython(t, d)
	t.Run("E2B", func(t *testing.T) {
		out := runNodeExample(t, "migrate-e2b", "analyze.mjs",
			"E2B_API_KEY="+d.token, "E2B_API_URL="+d.baseURL()+"/e2b", "E2B_SANDBOX_URL="+d.baseURL()+"/e2b/sandbox")
		wantLines(t, out, "mean score: 84.66666666666667", "best: 'ada'", "lines: 4", "user: user", "files: scores.csv", "done")
	})
	t.Run("Daytona", func(t *testing.T) {
		out := runNodeExample(t, "migrate-daytona", "main.mjs",
			"DAYTONA_API_KEY="+d.token, "DAYTONA_API_URL="+d.baseURL()+"/daytona/api")
		wantLines(t, out, "codeRun: 84.66666666666667 exit 0", "executeCommand: ada 91 exit 0", "downloadFile: 3 lines", "list by label: 1", "done")
	})
	waitFor(t, time.Minute, "the scripts' sandboxes to be deleted", func() bool {
		list, err := d.client.ListSandboxes(context.Background(), sdk.ListOptions{})
		return err == nil && len(list) == 0
	})
}
