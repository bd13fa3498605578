package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

func newBackupCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup COMMAND",
		Short: "Back up directories of sandboxes into the blob store and restore them",
		Long: `A backup is one directory of a sandbox (owners, modes, xattrs, hard links kept)
packed as tar+zstd into the daemon's blob store: --blob-dir or the S3 bucket of
--blob-url. Restore it into the same or another sandbox at a path that is
missing or empty. With --expires it is deleted after that long.`,
		Example: `  sbx backup create box /workspace --name before-upgrade --expires 24h
  sbx backup ls --sandbox box
  sbx backup restore bkp-… other:/workspace/restored
  sbx backup rm bkp-…`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newBackupCreateCmd(g), newBackupListCmd(g), newBackupRestoreCmd(g), newBackupRemoveCmd(g))
	return cmd
}

func newBackupCreateCmd(g *globals) *cobra.Command {
	var (
		name    string
		expires time.Duration
	)
	cmd := &cobra.Command{
		Use:     "create SANDBOX PATH [--name NAME] [--expires DURATION]",
		Short:   "Back up a directory of a sandbox",
		Example: `  sbx backup create box /workspace --expires 24h`,
		Args:    exactArgs(2, "SANDBOX and PATH"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&name, "name", "", "a name to recognise it by")
	cmd.Flags().DurationVar(&expires, "expires", 0, "delete the backup after this long, e.g. 24h (default: keep)")
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
		b, err := c.CreateBackup(cmd.Context(), args[0], sdk.CreateBackupRequest{Path: args[1], Name: name, ExpiresInSeconds: int(expires / time.Second)})
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), b, func(w io.Writer) error { return printBackups(w, []sdk.Backup{*b}) })
	}
	return cmd
}

func newBackupListCmd(g *globals) *cobra.Command {
	var sandbox string
	cmd := &cobra.Command{
		Use:     "ls [--sandbox SANDBOX]",
		Aliases: []string{"list"},
		Short:   "List backups",
		Example: `  sbx backup ls --sandbox box -o json`,
		Args:    exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&sandbox, "sandbox", "", "only backups of this sandbox")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		list, err := c.ListBackups(cmd.Context(), sandbox)
		if err != nil {
			return err
		}
		if list == nil {
			list = []sdk.Backup{}
		}
		return out.print(cmd.OutOrStdout(), list, func(w io.Writer) error { return printBackups(w, list) })
	}
	return cmd
}

func newBackupRestoreCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "restore BACKUP SANDBOX[:PATH]",
		Short: "Restore a backup into a sandbox",
		Long: `Restore BACKUP into SANDBOX at PATH (default: the directory it was taken from),
which must be missing or empty. A damaged backup is refused and nothing is
written.`,
		Example: `  sbx backup restore bkp-… box
  sbx backup restore bkp-… other:/workspace/copy`,
		Args: exactArgs(2, "BACKUP and SANDBOX[:PATH]"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		var req sdk.RestoreBackupRequest
		req.Sandbox, req.Path, _ = strings.Cut(args[1], ":")
		c, err := g.client()
		if err != nil {
			return err
		}
		b, err := c.RestoreBackup(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), b, func(w io.Writer) error { return printBackups(w, []sdk.Backup{*b}) })
	}
	return cmd
}

func newBackupRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "rm BACKUP…",
		Aliases: []string{"delete"},
		Short:   "Delete backups",
		Example: `  sbx backup rm bkp-…`,
		Args:    minArgs(1, "at least one BACKUP"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteEach(g, cmd, args, func(c *sdk.Client, id string) error {
				return c.DeleteBackup(cmd.Context(), id)
			})
		},
	}
}

func printBackups(w io.Writer, list []sdk.Backup) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tSANDBOX\tPATH\tSIZE\tCREATED\tEXPIRES")
	for _, b := range list {
		exp := "never"
		if b.ExpiresAt != nil {
			exp = formatTime(b.ExpiresAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.ID, orDash(b.Name), b.Sandbox, b.Path, formatBytes(b.SizeBytes), ago(b.CreatedAt), exp)
	}
	return tw.Flush()
}
