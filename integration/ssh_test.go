package integration

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/sbxhq/sbx/sdk"
)

// sshGateway is a daemon with its SSH gateway on, and the ssh client
// options (known_hosts pinned to the gateway's key) for tokens it makes.
type sshGateway struct {
	d         *daemon
	addr      string // host:port of the gateway
	knownHost string // file
	hostKey   ssh.PublicKey
}

func startSSHGateway(t *testing.T) *sshGateway {
	for _, prog := range []string{"ssh", "scp", "sftp"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("%s is needed (scripts/setup.sh --deps installs openssh-client)", prog)
		}
	}
	addr := freeAddr(t)
	return &sshGateway{d: startDaemon(t, "--ssh-listen", addr), addr: addr, knownHost: filepath.Join(t.TempDir(), "known_hosts")}
}

// token makes an access token for sb and pins the host key.
func (g *sshGateway) token(t *testing.T, sb string, expires int64) *sdk.SSHAccess {
	t.Helper()
	acc, err := g.d.client.CreateSSHAccess(context.Background(), sb, sdk.CreateSSHAccessRequest{ExpiresInSeconds: expires})
	if err != nil {
		t.Fatalf("create SSH access: %v", err)
	}
	if !strings.HasPrefix(acc.Command, "ssh -p ") || acc.Token == "" || acc.HostKey == "" {
		t.Fatalf("create SSH access answered %+v", acc)
	}
	line := fmt.Sprintf("[%s]:%d %s\n", acc.Host, acc.Port, acc.HostKey)
	if err := os.WriteFile(g.knownHost, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	g.hostKey, _, _, _, _ = ssh.ParseAuthorizedKey([]byte(acc.HostKey))
	return acc
}

// opts are the OpenSSH options of a token login; the program (ssh, scp,
// sftp) names the port with portFlag.
func (g *sshGateway) opts(portFlag string) []string {
	_, port, _ := net.SplitHostPort(g.addr)
	return []string{portFlag, port, "-o", "UserKnownHostsFile=" + g.knownHost, "-o", "StrictHostKeyChecking=yes",
		"-o", "BatchMode=yes", "-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no",
		"-o", "KbdInteractiveAuthentication=no", "-o", "LogLevel=ERROR", "-F", "/dev/null"}
}

// run runs an OpenSSH program and returns its output and exit code.
func (g *sshGateway) run(t *testing.T, stdin string, prog string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return out.String(), errb.String(), code
}

func (g *sshGateway) ssh(t *testing.T, token, stdin string, args ...string) (string, string, int) {
	t.Helper()
	host, _, _ := net.SplitHostPort(g.addr)
	return g.run(t, stdin, "ssh", append(append(g.opts("-p"), token+"@"+host), args...)...)
}

// goClient logs in with the Go SSH client (for what OpenSSH cannot show:
// channel refusals, many logins at once).
func (g *sshGateway) goClient(user string, local string) (*ssh.Client, error) {
	cfg := &ssh.ClientConfig{User: user, HostKeyCallback: ssh.FixedHostKey(g.hostKey), Timeout: 20 * time.Second}
	d := net.Dialer{Timeout: 20 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	nc, err := d.Dial("tcp", g.addr)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	c, chans, reqs, err := ssh.NewClientConn(nc, g.addr, cfg)
	if err != nil {
		nc.Close()
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	return ssh.NewClient(c, chans, reqs), nil
}

func TestSSH(t *testing.T) {
	g := startSSHGateway(t)
	sb := g.d.create(sdk.CreateSandboxRequest{Name: "ssh-box"}).ID
	tok := g.token(t, sb, 600).Token

	t.Run("exec", func(t *testing.T) {
		out, errOut, code := g.ssh(t, tok, "", "echo out-$((6*7)); echo err >&2; exit 7")
		if out != "out-42\n" || errOut != "err\n" || code != 7 {
			t.Fatalf("ssh exec: out %q err %q code %d, want out-42, err, 7", out, errOut, code)
		}
		out, _, code = g.ssh(t, tok, "piped stdin\n", "cat")
		if out != "piped stdin\n" || code != 0 {
			t.Fatalf("ssh cat: %q %d", out, code)
		}
	})

	t.Run("sbx ssh", func(t *testing.T) {
		out, errOut, code := g.d.sbx("", "ssh", "ssh-box", "--", "echo via-cli; exit 3")
		if out != "via-cli\n" || code != 3 {
			t.Fatalf("sbx ssh: out %q err %q code %d, want via-cli and 3", out, errOut, code)
		}
	})

	t.Run("scp", func(t *testing.T) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.bin")
		data := make([]byte, 20<<20)
		rand.Read(data)
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		host, _, _ := net.SplitHostPort(g.addr)
		if _, e, code := g.run(t, "", "scp", append(g.opts("-P"), in, tok+"@"+host+":/tmp/big.bin")...); code != 0 {
			t.Fatalf("scp in: %d %s", code, e)
		}
		res, err := g.d.client.Exec(context.Background(), sb, sdk.ExecRequest{Cmd: []string{"sha256sum", "/tmp/big.bin"}})
		want := fmt.Sprintf("%x", sha256.Sum256(data))
		if err != nil || !strings.HasPrefix(res.Stdout, want) {
			t.Fatalf("sha256 inside: %v %+v, want %s", err, res, want)
		}
		out := filepath.Join(dir, "out.bin")
		if _, e, code := g.run(t, "", "scp", append(g.opts("-P"), tok+"@"+host+":/tmp/big.bin", out)...); code != 0 {
			t.Fatalf("scp out: %d %s", code, e)
		}
		got, _ := os.ReadFile(out)
		if fmt.Sprintf("%x", sha256.Sum256(got)) != want {
			t.Fatalf("scp out: %d bytes with another sha256", len(got))
		}
		// The same bytes through a plain exec's stdout and stdin: nothing
		// is lost when the client reads slower than the command writes.
		catOut, _, code := g.ssh(t, tok, "", "cat /tmp/big.bin")
		if code != 0 || fmt.Sprintf("%x", sha256.Sum256([]byte(catOut))) != want {
			t.Fatalf("ssh cat: code %d, %d bytes", code, len(catOut))
		}
		sum, _, code := g.ssh(t, tok, string(data), "sha256sum")
		if code != 0 || !strings.HasPrefix(sum, want) {
			t.Fatalf("ssh stdin: code %d, %q", code, sum)
		}
	})

	t.Run("sftp", func(t *testing.T) {
		host, _, _ := net.SplitHostPort(g.addr)
		local := filepath.Join(t.TempDir(), "note.txt")
		os.WriteFile(local, []byte("hello sftp\n"), 0o644)
		batch := strings.Join([]string{"mkdir /tmp/sf", "put " + local + " /tmp/sf/a.txt", "rename /tmp/sf/a.txt /tmp/sf/b.txt", "ls -l /tmp/sf", ""}, "\n")
		out, e, code := g.run(t, batch, "sftp", append(g.opts("-P"), "-b", "-", tok+"@"+host)...)
		listing := out[strings.LastIndex(out, "sftp> ls -l /tmp/sf\n")+len("sftp> ls -l /tmp/sf\n"):]
		if code != 0 || !strings.HasSuffix(listing, " b.txt\n") || strings.Count(listing, "\n") != 1 {
			t.Fatalf("sftp: code %d out %q err %q", code, out, e)
		}
		res, err := g.d.client.Exec(context.Background(), sb, sdk.ExecRequest{Cmd: []string{"cat", "/tmp/sf/b.txt"}})
		if err != nil || res.Stdout != "hello sftp\n" {
			t.Fatalf("renamed file: %v %+v", err, res)
		}
	})

	t.Run("forward", func(t *testing.T) {
		// A server on the sandbox's loopback only: the forward is made
		// from inside the sandbox.
		ctx := context.Background()
		g.d.client.Exec(ctx, sb, sdk.ExecRequest{Shell: "mkdir -p /tmp/www && echo forwarded-page > /tmp/www/index.html"})
		if _, err := g.d.client.StartProcess(ctx, sb, sdk.StartProcessRequest{ID: "httpd", Cmd: []string{"httpd", "-f", "-p", "127.0.0.1:8000", "-h", "/tmp/www"}}); err != nil {
			t.Fatal(err)
		}
		local := freeAddr(t)
		host, _, _ := net.SplitHostPort(g.addr)
		fctx, cancel := context.WithCancel(ctx)
		cmd := exec.CommandContext(fctx, "ssh", append(g.opts("-p"), "-N", "-o", "ExitOnForwardFailure=yes", "-L", local+":localhost:8000", tok+"@"+host)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			cancel()
			cmd.Wait()
		}()
		var body string
		waitFor(t, 30*time.Second, "the forwarded page", func() bool {
			resp, err := http.Get("http://" + local + "/index.html")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
			return resp.StatusCode == 200
		})
		if body != "forwarded-page\n" {
			t.Fatalf("forwarded page %q", body)
		}
	})

	t.Run("shell in tmux", func(t *testing.T) {
		x := &tmux{t: t, socket: "sbx-ssh-" + strconv.Itoa(os.Getpid())}
		t.Cleanup(func() { exec.Command("tmux", "-L", x.socket, "kill-server").Run() })
		result := filepath.Join(t.TempDir(), "code")
		host, _, _ := net.SplitHostPort(g.addr)
		script := fmt.Sprintf("ssh -t %s %s@%s; echo $? > %s; sleep 600", strings.Join(g.opts("-p"), " "), tok, host, result)
		x.run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "100", "-y", "30", script)
		x.run("set-option", "-t", "t", "status", "off")
		x.run("send-keys", "-t", "t", `PS1="prompt-$((6*7))> "`, "Enter")
		x.waitScreen("\nprompt-42>") // the prompt the shell computed, not the typed line
		x.run("send-keys", "-t", "t", "echo zz$((1+1)); sleep 300", "Enter")
		x.waitScreen("zz2")
		x.run("send-keys", "-t", "t", "C-c")
		x.run("send-keys", "-t", "t", "echo after-$((6*7))", "Enter")
		x.waitScreen("after-42")
		x.run("resize-window", "-t", "t", "-x", "120", "-y", "40")
		waitFor(t, 30*time.Second, "the resize to arrive", func() bool {
			x.run("send-keys", "-t", "t", "clear; stty size", "Enter")
			time.Sleep(100 * time.Millisecond)
			return strings.Contains(x.run("capture-pane", "-p", "-t", "t"), "40 120")
		})
		x.run("send-keys", "-t", "t", "exit 6", "Enter")
		waitFor(t, 30*time.Second, "ssh to exit", func() bool {
			b, _ := os.ReadFile(result)
			return len(b) > 0
		})
		if b, _ := os.ReadFile(result); strings.TrimSpace(string(b)) != "6" {
			t.Fatalf("ssh exited with %q, want the shell's 6", b)
		}
	})

	t.Run("unknown channel types", func(t *testing.T) {
		c, err := g.goClient(tok, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, typ := range []string{"x11", "direct-streamlocal@openssh.com", "no-such-thing"} {
			_, _, err := c.OpenChannel(typ, nil)
			var oce *ssh.OpenChannelError
			if !asOpenChannelError(err, &oce) || oce.Reason != ssh.UnknownChannelType {
				t.Fatalf("channel %s: %v, want an unknown channel type refusal", typ, err)
			}
		}
		// The connection still serves.
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if out, err := s.Output("echo still"); err != nil || string(out) != "still\n" {
			t.Fatalf("after refusals: %q %v", out, err)
		}
	})
}

func asOpenChannelError(err error, target **ssh.OpenChannelError) bool {
	e, ok := err.(*ssh.OpenChannelError)
	if ok {
		*target = e
	}
	return ok
}

// Tokens are refused when revoked, expired or unknown; a token opens only
// its own sandbox, and a key registered on one sandbox opens no other.
// A stopped sandbox starts on connect, and a stop closes its connections.
func TestSSHAccessAndLifecycle(t *testing.T) {
	g := startSSHGateway(t)
	ctx := context.Background()
	a := g.d.create(sdk.CreateSandboxRequest{Name: "ssh-a"}).ID
	b := g.d.create(sdk.CreateSandboxRequest{Name: "ssh-b"}).ID
	g.d.client.Exec(ctx, a, sdk.ExecRequest{Shell: "echo i-am-a > /marker"})
	g.d.client.Exec(ctx, b, sdk.ExecRequest{Shell: "echo i-am-b > /marker"})

	tokA := g.token(t, a, 600)
	tokB := g.token(t, b, 600)
	if out, _, code := g.ssh(t, tokB.Token, "", "cat /marker"); out != "i-am-b\n" || code != 0 {
		t.Fatalf("token of b: %q %d", out, code)
	}
	// Revoked.
	if err := g.d.client.RevokeSSHAccess(ctx, a, tokA.ID); err != nil {
		t.Fatal(err)
	}
	if _, e, code := g.ssh(t, tokA.Token, "", "true"); code != 255 || !strings.Contains(e, "Permission denied") {
		t.Fatalf("revoked token: %d %q", code, e)
	}
	if err := g.d.client.RevokeSSHAccess(ctx, a, tokA.ID); !sdk.IsNotFound(err) {
		t.Fatalf("revoke twice: %v", err)
	}
	// A token of b cannot be revoked through a; revoking it through b
	// closes the connection it opened.
	if err := g.d.client.RevokeSSHAccess(ctx, a, tokB.ID); !sdk.IsNotFound(err) {
		t.Fatalf("revoke b's token through a: %v", err)
	}
	cb, err := g.goClient(tokB.Token, "")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- cb.Wait() }()
	if err := g.d.client.RevokeSSHAccess(ctx, b, tokB.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("revoking a token left its connection open")
	}
	if _, _, code := g.ssh(t, "sbxssh"+strings.Repeat("0", 64), "", "true"); code != 255 {
		t.Fatalf("unknown token: %d", code)
	}
	// Expired.
	short := g.token(t, a, 1)
	waitFor(t, 30*time.Second, "the token to expire", func() bool {
		_, _, code := g.ssh(t, short.Token, "", "true")
		return code == 255
	})
	list, err := g.d.client.ListSSHAccess(ctx, a)
	if err != nil || len(list) != 1 || list[0].ID != short.ID || list[0].Token != "" {
		t.Fatalf("list: %v %+v", err, list)
	}
	// Bad requests change nothing.
	if _, err := g.d.client.CreateSSHAccess(ctx, a, sdk.CreateSSHAccessRequest{ExpiresInSeconds: -5}); !sdk.IsInvalid(err) {
		t.Fatalf("negative expiry: %v", err)
	}
	if _, err := g.d.client.CreateSSHAccess(ctx, a, sdk.CreateSSHAccessRequest{PublicKey: "ssh-ed25519 nonsense"}); !sdk.IsInvalid(err) {
		t.Fatalf("bad key: %v", err)
	}

	// A public key registered on b logs in as b, not as a.
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(priv)
	sshPub, _ := ssh.NewPublicKey(pub)
	if _, err := g.d.client.CreateSSHAccess(ctx, b, sdk.CreateSSHAccessRequest{PublicKey: string(ssh.MarshalAuthorizedKey(sshPub))}); err != nil {
		t.Fatal(err)
	}
	keyLogin := func(user string) (string, error) {
		c, err := ssh.Dial("tcp", g.addr, &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: ssh.FixedHostKey(g.hostKey)})
		if err != nil {
			return "", err
		}
		defer c.Close()
		s, err := c.NewSession()
		if err != nil {
			return "", err
		}
		out, err := s.Output("cat /marker")
		return string(out), err
	}
	if out, err := keyLogin(b); err != nil || out != "i-am-b\n" {
		t.Fatalf("key login to b: %q %v", out, err)
	}
	if _, err := keyLogin(a); err == nil {
		t.Fatal("b's key logged in to a")
	}

	// A stopped sandbox starts on connect.
	if _, err := g.d.client.StopSandbox(ctx, a, sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	tok := g.token(t, a, 600).Token
	if out, _, code := g.ssh(t, tok, "", "cat /marker"); out != "i-am-a\n" || code != 0 {
		t.Fatalf("ssh to a stopped sandbox: %q %d", out, code)
	}
	if sb, _ := g.d.client.GetSandbox(ctx, a); sb.State != sdk.StateStarted {
		t.Fatalf("after ssh the sandbox is %s", sb.State)
	}
	// A stop closes the connections.
	c, err := g.goClient(tok, "")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.NewSession()
	if err := s.Start("sleep 300"); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- c.Wait() }()
	if _, err := g.d.client.StopSandbox(ctx, a, sdk.StopOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(60 * time.Second):
		t.Fatal("the SSH connection stayed open after the sandbox stopped")
	}
}

// An open connection is activity: an idle sandbox with a connection open
// is not stopped, and is once the connection closes.
func TestSSHConnectionIsActivity(t *testing.T) {
	g := startSSHGateway(t)
	ctx := context.Background()
	idle := 2
	sb := g.d.create(sdk.CreateSandboxRequest{Name: "ssh-idle", AutoStopSeconds: &idle}).ID
	c, err := g.goClient(g.token(t, sb, 600).Token, "")
	if err != nil {
		t.Fatal(err)
	}
	opened := time.Now()
	waitFor(t, 60*time.Second, "three idle periods with the connection open", func() bool {
		got, err := g.d.client.GetSandbox(ctx, sb)
		if err != nil || got.State != sdk.StateStarted {
			t.Fatalf("with a connection open the sandbox is %v (%v)", got, err)
		}
		return time.Since(opened) > 3*time.Duration(idle)*time.Second
	})
	c.Close()
	waitFor(t, 60*time.Second, "the idle stop after the connection closed", func() bool {
		got, err := g.d.client.GetSandbox(ctx, sb)
		return err == nil && got.State == sdk.StateStopped
	})
}

// Bad input: garbage instead of a client banner, thousands of failed
// logins. The gateway shuts the flooding address out and keeps serving
// everyone else, and the API keeps answering.
func TestSSHBadInput(t *testing.T) {
	g := startSSHGateway(t)
	sb := g.d.create(sdk.CreateSandboxRequest{Name: "ssh-bad"}).ID
	tok := g.token(t, sb, 600).Token

	nc, err := net.Dial("tcp", g.addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat("\x00\xff garbage", 4096)))
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	b, _ := io.ReadAll(nc) // the server's banner, then it hangs up
	nc.Close()
	if !strings.HasPrefix(string(b), "SSH-2.0-") {
		t.Fatalf("answer to garbage: %.80q", b)
	}

	// 3000 failed logins from 127.0.0.2, 64 at a time.
	var refusedEarly, denied atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := 0; i < 3000; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := g.goClient(fmt.Sprintf("sbxssh%064d", i), "127.0.0.2")
			switch {
			case err == nil:
				c.Close()
				t.Errorf("login %d with a wrong token succeeded", i)
			case strings.Contains(err.Error(), "unable to authenticate"):
				denied.Add(1)
			default:
				refusedEarly.Add(1) // shut out before the key exchange
			}
		}(i)
	}
	wg.Wait()
	t.Logf("failed logins: %d denied after a key exchange, %d shut out before one", denied.Load(), refusedEarly.Load())
	if refusedEarly.Load() < 2500 {
		t.Fatalf("only %d of 3000 failed logins were shut out early", refusedEarly.Load())
	}
	// Others still get in, and the API answers.
	if out, _, code := g.ssh(t, tok, "", "echo fine"); out != "fine\n" || code != 0 {
		t.Fatalf("after the flood: %q %d", out, code)
	}
	if _, err := g.d.client.GetSandbox(context.Background(), sb); err != nil {
		t.Fatalf("API after the flood: %v", err)
	}

	// The host key is made once, kept 0600, and survives a restart.
	fi, err := os.Stat(filepath.Join(g.d.dataDir, "ssh_host_ed25519_key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key file: %v %v", fi, err)
	}
	before := g.hostKey.Marshal()
	g.d.stop()
	g.d.start()
	tok = g.token(t, sb, 600).Token
	if !bytes.Equal(before, g.hostKey.Marshal()) {
		t.Fatal("the host key changed across a restart")
	}
	if out, _, code := g.ssh(t, tok, "", "echo again"); out != "again\n" || code != 0 {
		t.Fatalf("after a restart: %q %d", out, code)
	}
}

// An SSH access dies with the API key that made it: revoking the key
// refuses the token at the next login.
func TestSSHAccessDiesWithItsKey(t *testing.T) {
	g := startSSHGateway(t)
	ctx := context.Background()
	c, k := g.d.teamKey("sshkeys", sdk.Quotas{}, sdk.ScopeSandboxesWrite, sdk.ScopeSandboxesRead, sdk.ScopeExec)
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "ssh-keyed"})
	if err != nil {
		t.Fatal(err)
	}
	g.d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "echo keyed > /marker"})
	acc, err := c.CreateSSHAccess(ctx, sb.ID, sdk.CreateSSHAccessRequest{ExpiresInSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("[%s]:%d %s\n", acc.Host, acc.Port, acc.HostKey)
	if err := os.WriteFile(g.knownHost, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, code := g.ssh(t, acc.Token, "", "cat /marker"); out != "keyed\n" || code != 0 {
		t.Fatalf("token of a live key: %q %d", out, code)
	}
	if _, err := g.d.client.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, e, code := g.ssh(t, acc.Token, "", "true"); code != 255 || !strings.Contains(e, "Permission denied") {
		t.Fatalf("token of a revoked key: %d %q", code, e)
	}
}
