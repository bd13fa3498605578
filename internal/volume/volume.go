// Package volume keeps named volumes: filesystems that live apart from any
// sandbox, are mounted into several sandboxes at once (sandbox create's
// volumes field) and survive their deletion (Daytona's volumes).
//
// A volume is a sparse ext4 image, volumes/<id>/disk.img, attached to a
// loop device and mounted at volumes/<id>/mnt from its creation until its
// deletion (and again at daemon start): its size limit holds because the
// filesystem is no bigger, and writes past it fail with ENOSPC inside every
// sandbox that mounts it. Its record is volumes/<id>/volume.json, so a
// volume needs no store table.
//
// Names are per team: two teams may each have a volume "data". The id
// ("vol_" and random characters; a volume made before ids existed has its
// name as id, and no name holds "_") is what a sandbox records at create
// and mounts at every start, so a volume deleted and made again under the
// same name, by this team or another, is never the one it mounts. The filesystem's files keep the ids the
// sandboxes see (root is 0): each class-container instance sees the volume
// through an idmapped mount into its own id range (package runtime), so
// root inside every sandbox owns what it writes.
package volume

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/loopdisk"
	"github.com/sbxhq/sbx/wire"
)

const (
	// DefaultSizeMiB is the size of a volume created without one.
	DefaultSizeMiB = 1024
	MinSizeMiB     = 16
	MaxSizeMiB     = 1 << 20 // 1 TiB
)

var nameRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Manager keeps the volumes under one directory.
type Manager struct {
	root string
	mu   sync.Mutex // create, delete and mount one at a time

	// CheckDisk, if set, refuses addMiB more of disk in team past its disk
	// quota (store.SQLite's): a volume counts its whole size.
	CheckDisk func(ctx context.Context, team string, addMiB int) error
}

// New returns the Manager of dataDir/volumes and mounts every volume there
// that is not mounted (after a reboot or a crash).
func New(dataDir string) (*Manager, error) {
	m := &Manager{root: filepath.Join(dataDir, "volumes")}
	if err := os.MkdirAll(m.root, 0o700); err != nil {
		return nil, errdefs.Internal(err, "create %s", m.root)
	}
	entries, err := os.ReadDir(m.root)
	if err != nil {
		return nil, errdefs.Internal(err, "list volumes")
	}
	for _, e := range entries {
		_, err := m.read(e.Name())
		if errdefs.Is(err, errdefs.KindNotFound) {
			err = m.remove(e.Name()) // a create cut short by a crash
		} else if err == nil {
			err = m.ensureMounted(e.Name())
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Manager) dir(id string) string { return filepath.Join(m.root, id) }

// record is a volume's volume.json: the answer plus its id.
type record struct {
	wire.Volume
	ID string `json:"id,omitempty"` // "": a volume made before ids, whose id is its name
}

// team is the record's owner ("" in records made before teams: default).
func (r *record) team() string {
	if r.Team == "" {
		return auth.DefaultTeam
	}
	return r.Team
}

// records reads every volume's record, each team's.
func (m *Manager) records() ([]*record, error) {
	entries, err := os.ReadDir(m.root)
	if err != nil {
		return nil, errdefs.Internal(err, "list volumes")
	}
	var out []*record
	for _, e := range entries {
		r, err := m.read(e.Name())
		if errdefs.Is(err, errdefs.KindNotFound) {
			continue // a create cut short by a crash: no record yet
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// read is the record of volume id; VOLUME_NOT_FOUND when there is none.
func (m *Manager) read(id string) (*record, error) {
	if id == "" || strings.ContainsAny(id, "/.") {
		return nil, errdefs.NotFound(wire.CodeVolumeNotFound, "volume %s not found", id)
	}
	b, err := os.ReadFile(filepath.Join(m.dir(id), "volume.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errdefs.NotFound(wire.CodeVolumeNotFound, "volume %s not found", id)
	}
	if err != nil {
		return nil, errdefs.Internal(err, "read volume %s", id)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, errdefs.Internal(err, "read volume %s", id)
	}
	if r.ID == "" {
		r.ID = id
	}
	return &r, nil
}

// find is team's volume name, or nil.
func (m *Manager) find(team, name string) (*record, error) {
	recs, err := m.records()
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.Name == name && r.team() == team {
			return r, nil
		}
	}
	return nil, nil
}

// Resolve is the id of team's volume name: what a sandbox records at
// create (package sandbox). Another team's volume is VOLUME_NOT_FOUND.
func (m *Manager) Resolve(team, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	r, err := m.find(team, name)
	if err != nil {
		return "", err
	}
	if r == nil {
		return "", errdefs.NotFound(wire.CodeVolumeNotFound, "volume %q not found", name)
	}
	return r.ID, nil
}

// Path is the host directory of volume id's filesystem (what sandboxes
// mount) if team owns it; else, or once it is deleted, VOLUME_NOT_FOUND.
func (m *Manager) Path(team, id string) (string, error) {
	r, err := m.read(id)
	if err == nil && r.team() != team {
		err = errdefs.NotFound(wire.CodeVolumeNotFound, "volume %s not found", id)
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(m.dir(id), "mnt"), nil
}

// SizeMiB is the sum of team's volumes' sizes (a team's disk quota counts
// them, package sandbox).
func (m *Manager) SizeMiB(team string) (int, error) {
	recs, err := m.records()
	sum := 0
	for _, r := range recs {
		if r.team() == team {
			sum += r.SizeMiB
		}
	}
	return sum, err
}

func newID() string {
	b := make([]byte, 12)
	rand.Read(b)
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "vol_" + string(b)
}

// CheckName returns an Invalid error for a name outside the rules.
func CheckName(name string) error {
	if !nameRe.MatchString(name) {
		return errdefs.Invalid(wire.CodeInvalidVolume, "volume name %q: use 1 to 63 lowercase letters, digits and -, starting and ending with a letter or digit", name)
	}
	return nil
}

// Create makes and mounts a volume of sizeMiB (0: DefaultSizeMiB).
//
// The volume belongs to the caller's team (auth.TeamOf); names are unique
// within a team. Its size counts against the team's disk quota
// (CheckDisk, under the lock that serialises creates).
func (m *Manager) Create(ctx context.Context, name string, sizeMiB int) (*wire.Volume, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if sizeMiB == 0 {
		sizeMiB = DefaultSizeMiB
	}
	if sizeMiB < MinSizeMiB || sizeMiB > MaxSizeMiB {
		return nil, errdefs.Invalid(wire.CodeInvalidVolume, "volume sizeMiB must be %d to %d, got %d", MinSizeMiB, MaxSizeMiB, sizeMiB)
	}
	team := auth.TeamOf(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, err := m.find(team, name); err != nil {
		return nil, err
	} else if r != nil {
		return nil, errdefs.Conflict(wire.CodeVolumeExists, "volume %q already exists", name)
	}
	if m.CheckDisk != nil {
		if err := m.CheckDisk(ctx, team, sizeMiB); err != nil {
			return nil, err
		}
	}
	id := newID()
	dir := m.dir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, errdefs.Internal(err, "create volume directory")
	}
	r := &record{Volume: wire.Volume{Name: name, SizeMiB: sizeMiB, CreatedAt: time.Now().UTC(), Team: team}, ID: id}
	err := loopdisk.Make(filepath.Join(dir, "disk.img"), sizeMiB)
	if err == nil {
		err = m.mount(id)
	}
	if err == nil {
		err = writeRecord(dir, r)
	}
	if err != nil {
		m.remove(id)
		return nil, err
	}
	return &r.Volume, nil
}

func writeRecord(dir string, v *record) error {
	b, _ := json.Marshal(v)
	tmp := filepath.Join(dir, "volume.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return errdefs.Internal(err, "write volume record")
	}
	if err := os.Rename(tmp, filepath.Join(dir, "volume.json")); err != nil {
		return errdefs.Internal(err, "write volume record")
	}
	return nil
}

// Get returns the caller's team's volume name; another team's is not
// found. A caller that sees every team (the admin key, the daemon) gets
// the volume of that name in its own team, else the only one of any team.
func (m *Manager) Get(ctx context.Context, name string) (*wire.Volume, error) {
	r, err := m.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	return m.answer(r), nil
}

func (m *Manager) lookup(ctx context.Context, name string) (*record, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	recs, err := m.records()
	if err != nil {
		return nil, err
	}
	own := auth.TeamOf(ctx)
	var found []*record
	for _, r := range recs {
		if r.Name != name || !auth.Sees(ctx, r.team()) {
			continue
		}
		if r.team() == own {
			return r, nil
		}
		found = append(found, r)
	}
	if len(found) != 1 {
		// None, or several teams' and the caller in none of them.
		return nil, errdefs.NotFound(wire.CodeVolumeNotFound, "volume %q not found", name)
	}
	return found[0], nil
}

// answer is r as the API shows it, with its use of the disk.
func (m *Manager) answer(r *record) *wire.Volume {
	v := r.Volume
	var st unix.Statfs_t
	if unix.Statfs(filepath.Join(m.dir(r.ID), "mnt"), &st) == nil && st.Type == unix.EXT4_SUPER_MAGIC {
		v.UsedMiB = int((st.Blocks - st.Bfree) * uint64(st.Bsize) >> 20)
	}
	return &v
}

// List returns every volume the caller's team sees, by name.
func (m *Manager) List(ctx context.Context) ([]wire.Volume, error) {
	recs, err := m.records()
	if err != nil {
		return nil, err
	}
	out := []wire.Volume{}
	for _, r := range recs {
		if auth.Sees(ctx, r.team()) {
			out = append(out, *m.answer(r))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || out[i].Name == out[j].Name && out[i].Team < out[j].Team
	})
	return out, nil
}

// Delete unmounts and removes the volume. The caller has checked that no
// sandbox uses it (or was told to go ahead): a sandbox still running with
// it keeps its own mount of the filesystem until it stops, then the loop
// device detaches.
func (m *Manager) Delete(ctx context.Context, name string) error {
	r, err := m.lookup(ctx, name)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := os.Stat(m.dir(r.ID)); errors.Is(err, os.ErrNotExist) {
		return errdefs.NotFound(wire.CodeVolumeNotFound, "volume %q not found", name)
	}
	return m.remove(r.ID)
}

// ID is the id of the caller's volume name (Get's rules): which sandboxes
// mount it (package sandbox) is decided by id, not name.
func (m *Manager) ID(ctx context.Context, name string) (string, error) {
	r, err := m.lookup(ctx, name)
	if err != nil {
		return "", err
	}
	return r.ID, nil
}

func (m *Manager) remove(id string) error {
	mnt := filepath.Join(m.dir(id), "mnt")
	if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return errdefs.Internal(err, "unmount volume %s", id)
	}
	if err := os.RemoveAll(m.dir(id)); err != nil {
		return errdefs.Internal(err, "remove volume %s", id)
	}
	return nil
}

// ensureMounted mounts the volume unless its mount is there.
func (m *Manager) ensureMounted(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mounted(filepath.Join(m.dir(id), "mnt")) {
		return nil
	}
	return m.mount(id)
}

func (m *Manager) mount(id string) error {
	dir := m.dir(id)
	mnt := filepath.Join(dir, "mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return errdefs.Internal(err, "create volume mount point")
	}
	img := filepath.Join(dir, "disk.img")
	if err := loopdisk.WaitDetached(img); err != nil {
		return errdefs.Internal(err, "mount volume %s", id)
	}
	if err := loopdisk.Mount(img, mnt); err != nil {
		return errdefs.Internal(err, "mount volume %s", id)
	}
	// The filesystem's root: writable by root of every sandbox (ids inside
	// are the sandbox's own, see the package comment).
	if err := os.Chmod(mnt, 0o755); err != nil {
		return errdefs.Internal(err, "mount volume %s", id)
	}
	return nil
}

// mounted reports whether path is a mount point (a different device than
// its parent).
func mounted(path string) bool {
	var st, parent unix.Stat_t
	if unix.Stat(path, &st) != nil || unix.Stat(filepath.Dir(path), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// String names the manager for logs. Volumes stay mounted when the daemon
// stops: running sandboxes keep using them.
func (m *Manager) String() string { return fmt.Sprintf("volumes in %s", m.root) }
