// Package integration runs real sbx daemons with real runc sandboxes. It needs
// root, runc and busybox-static; each test gets its own data dir and daemon.
package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// sbxBin is the sbx binary built once for all tests.
var sbxBin string

func TestMain(m *testing.M) {
	if reason := cannotRun(); reason != "" {
		// A CI run that tests nothing must not pass.
		if os.Getenv("CI") == "true" {
			fmt.Printf("integration tests cannot run under CI: %s\n", reason)
			os.Exit(1)
		}
		fmt.Printf("integration tests skipped: %s\n", reason)
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "sbx-bin-")
	if err != nil {
		panic(err)
	}
	// sbx and, next to it where the daemon looks, the agent binary.
	sbxBin = filepath.Join(dir, "sbx")
	build := exec.Command("go", "build", "-o", dir, "github.com/sbxhq/sbx/cmd/sbx", "github.com/sbxhq/sbx/cmd/sbx-agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Printf("build sbx and sbx-agent: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cannotRun says why this host cannot run the integration tests, or "".
func cannotRun() string {
	if os.Geteuid() != 0 {
		return "they need root (they run real containers)"
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return "they need runc on PATH"
	}
	return ""
}

// daemon is one `sbx serve` process under test.
type daemon struct {
	t       *testing.T
	dataDir string
	addr    string
	cmd     *exec.Cmd
	client  *sdk.Client
	token   string
	created map[string]bool   // ids of sandboxes this test made
	exited  chan struct{}     // closed once cmd has exited and been waited for
	args    []string          // more flags of sbx serve (see netArgs)
	ca      []byte            // PEM CA of its TLS certificate; nil: plain http (tls_test.go)
	cert    []tls.Certificate // the client certificate it requires (kube_mtls_test.go)
	bin     string            // the sbx binary it runs; "" is sbxBin (upgrade_test.go)

	cleanedUp bool // cleanup has run (it may be called early: kube_node_test.go)
}

// startDaemon starts a daemon on a fresh data dir; cleanup deletes its
// sandboxes, stops it and checks that nothing leaked.
// args are more flags for `sbx serve`.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	return startDaemonAt(t, t.TempDir(), args...)
}

// startDaemonAt is startDaemon on the given (empty) data dir.
func startDaemonAt(t *testing.T, dataDir string, args ...string) *daemon {
	t.Helper()
	d := &daemon{t: t, dataDir: dataDir, addr: freeAddr(t), created: map[string]bool{}}
	d.args = plainDisk(netArgs(t, args)) // a bridge and subnet of its own: see network_test.go; disk_test.go
	d.watchCensus()                      // census_test.go: checked after cleanup
	// Before start: a daemon that never becomes healthy is still stopped,
	// its leftovers removed and its log shown.
	t.Cleanup(d.cleanup)
	d.start()
	return d
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs `sbx serve` on the daemon's data dir and waits until it answers.
func (d *daemon) start() {
	t := d.t
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(d.dataDir, "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	bin := sbxBin
	if d.bin != "" {
		bin = d.bin
	}
	d.cmd = exec.Command(bin, append([]string{"serve", "--data-dir", d.dataDir, "--listen", d.addr}, d.args...)...)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { d.cmd.Wait(); close(exited) }()
	d.exited = exited
	healthy := func() bool {
		resp, err := d.httpClient().Get(d.baseURL() + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	deadline := time.Now().Add(60 * time.Second)
	for !healthy() {
		select {
		case <-exited:
			t.Fatalf("sbx serve exited before it became healthy: %v", d.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sbx serve did not become healthy within 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(d.dataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	d.token = strings.TrimSpace(string(tok))
	d.client = sdk.NewClient(d.baseURL(), d.token, d.clientOptions()...)
}

// kill9 kills the daemon with SIGKILL, as a crash would.
func (d *daemon) kill9() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.exited
	d.noteInstances()
}

// running reports whether the daemon's process is started and not exited.
func (d *daemon) running() bool {
	if d.exited == nil {
		return false
	}
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// noteInstances adds every instance and sandbox directory the daemon has made
// to d.created, so the leak checks cover sandboxes whose create was never
// acknowledged (a crash mid-create, say).
func (d *daemon) noteInstances() {
	if out, err := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "list", "-q").Output(); err == nil {
		for _, id := range strings.Fields(string(out)) {
			d.created[id] = true
		}
	}
	entries, _ := os.ReadDir(filepath.Join(d.dataDir, "sandboxes"))
	for _, e := range entries {
		d.created[e.Name()] = true
	}
}

// stop stops the daemon gracefully.
func (d *daemon) stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
	}
}

func (d *daemon) cleanup() {
	if d.cleanedUp {
		return
	}
	d.cleanedUp = true
	ctx := context.Background()
	d.noteInstances()
	if d.running() {
		var list []sdk.Sandbox
		err := errors.New("the daemon never became healthy")
		if d.client != nil {
			list, err = d.client.ListSandboxes(ctx, sdk.ListOptions{})
		}
		if err == nil {
			// A pool's instances are no one's sandboxes: they go with it.
			pools, _ := d.client.ListPools(ctx)
			for _, p := range pools {
				if err := d.client.DeletePool(ctx, p.Name); err != nil {
					d.t.Errorf("cleanup: delete pool %s: %v", p.Name, err)
				}
			}
			// Newest first: a fork goes before its parent, which refuses
			// to go while it has forks.
			for i := len(list) - 1; i >= 0; i-- {
				sb := list[i]
				// Not found: a delete the test made (they return before the
				// sandbox is gone) ended after the list; the census checks it.
				if err := d.client.DeleteSandbox(ctx, sb.ID, true); err != nil && !sdk.IsNotFound(err) {
					d.t.Errorf("cleanup: delete %s: %v", sb.ID, err)
				}
			}
			d.assertNoLeaks()
		}
		d.stop()
	}
	// Whatever a failed test left behind must not outlive it.
	runcRoot := filepath.Join(d.dataDir, "runc")
	if out, err := exec.Command("runc", "--root", runcRoot, "list", "-q").Output(); err == nil {
		for _, id := range strings.Fields(string(out)) {
			exec.Command("runc", "--root", runcRoot, "delete", "--force", id).Run()
		}
	}
	for _, m := range mountsUnder(d.dataDir) {
		syscall.Unmount(m, syscall.MNT_DETACH)
	}
	d.removeNetwork()
	if d.t.Failed() || d.client == nil {
		if b, err := os.ReadFile(filepath.Join(d.dataDir, "daemon.log")); err == nil {
			d.t.Logf("daemon log:\n%s", lastLines(string(b), 40))
		}
	}
}

// assertNoLeaks checks that no sandbox left a mount, cgroup, runc state,
// process or directory behind.
func (d *daemon) assertNoLeaks() {
	t := d.t
	t.Helper()
	if m := mountsUnder(filepath.Join(d.dataDir, "sandboxes")); len(m) > 0 {
		t.Errorf("leaked mounts: %v", m)
	}
	if m := mountsShowing(filepath.Join(d.dataDir, "sandboxes")); len(m) > 0 {
		t.Errorf("leaked mounts elsewhere of the sandboxes' directories: %v", m)
	}
	if out, err := exec.Command("runc", "--root", filepath.Join(d.dataDir, "runc"), "list", "-q").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		t.Errorf("leaked runc containers: %s", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(d.dataDir, "sandboxes")); len(entries) > 0 {
		t.Errorf("leaked sandbox directories: %d", len(entries))
	}
	d.assertNoNetworkLeaks()
	// Every agent has its log under the data dir open as stdout; any process
	// with a file open there belongs to a sandbox that should be gone.
	if procs := processesWithFilesUnder(filepath.Join(d.dataDir, "sandboxes")); len(procs) > 0 {
		t.Errorf("leaked processes with files in the data dir: %v", procs)
	}
	if loops := loopDevicesUnder(d.dataDir); len(loops) > 0 {
		t.Errorf("leaked loop devices: %v", loops)
	}
	// A cgroup cannot be removed while a process is in it, so a missing
	// cgroup also proves that no process of the sandbox is left.
	for id := range d.created {
		if dirs := leftCgroups(id); len(dirs) > 0 { // cgroup_test.go
			t.Errorf("leaked cgroups: %v", dirs)
		}
	}
	d.assertNoUsernsLeaks() // userns_test.go
}

// create makes a sandbox and remembers its id for the leak checks.
func (d *daemon) create(req sdk.CreateSandboxRequest) *sdk.Sandbox {
	d.t.Helper()
	sb, err := d.client.CreateSandbox(context.Background(), req)
	if err != nil {
		d.t.Fatalf("create sandbox: %v", err)
	}
	d.created[sb.ID] = true
	return sb
}

// processesWithFilesUnder lists "pid (comm)" of every process with an open
// file below dir.
func processesWithFilesUnder(dir string) []string {
	var out []string
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		fds, _ := filepath.Glob(p + "/fd/*")
		for _, fd := range fds {
			if target, err := os.Readlink(fd); err == nil && strings.HasPrefix(target, dir+"/") {
				comm, _ := os.ReadFile(p + "/comm")
				out = append(out, fmt.Sprintf("%s (%s) has %s", filepath.Base(p), strings.TrimSpace(string(comm)), target))
				break
			}
		}
	}
	return out
}

// loopDevicesUnder lists loop devices whose backing file is below dir.
func loopDevicesUnder(dir string) []string {
	var out []string
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), dir+"/") {
			out = append(out, strings.TrimSpace(string(b)))
		}
	}
	return out
}

// mountsUnder lists the mount points below dir.
func mountsUnder(dir string) []string { return mountPointsWhere(mountPointField, dir) }

// mountsShowing lists the mount points, wherever they are (a staging mount
// in /run/sbx/stage), of bind mounts of what lies below dir. It relies on
// dir lying on the root file system, where a mount's root is its host path.
func mountsShowing(dir string) []string { return mountPointsWhere(mountRootField, dir) }

// Fields of a /proc/self/mountinfo line.
const (
	mountRootField  = 3 // the mounted directory, within its file system
	mountPointField = 4
)

// mountPointsWhere lists the mount points of the mounts whose field lies
// below dir.
func mountPointsWhere(field int, dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > mountPointField && strings.HasPrefix(fields[field], dir+"/") {
			out = append(out, fields[mountPointField])
		}
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
