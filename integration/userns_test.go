package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/sdk"
)

// inotifyHogBin builds testdata/inotifyhog once per test binary.
var inotifyHogBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(sbxBin), "inotifyhog")
	build := exec.Command("go", "build", "-o", bin, "./testdata/inotifyhog")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build testdata/inotifyhog: %v\n%s", err, out)
	}
	return bin, nil
})

// TestUserNamespace: a class-container sandbox runs as a host id range of
// its own (issue 13.4), and files it writes are stored with the ids it sees.
func TestUserNamespace(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})

	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"cat", "/proc/self/uid_map"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("cat uid_map: %v %+v", err, res)
	}
	m := strings.Fields(res.Stdout)
	if len(m) != 3 || m[0] != "0" || m[2] != "65536" {
		t.Fatalf("uid_map inside = %q, want one range of 65536 ids from 0", res.Stdout)
	}
	if base, err := strconv.ParseUint(m[1], 10, 32); err != nil || base < 1<<30 {
		t.Fatalf("sandbox root is host uid %s, want an id range at 2^30 or above", m[1])
	}
	// A sandbox with no network gets a range of its own too, and its
	// loopback is up.
	none := d.create(sdk.CreateSandboxRequest{Network: sdk.NetworkNone})
	res, err = d.client.Exec(ctx, none.ID, sdk.ExecRequest{Shell: "cat /proc/self/uid_map; ip link show lo"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec in network none sandbox: %v %+v", err, res)
	}
	if f := strings.Fields(res.Stdout); len(f) < 3 || f[0] != "0" || f[1] == m[1] || f[2] != "65536" || !strings.Contains(res.Stdout, "UP") {
		t.Fatalf("network none sandbox: %q; want its own range (not %s) and lo up", res.Stdout, m[1])
	}

	// A file made inside is root's on disk, as the image's files are:
	// archive, snapshot and fork copy the upper directory as it is.
	if res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "echo x > /root-made; echo y > /user-made && chown 1000:1000 /user-made"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("write inside: %v %+v", err, res)
	}
	for name, want := range map[string]uint32{"root-made": 0, "user-made": 1000} {
		st, err := statInUpper(d, sb.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Uid != want || st.Gid != want {
			t.Errorf("%s is %d:%d in the upper directory, want %d:%d", name, st.Uid, st.Gid, want, want)
		}
	}
}

// TestSandboxRootIsNotHostRoot: a sandbox that takes every inotify instance
// the kernel lets its root have (fs.inotify.max_user_instances) leaves host
// root's alone (issue 13.4).
func TestSandboxRootIsNotHostRoot(t *testing.T) {
	bin, err := inotifyHogBin()
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t)
	ctx := context.Background()
	sb := d.create(sdk.CreateSandboxRequest{})
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := d.client.Upload(ctx, sb.ID, "/tmp/inotifyhog", f, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.StartProcess(ctx, sb.ID, sdk.StartProcessRequest{ID: "hog", Cmd: []string{"/tmp/inotifyhog", "/tmp/hog.out"}}); err != nil {
		t.Fatal(err)
	}
	var took string
	waitFor(t, 30*time.Second, "the hog to take its inotify instances", func() bool {
		res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"cat", "/tmp/hog.out"}})
		took = strings.TrimSpace(res.Stdout)
		return err == nil && res.ExitCode == 0 && took != ""
	})
	if n, errno, _ := strings.Cut(took, " "); n == "0" || errno != "EMFILE" {
		t.Fatalf("the hog took %q inotify instances, want some and then EMFILE", took)
	}
	// Host root (this test) can still make one.
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("host root cannot make an inotify instance while a sandbox holds %s of its own: %v", took, err)
	}
	unix.Close(fd)
}

// statInUpper stats name at the root of the sandbox's upper directory (on
// its own disk when it has one).
func statInUpper(d *daemon, id, name string) (*syscall.Stat_t, error) {
	var errs []string
	for _, upper := range []string{"upper", "disk/upper"} {
		var st syscall.Stat_t
		p := filepath.Join(d.dataDir, "sandboxes", id, upper, name)
		err := syscall.Lstat(p, &st)
		if err == nil {
			return &st, nil
		}
		errs = append(errs, fmt.Sprintf("%s: %v", p, err))
	}
	return nil, fmt.Errorf("%s not in the upper directory: %s", name, strings.Join(errs, "; "))
}

// assertNoUsernsLeaks checks that no sandbox left its idmapped root or
// namespaces under /run/sbx, nor holds a user id range.
func (d *daemon) assertNoUsernsLeaks() {
	t := d.t
	t.Helper()
	for id := range d.created {
		if _, err := os.Stat(filepath.Join("/run/sbx", id)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("leaked /run/sbx/%s: %v", id, err)
		}
		if m := mountsUnder(filepath.Join("/run/sbx", id)); len(m) > 0 {
			t.Errorf("leaked mounts: %v", m)
		}
	}
	claims, _ := filepath.Glob("/run/sbx/idranges/[0-9]*")
	for _, c := range claims {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		owner := string(b)
		if strings.HasPrefix(owner, d.dataDir+"/") || d.created[filepath.Base(filepath.Dir(owner))] {
			t.Errorf("leaked user id range %s held by %s", filepath.Base(c), owner)
		}
	}
}
