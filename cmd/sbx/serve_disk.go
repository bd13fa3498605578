package main

import (
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// defaultDiskReserveMiB is the free space the data dir keeps by default:
// enough for the operator to notice a filling disk and act.
const defaultDiskReserveMiB = 1024

// diskFlags are the flags of sbx serve that protect the data dir's disk.
type diskFlags struct {
	reserveMiB int
}

func (f *diskFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.reserveMiB, "disk-reserve-mib", defaultDiskReserveMiB,
		"free space (MiB) the data dir's disk keeps: below it, creating or starting a sandbox and importing or pulling an image answer 507 INSUFFICIENT_STORAGE; 0 turns the check off (env SBX_DISK_RESERVE_MIB)")
}

func (f *diskFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	n := f.reserveMiB
	if v := os.Getenv("SBX_DISK_RESERVE_MIB"); v != "" && !cmd.Flags().Changed("disk-reserve-mib") {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			return usagef("SBX_DISK_RESERVE_MIB must be a whole number of MiB, got %q", v)
		}
	}
	if n < 0 {
		return usagef("--disk-reserve-mib must be 0 or more, got %d", n)
	}
	cfg.DiskReserveMiB = n
	return nil
}
