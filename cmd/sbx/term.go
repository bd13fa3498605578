package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newTermCmd(g *globals) *cobra.Command {
	var (
		req    sdk.CreatePTYRequest
		shell  string
		envs   []string
		attach string
	)
	cmd := &cobra.Command{
		Use:   "term NAME",
		Short: "Open an interactive terminal in a sandbox",
		Long: `Open a terminal in a sandbox: a shell (bash when the image has it, else sh)
on a pseudo-terminal, with your terminal in raw mode and window resizes passed
on. sbx exits with the shell's exit code.

If the connection drops, the shell keeps running; sbx prints its id, and
"sbx term NAME --attach ID" reattaches and replays the recent output.`,
		Example: `  sbx term box
  sbx term box --shell /bin/sh --cwd /tmp
  sbx term box --attach pty-1a2b3c4d`,
		Args: exactArgs(1, "a sandbox NAME"),
	}
	f := cmd.Flags()
	f.StringVar(&shell, "shell", "", "program to run (default: /bin/bash if present, else /bin/sh)")
	f.StringVar(&req.Cwd, "cwd", "", "directory to start in (default: the sandbox's workdir)")
	f.StringArrayVar(&envs, "env", nil, "environment variable KEY=VALUE (repeatable)")
	f.StringVar(&attach, "attach", "", "attach to the running terminal with this id instead of opening one")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var err error
		if req.Env, err = parseKV("--env", envs); err != nil {
			return err
		}
		if shell != "" {
			req.Cmd = []string{shell}
		}
		create := &req
		if attach != "" {
			if shell != "" || req.Cwd != "" || len(envs) > 0 {
				return usagef("--attach joins a running terminal; --shell, --cwd and --env apply to a new one only")
			}
			create = nil
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		code, err := runTerminal(cmd.Context(), c, args[0], terminalRun{
			create: create, attach: attach, forwardStdin: true,
			stdin: cmd.InOrStdin(), stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(),
		})
		if err != nil {
			return err
		}
		return &exitError{code: code}
	}
	return cmd
}

// terminalRun says what runTerminal does.
type terminalRun struct {
	create       *sdk.CreatePTYRequest // open a new terminal with this, or
	attach       string                // join this one
	ephemeral    bool                  // delete the terminal when sbx ends (exec -t)
	forwardStdin bool
	stdin        io.Reader
	stdout       io.Writer
	stderr       io.Writer
}

// runTerminal connects the local terminal to a terminal in the sandbox and
// returns the program's exit code (128+N after signal N).
func runTerminal(ctx context.Context, c *sdk.Client, sandbox string, tr terminalRun) (int, error) {
	in, _ := tr.stdin.(*os.File)
	tty := in != nil && term.IsTerminal(int(in.Fd()))
	id := tr.attach
	if tr.create != nil {
		if tty {
			if w, h, err := term.GetSize(int(in.Fd())); err == nil {
				tr.create.Cols, tr.create.Rows = w, h
			}
		}
		p, err := c.CreatePTY(ctx, sandbox, *tr.create)
		if err != nil {
			return 0, err
		}
		id = p.ID
	}
	if tr.ephemeral {
		defer c.DeletePTY(context.Background(), sandbox, id)
	}
	conn, err := c.AttachPTY(ctx, sandbox, id)
	if err != nil {
		return 0, err
	}
	defer conn.Close()

	if tty {
		// Our size may differ from the terminal's if it was made elsewhere.
		if w, h, err := term.GetSize(int(in.Fd())); err == nil {
			conn.Resize(ctx, w, h)
		}
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for range winch {
				if w, h, err := term.GetSize(int(in.Fd())); err == nil {
					conn.Resize(ctx, w, h)
				}
			}
		}()
	}
	if tr.forwardStdin {
		if tty {
			old, err := term.MakeRaw(int(in.Fd()))
			if err != nil {
				return 0, fmt.Errorf("put the terminal in raw mode: %w", err)
			}
			defer term.Restore(int(in.Fd()), old)
		}
		go io.Copy(conn, tr.stdin) // ends with the process; a read cannot be interrupted
	}
	// A signal to sbx (the local terminal closed, say) detaches.
	ctx, cancel := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	_, err = io.Copy(tr.stdout, conn)
	code, sig, exited := conn.Exit()
	if exited {
		return execExitCode(&sdk.ExecResult{ExitCode: code, Signal: sig}), nil
	}
	if tr.ephemeral {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("lost the connection to the terminal: %w", err)
	}
	if ctx.Err() == nil && !errors.Is(err, sdk.ErrDetached) {
		return 0, err
	}
	return 0, fmt.Errorf("detached from terminal %s, which keeps running; reattach with: sbx term %s --attach %s", id, sandbox, id)
}

// execTTYOrDetached is sbx exec with -t (a terminal) or -d (a background
// process).
func execTTYOrDetached(cmd *cobra.Command, g *globals, name string, req *sdk.ExecRequest, tty, detach, interactive bool, procID string) error {
	switch {
	case tty && detach:
		return usagef("-t and -d do not go together: a detached command has no terminal (use sbx term for one that lasts)")
	case procID != "" && !detach:
		return usagef("--id names a background process: use it with -d")
	case detach && interactive:
		return usagef("-i and -d do not go together; write to a background process's stdin through the API")
	case tty && req.TimeoutSeconds > 0:
		return usagef("--timeout does not apply with -t")
	case tty && req.User != "":
		return usagef("-u does not apply with -t: a terminal runs as root")
	}
	c, err := g.client()
	if err != nil {
		return err
	}
	if detach {
		p, err := c.StartProcess(cmd.Context(), name, sdk.StartProcessRequest{
			ID: procID, Cmd: req.Cmd, Cwd: req.Cwd, Env: req.Env, TimeoutSeconds: req.TimeoutSeconds, User: req.User})
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), p.ID)
		return nil
	}
	code, err := runTerminal(cmd.Context(), c, name, terminalRun{
		create:    &sdk.CreatePTYRequest{Cmd: req.Cmd, Cwd: req.Cwd, Env: req.Env},
		ephemeral: true, forwardStdin: interactive,
		stdin: cmd.InOrStdin(), stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(),
	})
	if err != nil {
		return err
	}
	return &exitError{code: code}
}
