package sdk

import "time"

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
)

// Sandbox is the durable identity of an isolated environment.
type Sandbox struct {
	ID        string            `json:"id"`
	Name      string            `json:"name,omitempty"`
	State     State             `json:"state"`
	Reason    string            `json:"reason,omitempty"` // why it entered State: "user", "crash", "reconcile", …
	Error     string            `json:"error,omitempty"`  // set in state "error"
	Image     string            `json:"image"`
	Env       map[string]string `json:"env,omitempty"`
	Labels    map[string]string `json:"labels"`
	CPU       float64           `json:"cpu"`
	MemoryMiB int               `json:"memoryMiB"`
	PidsLimit int               `json:"pidsLimit"`
	Workdir   string            `json:"workdir"`
	CreatedAt time.Time         `json:"createdAt"`
	StartedAt *time.Time        `json:"startedAt,omitempty"`
	StoppedAt *time.Time        `json:"stoppedAt,omitempty"`
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
	Workdir   string            `json:"workdir,omitempty"`
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

// FileInfo describes one file inside a sandbox.
type FileInfo struct {
	Name    string    `json:"name"`
	Path    string    `json:"path"`
	Type    string    `json:"type"` // "file", "dir", "symlink", "other"
	Size    int64     `json:"size"`
	Mode    string    `json:"mode"` // octal permission bits, e.g. "0644"
	ModTime time.Time `json:"modTime"`
	Target  string    `json:"target,omitempty"` // symlink target
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
	Source    string    `json:"source"` // "base", "import", "pull:<ref>"
	CreatedAt time.Time `json:"createdAt"`
}

// PullRequest is the body of POST /v1/images/pull.
type PullRequest struct {
	Ref  string `json:"ref"`
	Name string `json:"name,omitempty"` // defaults to the ref
}

// ErrorBody is the body of every error response: {"error": {...}}.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ErrorResponse wraps ErrorBody.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}
