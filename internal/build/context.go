package build

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// The build context is unpacked (by internal/dirtar, which refuses entries
// outside it) into a directory on the host. COPY and ADD read it without
// following symlinks: a source below a symlink is refused, and a symlink
// that is a source is copied as a link.

// copyPayload is what one COPY/ADD sends into the build sandbox: a tar to
// extract at Dir. Sum hashes names, modes, link targets and contents (not
// times), for the cache key.
type copyPayload struct {
	Dir   string // absolute directory in the sandbox
	Tar   string // host file: a tar stream (or a local archive to unpack)
	Sum   string
	count int
}

// sources resolves a COPY/ADD source (a path or glob) to paths in ctxDir.
func sources(ctxDir, src string, ln int) ([]string, error) {
	clean := path.Clean("/" + src) // "../x" cannot climb out
	if clean == "/" {
		return []string{ctxDir}, nil
	}
	matches, err := filepath.Glob(filepath.Join(ctxDir, filepath.FromSlash(clean)))
	if err != nil {
		return nil, errAt(wire.CodeDockerfileInvalid, ln, "bad pattern %q: %v", src, err)
	}
	if len(matches) == 0 {
		return nil, errAt(wire.CodeBuildContextInvalid, ln, "%s is not in the build context", src)
	}
	for _, m := range matches {
		if err := noSymlinkAbove(ctxDir, m); err != nil {
			return nil, errAt(wire.CodeBuildContextInvalid, ln, "%s: %v", src, err)
		}
	}
	return matches, nil
}

// noSymlinkAbove checks that no directory between root and p is a symlink
// (Glob follows them, and one could point out of the context).
func noSymlinkAbove(root, p string) error {
	rel, err := filepath.Rel(root, filepath.Dir(p))
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("outside the build context")
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("lies below the symlink %s", strings.TrimPrefix(cur, root))
		}
	}
	return nil
}

// isArchive says whether ADD unpacks a local file instead of copying it.
func isArchive(name string) bool {
	for _, ext := range []string{".tar", ".tar.gz", ".tgz"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// preparePayload writes the tar for spec into work and hashes it.
func preparePayload(ctxDir, work string, spec *CopySpec, ln int) (*copyPayload, error) {
	var srcs []string
	for _, s := range spec.Srcs {
		m, err := sources(ctxDir, s, ln)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, m...)
	}
	intoDir := strings.HasSuffix(spec.Dest, "/") || len(srcs) > 1
	f, err := os.CreateTemp(work, "copy-*.tar")
	if err != nil {
		return nil, errdefs.Internal(err, "build: stage a copy")
	}
	defer f.Close()
	h := sha256.New()
	p := &copyPayload{Tar: f.Name()}

	// ADD of one local archive: its entries go into the destination.
	if spec.Unpack && len(srcs) == 1 && isArchive(srcs[0]) {
		if fi, err := os.Lstat(srcs[0]); err == nil && fi.Mode().IsRegular() {
			in, err := os.Open(srcs[0])
			if err != nil {
				return nil, errdefs.Internal(err, "build: read %s", srcs[0])
			}
			defer in.Close()
			if _, err := io.Copy(io.MultiWriter(f, h), in); err != nil {
				return nil, errdefs.Internal(err, "build: stage %s", srcs[0])
			}
			p.Dir, p.Sum, p.count = strings.TrimSuffix(spec.Dest, "/"), "unpack:"+hex.EncodeToString(h.Sum(nil)), 1
			if p.Dir == "" {
				p.Dir = "/"
			}
			return p, f.Close()
		}
	}

	tw := tar.NewWriter(f)
	add := func(hostPath, name string) error {
		fi, err := os.Lstat(hostPath)
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(hostPath); err != nil {
				return err
			}
		} else if !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil // sockets, fifos, devices: not copied
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = name, 0, 0, "", ""
		if fi.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%o\x00%s\x00%d\x00", hdr.Name, fi.Mode(), link, hdr.Size)
		p.count++
		if !fi.Mode().IsRegular() {
			return nil
		}
		in, err := os.Open(hostPath)
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = io.Copy(io.MultiWriter(tw, h), in)
		return err
	}
	dest := strings.TrimSuffix(spec.Dest, "/")
	p.Dir = dest
	for _, src := range srcs {
		fi, err := os.Lstat(src)
		if err != nil {
			return nil, errdefs.Internal(err, "build: read %s", src)
		}
		if fi.IsDir() {
			// A directory's contents go into the destination directory.
			err = filepath.WalkDir(src, func(hp string, d fs.DirEntry, err error) error {
				if err != nil || hp == src {
					return err
				}
				rel, _ := filepath.Rel(src, hp)
				return add(hp, filepath.ToSlash(rel))
			})
			intoDir = true
		} else if intoDir {
			err = add(src, filepath.Base(src))
		} else {
			// One file to a file path: write it under its new name in the parent.
			p.Dir = path.Dir(dest)
			err = add(src, path.Base(dest))
		}
		if err != nil {
			return nil, errdefs.Internal(err, "build: stage %s", src)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, errdefs.Internal(err, "build: stage a copy")
	}
	if p.Dir == "" {
		p.Dir = "/"
	}
	p.Sum = "copy:" + p.Dir + ":" + hex.EncodeToString(h.Sum(nil))
	return p, f.Close()
}
