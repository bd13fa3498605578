package wire

import (
	"encoding/json"
	"time"
)

// CreateContextRequest is the body of POST /v1/sandboxes/{id}/contexts.
type CreateContextRequest struct {
	// The interpreter: "python", "javascript" or "bash" (ruby and perl run only statelessly, POST
	// …/run).
	Language string            `json:"language"`
	Cwd      string            `json:"cwd,omitempty"` // default: the sandbox's workdir
	Env      map[string]string `json:"env,omitempty"` // added to the interpreter's environment
	// IdleSeconds ends the context after this long without a run: nil takes
	// the default (24 hours), 0 keeps it until it is deleted or the instance stops.
	// Default: 86400.
	IdleSeconds *int `json:"contextIdleSeconds,omitempty"`
}

// Context is a live interpreter in a sandbox.
type Context struct {
	// The context's id, for …/contexts/{cid}.
	ID     string `json:"id"`
	Handle string `json:"handle,omitempty"` // "id@instance": addresses it in this instance only; later ones answer 404 STALE_HANDLE
	// The interpreter: python, javascript or bash.
	Language string `json:"language"`
	// The interpreter's working directory when it started.
	Cwd string `json:"cwd"`
	Pid int    `json:"pid"` // the interpreter's process id inside the sandbox
	// Ends the context after this long without a run; 0: never.
	IdleSeconds int `json:"contextIdleSeconds"`
	// When the interpreter started.
	CreatedAt time.Time `json:"createdAt"`
	// When a run last ended (or the context was made).
	LastUsedAt time.Time  `json:"lastUsedAt"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"` // nil: no idle limit (or a run is in progress)
	// Runs started in this interpreter (a restart starts again at 0).
	Runs int64 `json:"runs"`
}

// RunCodeRequest is the body of POST …/contexts/{cid}/run.
type RunCodeRequest struct {
	// The code to run in the context's interpreter; its state (variables, imports) persists.
	Code           string            `json:"code"`
	TimeoutSeconds float64           `json:"timeoutSeconds,omitempty"` // 0: no limit
	Env            map[string]string `json:"env,omitempty"`            // for this run only
}

// RunRequest is the body of POST /v1/sandboxes/{id}/run: one stateless run in
// a fresh interpreter.
type RunRequest struct {
	// The interpreter: python, javascript, bash, ruby or perl.
	Language string `json:"language"`
	// The code to run in a fresh interpreter that ends with the run.
	Code string `json:"code"`
	// The working directory; a relative path starts at the workdir. By default the workdir.
	Cwd            string  `json:"cwd,omitempty"`
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"` // 0: no limit
	// Variables added to the interpreter's environment.
	Env map[string]string `json:"env,omitempty"`
}

// RunResult is the outcome of a run.
type RunResult struct {
	// What the code wrote to standard output.
	Stdout string `json:"stdout"`
	// What the code wrote to standard error.
	Stderr  string       `json:"stderr"`
	Results []CodeResult `json:"results"` // rich outputs in the order they were made
	// Error is the exception the code raised (or a non-zero exit status in
	// bash and the stateless-only languages); nil when it ran to the end.
	Error *CodeError `json:"error,omitempty"`
	// TimedOut says the run hit its timeout (or the caller went away) and
	// was interrupted with SIGINT; the context stays usable unless the
	// interpreter ignored the interrupt and had to be killed.
	TimedOut  bool `json:"timedOut"`
	Truncated bool `json:"truncated"` // stdout or stderr went over the limit and was cut
	// How long the run took, in milliseconds.
	DurationMs int64 `json:"durationMs"`
}

// CodeResult is one rich output: several representations of one value, keyed
// by MIME type, as a notebook shows them. Main marks the value of the run's
// last expression; other results were displayed (a matplotlib figure shown or
// left open, display(obj) in Python).
type CodeResult struct {
	// This is the value of the code's last expression (the cell's result), not a display() call.
	Main bool `json:"main,omitempty"`
	// The plain-text form (repr) of the value.
	Text string `json:"text/plain,omitempty"`
	// An HTML form of the value (pandas tables, …).
	HTML string `json:"text/html,omitempty"`
	// A Markdown form of the value.
	Markdown string `json:"text/markdown,omitempty"`
	// An SVG image of the value.
	SVG  string          `json:"image/svg+xml,omitempty"`
	PNG  []byte          `json:"image/png,omitempty"`  // base64 in JSON
	JPEG []byte          `json:"image/jpeg,omitempty"` // base64 in JSON
	JSON json.RawMessage `json:"application/json,omitempty"`
}

// CodeError is an exception raised by the code: its class name, its message
// and the traceback as the interpreter prints it. In a RunEvent of type
// "error", Code and Message are set instead when the stream itself broke.
type CodeError struct {
	// The exception's type, e.g. "ZeroDivisionError".
	Name string `json:"name,omitempty"`
	// The exception's message.
	Value string `json:"value,omitempty"`
	// The traceback as the interpreter prints it.
	Traceback string `json:"traceback,omitempty"`
	// Set instead of name and value when the stream itself broke (an "error" event): the error's
	// code, e.g. INSTANCE_LOST.
	Code Code `json:"code,omitempty"`
	// What broke, for people, with code.
	Message string `json:"message,omitempty"`
}

// RunEvent is one line of a streamed run (?stream=true, NDJSON). Type is
// "stdout" or "stderr" (Data), "result" (Result), "error", "heartbeat" or
// "end" (TimedOut, DurationMs; always the last event of a run that finished).
// An "error" event with Name is the code's exception and is followed by
// "end"; one with Code means the stream broke and nothing follows.
type RunEvent struct {
	// "stdout" or "stderr" (data), "result" (a rich output), "error" (the code raised: error),
	// "heartbeat" (keeps the stream open), "end" (the run finished: timedOut, durationMs).
	Type string `json:"type"`
	// The event's number in the run, from 1.
	Seq  int64  `json:"seq,omitempty"`
	Data []byte `json:"data,omitempty"` // base64 in JSON
	// A rich output ("result").
	Result *CodeResult `json:"result,omitempty"`
	// The exception the code raised, or what failed ("error").
	Error *CodeError `json:"error,omitempty"`
	// The run hit its timeout and was interrupted ("end").
	TimedOut bool `json:"timedOut,omitempty"`
	// How long the run took, in milliseconds ("end").
	DurationMs int64 `json:"durationMs,omitempty"`
}

// MarshalJSON always writes timedOut and durationMs in an "end" event
// (false and 0 are answers there) and leaves them out of the others.
func (e RunEvent) MarshalJSON() ([]byte, error) {
	type wire RunEvent // without this method
	if e.Type != "end" {
		return json.Marshal(wire(e))
	}
	return json.Marshal(struct {
		wire
		TimedOut   bool  `json:"timedOut"`
		DurationMs int64 `json:"durationMs"`
	}{wire(e), e.TimedOut, e.DurationMs})
}
