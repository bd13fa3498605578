package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// superviseOnce runs a main process under a bare server until it makes the
// agent shut down, and returns the marker and the log.
func superviseOnce(t *testing.T, spec agentapi.MainSpec) (agentapi.MainExit, string) {
	t.Helper()
	startReaper()
	dir := t.TempDir()
	s := &server{cwd: dir, groups: map[int]struct{}{}, shutdownReq: make(chan time.Duration, 1)}
	s.main.seen()
	go s.superviseMain(spec, dir)
	select {
	case <-s.shutdownReq:
	case <-time.After(waitFor):
		t.Fatal("the main process's exit did not shut the agent down")
	}
	var ex agentapi.MainExit
	b, err := os.ReadFile(filepath.Join(dir, agentapi.MainExitFile))
	if err != nil || json.Unmarshal(b, &ex) != nil {
		t.Fatalf("exit marker: %q, %v", b, err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, agentapi.MainLogFile))
	return ex, string(log)
}

func TestMainExitWritesMarker(t *testing.T) {
	ex, log := superviseOnce(t, agentapi.MainSpec{Cmd: []string{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, Restart: wire.RestartNever})
	if ex.ExitCode != 3 || ex.Restarts != 0 {
		t.Errorf("marker = %+v", ex)
	}
	if !strings.Contains(log, "out\n") || !strings.Contains(log, "err\n") || !strings.Contains(log, "exited with code 3") {
		t.Errorf("log = %q", log)
	}
}

func TestMainOnFailureRestarts(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "ran")
	ex, log := superviseOnce(t, agentapi.MainSpec{Cmd: []string{"/bin/sh", "-c", "[ -f " + flag + " ] && exit 0; touch " + flag + "; exit 1"}, Restart: wire.RestartOnFailure})
	if ex.ExitCode != 0 || ex.Restarts != 1 {
		t.Errorf("marker = %+v, want code 0 after 1 restart", ex)
	}
	if !strings.Contains(log, "restarting in 1s") {
		t.Errorf("log = %q", log)
	}
}

func TestMainNotFound(t *testing.T) {
	ex, log := superviseOnce(t, agentapi.MainSpec{Cmd: []string{"/no/such/binary"}, Restart: wire.RestartNever})
	if ex.ExitCode != 127 || !strings.Contains(log, "cannot start the main process") {
		t.Errorf("marker %+v, log %q", ex, log)
	}
}

func TestRotatingLog(t *testing.T) {
	defer func(d time.Duration) { logTimeEvery = d }(logTimeEvery)
	logTimeEvery = 0
	p := filepath.Join(t.TempDir(), "main.log")
	l := &rotatingLog{path: p, max: 10}
	for _, s := range []string{"123456", "7890", "abcdef", "gh"} {
		if _, err := l.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	cur, _ := os.ReadFile(p)
	old, _ := os.ReadFile(p + ".1")
	if string(old) != "1234567890" || string(cur) != "abcdefgh" {
		t.Errorf("rotated %q, current %q", old, cur)
	}
	// Each file has its own index of when each write began, rotated with it.
	for file, want := range map[string][]int64{p + ".1": {0, 6}, p: {0, 6}} {
		b, err := os.ReadFile(file + agentapi.LogTimesSuffix)
		if err != nil || len(b)%agentapi.LogTimeSize != 0 {
			t.Fatal(len(b), err)
		}
		var offs []int64
		for ; len(b) > 0; b = b[agentapi.LogTimeSize:] {
			r := agentapi.DecodeLogTime(b)
			offs = append(offs, r.Offset)
			if time.Since(r.Time) > time.Hour || r.Time.After(time.Now()) {
				t.Errorf("%s: record time %v", file, r.Time)
			}
		}
		if fmt.Sprint(offs) != fmt.Sprint(want) {
			t.Errorf("%s: offsets %v, want %v", file, offs, want)
		}
	}
}

// TestRotatingLogBoundsTimes: writes closer together than logTimeEvery
// share a record, and a log of many records rotates at max/32 of them, so
// write times never fill the run directory.
func TestRotatingLogBoundsTimes(t *testing.T) {
	defer func(d time.Duration) { logTimeEvery = d }(logTimeEvery)
	p := filepath.Join(t.TempDir(), "main.log")
	logTimeEvery = time.Hour
	l := &rotatingLog{path: p, max: 32 * agentapi.LogTimeSize * 4} // 4 records
	for range 10 {
		l.Write([]byte("x"))
	}
	if b, _ := os.ReadFile(p + agentapi.LogTimesSuffix); len(b) != agentapi.LogTimeSize {
		t.Errorf("10 writes within logTimeEvery kept %d bytes of times, want one record", len(b))
	}
	logTimeEvery = 0
	for range 5 {
		l.Write([]byte("y"))
	}
	l.Close()
	cur, _ := os.ReadFile(p)
	old, _ := os.ReadFile(p + ".1")
	times, _ := os.ReadFile(p + agentapi.LogTimesSuffix)
	oldTimes, _ := os.ReadFile(p + ".1" + agentapi.LogTimesSuffix)
	if string(old) != "xxxxxxxxxxyyy" || string(cur) != "yy" || len(oldTimes) != 4*agentapi.LogTimeSize || len(times) != 2*agentapi.LogTimeSize {
		t.Errorf("rotated %q (%d bytes of times), current %q (%d)", old, len(oldTimes), cur, len(times))
	}
}
