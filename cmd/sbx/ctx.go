package main

import (
	"context"
	"fmt"
	"io"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newCtxCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ctx COMMAND",
		Short: "Manage code contexts: interpreters that keep their state between runs",
		Long: `A code context is a long-lived python, javascript or bash interpreter in a
sandbox, like a notebook kernel: variables, imports, functions and the working
directory persist from one run to the next. A context ends when it is removed,
when it has been idle for --idle seconds (default 24 hours), when its
interpreter exits, or when the sandbox's instance stops; after that its runs
fail with CONTEXT_NOT_FOUND.`,
		Example: `  id=$(sbx ctx create box --lang python)
  sbx ctx run box $id -c 'x = 41'
  sbx ctx run box $id -c 'x + 1'
  sbx ctx ls box
  sbx ctx rm box $id`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCtxCreateCmd(g), newCtxListCmd(g), newCtxRemoveCmd(g), newCtxRunCmd(g))
	return cmd
}

func newCtxCreateCmd(g *globals) *cobra.Command {
	var (
		req  sdk.CreateContextRequest
		envs []string
		idle int
	)
	cmd := &cobra.Command{
		Use:   "create NAME --lang LANGUAGE",
		Short: "Start an interpreter and print its context id",
		Args:  exactArgs(1, "a sandbox NAME"),
	}
	cmd.Flags().StringVar(&req.Language, "lang", "python", "language: python, javascript or bash")
	cmd.Flags().StringVar(&req.Cwd, "cwd", "", "working directory (default: the sandbox's workdir)")
	cmd.Flags().StringArrayVar(&envs, "env", nil, "environment variable KEY=VALUE (repeatable)")
	cmd.Flags().IntVar(&idle, "idle", 24*3600, "end the context after this many seconds without a run (0: never)")
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		if idle < 0 {
			return usagef("--idle must be 0 (never) or more seconds, got %d", idle)
		}
		var err error
		if req.Env, err = parseKV("--env", envs); err != nil {
			return err
		}
		if cmd.Flags().Changed("idle") {
			req.IdleSeconds = &idle
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		ctxInfo, err := c.CreateContext(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), ctxInfo, func(w io.Writer) error {
			_, err := fmt.Fprintln(w, ctxInfo.ID)
			return err
		})
	}
	return cmd
}

func newCtxListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ls NAME",
		Aliases: []string{"list"},
		Short:   "List a sandbox's live contexts",
		Args:    exactArgs(1, "a sandbox NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		list, err := c.ListContexts(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), list, func(w io.Writer) error {
			tw := newTable(w)
			fmt.Fprintln(tw, "ID\tLANGUAGE\tCWD\tCREATED\tLAST USED\tEXPIRES")
			for _, x := range list {
				expires := "never"
				if x.ExpiresAt != nil {
					expires = formatTime(x.ExpiresAt)
				} else if x.IdleSeconds > 0 {
					expires = "-" // a run is in progress
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", x.ID, x.Language, x.Cwd, ago(x.CreatedAt), ago(x.LastUsedAt), expires)
			}
			return tw.Flush()
		})
	}
	return cmd
}

func newCtxRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME CONTEXT",
		Aliases: []string{"delete"},
		Short:   "End a context's interpreter",
		Args:    exactArgs(2, "a sandbox NAME and a CONTEXT id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			return c.DeleteContext(cmd.Context(), args[0], args[1])
		},
	}
}

func newCtxRunCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run NAME CONTEXT [FILE | -] [flags]",
		Short: "Run code in a context",
		Long: `Run code in a context. Output is shown as it comes and the value of the
last expression is printed after it. sbx exits with 1 when the code raised an
error and 124 when it timed out (the code is interrupted with SIGINT; the
context keeps its state).`,
		Example: `  sbx ctx run box ctx-0123456789abcdef -c 'import pandas as pd; df = pd.DataFrame({"a": [1, 2]})'
  sbx ctx run box ctx-0123456789abcdef -c 'df.describe()'
  sbx ctx run box ctx-0123456789abcdef ./plot.py --save ./out`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 || len(args) > 3 {
				return usagef("%s takes a sandbox NAME, a CONTEXT id and optionally a FILE (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
	}
	f := addRunFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := f.check(); err != nil {
			return err
		}
		file := ""
		if len(args) == 3 {
			file = args[2]
		}
		code, err := f.source(file, cmd.InOrStdin())
		if err != nil {
			return err
		}
		env, err := parseKV("--env", f.envs)
		if err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		req := sdk.RunCodeRequest{Code: code, TimeoutSeconds: f.timeout, Env: env}
		return f.do(cmd, func(ctx context.Context, h *sdk.RunHandlers) (*sdk.RunResult, error) {
			return c.RunCode(ctx, args[0], args[1], req, h)
		})
	}
	return cmd
}
