package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func newAuditCmd(g *globals) *cobra.Command {
	var (
		team  string
		after int64
		limit int
	)
	cmd := &cobra.Command{
		Use:   "audit [--team TEAM] [--after SEQ] [--limit N]",
		Short: "Show the audit log: every mutating API request",
		Long: `Show the audit log, oldest first: each mutating API request with the key that
sent it, its team, method and path, the answer's status and error code, and
when. The root admin key (team default) sees every team's entries; an admin
key of another team sees its own. The daemon keeps entries for
--audit-retention (sbx serve).`,
		Example: "  sbx audit\n  sbx audit --team acme --after 1200 -o json",
		Args:    exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&team, "team", "", "only this team's entries")
	cmd.Flags().Int64Var(&after, "after", 0, "only entries with a higher sequence number")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many entries (default 1000)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.check(); err != nil {
			return err
		}
		if after < 0 || limit < 0 {
			return usagef("--after and --limit must be 0 or more")
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		entries, err := c.Audit(cmd.Context(), team, after, limit)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), entries, func(w io.Writer) error {
			tw := newTable(w)
			fmt.Fprintln(tw, "SEQ\tTIME\tKEY\tTEAM\tREQUEST\tSTATUS\tCODE")
			for _, e := range entries {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s %s\t%d\t%s\n", e.Seq, e.Time.Local().Format("2006-01-02 15:04:05"), e.KeyID, e.Team, e.Method, e.Path, e.Status, orDash(string(e.Code)))
			}
			return tw.Flush()
		})
	}
	return cmd
}
