package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/packaging"
)

// unitPath is where install-service writes the unit, below --root.
const unitPath = "/etc/systemd/system/sbx.service"

// defaultEnvFile is the EnvironmentFile of the shipped unit.
const defaultEnvFile = "/etc/sbx/sbx.env"

// serviceOptions are what install-service puts into the unit.
type serviceOptions struct {
	binary   string   // absolute path of the sbx binary ExecStart runs
	dataDir  string   // --data-dir of sbx serve; "" leaves it to the env file or the default
	listen   string   // --listen of sbx serve; "" likewise
	envFile  string   // EnvironmentFile (optional: "-" prefixed in the unit)
	serveArg []string // more flags of sbx serve, after "--"
}

func newInstallServiceCmd() *cobra.Command {
	var o serviceOptions
	var root string
	var print, force bool
	cmd := &cobra.Command{
		Use:   "install-service [flags] [-- SERVE-FLAGS...]",
		Short: "Install sbx serve as a systemd service",
		Long: `Write the systemd unit of sbx serve to ` + unitPath + `.
ExecStart runs this sbx binary (or --binary) as "sbx serve" with --data-dir,
--listen and any flags of sbx serve given after "--". Settings can also go
into the environment file (--env-file, default ` + defaultEnvFile + `) as SBX_*
variables; flags in ExecStart win over them. Sandboxes run the sbx-agent
binary next to that sbx: install both there, as scripts/setup.sh does (a
warning says when it is missing).

The unit stops only the daemon (KillMode=process): stopping or restarting
the service leaves every sandbox running, and the next daemon reattaches.

An existing unit that differs is left alone unless --force is given; --print
writes the unit to standard output instead.`,
		Example: `  sudo sbx install-service --data-dir /srv/sbx --listen 0.0.0.0:7423 -- --tls-cert /etc/sbx/cert.pem --tls-key /etc/sbx/key.pem
  sudo systemctl daemon-reload && sudo systemctl enable --now sbx
  sbx install-service --print`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.serveArg = args
			if o.binary == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find this sbx binary (pass --binary): %w", err)
				}
				if o.binary, err = filepath.EvalSymlinks(exe); err != nil {
					return fmt.Errorf("find this sbx binary (pass --binary): %w", err)
				}
			}
			unit, err := renderUnit(o)
			if err != nil {
				return err
			}
			if print {
				_, err := fmt.Fprint(cmd.OutOrStdout(), unit)
				return err
			}
			warnNoAgent(cmd, o) // install_service_agent.go
			return installUnit(cmd, filepath.Join(root, unitPath), unit, force)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.binary, "binary", "", "sbx binary the service runs (default: this one)")
	f.StringVar(&o.dataDir, "data-dir", "", "--data-dir of sbx serve (default: SBX_DATA_DIR from the env file, else "+defaultDataDir+")")
	f.StringVar(&o.listen, "listen", "", "--listen of sbx serve (default: SBX_LISTEN from the env file, else "+defaultListen+")")
	f.StringVar(&o.envFile, "env-file", defaultEnvFile, "environment file of the service, SBX_* variables one a line (may be missing)")
	f.BoolVar(&print, "print", false, "print the unit instead of writing it")
	f.BoolVar(&force, "force", false, "replace an existing unit that differs")
	f.StringVar(&root, "root", "/", "write below this directory instead of / (for tests and image builds)")
	return cmd
}

// renderUnit fills the shipped unit's ExecStart and EnvironmentFile from o.
// The serve flags are checked by sbx serve's own parser, so a typo fails
// here and not at the service's first start.
func renderUnit(o serviceOptions) (string, error) {
	if !filepath.IsAbs(o.binary) {
		return "", usagef("--binary must be an absolute path, got %q", o.binary)
	}
	if o.envFile != "" && !filepath.IsAbs(o.envFile) {
		return "", usagef("--env-file must be an absolute path, got %q", o.envFile)
	}
	if o.dataDir != "" && !filepath.IsAbs(o.dataDir) {
		return "", usagef("--data-dir must be an absolute path, got %q", o.dataDir)
	}
	args := []string{o.binary, "serve"}
	if o.dataDir != "" {
		args = append(args, "--data-dir", o.dataDir)
	}
	if o.listen != "" {
		args = append(args, "--listen", o.listen)
	}
	args = append(args, o.serveArg...)
	serve := newServeCmd()
	if err := serve.ParseFlags(args[2:]); err != nil {
		return "", usagef("bad flags for sbx serve: %v", err)
	}
	if rest := serve.Flags().Args(); len(rest) > 0 {
		return "", usagef("sbx serve takes no arguments, got %q", rest)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quoteUnitArg(a)
	}
	var envLine string
	if o.envFile != "" {
		envLine = "EnvironmentFile=-" + o.envFile
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(packaging.SystemdUnit, "\n") {
		switch {
		case strings.HasPrefix(line, "ExecStart="):
			line = "ExecStart=" + strings.Join(quoted, " ") + "\n"
		case strings.HasPrefix(line, "EnvironmentFile="):
			if envLine == "" {
				continue
			}
			line = envLine + "\n"
		}
		out.WriteString(line)
	}
	return out.String(), nil
}

// quoteUnitArg writes one ExecStart argument so systemd reads it back as
// is: % and $ are systemd's specifier and variable signs, and an argument
// with blanks, quotes or backslashes goes in double quotes.
func quoteUnitArg(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	s = strings.ReplaceAll(s, "$", "$$")
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\;") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// installUnit writes unit to path unless a different unit is there and
// force is off, and says what the operator runs next.
func installUnit(cmd *cobra.Command, path, unit string, force bool) error {
	out := cmd.OutOrStdout()
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, []byte(unit)):
		fmt.Fprintf(out, "%s is up to date.\n", path)
		return nil
	case err == nil && !force:
		return fmt.Errorf("%s exists and differs from the unit sbx would write; compare with `sbx install-service --print` and pass --force to replace it", path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("read the existing unit: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	// Written beside and renamed, so systemd never reads half a unit.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(unit), 0o644); err != nil {
		return fmt.Errorf("write the unit: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the unit: %w", err)
	}
	fmt.Fprintf(out, "Wrote %s.\nStart it now and at boot with:\n  systemctl daemon-reload && systemctl enable --now sbx\n", path)
	if old != nil {
		fmt.Fprintln(out, "If sbx is running as the old unit, also: systemctl restart sbx (sandboxes keep running).")
	}
	return nil
}
