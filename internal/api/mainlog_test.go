package api

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// writeLog writes a log file as the agent does: one time record per write.
func writeLog(t *testing.T, path string, writes []string, at []time.Time) {
	t.Helper()
	var data []byte
	times, err := os.Create(path + agentapi.LogTimesSuffix)
	if err != nil {
		t.Fatal(err)
	}
	defer times.Close()
	for i, w := range writes {
		agentapi.AppendLogTime(times, agentapi.LogTime{Offset: int64(len(data)), Time: at[i]})
		data = append(data, w...)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// readLogs returns the data lines of a logs answer: their text joined, and
// each chunk's time.
func readLogs(t *testing.T, body string) (string, []*time.Time) {
	t.Helper()
	var out strings.Builder
	var times []*time.Time
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		var l wire.LogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		if l.Type == "data" {
			out.Write(l.Data)
			times = append(times, l.Time)
		}
	}
	return out.String(), times
}

// TestMainLogsTailSinceTimestamps: tail, since and timestamps select from
// both files of the main log on the daemon, and bad values are refused by
// name.
func TestMainLogsTailSinceTimestamps(t *testing.T) {
	s, f := newTestServer(t)
	dir := t.TempDir()
	f.mainLog = filepath.Join(dir, "main.log")
	now := time.Now()
	hour, min10, min2 := now.Add(-time.Hour), now.Add(-10*time.Minute), now.Add(-2*time.Minute)
	// A line spans the rotation: "three" was written in two parts.
	writeLog(t, f.mainLog+".1", []string{"one\ntwo\n", "th"}, []time.Time{hour, min10})
	writeLog(t, f.mainLog, []string{"ree\nfour\n", "five\n"}, []time.Time{min10, min2})

	get := func(query string) string {
		t.Helper()
		rec := do(s, "GET", "/v1/sandboxes/sb1/logs"+query, testKey, "")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", query, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	for query, want := range map[string]string{
		"":                  "one\ntwo\nthree\nfour\nfive\n",
		"?tail=all":         "one\ntwo\nthree\nfour\nfive\n",
		"?tail=0":           "",
		"?tail=1":           "five\n",
		"?tail=3":           "three\nfour\nfive\n",
		"?tail=4":           "two\nthree\nfour\nfive\n",
		"?tail=99":          "one\ntwo\nthree\nfour\nfive\n",
		"?since=5m":         "five\n",
		"?since=30m":        "three\nfour\nfive\n",
		"?since=30m&tail=1": "five\n",
		"?since=5m&tail=3":  "five\n",
		"?since=" + min10.Add(-time.Second).UTC().Format(time.RFC3339Nano): "three\nfour\nfive\n",
	} {
		if got, _ := readLogs(t, get(query)); got != want {
			t.Errorf("%s: %q, want %q", query, got, want)
		}
	}
	text, times := readLogs(t, get("?timestamps=true"))
	if text != "one\ntwo\nthree\nfour\nfive\n" || len(times) != 4 {
		t.Fatalf("timestamps: %q in %d chunks", text, len(times))
	}
	for i, want := range []time.Time{hour, min10, min10, min2} {
		if times[i] == nil || !times[i].Equal(want) {
			t.Errorf("chunk %d time %v, want %v", i, times[i], want)
		}
	}
	if _, times := readLogs(t, get("")); times[0] != nil {
		t.Errorf("a time without timestamps=true: %v", times[0])
	}

	for query, name := range map[string]string{
		"?tail=-1": "tail", "?tail=ten": "tail", "?since=yesterday": "since", "?since=-5m": "since", "?timestamps=maybe": "timestamps",
	} {
		e := wantError(t, do(s, "GET", "/v1/sandboxes/sb1/logs"+query, testKey, ""), 400, wire.CodeInvalidParameter)
		if !strings.Contains(e.Message, name) {
			t.Errorf("%s: %q does not name %s", query, e.Message, name)
		}
	}
	// A log from an agent that kept no times cannot answer since.
	os.Remove(f.mainLog + agentapi.LogTimesSuffix)
	wantError(t, do(s, "GET", "/v1/sandboxes/sb1/logs?since=5m", testKey, ""), 400, wire.CodeInvalidParameter)
	if got, _ := readLogs(t, get("?tail=2")); got != "four\nfive\n" {
		t.Errorf("tail without times: %q", got)
	}
}
