package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/doctor"
)

func newVersionCmd() *cobra.Command {
	var out *outputFlag
	cmd := &cobra.Command{
		Use:   "version [-o json]",
		Short: "Print the version of sbx and of the runc and runsc it runs",
		Long: `Print the version of sbx (semver, the same for the API document and the
SDKs), the commit it was built from (whether the tree had uncommitted changes,
the commit's time, as the Go toolchain embedded them), the Go version it was
built with, and the first line of --version of the runc on PATH and of the
runsc sbx serve runs: $SBX_RUNSC if set, else sbx's own (/usr/local/lib/sbx/runsc or the
package's /usr/lib/sbx/runsc), else the one on PATH ("not found" when
missing). sbx --version prints the same text.`,
		Example: `  sbx version
  sbx version -o json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			v := doctor.Version(cmd.Context(), doctor.LocalHost())
			return out.print(cmd.OutOrStdout(), v, func(w io.Writer) error {
				_, err := io.WriteString(w, versionText(v))
				return err
			})
		},
	}
	out = addOutputFlag(cmd)
	return cmd
}

func versionText(v doctor.VersionInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sbx %s\n", v.Version)
	if v.Commit != "" {
		dirty := ""
		if v.Modified {
			dirty = " (modified)"
		}
		fmt.Fprintf(&b, "commit: %s%s %s\n", v.Commit, dirty, v.CommitTime)
	}
	fmt.Fprintf(&b, "go: %s\nrunc: %s\nrunsc: %s\n", v.Go, v.Runc, v.Runsc)
	return b.String()
}

// setVersionFlag makes sbx --version print what sbx version prints. The
// template runs only when --version is given, so other commands never run
// runc and runsc to fill it.
func setVersionFlag(root *cobra.Command) {
	root.Version = "-" // any non-empty value makes cobra add --version
	cobra.AddTemplateFunc("sbxVersion", func() string {
		return versionText(doctor.Version(context.Background(), doctor.LocalHost()))
	})
	root.SetVersionTemplate("{{sbxVersion}}")
}
