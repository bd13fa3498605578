package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/version"
)

// TestReleaseIsReproducible runs scripts/release.sh twice on HEAD and
// compares every artefact byte for byte, then checks what the .deb
// declares and holds. One architecture and no runsc keep it short: the
// arm64 build differs only in GOARCH, and runsc is gVisor's own build of a
// pinned version (scripts/fresh-machine-check.sh --deb builds the full set).
func TestReleaseIsReproducible(t *testing.T) {
	for _, p := range []string{"git", "go", "tar", "dpkg-deb"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is needed: %v", p, err)
		}
	}
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, d := range dirs {
		cmd := exec.Command("../scripts/release.sh", version.Version, d)
		cmd.Env = append(os.Environ(), "SBX_RELEASE_ARCHES=amd64", "SBX_RELEASE_RUNSC=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("release.sh: %v\n%s", err, out)
		}
	}
	names := []string{"SHA256SUMS", "sbx_" + version.Version + "_linux_amd64.tar.gz", "sbx_" + version.Version + "_amd64.deb"}
	for _, n := range names {
		a, errA := os.ReadFile(filepath.Join(dirs[0], n))
		b, errB := os.ReadFile(filepath.Join(dirs[1], n))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", n, errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of one commit", n)
		}
	}
	if sums, _ := os.ReadFile(filepath.Join(dirs[0], "SHA256SUMS")); strings.Count(string(sums), "\n") != 2 {
		t.Errorf("SHA256SUMS:\n%s", sums)
	}

	tarList := run(t, "tar", "-tvzf", filepath.Join(dirs[0], names[1]))
	for _, f := range []string{"/sbx\n", "/sbx-agent\n", "/LICENSE\n", "/sbx.service\n", "/CHANGELOG.md\n"} {
		if !strings.Contains(tarList, f) {
			t.Errorf("the tarball has no %s:\n%s", strings.TrimSpace(f), tarList)
		}
	}
	if strings.Contains(tarList, "runsc") {
		t.Errorf("SBX_RELEASE_RUNSC=0 still shipped runsc:\n%s", tarList)
	}

	deb := filepath.Join(dirs[0], names[2])
	for field, want := range map[string]string{
		"Package":      "sbx",
		"Version":      version.Version,
		"Architecture": "amd64",
		"Depends":      "runc, nftables, iproute2, e2fsprogs, busybox-static",
	} {
		if got := strings.TrimSpace(run(t, "dpkg-deb", "-f", deb, field)); got != want {
			t.Errorf("the .deb's %s = %q, want %q", field, got, want)
		}
	}
	contents := run(t, "dpkg-deb", "-c", deb)
	for _, f := range []string{"./usr/bin/sbx\n", "./usr/bin/sbx-agent\n", "./lib/systemd/system/sbx.service\n", "./etc/sbx/sbx.env\n"} {
		if !strings.Contains(contents, f) {
			t.Errorf("the .deb has no %s:\n%s", strings.TrimSpace(f), contents)
		}
	}
	ctl := t.TempDir()
	run(t, "dpkg-deb", "-e", deb, ctl)
	if conffiles, err := os.ReadFile(filepath.Join(ctl, "conffiles")); err != nil || strings.TrimSpace(string(conffiles)) != "/etc/sbx/sbx.env" {
		t.Errorf("conffiles = %q (%v), want /etc/sbx/sbx.env", conffiles, err)
	}
	data := t.TempDir()
	run(t, "dpkg-deb", "-x", deb, data)
	unit, err := os.ReadFile(filepath.Join(data, "lib/systemd/system/sbx.service"))
	if err != nil {
		t.Fatal(err)
	}
	if got := unitValues(t, string(unit))["Service.ExecStart"]; len(got) != 1 || got[0] != "/usr/bin/sbx serve" {
		t.Errorf("the packaged unit's ExecStart = %q, want /usr/bin/sbx serve", got)
	}
	if env, err := os.ReadFile(filepath.Join(data, "etc/sbx/sbx.env")); err != nil || string(env) != DefaultEnv {
		t.Errorf("/etc/sbx/sbx.env is not packaging/sbx.env: %v", err)
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}
