package runtime

import (
	"bytes"
	"context"
	"os/exec"
	"time"
)

// Open TCP connections on a sandbox's network (not loopback) and saving:
// runsc releases from 2023 on drop them at a checkpoint
// (--net-disconnect-ok, on by default); Debian 12's runsc (20221219)
// refuses to save them, in any state but closed (TIME_WAIT included), and
// the refused checkpoint ends the instance.

// DropsConnections reports whether a checkpoint of an instance with open
// TCP connections on its network succeeds, the connections being dropped.
func (r *Runsc) DropsConnections() bool { return r.drops }

// runscFeatures is what a runsc binary can do, read from `runsc flags`.
type runscFeatures struct {
	dropsConnections bool // --net-disconnect-ok
	systrap          bool // the systrap platform (2023 on)
}

// probeRunsc asks the runsc binary which flags it has.
func probeRunsc(binary string) runscFeatures {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, binary, "flags").CombinedOutput()
	return runscFeatures{
		dropsConnections: bytes.Contains(out, []byte("-net-disconnect-ok")),
		systrap:          bytes.Contains(out, []byte("systrap")),
	}
}
