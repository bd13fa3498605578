package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// A deb is one Debian package read from its .deb file: its name and the
// files of its data.tar. Maintainer scripts are not run: the image holds
// the files alone, as `dpkg --unpack` would leave them.
type deb struct {
	file    string
	name    string
	entries []entry
}

// An entry is one file, directory or symlink of a package, by its path
// without the leading "./" ("usr/sbin/nft").
type entry struct {
	hdr  tar.Header
	body []byte
}

// readDeb reads a .deb: an ar archive of debian-binary, control.tar.* and
// data.tar.* (deb(5)).
func readDeb(file string) (*deb, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	magic := make([]byte, 8)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "!<arch>\n" {
		return nil, fmt.Errorf("%s: not a .deb (no ar header)", file)
	}
	d := &deb{file: file}
	for {
		hdr := make([]byte, 60)
		if _, err := io.ReadFull(r, hdr); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		name := strings.TrimSuffix(strings.TrimSpace(string(hdr[0:16])), "/")
		size, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: member %s: bad size", file, name)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("%s: member %s: %w", file, name, err)
		}
		if size%2 == 1 {
			r.ReadByte() // members are padded to an even size
		}
		switch {
		case strings.HasPrefix(name, "control.tar"):
			if d.name, err = controlPackage(name, body); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
		case strings.HasPrefix(name, "data.tar"):
			if d.entries, err = dataEntries(name, body); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
		}
	}
	if d.name == "" {
		return nil, fmt.Errorf("%s: no Package in its control file", file)
	}
	return d, nil
}

// decompress opens a control.tar or data.tar member by its extension.
func decompress(member string, body []byte) (io.Reader, error) {
	switch path.Ext(member) {
	case ".tar":
		return bytes.NewReader(body), nil
	case ".gz":
		return gzip.NewReader(bytes.NewReader(body))
	case ".xz":
		return xz.NewReader(bytes.NewReader(body))
	case ".zst":
		return zstd.NewReader(bytes.NewReader(body))
	}
	return nil, fmt.Errorf("member %s: unknown compression", member)
}

// controlPackage is the Package field of control.tar's control file.
func controlPackage(member string, body []byte) (string, error) {
	r, err := decompress(member, body)
	if err != nil {
		return "", err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			return "", fmt.Errorf("%s has no control file: %v", member, err)
		}
		if strings.TrimPrefix(h.Name, "./") != "control" {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Package:"); ok {
				return strings.TrimSpace(v), nil
			}
		}
		return "", fmt.Errorf("the control file has no Package field")
	}
}

func dataEntries(member string, body []byte) ([]entry, error) {
	r, err := decompress(member, body)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(r)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		name := strings.Trim(strings.TrimPrefix(h.Name, "./"), "/")
		if name == "" || name == "." || documentation(name) {
			continue
		}
		e := entry{hdr: tar.Header{
			Typeflag: h.Typeflag, Name: name, Linkname: h.Linkname,
			Mode: h.Mode, Uid: h.Uid, Gid: h.Gid, ModTime: h.ModTime.UTC().Truncate(1e9),
		}}
		switch h.Typeflag {
		case tar.TypeReg:
			if e.body, err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		case tar.TypeLink:
			e.hdr.Linkname = strings.TrimPrefix(h.Linkname, "./")
		case tar.TypeDir, tar.TypeSymlink:
		default:
			return nil, fmt.Errorf("%s: entry type %q is not supported", name, h.Typeflag)
		}
		out = append(out, e)
	}
}

// documentation is what a container does not need and Debian's own slim
// images leave out: manuals, translations, changelogs. The copyright
// files stay.
func documentation(name string) bool {
	for _, dir := range []string{"usr/share/man/", "usr/share/info/", "usr/share/locale/", "usr/share/lintian/"} {
		if strings.HasPrefix(name, dir) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(name, "usr/share/doc/"); ok {
		_, file, _ := strings.Cut(rest, "/")
		return file != "" && file != "copyright"
	}
	return false
}
