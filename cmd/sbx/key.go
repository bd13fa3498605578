package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

// groupCmd is a command that only holds subcommands.
func groupCmd(use, short, long, example string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Example: example,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(subs...)
	return cmd
}

func newKeyCmd(g *globals) *cobra.Command {
	return groupCmd("key COMMAND", "Make, list and revoke API keys",
		`An API key acts for one team with a set of scopes: admin, sandboxes:write,
sandboxes:read, exec, images, metrics:read, team:read. Its secret is shown
once, when it is made; the daemon keeps only a hash. Send it as
"Authorization: Bearer <key>", or give it to the CLI with --token or SBX_TOKEN.`,
		`  sbx key create --team acme --scope sandboxes:write --scope exec --name ci
  sbx key create --scope sandboxes:read --expires 720h
  sbx key ls
  sbx key rm 3f9a0c1d2e4b5a69`,
		newKeyCreateCmd(g), newKeyListCmd(g), newKeyRemoveCmd(g))
}

func newKeyCreateCmd(g *globals) *cobra.Command {
	var (
		name, team string
		scopes     []string
		expires    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "create --scope SCOPE... [--team TEAM] [--name NAME] [--expires DURATION]",
		Short: "Make an API key and print its secret (shown only this once)",
		Long: `Make an API key of TEAM (default: the team of the key you use) holding the
given scopes. The secret is printed once; store it now. With --expires the key
is refused after that long.`,
		Example: `  sbx key create --team acme --scope sandboxes:write --scope exec --name ci
  sbx key create --scope metrics:read --name prometheus`,
		Args: exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&name, "name", "", "a name to recognise the key by")
	cmd.Flags().StringVar(&team, "team", "", "team the key acts for (default: your key's team)")
	cmd.Flags().StringSliceVar(&scopes, "scope", nil, "scope the key holds; repeat or comma-separate: "+strings.Join(sdk.Scopes(), ", "))
	cmd.Flags().DurationVar(&expires, "expires", 0, "refuse the key after this long, e.g. 720h (default: never)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.check(); err != nil {
			return err
		}
		if len(scopes) == 0 {
			return usagef("give at least one --scope: %s", strings.Join(sdk.Scopes(), ", "))
		}
		if expires < 0 || (expires > 0 && expires < time.Second) {
			return usagef("--expires must be at least 1s, got %s", expires)
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		k, err := c.CreateKey(cmd.Context(), sdk.CreateKeyRequest{Name: name, Team: team, Scopes: scopes, TTLSeconds: int(expires / time.Second)})
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), k, func(w io.Writer) error {
			fmt.Fprintf(w, "%s\n\nKey %s of team %s (%s). This secret is shown only once: store it now.\n",
				k.Key, k.ID, k.Team, strings.Join(k.Scopes, ", "))
			return nil
		})
	}
	return cmd
}

func newKeyListCmd(g *globals) *cobra.Command {
	var team string
	cmd := &cobra.Command{
		Use:     "ls [--team TEAM]",
		Aliases: []string{"list"},
		Short:   "List API keys (never their secrets)",
		Example: "  sbx key ls\n  sbx key ls --team acme -o json",
		Args:    exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&team, "team", "", "only this team's keys")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		keys, err := c.ListKeys(cmd.Context(), team)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), keys, func(w io.Writer) error {
			tw := newTable(w)
			fmt.Fprintln(tw, "ID\tNAME\tTEAM\tSCOPES\tCREATED\tEXPIRES\tLAST USED\tSTATE")
			for _, k := range keys {
				exp, used, state := "never", "never", "active"
				if k.ExpiresAt != nil {
					exp = formatTime(k.ExpiresAt)
					if k.ExpiresAt.Before(time.Now()) {
						state = "expired"
					}
				}
				if k.LastUsedAt != nil {
					used = ago(*k.LastUsedAt)
				}
				if k.RevokedAt != nil {
					state = "revoked"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, orDash(k.Name), k.Team, strings.Join(k.Scopes, ","), ago(k.CreatedAt), exp, used, state)
			}
			return tw.Flush()
		})
	}
	return cmd
}

func newKeyRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "rm ID...",
		Aliases: []string{"revoke"},
		Short:   "Revoke API keys; they are refused from the next request on",
		Example: "  sbx key rm 3f9a0c1d2e4b5a69",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s takes one or more key ids (see sbx key ls)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			for _, id := range args {
				if _, err := c.RevokeKey(cmd.Context(), id); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", id)
			}
			return nil
		},
	}
}
