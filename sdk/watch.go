package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// WatchOptions selects what Watch reports.
type WatchOptions struct {
	Path      string // a directory or a file; relative paths start at the workdir
	Recursive bool   // also watch every subdirectory, present and future
	// Include and Exclude are glob patterns: one without "/" matches a file
	// or directory name at any depth ("*.go", "node_modules"); one with "/"
	// matches the path relative to Path, where "**" spans directories
	// ("src/**/*.ts"). An event is reported when its path matches some
	// Include (or there is none) and no Exclude; excluded directories are
	// not watched at all.
	Include []string
	Exclude []string
}

// Watcher is an open watch stream.
type Watcher struct {
	body  io.ReadCloser
	dec   *json.Decoder
	ctx   context.Context
	close sync.Once
}

// Watch starts watching a path and returns once the watch is in place, so
// every change made after Watch returns is reported. Read events with Next;
// Close ends the watch.
func (c *Client) Watch(ctx context.Context, idOrName string, opts WatchOptions) (*Watcher, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	q := url.Values{"path": {opts.Path}}
	if opts.Recursive {
		q.Set("recursive", "true")
	}
	for _, g := range opts.Include {
		q.Add("include", g)
	}
	for _, g := range opts.Exclude {
		q.Add("exclude", g)
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/watch"), query: q})
	if err != nil {
		return nil, err
	}
	w := &Watcher{body: resp.Body, dec: json.NewDecoder(resp.Body), ctx: ctx}
	ev, err := w.next()
	if err == nil && ev.Type != "ready" {
		err = fmt.Errorf("watch stream began with %q, want \"ready\"", ev.Type)
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Next returns the next change. It skips heartbeats; an error event or a
// broken stream is returned as an error (an *APIError or ErrStreamEnded).
func (w *Watcher) Next() (*WatchEvent, error) {
	for {
		ev, err := w.next()
		if err != nil {
			return nil, err
		}
		switch ev.Type {
		case "heartbeat":
			continue
		case "error":
			return nil, eventError(ev.Error)
		}
		return ev, nil
	}
}

func (w *Watcher) next() (*WatchEvent, error) {
	var ev WatchEvent
	if err := w.dec.Decode(&ev); err != nil {
		return nil, streamError(w.ctx, err)
	}
	return &ev, nil
}

// Close ends the watch.
func (w *Watcher) Close() error {
	w.close.Do(func() { w.body.Close() })
	return nil
}
