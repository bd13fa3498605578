package backup

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/blob"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

func newTestManager(t *testing.T) (*Manager, *blob.Dir) {
	t.Helper()
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(t.TempDir(), blobs)
	if err != nil {
		t.Fatal(err)
	}
	return m, blobs
}

func put(t *testing.T, m *Manager, blobs *blob.Dir, id, team string, expires *time.Time) {
	t.Helper()
	if _, err := blobs.Put(context.Background(), blobKey(id), bytes.NewReader([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	if err := m.write(record{Backup: wire.Backup{ID: id, Sandbox: "sbx-1", Path: "/w", CreatedAt: m.now(), ExpiresAt: expires}, Team: team}); err != nil {
		t.Fatal(err)
	}
}

// A team sees its own backups only; the daemon's own calls see all.
func TestTeamsSeeTheirOwn(t *testing.T) {
	m, blobs := newTestManager(t)
	put(t, m, blobs, "bkp-aaaaaaaaaaaaaaaa", "red", nil)
	put(t, m, blobs, "bkp-bbbbbbbbbbbbbbbb", "blue", nil)
	red := auth.WithPrincipal(context.Background(), auth.Principal{KeyID: "k", Team: "red"})
	if list, err := m.List(red, ""); err != nil || len(list) != 1 || list[0].ID != "bkp-aaaaaaaaaaaaaaaa" {
		t.Errorf("red's list = %+v, %v", list, err)
	}
	if _, err := m.Get(red, "bkp-bbbbbbbbbbbbbbbb"); errdefs.CodeOf(err) != wire.CodeBackupNotFound {
		t.Errorf("red gets blue's: %v", err)
	}
	if err := m.Delete(red, "bkp-bbbbbbbbbbbbbbbb"); errdefs.CodeOf(err) != wire.CodeBackupNotFound {
		t.Errorf("red deletes blue's: %v", err)
	}
	if ok, _ := blobs.Exists(context.Background(), blobKey("bkp-bbbbbbbbbbbbbbbb")); !ok {
		t.Error("blue's blob is gone after red's refused delete")
	}
	if list, err := m.List(context.Background(), ""); err != nil || len(list) != 2 {
		t.Errorf("the daemon's list = %+v, %v", list, err)
	}
	if _, err := m.Get(red, "../../etc/passwd"); errdefs.CodeOf(err) != wire.CodeBackupNotFound {
		t.Errorf("a bad id: %v", err)
	}
}

// An expired backup is gone to every call, blob and record.
func TestExpiry(t *testing.T) {
	m, blobs := newTestManager(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	exp := now.Add(time.Minute)
	put(t, m, blobs, "bkp-cccccccccccccccc", "", &exp)
	if _, err := m.Get(context.Background(), "bkp-cccccccccccccccc"); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	now = exp
	if list, err := m.List(context.Background(), ""); err != nil || len(list) != 0 {
		t.Errorf("list after expiry = %+v, %v", list, err)
	}
	if ok, _ := blobs.Exists(context.Background(), blobKey("bkp-cccccccccccccccc")); ok {
		t.Error("the expired backup's blob is still there")
	}
	if _, err := m.get(context.Background(), "bkp-cccccccccccccccc"); errdefs.CodeOf(err) != wire.CodeBackupNotFound {
		t.Errorf("record after expiry: %v", err)
	}
}

func TestCreateRefusesBadRequests(t *testing.T) {
	m, _ := newTestManager(t)
	for _, req := range []wire.CreateBackupRequest{{Path: ""}, {Path: "rel"}, {Path: "/a", ExpiresInSeconds: -1}, {Path: "/a", ExpiresInSeconds: MaxExpiresInSeconds + 1}, {Path: "/a", Name: string(make([]byte, 129))}} {
		if _, err := m.Create(context.Background(), nil, "sbx-1", req); errdefs.CodeOf(err) != wire.CodeInvalidBackup {
			t.Errorf("Create(%+v) = %v", req, err)
		}
	}
}

// An agent that refuses a restore before reading the stream: the refusal
// comes back, and the stream the transport was still sending is stopped
// before its decoder goes (this once crashed the daemon).
func TestRestoreRefusedEarly(t *testing.T) {
	m, blobs := newTestManager(t)
	// A backup of a few MiB, so the transport is mid-stream at the refusal.
	var packed bytes.Buffer
	zw, _ := zstd.NewWriter(&packed)
	noise := make([]byte, 8<<20)
	rand.Read(noise)
	zw.Write(noise)
	zw.Close()
	sum := sha256.Sum256(packed.Bytes())
	id := "bkp-dddddddddddddddd"
	if _, err := blobs.Put(context.Background(), blobKey(id), bytes.NewReader(packed.Bytes())); err != nil {
		t.Fatal(err)
	}
	if err := m.write(record{Backup: wire.Backup{ID: id, Path: "/w", SHA256: hex.EncodeToString(sum[:]), CreatedAt: m.now()}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, agentapi.AgentSock))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"error":{"code":"BACKUP_TARGET_NOT_EMPTY","message":"/w is not empty"}}`))
	})}
	go srv.Serve(l)
	defer srv.Close()
	for i := 0; i < 5; i++ {
		_, err := m.Restore(context.Background(), agentapi.NewClient(dir), id, "/w")
		if errdefs.CodeOf(err) != wire.CodeBackupTargetNotEmpty {
			t.Fatalf("restore into a full directory = %v", err)
		}
	}
}
