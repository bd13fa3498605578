package main

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseKV(t *testing.T) {
	got, err := parseKV("--env", []string{"A=1", "B=x=y", "C=", "A=2"})
	want := map[string]string{"A": "2", "B": "x=y", "C": ""}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	if got, err := parseKV("--env", nil); got != nil || err != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []struct{ in, msg string }{
		{"NOVALUE", `invalid --label "NOVALUE": want KEY=VALUE`},
		{"=v", `invalid --label "=v": the key before '=' is empty`},
		{"a b=c", `invalid --label "a b=c": the key may not contain white space`},
	} {
		_, err := parseKV("--label", []string{"ok=1", bad.in})
		var u *usageError
		if !errors.As(err, &u) || err.Error() != bad.msg {
			t.Errorf("%q: err = %v, want usage error %q", bad.in, err, bad.msg)
		}
	}
}

func TestDescribeKV(t *testing.T) {
	if got := describeKV(map[string]string{"b": "2", "a": "1"}); got != "a=1, b=2" {
		t.Errorf("got %q", got)
	}
	if got := describeKV(nil); got != "-" {
		t.Errorf("nil: %q", got)
	}
}
