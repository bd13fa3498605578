package agent

import (
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// FileFD through a real agent socket: the daemon's side (agentapi.OpenFD)
// gets the descriptor, writes or reads it, and the agent renames or
// removes the upload before it answers.
func TestFileFD(t *testing.T) {
	runDir := newRunDir(t)
	dir := t.TempDir()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{Socket: filepath.Join(runDir, agentapi.AgentSock), DefaultCwd: dir}) }()
	defer func() { stop(); <-done }()
	c := agentapi.NewClient(runDir)
	defer c.Close()
	wctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := c.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	left := func() []string {
		t.Helper()
		var names []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	// A write: the bytes go into the agent's temporary file; Commit renames
	// it with the mode asked for. Relative paths start at the default cwd.
	f, err := c.OpenFD(wctx, "write", url.Values{"path": {"sub/a.txt"}, "mode": {"0640"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Path != filepath.Join(dir, "sub/a.txt") {
		t.Errorf("opened %q", f.Path)
	}
	f.File.WriteString("hello")
	info, err := f.Commit(wctx, nil)
	f.Close()
	if err != nil || info.Size != 5 || info.Mode != "0640" || info.Type != "file" {
		t.Fatalf("commit: %+v, %v", info, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "sub/a.txt")); string(b) != "hello" {
		t.Fatalf("written file: %q, %v", b, err)
	}

	// A failed write: by the time Commit returns, nothing of it is left.
	f, err = c.OpenFD(wctx, "write", url.Values{"path": {"b.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	f.File.WriteString("partial")
	failed := errors.New("the client went away")
	if _, err := f.Commit(wctx, failed); err != failed {
		t.Errorf("failed commit: %v", err)
	}
	f.Close()
	if got := left(); len(got) != 1 || got[0] != "sub" {
		t.Errorf("after a failed upload the directory holds %v", got)
	}

	// A read: the file's descriptor and size.
	f, err = c.OpenFD(wctx, "read", url.Values{"path": {filepath.Join(dir, "sub/a.txt")}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.LimitReader(f.File, f.Size))
	f.Close()
	if f.Size != 5 || string(b) != "hello" {
		t.Errorf("read %d: %q", f.Size, b)
	}

	// Errors are the agent's, as for GetFile and PutFile.
	if _, err := c.OpenFD(wctx, "read", url.Values{"path": {"missing"}}); errdefs.CodeOf(err) != wire.CodeFileNotFound {
		t.Errorf("read of a missing file: %v", err)
	}
	if _, err := c.OpenFD(wctx, "write", url.Values{"path": {"sub"}}); errdefs.CodeOf(err) != wire.CodeIsADirectory {
		t.Errorf("write over a directory: %v", err)
	}
	if _, err := c.OpenFD(wctx, "chmod", url.Values{"path": {"sub/a.txt"}}); errdefs.CodeOf(err) != wire.CodeInvalidParameter {
		t.Errorf("an unknown op: %v", err)
	}
}
