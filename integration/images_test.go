package integration

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/sbxhq/sbx/sdk"
)

// busyboxTar is a minimal rootfs: the host's static busybox and a shell.
func busyboxTar(t *testing.T, extra map[string]string) []byte {
	t.Helper()
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bb))})
	tw.Write(bb)
	for _, applet := range []string{"sh", "cat", "echo", "true", "ls"} {
		tw.WriteHeader(&tar.Header{Name: "bin/" + applet, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777})
	}
	for p, content := range extra {
		tw.WriteHeader(&tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(content))})
		tw.Write([]byte(content))
	}
	tw.Close()
	return buf.Bytes()
}

func TestPullFromLoopbackRegistry(t *testing.T) {
	// A registry on the host's loopback is below the network floor: the
	// operator allows 127.0.0.1 (and only it).
	d := startDaemon(t, "--egress-allow-private", "127.0.0.1")
	ctx := context.Background()
	reg := httptest.NewServer(registry.New())
	defer reg.Close()
	other := httptest.NewUnstartedServer(registry.New())
	other.Listener.Close()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	other.Listener = ln
	other.Start()
	defer other.Close()
	if _, err := d.client.PullImage(ctx, strings.TrimPrefix(other.URL, "http://")+"/test/bb:1", "refused"); err == nil || !strings.Contains(err.Error(), "network floor") {
		t.Errorf("pull from 127.0.0.2, below the floor: %v, want refused", err)
	}

	data := busyboxTar(t, map[string]string{"etc/motd": "pulled image\n"})
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Env: []string{"FROM_IMAGE=yes"}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(strings.TrimPrefix(reg.URL, "http://") + "/test/bb:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}

	got, err := d.client.PullImage(ctx, ref.String(), "bb")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "bb" || got.Layers != 1 || !strings.HasPrefix(got.ID, "sha256:") {
		t.Errorf("pulled image = %+v", got)
	}
	sb := d.create(sdk.CreateSandboxRequest{Image: "bb"})
	res, err := d.client.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "cat /etc/motd; echo $FROM_IMAGE"})
	if err != nil || res.Stdout != "pulled image\nyes\n" {
		t.Errorf("exec in pulled image = %+v, %v", res, err)
	}
	if _, err := d.client.PullImage(ctx, strings.TrimPrefix(reg.URL, "http://")+"/test/missing:1", "missing"); !sdk.IsNotFound(err) {
		t.Errorf("pull of a missing image: want not found, got %v", err)
	}
	if err := d.client.RemoveImage(ctx, "bb"); !sdk.IsConflict(err) {
		t.Errorf("remove image in use: want conflict, got %v", err)
	}
	if err := d.client.DeleteSandbox(ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := d.client.RemoveImage(ctx, "bb"); err != nil {
		t.Errorf("remove unused image: %v", err)
	}

	// A build FROM an image sbx does not have pulls it first, with the pull
	// as progress events; a FROM the registry lacks fails naming it.
	baseRef := strings.TrimPrefix(reg.URL, "http://") + "/test/base:1"
	if err := remote.Write(must(name.ParseReference(baseRef)), img); err != nil {
		t.Fatal(err)
	}
	var pulls []string
	built, err := d.client.BuildImageSteps(ctx, sdk.BuildRequest{Name: "onpulled", From: baseRef, Steps: []sdk.BuildStep{{Run: "cat /etc/motd > /copied"}}},
		func(ev sdk.BuildEvent) {
			if ev.Type == "pull" {
				pulls = append(pulls, ev.Data)
			}
		})
	if err != nil || len(pulls) != 2 || !strings.HasPrefix(pulls[0], "pulling "+baseRef) || !strings.HasPrefix(pulls[1], "pulled "+baseRef) {
		t.Fatalf("build from a registry image: %+v %v, pull events %q", built, err, pulls)
	}
	if _, err := d.client.GetImage(ctx, baseRef); err != nil {
		t.Errorf("the pulled base is not kept as %s: %v", baseRef, err)
	}
	d.create(sdk.CreateSandboxRequest{Name: "onpulled", Image: "onpulled"})
	if res, err := d.client.Exec(ctx, "onpulled", sdk.ExecRequest{Shell: "cat /copied; echo $FROM_IMAGE"}); err != nil || res.Stdout != "pulled image\nyes\n" {
		t.Errorf("exec in the image built on a pulled one = %+v, %v", res, err)
	}
	missing := strings.TrimPrefix(reg.URL, "http://") + "/test/missing:1"
	var last sdk.BuildEvent
	_, err = d.client.BuildImageSteps(ctx, sdk.BuildRequest{Name: "onmissing", From: missing, Steps: []sdk.BuildStep{{Run: "true"}}},
		func(ev sdk.BuildEvent) { last = ev })
	if apiCode(err) != string(sdk.CodeImageNotFound) || last.Type != "error" || last.Error.Code != sdk.CodeImageNotFound || !strings.Contains(last.Error.Message, "FROM "+missing) {
		t.Errorf("build from a missing registry image: %v, last event %+v", err, last)
	}
	if _, err := d.client.GetImage(ctx, "onmissing"); !sdk.IsNotFound(err) {
		t.Errorf("a failed pull left an image: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
