// Package build turns a Dockerfile (or the same steps as JSON) into an sbx
// image. Every RUN runs in a real build sandbox made through the sandbox
// Manager, with the default egress policy and limits; every RUN, COPY and
// ADD becomes one layer (the build sandbox's upper directory, committed as
// a snapshot layer is). ENV, ARG, WORKDIR, USER, ENTRYPOINT, CMD and LABEL
// change the image's config only.
//
// The parsing is buildkit's (frontend/dockerfile/parser and instructions,
// with its shell-word expansion); this package only plans and runs.
//
// Cache: each filesystem step's result is an image record named
// build-cache/<key>, where key hashes the building team (caches are per
// team), the parent's key, the step with its words expanded, the config it
// runs under and, for COPY/ADD, the content of its sources. A step whose
// record, of the building team, exists is not run again.
package build

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Plan is a parsed build: the base image and the steps on top of it, every
// word expanded.
type Plan struct {
	From  string
	Steps []Step
	// SetsMain: the Dockerfile has an ENTRYPOINT or CMD of its own.
	SetsMain bool
	// Pull is set (to From) when sbx does not have the FROM image: Build
	// pulls it from its registry, then plans again over its config.
	Pull string
}

// Step is one instruction after FROM.
type Step struct {
	Line int    // in the Dockerfile
	Text string // the instruction as written, for progress
	// Run is the command of a RUN step (argv), nil otherwise.
	Run []string
	// Copy is the sources and destination of a COPY or ADD step.
	Copy *CopySpec
	// RunEnv is what a RUN step's command sees: the config's env and the ARGs.
	RunEnv map[string]string
	// Config is the image's config after the step.
	Config store.ImageConfig
}

// CopySpec is a COPY or ADD from the build context.
type CopySpec struct {
	Srcs   []string // paths or globs in the context
	Dest   string   // absolute
	Unpack bool     // ADD: a local tar archive is extracted
}

// fsStep reports whether the step changes files (and so makes a layer).
func (s Step) fsStep() bool { return s.Run != nil || s.Copy != nil }

// errAt is a 400 naming the instruction and its line.
func errAt(code wire.Code, line int, format string, args ...any) error {
	return errdefs.Invalid(code, "line %d: %s", line, fmt.Sprintf(format, args...))
}

// ParseDockerfile plans a build from a Dockerfile. base is the config of
// the FROM image (its env, workdir, user…), looked up by name.
func ParseDockerfile(dockerfile []byte, buildArgs map[string]string, base func(name string) (store.ImageConfig, error)) (*Plan, error) {
	res, err := parser.Parse(bytes.NewReader(dockerfile))
	if err != nil {
		return nil, errdefs.Invalid(wire.CodeDockerfileInvalid, "the Dockerfile does not parse: %v", err)
	}
	for _, n := range res.AST.Children {
		// Flags buildkit would accept but sbx does not run are refused by name.
		if strings.EqualFold(n.Value, "run") {
			for _, f := range n.Flags {
				return nil, errAt(wire.CodeDockerfileUnsupported, n.StartLine, "RUN %s is not supported", strings.SplitN(f, "=", 2)[0])
			}
		}
	}
	stages, metaArgs, err := instructions.Parse(res.AST, nil)
	if err != nil {
		return nil, errdefs.Invalid(wire.CodeDockerfileInvalid, "the Dockerfile does not parse: %v", err)
	}
	if len(stages) == 0 {
		return nil, errdefs.Invalid(wire.CodeDockerfileInvalid, "the Dockerfile has no FROM")
	}
	if len(stages) > 1 {
		return nil, errAt(wire.CodeDockerfileUnsupported, line(stages[1].Location), "FROM: multi-stage builds are not supported")
	}
	args := map[string]string{} // ARG values in scope
	lex := shell.NewLex(res.EscapeToken)
	for _, a := range metaArgs { // ARGs before FROM serve FROM only
		for _, kv := range a.Args {
			if v, ok := buildArgs[kv.Key]; ok {
				args[kv.Key] = v
			} else if kv.Value != nil {
				args[kv.Key] = *kv.Value
			}
		}
	}
	st := stages[0]
	from, _, err := lex.ProcessWord(st.BaseName, envGetter(args))
	if err != nil {
		return nil, errAt(wire.CodeDockerfileInvalid, line(st.Location), "FROM: %v", err)
	}
	if st.Platform != "" {
		return nil, errAt(wire.CodeDockerfileUnsupported, line(st.Location), "FROM --platform is not supported")
	}
	baseConfig, err := base(from)
	if err != nil {
		return nil, err
	}
	p := &Plan{From: from}
	cfg := baseConfig
	cfg.Env, cfg.Labels = slices.Clone(cfg.Env), cloneMap(cfg.Labels)
	if cfg.WorkingDir == "" {
		cfg.WorkingDir = "/"
	}
	args = map[string]string{} // a stage starts without the global ARGs
	cmdSet := false            // a CMD in this Dockerfile so far
	for _, cmd := range st.Commands {
		ln := line(cmd.Location())
		env := func() shell.EnvGetter {
			m := map[string]string{}
			for k, v := range args {
				m[k] = v
			}
			for _, kv := range cfg.Env {
				k, v, _ := strings.Cut(kv, "=")
				m[k] = v
			}
			return envGetter(m)
		}
		if ex, ok := cmd.(instructions.SupportsSingleWordExpansion); ok {
			if err := ex.Expand(func(w string) (string, error) {
				out, _, err := lex.ProcessWord(w, env())
				return out, err
			}); err != nil {
				return nil, errAt(wire.CodeDockerfileInvalid, ln, "%s: %v", strings.ToUpper(cmd.Name()), err)
			}
		}
		step := Step{Line: ln, Text: strings.TrimSpace(cmd.(fmt.Stringer).String())}
		switch c := cmd.(type) {
		case *instructions.RunCommand:
			if len(c.Files) > 0 {
				return nil, errAt(wire.CodeDockerfileUnsupported, ln, "RUN with a heredoc is not supported")
			}
			step.Run = cmdLine(c.ShellDependantCmdLine)
		case *instructions.CopyCommand:
			switch {
			case c.From != "":
				return nil, errAt(wire.CodeDockerfileUnsupported, ln, "COPY --from is not supported (no multi-stage builds)")
			case c.Chown != "" || c.Chmod != "" || c.Link || c.Parents || len(c.ExcludePatterns) > 0:
				return nil, errAt(wire.CodeDockerfileUnsupported, ln, "COPY flags (--chown, --chmod, --link, --parents, --exclude) are not supported")
			case len(c.SourceContents) > 0:
				return nil, errAt(wire.CodeDockerfileUnsupported, ln, "COPY with a heredoc is not supported")
			}
			step.Copy = &CopySpec{Srcs: c.SourcePaths, Dest: absDest(c.DestPath, cfg.WorkingDir)}
		case *instructions.AddCommand:
			switch {
			case c.Chown != "" || c.Chmod != "" || c.Link || c.Checksum != "" || c.KeepGitDir != nil || len(c.ExcludePatterns) > 0:
				return nil, errAt(wire.CodeDockerfileUnsupported, ln, "ADD flags (--chown, --chmod, --link, --checksum, --keep-git-dir, --exclude) are not supported")
			case len(c.SourceContents) > 0:
				return nil, errAt(wire.CodeDockerfileUnsupported, ln, "ADD with a heredoc is not supported")
			}
			for _, s := range c.SourcePaths {
				if strings.Contains(s, "://") || strings.HasPrefix(s, "git@") {
					return nil, errAt(wire.CodeDockerfileUnsupported, ln, "ADD from a URL (%s) is not supported: download it in a RUN step", s)
				}
			}
			step.Copy = &CopySpec{Srcs: c.SourcePaths, Dest: absDest(c.DestPath, cfg.WorkingDir), Unpack: c.Unpack == nil || *c.Unpack}
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				cfg.Env = setEnv(cfg.Env, kv.Key, kv.Value)
			}
		case *instructions.ArgCommand:
			for _, kv := range c.Args {
				if v, ok := buildArgs[kv.Key]; ok {
					args[kv.Key] = v
				} else if kv.Value != nil {
					args[kv.Key] = *kv.Value
				} else {
					args[kv.Key] = ""
				}
			}
		case *instructions.WorkdirCommand:
			cfg.WorkingDir = absDest(c.Path, cfg.WorkingDir)
		case *instructions.UserCommand:
			cfg.User = c.User
		case *instructions.EntrypointCommand:
			cfg.Entrypoint = cmdLine(c.ShellDependantCmdLine)
			if !cmdSet { // as docker: a new ENTRYPOINT drops the base image's CMD
				cfg.Cmd = nil
			}
			p.SetsMain = true
		case *instructions.CmdCommand:
			cfg.Cmd = cmdLine(c.ShellDependantCmdLine)
			cmdSet, p.SetsMain = true, true
		case *instructions.LabelCommand:
			cfg.Labels = cloneMap(cfg.Labels)
			for _, kv := range c.Labels {
				cfg.Labels[kv.Key] = kv.Value
			}
		default:
			return nil, errAt(wire.CodeDockerfileUnsupported, ln, "%s is not supported", strings.ToUpper(cmd.Name()))
		}
		if step.Run != nil {
			step.RunEnv = map[string]string{}
			for k, v := range args {
				step.RunEnv[k] = v
			}
			for _, kv := range cfg.Env {
				k, v, _ := strings.Cut(kv, "=")
				step.RunEnv[k] = v
			}
		}
		cfg.Env = slices.Clone(cfg.Env)
		step.Config = cfg
		p.Steps = append(p.Steps, step)
	}
	return p, nil
}

func line(loc []parser.Range) int {
	if len(loc) == 0 {
		return 0
	}
	return loc[0].Start.Line
}

// cmdLine is the argv of RUN, ENTRYPOINT or CMD: the shell form runs in sh.
func cmdLine(c instructions.ShellDependantCmdLine) []string {
	if c.PrependShell {
		return []string{"/bin/sh", "-c", strings.Join(c.CmdLine, " ")}
	}
	return slices.Clone(c.CmdLine)
}

// absDest resolves a destination against the working directory, keeping a
// trailing slash (it means "into this directory").
func absDest(p, workdir string) string {
	dir := strings.HasSuffix(p, "/") || p == "." || strings.HasSuffix(p, "/.")
	if !path.IsAbs(p) {
		p = path.Join(workdir, p)
	}
	p = path.Clean(p)
	if dir && p != "/" {
		p += "/"
	}
	return p
}

func setEnv(env []string, k, v string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	return append(out, k+"="+v)
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// envGetter serves shell-word expansion from a map.
type envGetter map[string]string

func (e envGetter) Get(k string) (string, bool) { v, ok := e[k]; return v, ok }
func (e envGetter) Keys() []string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
