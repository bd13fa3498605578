package integration

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// The agent's language servers through sbx's own API and Go SDK (the
// Daytona layer's are in daytona_lsp_test.go): pylsp in the python image.
func TestLSPNativeAPI(t *testing.T) {
	d := startDaemon(t)
	importPython(t, d)
	ctx := context.Background()
	c := d.client
	sb := d.create(sdk.CreateSandboxRequest{Image: "python"})
	src := "def area(r):\n    return 3.14 * r * r\n\n\nar\n"
	if _, err := c.Upload(ctx, sb.ID, "/srv/app/geo.py", strings.NewReader(src), 0o644); err != nil {
		t.Fatal(err)
	}
	py := sdk.LSPServerRequest{Language: "python", Project: "/srv/app"}
	doc := sdk.LSPDocumentRequest{Language: "python", Project: "/srv/app", Path: "/srv/app/geo.py"}

	_, err := c.LSPDocumentSymbols(ctx, sb.ID, doc)
	wantCode(t, err, string(sdk.CodeLSPNotStarted))
	srv, err := c.StartLSP(ctx, sb.ID, py)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Program != "pylsp" || srv.Pid == 0 || srv.Project != "/srv/app" {
		t.Errorf("server %+v", srv)
	}
	if err := c.LSPDidOpen(ctx, sb.ID, doc); err != nil {
		t.Fatal(err)
	}
	syms, err := c.LSPDocumentSymbols(ctx, sb.ID, doc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(syms, func(s sdk.LSPSymbol) bool {
		return s.Name == "area" && s.Kind == 12 && s.URI == "file:///srv/app/geo.py"
	}) {
		t.Errorf("symbols %+v lack the function area", syms)
	}
	list, err := c.LSPCompletions(ctx, sb.ID, sdk.LSPCompletionRequest{Language: "python", Project: "/srv/app", Path: "/srv/app/geo.py", Position: sdk.LSPPosition{Line: 4, Character: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Items, func(i sdk.LSPCompletionItem) bool { return i.Label == "area(r)" || i.Label == "area" }) {
		t.Errorf("completions %+v lack area", list.Items)
	}
	wantCode(t, c.LSPDidOpen(ctx, sb.ID, sdk.LSPDocumentRequest{Language: "python", Project: "/srv/app", Path: "/etc/hostname"}), string(sdk.CodeInvalidPath))
	_, err = c.StartLSP(ctx, sb.ID, sdk.LSPServerRequest{Language: "cobol", Project: "/srv/app"})
	wantCode(t, err, string(sdk.CodeUnknownLanguage))
	_, err = c.StartLSP(ctx, sb.ID, sdk.LSPServerRequest{Language: "typescript", Project: "/srv/app"})
	wantCode(t, err, string(sdk.CodeLanguageNotAvailable))
	if err := c.StopLSP(ctx, sb.ID, py); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.StopLSP(ctx, sb.ID, py), string(sdk.CodeLSPNotStarted))
}

// Screen recordings through sbx's own API and Go SDK: ffmpeg in the
// desktop image.
func TestDesktopRecordingNativeAPI(t *testing.T) {
	d := startDaemon(t)
	importDesktop(t, d)
	ctx := context.Background()
	c := d.client
	sb := d.create(sdk.CreateSandboxRequest{Image: "desktop", MemoryMiB: 1024})

	_, err := c.StartRecording(ctx, sb.ID, sdk.RecordingStartRequest{})
	wantCode(t, err, string(sdk.CodeDesktopNotRunning))
	if _, err := c.StartDesktop(ctx, sb.ID, sdk.DesktopStartRequest{Width: 640, Height: 480}); err != nil {
		t.Fatal(err)
	}
	_, err = c.StopRecording(ctx, sb.ID, "0123456789abcdef")
	wantCode(t, err, string(sdk.CodeRecordingNotFound))
	rec, err := c.StartRecording(ctx, sb.ID, sdk.RecordingStartRequest{Label: "native"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != sdk.RecordingActive || !strings.HasPrefix(rec.FileName, "native_") {
		t.Errorf("started %+v", rec)
	}
	_, err = c.RecordingFile(ctx, sb.ID, rec.ID)
	wantCode(t, err, string(sdk.CodeRecordingActive))
	time.Sleep(2 * time.Second) // frames to record
	done, err := c.StopRecording(ctx, sb.ID, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != sdk.RecordingCompleted || done.SizeBytes == 0 || done.EndedAt == nil {
		t.Errorf("stopped %+v", done)
	}
	_, err = c.StopRecording(ctx, sb.ID, rec.ID)
	wantCode(t, err, string(sdk.CodeRecordingNotActive))
	f, err := c.RecordingFile(ctx, sb.ID, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	video, err := io.ReadAll(f)
	f.Close()
	if err != nil || int64(len(video)) != done.SizeBytes || !bytes.Equal(video[4:8], []byte("ftyp")) {
		t.Errorf("the file: %d bytes (want %d), %v", len(video), done.SizeBytes, err)
	}
	if list, err := c.ListRecordings(ctx, sb.ID); err != nil || len(list) != 1 || list[0].ID != rec.ID {
		t.Errorf("list %+v %v", list, err)
	}
	if err := c.DeleteRecording(ctx, sb.ID, rec.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetRecording(ctx, sb.ID, rec.ID)
	wantCode(t, err, string(sdk.CodeRecordingNotFound))
}
