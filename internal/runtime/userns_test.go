package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/userns"
)

// An instance runs as a range of host ids of its own: its root is not host
// root, and what it writes is stored with the ids it sees (issue 13.4).
func TestRuncUserNamespace(t *testing.T) {
	needsRunc(t)
	ctx := context.Background()
	r := newTestRunc(t, []string{"/bin/sleep", "1000"})
	inst := newTestInstance(t, r)
	st, err := r.Start(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	uidMap := strings.Fields(mustExec(t, r, inst.ID, "cat", "/proc/self/uid_map"))
	if len(uidMap) != 3 || uidMap[0] != "0" || uidMap[2] != fmt.Sprint(userns.Size) || len(uidMap[1]) < len(fmt.Sprint(userns.FirstHostID)) {
		t.Fatalf("uid_map inside = %q, want 0 <base> %d", uidMap, userns.Size)
	}
	var fi syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d", st.Pid), &fi); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(fi.Uid) != uidMap[1] {
		t.Fatalf("the agent runs as host uid %d, want %s", fi.Uid, uidMap[1])
	}
	mustExec(t, r, inst.ID, "sh", "-c", "echo x > /tmp/made-inside")
	if err := syscall.Stat(filepath.Join(inst.RootfsDir, "tmp/made-inside"), &fi); err != nil {
		t.Fatal(err)
	}
	// The rootfs here is a plain directory, bound idmapped: on disk the
	// file is root's, as an image's files are.
	if fi.Uid != 0 || fi.Gid != 0 {
		t.Fatalf("file made inside is %d:%d on disk, want 0:0", fi.Uid, fi.Gid)
	}
	if err := r.Delete(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(runtime.SbxRunDir, inst.ID)); !os.IsNotExist(err) {
		t.Fatalf("%s/%s left behind: %v", runtime.SbxRunDir, inst.ID, err)
	}
}

// A crash mid-start can leave the idmapped views of the layer store
// mounted under /run/sbx/<id>; removing them must never delete what they
// show.
func TestLeaveUsernsKeepsWhatLeakedViewsShow(t *testing.T) {
	needsRunc(t)
	layers := t.TempDir()
	keep := filepath.Join(layers, "layer-file")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := "sbxtest-leak-" + filepath.Base(layers)
	view := filepath.Join(runtime.SbxRunDir, id, "l", "0")
	if err := os.MkdirAll(view, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(layers, view, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(view, syscall.MNT_DETACH) })
	if err := runtime.LeaveUserns(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("removing a leaked view deleted the layer behind it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(runtime.SbxRunDir, id)); !os.IsNotExist(err) {
		t.Fatalf("%s left behind: %v", id, err)
	}
}
