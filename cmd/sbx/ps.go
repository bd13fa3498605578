package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newPsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ps NAME",
		Short: "List a sandbox's background processes",
		Long: `List the background processes of a sandbox, running and recently exited,
with their exit codes. Start one with "sbx exec -d", follow its output with
"sbx logs NAME ID -f" and stop it with "sbx kill NAME ID".`,
		Example: `  sbx exec -d --id web box -- httpd -f -p 8080
  sbx ps box
  sbx ps box -o json`,
		Args: exactArgs(1, "a sandbox NAME"),
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
		list, err := c.ListProcesses(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return out.print(cmd.OutOrStdout(), list, func(w io.Writer) error { return printProcesses(w, list) })
	}
	return cmd
}

func printProcesses(w io.Writer, list []sdk.Process) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tPID\tSTATE\tEXIT\tSTARTED\tCOMMAND")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", p.ID, p.Pid, p.State, exitText(&p), ago(p.StartedAt), commandText(p.Cmd))
	}
	return tw.Flush()
}

// exitText shows how a process ended: "0", "143 (SIGTERM)", "137 (timeout)".
func exitText(p *sdk.Process) string {
	if p.ExitCode == nil {
		return "-"
	}
	s := strconv.Itoa(*p.ExitCode)
	switch {
	case p.TimedOut:
		s += " (timeout)"
	case p.Signal != "":
		s += " (" + p.Signal + ")"
	}
	return s
}

// commandText shows argv on one line, shortened for a table.
func commandText(argv []string) string {
	if len(argv) == 3 && argv[0] == "/bin/sh" && argv[1] == "-c" {
		argv = argv[2:]
	}
	s := strings.Join(argv, " ")
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}
