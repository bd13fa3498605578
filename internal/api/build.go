package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/build"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/image"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Builds is the image builder the API serves (internal/build).
type Builds interface {
	UnpackContext(r io.Reader) (string, error)
	ContextDir() (string, error)
	Plan(ctx context.Context, req build.Request) (*build.Plan, error)
	Build(ctx context.Context, req build.Request, plan *build.Plan, emit func(wire.BuildEvent)) (*store.Image, error)
}

var _ Builds = (*build.Builder)(nil)

// SetBuilder serves image builds with b.
func (s *Server) SetBuilder(b Builds) { s.builds = b }

// codesBuild are the codes a build answers with before its stream starts,
// or in its error event.
var codesBuild = []wire.Code{wire.CodeInvalidImageName, wire.CodeImageNotFound, wire.CodeDockerfileInvalid, wire.CodeDockerfileUnsupported,
	wire.CodeBuildContextInvalid, wire.CodeBuildFailed, wire.CodeInvalidParameter, wire.CodeInvalidTimeout}

const (
	maxDockerfile  = 1 << 20
	buildHeartbeat = 15 * time.Second
)

// buildImage builds from a Dockerfile in a tar context (the body).
func (s *Server) buildImage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req, err := buildRequest(q.Get("name"), q["buildArg"], q.Get("timeoutSeconds"))
	if err != nil {
		return err
	}
	if req.NoCache, err = httpjson.BoolParam(r, "noCache"); err != nil {
		return err
	}
	b, err := s.builder()
	if err != nil {
		return err
	}
	if req.Context, err = b.UnpackContext(r.Body); err != nil {
		return err
	}
	defer os.RemoveAll(req.Context)
	name := q.Get("dockerfile")
	if name == "" {
		name = "Dockerfile"
	}
	if req.Dockerfile, err = readDockerfile(req.Context, name); err != nil {
		return err
	}
	return s.runBuild(w, r, b, req)
}

// buildSteps builds from the JSON form of the steps.
func (s *Server) buildSteps(w http.ResponseWriter, r *http.Request) error {
	var in wire.BuildRequest
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	var args []string
	for k, v := range in.BuildArgs {
		args = append(args, k+"="+v)
	}
	req, err := buildRequest(in.Name, args, "")
	if err != nil {
		return err
	}
	if in.TimeoutSeconds < 0 || time.Duration(in.TimeoutSeconds)*time.Second > build.MaxTimeout {
		return errdefs.Invalid(wire.CodeInvalidTimeout, "timeoutSeconds must be between 0 (default %s) and %d", build.DefaultTimeout, int(build.MaxTimeout/time.Second))
	}
	req.Timeout, req.NoCache = time.Duration(in.TimeoutSeconds)*time.Second, in.NoCache
	if req.Dockerfile, err = build.Dockerfile(in); err != nil {
		return err
	}
	b, err := s.builder()
	if err != nil {
		return err
	}
	if len(in.Files) > 0 {
		dir, err := writeFiles(b, in.Files)
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		req.Context = dir
	}
	return s.runBuild(w, r, b, req)
}

func (s *Server) builder() (Builds, error) {
	if s.builds == nil {
		return nil, errdefs.Unavailable(wire.CodeBuildFailed, "this daemon does not build images")
	}
	return s.builds, nil
}

// buildRequest checks what both forms share.
func buildRequest(name string, args []string, timeout string) (build.Request, error) {
	req := build.Request{Name: name, BuildArgs: map[string]string{}}
	if name == "" {
		return req, errdefs.Invalid(wire.CodeInvalidImageName, "name is required: the image to build")
	}
	if err := image.ValidateName(name); err != nil {
		return req, err
	}
	if strings.HasPrefix(name, build.CachePrefix) {
		return req, errdefs.Invalid(wire.CodeInvalidImageName, "image names under %s hold the build cache", build.CachePrefix)
	}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return req, errdefs.Invalid(wire.CodeInvalidParameter, "build argument %q is not NAME=VALUE", a)
		}
		req.BuildArgs[k] = v
	}
	if timeout != "" {
		d, err := time.ParseDuration(timeout + "s")
		if err != nil || d < 0 || d > build.MaxTimeout {
			return req, errdefs.Invalid(wire.CodeInvalidTimeout, "timeoutSeconds must be a number of seconds up to %d", int(build.MaxTimeout/time.Second))
		}
		req.Timeout = d
	}
	return req, nil
}

// readDockerfile reads the Dockerfile at name in the context, which must be
// a regular file (not a link out of the context).
func readDockerfile(ctxDir, name string) ([]byte, error) {
	clean := path.Clean("/" + name)
	p := filepath.Join(ctxDir, filepath.FromSlash(clean))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, errdefs.Invalid(wire.CodeDockerfileInvalid, "the build context has no Dockerfile at %s", strings.TrimPrefix(clean, "/"))
	}
	if fi.Size() > maxDockerfile {
		return nil, errdefs.Invalid(wire.CodeDockerfileInvalid, "the Dockerfile is larger than %d bytes", maxDockerfile)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, errdefs.Internal(err, "read the Dockerfile")
	}
	return b, nil
}

// writeFiles makes a context directory of the JSON form's files.
func writeFiles(b Builds, files map[string][]byte) (string, error) {
	dir, err := b.ContextDir()
	if err != nil {
		return "", err
	}
	for name, data := range files {
		clean := path.Clean("/" + name)
		if clean == "/" || strings.ContainsRune(name, 0) {
			os.RemoveAll(dir)
			return "", errdefs.Invalid(wire.CodeBuildContextInvalid, "files: %q is not a file path", name)
		}
		p := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, data, 0o644)
		}
		if err != nil {
			os.RemoveAll(dir)
			return "", errdefs.Invalid(wire.CodeBuildContextInvalid, "files: %s: %v", name, err)
		}
	}
	return dir, nil
}

// runBuild plans (a bad Dockerfile is a 400 before anything runs), then
// streams the build's progress as NDJSON, ending with "done" or "error".
func (s *Server) runBuild(w http.ResponseWriter, r *http.Request, b Builds, req build.Request) error {
	plan, err := b.Plan(r.Context(), req)
	if err != nil {
		return err
	}
	out := agentapi.NewWriter(w)
	// Events come from the build; heartbeats fill long silences (a quiet
	// RUN) as in every stream of the API, so proxies keep the connection.
	var mu sync.Mutex
	send := func(ev wire.BuildEvent) {
		mu.Lock()
		defer mu.Unlock()
		out.Send(ev)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-stopped }() // nothing writes after the handler returns
	go func() {
		defer close(stopped)
		t := time.NewTicker(buildHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				send(wire.BuildEvent{Type: "heartbeat"})
			}
		}
	}()
	img, err := b.Build(r.Context(), req, plan, send)
	if err != nil {
		ev := wire.BuildEvent{Type: "error", Error: &wire.ErrorBody{Code: errdefs.CodeOf(err), Message: err.Error()}}
		var se *build.StepError
		if errors.As(err, &se) {
			ev.ExitCode, ev.Output = se.ExitCode, se.Output
		}
		var e *errdefs.Error
		if errors.As(err, &e) {
			ev.Error.Message = e.Message
		}
		if ev.Error.Code == "" || errdefs.KindOf(err) == errdefs.KindInternal {
			ev.Error.Code = wire.CodeBuildFailed
		}
		send(ev)
		return nil
	}
	api := imageToAPI(img)
	send(wire.BuildEvent{Type: "done", Image: &api})
	return nil
}
