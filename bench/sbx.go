package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// sbxSystem is the system under test: its own `sbx serve` on a temporary
// data dir, driven through the Go SDK as a user would.
type sbxSystem struct {
	cmd     *exec.Cmd
	dataDir string
	client  *sdk.Client
	token   string // the admin token
}

func openSbx(env *Env, bin string) (*sbxSystem, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	dataDir := filepath.Join(env.Work, "sbx")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(env.Work, "sbx-daemon.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, append(append([]string{"serve", "--data-dir", dataDir, "--listen", addr}, benchNet.args()...), sshArgs(bin)...)...) // ssh.go
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &sbxSystem{cmd: cmd, dataDir: dataDir}
	if err := waitHTTP("http://"+addr+"/healthz", nil); err != nil {
		s.Close()
		return nil, fmt.Errorf("sbx daemon did not start (see %s): %w", logf.Name(), err)
	}
	tok, err := os.ReadFile(filepath.Join(dataDir, "admin.token"))
	if err != nil {
		s.Close()
		return nil, err
	}
	s.token = strings.TrimSpace(string(tok))
	s.client = sdk.NewClient("http://"+addr, s.token)
	env.Client = s.client
	if env.Rootfs, err = baseRootfs(dataDir); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// waitHTTP polls url until it answers 2xx.
func waitHTTP(url string, hc *http.Client) error {
	if hc == nil {
		hc = http.DefaultClient
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *sbxSystem) Name() string { return "sbx" }

// asSbx returns the sbx daemon behind sys: the main one, or a second one
// (-sbx-baseline, -runsc), so a row can compare them in one run.
func asSbx(sys System) (*sbxSystem, bool) {
	switch s := sys.(type) {
	case *sbxSystem:
		return s, true
	case *secondSbx:
		return s.sbxSystem, true
	}
	return nil, false
}

// secondSbx is another sbx daemon beside the first, on a data dir and a
// bridge of its own: the -runsc one, or the -sbx-baseline one.
type secondSbx struct {
	*sbxSystem
	name string
	net  benchNetwork
	once sync.Once
}

func (a *secondSbx) Name() string { return a.name }

// Close stops the daemon and removes its bridge (benchNet is the first
// daemon's meanwhile).
func (a *secondSbx) Close() {
	a.once.Do(func() {
		saved := benchNet
		benchNet = a.net
		a.sbxSystem.Close()
		benchNet = saved
	})
}

// openSecondSbx starts bin as a second daemon under env.Work/dir, named name
// in the results.
func openSecondSbx(env *Env, bin, name, dir string) (*secondSbx, error) {
	secondEnv := &Env{Work: filepath.Join(env.Work, dir), Quick: env.Quick}
	if err := os.MkdirAll(secondEnv.Work, 0o700); err != nil {
		return nil, err
	}
	saved := benchNet
	benchNet = benchNetwork{}
	defer func() { benchNet = saved }()
	s, err := openSbx(secondEnv, bin) // on failure it has removed its bridge
	if err != nil {
		return nil, err
	}
	second := &secondSbx{sbxSystem: s, name: name, net: benchNet}
	closeAtExit(second)
	return second, nil
}

func (s *sbxSystem) Create() (Box, error) {
	sb, err := s.client.CreateSandbox(context.Background(), sdk.CreateSandboxRequest{Network: *sbxNetwork})
	if err != nil {
		return nil, err
	}
	return &sbxBox{s: s, id: sb.ID}, nil
}

func (s *sbxSystem) DaemonPids() []int { return []int{s.cmd.Process.Pid} }

// Close deletes every sandbox, then stops the daemon.
func (s *sbxSystem) Close() {
	ctx := context.Background()
	if s.client != nil {
		if list, err := s.client.ListSandboxes(ctx, sdk.ListOptions{}); err == nil {
			for _, sb := range list {
				s.client.DeleteSandbox(ctx, sb.ID, true)
			}
		}
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	benchNet.remove() // network.go
}

type sbxBox struct {
	s  *sbxSystem
	id string
}

func (b *sbxBox) Exec(args ...string) error {
	res, err := b.s.client.Exec(context.Background(), b.id, sdk.ExecRequest{Cmd: args})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("%v: exit %d: %s", args, res.ExitCode, res.Stderr)
	}
	return err
}

func (b *sbxBox) Upload(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = b.s.client.Upload(context.Background(), b.id, dst, f, 0o644)
	return err
}

func (b *sbxBox) Download(src string, w io.Writer) (int64, error) {
	rc, err := b.s.client.Download(context.Background(), b.id, src)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(w, rc)
}

func (b *sbxBox) Delete() error { return b.s.client.DeleteSandbox(context.Background(), b.id, true) }

func (b *sbxBox) Pids() (int, []int, error) {
	pid, err := runcPid(filepath.Join(b.s.dataDir, "runc"), b.id)
	return pid, nil, err // the agent is the init; no shim
}
