package main

import (
	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// sshFlags are the flags of sbx serve that run the SSH gateway.
type sshFlags struct {
	listen string
}

func (f *sshFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.listen, "ssh-listen", "", "address the SSH gateway listens on, e.g. 0.0.0.0:2222 (env SBX_SSH_LISTEN; default: no SSH gateway). Clients log in with a token from sbx ssh-access create; the host key is <data-dir>/"+daemon.SSHHostKeyFile)
}

func (f *sshFlags) apply(cmd *cobra.Command, cfg *daemon.Config) {
	cfg.SSHListen = setting(cmd, "ssh-listen", f.listen, "SBX_SSH_LISTEN")
}
