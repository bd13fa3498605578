package build

import (
	"slices"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

func baseConfig(name string) (store.ImageConfig, error) {
	if name != "base" {
		return store.ImageConfig{}, errdefs.Invalid(wire.CodeImageNotFound, "no %s", name)
	}
	return store.ImageConfig{Env: []string{"PATH=/bin"}}, nil
}

func TestPlanExpandsAndTracksConfig(t *testing.T) {
	df := `ARG IMG=base
FROM $IMG
ARG GREETING=hi
ENV APP=/srv/app HOME=/root
WORKDIR $APP
RUN echo $GREETING > greeting
COPY a.txt b/ ./
ADD bundle.tar.gz /opt/
USER 1000
ENTRYPOINT ["/bin/app", "--serve"]
CMD serve --port 80
LABEL team="a b"
`
	p, err := ParseDockerfile([]byte(df), map[string]string{"GREETING": "hello"}, baseConfig)
	if err != nil {
		t.Fatal(err)
	}
	if p.From != "base" || len(p.Steps) != 10 {
		t.Fatalf("plan: from %q, %d steps", p.From, len(p.Steps))
	}
	run := p.Steps[3]
	if run.Line != 6 || !slices.Equal(run.Run, []string{"/bin/sh", "-c", "echo $GREETING > greeting"}) || run.RunEnv["GREETING"] != "hello" || run.Config.WorkingDir != "/srv/app" {
		t.Fatalf("RUN step: %+v", run)
	}
	cp := p.Steps[4].Copy
	if cp == nil || cp.Dest != "/srv/app/" || !slices.Equal(cp.Srcs, []string{"a.txt", "b/"}) || cp.Unpack {
		t.Fatalf("COPY step: %+v", cp)
	}
	if add := p.Steps[5].Copy; add == nil || add.Dest != "/opt/" || !add.Unpack {
		t.Fatalf("ADD step: %+v", add)
	}
	cfg := p.Steps[9].Config
	if cfg.User != "1000" || !slices.Equal(cfg.Entrypoint, []string{"/bin/app", "--serve"}) || !slices.Equal(cfg.Cmd, []string{"/bin/sh", "-c", "serve --port 80"}) ||
		cfg.Labels["team"] != "a b" || !slices.Contains(cfg.Env, "APP=/srv/app") || !slices.Contains(cfg.Env, "PATH=/bin") {
		t.Fatalf("final config: %+v", cfg)
	}
}

func TestPlanRefusesWhatItCannotRun(t *testing.T) {
	for _, tc := range []struct{ df, want string }{
		{"FROM base\nRUN true\nHEALTHCHECK CMD true\n", "line 3: HEALTHCHECK"},
		{"FROM base\n\nRUN --mount=type=cache,target=/x true\n", "line 3: RUN --mount"},
		{"FROM base\nADD https://example.com/x /x\n", "line 2: ADD from a URL"},
		{"FROM base AS a\nFROM base\n", "line 2: FROM: multi-stage"},
		{"FROM base\nCOPY --from=a /x /y\n", "line 2: COPY --from"},
		{"FROM base\nEXPOSE 80\n", "line 2: EXPOSE"},
	} {
		_, err := ParseDockerfile([]byte(tc.df), nil, baseConfig)
		if errdefs.CodeOf(err) != wire.CodeDockerfileUnsupported || errdefs.KindOf(err) != errdefs.KindInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want DOCKERFILE_UNSUPPORTED naming %q", tc.df, err, tc.want)
		}
	}
	if _, err := ParseDockerfile([]byte("RUN true\n"), nil, baseConfig); errdefs.CodeOf(err) != wire.CodeDockerfileInvalid {
		t.Errorf("no FROM: %v", err)
	}
	if _, err := ParseDockerfile([]byte("FROM nothing\n"), nil, baseConfig); errdefs.CodeOf(err) != wire.CodeImageNotFound {
		t.Errorf("unknown base: %v", err)
	}
}

func TestJSONFormIsTheSameSteps(t *testing.T) {
	df, err := Dockerfile(wire.BuildRequest{From: "base", Steps: []wire.BuildStep{
		{Env: map[string]string{"MSG": "a $literal \"quoted\" value"}},
		{Run: "echo \"$MSG\" > /m\necho two >> /m"},
		{Copy: &wire.BuildCopy{Src: []string{"app"}, Dest: "/srv/app/"}},
		{Workdir: "/srv/app"},
		{Cmd: []string{"python3", "main.py"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseDockerfile(df, nil, baseConfig)
	if err != nil {
		t.Fatalf("%v\n%s", err, df)
	}
	if len(p.Steps) != 5 || p.Steps[1].Line != 3 {
		t.Fatalf("steps: %+v", p.Steps)
	}
	if got := p.Steps[1].RunEnv["MSG"]; got != `a $literal "quoted" value` {
		t.Errorf("env value %q was not taken literally", got)
	}
	if run := p.Steps[1].Run; len(run) != 3 || run[2] != "echo \"$MSG\" > /m\necho two >> /m" {
		t.Errorf("run: %q", run)
	}
	if c := p.Steps[2].Copy; c == nil || c.Dest != "/srv/app/" {
		t.Errorf("copy: %+v", c)
	}
	if cfg := p.Steps[4].Config; cfg.WorkingDir != "/srv/app" || !slices.Equal(cfg.Cmd, []string{"python3", "main.py"}) {
		t.Errorf("config: %+v", cfg)
	}
	if _, err := Dockerfile(wire.BuildRequest{From: "base", Steps: []wire.BuildStep{{Run: "x", User: "u"}}}); errdefs.CodeOf(err) != wire.CodeDockerfileInvalid {
		t.Errorf("a step with two fields: %v", err)
	}
}

func TestPlanEntrypointDropsTheBaseCmd(t *testing.T) {
	base := func(string) (store.ImageConfig, error) {
		return store.ImageConfig{Cmd: []string{"bash"}}, nil
	}
	for _, tc := range []struct {
		df       string
		setsMain bool
		ep, cmd  []string
	}{
		{"FROM debian\nRUN true\n", false, nil, []string{"bash"}},
		{"FROM debian\nENTRYPOINT [\"/app\"]\n", true, []string{"/app"}, nil},
		{"FROM debian\nCMD [\"-v\"]\nENTRYPOINT [\"/app\"]\n", true, []string{"/app"}, []string{"-v"}},
	} {
		p, err := ParseDockerfile([]byte(tc.df), nil, base)
		if err != nil {
			t.Fatal(err)
		}
		cfg := p.Steps[len(p.Steps)-1].Config
		if p.SetsMain != tc.setsMain || !slices.Equal(cfg.Entrypoint, tc.ep) || !slices.Equal(cfg.Cmd, tc.cmd) {
			t.Errorf("%q: setsMain %v, entrypoint %q, cmd %q", tc.df, p.SetsMain, cfg.Entrypoint, cfg.Cmd)
		}
	}
}
