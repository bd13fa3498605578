package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

func newTeamCmd(g *globals) *cobra.Command {
	return groupCmd("team COMMAND", "Manage teams and their quotas",
		`A team owns sandboxes, snapshots, events and API keys; a key of one team
never sees another team's (they are not found). Daytona calls a team an
organization; E2B calls it a team. What existed before teams belongs to team
"default". Quotas (0: no limit) cap what a team holds at once.`,
		`  sbx team create acme --max-sandboxes 20 --max-running 5 --cpu 8 --memory-mib 16384
  sbx team quota acme --max-running 10
  sbx team usage acme
  sbx team ls
  sbx team webhook acme https://hooks.acme.example/sbx --secret "$SECRET"
  sbx team rm acme`,
		newTeamCreateCmd(g), newTeamListCmd(g), newTeamQuotaCmd(g), newTeamUsageCmd(g), newTeamRemoveCmd(g), newTeamWebhookCmd(g))
}

// quotaFlags registers the quota flags on cmd.
func quotaFlags(cmd *cobra.Command, q *sdk.Quotas) {
	f := cmd.Flags()
	f.IntVar(&q.MaxSandboxes, "max-sandboxes", 0, "sandboxes the team may hold (0: no limit)")
	f.IntVar(&q.MaxRunning, "max-running", 0, "sandboxes the team may run at once")
	f.Float64Var(&q.CPU, "cpu", 0, "CPUs all its sandboxes may ask for together")
	f.IntVar(&q.MemoryMiB, "memory-mib", 0, "memory (MiB) all its sandboxes may ask for together")
	f.IntVar(&q.DiskMiB, "disk-mib", 0, "disk (MiB) its sandboxes (each then needs --disk), volumes and backups may take together")
	f.IntVar(&q.MaxSnapshots, "max-snapshots", 0, "snapshots the team may hold")
}

func printTeams(w io.Writer, teams []sdk.Team) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "TEAM\tSANDBOXES\tRUNNING\tCPU\tMEMORY MiB\tDISK MiB\tSNAPSHOTS\tCREATED")
	lim := func(n float64) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	for _, t := range teams {
		q := t.Quotas
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, lim(float64(q.MaxSandboxes)), lim(float64(q.MaxRunning)), lim(q.CPU),
			lim(float64(q.MemoryMiB)), lim(float64(q.DiskMiB)), lim(float64(q.MaxSnapshots)), ago(t.CreatedAt))
	}
	return tw.Flush()
}

func newTeamCreateCmd(g *globals) *cobra.Command {
	var q sdk.Quotas
	cmd := &cobra.Command{
		Use:     "create TEAM [quota flags]",
		Short:   "Make a team (lowercase letters, digits, dashes)",
		Example: "  sbx team create acme --max-sandboxes 20 --max-running 5",
		Args:    exactArgs(1, "the team's id"),
	}
	out := addOutputFlag(cmd)
	quotaFlags(cmd, &q)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.Team, error) {
			return c.CreateTeam(cmd.Context(), sdk.CreateTeamRequest{ID: args[0], Quotas: q})
		}, func(w io.Writer, t *sdk.Team) error { return printTeams(w, []sdk.Team{*t}) })
	}
	return cmd
}

func newTeamListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List teams and their quotas",
		Args:    exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) ([]sdk.Team, error) {
			return c.ListTeams(cmd.Context())
		}, printTeams)
	}
	return cmd
}

func newTeamQuotaCmd(g *globals) *cobra.Command {
	var q sdk.Quotas
	cmd := &cobra.Command{
		Use:     "quota TEAM [quota flags]",
		Short:   "Replace a team's quotas (flags left out mean no limit)",
		Example: "  sbx team quota acme --max-running 10 --memory-mib 32768",
		Args:    exactArgs(1, "the team's id"),
	}
	out := addOutputFlag(cmd)
	quotaFlags(cmd, &q)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.Team, error) {
			return c.SetQuotas(cmd.Context(), args[0], q)
		}, func(w io.Writer, t *sdk.Team) error { return printTeams(w, []sdk.Team{*t}) })
	}
	return cmd
}

func newTeamUsageCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "usage TEAM",
		Short:   "Show what a team holds now against its quotas",
		Example: "  sbx team usage acme",
		Args:    exactArgs(1, "the team's id"),
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
		u, err := c.TeamUsage(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), u, func(w io.Writer) error {
			tw := newTable(w)
			fmt.Fprintln(tw, "\tUSED\tQUOTA")
			row := func(k string, used, limit float64) {
				l := "-"
				if limit > 0 {
					l = fmt.Sprint(limit)
				}
				fmt.Fprintf(tw, "%s\t%v\t%s\n", k, used, l)
			}
			q := u.Quotas
			row("sandboxes", float64(u.Sandboxes), float64(q.MaxSandboxes))
			row("running", float64(u.Running), float64(q.MaxRunning))
			row("cpu", u.CPU, q.CPU)
			row("memory MiB", float64(u.MemoryMiB), float64(q.MemoryMiB))
			row("disk MiB", float64(u.DiskMiB), float64(q.DiskMiB))
			row("snapshots", float64(u.Snapshots), float64(q.MaxSnapshots))
			return tw.Flush()
		})
	}
	return cmd
}

func newTeamRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "rm TEAM",
		Short:   "Delete a team that owns no sandboxes, snapshots or live keys",
		Example: "  sbx team rm acme",
		Args:    exactArgs(1, "the team's id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.DeleteTeam(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted team %s\n", args[0])
			return nil
		},
	}
}

func newTeamWebhookCmd(g *globals) *cobra.Command {
	var secret string
	var remove bool
	cmd := &cobra.Command{
		Use:   "webhook TEAM [URL] [--secret SECRET] [--rm]",
		Short: "Send a team's events to its own webhook (root admin only)",
		Long: `Send every state change of TEAM's sandboxes to URL, as the daemon's --webhook
URLs receive every team's: POSTed as JSON, signed with SECRET (X-Sbx-Signature).
--rm stops it.`,
		Example: "  sbx team webhook acme https://hooks.acme.example/sbx --secret \"$SECRET\"\n  sbx team webhook acme --rm",
		Args: func(cmd *cobra.Command, args []string) error {
			if remove && len(args) != 1 || !remove && len(args) != 2 {
				return usagef("%s takes TEAM and URL, or TEAM with --rm", cmd.CommandPath())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&secret, "secret", "", "HMAC key the deliveries are signed with")
	cmd.Flags().BoolVar(&remove, "rm", false, "stop sending the team's events")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		if remove {
			if err := c.DeleteTeamWebhook(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "team %s: webhook removed\n", args[0])
			return nil
		}
		if err := c.SetTeamWebhook(cmd.Context(), args[0], sdk.TeamWebhook{URL: args[1], Secret: secret}); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "team %s: events go to %s\n", args[0], args[1])
		return nil
	}
	return cmd
}
