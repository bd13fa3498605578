package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/sdk"
)

// sbxSSHTokenTTL is the life of the token sbx ssh makes: long enough to log
// in; an open session outlives its token.
const sbxSSHTokenTTL = 60

func newSSHCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ssh SANDBOX [-- COMMAND...]",
		Short: "Open a shell in a sandbox (or run COMMAND) over the daemon's SSH gateway",
		Long: `Open a shell in a sandbox with the system's ssh client, through the daemon's
SSH gateway (sbx serve --ssh-listen). sbx makes a one-minute access token,
pins the gateway's host key for this connection, and runs ssh; the
session stays open after the token expires. A stopped sandbox is started.

ssh's exit status is sbx's. For editors and other clients, make a longer
token with sbx ssh-access create.`,
		Example: `  sbx ssh box
  sbx ssh box -- uname -a
  sbx ssh box -- tar cz /workspace > workspace.tgz`,
		Args: minArgs(1, "SANDBOX"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			ssh, err := exec.LookPath("ssh")
			if err != nil {
				return errors.New("sbx ssh runs the ssh client, which is not installed (Debian: apt-get install openssh-client)")
			}
			acc, err := c.CreateSSHAccess(cmd.Context(), args[0], sdk.CreateSSHAccessRequest{ExpiresInSeconds: sbxSSHTokenTTL})
			if err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "sbx-ssh-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			known := filepath.Join(dir, "known_hosts")
			if err := os.WriteFile(known, []byte(knownHostsLine(acc)+"\n"), 0o600); err != nil {
				return err
			}
			sshArgs := append(sshOptions(known, acc.Port), acc.Token+"@"+acc.Host)
			if len(args) > 1 {
				sshArgs = append(sshArgs, "--")
				sshArgs = append(sshArgs, args[1:]...)
			}
			run := exec.CommandContext(cmd.Context(), ssh, sshArgs...)
			run.Stdin, run.Stdout, run.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			signal.Ignore(os.Interrupt) // ^C belongs to ssh and the sandbox
			defer signal.Reset(os.Interrupt)
			err = run.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return &exitError{code: ee.ExitCode()}
			}
			return err
		},
	}
	return cmd
}

// knownHostsLine pins the gateway's host key: "[host]:port ssh-ed25519 …".
func knownHostsLine(a *sdk.SSHAccess) string {
	return fmt.Sprintf("[%s]:%d %s", a.Host, a.Port, a.HostKey)
}

// sshOptions are the ssh flags for a token login: the token is the user
// name, so no key or password is offered.
func sshOptions(knownHosts string, port int) []string {
	return []string{"-p", strconv.Itoa(port),
		"-o", "UserKnownHostsFile=" + knownHosts, "-o", "StrictHostKeyChecking=yes",
		"-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no", "-o", "KbdInteractiveAuthentication=no",
		"-o", "GSSAPIAuthentication=no", "-o", "LogLevel=ERROR"}
}

func newSSHAccessCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ssh-access COMMAND",
		Short: "Make, list and revoke SSH access tokens of a sandbox",
		Long: `SSH access to a sandbox goes through the daemon's SSH gateway
(sbx serve --ssh-listen). A token is the SSH user name: ssh -p PORT TOKEN@HOST.
It expires (default one hour, at most 30 days); only its hash is kept, so it
is shown once. With --public-key, a key is registered instead (default 30
days) and logs in as the sandbox's id. Revoking closes the connections it
opened; revoking the API key that made it ends it too.`,
		Example: `  sbx ssh-access create box --expires 8h
  sbx ssh-access create box --public-key ~/.ssh/id_ed25519.pub
  sbx ssh-access ls box
  sbx ssh-access rm box ssh-0123456789abcdef`,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	create := &cobra.Command{Use: "create SANDBOX [--expires DURATION] [--public-key FILE]", Short: "Make a token (printed once, with the ssh command) or register a public key", Args: exactArgs(1, "SANDBOX")}
	var expires time.Duration
	var keyFile string
	create.Flags().DurationVar(&expires, "expires", 0, "how long the access lasts, e.g. 30m or 8h (tokens: default 1h, keys: default 720h; at most 720h)")
	create.Flags().StringVar(&keyFile, "public-key", "", "register this public key file (authorized_keys form) instead of making a token")
	createOut := addOutputFlag(create)
	create.RunE = func(cmd *cobra.Command, args []string) error {
		req := sdk.CreateSSHAccessRequest{ExpiresInSeconds: int64(expires / time.Second)}
		if expires < 0 || (expires > 0 && expires < time.Second) {
			return usagef("--expires must be at least 1s")
		}
		if keyFile != "" {
			b, err := os.ReadFile(keyFile)
			if err != nil {
				return err
			}
			req.PublicKey = string(b)
		}
		c, err := g.client()
		if err != nil {
			return err
		}
		acc, err := c.CreateSSHAccess(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		return createOut.print(cmd.OutOrStdout(), acc, func(w io.Writer) error {
			fmt.Fprintf(w, "ID:       %s\n", acc.ID)
			if acc.Token != "" {
				fmt.Fprintf(w, "Token:    %s\n", acc.Token)
			} else {
				fmt.Fprintf(w, "Key:      %s\n", acc.Fingerprint)
			}
			fmt.Fprintf(w, "Expires:  %s\n", expiry(acc.ExpiresAt))
			fmt.Fprintf(w, "Command:  %s\n", acc.Command)
			fmt.Fprintf(w, "HostKey:  %s\n", knownHostsLine(acc))
			return nil
		})
	}
	ls := &cobra.Command{Use: "ls SANDBOX", Short: "List a sandbox's SSH access (without the tokens)", Args: exactArgs(1, "SANDBOX")}
	lsOut := addOutputFlag(ls)
	ls.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		list, err := c.ListSSHAccess(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return lsOut.print(cmd.OutOrStdout(), list, func(w io.Writer) error {
			tw := newTable(w)
			fmt.Fprintln(tw, "ID\tKIND\tCREATED\tEXPIRES")
			for _, a := range list {
				kind := "token"
				if a.PublicKey != "" {
					kind = "key " + a.Fingerprint
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.ID, kind, ago(a.CreatedAt), expiry(a.ExpiresAt))
			}
			return tw.Flush()
		})
	}
	rm := &cobra.Command{Use: "rm SANDBOX ID...", Short: "Revoke SSH access; its open connections are closed", Args: minArgs(2, "SANDBOX and ID")}
	rm.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		for _, id := range args[1:] {
			if err := c.RevokeSSHAccess(cmd.Context(), args[0], id); err != nil {
				return err
			}
		}
		return nil
	}
	cmd.AddCommand(create, ls, rm)
	return cmd
}

func expiry(t *time.Time) string {
	if t == nil {
		return "never"
	}
	if time.Until(*t) <= 0 {
		return "expired " + t.Local().Format(time.DateTime)
	}
	return t.Local().Format(time.DateTime)
}
