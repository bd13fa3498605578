package image

import (
	"archive/tar"
	"context"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// BaseImage is the name of the image EnsureBase makes.
const BaseImage = "base"

// EnsureBase creates the image "base" if there is none: the host's static
// busybox with a link per applet and a minimal /etc, imported like any rootfs
// tar so it gets a content digest. The tar is deterministic, so the same
// busybox always gives the same image ID.
func (m *Manager) EnsureBase(ctx context.Context) error {
	_, err := m.rec.GetImage(ctx, BaseImage)
	if err == nil || !errdefs.Is(err, errdefs.KindNotFound) {
		return err
	}
	if err := checkStatic(m.busybox); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, m.busybox, "--list").Output()
	if err != nil {
		return errdefs.Internal(err, "listing busybox applets")
	}
	fi, err := os.Stat(m.busybox)
	if err != nil {
		return errdefs.Internal(err, "reading %s", m.busybox)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeBaseTar(pw, m.busybox, fi.ModTime(), strings.Fields(string(out)))) }()
	defer pr.Close() // unblocks the writer if the import stops early
	_, err = m.save(ctx, BaseImage, "base", func() (*store.Image, error) {
		img, err := m.importStream(ctx, pr)
		if err == nil {
			img.Config = store.ImageConfig{
				Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
				Cmd: []string{"/bin/sh"},
			}
		}
		return img, err
	})
	return err
}

// checkStatic refuses a missing or dynamically linked busybox: the base image
// has no libc for it to load.
func checkStatic(path string) error {
	const fix = "; install it with `apt-get install busybox-static`"
	f, err := elf.Open(path)
	if err != nil {
		return errdefs.Unavailable(wire.CodeBusyboxMissing, "cannot build the base image: %s is missing or not an ELF binary (%v)"+fix, path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errdefs.Unavailable(wire.CodeBusyboxMissing, "cannot build the base image: %s is dynamically linked"+fix, path)
		}
	}
	return nil
}

var appletRE = regexp.MustCompile(`^[a-zA-Z0-9_.\[\]-]+$`)

func writeBaseTar(w io.Writer, busybox string, mtime time.Time, applets []string) error {
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return err
	}
	b := &tarBuilder{tw: tar.NewWriter(w), mtime: mtime}
	b.dir("bin", 0o755)
	b.file("bin/busybox", 0o755, string(bb))
	applets = append(applets, "sh")
	slices.Sort(applets)
	for _, a := range slices.Compact(applets) {
		if a != "busybox" && a != "." && a != ".." && appletRE.MatchString(a) {
			b.link("bin/"+a, "busybox")
		}
	}
	b.dir("dev", 0o755)
	b.dir("etc", 0o755)
	b.file("etc/group", 0o644, "root:x:0:\nnogroup:x:65534:\n")
	b.file("etc/hostname", 0o644, "")
	b.file("etc/hosts", 0o644, "127.0.0.1\tlocalhost\n::1\tlocalhost\n")
	b.file("etc/passwd", 0o644, "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
	b.dir("proc", 0o555)
	b.dir("root", 0o700)
	b.dir("sys", 0o555)
	b.dir("tmp", 0o1777)
	b.dir("usr", 0o755)
	b.dir("usr/bin", 0o755)
	b.link("usr/bin/env", "/bin/busybox")
	b.dir("workspace", 0o755)
	if b.err != nil {
		return b.err
	}
	return b.tw.Close()
}

// tarBuilder writes entries with one mtime and keeps the first error.
type tarBuilder struct {
	tw    *tar.Writer
	mtime time.Time
	err   error
}

func (b *tarBuilder) add(hdr *tar.Header, data string) {
	if b.err != nil {
		return
	}
	hdr.ModTime, hdr.Size = b.mtime, int64(len(data))
	if b.err = b.tw.WriteHeader(hdr); b.err == nil {
		_, b.err = io.WriteString(b.tw, data)
	}
}

func (b *tarBuilder) dir(name string, mode int64) {
	b.add(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode}, "")
}

func (b *tarBuilder) file(name string, mode int64, data string) {
	b.add(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode}, data)
}

func (b *tarBuilder) link(name, target string) {
	b.add(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}, "")
}
