package agentapi

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// ObserveCall, when set, is told how long each round trip to an agent took
// (to the response headers; a stream's body may flow long after), labelled
// with the agent route's pattern ("POST /exec"), never the raw path. The
// daemon sets it once, before it makes any client; it must not block.
var ObserveCall func(route string, took time.Duration, err error)

// observed times every request of a client's transport: typed calls,
// forwarded calls and proxied ones alike.
type observed struct{ next http.RoundTripper }

func (o observed) RoundTrip(req *http.Request) (*http.Response, error) {
	f := ObserveCall
	if f == nil || req.Context().Value(unobserved{}) != nil {
		return o.next.RoundTrip(req)
	}
	start := time.Now()
	resp, err := o.next.RoundTrip(req)
	f(routeOf(req), time.Since(start), err)
	return resp, err
}

// unobserved marks the context of calls not worth a sample: the health
// polls of WaitReady, which fail by design until the agent listens.
type unobserved struct{}

func withoutObserving(ctx context.Context) context.Context {
	return context.WithValue(ctx, unobserved{}, true)
}

var routeMux = sync.OnceValue(func() *http.ServeMux {
	mux := http.NewServeMux()
	for _, r := range Routes {
		mux.Handle(r.Pattern(), http.NotFoundHandler())
	}
	return mux
})

// routeOf is the pattern of the agent route req goes to; "other" for a path
// outside the contract.
func routeOf(req *http.Request) string {
	if _, pattern := routeMux().Handler(req); pattern != "" {
		return pattern
	}
	return "other"
}
