// Package runtime runs instances: OCI containers made by runc (class
// "container"), and later runsc (class "gvisor").
//
// The runtime is the truth for what runs (DESIGN invariant 1). It knows nothing
// of the store; the sandbox Manager decides, the runtime does.
package runtime

import (
	"context"
	"syscall"
)

// Instance describes one container to start. All paths are host paths.
type Instance struct {
	ID          string // container id; sbx uses the sandbox id
	BundleDir   string // directory for config.json; created if missing
	RootfsDir   string // the already-mounted root filesystem
	AgentBinary string // the sbx binary, bind-mounted read-only at AgentPath
	RunDir      string // host directory bind-mounted at RunPath (agent socket)
	LogPath     string // file that receives the agent's stdout and stderr
	Hostname    string
	Env         []string // KEY=VALUE for the agent, inherited by every process
	Workdir     string   // working directory inside, e.g. /workspace
	CPU         float64  // cores; 0 means no limit
	MemoryMiB   int      // 0 means no limit
	PidsLimit   int      // 0 means no limit
	// NetNSPath is a network namespace (a pinned nsfs file) to join; ""
	// gives the instance a fresh one with loopback only. The network
	// package makes it; runsc joins it too and runs its netstack inside.
	NetNSPath string
	// ResolvConf is a host file bind-mounted at /etc/resolv.conf; "" for none.
	ResolvConf string
}

// Paths inside every instance.
const (
	AgentPath = "/.sbx/sbx"  // the agent binary
	RunPath   = "/.sbx/run"  // the agent's socket directory
	AgentSock = "agent.sock" // socket file name inside RunPath / RunDir
)

// Status is what the runtime knows of one container.
type Status struct {
	ID      string
	Running bool // false when created or stopped but not yet deleted
	Pid     int  // host pid of the init process (the agent); 0 when not running
}

// Runtime starts and stops containers.
type Runtime interface {
	// Start creates and starts the container with the agent as PID 1 and
	// returns its host pid. On error nothing of the container is left behind.
	Start(ctx context.Context, inst *Instance) (Status, error)
	// State reports the container; errdefs NotFound if the runtime has none.
	State(ctx context.Context, id string) (Status, error)
	// Kill sends sig to every process of the container.
	Kill(ctx context.Context, id string, sig syscall.Signal) error
	// Delete kills what is left and removes the container's runtime state and
	// cgroups. Deleting a missing container is not an error.
	Delete(ctx context.Context, id string) error
	// List returns the ids of all containers the runtime holds.
	List(ctx context.Context) ([]string, error)
}
