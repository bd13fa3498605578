package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

func newPoolCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pool COMMAND",
		Short: "Warm pools: started sandboxes kept ready for fast creates",
		Long: `A warm pool keeps --min started instances of one template (image, class,
limits, network, egress, env) ready. A create whose spec matches the template,
or that names the pool (sbx create --pool NAME), takes one in milliseconds
instead of starting an instance: it gets the create's name (as hostname),
labels, env, egress and lifecycle policy without a restart, and the pool
starts a replacement in the background (at most two at a time for all pools).
After a burst of creates the pool fills past --min, up to --max.

Pool instances are not listed as sandboxes and record no activity; they count
against the team's quotas like any started sandbox. An instance is adopted at
most once. A class gvisor pool serves only creates without a name.`,
		Example: `  sbx pool create py --image python --min 5 --max 20 --memory 512
  sbx create --image python --memory 512     # takes one from py
  sbx create job1 --pool py --env TASK=1     # names the pool
  sbx pool ls
  sbx pool update py --min 10
  sbx pool rm py`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPoolCreateCmd(g), newPoolListCmd(g), newPoolGetCmd(g), newPoolUpdateCmd(g), newPoolRemoveCmd(g))
	return cmd
}

func newPoolCreateCmd(g *globals) *cobra.Command {
	var (
		req  sdk.CreatePoolRequest
		envs []string
	)
	cmd := &cobra.Command{
		Use:   "create NAME --min N [--max M] [template flags]",
		Short: "Create a warm pool and start filling it",
		Long: `Create the pool NAME (lowercase letters, digits and -) that keeps --min
instances (0 to 100) ready and grows up to --max (default --min) after bursts.
The template flags are those of sbx create; left out, they take the daemon's
defaults, as a create would.`,
		Example: `  sbx pool create py --image python --min 5 --max 20 --cpu 0.5 --memory 512 --egress block-all`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	t := &req.Template
	f := cmd.Flags()
	f.IntVar(&req.Min, "min", 0, "instances kept ready")
	f.IntVar(&req.Max, "max", 0, "most instances after a burst of creates (default --min)")
	f.StringVar(&t.Image, "image", "", "image (default: the daemon's base image)")
	f.StringVar(&t.Class, "class", "", "isolation: container (default) or gvisor")
	f.Float64Var(&t.CPU, "cpu", 0, "CPU limit in CPUs")
	mibVar(f, &t.MemoryMiB, "memory", "memory limit")
	f.IntVar(&t.PidsLimit, "pids", 0, "limit on the number of processes")
	mibVar(f, &t.DiskMiB, "disk", "size of each instance's own filesystem")
	f.StringVar(&t.Workdir, "workdir", "", "directory commands run in")
	f.StringArrayVar(&envs, "env", nil, "environment variable KEY=VALUE (repeatable)")
	netFlags := addNetworkFlags(cmd) // ports.go
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req.Name = args[0]
		var err error
		if t.Env, err = parseKV("--env", envs); err != nil {
			return err
		}
		var sreq sdk.CreateSandboxRequest
		if err := netFlags.applyCreate(&sreq); err != nil {
			return err
		}
		t.Network, t.Egress = sreq.Network, sreq.Egress
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.Pool, error) {
			return c.CreatePool(cmd.Context(), req)
		}, func(w io.Writer, p *sdk.Pool) error { return printPools(w, []sdk.Pool{*p}) })
	}
	return cmd
}

func newPoolListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List warm pools and how many instances are ready",
		Example: `  sbx pool ls -o json`,
		Args:    exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return listPrint(g, out, cmd, func(c *sdk.Client) ([]sdk.Pool, error) { return c.ListPools(cmd.Context()) }, printPools)
	}
	return cmd
}

func newPoolGetCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "get NAME",
		Short:   "Show one warm pool",
		Example: `  sbx pool get py -o json`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.Pool, error) {
			return c.GetPool(cmd.Context(), args[0])
		}, func(w io.Writer, p *sdk.Pool) error { return printPools(w, []sdk.Pool{*p}) })
	}
	return cmd
}

func newPoolUpdateCmd(g *globals) *cobra.Command {
	var lo, hi int
	cmd := &cobra.Command{
		Use:   "update NAME [--min N] [--max M]",
		Short: "Resize a warm pool",
		Long: `Resize a warm pool. Ready instances past a smaller --max are deleted; to change
the template, delete the pool and create it again.`,
		Example: `  sbx pool update py --min 10 --max 40`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().IntVar(&lo, "min", 0, "instances kept ready")
	cmd.Flags().IntVar(&hi, "max", 0, "most instances after a burst of creates")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var req sdk.UpdatePoolRequest
		if cmd.Flags().Changed("min") {
			req.Min = &lo
		}
		if cmd.Flags().Changed("max") {
			req.Max = &hi
		}
		if req.Min == nil && req.Max == nil {
			return usagef("give --min, --max or both")
		}
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.Pool, error) {
			return c.UpdatePool(cmd.Context(), args[0], req)
		}, func(w io.Writer, p *sdk.Pool) error { return printPools(w, []sdk.Pool{*p}) })
	}
	return cmd
}

func newPoolRemoveCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "rm NAME…",
		Aliases: []string{"delete"},
		Short:   "Delete warm pools and the instances waiting in them",
		Long:    `Delete warm pools and the instances waiting in them. Sandboxes already adopted from a pool stay.`,
		Example: `  sbx pool rm py`,
		Args:    minArgs(1, "at least one NAME"),
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return deleteEach(g, cmd, args, func(c *sdk.Client, name string) error {
			return c.DeletePool(cmd.Context(), name)
		})
	}
	return cmd
}

func printPools(w io.Writer, list []sdk.Pool) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tIMAGE\tCLASS\tREADY\tSTARTING\tMIN\tMAX\tADOPTED\tMISSED\tCREATED")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", p.Name, orDash(p.Template.Image), orDash(p.Template.Class),
			p.Ready, p.Starting, p.Min, p.Max, p.Adopted, p.Missed, ago(p.CreatedAt))
	}
	return tw.Flush()
}
