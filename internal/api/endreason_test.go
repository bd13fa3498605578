package api

import (
	"strings"
	"testing"

	"github.com/sbxhq/sbx/wire"
)

// A stream whose instance went away ends with INSTANCE_LOST naming the
// reason the Manager recorded for the end.
func TestBrokenStreamNamesTheStopReason(t *testing.T) {
	s, f := newTestServer(t)
	f.endState, f.endReason = wire.StateStopped, "oom"
	withAgent(t, f, agentStream(`{"type":"start","pid":7}`))
	types, last := events(t, do(s, "POST", "/v1/sandboxes/sb1/exec?stream=true", testKey, `{"cmd":["true"]}`))
	if strings.Join(types, ",") != "start,error" || last.Code != wire.CodeInstanceLost || last.Reason != "oom" || !strings.Contains(last.Message, "oom") {
		t.Fatalf("events %v, last error %+v", types, last)
	}
}
