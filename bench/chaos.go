package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/census"
	"github.com/sbxhq/sbx/internal/chaos"
)

var (
	chaosRounds  = flag.Int("chaos", 0, "instead of the scenarios: inject this many faults (kill -9 of the daemon or of a sandbox's agent, at seeded random points) into a mixed workload on sbx (internal/chaos); fails unless every fault is recovered, no acknowledged write is lost and nothing is left")
	chaosWorkers = flag.Int("chaos-workers", 4, "concurrent clients of the chaos workload")
	chaosSeed    = flag.Uint64("chaos-seed", 0, "seed of the chaos run (0: from the clock); printed, to replay a run")
	chaosS3      = flag.Bool("chaos-s3", false, "run the chaos on a second daemon whose blob store is S3 (a versitygw of the run, -versitygw): S3 outages are faults too and the workload archives and restores")
)

// runChaos runs *chaosRounds faults against s (or, with -chaos-s3, a
// second daemon on S3) and prints what it found.
func runChaos(s *sbxSystem) error {
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	cfg := chaos.Config{
		Client: s.client, Rounds: *chaosRounds, Workers: *chaosWorkers, Seed: seed,
		Scope:       census.Scope{DataDir: s.dataDir, Bridge: benchNet.bridge, Subnet: benchNet.subnet},
		KillDaemon:  s.kill9,
		StartDaemon: s.restart,
		Logf:        log.Printf,
	}
	if *chaosS3 {
		if *versitygwBin == "" {
			return fmt.Errorf("-chaos-s3 needs -versitygw or SBX_VERSITYGW (scripts/build-versitygw.sh)")
		}
		work := filepath.Dir(s.dataDir)
		gw, err := startVersitygw(filepath.Join(work, "versitygw")) // storage.go
		if err != nil {
			return err
		}
		defer gw.stop()
		// The second daemon reads its S3 settings from the environment
		// while it starts, and again at each restart.
		for k, v := range gw.env() {
			os.Setenv(k, v)
		}
		second, err := openSecondSbx(&Env{Work: work}, s.cmd.Path, "sbx (S3)", "sbx-s3")
		if err != nil {
			return err
		}
		defer second.Close()
		cfg.Client, cfg.KillDaemon, cfg.StartDaemon = second.client, second.kill9, second.restart
		cfg.Scope = census.Scope{DataDir: second.dataDir, Bridge: second.net.bridge, Subnet: second.net.subnet}
		cfg.StopS3 = gw.stop
		cfg.StartS3 = func() {
			if err := gw.restart(); err != nil {
				log.Printf("chaos: restart versitygw: %v", err)
			}
		}
	}
	res := chaos.Run(cfg)
	rec := slices.Clone(res.Recovery)
	fmt.Printf("seed %d, %d workers, %d archive cycles through\n", seed, *chaosWorkers, res.Archived)
	fmt.Println("| faults injected | recovered | operations acknowledged | writes read back | acknowledged writes lost | recovery p50 | recovery max |")
	fmt.Println("|---|---|---|---|---|---|---|")
	fmt.Printf("| %d (daemon %d, agent %d, S3 %d) | %d | %d | %d | %d | %s | %s |\n", len(res.Recovery), res.Faults["daemon"], res.Faults["agent"], res.Faults["s3"],
		res.Recovered, res.Ops, res.Acked, res.Lost, percentile(rec, 50).Round(time.Millisecond), percentile(rec, 100).Round(time.Millisecond))
	if len(res.Problems) > 0 || res.Recovered != *chaosRounds {
		for _, p := range res.Problems {
			log.Print("chaos: ", p)
		}
		return fmt.Errorf("chaos failed: %d of %d faults recovered, %d problems", res.Recovered, *chaosRounds, len(res.Problems))
	}
	return nil
}

// percentile is the p-th percentile of ds (which it sorts): the smallest
// value at or above p% of them.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)*p+99)/100-1]
}

// kill9 kills the daemon with SIGKILL, as a crash would.
func (s *sbxSystem) kill9() error {
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	s.cmd.Wait()
	return nil
}

// restart starts the daemon again with the arguments it had.
func (s *sbxSystem) restart() error {
	logf, err := os.OpenFile(filepath.Join(filepath.Dir(s.dataDir), "sbx-daemon.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.cmd.Path, s.cmd.Args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	listen := s.cmd.Args[slices.Index(s.cmd.Args, "--listen")+1]
	if err := waitHTTP("http://"+listen+"/healthz", nil); err != nil {
		return fmt.Errorf("the restarted daemon does not answer (see %s): %w", logf.Name(), err)
	}
	return nil
}

// restart starts versitygw again on its port and directory (after stop).
func (g *versitygw) restart() error {
	logf, err := os.OpenFile(filepath.Join(filepath.Dir(g.cmd.Args[len(g.cmd.Args)-1]), "versitygw.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(g.cmd.Path, g.cmd.Args[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = g.cmd.Env, logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	g.cmd = cmd
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(g.endpoint + "/") // any answer: it is up (anonymous calls get 403)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("versitygw did not answer again (see %s): %w", logf.Name(), err)
		}
	}
}
