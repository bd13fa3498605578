package main

import (
	"archive/tar"
	"os"
	"slices"
	"sort"
	"testing"
	"time"
)

// TestMissingFollowsSymlinks: a dynamically linked program's
// interpreter and libraries are found through symlinks in any component
// (Debian's /lib64/ld-linux-x86-64.so.2 is one) and what is not there is
// reported by name, with who needs it. /bin/sh (dash) stands in for a
// package's program: it links libc.
func TestMissingFollowsSymlinks(t *testing.T) {
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string, body []byte) entry {
		return entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755}, body: body}
	}
	link := func(name, target string) entry {
		return entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target}}
	}
	tr := tree{}
	tr.add(file("bin/dash", sh))
	tr.add(link("bin/sh", "dash"))
	missing, err := tr.missing(libDirs["amd64"])
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n, by := range missing {
		names = append(names, n)
		if !slices.Equal(by, []string{"bin/dash"}) {
			t.Errorf("%s needed by %v, want bin/dash", n, by)
		}
	}
	sort.Strings(names)
	if !slices.Contains(names, "libc.so.6") || len(names) != 2 {
		t.Fatalf("missing = %v, want libc.so.6 and the interpreter", names)
	}
	if interp := names[0]; interp != "/lib64/ld-linux-x86-64.so.2" { // sorts before "libc.so.6"
		t.Fatalf("/bin/sh's interpreter is %s; this test knows amd64's Debian layout", interp)
	}

	// libc6's layout: the interpreter through a symlink in lib64, libc in
	// a directory reached through a symlinked parent (as with merged /usr).
	tr.add(link("lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"))
	tr.add(link("lib", "usr/lib"))
	tr.add(file("usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", []byte("loader")))
	tr.add(file("usr/lib/x86_64-linux-gnu/libc.so.6", []byte("libc")))
	if err := tr.fill(time.Unix(0, 0)); err != nil { // the parent directories
		t.Fatal(err)
	}
	if missing, err := tr.missing(libDirs["amd64"]); err != nil || len(missing) != 0 {
		t.Errorf("with libc6's files: missing %v, %v", missing, err)
	}
}

// TestDocumentationIsLeftOut: manuals and changelogs go, copyright stays.
func TestDocumentationIsLeftOut(t *testing.T) {
	for name, want := range map[string]bool{
		"usr/share/man/man8/runc.8.gz":                 true,
		"usr/share/doc/runc/changelog.Debian.gz":       true,
		"usr/share/locale/de/LC_MESSAGES/e2fsprogs.mo": true,
		"usr/share/doc/runc/copyright":                 false,
		"usr/share/doc/libfoo":                         false, // a symlink to another package's directory
		"usr/sbin/runc":                                false,
	} {
		if got := documentation(name); got != want {
			t.Errorf("documentation(%s) = %v, want %v", name, got, want)
		}
	}
}
