package runtime

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The subreaper is process-wide and cannot be undone, so one test covers
// it: orphans are reaped (also while WatchExit holds a pidfd on them), and
// os/exec, busy at the same time, never loses a child to it.
func TestSubreaperReapsOrphansNotOSExecChildren(t *testing.T) {
	if err := StartSubreaper(slog.Default()); err != nil {
		t.Fatal(err)
	}

	// os/exec under load while orphans come and go: every Wait must get its
	// child's real status (a stolen child gives "no child processes").
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				want := (g + i) % 3
				err := exec.Command("sh", "-c", "exit "+strconv.Itoa(want)).Run()
				var ee *exec.ExitError
				switch {
				case want == 0 && err != nil:
					errs <- err
				case want != 0 && (!errors.As(err, &ee) || ee.ExitCode() != want):
					errs <- err
				}
			}
		}()
	}

	var orphans []int
	for i := range 20 {
		// sh exits at once; its background sleep is orphaned to us.
		out, err := exec.Command("sh", "-c", "sleep 0.0"+strconv.Itoa(i%10)+" & echo $!").Output()
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 { // a pidfd of WatchExit's must not hold the reap up
			if _, err := WatchExit(context.Background(), pid); err != nil {
				t.Fatal(err)
			}
		}
		orphans = append(orphans, pid)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("os/exec child lost to the subreaper or misreported: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, pid := range orphans {
		for processExists(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("orphan %d was not reaped (zombie: %v)", pid, isZombie(pid))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// processExists reports whether pid exists at all, zombie or not.
func processExists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil || !errors.Is(err, syscall.ENOENT)
}

// anyZombie sees an exited child not yet waited for, and nothing once it
// is: the sweep it guards is skipped only when there is nothing to reap.
func TestAnyZombie(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !anyZombie() {
		if time.Now().After(deadline) {
			t.Fatal("an exited child was never seen as a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if anyZombie() {
		t.Error("a zombie is seen after its child was waited for")
	}
}
