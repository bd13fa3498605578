package agentapi

import (
	"encoding/json"
	"testing"
)

// An agent of the release before versions answers no protocol: version 1,
// which this daemon supports; a version above its own or below the
// minimum is not.
func TestProtocolVersions(t *testing.T) {
	var old Hello
	if err := json.Unmarshal([]byte(`{"ok": true, "pid": 1}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Version() != 1 || !Supported(old.Version()) {
		t.Errorf("an agent without a version: %d, supported %v; want 1, true", old.Version(), Supported(old.Version()))
	}
	if now := NewHello(7); now.Version() != ProtocolVersion() || !Supported(now.Version()) {
		t.Errorf("this agent: %+v", now)
	}
	for _, v := range []int{MinProtocolVersion - 1, ProtocolVersion() + 1} {
		if Supported(v) {
			t.Errorf("version %d is supported, want not", v)
		}
	}
}
