package store_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/store/storetest"
)

// crashChildEnv, when set to a database path, makes the test binary act as
// the writer that TestDurabilityAfterKill kills.
const crashChildEnv = "SBX_STORE_CRASH_CHILD_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	os.Exit(m.Run())
}

func openTemp(t *testing.T) (*store.SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sbx.db")
	s, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := openTemp(t)
		return s
	})
}

// rawQuery runs a one-value query on the file without going through the store.
func rawQuery(t *testing.T, path, q string, dst any) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(q).Scan(dst); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func rawExec(t *testing.T, path, q string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestOpenSettings(t *testing.T) {
	s, path := openTemp(t)
	// A write makes SQLite create the -wal and -shm files too.
	if err := s.CreateSandbox(auth.System(context.Background(), "test"), &store.Sandbox{ID: "sbx-1", State: "created"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
	var mode string
	rawQuery(t, path, "PRAGMA journal_mode", &mode)
	if mode != "wal" {
		t.Errorf("journal_mode %q, want wal", mode)
	}
}

func TestOpenBadPath(t *testing.T) {
	for _, p := range []string{"", filepath.Join(t.TempDir(), "a?b.db")} {
		if _, err := store.OpenSQLite(p); errdefs.KindOf(err) != errdefs.KindInvalid {
			t.Errorf("OpenSQLite(%q) = %v, want an Invalid error", p, err)
		}
	}
	if _, err := store.OpenSQLite(filepath.Join(t.TempDir(), "missing", "sbx.db")); err == nil {
		t.Error("OpenSQLite in a missing directory succeeded")
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := auth.System(context.Background(), "test")
	s, path := openTemp(t)
	sb := &store.Sandbox{ID: "sbx-1", Name: "web", State: "created"}
	if err := s.CreateSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateSandbox(ctx, sb, &store.Event{State: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutImage(ctx, &store.Image{Name: "alpine", ID: "sha256:aa"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var before int
	rawQuery(t, path, "PRAGMA user_version", &before)
	if before < 1 {
		t.Fatalf("schema version %d after migrating a fresh database", before)
	}

	s, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.GetSandbox(ctx, "web"); err != nil || got.ID != "sbx-1" {
		t.Errorf("sandbox after reopen: %+v, %v", got, err)
	}
	if evs, err := s.ListEvents(ctx, "sbx-1", 0, 0); err != nil || len(evs) != 1 {
		t.Errorf("events after reopen: %+v, %v", evs, err)
	}
	if _, err := s.GetImage(ctx, "alpine"); err != nil {
		t.Errorf("image after reopen: %v", err)
	}
	var after int
	rawQuery(t, path, "PRAGMA user_version", &after)
	if after != before {
		t.Errorf("schema version changed on reopen: %d -> %d", before, after)
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestFutureSchemaRefused(t *testing.T) {
	s, path := openTemp(t)
	if err := s.CreateSandbox(auth.System(context.Background(), "test"), &store.Sandbox{ID: "sbx-1", State: "created"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	rawExec(t, path, "PRAGMA user_version = 1000")
	sum := fileHash(t, path)

	_, err := store.OpenSQLite(path)
	if errdefs.CodeOf(err) != "SCHEMA_TOO_NEW" || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("opening a newer database: %v, want SCHEMA_TOO_NEW naming version 1000", err)
	}
	if fileHash(t, path) != sum {
		t.Error("the refused database file changed")
	}
	var n int
	rawQuery(t, path, "SELECT count(*) FROM sandboxes", &n)
	if n != 1 {
		t.Errorf("%d sandboxes after a refused open, want 1", n)
	}
}

// TestUpdateAtomic checks that a failing event insert undoes the update it
// came with.
func TestUpdateAtomic(t *testing.T) {
	ctx := auth.System(context.Background(), "test")
	s, _ := openTemp(t)
	sb := &store.Sandbox{ID: "sbx-1", State: "created"}
	if err := s.CreateSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	sb.State = "running"
	// The event names another sandbox, which the store refuses.
	if err := s.UpdateSandbox(ctx, sb, &store.Event{SandboxID: "sbx-ghost", State: "running"}); err == nil {
		t.Fatal("update with an event of a missing sandbox succeeded")
	}
	got, err := s.GetSandbox(ctx, "sbx-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != "created" {
		t.Errorf("state %q after a failed update, want created", got.State)
	}
}

func TestTimeOutOfRange(t *testing.T) {
	s, _ := openTemp(t)
	sb := &store.Sandbox{ID: "sbx-1", State: "created", StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := s.CreateSandbox(auth.System(context.Background(), "test"), sb); errdefs.KindOf(err) != errdefs.KindInvalid {
		t.Fatalf("create with year 10000: %v, want Invalid", err)
	}
}

// crashChild commits sandboxes one by one, printing each id after its
// commit returns, until it is killed.
func crashChild(path string) {
	s, err := store.OpenSQLite(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := auth.System(context.Background(), "test")
	for i := range 1_000_000 {
		sb := &store.Sandbox{ID: fmt.Sprintf("sbx-%07d", i), State: "created"}
		if err := s.CreateSandbox(ctx, sb); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		sb.State = "running"
		if err := s.UpdateSandbox(ctx, sb, &store.Event{State: "running"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(sb.ID) // os.Stdout is unbuffered: the parent sees it now
	}
	os.Exit(0)
}

// TestDurabilityAfterKill kills a writer mid-stream and checks that every
// commit it reported survived and the file is sound.
func TestDurabilityAfterKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sbx.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	const killAfter = 200
	var reported []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		reported = append(reported, sc.Text())
		if len(reported) == killAfter {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed mid-way: %v; stderr: %s", err, stderr.String())
	}
	if len(reported) < killAfter {
		t.Fatalf("child reported %d commits, want at least %d", len(reported), killAfter)
	}

	var check string
	rawQuery(t, path, "PRAGMA integrity_check", &check)
	if check != "ok" {
		t.Fatalf("integrity_check: %s", check)
	}
	s, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := auth.System(context.Background(), "test")
	for _, id := range reported {
		if len(id) != len("sbx-0000000") {
			continue // a line cut short by the kill was never reported whole
		}
		sb, err := s.GetSandbox(ctx, id)
		if err != nil {
			t.Fatalf("reported commit %s lost: %v", id, err)
		}
		if sb.State != "running" {
			t.Fatalf("%s: state %q, want running", id, sb.State)
		}
		if evs, err := s.ListEvents(ctx, id, 0, 0); err != nil || len(evs) != 1 {
			t.Fatalf("%s: events %+v, %v; want 1", id, evs, err)
		}
	}
	t.Logf("child reported %d commits before it died", len(reported))
}
