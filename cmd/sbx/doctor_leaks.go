package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/census"
)

// leakReport is sbx doctor --leaks's answer: what sbx owns on this host for
// one data dir (internal/census), and what belongs to no sandbox of it.
type leakReport struct {
	DataDir   string         `json:"dataDir"`
	DaemonPID int            `json:"daemonPid"` // 0: sbx serve is not running
	Census    *census.Census `json:"census"`
	Leftovers *census.Census `json:"leftovers"`
}

// doctorLeaks prints the census of dataDir's daemon and its leftovers:
// processes, cgroups, /run/sbx mounts and id ranges of sandboxes the data
// dir does not hold. Leftovers make it exit 1.
func doctorLeaks(cmd *cobra.Command, out *outputFlag, dataDir, bridge, subnet string) error {
	pid := census.DaemonPID(dataDir)
	r := leakReport{DataDir: dataDir, DaemonPID: pid,
		Census:    census.Take(census.Scope{DataDir: dataDir, Bridge: bridge, Subnet: subnet, PID: pid}),
		Leftovers: census.Leftovers(dataDir)}
	if err := out.print(cmd.OutOrStdout(), r, func(w io.Writer) error { return printLeaks(w, r) }); err != nil {
		return err
	}
	if len(census.Diff(&census.Census{}, r.Leftovers)) > 0 {
		return &exitError{code: 1}
	}
	return nil
}

func printLeaks(w io.Writer, r leakReport) error {
	tw := newTable(w)
	c := r.Census
	named := func(what string, items []string) {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", what, len(items), sample(items))
	}
	count := func(what string, n int64) { fmt.Fprintf(tw, "%s\t%d\t\n", what, n) }
	fmt.Fprintf(tw, "WHAT\tCOUNT\tITEMS\n")
	named("processes", c.Processes)
	named("cgroups", c.Cgroups)
	named("mounts", c.Mounts)
	named("fuse mounts", c.FUSE)
	named("loop devices", c.Loops)
	named("links", c.Links)
	named("nftables tables", c.NftTables)
	count("nftables sets", int64(c.NftSets))
	count("nftables elements", int64(c.NftElements))
	count("conntrack entries", int64(c.Conntrack))
	named("user id ranges", c.IDRanges)
	count("files in the data dir", int64(c.Files))
	if r.DaemonPID > 0 {
		count("daemon fds", int64(c.FDs))
		count("daemon threads", int64(c.Threads))
		count("daemon rss MiB", c.RSSBytes>>20)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.DaemonPID == 0 {
		fmt.Fprintf(w, "sbx serve of %s is not running: every process, cgroup, mount, loop device and veth above is left over\n", r.DataDir)
	}
	left := census.Diff(&census.Census{}, r.Leftovers)
	if len(left) == 0 {
		fmt.Fprintln(w, "leftovers: none (nothing of a sandbox the data dir does not hold)")
		return nil
	}
	fmt.Fprintln(w, "leftovers of sandboxes the data dir does not hold (another daemon's on this host, or leaked):")
	for _, ch := range left {
		fmt.Fprintf(w, "  %s: %s\n", ch.What, strings.Join(ch.Added, ", "))
	}
	return nil
}

// sample is the first few items.
func sample(items []string) string {
	const n = 4
	if len(items) > n {
		return strings.Join(items[:n], ", ") + fmt.Sprintf(", … (%d more)", len(items)-n)
	}
	return strings.Join(items, ", ")
}
