package main

import (
	"github.com/sbxhq/sbx/sdk"
	"github.com/spf13/cobra"
)

// limitFlags are the resize and relabel flags of sbx update.
type limitFlags struct {
	cpu         float64
	memory, pid int
	labels      []string
}

func addLimitFlags(cmd *cobra.Command) *limitFlags {
	l := &limitFlags{}
	f := cmd.Flags()
	f.Float64Var(&l.cpu, "cpu", 0, "new CPU limit in CPUs, e.g. 0.5")
	mibVar(f, &l.memory, "memory", "new memory limit")
	f.IntVar(&l.pid, "pids", 0, "new limit on the number of processes")
	f.StringArrayVar(&l.labels, "label", nil, "label KEY=VALUE; the labels given replace all of the sandbox's labels (repeatable)")
	return l
}

// apply puts the flags given into req; flags left out keep their value.
func (l *limitFlags) apply(cmd *cobra.Command, req *sdk.UpdateSandboxRequest) error {
	changed := cmd.Flags().Changed
	if changed("cpu") {
		req.CPU = &l.cpu
	}
	if changed("memory") {
		req.MemoryMiB = &l.memory
	}
	if changed("pids") {
		req.PidsLimit = &l.pid
	}
	if changed("label") {
		labels, err := parseKV("--label", l.labels)
		if err != nil {
			return err
		}
		req.Labels = labels
	}
	return nil
}
