package userns

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

func TestCreateOpenRemove(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	slotsDir = t.TempDir()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := Create(a); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(a) })
	if err := Create(b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(b) })
	base := func(p string) uint32 {
		ns, err := Open(p)
		if err != nil || ns == nil {
			t.Fatalf("open %s: %v %v", p, ns, err)
		}
		defer ns.Close()
		return ns.Base
	}
	if base(a) != Base(0) || base(b) != Base(1) {
		t.Fatalf("bases %d %d, want %d %d", base(a), base(b), Base(0), Base(1))
	}
	if err := Remove(a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatalf("pin %s still there: %v", a, err)
	}
	// The freed range is handed out again; b's is not.
	c := filepath.Join(dir, "c")
	if err := Create(c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(c) })
	if base(c) != Base(0) {
		t.Fatalf("freed range not reused: %d", base(c))
	}
	// The host's own namespace is not a sandbox's.
	if ns, err := Open("/proc/self/ns/net"); err != nil || ns != nil {
		t.Fatalf("host netns: %v %v", ns, err)
	}
}

func TestStaleClaimIsTakenOver(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	slotsDir = t.TempDir()
	defer func(n int) { slots = n }(slots)
	slots = 2
	// A claim whose namespace is gone (its data directory was wiped).
	if err := os.WriteFile(filepath.Join(slotsDir, "0"), []byte("/nonexistent/netns"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An unclaimed range goes first (no claim is checked then); once none
	// is left, the stale claim's range is taken over.
	for _, want := range []int{1, 0} {
		p := filepath.Join(t.TempDir(), "ns")
		if err := Create(p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { Remove(p) })
		ns, err := Open(p)
		if err != nil || ns == nil {
			t.Fatal(ns, err)
		}
		if ns.Base != Base(want) {
			t.Errorf("base %d, want %d (slot %d)", ns.Base, Base(want), want)
		}
		ns.Close()
	}
	if err := Create(filepath.Join(t.TempDir(), "ns")); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a third namespace with two ranges: %v, want all in use", err)
	}
}

// Many sandboxes start at once: each gets a range of its own.
func TestCreateConcurrently(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	slotsDir = t.TempDir()
	dir := t.TempDir()
	const n = 30
	errs := make(chan error, n)
	for i := range n {
		p := filepath.Join(dir, fmt.Sprint(i))
		t.Cleanup(func() { Remove(p) })
		go func() {
			// Network setup ends threads it locked; that must not kill
			// a helper started meanwhile.
			done := make(chan struct{})
			go func() { goruntime.LockOSThread(); close(done) }()
			errs <- Create(p)
			<-done
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	seen := map[uint32]bool{}
	for i := range n {
		ns, err := Open(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil || ns == nil {
			t.Fatalf("%d: %v %v", i, ns, err)
		}
		if seen[ns.Base] {
			t.Errorf("range %d handed out twice", ns.Base)
		}
		seen[ns.Base] = true
		ns.Close()
	}
}
