package integration

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sbxhq/sbx/internal/blob/s3/s3test"
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
	runChaos(t, startDaemon(t), nil)
}

// TestChaosS3 is TestChaos on a daemon whose blob store is S3 (versitygw),
// with S3 outages of 0.5–3 s among the faults and archive cycles (stop,
// archive, start from S3, read back) in the workload.
func TestChaosS3(t *testing.T) {
	srv := s3test.Start(t)
	d := startDaemon(t, srv.Flags(srv.Bucket(), "")...)
	runChaos(t, d, srv)
}

// runChaos runs 6 faults with 2 workers against d (and srv's outages, if
// srv is not nil) and fails the test on every problem the run found.
func runChaos(t *testing.T, d *daemon, srv *s3test.Server) {
	const rounds = 6
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SBX_CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("SBX_CHAOS_SEED: %v", err)
		}
	}
	cfg := chaos.Config{
		Client: d.client, Rounds: rounds, Workers: 2, Seed: seed, Scope: d.censusScope(),
		KillDaemon:  func() error { d.kill9(); return nil },
		StartDaemon: func() error { d.start(); return nil },
		Logf:        t.Logf,
	}
	if srv != nil {
		cfg.StopS3, cfg.StartS3 = srv.Stop, srv.Restart
	}
	res := chaos.Run(cfg)
	for _, id := range res.IDs {
		d.created[id] = true // for the harness's leak checks
	}
	t.Logf("seed %d: faults %v, recovered %d, operations acknowledged %d, archive cycles %d, writes checked %d, lost %d, recovery %v",
		seed, res.Faults, res.Recovered, res.Ops, res.Archived, res.Acked, res.Lost, res.Recovery)
	for _, p := range res.Problems {
		t.Error(p)
	}
	if res.Acked == 0 || res.Recovered != rounds {
		t.Errorf("%d acknowledged writes checked, %d of %d faults recovered; want some and all", res.Acked, res.Recovered, rounds)
	}
	if srv != nil && res.Archived == 0 {
		t.Errorf("no archive cycle (stop, archive to S3, restore, read back) went through")
	}
}
