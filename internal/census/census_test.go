package census

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fakeHost points the census at a tree of the test's own and returns its
// root.
func fakeHost(t *testing.T) string {
	root := t.TempDir()
	old := []string{procDir, cgroupDir, sysBlock, runDir, idRanges}
	t.Cleanup(func() { procDir, cgroupDir, sysBlock, runDir, idRanges = old[0], old[1], old[2], old[3], old[4] })
	procDir, cgroupDir, sysBlock = filepath.Join(root, "proc"), filepath.Join(root, "cgroup"), filepath.Join(root, "block")
	runDir = filepath.Join(root, "run")
	idRanges = filepath.Join(runDir, "idranges")
	write(t, filepath.Join(cgroupDir, "cgroup.controllers"), "cpu memory")
	write(t, filepath.Join(procDir, "self", "mountinfo"), "")
	return root
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTakeCountsOnlyTheScope: a census names the objects of its scope's
// sandboxes and data dir, and none of another daemon's.
func TestTakeCountsOnlyTheScope(t *testing.T) {
	root := fakeHost(t)
	data := filepath.Join(root, "data")
	mine := func(id string) bool { return id == "sbx-mine" }
	for _, id := range []string{"sbx-mine", "sbx-other"} {
		os.MkdirAll(filepath.Join(cgroupDir, "sbx", id), 0o755)
	}
	write(t, filepath.Join(procDir, "self", "mountinfo"),
		"1 0 8:1 / "+data+"/sandboxes/a/rootfs rw - overlay overlay rw\n"+
			"2 0 0:50 / "+data+"/sandboxes/a/rootfs/mnt/bucket rw - fuse.s3fs s3fs rw\n"+
			"3 0 8:1 / "+runDir+"/sbx-mine/netns rw - nsfs nsfs rw\n"+
			"4 0 8:1 / "+runDir+"/sbx-other/netns rw - nsfs nsfs rw\n"+
			"5 0 8:1 / /elsewhere rw - ext4 /dev/sda1 rw\n")
	write(t, filepath.Join(sysBlock, "loop3", "loop", "backing_file"), data+"/sandboxes/a/disk.img\n")
	write(t, filepath.Join(sysBlock, "loop4", "loop", "backing_file"), "/other/disk.img\n")
	write(t, filepath.Join(procDir, "100", "cgroup"), "0::/sbx/sbx-mine\n")
	write(t, filepath.Join(procDir, "100", "comm"), "sh\n")
	write(t, filepath.Join(procDir, "101", "cgroup"), "0::/sbx/sbx-other\n")
	write(t, filepath.Join(procDir, "102", "cgroup"), "0::/user.slice\n")
	write(t, filepath.Join(procDir, "102", "cmdline"), "s3fs\x00bucket\x00"+data+"/sandboxes/a/rootfs/mnt/bucket\x00")
	write(t, filepath.Join(procDir, "102", "comm"), "s3fs\n")
	write(t, filepath.Join(procDir, "net", "nf_conntrack"),
		"ipv4 2 tcp 6 10 ESTABLISHED src=10.9.0.5 dst=1.1.1.1 sport=1 dport=2\n"+
			"ipv4 2 udp 17 10 src=10.9.0.1 dst=10.9.0.1 sport=1 dport=53\n"+
			"ipv4 2 udp 17 10 src=192.168.0.2 dst=8.8.8.8 sport=1 dport=53\n")
	write(t, filepath.Join(idRanges, "3"), runDir+"/sbx-mine/netns")
	write(t, filepath.Join(idRanges, "4"), runDir+"/sbx-other/netns")
	write(t, filepath.Join(data, "sbx.db"), "")

	c := Take(Scope{DataDir: data, Subnet: "10.9.0.0/24", Sandbox: mine})
	check := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", what, got, want)
		}
	}
	check("cgroups", c.Cgroups, []string{filepath.Join(cgroupDir, "sbx", "sbx-mine")})
	check("mounts", c.Mounts, []string{data + "/sandboxes/a/rootfs", data + "/sandboxes/a/rootfs/mnt/bucket", runDir + "/sbx-mine/netns"})
	check("fuse", c.FUSE, []string{data + "/sandboxes/a/rootfs/mnt/bucket"})
	check("loops", c.Loops, []string{"loop3 " + data + "/sandboxes/a/disk.img"})
	check("processes", c.Processes, []string{"100 sh", "102 s3fs"})
	check("id ranges", c.IDRanges, []string{"3 " + runDir + "/sbx-mine/netns"})
	if c.Conntrack != 1 {
		t.Errorf("conntrack = %d, want 1 (the sandbox's flow, not the gateway's)", c.Conntrack)
	}
	if c.Files != 1 {
		t.Errorf("files = %d, want 1", c.Files)
	}
}

// TestDiffNamesWhatWasLeft: Diff names new and gone objects and changed
// counts; Grown keeps only what grew; Host drops the daemon's own numbers.
func TestDiffNamesWhatWasLeft(t *testing.T) {
	before := &Census{Cgroups: []string{"/a"}, Links: []string{"br"}, NftSets: 2, Files: 10, FDs: 7}
	after := &Census{Cgroups: []string{"/b"}, Links: []string{"br"}, NftSets: 1, Conntrack: 3, Files: 12, FDs: 7}
	changes := Diff(before, after)
	var whats []string
	for _, c := range changes {
		whats = append(whats, c.What)
	}
	if !slices.Equal(whats, []string{"cgroups", "nftables sets", "conntrack entries", "files"}) {
		t.Fatalf("changes: %+v", changes)
	}
	if c := changes[0]; !slices.Equal(c.Added, []string{"/b"}) || !slices.Equal(c.Removed, []string{"/a"}) {
		t.Errorf("cgroups change: %+v", c)
	}
	grown := Grown(changes)
	if len(grown) != 3 || grown[0].What != "cgroups" || grown[1].What != "conntrack entries" || grown[2].What != "files" {
		t.Errorf("grown: %+v", grown)
	}
	if got := Grown(Diff(before.Host(), after.Host())); len(got) != 2 {
		t.Errorf("host changes that grew: %+v, want cgroups and conntrack", got)
	}
	if len(Diff(after, after)) != 0 {
		t.Errorf("a census differs from itself")
	}
}
