package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

func newSecretCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret COMMAND",
		Short: "Secrets that sandboxes' HTTP requests carry without the sandboxes seeing them",
		Long: `A secret is a value of your team (an API key, a token) that the daemon's HTTP
egress proxy adds to a sandbox's outbound requests, by an inject rule of the
sandbox's egress policy (sbx egress set SANDBOX --http rules.json). The value
is stored encrypted (AES-GCM, with a key in the daemon's data dir), never
logged and never shown again after create: only its name and size are.

A secret names the hosts it may be sent to (--host, HTTPS only unless
--allow-http): an inject rule for any other host is refused, and the proxy
checks every request's scheme, host and port before it adds the value.`,
		Example: `  printf %s "$OPENAI_API_KEY" | sbx secret create openai --host api.openai.com
  sbx secret ls
  sbx secret hosts openai --host api.openai.com --host '*.openai.azure.com'
  sbx secret rm openai`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSecretCreateCmd(g), newSecretHostsCmd(g), newSecretListCmd(g), newSecretRemoveCmd(g))
	return cmd
}

// addSecretHostsFlags adds --host and --allow-http: where a secret may go.
func addSecretHostsFlags(cmd *cobra.Command, h *sdk.SecretHosts) {
	cmd.Flags().StringArrayVar(&h.Hosts, "host", nil, "a host the secret may be sent to: api.example.com, *.example.com, optionally :port (without, 443 for HTTPS, 80 for HTTP); repeat for more; required")
	cmd.Flags().BoolVar(&h.AllowHTTP, "allow-http", false, "allow plain HTTP too (the value then crosses the network unencrypted)")
}

func newSecretCreateCmd(g *globals) *cobra.Command {
	var fromValue string
	var hosts sdk.SecretHosts
	cmd := &cobra.Command{
		Use:   "create NAME --host HOST... [--allow-http] [--value VALUE]",
		Short: "Create or replace a secret; the value is read from stdin",
		Long: `Create the secret NAME (1 to 64 letters, digits, '_', '-', '.') of your team,
replacing one of the same name. The value (1 byte to 16 KiB) is read from
standard input, up to its end, with one trailing newline removed; --value
gives it on the command line instead (where other users may see it: prefer
stdin). --host names where it may be sent (at least one; not "*").`,
		Example: `  printf %s "$OPENAI_API_KEY" | sbx secret create openai --host api.openai.com
  sbx secret create github --host api.github.com --host uploads.github.com < token.txt
  printf %s "$KEY" | sbx secret create legacy --host legacy.example:8080 --allow-http`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	cmd.Flags().StringVar(&fromValue, "value", "", "the value (instead of stdin)")
	addSecretHostsFlags(cmd, &hosts)
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		value := fromValue
		if !cmd.Flags().Changed("value") {
			b, err := io.ReadAll(io.LimitReader(bufio.NewReader(cmd.InOrStdin()), 1<<20))
			if err != nil {
				return err
			}
			value = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		}
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.SecretInfo, error) {
			return c.CreateSecret(cmd.Context(), sdk.CreateSecretRequest{Name: args[0], Value: value, SecretHosts: hosts})
		}, func(w io.Writer, s *sdk.SecretInfo) error { return printSecrets(w, []sdk.SecretInfo{*s}) })
	}
	return cmd
}

func newSecretHostsCmd(g *globals) *cobra.Command {
	var hosts sdk.SecretHosts
	cmd := &cobra.Command{
		Use:   "hosts NAME --host HOST... [--allow-http]",
		Short: "Replace where a secret may be sent",
		Long: `Replace the hosts the secret NAME may be sent to (and whether plain HTTP is
allowed). A secret made before secrets had hosts is injected nowhere until
they are set with this command. Rules that already inject it are checked
per request: one for a host no longer listed then fails with 403.`,
		Example: `  sbx secret hosts openai --host api.openai.com`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	addSecretHostsFlags(cmd, &hosts)
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.SecretInfo, error) {
			return c.SetSecretHosts(cmd.Context(), args[0], hosts)
		}, func(w io.Writer, s *sdk.SecretInfo) error { return printSecrets(w, []sdk.SecretInfo{*s}) })
	}
	return cmd
}

func newSecretListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List your team's secrets (names and sizes, never values)",
		Example: `  sbx secret ls -o json`,
		Args:    exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return listPrint(g, out, cmd, func(c *sdk.Client) ([]sdk.SecretInfo, error) { return c.ListSecrets(cmd.Context()) }, printSecrets)
	}
	return cmd
}

func newSecretRemoveCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "rm NAME…",
		Aliases: []string{"delete"},
		Short:   "Delete secrets; requests of rules that inject them then fail (502)",
		Example: `  sbx secret rm openai`,
		Args:    minArgs(1, "at least one NAME"),
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return deleteEach(g, cmd, args, func(c *sdk.Client, name string) error {
			return c.DeleteSecret(cmd.Context(), name)
		})
	}
	return cmd
}

func printSecrets(w io.Writer, list []sdk.SecretInfo) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tTEAM\tSIZE\tHOSTS\tCREATED")
	for _, s := range list {
		hosts := strings.Join(s.Hosts, ",")
		switch {
		case hosts == "":
			hosts = "(none: sbx secret hosts)"
		case s.AllowHTTP:
			hosts += " (http too)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%dB\t%s\t%s\n", s.Name, s.Team, s.Size, hosts, ago(s.CreatedAt))
	}
	return tw.Flush()
}
