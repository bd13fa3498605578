// Package backup keeps directory backups (Cloudflare's createBackup and
// restoreBackup): a directory of a sandbox packed by its agent with treetar
// (owners, modes, xattrs, hard links), compressed with zstd and stored in the
// daemon's blob store (a local directory or S3) under backups/<id>.tar.zst.
// Records are small JSON files in <data-dir>/backups, each with the team of
// the key that made it: a request sees its own team's backups only. A backup may expire;
// a sweeper deletes expired ones, and an expired one is gone to every call
// before that.
package backup

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// MaxExpiresInSeconds bounds expiresInSeconds (a year).
const MaxExpiresInSeconds = 365 * 86400

var idRe = regexp.MustCompile(`^bkp-[a-z0-9]{16}$`)

// Manager creates, lists, restores and expires backups.
type Manager struct {
	blobs blob.Store
	dir   string
	log   *slog.Logger
	mu    sync.Mutex // records
	now   func() time.Time

	// CheckDisk, if set, refuses addMiB more of disk in team past its disk
	// quota (store.SQLite's): a backup counts its stored bytes.
	CheckDisk func(ctx context.Context, team string, addMiB int) error
}

// New returns a Manager with records in dataDir/backups.
func New(dataDir string, blobs blob.Store) (*Manager, error) {
	m := &Manager{blobs: blobs, dir: filepath.Join(dataDir, "backups"), log: slog.Default(), now: time.Now}
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return nil, errdefs.Internal(err, "create %s", m.dir)
	}
	return m, nil
}

func blobKey(id string) string { return "backups/" + id + ".tar.zst" }

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "bkp-" + string(b)
}

// Create packs the directory req.Path of the sandbox whose agent is a into
// the blob store. sandboxID names the sandbox in the record.
func (m *Manager) Create(ctx context.Context, a *agentapi.Client, sandboxID string, req wire.CreateBackupRequest) (*wire.Backup, error) {
	if req.Path == "" || !path.IsAbs(req.Path) || strings.ContainsRune(req.Path, 0) {
		return nil, errdefs.Invalid(wire.CodeInvalidBackup, "path must be an absolute directory inside the sandbox, got %q", req.Path)
	}
	if len(req.Name) > 128 {
		return nil, errdefs.Invalid(wire.CodeInvalidBackup, "name must be at most 128 characters")
	}
	if req.ExpiresInSeconds < 0 || req.ExpiresInSeconds > MaxExpiresInSeconds {
		return nil, errdefs.Invalid(wire.CodeInvalidBackup, "expiresInSeconds must be 0 (never) to %d, got %d", MaxExpiresInSeconds, req.ExpiresInSeconds)
	}
	team := ownerOf(ctx)
	// A team already at its disk quota makes no backup; one that the
	// stored size takes past it is deleted below.
	if err := m.checkDisk(ctx, team, 1); err != nil {
		return nil, err
	}
	b := &wire.Backup{ID: newID(), Name: req.Name, Sandbox: sandboxID, Path: path.Clean(req.Path), CreatedAt: m.now().UTC()}
	if req.ExpiresInSeconds > 0 {
		t := b.CreatedAt.Add(time.Duration(req.ExpiresInSeconds) * time.Second)
		b.ExpiresAt = &t
	}
	resp, err := agentapi.Open(ctx, a, agentapi.PackDir, agentapi.Params{Query: url.Values{"path": {b.Path}}}, nil, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	pr, pw := io.Pipe()
	go func() {
		zw, err := zstd.NewWriter(pw, zstd.WithEncoderConcurrency(1))
		if err == nil {
			_, err = io.Copy(zw, resp.Body)
			if cerr := zw.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			err = fmt.Errorf("reading the directory from the sandbox: %w", err)
		}
		pw.CloseWithError(err)
	}()
	h := sha256.New()
	n, err := m.blobs.Put(ctx, blobKey(b.ID), io.TeeReader(pr, h))
	pr.CloseWithError(errors.New("blob store stopped reading"))
	if err != nil {
		m.blobs.Delete(context.WithoutCancel(ctx), blobKey(b.ID))
		if errdefs.CodeOf(err) != wire.CodeInternal {
			return nil, err
		}
		return nil, errdefs.Internal(err, "back up %s of %s: %v", b.Path, sandboxID, err)
	}
	b.SizeBytes, b.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	m.mu.Lock() // the check and the record, one backup at a time
	err = m.checkDisk(ctx, team, mib(n))
	if err == nil {
		err = m.write(record{Backup: *b, Team: teamOf(ctx)})
	}
	m.mu.Unlock()
	if err != nil {
		m.blobs.Delete(context.WithoutCancel(ctx), blobKey(b.ID))
		return nil, err
	}
	return b, nil
}

// mib is n bytes in MiB, rounded up.
func mib(n int64) int { return int((n + 1<<20 - 1) >> 20) }

func (m *Manager) checkDisk(ctx context.Context, team string, addMiB int) error {
	if m.CheckDisk == nil {
		return nil
	}
	return m.CheckDisk(ctx, team, addMiB)
}

// ownerOf is the team a backup made under ctx counts against.
func ownerOf(ctx context.Context) string {
	if t := teamOf(ctx); t != "" {
		return t
	}
	return auth.DefaultTeam
}

// StoredMiB is the sum of team's backups' stored sizes, expired ones not
// yet swept included (their bytes are still there).
func (m *Manager) StoredMiB(team string) (int, error) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return 0, errdefs.Internal(err, "list backups")
	}
	var sum int64
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		rec, err := m.get(context.Background(), id)
		if errdefs.Is(err, errdefs.KindNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return 0, err
		}
		if owner := rec.Team; owner == team || owner == "" && team == auth.DefaultTeam {
			sum += rec.SizeBytes
		}
	}
	return mib(sum), nil
}

func (m *Manager) recordPath(id string) string { return filepath.Join(m.dir, id+".json") }

// record is what a backup's file holds.
type record struct {
	wire.Backup
	Team string `json:"team,omitempty"`
}

// teamOf is the team of the request's key; "" for the daemon's own calls
// (the sweeper), which see every team's backups.
func teamOf(ctx context.Context) string {
	p, _ := auth.FromContext(ctx)
	return p.Team
}

func (m *Manager) write(b record) error {
	data, _ := json.Marshal(b)
	tmp := m.recordPath(b.ID) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return errdefs.Internal(err, "write backup record")
	}
	if err := os.Rename(tmp, m.recordPath(b.ID)); err != nil {
		return errdefs.Internal(err, "write backup record")
	}
	return nil
}

// get reads a backup's record if the request's team may see it, expired
// or not.
func (m *Manager) get(ctx context.Context, id string) (*record, error) {
	if !idRe.MatchString(id) {
		return nil, errdefs.NotFound(wire.CodeBackupNotFound, "backup %q not found", id)
	}
	data, err := os.ReadFile(m.recordPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errdefs.NotFound(wire.CodeBackupNotFound, "backup %q not found", id)
	}
	if err != nil {
		return nil, errdefs.Internal(err, "read backup %s", id)
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, errdefs.Internal(err, "read backup %s", id)
	}
	if team := teamOf(ctx); team != "" && rec.Team != team {
		return nil, errdefs.NotFound(wire.CodeBackupNotFound, "backup %q not found", id)
	}
	return &rec, nil
}

// Get returns a backup that has not expired; an expired one is deleted.
func (m *Manager) Get(ctx context.Context, id string) (*wire.Backup, error) {
	rec, err := m.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if b := rec.Backup; b.ExpiresAt != nil && !m.now().Before(*b.ExpiresAt) {
		if err := m.remove(ctx, id); err != nil {
			m.log.Warn("delete expired backup", "id", id, "err", err)
		}
		return nil, errdefs.NotFound(wire.CodeBackupNotFound, "backup %q expired at %s", id, b.ExpiresAt.Format(time.RFC3339))
	}
	return &rec.Backup, nil
}

// List returns the backups that have not expired, oldest first; with
// sandbox set, only that sandbox's.
func (m *Manager) List(ctx context.Context, sandbox string) ([]wire.Backup, error) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return nil, errdefs.Internal(err, "list backups")
	}
	out := []wire.Backup{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		b, err := m.Get(ctx, id)
		if errdefs.Is(err, errdefs.KindNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if sandbox == "" || b.Sandbox == sandbox {
			out = append(out, *b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// Delete removes a backup. A missing one (or another team's) is NotFound.
func (m *Manager) Delete(ctx context.Context, id string) error {
	if _, err := m.get(ctx, id); err != nil {
		return err
	}
	return m.remove(ctx, id)
}

// remove deletes a backup's blob, then its record, so a record never
// outlives its blob unnoticed.
func (m *Manager) remove(ctx context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.blobs.Delete(ctx, blobKey(id)); err != nil {
		return err
	}
	if err := os.Remove(m.recordPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return errdefs.Internal(err, "delete backup %s", id)
	}
	return nil
}

// Restore unpacks backup id into dir (missing or empty) of the sandbox whose
// agent is a. The bytes are checked against the backup's digest as they
// go: a damaged backup cuts the upload, and the agent keeps nothing of it.
func (m *Manager) Restore(ctx context.Context, a *agentapi.Client, id, dir string) (*wire.Backup, error) {
	b, err := m.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = b.Path
	}
	if !path.IsAbs(dir) || strings.ContainsRune(dir, 0) {
		return nil, errdefs.Invalid(wire.CodeInvalidBackup, "path must be an absolute directory inside the sandbox, got %q", dir)
	}
	rc, err := m.blobs.Get(ctx, blobKey(id))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	checked := &digestReader{r: rc, h: sha256.New(), want: b.SHA256, id: id}
	zr, err := zstd.NewReader(checked, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, errdefs.Internal(err, "read backup %s", id)
	}
	defer zr.Close()
	// The transport reads the body on a goroutine of its own, which may go
	// on after the agent has answered (a refusal comes before the end): it
	// reads a pipe, and the decoder is closed only once the copy into the
	// pipe has stopped.
	pr, pw := io.Pipe()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, err := io.Copy(pw, &tailCheck{r: zr.IOReadCloser(), checked: checked})
		pw.CloseWithError(err)
	}()
	resp, err := agentapi.Open(ctx, a, agentapi.UnpackDir, agentapi.Params{Query: url.Values{"path": {dir}}}, pr, "application/x-tar")
	pr.CloseWithError(errors.New("restore ended"))
	<-copied // from here on, checked and the decoder are ours alone
	if checked.err != nil {
		if err == nil {
			resp.Body.Close()
		}
		awaitStagingGone(ctx, a, dir)
		return nil, checked.err // the damage, not how the agent took the cut stream
	}
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return b, nil
}

// awaitStagingGone waits, a few seconds at most, until no restore staging
// directory is left beside dir. The agent removes its staging directory
// when it sees the upload cut, which can be after the transport has given
// the request up; a refused restore must have left nothing by the time it
// is answered.
func awaitStagingGone(ctx context.Context, a *agentapi.Client, dir string) {
	p := agentapi.Params{Query: url.Values{"path": {path.Dir(dir)}}}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, err := agentapi.Call[[]wire.FileInfo](ctx, a, agentapi.ListFiles, p, nil)
		if err != nil || !slices.ContainsFunc(list, func(f wire.FileInfo) bool { return strings.HasPrefix(f.Name, agentapi.RestoreStaging) }) {
			return
		}
	}
}

// digestReader hashes a blob as it is read and, at its end, fails instead
// of returning io.EOF when the digest is not the recorded one.
type digestReader struct {
	r    io.Reader
	h    hash.Hash
	want string
	id   string
	err  error
}

func (d *digestReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	if errors.Is(err, io.EOF) {
		if got := hex.EncodeToString(d.h.Sum(nil)); got != d.want {
			d.err = errdefs.Conflict(wire.CodeBackupCorrupt, "backup %s reads back with SHA-256 %s, recorded %s: it was changed or damaged; nothing was restored", d.id, got, d.want)
			return n, d.err
		}
	} else if err != nil && d.err == nil {
		d.err = err
	}
	return n, err
}

// tailCheck is the decompressed stream sent to the agent; once it ends it
// reads the compressed blob to its end too, so that the digest is checked
// before the agent sees the end of its upload.
type tailCheck struct {
	r       io.ReadCloser
	checked *digestReader
}

func (t *tailCheck) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if errors.Is(err, io.EOF) {
		if _, cerr := io.Copy(io.Discard, t.checked); cerr != nil {
			return n, cerr
		}
		if t.checked.err != nil {
			return n, t.checked.err
		}
	} else if err != nil {
		// A zstd error: most likely damage; say so.
		if t.checked.err == nil {
			t.checked.err = errdefs.Conflict(wire.CodeBackupCorrupt, "backup %s does not decompress (%v): it was changed or damaged; nothing was restored", t.checked.id, err)
		}
		return n, t.checked.err
	}
	return n, err
}

func (t *tailCheck) Close() error { return t.r.Close() }

// StartSweeper deletes expired backups every interval until ctx is done.
func (m *Manager) StartSweeper(ctx context.Context, interval time.Duration) {
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := m.List(ctx, ""); err != nil { // Get deletes what expired
					m.log.Warn("sweep expired backups", "err", err)
				}
			}
		}
	}()
}
