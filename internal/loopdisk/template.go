package loopdisk

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
)

// Formatting an image runs mkfs.ext4: a process start, ~10 ms of its CPU and
// an fsync for every sandbox created with a disk. MakeFromTemplate formats
// one image per size instead, once, and copies its few written blocks (4 MiB
// of a 10 GiB image) into each new image, giving the copy a fresh UUID and
// directory hash seed. The template is formatted with metadata_csum_seed, so
// the metadata checksums do not depend on the UUID and only the superblock's
// own checksum changes.

// templateMu serializes formatting templates (once per size and data dir).
var templateMu sync.Mutex

// MakeFromTemplate writes a sparse ext4 image of sizeMiB at path, as Make
// does, by copying a template kept in dir (made on first use; dir keeps
// the maxTemplates sizes made last).
func MakeFromTemplate(path string, sizeMiB int, dir string) error {
	tmpl, err := template(dir, sizeMiB)
	if err != nil {
		return Make(path, sizeMiB) // an mkfs without metadata_csum_seed, …
	}
	tmp := path + ".tmp"
	if err := copyImage(tmpl, tmp, sizeMiB); err != nil {
		os.Remove(tmp)
		if errors.Is(err, errBadTemplate) {
			os.Remove(tmpl) // the next create formats it again
			return Make(path, sizeMiB)
		}
		return errdefs.Internal(err, "create disk image")
	}
	if err := os.Rename(tmp, path); err != nil {
		return errdefs.Internal(err, "install disk image")
	}
	return nil
}

// template returns the path of the formatted image of sizeMiB in dir,
// formatting it first if there is none.
func template(dir string, sizeMiB int) (string, error) {
	path := filepath.Join(dir, "ext4-"+strconv.Itoa(sizeMiB)+"m.img")
	templateMu.Lock()
	defer templateMu.Unlock()
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", errdefs.Internal(err, "create disk template directory")
	}
	// Make's fsync (mkfs's) and rename: a crash leaves no half template.
	if err := format(path, sizeMiB, "metadata_csum_seed"); err != nil {
		return "", err
	}
	pruneTemplates(dir, path)
	return path, nil
}

// maxTemplates is how many sizes' templates a dir keeps.
const maxTemplates = 4

// pruneTemplates removes the oldest templates in dir but keep, so that at
// most maxTemplates are left however many sizes are asked for. A copy under
// way keeps its open file.
func pruneTemplates(dir, keep string) {
	all, _ := filepath.Glob(filepath.Join(dir, "ext4-*.img"))
	type tmpl struct {
		path string
		made time.Time
	}
	var old []tmpl
	for _, p := range all {
		if fi, err := os.Stat(p); err == nil && p != keep {
			old = append(old, tmpl{p, fi.ModTime()})
		}
	}
	slices.SortFunc(old, func(a, b tmpl) int { return a.made.Compare(b.made) })
	for len(old) > maxTemplates-1 {
		os.Remove(old[0].path)
		old = old[1:]
	}
}

// copyImage copies the data of the template src (skipping its holes) into a
// new sparse file dst of sizeMiB, gives it an identity of its own, and syncs
// it.
func copyImage(src, dst string, sizeMiB int) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	size := int64(sizeMiB) << 20
	if err := out.Truncate(size); err != nil {
		return err
	}
	for off := int64(0); off < size; {
		data, err := unix.Seek(int(in.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // no data after off
		}
		if err != nil {
			return fmt.Errorf("seek data in %s: %w", src, err)
		}
		hole, err := unix.Seek(int(in.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			return fmt.Errorf("seek hole in %s: %w", src, err)
		}
		for r, w := data, data; r < hole; {
			n, err := unix.CopyFileRange(int(in.Fd()), &r, int(out.Fd()), &w, int(hole-r), 0)
			if err != nil {
				return fmt.Errorf("copy %s: %w", src, err)
			}
			if n == 0 {
				return fmt.Errorf("copy %s: %w", src, io.ErrUnexpectedEOF)
			}
		}
		off = hole
	}
	if err := newIdentity(out); err != nil {
		return err
	}
	return out.Sync()
}

// The ext4 superblock (fs/ext4/ext4.h): 1024 bytes at offset 1024.
const (
	sbOffset         = 1024
	sbSize           = 1024
	sbMagic          = 0x38  // __le16 s_magic
	sbIncompat       = 0x60  // __le32 s_feature_incompat
	sbRoCompat       = 0x64  // __le32 s_feature_ro_compat
	sbUUID           = 0x68  // __u8 s_uuid[16]
	sbHashSeed       = 0xEC  // __le32 s_hash_seed[4]
	sbChecksum       = 0x3FC // __le32 s_checksum
	ext4Magic        = 0xEF53
	roMetadataCsum   = 0x400  // EXT4_FEATURE_RO_COMPAT_METADATA_CSUM
	incompatCsumSeed = 0x2000 // EXT4_FEATURE_INCOMPAT_CSUM_SEED
)

// errBadTemplate is a template newIdentity cannot use.
var errBadTemplate = errors.New("unusable disk template")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sbChecksumOf is the superblock's checksum as ext4 computes it: crc32c
// seeded with ~0 and not inverted at the end.
func sbChecksumOf(sb []byte) uint32 {
	return ^crc32.Checksum(sb[:sbChecksum], castagnoli)
}

// newIdentity gives the ext4 image f a random UUID and directory hash seed.
// It refuses a superblock that is not a checksummed ext4 one with its
// checksum seed stored (so no other metadata checksum depends on the UUID),
// or whose checksum does not verify.
func newIdentity(f *os.File) error {
	sb := make([]byte, sbSize)
	if _, err := f.ReadAt(sb, sbOffset); err != nil {
		return fmt.Errorf("read superblock: %w", err)
	}
	le := binary.LittleEndian
	switch {
	case le.Uint16(sb[sbMagic:]) != ext4Magic:
		return fmt.Errorf("%w: not an ext4 image", errBadTemplate)
	case le.Uint32(sb[sbRoCompat:])&roMetadataCsum == 0, le.Uint32(sb[sbIncompat:])&incompatCsumSeed == 0:
		return fmt.Errorf("%w: no metadata_csum or metadata_csum_seed", errBadTemplate)
	case le.Uint32(sb[sbChecksum:]) != sbChecksumOf(sb):
		return fmt.Errorf("%w: its superblock checksum does not verify", errBadTemplate)
	}
	if _, err := rand.Read(sb[sbUUID : sbUUID+16]); err != nil {
		return err
	}
	sb[sbUUID+6] = sb[sbUUID+6]&0x0f | 0x40 // version 4
	sb[sbUUID+8] = sb[sbUUID+8]&0x3f | 0x80 // variant 10
	if _, err := rand.Read(sb[sbHashSeed : sbHashSeed+16]); err != nil {
		return err
	}
	le.PutUint32(sb[sbChecksum:], sbChecksumOf(sb))
	if _, err := f.WriteAt(sb, sbOffset); err != nil {
		return fmt.Errorf("write superblock: %w", err)
	}
	return nil
}
