package build

import (
	"path"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// FuzzParseDockerfile feeds tenant Dockerfiles to the planner. Whatever the
// input, it never panics, refuses only with a 400 whose code says why, and a
// plan it accepts has absolute, clean destinations and working directories
// (a COPY can never be planned outside the image's root).
//
//	go test -run '^$' -fuzz '^FuzzParseDockerfile$' -fuzztime 1m ./internal/build/
func FuzzParseDockerfile(f *testing.F) {
	for _, s := range []string{
		"FROM base\nRUN echo hi\n",
		"ARG IMG=base\nFROM $IMG\nWORKDIR ../../etc\nCOPY a ../../x\n",
		"FROM base\nCOPY --from=x a b\n",
		"FROM base\nADD http://h/x /y\n",
		"FROM base\nRUN <<EOF\nx\nEOF\n",
		"FROM base\nENV A=$B${C:-d}\nWORKDIR $A/..\nADD x.tar /\n",
		"FROM base AS a\nFROM a\n",
		"# escape=`\nFROM base\nRUN a `\n b\n",
		"FROM base\nUSER 0:0\nENTRYPOINT [\"/x\"]\nCMD y\nLABEL a=b\n",
		"FROM base\nHEALTHCHECK CMD x\n",
		"FROM\n", "", "\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, df string) {
		p, err := ParseDockerfile([]byte(df), map[string]string{"IMG": "base"}, baseConfig)
		if err != nil {
			if !errdefs.Is(err, errdefs.KindInvalid) {
				t.Fatalf("refusal is not a 400: %v", err)
			}
			switch code := errdefs.CodeOf(err); code {
			case wire.CodeDockerfileInvalid, wire.CodeDockerfileUnsupported, wire.CodeImageNotFound:
			default:
				t.Fatalf("refusal has code %q: %v", code, err)
			}
			return
		}
		if p.From != "base" {
			t.Fatalf("planned FROM %q; only base exists", p.From)
		}
		for _, st := range p.Steps {
			if st.Copy != nil && !cleanAbs(st.Copy.Dest) {
				t.Fatalf("line %d: COPY destination %q is not absolute and clean", st.Line, st.Copy.Dest)
			}
			if wd := st.Config.WorkingDir; !cleanAbs(wd) {
				t.Fatalf("line %d: working directory %q is not absolute and clean", st.Line, wd)
			}
		}
	})
}

// cleanAbs: absolute, no "..", a trailing slash allowed (it means "into").
func cleanAbs(p string) bool {
	q := strings.TrimSuffix(p, "/")
	if q == "" {
		return p == "/"
	}
	return path.IsAbs(q) && path.Clean(q) == q
}
