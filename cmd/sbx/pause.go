package main

import (
	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newPauseCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pause NAME",
		Short: "Pause a sandbox, keeping its processes",
		Long: `Pause a started sandbox. Class gvisor saves every process and its memory to
disk and releases the instance: no process, CPU or memory is held on the host
until sbx resume. Class container freezes every process where it is (its memory
stays in use, its CPU drops to zero). The next exec, file call, terminal or
preview request resumes a paused sandbox on its own (as it starts a stopped one);
reading its record (sbx get, ls) does not. --auto-pause on sbx create and sbx
update pauses a sandbox after a time without activity (class gvisor: 1h by
default).`,
		Example: `  sbx pause box
  sbx resume box`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return sandboxCall(g, out, cmd, func(c *sdk.Client) (*sdk.Sandbox, error) {
			return c.PauseSandbox(cmd.Context(), args[0])
		})
	}
	return cmd
}

func newResumeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resume NAME",
		Short: "Resume a paused sandbox",
		Long: `Resume a paused sandbox: every process goes on where it was, with its memory,
open files and listening sockets.`,
		Example: `  sbx resume box`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return sandboxCall(g, out, cmd, func(c *sdk.Client) (*sdk.Sandbox, error) {
			return c.ResumeSandbox(cmd.Context(), args[0])
		})
	}
	return cmd
}
