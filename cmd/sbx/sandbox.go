package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

func newCreateCmd(g *globals) *cobra.Command {
	var (
		req          sdk.CreateSandboxRequest
		envs, labels []string
	)
	cmd := &cobra.Command{
		Use:   "create [NAME] [flags]",
		Short: "Create and start a sandbox",
		Long: `Create a sandbox and start it. NAME is optional; without it the sandbox is
known by its id (sbx-…). A name that is already taken is an error.

Limits left out take the daemon's defaults: --cpu in CPUs (fractions allowed),
--memory in MiB, --pids as the most processes at once.`,
		Example: `  sbx create
  sbx create box --image alpine
  sbx create grader --image python:3.12 --env PYTHONUNBUFFERED=1 --label team=ml \
      --cpu 0.5 --memory 512 --pids 256 --workdir /workspace
  sbx create box -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("sbx create takes at most one NAME (got %d arguments)", len(args))
			}
			return nil
		},
	}
	out := addOutputFlag(cmd)
	f := cmd.Flags()
	f.StringVar(&req.Image, "image", "", "image to start from (default: the daemon's base image)")
	f.StringArrayVar(&envs, "env", nil, "environment variable KEY=VALUE (repeatable)")
	f.StringArrayVar(&labels, "label", nil, "label KEY=VALUE to find the sandbox by (repeatable)")
	f.Float64Var(&req.CPU, "cpu", 0, "CPU limit in CPUs, e.g. 0.5")
	mibVar(f, &req.MemoryMiB, "memory", "memory limit")
	f.IntVar(&req.PidsLimit, "pids", 0, "limit on the number of processes")
	mibVar(f, &req.DiskMiB, "disk", "size of the sandbox's own filesystem for its writes (default: no limit)")
	f.StringVar(&req.Workdir, "workdir", "", "directory commands run in (default /workspace)")
	f.StringVar(&req.Class, "class", "", "isolation: container (runc, default) or gvisor (runsc: pause with memory, memory snapshots, fork)")
	f.StringVar(&req.Snapshot, "snapshot", "", "start from this snapshot instead of an image (see sbx snapshot)")
	f.StringVar(&req.Pool, "pool", "", "take a started instance from this warm pool; its template fills the flags left out (see sbx pool)")
	policy := addPolicyFlags(cmd, true) // lifecycle.go
	netFlags := addNetworkFlags(cmd)    // ports.go
	var volumes []string
	f.StringArrayVar(&volumes, "volume", nil, "mount a volume (sbx volume create) as NAME:/path or NAME:/path:ro (repeatable)")
	buckets := addBucketFlags(cmd) // bucket.go
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.check(); err != nil {
			return err
		}
		var err error
		if req.Env, err = parseKV("--env", envs); err != nil {
			return err
		}
		if req.Labels, err = parseKV("--label", labels); err != nil {
			return err
		}
		if err := policy.applyCreate(cmd, &req); err != nil {
			return err
		}
		if err := netFlags.applyCreate(&req); err != nil {
			return err
		}
		if req.Volumes, err = parseVolumeFlags(volumes); err != nil { // volume.go
			return err
		}
		if err := buckets.applyCreate(&req); err != nil {
			return err
		}
		if len(args) == 1 {
			req.Name = args[0]
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		sb, err := c.CreateSandbox(cmd.Context(), req)
		if err != nil {
			return err
		}
		return printOne(out, cmd, sb)
	}
	return cmd
}

func newListCmd(g *globals) *cobra.Command {
	var (
		opts    sdk.ListOptions
		labels  []string
		filters []string
		quiet   bool
	)
	cmd := &cobra.Command{
		Use:     "ls [--state STATE] [--label KEY=VALUE]… [-q]",
		Aliases: []string{"list"},
		Short:   "List sandboxes",
		Long: `List sandboxes, optionally only those in one state (creating, starting,
started, stopping, stopped, deleting, error) or carrying all the given labels.
As with docker ps, --filter state=STATE (or status=STATE) and
--filter label=KEY=VALUE filter too, and -q prints only the ids.`,
		Example: `  sbx ls
  sbx ls --state started
  sbx ls --label team=ml --label env=dev -o json
  sbx rm $(sbx ls -q --filter label=env=dev)`,
		Args: exactArgs(0, "no arguments (filter with --state and --label)"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&opts.State, "state", "", "only sandboxes in this state")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "only sandboxes with label KEY=VALUE (repeatable)")
	cmd.Flags().StringArrayVarP(&filters, "filter", "f", nil, "docker's form of the filters: state=STATE, status=STATE or label=KEY=VALUE (repeatable)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the ids, one a line")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.check(); err != nil {
			return err
		}
		if quiet && (cmd.Flags().Changed("output") || cmd.Flags().Changed("format")) {
			return usagef("-q goes with neither -o nor --format")
		}
		for _, f := range filters {
			key, value, _ := strings.Cut(f, "=")
			switch key {
			case "label":
				labels = append(labels, value)
			case "state", "status":
				if opts.State != "" && opts.State != value {
					return usagef("--filter %s: only one state at a time, got %q and %q", f, opts.State, value)
				}
				opts.State = value
			default:
				return usagef("--filter %q: sbx ls filters by state, status or label", f)
			}
		}
		var err error
		if opts.Labels, err = parseKV("--label", labels); err != nil {
			return err
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		list, err := c.ListSandboxes(cmd.Context(), opts)
		if err != nil {
			return err
		}
		if list == nil {
			list = []sdk.Sandbox{} // "[]", not "null", in JSON
		}
		if quiet {
			for _, sb := range list {
				fmt.Fprintln(cmd.OutOrStdout(), sb.ID)
			}
			return nil
		}
		return out.print(cmd.OutOrStdout(), list, func(w io.Writer) error { return printSandboxes(w, list) })
	}
	return cmd
}

func newGetCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "get NAME",
		Aliases: []string{"inspect"},
		Short:   "Show one sandbox",
		Long:    `Show a sandbox's state, image, limits, labels and times. NAME may be a name or an id.`,
		Example: `  sbx get box
  sbx get sbx-5f3a9c -o json`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return sandboxCall(g, out, cmd, func(c *sdk.Client) (*sdk.Sandbox, error) {
			return c.GetSandbox(cmd.Context(), args[0])
		})
	}
	return cmd
}

func newStartCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "start NAME",
		Short: "Start a stopped sandbox",
		Long: `Start a stopped sandbox's instance again. Its filesystem is as it was when it
stopped; processes that ran before do not come back.`,
		Example: `  sbx start box`,
		Args:    exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return sandboxCall(g, out, cmd, func(c *sdk.Client) (*sdk.Sandbox, error) {
			return c.StartSandbox(cmd.Context(), args[0])
		})
	}
	return cmd
}

func newStopCmd(g *globals) *cobra.Command {
	var (
		force bool
		grace int
	)
	cmd := &cobra.Command{
		Use:   "stop NAME [--force] [--grace SECONDS]",
		Short: "Stop a sandbox, keeping its filesystem",
		Long: `Stop a sandbox's instance. Its processes get SIGTERM, then SIGKILL after the
grace period (--grace, default the daemon's); --force kills them at once. The
sandbox keeps its filesystem and can be started again with sbx start.`,
		Example: `  sbx stop box
  sbx stop box --grace 30
  sbx stop box --force`,
		Args: exactArgs(1, "exactly one NAME"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().BoolVar(&force, "force", false, "kill the processes at once")
	cmd.Flags().IntVar(&grace, "grace", 0, "seconds between SIGTERM and SIGKILL")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts := sdk.StopOptions{Force: force}
		if cmd.Flags().Changed("grace") {
			if grace < 0 {
				return usagef("--grace must be 0 or more seconds, got %d", grace)
			}
			opts.GraceSeconds = &grace
		}
		return sandboxCall(g, out, cmd, func(c *sdk.Client) (*sdk.Sandbox, error) {
			return c.StopSandbox(cmd.Context(), args[0], opts)
		})
	}
	return cmd
}

func newRemoveCmd(g *globals) *cobra.Command {
	var noWait, cascade bool
	cmd := &cobra.Command{
		Use:     "rm NAME…",
		Aliases: []string{"delete"},
		Short:   "Delete sandboxes",
		Long: `Delete sandboxes and everything they own: instance, filesystem, record.
Each NAME is deleted in turn; a failure is reported and the rest still go.
Without --no-wait sbx waits until each sandbox is gone.`,
		Example: `  sbx rm box
  sbx rm box1 box2 --no-wait`,
		Args: minArgs(1, "at least one NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteEach(g, cmd, args, func(c *sdk.Client, name string) error {
				if cascade {
					return c.DeleteSandboxCascade(cmd.Context(), name, !noWait) // with its forks
				}
				return c.DeleteSandbox(cmd.Context(), name, !noWait)
			})
		},
	}
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "return once deletion has begun")
	cmd.Flags().BoolVar(&cascade, "cascade", false, "also delete the sandbox's forks, their forks and so on")
	return cmd
}

// sandboxCall runs one request that returns a sandbox and prints the result.
func sandboxCall(g *globals, out *outputFlag, cmd *cobra.Command, call func(*sdk.Client) (*sdk.Sandbox, error)) error {
	return callPrint(g, out, cmd, call, printSandbox)
}

func printOne(out *outputFlag, cmd *cobra.Command, sb *sdk.Sandbox) error {
	return out.print(cmd.OutOrStdout(), sb, func(w io.Writer) error { return printSandbox(w, sb) })
}
