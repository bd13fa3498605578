package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	h, err := logHandler(&buf, "JSON", "warn")
	if err != nil {
		t.Fatal(err)
	}
	l := slog.New(h)
	l.Info("hidden")
	l.Warn("shown", "k", "v")
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m["msg"] != "shown" || m["k"] != "v" {
		t.Fatalf("json handler at warn wrote %q (%v)", buf.String(), err)
	}
	if h, _ := logHandler(&buf, "text", "debug"); !h.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("--log-level debug does not enable debug")
	}
	for _, bad := range [][2]string{{"xml", "info"}, {"text", "verbose"}, {"json", "info+2"}} {
		if _, err := logHandler(&buf, bad[0], bad[1]); err == nil {
			t.Errorf("format %q level %q accepted", bad[0], bad[1])
		}
	}
}
