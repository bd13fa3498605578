package main

import (
	"errors"
	"io"
	"log"
	"math"
	"sort"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// A System runs sandboxes: sbx itself, or a peer measured against it (raw
// runc, Docker, podman). Every system runs the same root filesystem: the
// unpacked layer of sbx's base image.
//
// To add a peer, write one file with a type implementing System and Box and
// register it in init:
//
//	func init() { registerPeer("mypeer", openMyPeer) }
//
// openMyPeer returns errSkip (wrapped, with the reason) when the peer is not
// installed; the run then goes on without it.
type System interface {
	Name() string
	// Create makes and starts one sandbox whose init idles. It returns once
	// the sandbox exists; the first command is the caller's.
	Create() (Box, error)
	// Close removes everything the system made, daemons it started included.
	Close()
}

// Box is one sandbox of a System.
type Box interface {
	// Exec runs a command to completion; a non-zero exit is an error.
	Exec(args ...string) error
	// Upload copies the host file src to dst inside the sandbox.
	Upload(src, dst string) error
	// Download copies the file src inside the sandbox to w.
	Download(src string, w io.Writer) (int64, error)
	// Delete stops the sandbox and removes it and everything it owns.
	Delete() error
	// Pids returns the host pid of the sandbox's init and those of the
	// processes outside its cgroup that exist for it alone (shims).
	Pids() (init int, shims []int, err error)
}

// daemoned is a System with long-running host processes shared by all its
// sandboxes (sbx serve; dockerd and containerd).
type daemoned interface {
	DaemonPids() []int
}

// Env is what every scenario and system gets.
type Env struct {
	Work      string      // this run's temporary directory
	Rootfs    string      // the sbx base image's unpacked layer
	RootfsTar string      // the same tree as a tar, for importing into peers
	Client    *sdk.Client // the sbx daemon, for sbx-only scenarios
	Quick     bool        // small counts: a smoke run, not figures
}

// n returns full, or quick for a -quick run.
func (e *Env) n(full, quick int) int {
	if e.Quick {
		return quick
	}
	return full
}

// A Scenario measures one thing on every system. Run returns errSkip
// (wrapped) for a system that cannot do it.
//
// To add one, write a file that registers it in init:
//
//	func init() { registerScenario(Scenario{Order: 60, Name: "…", Run: runMine}) }
type Scenario struct {
	Order int // position in the table
	Name  string
	Run   func(env *Env, sys System) ([]result, error)
}

var (
	peers     []peerDef
	scenarios []Scenario
	sbxOnly   []func(env *Env) []result
)

type peerDef struct {
	name string
	open func(env *Env) (System, error)
}

// errSkip marks a system or scenario that does not apply; wrap it with why.
var errSkip = errors.New("skipped")

func registerPeer(name string, open func(env *Env) (System, error)) {
	peers = append(peers, peerDef{name, open})
}

func registerScenario(s Scenario) {
	scenarios = append(scenarios, s)
	sort.SliceStable(scenarios, func(i, j int) bool { return scenarios[i].Order < scenarios[j].Order })
}

// registerSbxOnly adds measurements that have no peer equivalent (code
// contexts, gvisor operations); they run after the shared scenarios.
func registerSbxOnly(f func(env *Env) []result) { sbxOnly = append(sbxOnly, f) }

// namedSbxOnly are sbx-only rows that -scenarios can pick by name too.
var namedSbxOnly = map[string]func(env *Env) []result{}

func registerNamedSbxOnly(name string, f func(env *Env) []result) { namedSbxOnly[name] = f }

// result is one scenario on one system.
type result struct {
	Scenario string  `json:"scenario"`
	System   string  `json:"system"`
	N        int     `json:"n"`
	Unit     string  `json:"unit"`   // "ms", "MiB/s", "MiB"
	Better   string  `json:"better"` // "lower" or "higher"
	P50      float64 `json:"p50"`
	P95      float64 `json:"p95"`
	P99      float64 `json:"p99"`
	Error    string  `json:"error,omitempty"`
}

// measure runs f n times and summarises the durations in ms.
func measure(scenario, system string, n int, f func() error) result {
	var ms []float64
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := f(); err != nil {
			log.Printf("%s on %s: %v", scenario, system, err)
			return result{Scenario: scenario, System: system, Error: err.Error()}
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	return summarize(scenario, system, "ms", ms)
}

// summarize turns samples into a result. Throughputs are better higher.
func summarize(scenario, system, unit string, samples []float64) result {
	r := result{Scenario: scenario, System: system, N: len(samples), Unit: unit, Better: "lower"}
	if unit == "MiB/s" {
		r.Better = "higher"
	}
	if len(samples) == 0 {
		r.Error = "no samples"
		return r
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	// Nearest rank: the smallest sample with at least p of them at or below.
	pct := func(p float64) float64 { return s[int(math.Ceil(p*float64(len(s))))-1] }
	r.P50, r.P95, r.P99 = pct(0.50), pct(0.95), pct(0.99)
	return r
}

func failed(scenario, system string, err error) result {
	return result{Scenario: scenario, System: system, Error: err.Error()}
}
