// Package runtime runs instances: OCI containers made by runc (class
// "container") and by runsc (class "gvisor").
//
// The runtime is the truth for what runs (docs/architecture.md, invariant 1). It knows nothing
// of the store; the sandbox Manager decides, the runtime does.
package runtime

import (
	"context"
	"syscall"

	"github.com/sbxhq/sbx/internal/agentapi"
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
	// CABundle is a host PEM file bind-mounted read-only at each of
	// CABundlePaths (the trust store); "" leaves the image's.
	CABundle string
	// Volumes are host directories bind-mounted inside (named volumes).
	Volumes []VolumeMount
}

// VolumeMount bind-mounts host directory Source at Destination. In a user
// namespace the instance sees it through an idmapped mount (userns.go), so
// ids on disk are the instance's own.
type VolumeMount struct {
	Source, Destination string
	ReadOnly            bool
	// NoIdmap binds Source as it is: a FUSE mount (bucket mounts) cannot be
	// idmapped, and serves every id itself.
	NoIdmap bool
}

// CABundlePaths are where an instance's trust store is mounted: the file
// Debian, Ubuntu and Alpine read, and a path of sbx's own that the
// instance's environment names (SSL_CERT_FILE and the like).
var CABundlePaths = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/sbx/ca-certificates.crt"}

// Paths inside every instance.
const (
	AgentPath = "/.sbx/sbx" // the agent binary
	// The agent's side of these is the daemon–agent contract.
	RunPath     = agentapi.RunPath     // the agent's socket directory
	AgentSock   = agentapi.AgentSock   // socket file name inside RunPath / RunDir
	AgentOutput = agentapi.AgentOutput // the agent's stdout and stderr, in RunDir
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

// Checkpointer saves a running instance's processes and memory to disk and
// starts instances from such an image (class "gvisor").
//
// The agent must have closed its socket before Checkpoint: gVisor cannot save
// a socket bound on the host (see agentapi.Client.Suspend), and a failed
// checkpoint ends the instance all the same. A restored agent listens again
// once it is woken (agentapi.Wake, or SIGUSR1 through SignalInit).
type Checkpointer interface {
	// Checkpoint writes the instance id to dir (replacing what is there)
	// and ends it: its processes stop at once and leave the host shortly
	// after; its runtime state stays until Delete. On error the instance
	// is ended too and dir holds no image.
	Checkpoint(ctx context.Context, id, dir string) error
	// Restore starts inst from the image in dir, with inst's bundle, rootfs
	// and run directory, which may differ from the checkpointed instance's
	// (a fork). The image is only read; it can be restored many times.
	Restore(ctx context.Context, inst *Instance, dir string) (Status, error)
	// SignalInit sends sig to the instance's init process (the agent) alone.
	SignalInit(ctx context.Context, id string, sig syscall.Signal) error
	// DropsConnections reports whether a checkpoint of an instance with
	// open TCP connections on its network succeeds, dropping them. If not,
	// such a checkpoint fails and ends the instance: callers must make sure
	// there are none first.
	DropsConnections() bool
}

// Freezer stops every process of a running instance where it is and lets it
// go on later. The instance keeps its memory and host processes meanwhile.
type Freezer interface {
	Pause(ctx context.Context, id string) error
	// Resume thaws the instance; resuming one that is not paused is not an
	// error.
	Resume(ctx context.Context, id string) error
	// Paused reports whether the instance is frozen; errdefs NotFound if
	// there is none.
	Paused(ctx context.Context, id string) (bool, error)
}
