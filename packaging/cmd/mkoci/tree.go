package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// A tree is a layer's file system: entries by path ("usr/bin/runc").
type tree map[string]*entry

// add puts e in the tree. A directory already there stays (packages share
// /usr, /usr/lib, …); a file replaces what was there, so the caller adds
// packages in a fixed order.
func (t tree) add(e entry) {
	if old, ok := t[e.hdr.Name]; ok && old.hdr.Typeflag == tar.TypeDir && e.hdr.Typeflag == tar.TypeDir {
		return
	}
	t[e.hdr.Name] = &e
}

// fill makes every hard link a copy of its target (a layer's hard link
// must follow its target in the tar, which name order does not promise)
// and adds the missing parent directories with mtime.
func (t tree) fill(mtime time.Time) error {
	for name, e := range t {
		if e.hdr.Typeflag != tar.TypeLink {
			continue
		}
		target, ok := t[e.hdr.Linkname]
		if !ok || target.hdr.Typeflag != tar.TypeReg {
			return fmt.Errorf("%s: hard link to %s, which is not a file here", name, e.hdr.Linkname)
		}
		e.hdr.Typeflag, e.hdr.Linkname, e.hdr.Mode, e.body = tar.TypeReg, "", target.hdr.Mode, target.body
	}
	for name := range t {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if _, ok := t[dir]; !ok {
				t[dir] = &entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: mtime}}
			}
		}
	}
	return nil
}

// resolve follows symlinks in every component of p, as the kernel would
// inside the image, and returns the entry p names (nil when none).
func (t tree) resolve(p string) *entry {
	return t.resolveDepth(strings.Trim(path.Clean("/"+p), "/"), 0)
}

func (t tree) resolveDepth(p string, depth int) *entry {
	if depth > 40 {
		return nil
	}
	parts := strings.Split(p, "/")
	cur := ""
	for i, part := range parts {
		next := path.Join(cur, part)
		e, ok := t[next]
		if !ok {
			return nil
		}
		if e.hdr.Typeflag == tar.TypeSymlink {
			target := e.hdr.Linkname
			if !path.IsAbs(target) {
				target = path.Join("/", cur, target)
			}
			rest := append([]string{target}, parts[i+1:]...)
			return t.resolveDepth(strings.Trim(path.Clean(path.Join(rest...)), "/"), depth+1)
		}
		cur = next
	}
	return t[cur]
}

// missing lists what the tree's dynamically linked programs and libraries
// need and the tree lacks: the ELF interpreter (a path) and DT_NEEDED
// libraries (a file name, looked up in libDirs), each with who needs it.
func (t tree) missing(libDirs []string) (map[string][]string, error) {
	out := map[string][]string{}
	for name, e := range t {
		if e.hdr.Typeflag != tar.TypeReg || !bytes.HasPrefix(e.body, []byte(elf.ELFMAG)) {
			continue
		}
		f, err := elf.NewFile(bytes.NewReader(e.body))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var needs []string
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b, _ := io.ReadAll(p.Open())
				needs = append(needs, strings.TrimRight(string(b), "\x00"))
			}
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		needs = append(needs, libs...)
		// DT_RUNPATH and DT_RPATH come first ($ORIGIN: the file's directory;
		// glibc's gconv modules find their helpers so).
		var dirs []string
		for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
			paths, _ := f.DynString(tag)
			for _, p := range paths {
				for _, d := range strings.Split(p, ":") {
					d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", "$ORIGIN"), "$ORIGIN", "/"+path.Dir(name))
					dirs = append(dirs, strings.TrimPrefix(path.Clean(d), "/"))
				}
			}
		}
		f.Close()
		dirs = append(dirs, libDirs...)
		for _, need := range needs {
			if !t.has(need, dirs) {
				out[need] = append(out[need], name)
			}
		}
	}
	return out, nil
}

// has: a path (with a slash) exists, or a library name is in one of dirs.
func (t tree) has(need string, dirs []string) bool {
	if strings.Contains(need, "/") {
		return t.resolve(need) != nil
	}
	for _, d := range dirs {
		if e := t.resolve(path.Join(d, need)); e != nil && e.hdr.Typeflag == tar.TypeReg {
			return true
		}
	}
	return false
}

// writeLayer writes the tree as a gzipped layer tar: entries in name
// order, owners numeric, no user or group names, no access or change
// times, so the same tree always gives the same bytes.
func (t tree) writeLayer(w io.Writer) error {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, n := range names {
		e := t[n]
		h := e.hdr
		h.Size = int64(len(e.body))
		if h.Typeflag == tar.TypeDir {
			h.Name += "/"
		}
		if err := tw.WriteHeader(&h); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if _, err := tw.Write(e.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
