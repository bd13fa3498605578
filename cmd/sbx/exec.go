package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

func newExecCmd(g *globals) *cobra.Command {
	var (
		req         sdk.ExecRequest
		envs        []string
		timeout     float64
		interactive bool
		tty, detach bool   // -t, -d: see term.go
		procID      string // with -d
	)
	cmd := &cobra.Command{
		Use:   "exec NAME [flags] -- CMD [ARG…]",
		Short: "Run a command in a sandbox",
		Long: `Run a command in a started sandbox. Its output is shown as it comes, stdout
and stderr apart, and sbx exits with the command's exit code (128+N when a
signal N killed it, as a shell does). As docker exec, it exits 127 when the
command is not found, 126 when it cannot be run, and 125 when sbx itself
failed (no such sandbox, a bad flag, a lost connection).

Put the command after "--" so that its own flags are not read as sbx's; the
flags of sbx exec go before "--". The command runs without a shell: use
"sh -c '…'" for pipes and globs. With -i, sbx reads all of its own stdin first
and hands it to the command.

With -t the command runs on a terminal (-it for an interactive program: keys
go to it as you type). With -d it runs in the background as a process that
"sbx ps", "sbx logs" and "sbx kill" know; sbx prints its id.`,
		Example: `  sbx exec box -- uname -a
  sbx exec box --cwd /tmp --env DEBUG=1 -- python3 -c 'print(42)'
  sbx exec -w /tmp -e DEBUG=1 -u nobody box -- id
  sbx exec box --timeout 10 -- sh -c 'make test 2>&1 | tail'
  echo hello | sbx exec -i box -- wc -c
  sbx exec -it box -- vi /etc/hosts
  sbx exec -d --id web box -- httpd -f -p 8080`,
		Args: minArgs(1, "a sandbox NAME and a command: sbx exec NAME -- CMD [ARG…]"),
	}
	// Flags after the command (sbx exec box ls -la) would be read as sbx's.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &sbxFailed{usagef("%v (put the command after \"--\": sbx exec NAME -- CMD [ARG…])", err)}
	})
	f := cmd.Flags()
	f.StringVarP(&req.Cwd, "cwd", "w", "", "directory to run in (default: the sandbox's workdir)")
	f.StringArrayVarP(&envs, "env", "e", nil, "environment variable KEY=VALUE (repeatable)")
	f.StringVarP(&req.User, "user", "u", "", "run as this account of the sandbox: a name or uid[:gid] (default root)")
	f.Float64Var(&timeout, "timeout", 0, "kill the command after this many seconds (0: no limit)")
	f.BoolVarP(&interactive, "interactive", "i", false, "send sbx's stdin to the command")
	f.BoolVarP(&tty, "tty", "t", false, "run the command on a terminal")
	f.BoolVarP(&detach, "detach", "d", false, "run the command in the background and print its process id")
	f.StringVar(&procID, "id", "", "with -d: the process id to use (default generated)")
	run := func(cmd *cobra.Command, args []string) error {
		name, argv, err := splitExecArgs(args, cmd.ArgsLenAtDash())
		if err != nil {
			return err
		}
		if timeout < 0 {
			return usagef("--timeout must be 0 or more seconds, got %g", timeout)
		}
		if req.Env, err = parseKV("--env", envs); err != nil {
			return err
		}
		req.Cmd, req.TimeoutSeconds = argv, timeout
		if tty || detach || procID != "" {
			return execTTYOrDetached(cmd, g, name, &req, tty, detach, interactive, procID) // term.go
		}
		if interactive {
			b, err := io.ReadAll(cmd.InOrStdin())
			if err != nil {
				return fmt.Errorf("read stdin: %w", err)
			}
			req.Stdin = string(b)
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		res, err := c.ExecStream(cmd.Context(), name, req, cmd.OutOrStdout(), cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		if res.TimedOut {
			fmt.Fprintf(cmd.ErrOrStderr(), "sbx: command timed out after %gs and was killed\n", timeout)
		}
		return &exitError{code: execExitCode(res)}
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return execFailure(run(cmd, args)) }
	return cmd
}

// sbxFailed is an error of sbx exec that is not the command's: it exits
// with docker exec's codes (execFailure), after the usual message.
type sbxFailed struct{ error }

func (e *sbxFailed) Unwrap() error { return e.error }

// code is 127 when the command was not found, 126 when it could not be
// run, 125 when sbx itself failed, as docker run and docker exec exit.
func (e *sbxFailed) code() int {
	var api *sdk.APIError
	switch {
	case errors.As(e.error, &api) && api.Code == sdk.CodeCommandNotFound:
		return 127
	case errors.As(e.error, &api) && api.Code == sdk.CodeCommandNotExecutable:
		return 126
	}
	return 125
}

// execFailure marks every error of sbx exec but the command's own exit.
func execFailure(err error) error {
	var exit *exitError
	if err == nil || errors.As(err, &exit) || errors.Is(err, context.Canceled) {
		return err
	}
	return &sbxFailed{err}
}

// splitExecArgs separates the sandbox name from the command. dash is the
// number of arguments before "--", or -1 when there was none.
func splitExecArgs(args []string, dash int) (name string, argv []string, err error) {
	if dash > 1 {
		return "", nil, usagef("exactly one NAME goes before \"--\", got %q", args[:dash])
	}
	if dash == 0 || len(args) == 0 {
		return "", nil, usagef("give the sandbox NAME first: sbx exec NAME -- CMD [ARG…]")
	}
	if len(args) < 2 {
		return "", nil, usagef("give a command to run after the NAME: sbx exec %s -- CMD [ARG…]", args[0])
	}
	return args[0], args[1:], nil
}

// execExitCode maps a command's end to a process exit code the way a shell
// does: its own code, or 128+N when signal N killed it.
func execExitCode(res *sdk.ExecResult) int {
	if res.Signal != "" {
		if n := signalNumber(res.Signal); n > 0 {
			return 128 + n
		}
	}
	if res.ExitCode < 0 || res.ExitCode > 255 {
		return 1 // not a real exit status; os.Exit would truncate it
	}
	if res.ExitCode == 0 && res.Signal != "" {
		return 1 // killed by a signal we cannot name: never report success
	}
	return res.ExitCode
}

// signalNumber accepts "SIGKILL", "KILL" or "9"; it returns 0 if unknown.
func signalNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	s = strings.ToUpper(s)
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	return int(unix.SignalNum(s))
}
