package api

import (
	"reflect"

	"github.com/sbxhq/sbx/sdk"
)

// typeEnums are the enums of Go string types with typed constants.
var typeEnums = map[reflect.Type][]string{
	reflect.TypeOf(sdk.State("")): strs(sdk.States()),
	reflect.TypeOf(sdk.Code("")):  strs(sdk.Codes()),
}

// Fields that are plain strings in Go but take a closed set of values,
// by "GoType.jsonName". The values come from the sdk's constants where it
// has them; the rest are the values the field's comment in sdk/ names.
var (
	classes        = []string{"container", "gvisor"}
	networks       = []string{sdk.NetworkBridge, sdk.NetworkNone}
	egressModes    = []string{sdk.EgressAllowAll, sdk.EgressBlockAll, sdk.EgressAllowList, sdk.EgressDenyList}
	restarts       = []string{sdk.RestartNever, sdk.RestartOnFailure, sdk.RestartAlways}
	processStates  = []string{sdk.ProcessRunning, sdk.ProcessExited}
	execEventTypes = []string{"start", "stdout", "stderr", "exit", "end", "heartbeat", "error"} // "end": process logs without follow
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
	"Session.state":                      {sdk.SessionIdle, sdk.SessionBusy, sdk.SessionEnded},
	"WaitForLogRequest.stream":           {"stdout", "stderr"},
	"LogMatch.stream":                    {"stdout", "stderr"},
	"WaitForPortRequest.protocol":        {"tcp", "http"},
	"PTYControl.type":                    {"resize", "exit"},
	"ExecEvent.type":                     execEventTypes,
	"SessionEvent.type":                  execEventTypes,
	"RunEvent.type":                      {"stdout", "stderr", "result", "error", "heartbeat", "end"},
	"WatchEvent.type":                    {"ready", "create", "write", "remove", "rename", "overflow", "heartbeat", "error"},
	"EventLine.type":                     {"event", "heartbeat", "error"},
	"LogLine.type":                       {"data", "heartbeat", "end", "error"},
}

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
