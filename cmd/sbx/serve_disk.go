package main

import (
	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
	"github.com/sbxhq/sbx/internal/sandbox"
)

// defaultDiskReserveMiB is the free space the data dir keeps by default:
// enough for the operator to notice a filling disk and act.
const defaultDiskReserveMiB = 1024

// defaultDiskMiB is the disk of a sandbox whose create names none: room
// for a toolchain and a build, and a bound on what one sandbox can write.
const defaultDiskMiB = 10240

// diskFlags are the flags of sbx serve that protect the data dir's disk.
type diskFlags struct {
	reserveMiB int
	defaultMiB int
}

func (f *diskFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.reserveMiB, "disk-reserve-mib", defaultDiskReserveMiB,
		"free space (MiB) the data dir's disk keeps: below it, creating or starting a sandbox and importing or pulling an image answer 507 INSUFFICIENT_STORAGE; 0 turns the check off (env SBX_DISK_RESERVE_MIB)")
	cmd.Flags().IntVar(&f.defaultMiB, "default-disk-mib", defaultDiskMiB,
		"disk (MiB) of a sandbox whose create names no diskMiB: its own sparse filesystem, at most what the data disk has free above the reserve and beyond what other sandboxes' disks may grow by (at least 16); 0: such sandboxes write to the data dir unbounded (env SBX_DEFAULT_DISK_MIB)")
}

func (f *diskFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	n, err := intSetting(cmd, "disk-reserve-mib", f.reserveMiB, "SBX_DISK_RESERVE_MIB")
	if err != nil {
		return err
	}
	if n < 0 {
		return usagef("--disk-reserve-mib must be 0 or more, got %d", n)
	}
	cfg.DiskReserveMiB = n
	if n, err = intSetting(cmd, "default-disk-mib", f.defaultMiB, "SBX_DEFAULT_DISK_MIB"); err != nil {
		return err
	}
	if err := sandbox.ValidateDefaults(sandbox.Defaults{DiskMiB: n}); err != nil {
		return usagef("--default-disk-mib: %v (0: no limit)", err)
	}
	cfg.DefaultDiskMiB = n
	return nil
}
