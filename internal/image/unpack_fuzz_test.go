package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
)

// FuzzUnpack feeds arbitrary bytes to the layer extractor. Whatever the input,
// it must not panic, must fail only with a read error or an errdefs error,
// and must never create or change anything outside the layer root: the root
// sits next to a victim file and an empty sibling directory that an escape
// would hit.
//
//	go test -run '^$' -fuzz '^FuzzUnpack$' -fuzztime 1m ./internal/image/
func FuzzUnpack(f *testing.F) {
	seed := func(ents ...tar.Header) {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range ents {
			body := []byte("x")
			if h.Typeflag != tar.TypeReg {
				body = nil
			}
			h.Size = int64(len(body))
			if h.Mode == 0 {
				h.Mode = 0o644
			}
			tw.WriteHeader(&h)
			tw.Write(body)
		}
		tw.Close()
		f.Add(buf.Bytes())
	}
	reg := func(name string) tar.Header { return tar.Header{Typeflag: tar.TypeReg, Name: name} }
	dir := func(name string) tar.Header { return tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755} }
	sym := func(name, target string) tar.Header {
		return tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target}
	}
	hard := func(name, target string) tar.Header {
		return tar.Header{Typeflag: tar.TypeLink, Name: name, Linkname: target}
	}
	seed(reg("a"), dir("d/"), reg("d/f"))
	seed(reg("../victim"))
	seed(reg("/abs"), reg("/../victim"))
	seed(sym("l", ".."), reg("l/victim"))
	seed(sym("l", "/"), reg("l/tmp/x"))
	seed(dir("d/"), sym("d/up", "../.."), reg("d/up/victim"))
	seed(hard("h", "../victim"))
	seed(sym("l", ".."), hard("h", "l/victim"))
	seed(dir("d/"), reg("d/.wh.f"), reg("d/.wh..wh..opq"))
	seed(reg(".wh.."), reg("d/.wh...."))
	seed(sym("l", ".."), reg("l/.wh.victim"))
	seed(sym("l", ".."), tar.Header{Typeflag: tar.TypeFifo, Name: "l/fifo", Mode: 0o600})
	seed(reg("f"), dir("f/"), reg("f/g"))
	seed(tar.Header{Typeflag: tar.TypeReg, Name: "x", PAXRecords: map[string]string{"SCHILY.xattr.trusted.overlay.redirect": "/victim", "SCHILY.xattr.user.a": "b"}})
	f.Add(sparseTar(false))
	f.Add(sparseTar(true))
	f.Add([]byte("not a tar at all"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, data []byte) {
		top := t.TempDir()
		root := filepath.Join(top, "root")
		victim := filepath.Join(top, "victim")
		sibling := filepath.Join(top, "sibling")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(sibling, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(victim, []byte("original"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := unpack(bytes.NewReader(data), root)
		if err != nil {
			var re *readError
			if !errors.As(err, &re) && errdefs.CodeOf(err) == "" {
				t.Fatalf("error is neither a read error nor an errdefs error: %T %v", err, err)
			}
		}
		entries, _ := os.ReadDir(top)
		if len(entries) != 3 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("unpack wrote outside its root: %v", names)
		}
		if b, err := os.ReadFile(victim); err != nil || string(b) != "original" {
			t.Fatalf("victim changed: %q, %v", b, err)
		}
		if fi, err := os.Lstat(victim); err != nil || !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
			t.Fatalf("victim replaced or hard-linked: %v", err)
		}
		if sub, _ := os.ReadDir(sibling); len(sub) != 0 {
			t.Fatalf("unpack wrote into a sibling directory")
		}
	})
}

// TestUnpackRefusesSparse: a sparse entry claims 4 GiB in a few hundred
// bytes; written out it would fill the host's disk.
func TestUnpackRefusesSparse(t *testing.T) {
	for _, gnu := range []bool{false, true} {
		root := t.TempDir()
		_, _, err := unpack(bytes.NewReader(sparseTar(gnu)), root)
		if errdefs.CodeOf(err) != "INVALID_IMAGE" {
			t.Errorf("gnu=%v: want INVALID_IMAGE, got %v", gnu, err)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("gnu=%v: the refused entry left %d files", gnu, len(entries))
		}
	}
}

// TestUnpackRefusesDeviceNodes: a layer's character or block device (a
// host disk, /dev/mem) is refused, and nothing of it is made; under /dev
// (a root filesystem's, hidden by the sandbox's own /dev) it is not made.
func TestUnpackRefusesDeviceNodes(t *testing.T) {
	layer := func(hdrs ...tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range hdrs {
			tw.WriteHeader(&h)
		}
		tw.Close()
		return buf.Bytes()
	}
	for _, typ := range []byte{tar.TypeChar, tar.TypeBlock} {
		for _, name := range []string{"disk", "mnt/sda", "./devices/mem"} {
			root := t.TempDir()
			_, _, err := unpack(bytes.NewReader(layer(tar.Header{Typeflag: typ, Name: name, Mode: 0o666, Devmajor: 8, Devminor: 0})), root)
			if errdefs.CodeOf(err) != "INVALID_IMAGE" {
				t.Errorf("%s type %q: want INVALID_IMAGE, got %v", name, typ, err)
			}
			if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
				t.Errorf("%s type %q: the refused node was made", name, typ)
			}
		}
	}
	root := t.TempDir()
	_, _, err := unpack(bytes.NewReader(layer(
		tar.Header{Typeflag: tar.TypeDir, Name: "./dev/", Mode: 0o755},
		tar.Header{Typeflag: tar.TypeChar, Name: "./dev/console", Mode: 0o600, Devmajor: 5, Devminor: 1},
		tar.Header{Typeflag: tar.TypeBlock, Name: "dev/sda", Mode: 0o600, Devmajor: 8},
	)), root)
	if err != nil {
		t.Fatalf("a root filesystem's /dev: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "dev")); len(entries) != 0 {
		t.Errorf("device nodes under /dev were made: %d entries", len(entries))
	}
}

// sparseTar returns a tar whose one entry is a 4 GiB sparse file holding a
// single byte: PAX sparse format 0.1, or the old GNU 'S' entry. Go's tar
// writer cannot write either, so the blocks are made by hand.
func sparseTar(gnu bool) []byte {
	const realSize = 4 << 30 // the largest the octal fields below hold
	var out []byte
	if gnu {
		h := rawHeader("bomb", 'S', 1)
		copy(h[257:], "ustar  \x00")         // GNU magic
		copy(h[386:], octal(realSize-1, 12)) // sparse[0].offset
		copy(h[398:], octal(1, 12))          // sparse[0].numbytes
		copy(h[483:], octal(realSize, 12))   // realsize
		checksum(h)
		out = append(out, h...)
	} else {
		rec := paxRecord("GNU.sparse.size", strconv.Itoa(realSize)) +
			paxRecord("GNU.sparse.numblocks", "1") +
			paxRecord("GNU.sparse.map", strconv.Itoa(realSize-1)+",1")
		out = append(out, rawHeader("PaxHeaders/bomb", 'x', len(rec))...)
		out = append(out, pad([]byte(rec))...)
		out = append(out, rawHeader("bomb", '0', 1)...)
	}
	out = append(out, pad([]byte{1})...)
	return append(out, make([]byte, 1024)...) // end of archive
}

func rawHeader(name string, typ byte, size int) []byte {
	h := make([]byte, 512)
	copy(h, name)
	copy(h[100:], "0000644\x00")
	copy(h[108:], "0000000\x00")
	copy(h[116:], "0000000\x00")
	copy(h[124:], octal(int64(size), 12))
	copy(h[136:], octal(0, 12))
	h[156] = typ
	copy(h[257:], "ustar\x0000")
	checksum(h)
	return h
}

func checksum(h []byte) {
	copy(h[148:156], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:], fmt.Sprintf("%06o\x00 ", sum))
}

func octal(n int64, width int) string { return fmt.Sprintf("%0*o\x00", width-1, n) }

func pad(b []byte) []byte { return append(b, make([]byte, (512-len(b)%512)%512)...) }

// paxRecord formats "<len> key=value\n", where len counts itself.
func paxRecord(k, v string) string {
	for n := len(k) + len(v) + 3; ; n++ {
		if r := fmt.Sprintf("%d %s=%s\n", n, k, v); len(r) == n {
			return r
		}
	}
}
