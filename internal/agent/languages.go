package agent

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// The driver programs are compiled into the agent and handed to the
// interpreter on its command line, so nothing is written into the sandbox
// and an image needs nothing but the interpreter itself.
var (
	//go:embed drivers/python.py
	pythonDriver string
	//go:embed drivers/node.js
	nodeDriver string
)

// language says how to run code in one language. A language with a driver
// can hold contexts; the others only run stateless, one process per run.
type language struct {
	name     string
	binaries []string // looked up in PATH, first found wins
	// driver returns the argv of a long-lived interpreter speaking the frame
	// protocol; nil for a stateless-only language.
	driver func(bin string) []string
	// bashLines: requests are command lines on stdin rather than JSON on fd 3.
	bashLines bool
	// once returns the argv that runs code once, for stateless-only languages.
	once func(bin, code string) []string
	env  []string // added to the interpreter's environment unless set
}

var languages = map[string]*language{
	"python": {
		name: "python", binaries: []string{"python3"},
		driver: func(bin string) []string { return []string{bin, "-u", "-c", pythonDriver} },
		// Headless plotting; subprocesses inherit it too, which is right.
		env: []string{"MPLBACKEND=Agg"},
	},
	"javascript": {
		name: "javascript", binaries: []string{"node", "nodejs"},
		// --expose-internals: the driver uses the REPL's top-level await rewrite.
		driver: func(bin string) []string { return []string{bin, "--expose-internals", "-e", nodeDriver} },
	},
	"bash": {
		name: "bash", binaries: []string{"bash"},
		// Interactive, so that SIGINT abandons the command line being run
		// and returns to reading the next one, as at a terminal.
		driver:    func(bin string) []string { return []string{bin, "--noprofile", "--norc", "--noediting", "-i"} },
		bashLines: true,
		once:      func(bin, code string) []string { return []string{bin, "-c", code} },
	},
	"sh":   {name: "sh", binaries: []string{"sh"}, once: func(bin, code string) []string { return []string{bin, "-c", code} }},
	"ruby": {name: "ruby", binaries: []string{"ruby"}, once: func(bin, code string) []string { return []string{bin, "-e", code} }},
	"perl": {name: "perl", binaries: []string{"perl"}, once: func(bin, code string) []string { return []string{bin, "-e", code} }},
}

func languageNames(stateful bool) string {
	var names []string
	for n, l := range languages {
		if !stateful || l.driver != nil {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// lookupLanguage validates a language name and finds its interpreter.
func lookupLanguage(name string, stateful bool, dir string, env []string) (*language, string, error) {
	l := languages[name]
	if l == nil {
		what := "a run"
		if stateful {
			what = "a context"
		}
		return nil, "", errdefs.Invalid(wire.CodeUnknownLanguage, "unknown language %q for %s: use one of %s", name, what, languageNames(stateful))
	}
	if stateful && l.driver == nil {
		return nil, "", errdefs.Invalid(wire.CodeLanguageStatelessOnly,
			"%s has no stateful driver, so it cannot hold a context: run it statelessly with POST /v1/sandboxes/{id}/run, or create a context in one of %s",
			name, languageNames(true))
	}
	for _, b := range l.binaries {
		if p, err := lookPath(b, dir, env); err == nil {
			return l, p, nil
		}
	}
	return nil, "", errdefs.Invalid(wire.CodeLanguageNotAvailable,
		"%s needs %s, which is not installed in this sandbox's image (scripts/build-python-image.sh builds an image with python3 and node)",
		name, strings.Join(l.binaries, " or "))
}

// bashRunLine is the command line that runs code in a bash context and then
// reports its status on fd 4. The code travels inside an ANSI-C quoted
// string, so no byte of it can end the line early or reach the parser
// unquoted; eval at top level keeps declare and cd in the shell itself.
// env becomes assignments in front of eval, which bash (outside POSIX mode)
// exports for that command only. Names must be checked with bashName.
func bashRunLine(seq int64, code string, env map[string]string) string {
	var b strings.Builder
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s ", k, ansiCQuote(env[k]))
	}
	fmt.Fprintf(&b, "eval %s </dev/null; builtin printf '{\"type\":\"done\",\"seq\":%d,\"exitCode\":%%d}\\n' \"$?\" >&4\n",
		ansiCQuote(code), seq)
	return b.String()
}

// bashName reports whether k can be a bash variable name.
func bashName(k string) bool {
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return k != ""
}

// bashInterruptedLine reports run seq as interrupted. SIGINT makes an
// interactive bash drop the rest of the line it runs, the status report
// included, and read on: this is the line it reads next.
func bashInterruptedLine(seq int64) string {
	return fmt.Sprintf("builtin printf '{\"type\":\"done\",\"seq\":%d,\"exitCode\":130}\\n' >&4\n", seq)
}

// bashSetupLine quiets the prompts and history and reports readiness. An
// interactive bash ignores SIGTERM; the trap lets the agent's shutdown end it
// without waiting for the grace period.
const bashSetupLine = `PS1=; PS2=; PS0=; PROMPT_COMMAND=; unset HISTFILE; set +o history; set +m; trap 'exit 143' TERM; builtin printf '{"type":"ready"}\n' >&4` + "\n"

// ansiCQuote quotes s as a bash $'…' string that holds exactly its bytes
// (NUL aside, which bash strings cannot hold).
func ansiCQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 3)
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\x%02x", c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
