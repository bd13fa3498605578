package wire

import "time"

// StartProcessRequest starts a background process (POST …/processes).
// Exactly one of Cmd and Shell is set; Shell runs under /bin/sh -c.
type StartProcessRequest struct {
	// ID names the process; default a generated "proc-…". An exited
	// process with the same id is replaced; a running one is a conflict.
	ID string `json:"id,omitempty"`
	// The program and its arguments, run without a shell.
	Cmd []string `json:"cmd,omitempty"`
	// A command line run with /bin/sh -c (instead of cmd).
	Shell string `json:"shell,omitempty"`
	// The working directory; a relative path starts at the workdir. By default the workdir.
	Cwd string `json:"cwd,omitempty"`
	// Variables added to (or replacing) the sandbox's environment for this process.
	Env            map[string]string `json:"env,omitempty"`
	TimeoutSeconds float64           `json:"timeoutSeconds,omitempty"` // kill the process group after this long; 0: never
	User           string            `json:"user,omitempty"`           // run as this account (name or uid[:gid]). Default: "root".
}

// Process states.
const (
	ProcessRunning = "running"
	ProcessExited  = "exited"
)

// Process is a background process started in a sandbox. It runs in its own
// process group; signals reach the whole group.
type Process struct {
	// The process's id, for …/processes/{process}.
	ID     string `json:"id"`
	Handle string `json:"handle,omitempty"` // "id@instance": addresses it in this instance only; later ones answer 404 STALE_HANDLE
	// Its process id inside the sandbox.
	Pid int      `json:"pid"`
	Cmd []string `json:"cmd"` // argv as run (a shell command is ["/bin/sh","-c",…])
	// Its working directory.
	Cwd      string `json:"cwd"`
	State    string `json:"state"`              // "running" or "exited"
	ExitCode *int   `json:"exitCode,omitempty"` // set once exited; 128+N when signal N killed it
	Signal   string `json:"signal,omitempty"`   // e.g. "SIGTERM" when a signal killed it
	// It was killed for running past timeoutSeconds.
	TimedOut bool `json:"timedOut"`
	// When it started.
	StartedAt time.Time `json:"startedAt"`
	// When it exited.
	EndedAt *time.Time `json:"endedAt,omitempty"`
	// LastSeq is the sequence number of the newest output chunk.
	LastSeq int64 `json:"lastSeq"`
	// StdinOpen says whether stdin can still be written.
	StdinOpen bool `json:"stdinOpen"`
}

// SignalRequest is the body of POST …/processes/{process}/signal.
type SignalRequest struct {
	Signal string `json:"signal"` // "TERM", "SIGTERM" or "15". Default: "SIGTERM".
}

// WaitForLogRequest waits until a line of the process's output matches.
// Exactly one of Substring and Regex is set. Lines already in the retained
// output count, so a line printed before the call is found too.
type WaitForLogRequest struct {
	// Match a line that contains this text (or give regex).
	Substring string `json:"substring,omitempty"`
	Regex     string `json:"regex,omitempty"`  // RE2 syntax, matched against one line
	Stream    string `json:"stream,omitempty"` // "stdout", "stderr" or "" for both
	// Give up after this long with 503 WAIT_TIMEOUT; 0: no limit. Default: 0.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
}

// LogMatch is the line that satisfied a WaitForLog.
type LogMatch struct {
	Line string `json:"line"` // without the newline
	// The stream the line came from: "stdout" or "stderr".
	Stream string `json:"stream"`
	Seq    int64  `json:"seq"` // the chunk that completed the line
}

// WaitForPortRequest waits until something accepts connections on a port
// inside the sandbox (127.0.0.1), or, with Protocol "http", until a GET
// answers with the expected status.
type WaitForPortRequest struct {
	// The TCP port inside the sandbox.
	Port     int    `json:"port"`
	Protocol string `json:"protocol,omitempty"` // "tcp" (accepts connections) or "http" (answers status). Default: "tcp".
	Path     string `json:"path,omitempty"`     // the path to GET, for http. Default: "/".
	Status   int    `json:"status,omitempty"`   // the status to wait for, for http. Default: 200.
	// Give up after this long with 503 WAIT_TIMEOUT; 0: no limit. Default: 0.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
}

// PortReady is the answer of a successful WaitForPort.
type PortReady struct {
	// The port that answered.
	Port   int `json:"port"`
	Status int `json:"status,omitempty"` // the HTTP status, for protocol http
	// How long the wait took, in milliseconds.
	ElapsedMs int64 `json:"elapsedMs"`
}

// LogsResult is how a ProcessLogs call ended.
type LogsResult struct {
	LastSeq int64 // sequence number of the last chunk delivered (or the Offset)
	// Exited is true when the process has exited and all of its retained
	// output was delivered; ExitCode and Signal are then set.
	Exited   bool
	ExitCode int
	Signal   string
	// Gap is true when output after Offset had already been dropped from
	// the process's bounded buffer.
	Gap bool
}
