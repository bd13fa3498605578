package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

// globals are the flags every client command shares.
type globals struct {
	host   string
	token  string
	caCert string
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "sbx",
		Short: "Run untrusted code in isolated Linux sandboxes",
		Long: `sbx creates isolated Linux sandboxes on demand and runs commands in them.

The same binary is the daemon (sbx serve) and the client. The client talks to
the daemon at --host (or SBX_HOST, default ` + sdk.DefaultHost + `) and
authenticates with --token (or SBX_TOKEN; as a fallback the admin token file
$SBX_DATA_DIR/admin.token, default /var/lib/sbx/admin.token).`,
		Example: `  sudo sbx serve &
  sbx create box --image alpine
  sbx exec box -- uname -a
  sbx cp ./main.py box:/workspace/main.py
  sbx rm box`,
		SilenceErrors: true, // run prints errors in one format
		SilenceUsage:  true, // a failed request is not a usage mistake
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &usageError{msg: err.Error()}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.host, "host", "", "daemon URL (default $SBX_HOST or "+sdk.DefaultHost+")")
	pf.StringVar(&g.token, "token", "", "API token (default $SBX_TOKEN or the admin token file)")
	pf.StringVar(&g.caCert, "ca-cert", "", "PEM file of the CA that signed an https daemon's certificate (default $SBX_CA_CERT)")

	root.AddCommand(
		newServeCmd(),
		newAgentCmd(),
		newRunscShimCmd(),
		newCreateCmd(g),
		newListCmd(g),
		newGetCmd(g),
		newRemoveCmd(g),
		newStartCmd(g),
		newStopCmd(g),
		newExecCmd(g),
		newCopyCmd(g),
		newFilesCmd(g), // cp_ls.go
		newImageCmd(g),
		newPortCmd(g), newEgressCmd(g), // ports.go
		newUpdateCmd(g),  // lifecycle.go
		newArchiveCmd(g), // lifecycle.go
		newWaitCmd(g),    // lifecycle.go
		newEventsCmd(g),  // lifecycle.go
		newLogsCmd(g),    // lifecycle.go
		newRunCmd(g),
		newCtxCmd(g),
		newTermCmd(g), newPsCmd(g), newKillCmd(g), newWatchCmd(g), // term.go, ps.go, kill.go, watch.go
		newPauseCmd(g), newResumeCmd(g), newSnapshotCmd(g), newForkCmd(g), newForksCmd(g), // pause.go, snapshot.go, fork.go
		newVersionCmd(), newDoctorCmd(), // version.go, doctor.go
		newStatsCmd(g),         // stats.go
		newInstallServiceCmd(), // install_service.go
		newKeyCmd(g), newTeamCmd(g), newAuditCmd(g),
		newGitCmd(g), // git.go
		newSSHCmd(g), newSSHAccessCmd(g),
		newDesktopCmd(g),
		newVolumeCmd(g), // volume.go
		newSecretCmd(g), // secret.go
		newPoolCmd(g),   // pool.go
		newBackupCmd(g), // backup.go
		newBucketCmd(g), // bucket.go
		newGatewayCmd(), // gateway.go
		newMCPCmd(g),    // mcp.go
	)
	setVersionFlag(root)    // version.go
	addCompletions(root, g) // completion.go
	addFormatFlags(root)    // format_template.go
	return root
}

// client builds an API client from the flags, falling back to the environment.
func (g *globals) client() (*sdk.Client, error) {
	host := g.host
	if host == "" {
		host = os.Getenv("SBX_HOST")
	}
	if host == "" {
		host = sdk.DefaultHost
	}
	token := g.token
	if token == "" {
		var err error
		if token, err = sdk.TokenFromEnv(); err != nil {
			return nil, err
		}
	}
	var opts []sdk.Option
	if file := firstNonEmpty(g.caCert, os.Getenv("SBX_CA_CERT")); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read the CA certificate: %w", err)
		}
		opts = append(opts, sdk.WithCACert(pem))
	}
	return sdk.NewClient(host, token, opts...), nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// outputFlag is the -o/--output flag of commands that print sandboxes or
// images, and the --format that some of them take (format_template.go).
type outputFlag struct {
	format string
	cmd    *cobra.Command
}

func addOutputFlag(cmd *cobra.Command) *outputFlag {
	o := &outputFlag{cmd: cmd}
	cmd.Flags().StringVarP(&o.format, "output", "o", "text", "output format: text or json")
	return o
}

// check rejects an unknown format; commands call it before doing any work.
func (o *outputFlag) check() error {
	switch o.format {
	case "json", "text", "table", "":
	default:
		return usagef("unknown output format %q: use text or json", o.format)
	}
	_, err := o.template()
	return err
}

// template is the command's --format, nil when it has none.
func (o *outputFlag) template() (*itemTemplate, error) {
	if o.cmd == nil {
		return nil, nil
	}
	f := o.cmd.Flags().Lookup("format")
	if f == nil || f.Value.String() == "" {
		return nil, nil
	}
	if o.cmd.Flags().Changed("output") {
		return nil, usagef("--format and -o do not go together")
	}
	return parseFormat(f.Value.String())
}

// print writes v as JSON, with --format, or calls text for the human format.
func (o *outputFlag) print(w io.Writer, v any, text func(io.Writer) error) error {
	if err := o.check(); err != nil {
		return err
	}
	if t, _ := o.template(); t != nil {
		return t.execute(w, v)
	}
	if o.format == "json" {
		return writeJSON(w, v)
	}
	return text(w)
}

// callPrint checks the output flag, makes a client, runs one request and
// prints its result as JSON or with text.
func callPrint[T any](g *globals, out *outputFlag, cmd *cobra.Command, call func(*sdk.Client) (T, error), text func(io.Writer, T) error) error {
	if err := out.check(); err != nil {
		return err
	}
	c, err := g.client()
	if err != nil {
		return err
	}
	v, err := call(c)
	if err != nil {
		return err
	}
	return out.print(cmd.OutOrStdout(), v, func(w io.Writer) error { return text(w, v) })
}

// listPrint is callPrint for a list call: an empty list prints as [] in
// JSON, not null.
func listPrint[T any](g *globals, out *outputFlag, cmd *cobra.Command, list func(*sdk.Client) ([]T, error), text func(io.Writer, []T) error) error {
	return callPrint(g, out, cmd, func(c *sdk.Client) ([]T, error) {
		items, err := list(c)
		if err == nil && items == nil {
			items = []T{}
		}
		return items, err
	}, text)
}

// deleteEach runs del for each argument in turn, printing the argument when
// it succeeds and the error (on stderr) when it fails; the rest still go.
// It stops early only when the command's context ends, and exits 1 when
// any failed.
func deleteEach(g *globals, cmd *cobra.Command, args []string, del func(c *sdk.Client, arg string) error) error {
	c, err := g.client()
	if err != nil {
		return err
	}
	failed := 0
	for _, arg := range args {
		if err := del(c, arg); err != nil {
			if cmd.Context().Err() != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "sbx: %s: %s\n", arg, err)
			failed++
			continue
		}
		fmt.Fprintln(cmd.OutOrStdout(), arg)
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// noSubcommand is the Args of a command that only groups subcommands: an
// argument there is a subcommand cobra did not know.
func noSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return nil
}

// exactArgs is cobra.ExactArgs with a message that names what is missing.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with a message that names what is missing.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s needs %s", cmd.CommandPath(), what)
		}
		return nil
	}
}
