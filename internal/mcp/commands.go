package mcp

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// RunInput is command_run's input.
type RunInput struct {
	Target
	wire.ExecRequest
	MaxBytes int `json:"maxBytes,omitempty" jsonschema:"byte budget of stdout and of stderr each; default 20000"`
}

var execDescs = map[string]string{
	"cmd":            "argv to run, e.g. [\"ls\", \"-la\"]; exactly one of cmd and shell",
	"shell":          "a command line run under /bin/sh -c, e.g. \"cd src && make test\"",
	"cwd":            "working directory; default the sandbox's workdir",
	"env":            "extra environment variables",
	"stdin":          "text fed to the command's stdin",
	"timeoutSeconds": "kill the command after this many seconds; keep it under about 50 (a client gives up on a call after 60 s): longer work goes to process_start",
	"user":           "run as this account (name or uid[:gid]); default root",
}

// ProcessInput names a background process.
type ProcessInput struct {
	Target
	Process string `json:"process" jsonschema:"the process id process_start returned"`
}

// StartInput is process_start's input.
type StartInput struct {
	Target
	wire.StartProcessRequest
}

// OutputInput is process_output's input.
type OutputInput struct {
	ProcessInput
	Since    int64 `json:"since,omitempty" jsonschema:"read output after this sequence number (the nextSince of the previous call); 0: from the start"`
	Skip     int   `json:"skip,omitempty" jsonschema:"bytes to skip of the output after since (what a truncated previous call already showed)"`
	MaxBytes int   `json:"maxBytes,omitempty" jsonschema:"byte budget; default 20000"`
}

// StdinInput is process_write_stdin's input.
type StdinInput struct {
	ProcessInput
	Data  string `json:"data,omitempty" jsonschema:"text to write (add \\n to end a line)"`
	Close bool   `json:"close,omitempty" jsonschema:"close stdin after writing, so the process reads end of file"`
}

// SignalInput is process_signal's input.
type SignalInput struct {
	ProcessInput
	Signal string `json:"signal,omitempty" jsonschema:"TERM (default), KILL, INT, HUP, … or a number; reaches the process's whole group"`
}

// WaitInput is process_wait's input.
type WaitInput struct {
	ProcessInput
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty" jsonschema:"wait at most this long; default 30 (stay under a client's 60 s call limit), then report it still runs"`
}

func (r registry) commandTools() {
	tool(r, "command_run", "Run a command in a sandbox and wait for it: returns exit code, stdout and stderr, each cut at maxBytes. For work longer than about 50 seconds use process_start and process_output.",
		true, execDescs, func(ctx context.Context, c *sdk.Client, in RunInput) (*gomcp.CallToolResult, error) {
			res, err := c.Exec(ctx, in.Sandbox, in.ExecRequest)
			if err != nil {
				return nil, err
			}
			return text(formatExec(res, budget(in.MaxBytes))), nil
		})
	tool(r, "process_start", "Start a command in the background and return its process id at once. Read its output with process_output, feed it with process_write_stdin, stop it with process_signal, await it with process_wait. It outlives this call and the client.",
		true, map[string]string{
			"id": "a name for the process; default a generated proc-…", "cmd": execDescs["cmd"], "shell": execDescs["shell"],
			"cwd": execDescs["cwd"], "env": execDescs["env"], "user": execDescs["user"],
			"timeoutSeconds": "kill it after this many seconds; 0 never",
		}, func(ctx context.Context, c *sdk.Client, in StartInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.StartProcess(ctx, in.Sandbox, in.StartProcessRequest))
		})
	tool(r, "process_output", "Read a background process's output (stdout and stderr interleaved, as a terminal shows them) after a sequence number, without waiting. Returns the output, whether it still runs (or its exit code), and nextSince to pass on the next call.",
		false, nil, func(ctx context.Context, c *sdk.Client, in OutputInput) (*gomcp.CallToolResult, error) {
			return processOutput(ctx, c, in)
		})
	tool(r, "process_write_stdin", "Write text to a background process's stdin (and optionally close it).", true, nil,
		func(ctx context.Context, c *sdk.Client, in StdinInput) (*gomcp.CallToolResult, error) {
			if in.Data != "" {
				if err := c.WriteStdin(ctx, in.Sandbox, in.Process, []byte(in.Data)); err != nil {
					return nil, err
				}
			}
			if in.Close {
				if err := c.CloseStdin(ctx, in.Sandbox, in.Process); err != nil {
					return nil, err
				}
			}
			return text(fmt.Sprintf("wrote %d bytes; stdin closed: %v", len(in.Data), in.Close)), nil
		})
	tool(r, "process_signal", "Send a signal to a background process's whole process group.", true, nil,
		func(ctx context.Context, c *sdk.Client, in SignalInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.SignalProcess(ctx, in.Sandbox, in.Process, in.Signal))
		})
	tool(r, "process_wait", "Wait for a background process to exit, at most timeoutSeconds (default 30). Returns its exit code, or that it still runs: call again, or read its output meanwhile.",
		false, nil, func(ctx context.Context, c *sdk.Client, in WaitInput) (*gomcp.CallToolResult, error) {
			timeout := time.Duration(in.TimeoutSeconds * float64(time.Second))
			if timeout <= 0 {
				timeout = 30 * time.Second
			}
			p, err := c.WaitProcess(ctx, in.Sandbox, in.Process, timeout)
			if sdk.IsWaitTimeout(err) {
				return text(fmt.Sprintf("process %s still runs after %s; call process_wait again or read process_output", in.Process, timeout)), nil
			}
			return jsonResult(p, err)
		})
}

// formatExec is a finished command's result for a model, each stream cut
// at maxBytes.
func formatExec(res *wire.ExecResult, maxBytes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit code: %d", res.ExitCode)
	if res.Signal != "" {
		fmt.Fprintf(&b, " (killed by %s)", res.Signal)
	}
	if res.TimedOut {
		b.WriteString(" (timed out)")
	}
	fmt.Fprintf(&b, "\nduration: %d ms\n", res.DurationMs)
	for _, s := range []struct{ name, out string }{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
		kept, left := cut(s.out, maxBytes)
		fmt.Fprintf(&b, "--- %s ---\n%s", s.name, kept)
		if left > 0 {
			fmt.Fprintf(&b, "\n[truncated at maxBytes %d: the last %d bytes of %s are left out; redirect it to a file and read that with file_read and an offset, or raise maxBytes]", maxBytes, left, s.name)
		}
		if kept != "" && !strings.HasSuffix(kept, "\n") {
			b.WriteByte('\n')
		}
	}
	if res.Truncated {
		b.WriteString("[the daemon cut the output at its own limit: redirect it to a file to keep it all]\n")
	}
	return b.String()
}

// processOutput reads in's window of a process's output.
func processOutput(ctx context.Context, c *sdk.Client, in OutputInput) (*gomcp.CallToolResult, error) {
	if in.Skip < 0 || in.Since < 0 {
		return nil, errorf("since and skip must not be negative")
	}
	var out bytes.Buffer
	res, err := c.ProcessLogs(ctx, in.Sandbox, in.Process, sdk.LogsOptions{Offset: in.Since}, &out, &out)
	if err != nil {
		return nil, err
	}
	all := out.Bytes()
	if in.Skip > len(all) {
		return nil, errorf("skip %d is past the %d bytes of output after since %d", in.Skip, len(all), in.Since)
	}
	max := budget(in.MaxBytes)
	kept, left := cut(string(all[in.Skip:]), max)
	var b strings.Builder
	b.WriteString(kept)
	if kept != "" && !strings.HasSuffix(kept, "\n") {
		b.WriteByte('\n')
	}
	if res.Gap {
		b.WriteString("[some output after since was already dropped from the process's buffer]\n")
	}
	if left > 0 {
		fmt.Fprintf(&b, "[truncated at maxBytes %d: %d more bytes; continue with since %d and skip %d]\n", max, left, in.Since, in.Skip+len(kept))
	} else {
		fmt.Fprintf(&b, "[nextSince %d]\n", res.LastSeq)
	}
	if res.Exited {
		fmt.Fprintf(&b, "[exited with code %d%s]\n", res.ExitCode, sigNote(res.Signal))
	} else {
		b.WriteString("[still running]\n")
	}
	return text(b.String()), nil
}

func sigNote(sig string) string {
	if sig == "" {
		return ""
	}
	return ", killed by " + sig
}
