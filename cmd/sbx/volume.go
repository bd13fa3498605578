package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

func newVolumeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "volume COMMAND",
		Short: "Named volumes that sandboxes share and that outlive them",
		Long: `A volume is a filesystem of a fixed size kept by the daemon. Sandboxes mount it
at create (sbx create --volume NAME:/path[:ro]), several at once; it survives
their deletion. Writes past its size fail with "No space left on device"
inside every sandbox that mounts it.`,
		Example: `  sbx volume create data --size 2048
  sbx create a --volume data:/data
  sbx create b --volume data:/data:ro
  sbx volume ls
  sbx volume rm data`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newVolumeCreateCmd(g), newVolumeListCmd(g), newVolumeGetCmd(g), newVolumeRemoveCmd(g))
	return cmd
}

func newVolumeCreateCmd(g *globals) *cobra.Command {
	var size int
	cmd := &cobra.Command{
		Use:     "create NAME [--size MIB]",
		Short:   "Create a volume",
		Long:    `Create the volume NAME (lowercase letters, digits and -) of --size MiB (default 1024, 16 to 1048576).`,
		Example: `  sbx volume create data --size 2048`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().IntVar(&size, "size", 0, "size in MiB (default 1024)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.Volume, error) {
			return c.CreateVolume(cmd.Context(), sdk.CreateVolumeRequest{Name: args[0], SizeMiB: size})
		}, func(w io.Writer, v *sdk.Volume) error { return printVolumes(w, []sdk.Volume{*v}) })
	}
	return cmd
}

func newVolumeListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List volumes",
		Example: `  sbx volume ls -o json`,
		Args:    exactArgs(0, "no arguments"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return listPrint(g, out, cmd, func(c *sdk.Client) ([]sdk.Volume, error) { return c.ListVolumes(cmd.Context()) }, printVolumes)
	}
	return cmd
}

func newVolumeGetCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "get NAME",
		Short:   "Show one volume",
		Example: `  sbx volume get data -o json`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return callPrint(g, out, cmd, func(c *sdk.Client) (*sdk.Volume, error) {
			return c.GetVolume(cmd.Context(), args[0])
		}, func(w io.Writer, v *sdk.Volume) error { return printVolumes(w, []sdk.Volume{*v}) })
	}
	return cmd
}

func newVolumeRemoveCmd(g *globals) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:     "rm NAME… [--force]",
		Aliases: []string{"delete"},
		Short:   "Delete volumes and their files",
		Long: `Delete volumes and their files. A volume that a sandbox (in any state) mounts
is refused (VOLUME_IN_USE) unless --force; such sandboxes then fail to start.`,
		Example: `  sbx volume rm data`,
		Args:    minArgs(1, "at least one NAME"),
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete even while sandboxes mount it")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return deleteEach(g, cmd, args, func(c *sdk.Client, name string) error {
			return c.DeleteVolume(cmd.Context(), name, force)
		})
	}
	return cmd
}

func printVolumes(w io.Writer, list []sdk.Volume) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSIZE\tUSED\tSANDBOXES\tCREATED")
	for _, v := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Name, formatBytes(int64(v.SizeMiB)<<20), formatBytes(int64(v.UsedMiB)<<20), orDash(strings.Join(v.UsedBy, ",")), ago(v.CreatedAt))
	}
	return tw.Flush()
}

// parseVolumeFlags turns --volume NAME:/path[:ro] values into mounts.
func parseVolumeFlags(values []string) ([]sdk.VolumeMount, error) {
	var out []sdk.VolumeMount
	for _, v := range values {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" || (len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw") {
			return nil, usagef("--volume must be NAME:/path or NAME:/path:ro, got %q", v)
		}
		out = append(out, sdk.VolumeMount{Name: parts[0], Path: parts[1], ReadOnly: len(parts) == 3 && parts[2] == "ro"})
	}
	return out, nil
}
