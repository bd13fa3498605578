package sdk

import (
	"encoding/json"
	"time"
)

// State is where a sandbox is in its life.
type State string

const (
	StateCreating State = "creating"
	StateStarting State = "starting"
	StateStarted  State = "started"
	StateStopping State = "stopping"
	StateStopped  State = "stopped"
	StateDeleting State = "deleting"
	StateDeleted  State = "deleted"
	StateError    State = "error"

	// Pause and resume (class gvisor: memory saved to disk; container: frozen).
	StatePausing  State = "pausing"
	StatePaused   State = "paused"
	StateResuming State = "resuming"
)

// Sandbox is the durable identity of an isolated environment.
type Sandbox struct {
	ID        string            `json:"id"`
	Name      string            `json:"name,omitempty"`
	Team      string            `json:"team,omitempty"` // owner (teams.go)
	State     State             `json:"state"`
	Reason    string            `json:"reason,omitempty"` // why it entered State: "user", "crash", "reconcile", …
	Error     string            `json:"error,omitempty"`  // set in state "error"
	Image     string            `json:"image"`
	Env       map[string]string `json:"env,omitempty"`
	Labels    map[string]string `json:"labels"`
	CPU       float64           `json:"cpu"`
	MemoryMiB int               `json:"memoryMiB"`
	PidsLimit int               `json:"pidsLimit"`
	DiskMiB   int               `json:"diskMiB"` // size of its own filesystem; 0: shares the host's
	Workdir   string            `json:"workdir"`
	Class     string            `json:"class"`              // "container" or "gvisor"
	Parent    string            `json:"parent,omitempty"`   // the sandbox this one was forked from
	Snapshot  string            `json:"snapshot,omitempty"` // the snapshot it was created from
	CreatedAt time.Time         `json:"createdAt"`
	StartedAt *time.Time        `json:"startedAt,omitempty"`
	StoppedAt *time.Time        `json:"stoppedAt,omitempty"`

	// Lifecycle policy and deadlines (durations in seconds; see lifecycle.go).
	AutoStopSeconds    int        `json:"autoStopSeconds"`    // idle time before a stop; 0: never
	AutoPauseSeconds   int        `json:"autoPauseSeconds"`   // idle time before a pause; 0: never
	AutoArchiveSeconds int        `json:"autoArchiveSeconds"` // stopped time before an archive
	AutoDeleteSeconds  int        `json:"autoDeleteSeconds"`  // stopped time before a delete; -1: never
	TTLSeconds         int        `json:"ttlSeconds"`         // delete this long after TTLFrom; 0: none
	TTLFrom            *time.Time `json:"ttlFrom,omitempty"`  // creation, or when the TTL was last set
	Ephemeral          bool       `json:"ephemeral"`          // deleted when it stops
	KeepAlive          bool       `json:"keepAlive"`          // never stopped for being idle
	Entrypoint         []string   `json:"entrypoint,omitempty"`
	RestartPolicy      string     `json:"restartPolicy,omitempty"` // of the entrypoint: never, on-failure, always
	LastActivityAt     *time.Time `json:"lastActivityAt,omitempty"`
	ExpiresAt          *time.Time `json:"expiresAt,omitempty"`     // the next deadline
	ExpiresAction      string     `json:"expiresAction,omitempty"` // what happens then: stop, archive, delete

	// Network is "bridge" or "none"; Egress is the policy of a bridge
	// sandbox (see network.go).
	Network string        `json:"network,omitempty"`
	Egress  *EgressPolicy `json:"egress,omitempty"`
	// Volumes are the named volumes mounted into it (see storage.go).
	Volumes []VolumeMount `json:"volumes,omitempty"`
	// Buckets are its bucket mounts, without their keys.
	Buckets []BucketMount `json:"buckets,omitempty"`
}

// CreateSandboxRequest is the body of POST /v1/sandboxes and PUT /v1/sandboxes/{name}.
// Zero values take the daemon's defaults.
type CreateSandboxRequest struct {
	Name      string            `json:"name,omitempty"`
	Image     string            `json:"image,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	CPU       float64           `json:"cpu,omitempty"`
	MemoryMiB int               `json:"memoryMiB,omitempty"`
	PidsLimit int               `json:"pidsLimit,omitempty"`
	DiskMiB   int               `json:"diskMiB,omitempty"` // writes beyond this fail with ENOSPC; 0: no limit
	Workdir   string            `json:"workdir,omitempty"`
	// Class is how it is isolated: "container" (runc, the default) or
	// "gvisor" (runsc; adds pause with memory, memory snapshots, fork with memory).
	Class string `json:"class,omitempty"`
	// Snapshot starts it from a snapshot's filesystem (and memory, if saved)
	// instead of an image; Image and Class must then be empty or match.
	Snapshot string `json:"snapshot,omitempty"`

	// Lifecycle policy; nil takes the default (see lifecycle.go).
	AutoStopSeconds    *int     `json:"autoStopSeconds,omitempty"`    // default 900 (gvisor: 0); 0: never
	AutoPauseSeconds   *int     `json:"autoPauseSeconds,omitempty"`   // default 0 (gvisor: 3600); exclusive with autoStopSeconds
	AutoArchiveSeconds *int     `json:"autoArchiveSeconds,omitempty"` // default 604800; 0: the maximum, 30 days
	AutoDeleteSeconds  *int     `json:"autoDeleteSeconds,omitempty"`  // default -1: never; 0: when it stops
	TTLSeconds         int      `json:"ttlSeconds,omitempty"`         // delete this long after creation; 0: none
	Ephemeral          bool     `json:"ephemeral,omitempty"`          // same as autoDeleteSeconds 0
	KeepAlive          bool     `json:"keepAlive,omitempty"`          // never stopped for being idle
	Entrypoint         []string `json:"entrypoint,omitempty"`         // main process, supervised by the agent
	RestartPolicy      string   `json:"restartPolicy,omitempty"`      // never (default), on-failure, always
	// IgnoreImageEntrypoint starts no main process from the image: an image
	// sbx built with ENTRYPOINT/CMD otherwise runs them when Entrypoint is empty.
	IgnoreImageEntrypoint bool `json:"ignoreImageEntrypoint,omitempty"`

	// Network is "bridge" (the default: own namespace, NAT, DNS) or "none"
	// (loopback only). Egress limits what a bridge sandbox may connect to;
	// nil allows everything.
	Network string        `json:"network,omitempty"`
	Egress  *EgressPolicy `json:"egress,omitempty"`
	// Volumes mounts named volumes (sbx volume create) at paths inside.
	Volumes []VolumeMount `json:"volumes,omitempty"`
	// Buckets mounts S3 buckets at paths inside (s3fs on the host).
	Buckets []BucketMount `json:"buckets,omitempty"`
	// Pool takes an instance from the team's warm pool of that name; the
	// pool's template fills the fields left out. Without it a create still
	// takes from any pool whose template its spec matches (see sdk/pool.go).
	Pool string `json:"pool,omitempty"`
}

// ExecRequest runs one command. Exactly one of Cmd and Shell is set; Shell runs
// under /bin/sh -c.
type ExecRequest struct {
	Cmd            []string          `json:"cmd,omitempty"`
	Shell          string            `json:"shell,omitempty"`
	Cwd            string            `json:"cwd,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Stdin          string            `json:"stdin,omitempty"`
	TimeoutSeconds float64           `json:"timeoutSeconds,omitempty"`
	// User runs the command as this account of the sandbox's /etc/passwd
	// (a name, or uid[:gid]), with its groups and HOME; default root.
	User string `json:"user,omitempty"`
}

// ExecResult is the outcome of a finished command.
type ExecResult struct {
	ExitCode   int    `json:"exitCode"`
	Signal     string `json:"signal,omitempty"` // e.g. "SIGKILL" when killed by a signal
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Truncated  bool   `json:"truncated"` // output beyond the limit was dropped
	DurationMs int64  `json:"durationMs"`
	TimedOut   bool   `json:"timedOut"`
}

// ExecEvent is one line of a streamed exec (NDJSON, one JSON object per line).
// Type is "start", "stdout", "stderr", "exit", "heartbeat" or "error".
type ExecEvent struct {
	Type       string     `json:"type"`
	Seq        int64      `json:"seq,omitempty"`
	Pid        int        `json:"pid,omitempty"`
	Data       []byte     `json:"data,omitempty"` // base64 in JSON
	ExitCode   int        `json:"exitCode,omitempty"`
	Signal     string     `json:"signal,omitempty"`
	TimedOut   bool       `json:"timedOut,omitempty"`
	DurationMs int64      `json:"durationMs,omitempty"`
	Error      *ErrorBody `json:"error,omitempty"`
}

// execWire is ExecEvent without its MarshalJSON: plain encoding by the tags.
type execWire ExecEvent

// execExit is an "exit" ExecEvent as sent: exitCode, timedOut and
// durationMs are always there, since 0 and false are answers in it (a
// JavaScript or Python client must not read undefined for exit code 0).
type execExit struct {
	execWire
	ExitCode   int   `json:"exitCode"`
	TimedOut   bool  `json:"timedOut"`
	DurationMs int64 `json:"durationMs"`
}

func newExecExit(e ExecEvent) execExit {
	return execExit{execWire(e), e.ExitCode, e.TimedOut, e.DurationMs}
}

// MarshalJSON leaves the result fields out of events other than "exit",
// where they mean nothing, and always writes them in "exit".
func (e ExecEvent) MarshalJSON() ([]byte, error) {
	if e.Type != "exit" {
		return json.Marshal(execWire(e))
	}
	return json.Marshal(newExecExit(e))
}

// FileInfo describes one file inside a sandbox.
type FileInfo struct {
	Name    string    `json:"name"`
	Path    string    `json:"path"`
	Type    string    `json:"type"` // "file", "dir", "symlink", "other"
	Size    int64     `json:"size"`
	Mode    string    `json:"mode"` // octal permission bits, e.g. "0644"
	ModTime time.Time `json:"modTime"`
	Target  string    `json:"target,omitempty"` // symlink target
	// Owner and Group are the file's user and group: their names in the
	// sandbox's /etc/passwd and /etc/group, else the numbers.
	Owner string `json:"owner,omitempty"`
	Group string `json:"group,omitempty"`
}

// MkdirRequest is the body of POST …/files/mkdir.
type MkdirRequest struct {
	Path    string `json:"path"`
	Mode    string `json:"mode,omitempty"` // octal, default "0755"
	Parents bool   `json:"parents,omitempty"`
}

// MoveRequest is the body of POST …/files/move.
type MoveRequest struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Overwrite bool   `json:"overwrite,omitempty"`
}

// Image is a set of read-only layers sandboxes start from.
type Image struct {
	Name      string    `json:"name"`
	ID        string    `json:"id"` // content digest
	Layers    int       `json:"layers"`
	SizeBytes int64     `json:"sizeBytes"`
	Source    string    `json:"source"` // "base", "import", "pull:<ref>", "build"
	CreatedAt time.Time `json:"createdAt"`
	Team      string    `json:"team,omitempty"` // owner; team default's images are shared
	// Config is what sandboxes from the image start with (absent when empty).
	Config *ImageConfig `json:"config,omitempty"`
}

// ImageConfig is an image's configuration: env and working directory are a
// new sandbox's defaults; user, entrypoint, cmd and labels are recorded.
type ImageConfig struct {
	Env        []string          `json:"env,omitempty"` // KEY=VALUE
	Entrypoint []string          `json:"entrypoint,omitempty"`
	Cmd        []string          `json:"cmd,omitempty"`
	WorkingDir string            `json:"workingDir,omitempty"`
	User       string            `json:"user,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
}

// PullRequest is the body of POST /v1/images/pull.
type PullRequest struct {
	Ref  string `json:"ref"`
	Name string `json:"name,omitempty"` // defaults to the ref
}

// ErrorBody is the body of every error response: {"error": {...}}.
type ErrorBody struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"` // INSTANCE_LOST: why the instance ended (idle, user, delete, main-exit, oom, crash, …) if known
}

// ErrorResponse wraps ErrorBody.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// SandboxStats is what a sandbox uses now (GET /v1/sandboxes/{id}/stats).
// A sandbox without a running instance reads as zeros, with its state.
// Sizes are bytes; a limit of 0 means none.
type SandboxStats struct {
	ID               string    `json:"id"`
	Name             string    `json:"name,omitempty"`
	State            State     `json:"state"`
	Time             time.Time `json:"time"`                 // when it was read
	CPUNanos         uint64    `json:"cpuNanos"`             // CPU time used by the current instance
	CPUPercent       *float64  `json:"cpuPercent,omitempty"` // since the previous read (100 = one core); absent on the first
	MemoryBytes      uint64    `json:"memoryBytes"`          // without reclaimable file cache
	MemoryLimitBytes uint64    `json:"memoryLimitBytes"`
	Pids             uint64    `json:"pids"`
	PidsLimit        uint64    `json:"pidsLimit"`
	DiskBytes        uint64    `json:"diskBytes"`      // its own writes: the upper dir, or the disk image with diskMiB
	DiskLimitBytes   uint64    `json:"diskLimitBytes"` // diskMiB in bytes; 0: shares the host's disk
	NetRxBytes       uint64    `json:"netRxBytes"`     // received by the sandbox (bridge network)
	NetTxBytes       uint64    `json:"netTxBytes"`
}
