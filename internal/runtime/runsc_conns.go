package runtime

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"time"
)

// Open TCP connections on a sandbox's network (not loopback) and saving:
// runsc releases from 2023 on drop them at a checkpoint
// (--net-disconnect-ok, on by default); Debian 12's runsc (20221219)
// refuses to save them, in any state but closed (TIME_WAIT included), and
// the refused checkpoint ends the instance. Callers of such a runsc must
// make sure there are none first.

// dropsConns caches, per runsc binary, whether it drops connections.
var dropsConns sync.Map // binary path → bool

// DropsConnections reports whether a checkpoint of an instance with open
// TCP connections on its network succeeds, the connections being dropped.
func (r *Runsc) DropsConnections() bool {
	if v, ok := dropsConns.Load(r.binary); ok {
		return v.(bool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, r.binary, "flags").CombinedOutput()
	drops := bytes.Contains(out, []byte("-net-disconnect-ok"))
	dropsConns.Store(r.binary, drops)
	return drops
}

// DropsConnections reports whether cp saves instances with open TCP
// connections on their network (see Runsc.DropsConnections). Runtimes that
// do not say are taken not to.
func DropsConnections(cp Checkpointer) bool {
	d, ok := cp.(interface{ DropsConnections() bool })
	return ok && d.DropsConnections()
}
