package main

import (
	"fmt"
	"io"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newForkCmd(g *globals) *cobra.Command {
	var req sdk.ForkRequest
	cmd := &cobra.Command{
		Use:   "fork SANDBOX [--name NAME] [--count N]",
		Short: "Copy a sandbox into new, independent sandboxes",
		Long: `Make N forks of SANDBOX. Each fork gets its own copy of the filesystem: writes
in one are invisible to the others and to the parent. Class gvisor copies the
running processes with their memory too (the parent pauses for a moment);
class container copies the files only and the forks' processes start fresh.
With --count > 1 the forks are named NAME-1 … NAME-N. A sandbox with forks is
deleted only together with them: sbx rm --cascade.`,
		Example: `  sbx fork box --name try
  sbx fork box --name worker --count 4
  sbx forks box`,
		Args: exactArgs(1, "exactly one SANDBOX"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&req.Name, "name", "", "name of the fork (NAME-1 … NAME-N with --count)")
	cmd.Flags().IntVar(&req.Count, "count", 1, "how many forks")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		res, err := c.ForkSandbox(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), res, func(w io.Writer) error {
			if err := printSandboxes(w, res.Forks); err != nil {
				return err
			}
			if res.Note != "" {
				fmt.Fprintln(w, "note:", res.Note)
			}
			return nil
		})
	}
	return cmd
}

func newForksCmd(g *globals) *cobra.Command {
	var ancestors bool
	cmd := &cobra.Command{
		Use:   "forks SANDBOX [--ancestors]",
		Short: "List a sandbox's forks, or with --ancestors where it was forked from",
		Example: `  sbx forks box
  sbx forks try --ancestors`,
		Args: exactArgs(1, "exactly one SANDBOX"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().BoolVar(&ancestors, "ancestors", false, "list the parent, its parent and so on instead")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		list := c.ListForks
		if ancestors {
			list = c.ListAncestors
		}
		sbs, err := list(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if sbs == nil {
			sbs = []sdk.Sandbox{}
		}
		return out.print(cmd.OutOrStdout(), sbs, func(w io.Writer) error { return printSandboxes(w, sbs) })
	}
	return cmd
}
