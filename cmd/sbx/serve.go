package main

import (
	"context"
	"os"

	"github.com/sbxhq/sbx/internal/agent"
	"github.com/sbxhq/sbx/internal/daemon"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/runtime/runscshim"
	"github.com/spf13/cobra"
)

const (
	defaultDataDir = "/var/lib/sbx"
	defaultListen  = "127.0.0.1:7423"
	defaultWorkdir = "/workspace"
)

func newServeCmd() *cobra.Command {
	var dataDir, listen, runsc, runscPlatform string
	var nf netFlags
	var lf lifecycleFlags
	var df diskFlags
	var ef e2bFlags
	var logf logFlags // serve_log.go
	var tf tlsFlags   // serve_tls.go
	var mf metricsFlags
	var teamf teamsFlags  // serve_teams.go
	var sdf defaultsFlags // serve_defaults.go
	var dy daytonaFlags   // serve_daytona.go
	var sf sshFlags       // serve_ssh.go
	var uf uiFlags        // serve_ui.go
	var bf blobFlags
	var egf egressHTTPFlags // serve_egress.go
	var af agentFlags       // serve_agent.go
	var kf kubeNodeFlags    // serve_kube.go
	cmd := &cobra.Command{
		Use:   "serve [--data-dir DIR] [--listen ADDR]",
		Short: "Run the sbx daemon",
		Long: `Run the sbx daemon: the HTTP API, the sandbox manager and everything that
keeps sandboxes running. It needs root (it mounts filesystems and runs runc).

State lives under --data-dir (env SBX_DATA_DIR, default ` + defaultDataDir + `).
The API listens on --listen (env SBX_LISTEN, default ` + defaultListen + `).
Flags override the environment. The admin API token is written to
<data-dir>/admin.token; clients on this host read it from there.

The daemon stops on SIGINT or SIGTERM. Running sandboxes keep running and are
picked up again by the next sbx serve.`,
		Example: `  sudo sbx serve
  sudo sbx serve --data-dir /srv/sbx --listen 0.0.0.0:7423
  SBX_DATA_DIR=/tmp/sbx-dev sudo -E sbx serve`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := logf.apply(cmd); err != nil {
				return err
			}
			cfg := daemon.Config{
				DataDir: setting(cmd, "data-dir", dataDir, "SBX_DATA_DIR"),
				Listen:  setting(cmd, "listen", listen, "SBX_LISTEN"),

				Runsc:         setting(cmd, "runsc", runsc, "SBX_RUNSC"),
				RunscPlatform: setting(cmd, "runsc-platform", runscPlatform, "SBX_RUNSC_PLATFORM"),
			}
			if err := nf.apply(cmd, &cfg); err != nil {
				return err
			}
			lf.apply(cmd, &cfg) // serve_lifecycle.go
			// serve_disk.go
			if err := df.apply(cmd, &cfg); err != nil {
				return err
			}
			if err := ef.apply(cmd, &cfg); err != nil {
				return err
			}
			if err := tf.apply(cmd, &cfg); err != nil {
				return err
			}
			mf.apply(cmd, &cfg) // serve_metrics.go
			if err := teamf.apply(&cfg); err != nil {
				return err
			}
			if err := sdf.apply(cmd, &cfg); err != nil {
				return err
			}
			dy.apply(cmd, &cfg)
			af.apply(cmd, &cfg)
			sf.apply(cmd, &cfg)
			if err := uf.apply(cmd, &cfg); err != nil { // serve_ui.go
				return err
			}
			if err := bf.apply(cmd, &cfg); err != nil {
				return err
			}
			if err := egf.apply(cmd, &cfg); err != nil {
				return err
			}
			if err := kf.apply(cmd, &cfg); err != nil { // serve_kube.go
				return err
			}
			return daemon.Run(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir, "directory for the store, images and sandboxes (env SBX_DATA_DIR)")
	cmd.Flags().StringVar(&listen, "listen", defaultListen, "address the HTTP API listens on (env SBX_LISTEN)")
	cmd.Flags().StringVar(&runsc, "runsc", "", "runsc binary of class gvisor (env SBX_RUNSC; default: "+runtime.BundledRunsc+", installed by scripts/setup.sh, else Debian's runsc on PATH with a warning)")
	cmd.Flags().StringVar(&runscPlatform, "runsc-platform", "", `gVisor platform: "systrap" (default where runsc has it: much faster), "ptrace" (default for Debian 12's runsc, which has nothing else) or "kvm" (env SBX_RUNSC_PLATFORM)`)
	nf.register(cmd)
	lf.register(cmd)
	df.register(cmd)
	ef.register(cmd)
	logf.register(cmd)
	tf.register(cmd)
	mf.register(cmd)
	teamf.register(cmd)
	sdf.register(cmd)
	dy.register(cmd)
	sf.register(cmd)
	uf.register(cmd)
	bf.register(cmd)
	egf.register(cmd)
	af.register(cmd)
	kf.register(cmd)
	return cmd
}

// setting picks a flag's value when it was given, else the environment
// variable when set, else the flag's default.
func setting(cmd *cobra.Command, flag, value, env string) string {
	if cmd.Flags().Changed(flag) {
		return value
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return value
}

func newRunscShimCmd() *cobra.Command {
	return &cobra.Command{
		Use:   runscshim.Command + " RUNSC [ARG...]",
		Short: "Run runsc with an empty /proc/sys/net (used by the daemon, not by hand)",
		Long: `Run a runsc command in a private mount namespace whose /proc/sys/net is
empty, so that Debian 12's runsc accepts a sandbox's network namespace on newer
kernels. The daemon starts it; see internal/runtime/runsc_netns.go.`,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return runscshim.Run(args)
		},
	}
}

func newAgentCmd() *cobra.Command {
	var socket string
	cmd := &cobra.Command{
		Use:   "agent --socket PATH",
		Short: "Run the in-sandbox agent (started by the daemon, not by hand)",
		Long: `Run the agent that is PID 1 inside every sandbox instance. The daemon starts
it; it serves the toolbox (exec, files, …) on the unix socket at --socket.
Commands run in $SBX_WORKDIR (default ` + defaultWorkdir + `) unless told otherwise.`,
		Example: `  sbx agent --socket /run/sbx/agent.sock`,
		Hidden:  true,
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if socket == "" {
				return usagef("--socket is required")
			}
			cwd := os.Getenv("SBX_WORKDIR")
			if cwd == "" {
				cwd = defaultWorkdir
			}
			// The agent handles SIGTERM itself (it gives processes a grace
			// period); a cancelled context would make it kill them at once.
			ctx := context.WithoutCancel(cmd.Context())
			return agent.Run(ctx, agent.Config{Socket: socket, DefaultCwd: cwd})
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "unix socket to serve the toolbox on")
	return cmd
}
