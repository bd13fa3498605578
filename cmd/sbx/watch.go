package main

import (
	"fmt"
	"io"
	"time"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newWatchCmd(g *globals) *cobra.Command {
	var opts sdk.WatchOptions
	cmd := &cobra.Command{
		Use:   "watch NAME PATH",
		Short: "Print changes to files in a sandbox as they happen",
		Long: `Watch a directory (recursively by default) or a file in a sandbox and print
one line per change: create, write, remove or rename, with the path. With
-o json each line is a JSON WatchEvent. Globs without "/" match a name at any
depth ("*.go", "node_modules"); with "/" the path under PATH, where "**"
spans directories. It runs until interrupted, or until PATH is removed.`,
		Example: `  sbx watch box /workspace
  sbx watch box /workspace --exclude node_modules --exclude '*.tmp'
  sbx watch box /workspace/src --include '*.go' -o json`,
		Args: exactArgs(2, "a sandbox NAME and a PATH"),
	}
	out := addOutputFlag(cmd)
	f := cmd.Flags()
	f.BoolVarP(&opts.Recursive, "recursive", "r", true, "watch subdirectories too")
	f.StringArrayVar(&opts.Include, "include", nil, "only report paths matching this glob (repeatable)")
	f.StringArrayVar(&opts.Exclude, "exclude", nil, "skip paths and directories matching this glob (repeatable)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		opts.Path = args[1]
		w, err := c.Watch(cmd.Context(), args[0], opts)
		if err != nil {
			return err
		}
		defer w.Close()
		for {
			ev, err := w.Next()
			if err != nil {
				return err
			}
			if out.format == "json" {
				err = writeJSONLine(cmd.OutOrStdout(), ev) // one event per line
			} else {
				err = printWatchEvent(cmd.OutOrStdout(), ev)
			}
			if err != nil {
				return err
			}
		}
	}
	return cmd
}

func printWatchEvent(w io.Writer, ev *sdk.WatchEvent) error {
	path := ev.Path
	if ev.IsDir {
		path += "/"
	}
	if ev.OldPath != "" {
		path = ev.OldPath + " -> " + path
	}
	_, err := fmt.Fprintf(w, "%s %-6s %s\n", ev.Time.Local().Format(time.TimeOnly), ev.Type, path)
	return err
}
