package main

import (
	"fmt"
	"io"
	"time"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newSnapshotCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot COMMAND",
		Short: "Save sandboxes as snapshots new sandboxes start from",
		Long: `A snapshot is a saved sandbox: its filesystem (one more layer over its image;
the image is not copied) and, with --memory (class gvisor), every running
process. Start new sandboxes from it with sbx create --snapshot NAME.`,
		Example: `  sbx snapshot create box base-with-deps
  sbx snapshot create box warm --memory --expires 24h
  sbx create child --snapshot warm
  sbx snapshot ls
  sbx snapshot rm warm`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSnapshotCreateCmd(g), newSnapshotListCmd(g), newSnapshotGetCmd(g), newSnapshotRemoveCmd(g))
	return cmd
}

func newSnapshotCreateCmd(g *globals) *cobra.Command {
	var (
		memory  bool
		expires time.Duration
	)
	cmd := &cobra.Command{
		Use:   "create SANDBOX NAME [--memory] [--expires DURATION]",
		Short: "Save a sandbox as a snapshot",
		Long: `Save SANDBOX as the snapshot NAME. A started sandbox is frozen while its files
are copied. With --memory (class gvisor, started or paused) its processes are
saved too: a started sandbox is paused for that and resumed after. With
--expires the snapshot is deleted after it goes unused that long; every
sandbox created from it starts the time again.`,
		Example: `  sbx snapshot create box deps
  sbx snapshot create box warm --memory --expires 24h`,
		Args: exactArgs(2, "SANDBOX and NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().BoolVar(&memory, "memory", false, "save the running processes too (class gvisor)")
	cmd.Flags().DurationVar(&expires, "expires", 0, "delete the snapshot after it goes unused this long, e.g. 24h")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		if expires < 0 || (expires > 0 && expires < time.Second) {
			return usagef("--expires must be at least 1s, got %s", expires)
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		snap, err := c.CreateSnapshot(cmd.Context(), args[0], sdk.CreateSnapshotRequest{
			Name: args[1], IncludeMemory: memory, ExpiresInSeconds: int(expires / time.Second),
		})
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), snap, func(w io.Writer) error { return printSnapshots(w, []sdk.Snapshot{*snap}) })
	}
	return cmd
}

func newSnapshotListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List snapshots",
		Example: `  sbx snapshot ls
  sbx snapshot ls -o json`,
		Args: exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return listPrint(g, out, cmd, func(c *sdk.Client) ([]sdk.Snapshot, error) { return c.ListSnapshots(cmd.Context()) }, printSnapshots)
	}
	return cmd
}

func newSnapshotGetCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "get NAME",
		Short:   "Show one snapshot",
		Example: `  sbx snapshot get warm -o json`,
		Args:    exactArgs(1, "exactly one NAME"),
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
		snap, err := c.GetSnapshot(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), snap, func(w io.Writer) error { return printSnapshots(w, []sdk.Snapshot{*snap}) })
	}
	return cmd
}

func newSnapshotRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME…",
		Aliases: []string{"delete"},
		Short:   "Delete snapshots",
		Long: `Delete snapshots. Sandboxes created from one keep working. Each NAME is deleted
in turn; a failure is reported and the rest still go.`,
		Example: `  sbx snapshot rm warm`,
		Args:    minArgs(1, "at least one NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteEach(g, cmd, args, func(c *sdk.Client, name string) error {
				return c.DeleteSnapshot(cmd.Context(), name)
			})
		},
	}
}

func printSnapshots(w io.Writer, list []sdk.Snapshot) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSANDBOX\tCLASS\tMEMORY\tSIZE\tCREATED\tEXPIRES")
	for _, s := range list {
		mem, exp := "no", "never"
		if s.Memory {
			mem = "yes"
		}
		if s.ExpiresAt != nil {
			exp = formatTime(s.ExpiresAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Sandbox, s.Class, mem, formatBytes(s.SizeBytes), ago(s.CreatedAt), exp)
	}
	return tw.Flush()
}

// lineageLines adds a sandbox's class and origin to "sbx get".
func lineageLines(line func(k, v string), sb *sdk.Sandbox) {
	line("Class", orDash(sb.Class))
	if sb.Parent != "" {
		line("Forked from", sb.Parent)
	}
	if sb.Snapshot != "" {
		line("Snapshot", sb.Snapshot)
	}
}
