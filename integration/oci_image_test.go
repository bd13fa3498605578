package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/version"
)

// TestOCIImage: the images scripts/build-oci.sh builds load into Docker
// (docker load) and containerd (ctr import, namespace k8s.io, as a
// kubelet sees it) and run what deploy/kubernetes runs in them: the
// DaemonSet's init container and sbx serve with its arguments, sbx
// gateway, and runc, nft, ip, mkfs.ext4 and sbx's runsc. A dockerd of its own
// (no bridge, no iptables rules, containers without a network) and the
// containerd it starts are stopped at the end.
func TestOCIImage(t *testing.T) {
	for _, p := range []string{"dockerd", "docker", "ctr"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed: apt-get install docker.io (scripts/setup-tests.sh)", p)
		}
	}
	out, err := exec.Command("../scripts/build-oci.sh", t.TempDir()).Output()
	if err != nil {
		t.Fatalf("build-oci.sh: %v %s", err, stderrOf(err))
	}
	archives := strings.Fields(string(out))
	if len(archives) != 2 {
		t.Fatalf("build-oci.sh printed %q", out)
	}
	hostImage, gatewayImage := "ghcr.io/sbxhq/sbx-host:"+version.Version, "ghcr.io/sbxhq/sbx-gateway:"+version.Version

	dir, err := os.MkdirTemp("/var/tmp", "sbx-docker-") // overlay2 needs a real file system, not tmpfs
	if err != nil {
		t.Fatal(err)
	}
	sock := "unix://" + filepath.Join(dir, "docker.sock")
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	dockerd := exec.Command("dockerd", "--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"), "-H", sock,
		"--bridge", "none", "--iptables=false", "--ip6tables=false", "--ip-masq=false", "--userland-proxy=false",
		"--storage-driver", "overlay2", "--log-level", "warn")
	dockerd.Stdout, dockerd.Stderr = logf, logf
	if err := dockerd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	exited := make(chan struct{})
	go func() { dockerd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// dockerd stops its containerd and unmounts its layers on SIGTERM.
		dockerd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			dockerd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "dockerd.log")); err == nil {
				t.Logf("dockerd log:\n%s", lastLines(string(b), 30))
			}
		}
		os.RemoveAll(dir)
	})
	docker := func(args ...string) (string, error) {
		out, err := exec.Command("docker", append([]string{"-H", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	waitFor(t, 60*time.Second, "dockerd to answer", func() bool {
		_, err := docker("version")
		return err == nil
	})

	for i, want := range []string{hostImage, gatewayImage} {
		if out, err := docker("load", "-i", archives[i]); err != nil || !strings.Contains(out, "Loaded image: "+want) {
			t.Fatalf("docker load %s: %v %s", archives[i], err, out)
		}
	}
	for _, tc := range []struct {
		image string
		cmd   []string
		want  string
	}{
		{hostImage, []string{"/usr/local/bin/sbx", "version"}, "sbx " + version.Version},
		{hostImage, []string{"/bin/busybox", "true"}, ""},
		{hostImage, []string{"runc", "--version"}, "runc version"},
		{hostImage, []string{"nft", "--version"}, "nftables v"},
		{hostImage, []string{"ip", "-V"}, "iproute2"},
		{hostImage, []string{"mkfs.ext4", "-V"}, "mke2fs"},
		{hostImage, []string{"unshare", "--version"}, "util-linux"},
		{hostImage, []string{"/usr/local/lib/sbx/runsc", "--version"}, "runsc version"},
		{hostImage, []string{"/bin/busybox", "test", "-x", "/usr/local/bin/sbx-agent"}, ""},
		{gatewayImage, []string{"/usr/local/bin/sbx", "version"}, "sbx " + version.Version},
	} {
		out, err := docker(append([]string{"run", "--rm", "--network", "none", "--entrypoint", tc.cmd[0], tc.image}, tc.cmd[1:]...)...)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s in %s: %v\n%s", strings.Join(tc.cmd, " "), tc.image, err, out)
		}
	}
	// The images' own entrypoints: sbx serve and sbx gateway, here asked for help.
	for _, img := range []string{hostImage, gatewayImage} {
		if out, err := docker("run", "--rm", "--network", "none", img, "--help"); err != nil || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: %v\n%s", img, err, out)
		}
	}

	// The DaemonSet's containers, as deploy/kubernetes runs them: the init
	// container puts the admin key of its Secret volume where sbx serve
	// keeps it, and sbx serve takes its arguments (--help: parse only).
	rendered, err := exec.Command(filepath.Join(kubeBin(t), "kubectl"), "kustomize", kubeDeploy).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v %s", err, stderrOf(err))
	}
	objs := parseManifests(t, string(rendered))
	ds := objs.daemonSet(t, "sbx-host")
	init := containerNamed(t, ds.Spec.Template.Spec.InitContainers, "admin-token")
	secret, data := filepath.Join(dir, "secret"), filepath.Join(dir, "hostdata")
	// A Secret volume's file is a symlink into a ..data directory.
	os.MkdirAll(filepath.Join(secret, "..data"), 0o755)
	os.WriteFile(filepath.Join(secret, "..data", "token"), []byte("key-of-the-secret\n"), 0o644)
	os.Symlink("..data/token", filepath.Join(secret, "token"))
	os.MkdirAll(data, 0o755)
	mounts := map[string]string{"admin-token": secret, "data": data}
	run := []string{"run", "--rm", "--network", "none"}
	for _, m := range init.VolumeMounts {
		v := mounts[m.Name] + ":" + m.MountPath
		if m.ReadOnly {
			v += ":ro"
		}
		run = append(run, "-v", v)
	}
	if out, err := docker(append(append(run, "--entrypoint", init.Command[0], init.Image), init.Command[1:]...)...); err != nil {
		t.Errorf("the init container %q: %v\n%s", init.Command, err, out)
	}
	fi, err := os.Stat(filepath.Join(data, "admin.token"))
	if key, _ := os.ReadFile(filepath.Join(data, "admin.token")); err != nil || string(key) != "key-of-the-secret\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("after the init container, admin.token is %q (%v, %v), want the Secret's key, mode 0600", key, fi, err)
	}
	sbx := containerNamed(t, ds.Spec.Template.Spec.Containers, "sbx")
	args := expandArgs(append(sbx.Command[1:], sbx.Args...), objs.containerEnv(t, sbx))
	if out, err := docker(append(append([]string{"run", "--rm", "--network", "none", "--entrypoint", sbx.Command[0], sbx.Image}, args...), "--help")...); err != nil {
		t.Errorf("the DaemonSet's %q in its image: %v\n%s", sbx.Command, err, out)
	}

	// containerd, as the kubelet of a containerd node finds images.
	ctrSock := filepath.Join(dir, "exec", "containerd", "containerd.sock")
	ctr := func(args ...string) (string, error) {
		out, err := exec.Command("ctr", append([]string{"--address", ctrSock, "-n", "k8s.io"}, args...)...).CombinedOutput()
		return string(out), err
	}
	for _, a := range archives {
		if out, err := ctr("images", "import", a); err != nil {
			t.Fatalf("ctr import %s: %v %s", a, err, out)
		}
	}
	names, err := ctr("images", "ls", "-q")
	for _, want := range []string{hostImage, gatewayImage} {
		if err != nil || !strings.Contains(names, want+"\n") {
			t.Errorf("ctr -n k8s.io images ls: %v %q, want %s", err, names, want)
		}
	}
	ran, err := ctr("run", "--rm", hostImage, "sbx-oci-test", "/usr/local/bin/sbx", "version")
	if err != nil || !strings.Contains(ran, "sbx "+version.Version) {
		t.Errorf("ctr run %s sbx version: %v %s", hostImage, err, ran)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
