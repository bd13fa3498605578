// Package chaos runs a mixed workload on one sbx daemon and, at seeded
// random points during it, kills the daemon (kill -9) or a sandbox's agent,
// or stops the S3 server of its blob store for a while.
// After each fault it checks that the daemon recovers every sandbox to a
// state consistent with what it acknowledged, and that every acknowledged
// write reads back with the same bytes; at the end, that the host holds
// nothing more of the daemon than before (internal/census).
//
// bench/chaos.go (`go run ./bench -chaos N`) and integration/chaos_test.go
// drive it; each supplies how to kill and start its daemon.
package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/census"
	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// Config is one chaos run.
type Config struct {
	Client  *sdk.Client // of the daemon; it keeps its address and token across restarts
	Rounds  int         // faults to inject
	Workers int         // concurrent clients of the workload
	Seed    uint64      // of the fault kinds, their timing and the workload's choices
	Scope   census.Scope
	// KillDaemon kills the daemon with SIGKILL and returns once it has
	// exited; StartDaemon starts it again and returns once it answers.
	KillDaemon  func() error
	StartDaemon func() error
	// StopS3 and StartS3, when set, stop and start the S3 server of the
	// daemon's blob store: an S3 outage is then a fault too, and the
	// workload also archives sandboxes and starts them again from S3.
	StopS3, StartS3 func()
	Logf            func(format string, args ...any)
}

// Result is what a run injected and found.
type Result struct {
	Faults    map[string]int  // injected, by kind: "daemon", "agent", "s3"
	Recovered int             // faults after which every check held
	Recovery  []time.Duration // from each fault to a checked, working daemon and sandbox
	Ops       int             // workload operations acknowledged
	Archived  int             // archive cycles acknowledged through the restore and read back
	Acked     int             // acknowledged writes (files) checked
	Lost      int             // acknowledged writes that did not read back
	Problems  []string        // every failed check, lost writes included
	IDs       []string        // every sandbox id the run saw, for leak checks
}

type write struct {
	box, path string
	data      []byte
}

// run is the state of one Run.
type run struct {
	cfg  Config
	ctx  context.Context
	gate sync.RWMutex // ops hold it for reading; a fault's recovery for writing

	mu       sync.Mutex
	writes   []write
	checked  int             // writes[:checked] have been read back
	boxes    map[string]bool // acknowledged creates: id → acknowledged deleted
	kept     map[string]bool // the workers' sandboxes, kept for the run
	seen     map[string]bool
	ops      int
	archived int
	problems []string
}

func (r *run) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.cfg.Logf("chaos: PROBLEM: %s", msg)
	r.mu.Lock()
	r.problems = append(r.problems, msg)
	r.mu.Unlock()
}

// Run runs cfg: Workers clients, each with a sandbox kept for the run into
// which it uploads files and writes files with exec, and which it besides
// creates and deletes sandboxes of its own; Rounds faults, one at a time at
// a random point; then the check that every acknowledged file reads back,
// the deletion of every sandbox, and a census.
func Run(cfg Config) *Result {
	r := &run{cfg: cfg, ctx: context.Background(), boxes: map[string]bool{}, kept: map[string]bool{}, seen: map[string]bool{}}
	res := &Result{Faults: map[string]int{}}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	c := cfg.Client
	cfg.Logf("chaos: seed %d, %d rounds, %d workers", cfg.Seed, cfg.Rounds, cfg.Workers)

	scope := cfg.Scope
	scope.Sandbox = func(id string) bool { r.mu.Lock(); defer r.mu.Unlock(); return r.seen[id] }
	// A first sandbox made and deleted, so the baseline holds what the
	// first create makes once (the base image's layers, say).
	if sb, err := c.CreateSandbox(r.ctx, wire.CreateSandboxRequest{}); err != nil {
		r.problem("warm-up create: %v", err)
	} else {
		r.saw(sb.ID)
		if err := c.DeleteSandbox(r.ctx, sb.ID, true); err != nil {
			r.problem("warm-up delete: %v", err)
		}
	}
	base := hostCensus(scope)

	keep := make([]string, cfg.Workers)
	for w := range keep {
		sb, err := c.CreateSandbox(r.ctx, wire.CreateSandboxRequest{Name: fmt.Sprintf("chaos-keep-%d", w)})
		if err != nil {
			r.problem("create kept sandbox %d: %v", w, err)
			return r.result(res)
		}
		r.saw(sb.ID)
		r.boxes[sb.ID], r.kept[sb.ID] = false, true
		keep[w] = sb.ID
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range cfg.Workers {
		wrng := rand.New(rand.NewPCG(cfg.Seed, uint64(w)+1))
		wg.Go(func() { r.work(w, keep[w], wrng, stop) })
	}
	for round := range cfg.Rounds {
		// Let the workload run a while, so the fault lands mid-operation.
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		kinds := []string{"daemon", "agent"}
		if cfg.StopS3 != nil {
			kinds = append(kinds, "s3")
		}
		kind := kinds[rng.IntN(len(kinds))]
		res.Faults[kind]++
		began := time.Now()
		var ok bool
		switch kind {
		case "daemon":
			down := time.Duration(rng.IntN(1000)) * time.Millisecond
			cfg.Logf("chaos: round %d: kill -9 the daemon (down for %s)", round, down)
			ok = r.daemonFault(down)
		case "agent":
			id := keep[rng.IntN(len(keep))]
			cfg.Logf("chaos: round %d: kill -9 the agent of %s", round, id)
			ok = r.agentFault(id)
		case "s3":
			down := time.Duration(500+rng.IntN(2500)) * time.Millisecond
			cfg.Logf("chaos: round %d: S3 down for %s", round, down)
			ok = r.s3Fault(down)
		}
		res.Recovery = append(res.Recovery, time.Since(began))
		if ok {
			res.Recovered++
		}
		cfg.Logf("chaos: round %d: %s fault, recovered=%v in %s", round, kind, ok, time.Since(began).Round(time.Millisecond))
	}
	close(stop)
	wg.Wait()

	r.gate.Lock()
	r.checkWrites()
	r.gate.Unlock()
	// Every sandbox goes, acknowledged or not, then nothing may be left.
	if list, err := c.ListSandboxes(r.ctx, sdk.ListOptions{}); err != nil {
		r.problem("list at the end: %v", err)
	} else {
		for _, sb := range list {
			r.saw(sb.ID)
			if err := c.DeleteSandbox(r.ctx, sb.ID, true); err != nil {
				r.problem("delete %s at the end: %v", sb.ID, err)
			}
		}
	}
	for _, ch := range census.Grown(census.Diff(base, hostCensus(scope))) {
		r.problem("left on the host: %s", ch)
	}
	return r.result(res)
}

func (r *run) result(res *Result) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res.Ops, res.Archived, res.Acked, res.Problems = r.ops, r.archived, r.checked, r.problems
	for id := range r.seen {
		res.IDs = append(res.IDs, id)
	}
	slices.Sort(res.IDs)
	for _, p := range r.problems {
		if strings.HasPrefix(p, lostPrefix) {
			res.Lost++
		}
	}
	return res
}

func (r *run) saw(id string) {
	r.mu.Lock()
	r.seen[id] = true
	r.mu.Unlock()
}

// work is one worker: until stop, one operation at a time, each under the
// gate's read lock, so a fault's recovery sees no operation begin meanwhile.
func (r *run) work(w int, keep string, rng *rand.Rand, stop chan struct{}) {
	c := r.cfg.Client
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		r.gate.RLock()
		path := fmt.Sprintf("/workspace/w%d-%d", w, i) // each write a path of its own
		data := make([]byte, 1+rng.IntN(64<<10))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		ops := 4
		if r.cfg.StopS3 != nil {
			ops = 5 // and archive cycles
		}
		var err error
		switch op := rng.IntN(ops); op {
		case 0, 1:
			if _, err = c.Upload(r.ctx, keep, path, bytes.NewReader(data), 0o644); err == nil {
				r.wrote(write{keep, path, data})
			}
		case 2:
			text := fmt.Appendf(nil, "exec %d/%d %x", w, i, data[:min(len(data), 32)])
			var res *wire.ExecResult
			if res, err = c.Exec(r.ctx, keep, wire.ExecRequest{Cmd: []string{"sh", "-c", `printf %s "$1" > "$2"`, "sh", string(text), path}}); err == nil && res.ExitCode == 0 {
				r.wrote(write{keep, path, text})
			}
		case 3:
			err = r.createDelete()
		case 4:
			err = r.archiveCycle(data)
		}
		r.gate.RUnlock()
		if err != nil {
			time.Sleep(50 * time.Millisecond) // a fault is under way: do not spin
		}
	}
}

func (r *run) wrote(wr write) {
	r.mu.Lock()
	r.writes = append(r.writes, wr)
	r.ops++
	r.mu.Unlock()
}

// createDelete makes a sandbox, runs a command in it and deletes it,
// recording each acknowledgement.
func (r *run) createDelete() error {
	c := r.cfg.Client
	sb, err := c.CreateSandbox(r.ctx, wire.CreateSandboxRequest{})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.seen[sb.ID], r.boxes[sb.ID] = true, false
	r.ops++
	r.mu.Unlock()
	if _, err := c.Exec(r.ctx, sb.ID, wire.ExecRequest{Cmd: []string{"true"}}); err != nil {
		return err
	}
	return r.remove(sb.ID)
}

// archiveCycle makes a sandbox, uploads data into it, stops it, archives
// it to S3, starts it again (a restore) and reads data back, then deletes
// it. Where a step is not acknowledged, the sandbox stays and the upload
// joins the writes checked after the fault (checkWrites starts it).
func (r *run) archiveCycle(data []byte) error {
	c := r.cfg.Client
	sb, err := c.CreateSandbox(r.ctx, wire.CreateSandboxRequest{})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.seen[sb.ID], r.boxes[sb.ID] = true, false
	r.ops++
	r.mu.Unlock()
	const path = "/workspace/archived"
	if _, err := c.Upload(r.ctx, sb.ID, path, bytes.NewReader(data), 0o644); err != nil {
		return err
	}
	r.mu.Lock()
	r.ops++
	r.mu.Unlock()
	pending := func(err error) error { r.wrote(write{sb.ID, path, data}); return err }
	if _, err := c.StopSandbox(r.ctx, sb.ID, sdk.StopOptions{}); err != nil {
		return pending(err)
	}
	if _, err := c.ArchiveSandbox(r.ctx, sb.ID); err != nil {
		return pending(err)
	}
	if _, err := c.StartSandbox(r.ctx, sb.ID); err != nil {
		return pending(err)
	}
	if err := ReadBack(c, sb.ID, path, data); err != nil {
		r.problem("%s%s of %s after its archive and restore: %v", lostPrefix, path, sb.ID, err)
		return err
	}
	r.mu.Lock()
	r.archived++
	r.mu.Unlock()
	return r.remove(sb.ID)
}

// remove deletes a sandbox the run made. Not acknowledged, it may be gone
// or not: it is no longer checked, and the end deletes it.
func (r *run) remove(id string) error {
	err := r.cfg.Client.DeleteSandbox(r.ctx, id, true)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		delete(r.boxes, id)
		return err
	}
	r.boxes[id] = true
	r.ops++
	return nil
}

// s3Fault stops the S3 server for down while the workload runs on, starts
// it and checks the daemon.
func (r *run) s3Fault(down time.Duration) bool {
	r.cfg.StopS3()
	time.Sleep(down)
	r.cfg.StartS3()
	r.gate.Lock()
	defer r.gate.Unlock()
	return r.checkSandboxes("", 0) && r.checkWrites()
}

// daemonFault kills the daemon, waits for the operations in flight to
// fail, keeps it down for down, starts it and checks it.
func (r *run) daemonFault(down time.Duration) bool {
	if err := r.cfg.KillDaemon(); err != nil {
		r.problem("kill the daemon: %v", err)
		return false
	}
	r.noteDataDir() // what the killed daemon made, acknowledged or not
	r.gate.Lock()
	defer r.gate.Unlock()
	time.Sleep(down)
	if err := r.cfg.StartDaemon(); err != nil {
		r.problem("restart the daemon: %v", err)
		return false
	}
	return r.checkSandboxes("", 0) && r.checkWrites()
}

// agentFault kills the agent (the instance's init) of id from the host;
// the daemon must notice, and a start must bring the sandbox back.
func (r *run) agentFault(id string) bool {
	pid, err := instancePid(r.cfg.Scope.DataDir, id)
	if err != nil {
		r.problem("pid of the agent of %s: %v", id, err)
		return false
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		r.problem("kill the agent of %s: %v", id, err)
		return false
	}
	r.gate.Lock()
	defer r.gate.Unlock()
	return r.checkSandboxes(id, pid) && r.checkWrites()
}

// checkSandboxes checks every sandbox the daemon lists against what it
// acknowledged: every acknowledged create is there and every acknowledged
// delete is not, every sandbox is started or stopped (none stuck between),
// and the kept ones (restarted if crashed is their agent's pid) run a
// command.
func (r *run) checkSandboxes(crashed string, crashedPid int) bool {
	c := r.cfg.Client
	ok := true
	if crashed != "" {
		// The daemon notices the crash on its own; a start brings it back.
		deadline := time.Now().Add(60 * time.Second)
		for {
			sb, err := c.GetSandbox(r.ctx, crashed)
			if err == nil && sb.State == wire.StateStopped {
				if sb.Reason != "crash" {
					r.problem("%s stopped with reason %q after its agent was killed, want crash", crashed, sb.Reason)
					ok = false
				}
				if _, err := c.StartSandbox(r.ctx, crashed); err != nil {
					r.problem("start %s after its agent was killed: %v", crashed, err)
					return false
				}
				break
			}
			if pid, _ := instancePid(r.cfg.Scope.DataDir, crashed); err == nil && sb.State == wire.StateStarted && pid != 0 && pid != crashedPid {
				break // already started again
			}
			if time.Now().After(deadline) {
				r.problem("the daemon did not notice within 60s that the agent of %s was killed: %+v, %v", crashed, sb, err)
				return false
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	list, err := c.ListSandboxes(r.ctx, sdk.ListOptions{})
	if err != nil {
		r.problem("list after the fault: %v", err)
		return false
	}
	r.mu.Lock()
	boxes, kept := maps.Clone(r.boxes), maps.Clone(r.kept)
	r.mu.Unlock()
	listed := map[string]wire.Sandbox{}
	for _, sb := range list {
		r.saw(sb.ID)
		listed[sb.ID] = sb
		if sb.State != wire.StateStarted && sb.State != wire.StateStopped && sb.State != wire.StateArchived {
			r.problem("%s is %s (%s: %s) after the fault", sb.ID, sb.State, sb.Reason, sb.Error)
			ok = false
		}
	}
	for id, deleted := range boxes {
		sb, there := listed[id]
		switch {
		case deleted && there:
			r.problem("acknowledged delete of %s: it is back (%s)", id, sb.State)
			ok = false
		case !deleted && !there:
			r.problem("acknowledged create of %s: it is gone", id)
			ok = false
		case kept[id] && sb.State != wire.StateStarted:
			r.problem("kept sandbox %s is %s (%s) after the fault", id, sb.State, sb.Reason)
			ok = false
		case !deleted && sb.State == wire.StateStarted:
			if res, err := c.Exec(r.ctx, id, wire.ExecRequest{Cmd: []string{"true"}}); err != nil || res.ExitCode != 0 {
				r.problem("%s is started but exec fails: %+v, %v", id, res, err)
				ok = false
			}
		}
	}
	return ok
}

// lostPrefix starts the problem of an acknowledged write that did not
// read back.
const lostPrefix = "acknowledged write lost: "

// checkWrites reads back the writes acknowledged since the last check.
func (r *run) checkWrites() bool {
	r.mu.Lock()
	todo := r.writes[r.checked:]
	r.checked = len(r.writes)
	r.mu.Unlock()
	ok := true
	for _, wr := range todo {
		// An archive cycle's sandbox may be left stopped or archived.
		if sb, err := r.cfg.Client.GetSandbox(r.ctx, wr.box); err == nil && sb.State != wire.StateStarted {
			if _, err := r.cfg.Client.StartSandbox(r.ctx, wr.box); err != nil {
				r.problem("%s%s of %s: start the %s sandbox: %v", lostPrefix, wr.path, wr.box, sb.State, err)
				ok = false
				continue
			}
		}
		if err := ReadBack(r.cfg.Client, wr.box, wr.path, wr.data); err != nil {
			r.problem("%s%s of %s: %v", lostPrefix, wr.path, wr.box, err)
			ok = false
		}
	}
	return ok
}

// noteDataDir adds every sandbox the data dir holds to the ones seen, so
// the census covers those whose create was never acknowledged.
func (r *run) noteDataDir() {
	for _, dir := range []string{"sandboxes", "runc"} {
		entries, _ := os.ReadDir(filepath.Join(r.cfg.Scope.DataDir, dir))
		for _, e := range entries {
			if e.IsDir() {
				r.saw(e.Name())
			}
		}
	}
}

// instancePid is the pid of the init (the agent) of sandbox id's runc
// instance under dataDir.
func instancePid(dataDir, id string) (int, error) {
	out, err := exec.Command("runc", "--root", filepath.Join(dataDir, "runc"), "state", id).Output()
	if err != nil {
		return 0, fmt.Errorf("runc state %s: %w", id, err)
	}
	var st struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal(out, &st); err != nil || st.Pid <= 0 {
		return 0, fmt.Errorf("runc state %s: no pid in %s", id, out)
	}
	return st.Pid, nil
}

// hostCensus is the Host part of a census of scope without the daemon's
// own process, which a restart gives a new pid.
func hostCensus(scope census.Scope) *census.Census {
	c := census.Take(scope).Host()
	self := strconv.Itoa(census.DaemonPID(scope.DataDir)) + " "
	c.Processes = slices.DeleteFunc(c.Processes, func(p string) bool { return strings.HasPrefix(p, self) })
	return c
}

// ReadBack downloads path of sandbox id and compares it with want.
func ReadBack(c *sdk.Client, id, path string, want []byte) error {
	rc, err := c.Download(context.Background(), id, path)
	if err != nil {
		return err
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s read back %d bytes that differ from the %d written", path, len(got), len(want))
	}
	return nil
}
