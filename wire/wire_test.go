package wire

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestWireZeroesPresent checks that a zero which is an answer (exit code 0,
// timedOut false, a 0 duration or size) is sent, not left out: a JavaScript
// or Python client would read undefined/None for it. Fields that mean
// nothing in an event type stay out of it.
func TestWireZeroesPresent(t *testing.T) {
	cases := []struct {
		name    string
		v       any
		present []string
		absent  []string
	}{
		{"exec exit", ExecEvent{Type: "exit"}, []string{"exitCode", "timedOut", "durationMs"}, nil},
		{"exec stdout", ExecEvent{Type: "stdout", Data: []byte("x")}, []string{"data"}, []string{"exitCode", "timedOut", "durationMs"}},
		{"exec exit pointer", &ExecEvent{Type: "exit"}, []string{"exitCode"}, nil},
		{"session exit", SessionEvent{ExecEvent: ExecEvent{Type: "exit"}}, []string{"exitCode", "timedOut", "durationMs", "sessionEnded", "shellRestarted"}, nil},
		{"session stdout", SessionEvent{ExecEvent: ExecEvent{Type: "stdout", Seq: 3}}, []string{"seq"}, []string{"exitCode", "sessionEnded", "shellRestarted"}},
		{"session result", SessionExecResult{}, []string{"exitCode", "timedOut", "sessionEnded", "shellRestarted"}, nil},
		{"run end", RunEvent{Type: "end"}, []string{"timedOut", "durationMs"}, nil},
		{"run stdout", RunEvent{Type: "stdout", Data: []byte("x")}, nil, []string{"timedOut", "durationMs"}},
		{"pty exit", PTYControl{Type: "exit"}, []string{"exitCode"}, nil},
		{"pty resize", PTYControl{Type: "resize", Cols: 80, Rows: 24}, []string{"cols"}, []string{"exitCode"}},
		{"process", Process{State: "exited", ExitCode: new(int)}, []string{"exitCode", "timedOut"}, nil},
		{"sandbox", Sandbox{}, []string{"diskMiB"}, nil},
		{"snapshot", Snapshot{}, []string{"expiresInSeconds"}, nil},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, k := range c.present {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: %q missing in %s", c.name, k, b)
			}
		}
		for _, k := range c.absent {
			if _, ok := m[k]; ok {
				t.Errorf("%s: %q present in %s", c.name, k, b)
			}
		}
	}
}

// TestWireEventsRoundTrip checks that the events' own encoding decodes to
// what was sent.
func TestWireEventsRoundTrip(t *testing.T) {
	for _, v := range []any{
		&ExecEvent{Type: "exit", Seq: 4, ExitCode: 3, Signal: "SIGKILL", TimedOut: true, DurationMs: 12},
		&ExecEvent{Type: "stderr", Seq: 2, Data: []byte("err")},
		&SessionEvent{ExecEvent: ExecEvent{Type: "exit", ExitCode: 42, DurationMs: 1}, SessionEnded: true, ShellRestarted: true},
		&RunEvent{Type: "end", TimedOut: true, DurationMs: 5},
		&PTYControl{Type: "exit", ExitCode: 2, Signal: "SIGHUP"},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := json.Unmarshal(b, got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("round trip of %s: got %+v, want %+v", b, got, v)
		}
	}
}
