package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
	"github.com/sbxhq/sbx/internal/doctor"
	"github.com/sbxhq/sbx/internal/network"
)

func newDoctorCmd() *cobra.Command {
	var dataDir, bridge, subnet, config string
	var leaks bool
	var floorAllow, floorDeny []string
	var df diskFlags
	var out *outputFlag
	cmd := &cobra.Command{
		Use:   "doctor [--data-dir DIR] [--subnet CIDR] [-o json]",
		Short: "Check that this host has what sbx serve needs, and say how to fix what it lacks",
		Long: `Check this host for sbx serve: root; the kernel's overlayfs, cgroup
controllers and namespaces; runc, runsc (and that it runs), nft, ip, mkfs.ext4
and the static busybox the base image is made from; IPv4 forwarding; that the
sandbox subnet overlaps no host route; free space and inodes of the data dir's
disk against the disk reserve; the store's schema version (read only: a
database written by a newer sbx is an error); the clock; and the network
floor no sandbox policy lifts (link-local and cloud metadata, private and
loopback ranges, the host's networks), with the operator's
--egress-allow-private and --egress-deny.

Prints one line per check: ok, warn (sbx runs, a feature may not) or fail,
with how to fix it. Exits 1 when a check fails, else 0. Run it as root, with
the --data-dir, --subnet, --bridge and --disk-reserve-mib that sbx serve
uses (the same defaults and environment variables), and --config to check
sbx serve's config file.

With --leaks it instead counts what sbx owns on this host for the data dir
(processes, cgroups, mounts, FUSE mounts, loop devices, the bridge and its
veths, the nftables table with its sets and elements, tracked connections of
the subnet, user id ranges, files, and the daemon's fds, threads and memory)
and lists leftovers: processes, cgroups, mounts and id ranges of sandboxes
the data dir does not hold. Exits 1 when there are leftovers.`,
		Example: `  sudo sbx doctor
  sudo sbx doctor --data-dir /srv/sbx --subnet 10.99.0.0/16
  sudo sbx doctor -o json
  sudo sbx doctor --config /etc/sbx/config.json
  sudo sbx doctor --leaks`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			var dcfg daemon.Config
			if err := df.apply(cmd, &dcfg); err != nil { // serve_disk.go
				return err
			}
			dir := setting(cmd, "data-dir", dataDir, "SBX_DATA_DIR")
			if leaks {
				return doctorLeaks(cmd, out, dir, bridge, setting(cmd, "subnet", subnet, "SBX_SUBNET")) // doctor_leaks.go
			}
			cfg := doctor.Config{
				DataDir:          dir,
				StorePath:        filepath.Join(dir, daemon.StoreFile),
				Bridge:           bridge,
				Subnet:           setting(cmd, "subnet", subnet, "SBX_SUBNET"),
				DiskReserveBytes: uint64(dcfg.DiskReserveMiB) << 20,
			}
			results := doctor.Run(cmd.Context(), doctor.LocalHost(), cfg)
			if path := setting(cmd, "config", config, "SBX_CONFIG"); path != "" {
				results = append(results, checkConfigFile(path)) // serve_defaults.go
			}
			results = append(results, checkFloor(floorSettings(cmd, floorAllow, floorDeny))) // doctor_floor.go
			if err := out.print(cmd.OutOrStdout(), results, func(w io.Writer) error { return printDoctor(w, results) }); err != nil {
				return err
			}
			if doctor.Failed(results) {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dataDir, "data-dir", defaultDataDir, "sbx serve's data dir (env SBX_DATA_DIR)")
	fl.StringVar(&subnet, "subnet", network.DefaultSubnet, "sbx serve's sandbox subnet (env SBX_SUBNET)")
	fl.StringVar(&bridge, "bridge", network.DefaultBridge, "sbx serve's bridge (its own routes do not count as overlaps)")
	fl.BoolVar(&leaks, "leaks", false, "count what sbx owns on this host and list leftovers instead of checking the host")
	fl.StringVar(&config, "config", "", "sbx serve's config file: checked as sbx serve would (env SBX_CONFIG)")
	fl.StringSliceVar(&floorAllow, "egress-allow-private", nil, "sbx serve's ranges lifted out of the network floor (env SBX_EGRESS_ALLOW_PRIVATE)")
	fl.StringSliceVar(&floorDeny, "egress-deny", nil, "sbx serve's ranges added to the network floor (env SBX_EGRESS_DENY)")
	df.register(cmd)
	out = addOutputFlag(cmd)
	return cmd
}

// printDoctor writes one line per check: status, check, detail and fix.
func printDoctor(w io.Writer, results []doctor.Result) error {
	tw := newTable(w)
	for _, r := range results {
		line := r.Detail
		if r.Fix != "" {
			line += "; fix: " + r.Fix
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Status, r.Check, line)
	}
	return tw.Flush()
}
