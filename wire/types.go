package wire

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
	// The sandbox's id: "sbx-" and 16 base32 characters, fixed for its life.
	ID string `json:"id"`
	// The name it was given at create, unique among the team's sandboxes; usable wherever an id is.
	Name string `json:"name,omitempty"`
	Team string `json:"team,omitempty"` // owner (teams.go)
	// Where the sandbox is in its life (see the State enum and POST /v1/sandboxes/{id}/wait).
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"` // why it entered State: "user", "crash", "reconcile", …
	Error  string `json:"error,omitempty"`  // set in state "error"
	// The image its filesystem was made from.
	Image string `json:"image"`
	// Environment variables of every process started in it (create, then PATCH).
	Env map[string]string `json:"env,omitempty"`
	// Its labels (key=value); GET /v1/sandboxes?label=k=v selects by them.
	Labels map[string]string `json:"labels"`
	// CPU limit in cores (1.5: one and a half cores' time).
	CPU float64 `json:"cpu"`
	// Memory limit in MiB; past it the kernel's OOM killer ends processes.
	MemoryMiB int `json:"memoryMiB"`
	// The most processes and threads that may exist in it at once.
	PidsLimit int `json:"pidsLimit"`
	DiskMiB   int `json:"diskMiB"` // size of its own filesystem; 0: shares the host's
	// The directory commands run in unless they name another.
	Workdir  string `json:"workdir"`
	Class    string `json:"class"`              // "container" or "gvisor"
	Parent   string `json:"parent,omitempty"`   // the sandbox this one was forked from
	Snapshot string `json:"snapshot,omitempty"` // the snapshot it was created from
	// When it was created.
	CreatedAt time.Time `json:"createdAt"`
	// When its current or last instance started.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// When its last instance stopped; absent while one runs.
	StoppedAt *time.Time `json:"stoppedAt,omitempty"`

	// Lifecycle policy and deadlines (durations in seconds; see lifecycle.go).
	AutoStopSeconds    int        `json:"autoStopSeconds"`    // idle time before a stop; 0: never
	AutoPauseSeconds   int        `json:"autoPauseSeconds"`   // idle time before a pause; 0: never
	AutoArchiveSeconds int        `json:"autoArchiveSeconds"` // stopped time before an archive
	AutoDeleteSeconds  int        `json:"autoDeleteSeconds"`  // stopped time before a delete; -1: never
	TTLSeconds         int        `json:"ttlSeconds"`         // delete this long after TTLFrom; 0: none
	TTLFrom            *time.Time `json:"ttlFrom,omitempty"`  // creation, or when the TTL was last set
	Ephemeral          bool       `json:"ephemeral"`          // deleted when it stops
	KeepAlive          bool       `json:"keepAlive"`          // never stopped for being idle
	// The main process (argv), supervised by the agent; its output is GET …/logs.
	Entrypoint    []string `json:"entrypoint,omitempty"`
	RestartPolicy string   `json:"restartPolicy,omitempty"` // of the entrypoint: never, on-failure, always
	// The last request that counted as activity; the idle deadlines count from it.
	LastActivityAt *time.Time `json:"lastActivityAt,omitempty"`
	ExpiresAt      *time.Time `json:"expiresAt,omitempty"`     // the next deadline
	ExpiresAction  string     `json:"expiresAction,omitempty"` // what happens then: stop, archive, delete

	// Network is "bridge" or "none"; Egress is the policy of a bridge
	// sandbox (see network.go).
	Network string `json:"network,omitempty"`
	// The egress policy of a bridge sandbox: what it may connect to outside.
	Egress *EgressPolicy `json:"egress,omitempty"`
	// Volumes are the named volumes mounted into it (see storage.go).
	Volumes []VolumeMount `json:"volumes,omitempty"`
	// Buckets are its bucket mounts, without their keys.
	Buckets []BucketMount `json:"buckets,omitempty"`
	// Recovery is set when the sandbox came back on another host after the
	// host that ran it was lost (cluster mode): what it came back from and
	// what was lost. Absent for a sandbox that never lost its host.
	Recovery *Recovery `json:"recovery,omitempty"`
}

// Recovery records a sandbox's return after the loss of its host (cluster
// mode, docs/kubernetes/lifecycle.md): it was not handed off, so what it
// wrote after its newest checkpoint, and every process, is gone.
type Recovery struct {
	// When the new host brought it back.
	At time.Time `json:"at"`
	// When the files it came back with were saved (its newest checkpoint
	// or archive); changes made after this were lost. Absent when nothing
	// was saved: it came back fresh from its spec.
	SavedAt *time.Time `json:"savedAt,omitempty"`
	// What it came back from: "checkpoint" (a periodic checkpoint),
	// "archive" (an older archive) or "fresh" (nothing: all its files were lost).
	From string `json:"from"`
	// A sentence for people: what was lost.
	Message string `json:"message"`
}

// CreateSandboxRequest is the body of POST /v1/sandboxes and PUT /v1/sandboxes/{name}.
// Zero values take the daemon's defaults.
type CreateSandboxRequest struct {
	// A name unique among the team's sandboxes: 1 to 63 of a-z, 0-9 and '-', starting with a letter or
	// digit, not "sbx-…". Without one, the id only.
	Name string `json:"name,omitempty"`
	// The image to start from (GET /v1/images). Default: "base".
	Image string `json:"image,omitempty"`
	// Environment variables of every process started in it; the image's env is the base.
	Env map[string]string `json:"env,omitempty"`
	// Labels to select it by (at most 64; keys up to 63 of letters, digits, '.', '_', '/', '-').
	Labels map[string]string `json:"labels,omitempty"`
	// CPU limit in cores. By default the daemon's --default-cpu, else 1.
	CPU float64 `json:"cpu,omitempty"`
	// Memory limit in MiB. By default the daemon's --default-memory-mib, else 1024.
	MemoryMiB int `json:"memoryMiB,omitempty"`
	// The most processes and threads at once. By default the daemon's --default-pids, else
	// 1024.
	PidsLimit int `json:"pidsLimit,omitempty"`
	DiskMiB   int `json:"diskMiB,omitempty"` // writes beyond this fail with ENOSPC; 0: no limit
	// The directory commands run in. By default the image's working directory, else
	// the daemon's (/workspace).
	Workdir string `json:"workdir,omitempty"`
	// Class is how it is isolated: "container" (runc, the default) or
	// "gvisor" (runsc; adds pause with memory, memory snapshots, fork with memory).
	// Default: "container".
	Class string `json:"class,omitempty"`
	// Snapshot starts it from a snapshot's filesystem (and memory, if saved)
	// instead of an image; Image and Class must then be empty or match.
	Snapshot string `json:"snapshot,omitempty"`

	// Lifecycle policy; nil takes the default (see lifecycle.go).
	AutoStopSeconds    *int     `json:"autoStopSeconds,omitempty"`    // default 900 (gvisor: 0); 0: never
	AutoPauseSeconds   *int     `json:"autoPauseSeconds,omitempty"`   // default 0 (gvisor: 3600); exclusive with autoStopSeconds
	AutoArchiveSeconds *int     `json:"autoArchiveSeconds,omitempty"` // stopped time before an archive; 0: the maximum, 30 days. Default: 604800.
	AutoDeleteSeconds  *int     `json:"autoDeleteSeconds,omitempty"`  // stopped time before a delete; -1: never; 0: when it stops. Default: -1.
	TTLSeconds         int      `json:"ttlSeconds,omitempty"`         // delete this long after creation; 0: none
	Ephemeral          bool     `json:"ephemeral,omitempty"`          // same as autoDeleteSeconds 0
	KeepAlive          bool     `json:"keepAlive,omitempty"`          // never stopped for being idle
	Entrypoint         []string `json:"entrypoint,omitempty"`         // main process, supervised by the agent
	RestartPolicy      string   `json:"restartPolicy,omitempty"`      // of the entrypoint: never, on-failure or always. Default: "never".
	// IgnoreImageEntrypoint starts no main process from the image: an image
	// sbx built with ENTRYPOINT/CMD otherwise runs them when Entrypoint is empty.
	IgnoreImageEntrypoint bool `json:"ignoreImageEntrypoint,omitempty"`

	// Network is "bridge" (the default: own namespace, NAT, DNS) or "none"
	// (loopback only). Default: "bridge".
	Network string `json:"network,omitempty"`
	// What a bridge sandbox may connect to outside; absent: the daemon's default policy
	// (--default-egress, else allow-all).
	Egress *EgressPolicy `json:"egress,omitempty"`
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
	// The program and its arguments, run without a shell; the program is looked up in PATH.
	Cmd []string `json:"cmd,omitempty"`
	// A command line run with /bin/sh -c.
	Shell string `json:"shell,omitempty"`
	// The working directory; a relative path starts at the sandbox's workdir. By default the workdir.
	Cwd string `json:"cwd,omitempty"`
	// Variables added to (or replacing) the sandbox's environment for this command.
	Env map[string]string `json:"env,omitempty"`
	// Written to the command's standard input, which is then closed.
	Stdin string `json:"stdin,omitempty"`
	// Kill the command's process group after this long (timedOut in the answer); 0: no limit. Default:
	// 0.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	// User runs the command as this account of the sandbox's /etc/passwd
	// (a name, or uid[:gid]), with its groups and HOME. Default: "root".
	User string `json:"user,omitempty"`
}

// ExecResult is the outcome of a finished command.
type ExecResult struct {
	// The command's exit status; 128+N when signal N killed it (signal names it).
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"` // e.g. "SIGKILL" when killed by a signal
	// Standard output as text (at most 16 MiB; see truncated).
	Stdout string `json:"stdout"`
	// Standard error as text (at most 16 MiB; see truncated).
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"` // output beyond the limit was dropped
	// How long the command ran, in milliseconds.
	DurationMs int64 `json:"durationMs"`
	// The command was killed because it ran past timeoutSeconds.
	TimedOut bool `json:"timedOut"`
}

// ExecEvent is one line of a streamed exec (NDJSON, one JSON object per line).
// Type is "start", "stdout", "stderr", "exit", "heartbeat" or "error".
type ExecEvent struct {
	// The kind of event: "start" (pid), "stdout" or "stderr" (data), "exit" (the result fields), "end"
	// (process logs without follow), "heartbeat" (keeps idle connections open) or "error".
	Type string `json:"type"`
	// The event's number in the process's output, from 1; a client that reconnects asks for what comes
	// after the last one it has.
	Seq int64 `json:"seq,omitempty"`
	// The process id inside the sandbox ("start").
	Pid  int    `json:"pid,omitempty"`
	Data []byte `json:"data,omitempty"` // base64 in JSON
	// The exit status ("exit"); 128+N when signal N killed it.
	ExitCode int `json:"exitCode,omitempty"`
	// The signal that killed the process, e.g. "SIGKILL" ("exit").
	Signal string `json:"signal,omitempty"`
	// The process was killed for running past timeoutSeconds ("exit").
	TimedOut bool `json:"timedOut,omitempty"`
	// How long the process ran, in milliseconds ("exit").
	DurationMs int64 `json:"durationMs,omitempty"`
	// What failed ("error"); the stream ends after it.
	Error *ErrorBody `json:"error,omitempty"`
}

// MarshalJSON leaves the result fields out of events other than "exit",
// where they mean nothing, and always writes them in "exit".
func (e ExecEvent) MarshalJSON() ([]byte, error) {
	if e.Type != "exit" {
		return json.Marshal(execWire(e))
	}
	return json.Marshal(newExecExit(e))
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

// FileInfo describes one file inside a sandbox.
type FileInfo struct {
	// The file's base name.
	Name string `json:"name"`
	// The file's absolute path inside the sandbox.
	Path string `json:"path"`
	Type string `json:"type"` // "file", "dir", "symlink", "other"
	// Size in bytes (of the link itself for a symlink).
	Size int64  `json:"size"`
	Mode string `json:"mode"` // octal permission bits, e.g. "0644"
	// When its content last changed.
	ModTime time.Time `json:"modTime"`
	Target  string    `json:"target,omitempty"` // symlink target
	// The file's user: its name in the sandbox's /etc/passwd, else the uid.
	Owner string `json:"owner,omitempty"`
	// The file's group: its name in the sandbox's /etc/group, else the gid.
	Group string `json:"group,omitempty"`
}

// MkdirRequest is the body of POST …/files/mkdir.
type MkdirRequest struct {
	// The directory to make; a relative path starts at the workdir.
	Path string `json:"path"`
	Mode string `json:"mode,omitempty"` // octal permission bits. Default: "0755".
	// Make missing parent directories too, and answer the directory if it exists already (mkdir -p).
	// Default: false.
	Parents bool `json:"parents,omitempty"`
}

// MoveRequest is the body of POST …/files/move.
type MoveRequest struct {
	// The file or directory to move; a relative path starts at the workdir.
	From string `json:"from"`
	// Where it goes; the parent directory must exist.
	To string `json:"to"`
	// Replace an existing file at to (else 409 FILE_EXISTS). Default: false.
	Overwrite bool `json:"overwrite,omitempty"`
}

// Image is a set of read-only layers sandboxes start from.
type Image struct {
	// The image's name, as sandboxes' image names it (may hold '/' and ':').
	Name string `json:"name"`
	ID   string `json:"id"` // content digest
	// How many layers it has.
	Layers int `json:"layers"`
	// The size of its layers on disk, in bytes.
	SizeBytes int64  `json:"sizeBytes"`
	Source    string `json:"source"` // "base", "import", "pull:<ref>", "build"
	// When it was imported, pulled or built.
	CreatedAt time.Time `json:"createdAt"`
	Team      string    `json:"team,omitempty"` // owner; team default's images are shared
	// Config is what sandboxes from the image start with (absent when empty).
	Config *ImageConfig `json:"config,omitempty"`
}

// ImageConfig is an image's configuration: env and working directory are a
// new sandbox's defaults; user, entrypoint, cmd and labels are recorded.
type ImageConfig struct {
	Env []string `json:"env,omitempty"` // KEY=VALUE
	// ENTRYPOINT: with cmd, the main process of a sandbox created from the image without an entrypoint
	// of its own.
	Entrypoint []string `json:"entrypoint,omitempty"`
	// CMD: the entrypoint's arguments, or the main process without one.
	Cmd []string `json:"cmd,omitempty"`
	// WORKDIR: a new sandbox's default workdir.
	WorkingDir string `json:"workingDir,omitempty"`
	// USER: recorded; commands run as root unless a request names a user.
	User string `json:"user,omitempty"`
	// LABEL: the image's labels.
	Labels map[string]string `json:"labels,omitempty"`
}

// PullRequest is the body of POST /v1/images/pull.
type PullRequest struct {
	// The image reference to pull: [registry/]repository[:tag|@digest], e.g. "python:3.12-slim".
	Ref  string `json:"ref"`
	Name string `json:"name,omitempty"` // the name to store it under; by default the ref
}

// ErrorBody is the body of every error response: {"error": {...}}.
type ErrorBody struct {
	// The error's stable, machine-readable code.
	Code Code `json:"code"`
	// What went wrong, for people; it may change between versions.
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
	// The sandbox's id.
	ID string `json:"id"`
	// The sandbox's name, if it has one.
	Name string `json:"name,omitempty"`
	// The sandbox's state when it was read.
	State       State     `json:"state"`
	Time        time.Time `json:"time"`                 // when it was read
	CPUNanos    uint64    `json:"cpuNanos"`             // CPU time used by the current instance
	CPUPercent  *float64  `json:"cpuPercent,omitempty"` // since the previous read (100 = one core); absent on the first
	MemoryBytes uint64    `json:"memoryBytes"`          // without reclaimable file cache
	// The memory limit (memoryMiB) in bytes.
	MemoryLimitBytes uint64 `json:"memoryLimitBytes"`
	// Processes and threads alive in it now.
	Pids uint64 `json:"pids"`
	// The most processes and threads it may have (pidsLimit).
	PidsLimit      uint64 `json:"pidsLimit"`
	DiskBytes      uint64 `json:"diskBytes"`      // its own writes: the upper dir, or the disk image with diskMiB
	DiskLimitBytes uint64 `json:"diskLimitBytes"` // diskMiB in bytes; 0: shares the host's disk
	NetRxBytes     uint64 `json:"netRxBytes"`     // received by the sandbox (bridge network)
	// Sent by the sandbox (bridge network).
	NetTxBytes uint64 `json:"netTxBytes"`
}
