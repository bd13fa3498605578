package main

import (
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/doctor"
)

func TestCheckFloor(t *testing.T) {
	if r := checkFloor(nil, []string{"10.96.0.0/12"}); r.Status != doctor.OK || !strings.Contains(r.Detail, "169.254.0.0/16") || !strings.Contains(r.Detail, "10.96.0.0/12") {
		t.Errorf("default floor: %+v", r)
	}
	if r := checkFloor([]string{"169.254.169.254"}, nil); r.Status != doctor.Warn || !strings.Contains(r.Fix, "metadata") {
		t.Errorf("an allowance opening metadata: %+v", r)
	}
	if r := checkFloor([]string{"not-a-cidr"}, nil); r.Status != doctor.Fail {
		t.Errorf("a bad allowance: %+v", r)
	}
}
