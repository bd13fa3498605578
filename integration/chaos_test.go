package integration

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/chaos"
)

// TestChaos runs a mixed workload (uploads and exec writes into kept
// sandboxes, creates and deletes of others) and meanwhile kills the daemon
// with SIGKILL, or a sandbox's agent, at seeded random points
// (internal/chaos). After each fault every sandbox is where the daemon's
// acknowledgements put it and works, and every acknowledged write reads
// back with its bytes; at the end nothing of the run is left on the host.
// SBX_CHAOS_SEED replays a run; the seed is logged.
func TestChaos(t *testing.T) {
	d := startDaemon(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SBX_CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("SBX_CHAOS_SEED: %v", err)
		}
	}
	scope := d.censusScope()
	res := chaos.Run(chaos.Config{
		Client: d.client, Rounds: 6, Workers: 2, Seed: seed, Scope: scope,
		KillDaemon:  func() error { d.kill9(); return nil },
		StartDaemon: func() error { d.start(); return nil },
		Logf:        t.Logf,
	})
	for _, id := range res.IDs {
		d.created[id] = true // for the harness's leak checks
	}
	t.Logf("seed %d: faults %v, recovered %d, operations acknowledged %d, writes checked %d, lost %d, recovery %v",
		seed, res.Faults, res.Recovered, res.Ops, res.Acked, res.Lost, res.Recovery)
	for _, p := range res.Problems {
		t.Error(p)
	}
	if res.Acked == 0 || res.Recovered != 6 {
		t.Errorf("%d acknowledged writes checked, %d of 6 faults recovered; want some and all", res.Acked, res.Recovered)
	}
}
