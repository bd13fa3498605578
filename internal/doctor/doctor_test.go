package doctor

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/version"
)

// fakeHost is a host with a fake /proc, cgroup dir and PATH under t's temp
// dir; every check passes on it until a test breaks one thing.
func fakeHost(t *testing.T) Host {
	t.Helper()
	root := t.TempDir()
	h := Host{
		ProcDir:      filepath.Join(root, "proc"),
		CgroupDir:    filepath.Join(root, "cgroup"),
		Euid:         func() int { return 0 },
		LookPath:     LocalHost().LookPath,
		Output:       runOutput,
		Busybox:      filepath.Join(root, "busybox"),
		CheckBusybox: func(string) error { return nil },
		SubnetFree:   func(string, netip.Prefix) error { return nil },
		Now:          time.Now,
		ClockSynced:  func() (bool, error) { return true, nil },
	}
	write(t, filepath.Join(h.ProcDir, "filesystems"), "nodev\tproc\nnodev\toverlay\n\text4\n")
	write(t, filepath.Join(h.ProcDir, "cgroups"), "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"+
		"cpu\t1\t1\t1\ncpuacct\t2\t1\t1\nmemory\t3\t1\t1\npids\t4\t1\t1\ndevices\t5\t1\t1\nfreezer\t6\t1\t1\n")
	for _, ns := range []string{"user", "net", "pid", "mnt", "ipc", "uts"} {
		write(t, filepath.Join(h.ProcDir, "self/ns", ns), "")
	}
	write(t, filepath.Join(h.ProcDir, "sys/net/ipv4/ip_forward"), "0\n")
	bin := filepath.Join(root, "bin")
	for _, p := range []string{"runc", "runsc", "nft", "ip", "mkfs.ext4"} {
		writeExec(t, filepath.Join(bin, p), "#!/bin/sh\necho \"$0 version 1.0\"\n")
	}
	t.Setenv("PATH", bin)
	return h
}

// TestRunscPrefersSbxOwn: doctor names sbx's own runsc when installed.
func TestRunscPrefersSbxOwn(t *testing.T) {
	h := fakeHost(t)
	h.BundledRunsc = filepath.Join(t.TempDir(), "runsc")
	writeExec(t, h.BundledRunsc, "#!/bin/sh\necho 'runsc version release-20260905'\n")
	r := checkRunsc(context.Background(), h, fakeConfig(t))
	if r.Status != OK || !strings.Contains(r.Detail, h.BundledRunsc) || !strings.Contains(r.Detail, "release-20260905") {
		t.Errorf("runsc check with sbx's own installed: %+v", r)
	}
	// sbx version names the same runsc, not Debian's on PATH.
	if v := Version(context.Background(), h); v.Runsc != h.BundledRunsc+": runsc version release-20260905" {
		t.Errorf("Version: runsc %q, want sbx's own %s", v.Runsc, h.BundledRunsc)
	}
	// SBX_RUNSC, which sbx serve runs instead, wins for both.
	h.Runsc = filepath.Join(t.TempDir(), "my-runsc")
	writeExec(t, h.Runsc, "#!/bin/sh\necho 'runsc version mine'\n")
	if r := checkRunsc(context.Background(), h, fakeConfig(t)); r.Status != OK || r.Check != "runsc" || r.Detail != h.Runsc+": runsc version mine" {
		t.Errorf("runsc check with SBX_RUNSC: %+v", r)
	}
	if v := Version(context.Background(), h); v.Runsc != h.Runsc+": runsc version mine" {
		t.Errorf("Version with SBX_RUNSC: runsc %q", v.Runsc)
	}
}

func fakeConfig(t *testing.T) Config {
	dir := t.TempDir()
	return Config{DataDir: dir, StorePath: filepath.Join(dir, "sbx.db"), Bridge: "sbx0", Subnet: "10.88.0.0/16", DiskReserveBytes: 1 << 20}
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

func writeExec(t *testing.T, path, script string) {
	write(t, path, script)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func result(t *testing.T, results []Result, check string) Result {
	t.Helper()
	for _, r := range results {
		if r.Check == check {
			return r
		}
	}
	t.Fatalf("no result for %s in %+v", check, results)
	return Result{}
}

func TestAllGreenOnAGoodHost(t *testing.T) {
	results := Run(context.Background(), fakeHost(t), fakeConfig(t))
	for _, r := range results {
		if r.Status != OK {
			t.Errorf("%s: %s %s (fix: %s)", r.Check, r.Status, r.Detail, r.Fix)
		}
	}
	if Failed(results) {
		t.Error("Failed = true")
	}
	if len(results) != len(checks) {
		t.Errorf("%d results for %d checks", len(results), len(checks))
	}
}

// TestEachMissFailsWithAFix breaks one thing at a time on the fake host.
func TestEachMissFailsWithAFix(t *testing.T) {
	cases := []struct {
		name, check string
		want        Status
		fixHas      string
		breakIt     func(t *testing.T, h *Host, cfg *Config)
	}{
		{"not root", "root", Fail, "sudo", func(t *testing.T, h *Host, _ *Config) { h.Euid = func() int { return 1000 } }},
		{"no overlay", "overlayfs", Fail, "modprobe overlay", func(t *testing.T, h *Host, _ *Config) {
			write(t, filepath.Join(h.ProcDir, "filesystems"), "nodev\tproc\n\text4\n")
		}},
		{"no freezer (v1)", "cgroups", Fail, "cgroup_enable", func(t *testing.T, h *Host, _ *Config) {
			write(t, filepath.Join(h.ProcDir, "cgroups"), "cpu\t1\t1\t1\ncpuacct\t2\t1\t1\nmemory\t3\t1\t1\npids\t4\t1\t1\ndevices\t5\t1\t1\nfreezer\t6\t1\t0\n")
		}},
		{"no memory (v2)", "cgroups", Fail, "cgroup_enable", func(t *testing.T, h *Host, _ *Config) {
			write(t, filepath.Join(h.CgroupDir, "cgroup.controllers"), "cpuset cpu io pids\n")
		}},
		{"no user namespaces", "namespaces", Fail, "CONFIG_USER_NS", func(t *testing.T, h *Host, _ *Config) {
			os.Remove(filepath.Join(h.ProcDir, "self/ns/user"))
		}},
		{"user namespaces off", "namespaces", Warn, "max_user_namespaces", func(t *testing.T, h *Host, _ *Config) {
			write(t, filepath.Join(h.ProcDir, "sys/user/max_user_namespaces"), "0\n")
		}},
		{"no runc", "runc", Fail, "apt-get install runc", func(t *testing.T, h *Host, _ *Config) { removeFromPath(t, "runc") }},
		{"no runsc", "runsc", Warn, "apt-get install runsc", func(t *testing.T, h *Host, _ *Config) { removeFromPath(t, "runsc") }},
		{"runsc does not run", "runsc", Warn, "reinstall", func(t *testing.T, h *Host, _ *Config) {
			writeExec(t, filepath.Join(os.Getenv("PATH"), "runsc"), "#!/bin/sh\necho broken >&2\nexit 2\n")
		}},
		{"only Debian's runsc", "runsc", Warn, "scripts/setup.sh", func(t *testing.T, h *Host, _ *Config) {
			h.BundledRunsc = filepath.Join(t.TempDir(), "missing-runsc")
		}},
		{"no nft", "nft", Fail, "apt-get install nftables", func(t *testing.T, h *Host, _ *Config) { removeFromPath(t, "nft") }},
		{"no busybox", "busybox", Fail, "apt-get install busybox-static", func(t *testing.T, h *Host, _ *Config) {
			h.CheckBusybox = func(string) error { return errors.New("dynamically linked") }
		}},
		{"bad subnet", "subnet", Fail, "--subnet", func(t *testing.T, _ *Host, cfg *Config) { cfg.Subnet = "10.88.0.0" }},
		{"subnet taken", "subnet", Fail, "--subnet", func(t *testing.T, h *Host, _ *Config) {
			h.SubnetFree = func(string, netip.Prefix) error { return errors.New("overlaps the route to 10.88.0.0/24 on eth1") }
		}},
		{"disk below reserve", "disk", Fail, "free space", func(t *testing.T, _ *Host, cfg *Config) { cfg.DiskReserveBytes = 1 << 62 }},
		{"newer store", "store", Fail, "newer sbx", func(t *testing.T, _ *Host, cfg *Config) { makeStore(t, cfg.StorePath, 1_000_000) }},
		{"clock unsynced", "clock", Warn, "NTP", func(t *testing.T, h *Host, _ *Config) {
			h.ClockSynced = func() (bool, error) { return false, nil }
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, cfg := fakeHost(t), fakeConfig(t)
			c.breakIt(t, &h, &cfg)
			results := Run(context.Background(), h, cfg)
			r := result(t, results, c.check)
			if r.Status != c.want || !strings.Contains(r.Fix, c.fixHas) {
				t.Fatalf("%s: %s %q fix %q; want %s with a fix that says %q", c.check, r.Status, r.Detail, r.Fix, c.want, c.fixHas)
			}
			if Failed(results) != (c.want == Fail) {
				t.Errorf("Failed = %v with one %s", Failed(results), c.want)
			}
			for _, other := range results {
				if other.Check != c.check && other.Status != OK {
					t.Errorf("%s also %s: %s", other.Check, other.Status, other.Detail)
				}
			}
		})
	}
}

func removeFromPath(t *testing.T, program string) {
	if err := os.Remove(filepath.Join(os.Getenv("PATH"), program)); err != nil {
		t.Fatal(err)
	}
}

func TestStoreVersions(t *testing.T) {
	h, cfg := fakeHost(t), fakeConfig(t)
	if r := checkStore(context.Background(), h, cfg); r.Status != OK || !strings.Contains(r.Detail, "does not exist yet") {
		t.Errorf("no store: %+v", r)
	}
	makeStore(t, cfg.StorePath, 1)
	if r := checkStore(context.Background(), h, cfg); r.Status != OK || !strings.Contains(r.Detail, "migrates it") {
		t.Errorf("old store: %+v", r)
	}
}

func TestClockBeforeTheCommitFails(t *testing.T) {
	if commitTime().IsZero() {
		t.Skip("this test binary has no vcs.time stamp")
	}
	h := fakeHost(t)
	h.Now = func() time.Time { return time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC) }
	if r := checkClock(context.Background(), h, Config{}); r.Status != Fail {
		t.Errorf("clock in 2001: %+v", r)
	}
}

func TestVersionOfReadsTheStamps(t *testing.T) {
	v := versionOf(&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}}})
	if v.Version != version.Version || v.Module != "v1.2.3" || v.Commit != "abc123" || !v.Modified || v.CommitTime != "2026-12-01T10:00:00Z" || !strings.HasPrefix(v.Go, "go") {
		t.Errorf("versionOf = %+v", v)
	}
	if v := versionOf(nil); v.Version != version.Version || v.Module != "" {
		t.Errorf("versionOf(nil) = %+v", v)
	}
}

func TestVersionNamesMissingPrograms(t *testing.T) {
	h := fakeHost(t)
	removeFromPath(t, "runsc")
	v := Version(context.Background(), h)
	if !strings.Contains(v.Runc, "runc version 1.0") || v.Runsc != "not found" {
		t.Errorf("Version: runc %q, runsc %q", v.Runc, v.Runsc)
	}
}
