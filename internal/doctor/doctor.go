// Package doctor checks that a host has what sbx needs, and says how to fix
// each miss. Each check is a small function of a Host (the parts of the
// machine it reads, which tests fake) and a Config (what sbx serve would run
// with).
package doctor

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/image"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/runtime"
)

// Status is a check's verdict.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn" // sbx runs, but something is off or missing for some features
	Fail Status = "fail" // sbx serve fails or sandboxes cannot run
)

// Result is the outcome of one check.
type Result struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Config is what sbx serve would run with.
type Config struct {
	DataDir          string
	StorePath        string // the store's database in DataDir
	Bridge, Subnet   string
	DiskReserveBytes uint64
}

// Host is the machine the checks read. The zero value of a field is not
// usable; start from LocalHost and replace what a test fakes.
type Host struct {
	ProcDir   string // "/proc"
	CgroupDir string // "/sys/fs/cgroup"
	Euid      func() int
	LookPath  func(program string) (string, error)
	// Output runs a program and returns its combined output.
	Output       func(ctx context.Context, path string, args ...string) ([]byte, error)
	Busybox      string
	CheckBusybox func(path string) error
	SubnetFree   func(bridge string, subnet netip.Prefix) error
	Now          func() time.Time
	// ClockSynced reports whether the kernel says the clock is NTP-synced.
	ClockSynced func() (bool, error)
	// BundledRunsc is where sbx's own runsc is installed
	// (runtime.OwnRunsc); "" checks runsc on PATH alone.
	BundledRunsc string
	// Runsc is the runsc sbx serve is told to run (SBX_RUNSC, as serve
	// reads it); it wins over BundledRunsc and PATH.
	Runsc string
}

// LocalHost is this machine.
func LocalHost() Host {
	return Host{
		ProcDir:      "/proc",
		CgroupDir:    "/sys/fs/cgroup",
		Euid:         os.Geteuid,
		LookPath:     exec.LookPath,
		Output:       runOutput,
		Busybox:      image.HostBusybox,
		CheckBusybox: image.CheckBusybox,
		SubnetFree:   network.CheckSubnetFree,
		Now:          time.Now,
		ClockSynced:  clockSynced,
		BundledRunsc: runtime.OwnRunsc(),
		Runsc:        os.Getenv("SBX_RUNSC"),
	}
}

func runOutput(ctx context.Context, path string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, path, args...).CombinedOutput()
}

// clockSynced asks adjtimex: TIME_ERROR means the clock is not synchronized.
func clockSynced() (bool, error) {
	var tx unix.Timex
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return false, err
	}
	return state != unix.TIME_ERROR, nil
}

// A check is one item of the doctor's list.
type check func(ctx context.Context, h Host, cfg Config) Result

// checks run in this order, which is also the output's.
var checks = []check{
	checkRoot,
	checkOverlayfs,
	checkCgroups,
	checkNamespaces,
	checkRunc,
	checkRunsc,
	checkNft,
	checkIP,
	checkMkfs,
	checkBusybox,
	checkIPForward,
	checkSubnet,
	checkDisk,
	checkStore,
	checkClock,
}

// Run makes every check.
func Run(ctx context.Context, h Host, cfg Config) []Result {
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		out = append(out, c(ctx, h, cfg))
	}
	return out
}

// Failed reports whether any result failed.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

func ok(name, detail string) Result { return Result{Check: name, Status: OK, Detail: detail} }

func warn(name, detail, fix string) Result {
	return Result{Check: name, Status: Warn, Detail: detail, Fix: fix}
}

func fail(name, detail, fix string) Result {
	return Result{Check: name, Status: Fail, Detail: detail, Fix: fix}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(s)
}
