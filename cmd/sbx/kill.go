package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newKillCmd(g *globals) *cobra.Command {
	var signal string
	cmd := &cobra.Command{
		Use:   "kill NAME ID [-s SIGNAL]",
		Short: "Send a signal to a background process and its children",
		Long: `Send a signal to a background process. It goes to the process's whole
process group, so the children it started get it too. The default is TERM.`,
		Example: `  sbx kill box web
  sbx kill box web -s KILL
  sbx kill box web -s 2`,
		Args: exactArgs(2, "a sandbox NAME and a process ID"),
	}
	cmd.Flags().StringVarP(&signal, "signal", "s", "TERM", "signal name (TERM, KILL, INT, HUP, …) or number")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		p, err := c.SignalProcess(cmd.Context(), args[0], args[1], signal)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s\n", p.ID)
		return nil
	}
	return cmd
}
