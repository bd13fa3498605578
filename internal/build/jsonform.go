package build

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Dockerfile writes the JSON form of a build as a Dockerfile, one line per
// step (line N+1 is step N), so both forms take one path. Values are
// written so that nothing in them is expanded or split: commands and lists
// in JSON (exec) form, other words double-quoted with $ and \ escaped.
func Dockerfile(req wire.BuildRequest) ([]byte, error) {
	if req.From == "" {
		return nil, errdefs.Invalid(wire.CodeDockerfileInvalid, "from is required: the image to build on")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", req.From)
	for i, s := range req.Steps {
		n := 0
		add := func(format string, args ...any) {
			n++
			if n == 1 {
				fmt.Fprintf(&b, format+"\n", args...)
			}
		}
		if s.Run != "" {
			add("RUN %s", jsonList([]string{"/bin/sh", "-c", s.Run}))
		}
		if s.Copy != nil {
			if len(s.Copy.Src) == 0 || s.Copy.Dest == "" {
				return nil, errdefs.Invalid(wire.CodeDockerfileInvalid, "step %d: copy needs src and dest", i+1)
			}
			add("COPY %s", jsonList(append(slices.Clone(s.Copy.Src), s.Copy.Dest)))
		}
		if len(s.Env) > 0 {
			add("ENV %s", pairs(s.Env))
		}
		if s.Workdir != "" {
			add("WORKDIR %s", quote(s.Workdir))
		}
		if s.User != "" {
			add("USER %s", quote(s.User))
		}
		if len(s.Entrypoint) > 0 {
			add("ENTRYPOINT %s", jsonList(s.Entrypoint))
		}
		if len(s.Cmd) > 0 {
			add("CMD %s", jsonList(s.Cmd))
		}
		if len(s.Labels) > 0 {
			add("LABEL %s", pairs(s.Labels))
		}
		if n != 1 {
			return nil, errdefs.Invalid(wire.CodeDockerfileInvalid, "step %d must set exactly one of run, copy, env, workdir, user, entrypoint, cmd, labels (it sets %d)", i+1, n)
		}
	}
	return []byte(b.String()), nil
}

func jsonList(v []string) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// quote makes one literal word: double quotes, with \, " and $ escaped.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func pairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, quote(k)+"="+quote(m[k]))
	}
	return strings.Join(parts, " ")
}
