package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

func fixClock(t *testing.T, at time.Time) {
	old := now
	now = func() time.Time { return at }
	t.Cleanup(func() { now = old })
}

func TestPrintSandboxes(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	fixClock(t, t0.Add(90*time.Minute))
	var b bytes.Buffer
	err := printSandboxes(&b, []sdk.Sandbox{
		{ID: "sbx-aaa", Name: "box", State: sdk.StateStarted, Image: "alpine", CPU: 0.5, MemoryMiB: 256, CreatedAt: t0},
		{ID: "sbx-bbbbbb", State: sdk.StateStopped, CreatedAt: t0.Add(89 * time.Minute)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"NAME   ID           STATE     IMAGE    CPU   MEMORY    CREATED\n" +
		"box    sbx-aaa      started   alpine   0.5   256 MiB   1h ago\n" +
		"-      sbx-bbbbbb   stopped   -        -     -         1m ago\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPrintSandbox(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	fixClock(t, t0.Add(72*time.Hour))
	var b bytes.Buffer
	printSandbox(&b, &sdk.Sandbox{
		ID: "sbx-1", Name: "box", State: sdk.StateError, Reason: "crash", Error: "agent exited",
		Labels: map[string]string{"team": "ml", "env": "dev"}, PidsLimit: 100, CreatedAt: t0, StartedAt: &t0,
	})
	out := b.String()
	for _, want := range []string{
		"ID:           sbx-1\n",
		"State:        error (crash)\n",
		"Error:        agent exited\n",
		"Labels:       env=dev, team=ml\n",
		"Pids limit:   100\n",
		"Env:          -\n",
		"3d ago)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "Stopped:") {
		t.Errorf("unset StoppedAt printed:\n%s", out)
	}
}

func TestPrintImages(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	fixClock(t, t0.Add(30*time.Second))
	var b bytes.Buffer
	printImages(&b, []sdk.Image{{Name: "alpine", ID: "sha256:0123456789abcdef0123", Layers: 1, SizeBytes: 7 << 20, Source: "pull:alpine:3", CreatedAt: t0}})
	want := "" +
		"NAME     ID             LAYERS   SIZE      SOURCE          CREATED\n" +
		"alpine   0123456789ab   1        7.0 MiB   pull:alpine:3   just now\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 30: "5.0 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("%d: got %q, want %q", n, got, want)
		}
	}
}

func TestOutputFlag(t *testing.T) {
	var b bytes.Buffer
	o := &outputFlag{format: "json"}
	if err := o.print(&b, map[string]int{"a": 1}, nil); err != nil {
		t.Fatal(err)
	}
	var m map[string]int
	if err := json.Unmarshal(b.Bytes(), &m); err != nil || m["a"] != 1 {
		t.Errorf("json output %q: %v", b.String(), err)
	}
	o.format = "yaml"
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "use text or json") {
		t.Errorf("yaml: %v", err)
	}
}
