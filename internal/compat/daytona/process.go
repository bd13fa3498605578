package daytona

import (
	"context"
	"net/http"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
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
		return invalid(sdk.CodeInvalidCommand, "command is required")
	}
	if in.Timeout < 0 {
		return invalid(sdk.CodeInvalidParameter, "timeout must not be negative")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	var res sdk.ExecResult
	req := sdk.ExecRequest{Shell: in.Command, Cwd: in.Cwd, Env: in.Envs, TimeoutSeconds: in.Timeout}
	if err := callWithin(r.Context(), in.Timeout, c, agentapi.Exec, req, &res); err != nil {
		return err
	}
	if res.TimedOut { // the SDK raises DaytonaProcessExecutionTimeoutError
		return withStatus(http.StatusRequestTimeout, errdefs.Unavailable(sdk.CodeProcessExecTimeout, "the command did not finish within its timeout of %gs and was killed", in.Timeout))
	}
	writeJSON(w, http.StatusOK, map[string]any{"exitCode": res.ExitCode, "result": res.Stdout + res.Stderr})
	return nil
}

// codeRun serves POST /process/code-run: a stateless run in the sandbox's
// language (the SDK sends the code-toolbox-language label's value).
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
	if len(in.Argv) > 0 {
		return invalid(sdk.CodeFeatureUnsupported, "argv is not supported by codeRun on sbx")
	}
	if in.Timeout < 0 {
		return invalid(sdk.CodeInvalidParameter, "timeout must not be negative")
	}
	lang := in.Language
	if lang == "" {
		lang = "python"
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	var res sdk.RunResult
	req := sdk.RunRequest{Language: lang, Code: in.Code, Env: in.Envs, TimeoutSeconds: in.Timeout}
	if err := callWithin(r.Context(), in.Timeout, c, agentapi.Run, req, &res); err != nil {
		return err
	}
	exit, out := 0, res.Stdout+res.Stderr
	if res.Error != nil {
		exit = 1
		if res.Stderr == "" && res.Error.Traceback != "" {
			out += res.Error.Traceback
		}
	}
	if res.TimedOut {
		exit = -1
	}
	writeJSON(w, http.StatusOK, map[string]any{"exitCode": exit, "result": out, "artifacts": map[string]any{"stdout": out, "charts": []any{}}})
	return nil
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
	if _, _, err := h.agentFor(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"dir": "/root"}) // the toolbox runs as root
	return nil
}

// callWithin calls route with in, as call does, giving up timeout seconds
// (plus execMargin for the agent to answer) later when timeout is above 0.
func callWithin(ctx context.Context, timeout float64, c *agentapi.Client, route agentapi.Route, in, out any) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeout*float64(time.Second))+execMargin)
		defer cancel()
	}
	return call(ctx, c, route, route.Path, nil, in, out)
}
