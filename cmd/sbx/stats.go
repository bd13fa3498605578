package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sbxhq/sbx/sdk"
)

func newStatsCmd(g *globals) *cobra.Command {
	var noStream bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "stats [NAME...]",
		Short: "Show what sandboxes use: CPU, memory, pids, disk, network (live)",
		Long: `Show a live table of what sandboxes use, refreshed every --interval, like
"docker stats": CPU (100% is one core), memory and its limit, processes and
their limit, disk used by the sandbox's own writes, and network bytes.
Without NAME it shows every started sandbox. Reading stats never starts a
stopped sandbox (it shows zeros) and does not count as activity.`,
		Example: `  sbx stats
  sbx stats box other --no-stream
  sbx stats box --no-stream -o json`,
	}
	out := addOutputFlag(cmd)
	cmd.Flags().BoolVar(&noStream, "no-stream", false, "print once and exit")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "time between refreshes")
	cmd.RunE = func(cmd *cobra.Command, names []string) error {
		if err := out.check(); err != nil {
			return err
		}
		if interval < 100*time.Millisecond {
			return usagef("--interval must be at least 100ms, got %s", interval)
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		ctx, w := cmd.Context(), cmd.OutOrStdout()
		prev := map[string]sdk.SandboxStats{}
		if noStream {
			// Two reads a moment apart, so the CPU column has a value.
			if _, err := readStats(ctx, c, names, prev); err != nil {
				return err
			}
			interval = 500 * time.Millisecond
		}
		clear := !noStream && out.format != "json" && isTerminal(w)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for first := !noStream; ; first = false {
			if !first {
				select {
				case <-ctx.Done():
					return nil
				case <-tick.C:
				}
			}
			list, err := readStats(ctx, c, names, prev)
			if err != nil {
				return err
			}
			if clear {
				fmt.Fprint(w, "\033[H\033[2J")
			}
			if err := out.print(w, list, func(w io.Writer) error { return printStats(w, list) }); err != nil {
				return err
			}
			if noStream {
				return nil
			}
		}
	}
	return cmd
}

// readStats reads the stats of names (every started sandbox when empty) and
// fills in CPUPercent from the previous read of each, which it replaces.
func readStats(ctx context.Context, c *sdk.Client, names []string, prev map[string]sdk.SandboxStats) ([]sdk.SandboxStats, error) {
	if len(names) == 0 {
		list, err := c.ListSandboxes(ctx, sdk.ListOptions{State: string(sdk.StateStarted)})
		if err != nil {
			return nil, err
		}
		for _, sb := range list {
			names = append(names, sb.ID)
		}
	}
	out := make([]sdk.SandboxStats, 0, len(names))
	for _, n := range names {
		st, err := c.Stats(ctx, n)
		if err != nil {
			if sdk.IsNotFound(err) && len(names) > 1 {
				continue // deleted between the list and now
			}
			return nil, err
		}
		if p, ok := prev[st.ID]; ok && st.Time.After(p.Time) && st.CPUNanos >= p.CPUNanos {
			pct := float64(st.CPUNanos-p.CPUNanos) / float64(st.Time.Sub(p.Time).Nanoseconds()) * 100
			st.CPUPercent = &pct
		}
		prev[st.ID] = *st
		out = append(out, *st)
	}
	return out, nil
}

func printStats(w io.Writer, list []sdk.SandboxStats) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSTATE\tCPU %\tMEM USAGE / LIMIT\tMEM %\tPIDS\tDISK\tNET RX / TX")
	for _, s := range list {
		name := s.Name
		if name == "" {
			name = s.ID
		}
		cpu := "-"
		if s.CPUPercent != nil {
			cpu = fmt.Sprintf("%.1f%%", *s.CPUPercent)
		}
		memPct := "-"
		if s.MemoryLimitBytes > 0 {
			memPct = fmt.Sprintf("%.1f%%", float64(s.MemoryBytes)/float64(s.MemoryLimitBytes)*100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s / %s\t%s\t%s\t%s\t%s / %s\n", name, s.State, cpu,
			formatBytes(int64(s.MemoryBytes)), limitText(s.MemoryLimitBytes), memPct,
			pidsText(s), formatBytes(int64(s.DiskBytes)),
			formatBytes(int64(s.NetRxBytes)), formatBytes(int64(s.NetTxBytes)))
	}
	return tw.Flush()
}

func limitText(n uint64) string {
	if n == 0 {
		return "-"
	}
	return formatBytes(int64(n))
}

func pidsText(s sdk.SandboxStats) string {
	if s.PidsLimit == 0 {
		return fmt.Sprint(s.Pids)
	}
	return fmt.Sprintf("%d / %d", s.Pids, s.PidsLimit)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
