package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/sbxhq/sbx/sdk"
)

// A command's round trip over the SSH gateway against the API's exec, in
// the same run on the same sandbox: `true` as an SSH exec on an open
// connection (what an editor or a script holding a connection pays), over
// a new OpenSSH connection each time (ssh TOKEN@host true: key exchange
// included), and through POST /v1/sandboxes/{id}/exec.
func init() {
	registerScenario(Scenario{Order: 95, Name: "ssh command", Run: runSSHBench})
}

// sshArgs turns on the SSH gateway of the bench daemon, if bin has one (a
// baseline binary may predate it).
func sshArgs(bin string) []string {
	help, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	if !bytes.Contains(help, []byte("--ssh-listen")) {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil
	}
	defer ln.Close()
	return []string{"--ssh-listen", ln.Addr().String()}
}

func runSSHBench(env *Env, sys System) ([]result, error) {
	if sys.Name() != "sbx" {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	c, ctx := env.Client, context.Background()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "bench-ssh"})
	if err != nil {
		return nil, err
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	acc, err := c.CreateSSHAccess(ctx, sb.ID, sdk.CreateSSHAccessRequest{ExpiresInSeconds: 3600})
	if err != nil {
		return nil, fmt.Errorf("%w: the daemon has no SSH gateway: %v", errSkip, err)
	}
	hostKey, _, _, _, err := ssh.ParseAuthorizedKey([]byte(acc.HostKey))
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(acc.Host, strconv.Itoa(acc.Port))
	conn, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: acc.Token, HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	defer conn.Close()

	n := env.n(*execN, 10)
	out := []result{
		measure("command round trip: API exec", "sbx", n, func() error {
			res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d", res.ExitCode)
			}
			return err
		}),
		measure("command round trip: SSH exec on an open connection", "sbx", n, func() error {
			s, err := conn.NewSession()
			if err != nil {
				return err
			}
			defer s.Close()
			return s.Run("true")
		}),
	}
	if _, err := exec.LookPath("ssh"); err == nil {
		known := env.Work + "/ssh_known_hosts"
		line := fmt.Sprintf("[%s]:%d %s\n", acc.Host, acc.Port, acc.HostKey)
		if err := os.WriteFile(known, []byte(line), 0o600); err != nil {
			return out, err
		}
		args := []string{"-F", "/dev/null", "-p", strconv.Itoa(acc.Port), "-o", "UserKnownHostsFile=" + known, "-o", "StrictHostKeyChecking=yes",
			"-o", "BatchMode=yes", "-o", "PubkeyAuthentication=no", "-o", "LogLevel=ERROR", acc.Token + "@" + acc.Host, "true"}
		out = append(out, measure("command round trip: OpenSSH, new connection", "sbx", env.n(*execN/4, 5), func() error {
			b, err := exec.Command("ssh", args...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(b)))
			}
			return nil
		}))
	}
	return out, nil
}
