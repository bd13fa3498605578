package api

import (
	"reflect"

	"github.com/sbxhq/sbx/wire"
)

// typeEnums are the enums of Go string types with typed constants.
var typeEnums = map[reflect.Type][]string{
	reflect.TypeOf(wire.State("")): strs(wire.States()),
	reflect.TypeOf(wire.Code("")):  strs(wire.Codes()),
}

// Fields that are plain strings in Go but take a closed set of values,
// by "GoType.jsonName". The values come from wire's constants where it
// has them; the rest are the values the field's comment in wire/ names.
var (
	classes       = []string{"container", "gvisor"}
	networks      = []string{wire.NetworkBridge, wire.NetworkNone}
	egressModes   = []string{wire.EgressAllowAll, wire.EgressBlockAll, wire.EgressAllowList, wire.EgressDenyList}
	restarts      = []string{wire.RestartNever, wire.RestartOnFailure, wire.RestartAlways}
	processStates = []string{wire.ProcessRunning, wire.ProcessExited}
)

var fieldEnums = map[string][]string{
	"Sandbox.class":                      classes,
	"CreateSandboxRequest.class":         classes,
	"Snapshot.class":                     classes,
	"Sandbox.network":                    networks,
	"CreateSandboxRequest.network":       networks,
	"NetworkInfo.mode":                   networks,
	"EgressPolicy.mode":                  egressModes,
	"Sandbox.restartPolicy":              restarts,
	"CreateSandboxRequest.restartPolicy": restarts,
	"Sandbox.expiresAction":              {"stop", "pause", "archive", "delete"},
	"FileInfo.type":                      {"file", "dir", "symlink", "other"},
	"Process.state":                      processStates,
	"PTY.state":                          processStates,
	"Session.state":                      {wire.SessionIdle, wire.SessionBusy, wire.SessionEnded},
	"WaitForLogRequest.stream":           {"stdout", "stderr"},
	"LogMatch.stream":                    {"stdout", "stderr"},
	"WaitForPortRequest.protocol":        {"tcp", "http"},
}

// eventUnions are the event types whose "type" says which fields an event
// carries: the document describes each as a oneOf of one schema per type
// value (ExecEventStart, …) with "type" as the discriminator, each variant
// the type's fields (ExecEventFields) with its type value fixed and the
// fields it always has required. Every value is listed with those fields.
var eventUnions = map[string][]eventVariant{
	"ExecEvent":    execVariants,
	"SessionEvent": execVariants,
	"RunEvent":     {{"stdout", nil}, {"stderr", nil}, {"result", nil}, {"error", errorField}, {"heartbeat", nil}, {"end", nil}},
	"WatchEvent": {{"ready", nil}, {"create", nil}, {"write", nil}, {"remove", nil}, {"rename", nil}, {"overflow", nil},
		{"heartbeat", nil}, {"error", errorField}},
	"EventLine":  {{"event", nil}, {"heartbeat", nil}, {"error", errorField}},
	"LogLine":    {{"data", nil}, {"heartbeat", nil}, {"end", nil}, {"error", errorField}},
	"BuildEvent": {{"pull", nil}, {"step", nil}, {"output", nil}, {"layer", nil}, {"done", nil}, {"error", errorField}, {"heartbeat", nil}},
	"PTYControl": {{"resize", []string{"cols", "rows"}}, {"exit", nil}, {"error", errorField}},
}

// eventVariant is one value of an event's "type" and the fields an event
// of that type always has.
type eventVariant struct {
	value    string
	required []string
}

var (
	errorField = []string{"error"}
	// "end": a process's logs without follow; "exit" always carries its
	// result (ExecEvent.MarshalJSON).
	execVariants = []eventVariant{{"start", nil}, {"stdout", nil}, {"stderr", nil},
		{"exit", []string{"exitCode", "timedOut", "durationMs"}}, {"end", nil}, {"heartbeat", nil}, {"error", errorField}}
)

// streamEnds names, per NDJSON event type, the event types that end a
// stream (x-final-events in the document).
var streamEnds = map[string][]string{
	"ExecEvent":    {"exit", "end", "error"},
	"SessionEvent": {"exit", "end", "error"},
	"RunEvent":     {"end", "error"},
	"WatchEvent":   {"error"},
	"EventLine":    {"error"},
	"LogLine":      {"end", "error"},
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
