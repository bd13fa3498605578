package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/sshgw"
	"github.com/sbxhq/sbx/internal/store"
)

// SSHHostKeyFile is the SSH gateway's host key in the data dir.
const SSHHostKeyFile = "ssh_host_ed25519_key"

// startSSH runs the SSH gateway on cfg.SSHListen until ctx is done, and
// enables the API's ssh-access routes. Without SSHListen it does nothing.
func startSSH(ctx context.Context, cfg Config, st *store.SQLite, mgr *sandbox.Manager, handler *api.Server, gate *authz.Gate, keys auth.KeyLookup) error {
	if cfg.SSHListen == "" {
		return nil
	}
	access := sshgw.NewAccess(st, keys)
	gw, err := sshgw.New(sshgw.Config{Sandboxes: mgr, Access: access, Gate: gate, HostKeyFile: filepath.Join(cfg.DataDir, SSHHostKeyFile)})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.SSHListen)
	if err != nil {
		return fmt.Errorf("listen for SSH on %s: %w", cfg.SSHListen, err)
	}
	handler.SetSSH(access, ln.Addr().String(), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(gw.PublicKey()))))
	slog.Info("sbx SSH gateway serving", "listen", ln.Addr().String())
	go func() {
		if err := gw.Serve(ctx, ln); err != nil {
			slog.Error("SSH gateway stopped", "err", err)
		}
	}()
	return nil
}
