package loopdisk

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dumpe2fs returns the superblock header of img as dumpe2fs prints it.
func dumpe2fs(t *testing.T, img string) string {
	t.Helper()
	out, err := exec.Command("dumpe2fs", "-h", img).CombinedOutput()
	if err != nil {
		t.Fatalf("dumpe2fs %s: %v: %s", img, err, out)
	}
	return string(out)
}

func field(header, name string) string {
	for _, line := range strings.Split(header, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Images copied from one template are each a clean ext4 file system of
// the size asked for, with a UUID and hash seed of their own, and take
// host space only for what the template wrote.
func TestMakeFromTemplate(t *testing.T) {
	for _, p := range []string{"mkfs.ext4", "dumpe2fs", "e2fsck"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not installed", p)
		}
	}
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "templates")
	seen := map[string]bool{}
	for i, name := range []string{"a.img", "b.img", "c.img"} {
		img := filepath.Join(dir, name)
		if err := MakeFromTemplate(img, 256, tmpl); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("e2fsck", "-f", "-n", img).CombinedOutput(); err != nil {
			t.Fatalf("image %d does not check clean: %v\n%s", i, err, out)
		}
		h := dumpe2fs(t, img)
		if got := field(h, "Block count"); got != "65536" && got != "262144" {
			t.Errorf("image %d: block count %s, not 256 MiB", i, got)
		}
		for _, f := range []string{"Filesystem UUID", "Directory Hash Seed"} {
			v := field(h, f)
			if v == "" || seen[v] {
				t.Errorf("image %d: %s %q is empty or another image's", i, f, v)
			}
			seen[v] = true
		}
		fi, err := os.Stat(img)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != 256<<20 {
			t.Errorf("image %d: %d bytes, want %d", i, fi.Size(), 256<<20)
		}
	}
	th := dumpe2fs(t, filepath.Join(tmpl, "ext4-256m.img"))
	if seen[field(th, "Filesystem UUID")] {
		t.Error("an image kept the template's UUID")
	}
}

// A template whose superblock checksum does not verify is not copied: the
// image is formatted afresh, and the template made again next time.
func TestMakeFromBrokenTemplate(t *testing.T) {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("mkfs.ext4 not installed")
	}
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "templates")
	if err := MakeFromTemplate(filepath.Join(dir, "a.img"), 64, tmpl); err != nil {
		t.Fatal(err)
	}
	tp := filepath.Join(tmpl, "ext4-64m.img")
	f, err := os.OpenFile(tp, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, sbOffset+sbHashSeed); err != nil { // checksum no longer matches
		t.Fatal(err)
	}
	f.Close()
	img := filepath.Join(dir, "b.img")
	if err := MakeFromTemplate(img, 64, tmpl); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("e2fsck", "-f", "-n", img).CombinedOutput(); err != nil {
		t.Fatalf("image does not check clean: %v\n%s", err, out)
	}
	if _, err := os.Stat(tp); !os.IsNotExist(err) {
		t.Errorf("the broken template is still there: %v", err)
	}
}

// The templates directory keeps the maxTemplates sizes made last, so asking
// for many sizes cannot fill the data disk with templates.
func TestTemplatesAreFew(t *testing.T) {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("mkfs.ext4 not installed")
	}
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "templates")
	var sizes []int
	for i := range maxTemplates + 2 {
		sizes = append(sizes, 64+i)
		if err := MakeFromTemplate(filepath.Join(dir, strconv.Itoa(i)+".img"), 64+i, tmpl); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := filepath.Glob(filepath.Join(tmpl, "*"))
	var want []string
	for _, s := range sizes[len(sizes)-maxTemplates:] {
		want = append(want, filepath.Join(tmpl, "ext4-"+strconv.Itoa(s)+"m.img"))
	}
	if !slices.Equal(got, want) {
		t.Errorf("templates:\n%v\nwant the last %d sizes':\n%v", got, maxTemplates, want)
	}
}
