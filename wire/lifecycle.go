package wire

import "time"

// States of the archive cycle: a stopped sandbox is packed into the blob
// store (archiving → archived) and unpacked again when it next starts
// (restoring → starting → started).
const (
	StateArchiving State = "archiving"
	StateArchived  State = "archived"
	StateRestoring State = "restoring"
)

// Lifecycle policy defaults and bounds, in seconds.
const (
	DefaultAutoStopSeconds    = 15 * 60
	DefaultAutoPauseSeconds   = 60 * 60 // class gvisor, whose default autoStopSeconds is then 0
	DefaultAutoArchiveSeconds = 7 * 24 * 3600
	DefaultAutoDeleteSeconds  = -1
	MaxAutoArchiveSeconds     = 30 * 24 * 3600 // also what autoArchiveSeconds 0 means
)

// Restart policies of a sandbox's main process (its entrypoint).
const (
	RestartNever     = "never"      // the sandbox stops with reason "main-exit" when it exits
	RestartOnFailure = "on-failure" // restarted after a non-zero exit; a zero exit stops the sandbox
	RestartAlways    = "always"     // restarted whenever it exits
)

// Ptr returns a pointer to v, for the optional fields of requests:
// sdk.CreateSandboxRequest{AutoStopSeconds: sdk.Ptr(0)}.
func Ptr[T any](v T) *T { return &v }

// UpdateSandboxRequest is the body of PATCH /v1/sandboxes/{id}. Fields left
// nil keep their value. Setting ttlSeconds restarts the TTL from now.
type UpdateSandboxRequest struct {
	// Idle time before a stop; 0: never. Absent: unchanged.
	AutoStopSeconds *int `json:"autoStopSeconds,omitempty"`
	// Idle time before a pause; 0: never; exclusive with autoStopSeconds. Absent: unchanged.
	AutoPauseSeconds *int `json:"autoPauseSeconds,omitempty"`
	// Stopped time before an archive; 0: the maximum, 30 days. Absent: unchanged.
	AutoArchiveSeconds *int `json:"autoArchiveSeconds,omitempty"`
	// Stopped time before a delete; -1: never, 0: when it stops. Absent: unchanged.
	AutoDeleteSeconds *int `json:"autoDeleteSeconds,omitempty"`
	// Delete the sandbox this long from now; 0: no TTL. Absent: unchanged.
	TTLSeconds *int `json:"ttlSeconds,omitempty"`
	// Delete the sandbox when it stops (autoDeleteSeconds 0). Absent: unchanged.
	Ephemeral *bool `json:"ephemeral,omitempty"`
	// Never stop or pause it for being idle. Absent: unchanged.
	KeepAlive *bool `json:"keepAlive,omitempty"`
	// Env changes the environment of every process started from now on
	// (exec, processes, sessions, terminals, contexts), in this instance
	// and the next ones: a value sets the variable, null unsets it.
	// Processes already running keep theirs.
	Env map[string]*string `json:"env,omitempty"`
	// CPU (cores), MemoryMiB and PidsLimit change the sandbox's limits,
	// within the same ranges as create: at once for a running instance of
	// class container (no restart; a memory limit below what the instance
	// uses now is refused with MEMORY_BELOW_USAGE), and for every later
	// start. Class gvisor takes them at its next start.
	CPU *float64 `json:"cpu,omitempty"`
	// The memory limit in MiB (see cpu for when it applies). Absent: unchanged.
	MemoryMiB *int `json:"memoryMiB,omitempty"`
	// The most processes and threads at once (see cpu for when it applies). Absent: unchanged.
	PidsLimit *int `json:"pidsLimit,omitempty"`
	// Labels, when present, replace all of the sandbox's labels; {} removes
	// them all (a non-nil empty map in Go), null or nil keeps them.
	Labels map[string]string `json:"labels,omitzero"`
}

// Event is one recorded state change of a sandbox. Reason says why:
// "create", "user", "lazy", "idle", "ttl", "auto-archive", "auto-delete",
// "main-exit", "oom", "crash", "reconcile", "delete", …
type Event struct {
	Seq int64 `json:"seq"` // increasing across all sandboxes
	// The sandbox's id.
	SandboxID string `json:"sandboxId"`
	// The sandbox's name, if it has one.
	SandboxName string `json:"sandboxName,omitempty"`
	Team        string `json:"team,omitempty"` // the sandbox's team
	// When the sandbox entered the state.
	Time time.Time `json:"time"`
	// The state it entered.
	State State `json:"state"`
	// Why: "user", "idle", "crash", "reconcile", "ttl", "main-exit", "oom", … (the same as
	// Sandbox.reason).
	Reason string `json:"reason,omitempty"`
	// More about the reason, for people: an error's text, an exit status.
	Message string `json:"message,omitempty"`
}

// EventLine is one line of a followed event stream (NDJSON). Type is
// "event" (the Event's fields are inline), "heartbeat" or "error".
type EventLine struct {
	// "event" (the Event's fields are set), "heartbeat" (keeps an idle stream open) or "error" (the
	// stream ends).
	Type string `json:"type"`
	*Event
	// What failed ("error").
	Error *ErrorBody `json:"error,omitempty"`
}

// LogLine is one line of GET /v1/sandboxes/{id}/logs (NDJSON): the output
// of the sandbox's main process, stdout and stderr together. Type is "data"
// (Data holds bytes that start at Offset in the log), "heartbeat", "end"
// (nothing more will come) or "error".
type LogLine struct {
	// "data" (output in data), "heartbeat" (keeps a followed stream open), "end" (all output read,
	// without follow, or the sandbox stopped) or "error".
	Type string `json:"type"`
	// Not sent by this version of the daemon.
	Offset int64 `json:"offset,omitempty"`
	// A chunk of the main process's stdout and stderr, interleaved (base64 in JSON).
	Data []byte `json:"data,omitempty"`
	// What failed ("error"); the stream ends after it.
	Error *ErrorBody `json:"error,omitempty"`
	// When the main process wrote Data, with timestamps=true; each chunk is then
	// output of one write.
	Time *time.Time `json:"time,omitempty"`
}
