package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Stream latency: how long a line that a process in a sandbox writes takes
// to reach the client, through the agent, the daemon's proxy and the SDK's
// NDJSON decoder. The line is fed to `cat` in the sandbox through a FIFO
// that the bench opens from the host (in the sandbox's mounted root), so the
// clock starts at the write into the sandbox without an API call in between
// and the host and the sandbox share one clock.
func init() {
	registerScenario(Scenario{Order: 95, Name: "stream latency", Run: runStreamLatency})
}

func runStreamLatency(env *Env, sys System) ([]result, error) {
	if sys.Name() != "sbx" {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	n := env.n(500, 20)
	c := env.Client
	ctx := context.Background()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{})
	if err != nil {
		return nil, err
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	if _, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: "mkfifo /tmp/lat-exec /tmp/lat-proc"}); err != nil {
		return nil, err
	}
	// The sandbox's root as the host sees it (sbx.go puts the daemon's data
	// dir at Work/sbx).
	fifo := func(name string) string {
		return filepath.Join(env.Work, "sbx", "sandboxes", sb.ID, "rootfs", "tmp", name)
	}

	execName := "stream latency: exec stream, line written → client has it"
	clock := &lineClock{ch: make(chan time.Time, 1)}
	done := make(chan error, 1)
	go func() {
		_, err := c.ExecStream(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"cat", "/tmp/lat-exec"}}, clock, nil)
		done <- err
	}()
	out := []result{timeLines(execName, fifo("lat-exec"), n, clock)}
	if err := <-done; err != nil {
		log.Printf("%s: %v", execName, err)
	}

	logsName := "stream latency: process logs -f, line written → client has it"
	if _, err := c.StartProcess(ctx, sb.ID, sdk.StartProcessRequest{ID: "cat", Cmd: []string{"cat", "/tmp/lat-proc"}}); err != nil {
		return append(out, failed(logsName, "sbx", err)), nil
	}
	clock = &lineClock{ch: make(chan time.Time, 1)}
	go func() {
		_, err := c.ProcessLogs(ctx, sb.ID, "cat", sdk.LogsOptions{Follow: true}, clock, nil)
		done <- err
	}()
	out = append(out, timeLines(logsName, fifo("lat-proc"), n, clock))
	if err := <-done; err != nil {
		log.Printf("%s: %v", logsName, err)
	}
	return out, nil
}

// timeLines writes n lines into the FIFO one after another and measures
// each until the client has it; closing the FIFO then ends the cat.
func timeLines(name, fifo string, n int, clock *lineClock) result {
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for cat to open it
	if err != nil {
		return failed(name, "sbx", err)
	}
	defer f.Close()
	var ms []float64
	for i := range n {
		start := time.Now()
		if _, err := fmt.Fprintf(f, "line %d\n", i); err != nil {
			return failed(name, "sbx", err)
		}
		select {
		case got := <-clock.ch:
			ms = append(ms, float64(got.Sub(start).Microseconds())/1000)
		case <-time.After(10 * time.Second):
			return failed(name, "sbx", errors.New("a line did not arrive within 10s"))
		}
	}
	return summarize(name, "sbx", "ms", ms)
}

// lineClock is the stdout of a stream: it notes when each line arrives.
type lineClock struct{ ch chan time.Time }

func (l *lineClock) Write(p []byte) (int, error) {
	now := time.Now()
	for range bytes.Count(p, []byte("\n")) {
		l.ch <- now
	}
	return len(p), nil
}
