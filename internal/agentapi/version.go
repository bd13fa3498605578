package agentapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// The agent protocol's version. Every instance runs the agent binary it
// was started with (kept under <data>/agent, see sandbox/agentbin.go), so
// after an upgrade a new daemon talks to agents of older releases. The
// agent reports its version in its Health answer; an agent that reports
// none speaks version 1, the protocol before versions. A daemon talks to
// agents from MinProtocolVersion up to its own ProtocolVersion() and
// restarts the sandbox of any other (with the current agent, and an event
// that says so).
//
// Raise the version when a route's meaning or a body's shape changes in a
// way an older daemon or agent misreads; keep MinProtocolVersion as low as
// the daemon can still serve: a daemon that needs a route an old agent
// lacks answers that route's error, not a restart.
const MinProtocolVersion = 1

// protocol is the version this binary speaks, a string so a test build can
// stand for an agent of another release (go build -ldflags
// "-X github.com/sbxhq/sbx/internal/agentapi.protocol=99").
var protocol = "2"

// ProtocolVersion is the agent protocol version this binary speaks.
func ProtocolVersion() int {
	v, err := strconv.Atoi(protocol)
	if err != nil {
		panic("agentapi: bad protocol version " + protocol)
	}
	return v
}

// Hello is the agent's Health answer.
type Hello struct {
	OK       bool `json:"ok"`
	Pid      int  `json:"pid"`
	Protocol int  `json:"protocol,omitempty"` // 0 (absent): version 1
}

// NewHello is this agent's Health answer.
func NewHello(pid int) Hello { return Hello{OK: true, Pid: pid, Protocol: ProtocolVersion()} }

// Version is the protocol version the agent speaks.
func (h Hello) Version() int {
	if h.Protocol == 0 {
		return 1
	}
	return h.Protocol
}

// Supported reports whether this daemon can talk to an agent of version v.
func Supported(v int) bool { return v >= MinProtocolVersion && v <= ProtocolVersion() }

// Hello asks the agent who it is (its Health answer).
func (c *Client) Hello(ctx context.Context) (Hello, error) {
	var h Hello
	body, err := c.call(ctx, Health, "", http.StatusOK)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("agent health answer: %w", err)
	}
	return h, nil
}
