package agentapi

import "time"

// ObserveCall, when set, is told how long each round trip to an agent took:
// route is the route's pattern for the typed calls ("GET /health") and
// "forward" for forwarded ones (timed to the response headers). The daemon
// sets it once, before it makes any client; it must not block.
var ObserveCall func(route string, took time.Duration, err error)

func observeCall(route string, start time.Time, err *error) {
	if f := ObserveCall; f != nil {
		f(route, time.Since(start), *err)
	}
}
