package api

import (
	"reflect"

	"github.com/sbxhq/sbx/internal/auth"
)

// RouteInfo describes one row of the route table to a surface that serves
// the same API somewhere else (the Kubernetes gateway proxies every
// sandbox-scoped route to the host running the sandbox): it learns which
// routes exist and how each treats a sandbox without an instance from the
// table itself rather than from a hand-kept copy.
type RouteInfo struct {
	Method, Pattern string
	Name            string     // operationId
	Scope           auth.Scope // what the key must hold; "" for public routes
	Public          bool       // no API key needed (previews carry their own token)
	Lookup          bool       // never starts the instance: [] or 404 NOT_IN_CURRENT_INSTANCE without one
	OnlyRunning     bool       // never starts the instance: 409 naming the state without one
	StartsInstance  bool       // starts (or resumes) a stopped (or paused) sandbox to answer
	Passive         bool       // under /v1/sandboxes/{id}/ but neither activity nor a reason to start
	List            bool       // answers a JSON array
	Streams         bool       // may answer an NDJSON stream or a WebSocket
}

// Routes returns the API's route table.
func Routes() []RouteInfo {
	var out []RouteInfo
	for _, rt := range (&Server{}).routes() {
		out = append(out, RouteInfo{
			Method: rt.method, Pattern: rt.pattern, Name: rt.name, Scope: rt.scope,
			Public: rt.public, Lookup: rt.lookup, OnlyRunning: rt.onlyRunning, Passive: rt.passive,
			StartsInstance: startsInstance(rt),
			List:           rt.response != nil && reflect.TypeOf(rt.response).Kind() == reflect.Slice,
			Streams:        rt.events != nil || rt.frames != nil || rt.response == ndjson{},
		})
	}
	return out
}
