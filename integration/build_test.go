package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/dirtar"
	"github.com/sbxhq/sbx/sdk"
)

// TestImageBuild builds a Dockerfile on the debian image
// (scripts/build-debian-image.sh), starts a sandbox from the result, builds
// it again from the cache, and checks the failures: a failing RUN and an
// unsupported instruction.
func TestImageBuild(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	c := d.client
	f, err := os.Open(debianImageTar(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ImportImage(ctx, "debian", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	// As the image's ENTRYPOINT with CMD "serve" it stays up (the sandbox's
	// main process); run by hand it just answers.
	write("app/main.sh", "#!/bin/sh\necho main $*\n[ \"$1\" = serve ] && exec sleep 100000\nexit 0\n", 0o755)
	write("data.txt", "v1\n", 0o644)
	write("Dockerfile", `FROM debian
ARG GREETING=hello
ENV APP_HOME=/srv/app MODE=test
WORKDIR $APP_HOME
COPY app/ ./
RUN echo "$GREETING from $(id -un) in $(pwd)" > built.txt && chown -R user:user /srv/app
COPY data.txt /etc/app/data.txt
USER user
RUN id -un > ran-as
ENTRYPOINT ["/srv/app/main.sh"]
CMD ["serve"]
LABEL team=sbx
`, 0o644)

	build := func(name string, df string) ([]sdk.BuildEvent, *sdk.Image, error) {
		t.Helper()
		if df != "" {
			write("Dockerfile", df, 0o644)
		}
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(dirtar.Write(pw, dir)) }()
		defer pr.Close()
		var events []sdk.BuildEvent
		img, err := c.BuildImage(ctx, name, pr, sdk.BuildOptions{BuildArgs: map[string]string{"GREETING": "hi"}}, func(ev sdk.BuildEvent) { events = append(events, ev) })
		return events, img, err
	}
	steps := func(events []sdk.BuildEvent) (cached, ran []string) {
		for _, ev := range events {
			if ev.Type == "step" && (strings.HasPrefix(ev.Instruction, "RUN") || strings.HasPrefix(ev.Instruction, "COPY")) {
				if ev.Cached {
					cached = append(cached, ev.Instruction)
				} else {
					ran = append(ran, ev.Instruction)
				}
			}
		}
		return
	}

	events, img, err := build("app", "")
	if err != nil {
		t.Fatalf("build: %v\nevents: %+v", err, events)
	}
	if cached, ran := steps(events); len(cached) != 0 || len(ran) != 4 {
		t.Fatalf("first build: cached %q, ran %q", cached, ran)
	}
	if img.Source != "build" || img.Config == nil || img.Config.User != "user" || img.Config.WorkingDir != "/srv/app" ||
		!slices.Equal(img.Config.Entrypoint, []string{"/srv/app/main.sh"}) || !slices.Equal(img.Config.Cmd, []string{"serve"}) || img.Config.Labels["team"] != "sbx" || !slices.Contains(img.Config.Env, "MODE=test") {
		t.Fatalf("built image: %+v config %+v", img, img.Config)
	}
	d.create(sdk.CreateSandboxRequest{Name: "fromapp", Image: "app"})
	if got := d.exec("fromapp", "pwd; cat built.txt ran-as /etc/app/data.txt; echo $MODE $APP_HOME; stat -c %U built.txt; id -u user; ./main.sh check; git --version | cut -d' ' -f1-2"); got !=
		"/srv/app\nhi from root in /srv/app\nuser\nv1\ntest /srv/app\nuser\n1000\nmain check\ngit version" {
		t.Fatalf("a sandbox from the built image sees:\n%s", got)
	}
	// ENTRYPOINT + CMD are the main process of a sandbox from a built image;
	// a create's own entrypoint replaces them, ignoreImageEntrypoint drops them.
	mainLog := func(id string) string {
		var b strings.Builder
		if err := c.MainLogs(ctx, id, false, &b); err != nil {
			t.Fatalf("logs of %s: %v", id, err)
		}
		return b.String()
	}
	waitFor(t, 30*time.Second, "the image's entrypoint in the main log", func() bool { return mainLog("fromapp") == "main serve\n" })
	d.create(sdk.CreateSandboxRequest{Name: "ownmain", Image: "app", Entrypoint: []string{"/bin/sh", "-c", "echo own; exec sleep 100000"}})
	waitFor(t, 30*time.Second, "the create's own entrypoint in the main log", func() bool { return mainLog("ownmain") == "own\n" })
	d.create(sdk.CreateSandboxRequest{Name: "nomain", Image: "app", IgnoreImageEntrypoint: true})
	if err := c.MainLogs(ctx, "nomain", false, io.Discard); apiCode(err) != string(sdk.CodeNoMainProcess) {
		t.Fatalf("ignoreImageEntrypoint: logs answer %v, want %s", err, sdk.CodeNoMainProcess)
	}

	// Unchanged: every step from the cache, the same image.
	events, again, err := build("app", "")
	if err != nil {
		t.Fatal(err)
	}
	if cached, ran := steps(events); len(cached) != 4 || len(ran) != 0 || again.ID != img.ID {
		t.Fatalf("rebuild: cached %q, ran %q, id %s (was %s)", cached, ran, again.ID, img.ID)
	}
	// The CLI sends the same context and sees the cache too.
	if out, stderr, code := d.sbx("", "image", "build", "app", dir, "--build-arg", "GREETING=hi"); code != 0 ||
		strings.Count(stderr, "(cached)") != 4 || !strings.Contains(stderr, "step 1/11: ARG GREETING") || !strings.Contains(out, "app") {
		t.Fatalf("sbx image build: %d\n%s\n%s", code, out, stderr)
	}
	// A changed file: the steps before its COPY stay cached.
	write("data.txt", "v2\n", 0o644)
	events, _, err = build("app", "")
	if err != nil {
		t.Fatal(err)
	}
	if cached, ran := steps(events); len(cached) != 2 || len(ran) != 2 || !strings.Contains(ran[0], "data.txt") {
		t.Fatalf("rebuild after a change: cached %q, ran %q", cached, ran)
	}

	// A failing RUN: its exit code and output, and no image.
	events, _, err = build("broken", "FROM debian\nCOPY data.txt /d\nRUN echo boom-out; echo boom-err >&2; exit 7\n")
	last := events[len(events)-1]
	if apiCode(err) != string(sdk.CodeBuildFailed) || last.Type != "error" || last.ExitCode != 7 ||
		!strings.Contains(last.Output, "boom-out") || !strings.Contains(last.Output, "boom-err") || !strings.Contains(last.Error.Message, "line 3") {
		t.Fatalf("failing RUN: %v, last event %+v", err, last)
	}
	if _, err := c.GetImage(ctx, "broken"); apiCode(err) != string(sdk.CodeImageNotFound) {
		t.Fatalf("a failed build left an image: %v", err)
	}
	if list, err := c.ListSandboxes(ctx, sdk.ListOptions{Labels: map[string]string{"sbx.build": "true"}}); err != nil || len(list) != 0 {
		t.Fatalf("build sandboxes left behind: %+v %v", list, err)
	}

	// An unsupported instruction: 400 naming it and its line, before anything runs.
	_, _, err = build("unsupported", "FROM debian\nRUN true\nHEALTHCHECK CMD true\n")
	var ae *sdk.APIError
	if !errorsAs(err, &ae) || ae.StatusCode != 400 || ae.Code != sdk.CodeDockerfileUnsupported || !strings.Contains(ae.Message, "line 3: HEALTHCHECK") {
		t.Fatalf("HEALTHCHECK: %v", err)
	}

	// The JSON form: the same steps, files inline.
	var jsonEvents []sdk.BuildEvent
	img, err = c.BuildImageSteps(ctx, sdk.BuildRequest{Name: "fromjson", From: "debian", Files: map[string][]byte{"hello.txt": []byte("json\n")},
		Steps: []sdk.BuildStep{{Env: map[string]string{"WHO": "$literal"}}, {Copy: &sdk.BuildCopy{Src: []string{"hello.txt"}, Dest: "/opt/"}}, {Run: "cat /opt/hello.txt > /opt/copy.txt\necho \"$WHO\" >> /opt/copy.txt"}}},
		func(ev sdk.BuildEvent) { jsonEvents = append(jsonEvents, ev) })
	if err != nil {
		t.Fatalf("JSON build: %v %+v", err, jsonEvents)
	}
	d.create(sdk.CreateSandboxRequest{Name: "fromjson", Image: img.Name})
	if got := d.exec("fromjson", "cat /opt/copy.txt"); got != "json\n$literal" {
		t.Fatalf("JSON-built image has %q", got)
	}
}

func errorsAs(err error, ae **sdk.APIError) bool {
	e, ok := err.(*sdk.APIError)
	if ok {
		*ae = e
	}
	return ok
}

var debianImage struct {
	once sync.Once
	path string
	err  error
}

// debianImageTar is the debian image tarball: SBX_DEBIAN_IMAGE, else built
// (or taken from the cache) by scripts/build-debian-image.sh.
func debianImageTar(t *testing.T) string {
	t.Helper()
	debianImage.once.Do(func() {
		if p := os.Getenv("SBX_DEBIAN_IMAGE"); p != "" {
			debianImage.path = p
			return
		}
		start := time.Now()
		cmd := exec.Command("../scripts/build-debian-image.sh")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			debianImage.err = fmt.Errorf("build the debian image: %v", err)
			return
		}
		debianImage.path = strings.TrimSpace(out.String())
		if d := time.Since(start); d > 5*time.Second {
			fmt.Fprintf(os.Stderr, "built the debian image in %s\n", d.Round(time.Second))
		}
	})
	if debianImage.err != nil {
		t.Fatal(debianImage.err)
	}
	return debianImage.path
}
