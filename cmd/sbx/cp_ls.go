package main

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

// sbx files ls lists a directory inside a sandbox, the read side of sbx cp.

func newFilesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "files",
		Short: "Work with files inside a sandbox (see also sbx cp)",
	}
	cmd.AddCommand(newFilesListCmd(g))
	return cmd
}

func newFilesListCmd(g *globals) *cobra.Command {
	var (
		depth     int
		recursive bool
	)
	cmd := &cobra.Command{
		Use:   "ls [-R | --depth N] NAME:PATH",
		Short: "List a directory inside a sandbox",
		Long: `List the directory PATH inside sandbox NAME. --depth N lists N levels
(1, the default, is the directory's own entries); -R lists all levels down
to the limit of 32. Symlinked directories are listed, not entered; a
listing of more than 50,000 entries is refused: list a subdirectory.`,
		Example: `  sbx files ls box:/workspace
  sbx files ls -R box:/workspace/src
  sbx files ls --depth 2 box:/workspace -o json`,
		Args: exactArgs(1, "exactly one NAME:PATH"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().IntVarP(&depth, "depth", "d", 1, "levels to list (1 to 32)")
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "list all levels (depth 32)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		arg := parseCopyArg(args[0])
		if !arg.remote() || arg.path == "" {
			return usagef("%q is not a sandbox path; write NAME:PATH, e.g. box:/workspace", args[0])
		}
		if recursive {
			if cmd.Flags().Changed("depth") {
				return usagef("give -R or --depth, not both")
			}
			depth = 32
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		list, err := c.ListFiles(cmd.Context(), arg.sandbox, arg.path, sdk.WithDepth(depth))
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), list, func(w io.Writer) error { return printFiles(w, list) })
	}
	return cmd
}

// printFiles writes one entry per line, its path relative to the listed
// directory (the first entry is always one of its own).
func printFiles(w io.Writer, list []sdk.FileInfo) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "MODE\tSIZE\tMODIFIED\tPATH")
	prefix := ""
	if len(list) > 0 {
		prefix = strings.TrimSuffix(path.Dir(list[0].Path), "/") + "/"
	}
	for _, f := range list {
		name := strings.TrimPrefix(f.Path, prefix)
		size := formatBytes(f.Size)
		switch f.Type {
		case "dir":
			name, size = name+"/", "-"
		case "symlink":
			name += " -> " + f.Target
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Mode, size, f.ModTime.Local().Format("2006-01-02 15:04"), name)
	}
	return tw.Flush()
}
