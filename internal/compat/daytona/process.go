package daytona

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// execMargin is how long past a command's timeout the layer waits for the
// agent, which kills the command at the timeout itself.
const execMargin = 10 * time.Second

// execute serves POST /process/execute: Daytona runs the command under a
// shell and answers its combined output as "result".
func (h *Handler) execute(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Command string            `json:"command"`
		Cwd     string            `json:"cwd"`
		Envs    map[string]string `json:"envs"`
		Timeout float64           `json:"timeout"` // seconds; 0: none
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Command == "" {
		return invalid(wire.CodeInvalidCommand, "command is required")
	}
	if in.Timeout < 0 {
		return invalid(wire.CodeInvalidParameter, "timeout must not be negative")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	req := wire.ExecRequest{Shell: in.Command, Cwd: in.Cwd, Env: in.Envs, TimeoutSeconds: in.Timeout}
	res, err := callWithin[wire.ExecResult](r.Context(), in.Timeout, c, agentapi.Exec, req)
	if err != nil {
		return err
	}
	if res.TimedOut { // the SDK raises DaytonaProcessExecutionTimeoutError
		return withStatus(http.StatusRequestTimeout, errdefs.Unavailable(wire.CodeProcessExecTimeout, "the command did not finish within its timeout of %gs and was killed", in.Timeout))
	}
	writeJSON(w, http.StatusOK, map[string]any{"exitCode": res.ExitCode, "result": res.Stdout + res.Stderr})
	return nil
}

// codeRun serves POST /process/code-run: the code run once as a program
// in the sandbox's language (the SDK sends the code-toolbox-language
// label's value), as Daytona does: its exit code, its output, argv as the
// program's arguments. The program is read from stdin ("-"), so any size
// fits and nothing is written into the sandbox.
func (h *Handler) codeRun(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Code     string            `json:"code"`
		Language string            `json:"language"`
		Argv     []string          `json:"argv"`
		Envs     map[string]string `json:"envs"`
		Timeout  float64           `json:"timeout"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Timeout < 0 {
		return invalid(wire.CodeInvalidParameter, "timeout must not be negative")
	}
	lang := in.Language
	if lang == "" {
		lang = "python"
	}
	runners, ok := codeRunners[lang]
	if !ok {
		return invalid(wire.CodeUnknownLanguage, "codeRun has no language %q on sbx: use python, javascript or typescript", lang)
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	var res wire.ExecResult
	for _, runner := range runners {
		req := wire.ExecRequest{Cmd: append(append(slices.Clone(runner), "-"), in.Argv...), Stdin: in.Code, Env: in.Envs, TimeoutSeconds: in.Timeout}
		res, err = callWithin[wire.ExecResult](r.Context(), in.Timeout, c, agentapi.Exec, req)
		if errdefs.CodeOf(err) != wire.CodeCommandNotFound {
			break
		}
	}
	if errdefs.CodeOf(err) == wire.CodeCommandNotFound {
		var names []string
		for _, r := range runners {
			names = append(names, r[0])
		}
		return invalid(wire.CodeLanguageNotAvailable, "codeRun in %s needs %s in the sandbox's image, which has none of them (sbx's python image has python3 and node, no TypeScript runner)",
			lang, strings.Join(names, " or "))
	}
	if err != nil {
		return err
	}
	exit, out := res.ExitCode, res.Stdout+res.Stderr
	if res.TimedOut {
		exit = -1
	}
	writeJSON(w, http.StatusOK, map[string]any{"exitCode": exit, "result": out, "artifacts": map[string]any{"stdout": out, "charts": []any{}}})
	return nil
}

// codeRunners are the programs that run a language's code read from stdin,
// first found wins.
var codeRunners = map[string][][]string{
	"python":     {{"python3"}},
	"javascript": {{"node"}},
	"typescript": {{"tsx"}, {"ts-node"}},
}

func (h *Handler) workDir(w http.ResponseWriter, r *http.Request) error {
	_, sb, err := h.agentFor(r)
	if err != nil {
		return err
	}
	dir := sb.Spec.Workdir
	if dir == "" {
		dir = "/"
	}
	writeJSON(w, http.StatusOK, map[string]string{"dir": dir})
	return nil
}

func (h *Handler) homeDir(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	u, err := agentapi.Call[wire.User](r.Context(), c, agentapi.LookupUser, agentapi.Params{}, nil) // whom the toolbox runs commands as
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"dir": u.Home})
	return nil
}

// callWithin is agentapi.Call giving up timeout seconds (plus execMargin
// for the agent to answer) later when timeout is above 0.
func callWithin[Out any](ctx context.Context, timeout float64, c *agentapi.Client, route agentapi.Route, in any) (Out, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeout*float64(time.Second))+execMargin)
		defer cancel()
	}
	return agentapi.Call[Out](ctx, c, route, agentapi.Params{}, in)
}
