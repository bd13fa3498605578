package runtime

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
)

func TestWatchExit(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited, err := WatchExit(context.Background(), cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		t.Fatal("closed while the process runs")
	default:
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet: the exit alone must fire the watch.
	<-exited
	_ = cmd.Wait()
}

// A watch whose context ends stops: its pidfd is closed and its channel
// stays open, though the process runs on.
func TestWatchExitStopsWithItsContext(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	fds := func() int {
		n := 0
		ownPidfds.Range(func(any, any) bool { n++; return true })
		return n
	}
	base := fds()
	ctx, cancel := context.WithCancel(context.Background())
	exited, err := WatchExit(ctx, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if fds() != base+1 {
		t.Fatalf("the watch holds %d pidfds, want 1", fds()-base)
	}
	cancel()
	for fds() != base {
		runtime.Gosched()
	}
	select {
	case <-exited:
		t.Fatal("a cancelled watch reports an exit")
	default:
	}
}

func TestWatchExitDeadPid(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	exited, err := WatchExit(context.Background(), cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	default:
		t.Fatal("watch of a dead pid is not closed")
	}
	if _, err := WatchExit(context.Background(), 0); !errdefs.Is(err, errdefs.KindInvalid) {
		t.Errorf("WatchExit(0): %v, want Invalid", err)
	}
}

// Many watches must not cost an OS thread each.
func TestWatchExitNoThreadPerWatch(t *testing.T) {
	const n = 100
	before := threads(t)
	var cmds []*exec.Cmd
	var chans []<-chan struct{}
	for range n {
		cmd := exec.Command("sleep", "1000")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		ch, err := WatchExit(context.Background(), cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	if after := threads(t); after-before >= n/2 {
		t.Errorf("threads went from %d to %d for %d watches", before, after, n)
	}
	for i, cmd := range cmds {
		_ = cmd.Process.Kill()
		<-chans[i]
		_ = cmd.Wait()
	}
}

func threads(t *testing.T) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatal("no Threads line")
	return 0
}

// WatchExitFunc calls then on the watch's goroutine: true once the process
// exited (its channel closed by then), false when the context ended first,
// and true for a pid already gone.
func TestWatchExitFunc(t *testing.T) {
	// got carries then's argument, and whether the channel was closed
	// when then was called.
	type call struct{ exited, closed bool }
	watch := func(ctx context.Context, pid int) chan call {
		t.Helper()
		got := make(chan call, 1)
		ready := make(chan struct{})
		var exited <-chan struct{}
		exited, err := WatchExitFunc(ctx, pid, func(e bool) {
			<-ready
			select {
			case <-exited:
				got <- call{e, true}
			default:
				got <- call{e, false}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		close(ready)
		return got
	}
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := watch(ctx, cmd.Process.Pid)
	got := watch(context.Background(), cmd.Process.Pid)
	cancel()
	if c := <-cancelled; c.exited || c.closed {
		t.Fatalf("a cancelled watch reports an exit: %+v", c)
	}
	select {
	case c := <-got:
		t.Fatalf("then called while the process runs: %+v", c)
	default:
	}
	cmd.Process.Kill()
	if c := <-got; !c.exited || !c.closed {
		t.Fatalf("after the exit: %+v, want exited and the channel closed", c)
	}
	cmd.Wait()
	if c := <-watch(context.Background(), cmd.Process.Pid); !c.exited || !c.closed {
		t.Fatalf("a pid already gone: %+v, want exited and the channel closed", c)
	}
}
