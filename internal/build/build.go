package build

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	gcrname "github.com/google/go-containerregistry/pkg/name"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/dirtar"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Sandboxes is the part of the sandbox Manager a build uses: build
// sandboxes are ordinary sandboxes, so they get the default egress policy,
// limits and tenancy of the caller's context.
type Sandboxes interface {
	Create(ctx context.Context, req wire.CreateSandboxRequest) (*store.Sandbox, error)
	Agent(ctx context.Context, idOrName string) (*agentapi.Client, *store.Sandbox, error)
	CreateSnapshot(ctx context.Context, idOrName string, req wire.CreateSnapshotRequest) (*store.Snapshot, error)
	DeleteSnapshot(ctx context.Context, name string) error
	Delete(ctx context.Context, idOrName string, wait bool) (*store.Sandbox, error)
	// Hold keeps a sandbox from being stopped as idle until release.
	Hold(ctx context.Context, idOrName string) (release func())
}

// Images is the part of the image Manager a build uses.
type Images interface {
	Get(ctx context.Context, name string) (*store.Image, error)
	Record(ctx context.Context, name, source string, layers []string, cfg store.ImageConfig) (*store.Image, error)
	// Pull fetches ref from its registry as the image name.
	Pull(ctx context.Context, ref, name string) (*store.Image, error)
}

// Builder runs builds.
type Builder struct {
	sandboxes Sandboxes
	images    Images
	tmpDir    string // where contexts are unpacked
}

// New returns a Builder that unpacks build contexts under tmpDir.
func New(sandboxes Sandboxes, images Images, tmpDir string) *Builder {
	return &Builder{sandboxes: sandboxes, images: images, tmpDir: tmpDir}
}

// CachePrefix names the image records that hold the build cache.
const CachePrefix = "build-cache/"

const (
	DefaultTimeout = 30 * time.Minute
	MaxTimeout     = 6 * time.Hour
	// MaxContext bounds a build context (the tar stream, uncompressed).
	MaxContext = 1 << 30
	// outputTail is how much of a failed RUN's output the error event repeats.
	outputTail = 8 << 10
)

// Request is one build.
type Request struct {
	Name       string
	Dockerfile []byte
	Context    string // a directory holding the unpacked context; "" for none
	BuildArgs  map[string]string
	NoCache    bool
	Timeout    time.Duration
}

// UnpackContext unpacks a context tar stream (plain or gzip) into a new
// directory under the builder's tmpDir; the caller removes it.
func (b *Builder) UnpackContext(r io.Reader) (string, error) {
	dir, err := b.ContextDir()
	if err != nil {
		return "", err
	}
	lr := &limitedReader{r: r, n: MaxContext}
	if err := dirtar.Extract(lr, dir); err != nil {
		os.RemoveAll(dir)
		var te *dirtar.Error
		switch {
		case lr.over:
			return "", errdefs.TooLarge(wire.CodeBodyTooLarge, "the build context is larger than %d bytes", MaxContext)
		case errors.As(err, &te):
			return "", errdefs.Invalid(wire.CodeBuildContextInvalid, "the build context: %s", te.Error())
		}
		return "", errdefs.Invalid(wire.CodeBuildContextInvalid, "the build context: %v", err)
	}
	return dir, nil
}

// ContextDir makes an empty context directory; the caller removes it.
func (b *Builder) ContextDir() (string, error) {
	if err := os.MkdirAll(b.tmpDir, 0o700); err != nil {
		return "", errdefs.Internal(err, "build: make %s", b.tmpDir)
	}
	dir, err := os.MkdirTemp(b.tmpDir, "build-context-")
	if err != nil {
		return "", errdefs.Internal(err, "build: make a context directory")
	}
	return dir, nil
}

type limitedReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		l.over = true
		return 0, errors.New("build context too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Plan parses req's Dockerfile against the images sbx has; a bad or
// unsupported Dockerfile is a 400 naming the line. A FROM image sbx does
// not have is planned over an empty config and marked for Build to pull.
func (b *Builder) Plan(ctx context.Context, req Request) (*Plan, error) {
	pull := ""
	plan, err := ParseDockerfile(req.Dockerfile, req.BuildArgs, func(name string) (store.ImageConfig, error) {
		img, err := b.images.Get(ctx, name)
		if errdefs.Is(err, errdefs.KindNotFound) {
			if _, perr := gcrname.ParseReference(name); perr != nil {
				return store.ImageConfig{}, errdefs.Invalid(wire.CodeInvalidImageRef, "FROM %s: sbx has no such image (sbx image ls), and it is no registry reference to pull: %v", name, perr)
			}
			pull = name
			return store.ImageConfig{}, nil
		}
		if err != nil {
			return store.ImageConfig{}, err
		}
		return img.Config, nil
	})
	if err != nil {
		return nil, err
	}
	plan.Pull = pull
	return plan, nil
}

// pullBase pulls a FROM image sbx does not have (named by its reference,
// as sbx image pull names it) and plans the build again over its config.
func (b *Builder) pullBase(ctx context.Context, req Request, ref string, emit func(wire.BuildEvent)) (*Plan, error) {
	emit(wire.BuildEvent{Type: "pull", Instruction: "FROM " + ref, Data: "pulling " + ref + " from its registry"})
	img, err := b.images.Pull(ctx, ref, ref)
	if err != nil {
		var e *errdefs.Error
		if errors.As(err, &e) {
			return nil, &errdefs.Error{Kind: e.Kind, Code: e.Code, Message: "FROM " + ref + ": " + e.Message, Err: e.Err}
		}
		return nil, fmt.Errorf("FROM %s: pull: %w", ref, err)
	}
	emit(wire.BuildEvent{Type: "pull", Instruction: "FROM " + ref, Data: fmt.Sprintf("pulled %s (%s, %d layers)", ref, img.ID, len(img.Layers))})
	plan, err := b.Plan(ctx, req)
	if err == nil && plan.Pull != "" { // removed between the pull and now
		return nil, errdefs.Conflict(wire.CodeImageNotFound, "FROM %s: the pulled image was removed during the build", ref)
	}
	return plan, err
}

// Build runs plan and stores the image req.Name, sending progress to emit
// (never an "error" or "done" event: the caller sends those). A failed
// step stores nothing under req.Name.
func (b *Builder) Build(ctx context.Context, req Request, plan *Plan, emit func(wire.BuildEvent)) (*store.Image, error) {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if plan.Pull != "" {
		var err error
		if plan, err = b.pullBase(ctx, req, plan.Pull, emit); err != nil {
			return nil, err
		}
	}
	base, err := b.images.Get(ctx, plan.From)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(b.tmpDir, 0o700); err != nil { // a build without a context made none yet
		return nil, errdefs.Internal(err, "build: make %s", b.tmpDir)
	}
	work, err := os.MkdirTemp(b.tmpDir, "build-work-")
	if err != nil {
		return nil, errdefs.Internal(err, "build: make a work directory")
	}
	defer os.RemoveAll(work)

	parent := base.Name // the image a build sandbox starts from
	layers := base.Layers
	// The cache is per team: the team is the root of every key, so a step
	// another team ran (even team default, whose images every team sees)
	// never names the record this build looks up, and two teams' identical
	// builds write records of different names.
	team := auth.TeamOf(ctx)
	key := "from:" + base.ID + " team:" + team
	total := len(plan.Steps)
	for i, st := range plan.Steps {
		ev := wire.BuildEvent{Type: "step", Step: i + 1, Total: total, Line: st.Line, Instruction: st.Text}
		var payload *copyPayload
		if st.Copy != nil {
			if req.Context == "" {
				return nil, errAt(wire.CodeBuildContextInvalid, st.Line, "COPY/ADD needs a build context, and this build has none")
			}
			if payload, err = preparePayload(req.Context, work, st.Copy, st.Line); err != nil {
				return nil, err
			}
		}
		key = stepKey(key, st, payload)
		if !st.fsStep() {
			emit(ev)
			continue
		}
		cacheName := CachePrefix + key[:32]
		if !req.NoCache {
			if img, err := b.images.Get(ctx, cacheName); err == nil && img.Team == team {
				ev.Cached = true
				emit(ev)
				parent, layers = img.Name, img.Layers
				emit(wire.BuildEvent{Type: "layer", Step: i + 1, Layer: layers[len(layers)-1], Cached: true})
				continue
			}
		}
		emit(ev)
		img, err := b.runStep(ctx, parent, cacheName, st, payload, i+1, emit)
		if err != nil {
			return nil, err
		}
		parent, layers = img.Name, img.Layers
		emit(wire.BuildEvent{Type: "layer", Step: i + 1, Layer: layers[len(layers)-1]})
	}
	cfg := base.Config
	if total > 0 {
		cfg = plan.Steps[total-1].Config
	}
	if !plan.SetsMain && base.Source != store.SourceBuild {
		// A sandbox runs a built image's ENTRYPOINT/CMD as its main process;
		// a pulled base's (often an interactive shell, which would exit and
		// stop the sandbox) is not run from the base, so not from this either.
		cfg.Entrypoint, cfg.Cmd = nil, nil
	}
	return b.images.Record(ctx, req.Name, store.SourceBuild, layers, cfg)
}

// stepKey chains the cache key: the parent's key, the step as expanded, the
// config it runs under and, for a copy, its sources' content.
func stepKey(parent string, st Step, payload *copyPayload) string {
	blob, _ := json.Marshal(struct {
		Parent, Text string
		Run          []string
		RunEnv       map[string]string
		Copy         *CopySpec
		Payload      string
		Config       store.ImageConfig
	}{parent, st.Text, st.Run, st.RunEnv, st.Copy, payloadSum(payload), st.Config})
	sum := sha256.Sum256(blob)
	return hex.EncodeToString(sum[:])
}

func payloadSum(p *copyPayload) string {
	if p == nil {
		return ""
	}
	return p.Sum
}

// runStep runs one RUN, COPY or ADD in a new build sandbox started from
// parent, and stores the result as the cache image cacheName.
func (b *Builder) runStep(ctx context.Context, parent, cacheName string, st Step, payload *copyPayload, n int, emit func(wire.BuildEvent)) (*store.Image, error) {
	// The build's own context may be gone (the caller left); the sandbox
	// and snapshot must still be removed.
	cleanupCtx := context.WithoutCancel(ctx)
	sb, err := b.sandboxes.Create(ctx, wire.CreateSandboxRequest{Image: parent, Workdir: st.Config.WorkingDir,
		Labels: map[string]string{"sbx.build": "true"}, IgnoreImageEntrypoint: true})
	if err != nil {
		return nil, fmt.Errorf("build step %d: start a build sandbox: %w", n, err)
	}
	defer b.sandboxes.Delete(cleanupCtx, sb.ID, true) // gone when the build answers
	defer b.sandboxes.Hold(ctx, sb.ID)()
	client, _, err := b.sandboxes.Agent(ctx, sb.ID)
	if err != nil {
		return nil, err
	}
	if st.Run != nil {
		if err := runCommand(ctx, client, st, n, emit); err != nil {
			return nil, err
		}
	} else if err := putTar(ctx, client, payload, st.Line); err != nil {
		return nil, err
	}
	snapName := "build-" + randHex(8)
	snap, err := b.sandboxes.CreateSnapshot(ctx, sb.ID, wire.CreateSnapshotRequest{Name: snapName})
	if err != nil {
		return nil, fmt.Errorf("build step %d: commit the layer: %w", n, err)
	}
	// The cache record holds the new layer before the snapshot lets go of it.
	img, err := b.images.Record(ctx, cacheName, "build-cache", snap.Spec.Layers, st.Config)
	if derr := b.sandboxes.DeleteSnapshot(cleanupCtx, snapName); derr != nil && err == nil {
		err = derr
	}
	return img, err
}

// runCommand runs a RUN step's command, streaming its output; a non-zero
// exit is a BUILD_FAILED error carrying the exit code and output tail.
func runCommand(ctx context.Context, client *agentapi.Client, st Step, n int, emit func(wire.BuildEvent)) error {
	// A RUN after USER runs as that account (the agent resolves it in the
	// image's /etc/passwd).
	req := wire.ExecRequest{Cmd: st.Run, Env: st.RunEnv, Cwd: st.Config.WorkingDir, User: st.Config.User}
	if dl, ok := ctx.Deadline(); ok {
		req.TimeoutSeconds = time.Until(dl).Seconds()
	}
	body, _ := json.Marshal(req)
	resp, err := agentapi.Open(ctx, client, agentapi.Exec, agentapi.Params{Query: url.Values{"stream": {"true"}}},
		bytes.NewReader(body), "application/json")
	if refused(err) {
		return stepError(n, st, -1, "the agent refused the command: "+err.Error(), "")
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var tail []byte
	rd := agentapi.NewReader(resp.Body, agentapi.MaxLine)
	for {
		line, err := rd.Next()
		if err != nil {
			if ctx.Err() != nil {
				return &errdefs.Error{Kind: errdefs.KindInvalid, Code: wire.CodeBuildFailed, Message: fmt.Sprintf("step %d (line %d): the build timed out", n, st.Line)}
			}
			return stepError(n, st, -1, fmt.Sprintf("the command's output stream broke: %v", err), string(tail))
		}
		var ev wire.ExecEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return stepError(n, st, -1, "the agent sent a bad event", string(tail))
		}
		switch ev.Type {
		case "stdout", "stderr":
			emit(wire.BuildEvent{Type: "output", Step: n, Stream: ev.Type, Data: string(ev.Data)})
			tail = append(tail, ev.Data...)
			if len(tail) > outputTail {
				tail = tail[len(tail)-outputTail:]
			}
		case "exit":
			if ev.ExitCode == 0 && ev.Signal == "" && !ev.TimedOut {
				return nil
			}
			why := fmt.Sprintf("exited with code %d", ev.ExitCode)
			if ev.TimedOut {
				why = "ran past the build's timeout"
			} else if ev.Signal != "" {
				why = "was killed by " + ev.Signal
			}
			return stepError(n, st, ev.ExitCode, why, string(tail))
		case "error":
			msg := "the command failed to start"
			if ev.Error != nil {
				msg = ev.Error.Message
			}
			return stepError(n, st, -1, msg, string(tail))
		}
	}
}

// StepError is a failed step: the API sends its exit code and output in
// the error event.
type StepError struct {
	Err      *errdefs.Error
	ExitCode int
	Output   string
}

func (e *StepError) Error() string { return e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

func stepError(n int, st Step, exit int, why, output string) error {
	return &StepError{Err: &errdefs.Error{Kind: errdefs.KindInvalid, Code: wire.CodeBuildFailed,
		Message: fmt.Sprintf("step %d (line %d) %s: %s", n, st.Line, st.Text, why)}, ExitCode: exit, Output: output}
}

// putTar extracts a COPY/ADD payload in the build sandbox.
func putTar(ctx context.Context, client *agentapi.Client, p *copyPayload, line int) error {
	f, err := os.Open(p.Tar)
	if err != nil {
		return errdefs.Internal(err, "build: open staged copy")
	}
	defer f.Close()
	q := url.Values{"path": {p.Dir}, "parents": {"true"}}
	resp, err := agentapi.Open(ctx, client, agentapi.PutTar, agentapi.Params{Query: q}, f, "application/x-tar")
	if refused(err) {
		return errAt(wire.CodeBuildFailed, line, "copying into %s failed: %s", p.Dir, err.Error())
	}
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// refused reports whether err is the agent's own answer to a call (the
// step's fault) rather than the agent not answering (the sandbox's).
func refused(err error) bool {
	return err != nil && !errdefs.Is(err, errdefs.KindUnavailable)
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
