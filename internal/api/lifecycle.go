package api

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// sandboxPolicy is what the lifecycle handlers need of the Manager:
// policy, waits, events, logs and activity.
type sandboxPolicy interface {
	Update(ctx context.Context, idOrName string, req wire.UpdateSandboxRequest) (*store.Sandbox, error)
	Archive(ctx context.Context, idOrName string) (*store.Sandbox, error)
	WaitState(ctx context.Context, idOrName string, state wire.State, timeout time.Duration) (*store.Sandbox, error)
	Events(ctx context.Context, idOrName string, after int64, limit int) ([]store.Event, error)
	EventsChanged() <-chan struct{}
	Closed() <-chan struct{}
	MainLogPath(sb *store.Sandbox) (string, error)
	Hold(ctx context.Context, idOrName string) (release func())
}

// Activity: every authenticated request to /v1/sandboxes/{id}/… counts as
// activity on that sandbox for as long as it runs (see server.go), so an
// open exec stream, log follow or terminal keeps it from idling. Routes that
// only watch (events, wait, archive) are marked passive, and lookups
// (lookup.go) are not activity either; GET, PATCH and
// DELETE of /v1/sandboxes/{id} itself and the list do not count either.
const sandboxSubPrefix = "/v1/sandboxes/{id}/"

// countsAsActivity reports whether rt keeps its sandbox active.
func countsAsActivity(rt route) bool {
	return strings.HasPrefix(rt.pattern, sandboxSubPrefix) && !rt.passive && !rt.lookup && !rt.onlyRunning && !rt.public
}

// active holds the sandbox of the request while the request runs.
func (s *Server) active(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		release := s.sandboxes.Hold(r.Context(), r.PathValue("id"))
		defer release()
		next(w, r)
	}
}

// heartbeatEvery keeps quiet streams open through proxies.
const heartbeatEvery = 15 * time.Second

func (s *Server) updateSandbox(w http.ResponseWriter, r *http.Request) error {
	var req wire.UpdateSandboxRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	sb, err := s.sandboxes.Update(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

func (s *Server) archiveSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := s.sandboxes.Archive(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

// maxWaitSeconds bounds one wait; a client wanting longer waits again.
const maxWaitSeconds = 3600

func (s *Server) waitSandbox(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	state := wire.State(q.Get("state"))
	if !isStateWord(state) {
		return errdefs.Invalid(wire.CodeInvalidState, "state must name a sandbox state such as started, stopped, archived or deleted, got %q", state)
	}
	timeout := 60
	if v := q.Get("timeoutSeconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxWaitSeconds {
			return errdefs.Invalid(wire.CodeInvalidTimeout, "timeoutSeconds must be a whole number from 0 to %d, got %q", maxWaitSeconds, v)
		}
		timeout = n
	}
	sb, err := s.sandboxes.WaitState(r.Context(), r.PathValue("id"), state, time.Duration(timeout)*time.Second)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sb))
	return nil
}

// isStateWord accepts any state name (started, archived, deleted, and those
// other features add) without this file listing them: a lowercase word.
func isStateWord(st wire.State) bool {
	for _, c := range st {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return len(st) > 0 && len(st) <= 32
}

func (s *Server) sandboxEvents(w http.ResponseWriter, r *http.Request) error {
	return s.events(w, r, r.PathValue("id"))
}

func (s *Server) allEvents(w http.ResponseWriter, r *http.Request) error {
	return s.events(w, r, "")
}

// events lists events after ?after=SEQ (default 0: all kept), or with
// ?follow=true streams them as NDJSON EventLines as they happen. A followed
// sandbox's stream ends after its "deleted" event.
func (s *Server) events(w http.ResponseWriter, r *http.Request, idOrName string) error {
	q := r.URL.Query()
	follow, err := httpjson.BoolParam(r, "follow")
	if err != nil {
		return err
	}
	after, err := intParam(q.Get("after"), "after", 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := intParam(q.Get("limit"), "limit", 0, 10000)
	if err != nil {
		return err
	}
	id := ""
	if idOrName != "" {
		sb, err := s.sandboxes.Get(r.Context(), idOrName)
		if err != nil {
			return err
		}
		id = sb.ID
	}
	if !follow {
		evs, err := s.sandboxes.Events(r.Context(), id, after, int(limit))
		if err != nil {
			return err
		}
		out := make([]wire.Event, 0, len(evs))
		for _, e := range evs {
			out = append(out, Event(e))
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}

	ns := agentapi.NewWriter(w)
	heartbeat := time.NewTicker(heartbeatEvery)
	defer heartbeat.Stop()
	for {
		changed := s.sandboxes.EventsChanged()
		evs, err := s.sandboxes.Events(r.Context(), id, after, 1000)
		if err != nil {
			ns.Send(wire.EventLine{Type: "error", Error: errorBody(err)})
			return nil
		}
		for _, e := range evs {
			ev := Event(e)
			if !ns.Send(wire.EventLine{Type: "event", Event: &ev}) {
				return nil
			}
			after = e.Seq
			if id != "" && ev.State == wire.StateDeleted {
				return nil // nothing more will come for this sandbox
			}
		}
		if len(evs) == 1000 {
			continue // more to catch up on
		}
		select {
		case <-changed:
		case <-heartbeat.C:
			if !ns.Send(wire.EventLine{Type: "heartbeat"}) {
				return nil
			}
		case <-r.Context().Done():
			return nil
		case <-s.sandboxes.Closed():
			return nil
		}
	}
}

// Event is the wire form of a stored event (also what webhooks send).
func Event(e store.Event) wire.Event {
	return wire.Event{Seq: e.Seq, SandboxID: e.SandboxID, SandboxName: e.SandboxName, Team: e.Team, Time: e.Time,
		State: wire.State(e.State), Reason: e.Reason, Message: e.Message}
}

// mainLogs streams the main process's log as NDJSON LogLines: what is kept
// (the rotated file first), then, with follow=true, whatever it writes
// until the sandbox stops. Reading the log does not start the sandbox nor
// count as activity; a follow of a running sandbox keeps it active.
func (s *Server) mainLogs(w http.ResponseWriter, r *http.Request) error {
	follow, err := httpjson.BoolParam(r, "follow")
	if err != nil {
		return err
	}
	opts, err := parseMainLogOptions(r, time.Now())
	if err != nil {
		return err
	}
	sb, err := s.sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	path, err := s.sandboxes.MainLogPath(sb)
	if err != nil {
		return err
	}
	// The log may not exist yet (the main process has not started) nor
	// have been rotated; files holds those that do, oldest first.
	var files []*mainLogFile
	prev := openMainLog(path + ".1")
	if prev != nil {
		defer prev.Close()
		files = append(files, prev)
	}
	cur := openMainLog(path)
	defer func() {
		if cur != nil {
			cur.Close()
		}
	}()
	if cur != nil {
		files = append(files, cur)
	}
	if err := opts.checkTimes(files); err != nil {
		return err
	}
	if !opts.since.IsZero() {
		for _, l := range files {
			l.skipBefore(opts.since)
		}
	}
	if opts.tail >= 0 {
		tailFrom(files, opts.tail)
	}
	ns := agentapi.NewWriter(w)
	for _, l := range files {
		if !l.send(ns, opts.stamps) {
			return nil
		}
	}
	if !follow {
		ns.Send(wire.LogLine{Type: "end"})
		return nil
	}
	// Reading is no activity (the route is passive); following a running
	// instance's output is, for as long as it lasts.
	if instanceMayWrite(sb.State) {
		defer s.sandboxes.Hold(r.Context(), sb.ID)()
	}
	poll := time.NewTicker(200 * time.Millisecond)
	defer poll.Stop()
	lastBeat := time.Now()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.sandboxes.Closed():
			return nil
		case <-poll.C:
		}
		if cur != nil && !cur.send(ns, opts.stamps) {
			return nil
		}
		// After a rotation the name points at a new file: finish the old
		// one (done above), then follow the new one from its start.
		if next := openMainLog(path); next != nil {
			if cur != nil && sameFile(cur.f, next.f) {
				next.Close()
			} else {
				if cur != nil {
					cur.Close()
				}
				cur = next
				continue
			}
		}
		now, err := s.sandboxes.Get(r.Context(), sb.ID)
		if err != nil || !instanceMayWrite(wire.State(now.State)) {
			if cur != nil {
				cur.send(ns, opts.stamps)
			}
			ns.Send(wire.LogLine{Type: "end"})
			return nil
		}
		if time.Since(lastBeat) >= heartbeatEvery {
			if !ns.Send(wire.LogLine{Type: "heartbeat"}) {
				return nil
			}
			lastBeat = time.Now()
		}
	}
}

// instanceMayWrite reports whether a sandbox in state may still add to its log.
func instanceMayWrite(st wire.State) bool {
	return st == wire.StateStarted || st == wire.StateStarting || st == wire.StateRestoring
}

func sameFile(a, b *os.File) bool {
	ai, err1 := a.Stat()
	bi, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

func errorBody(err error) *wire.ErrorBody {
	var e *errdefs.Error
	if errors.As(err, &e) {
		return &wire.ErrorBody{Code: e.Code, Message: e.Message}
	}
	return &wire.ErrorBody{Code: wire.CodeInternal, Message: "internal error; see the daemon log"}
}

func intParam(v, name string, min, max int64) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		return 0, errdefs.Invalid(wire.CodeInvalidParameter, "query parameter %s must be a whole number from %d to %d, got %q", name, min, max, v)
	}
	return n, nil
}

// lifecycleToAPI fills in the wire form's lifecycle fields.
func lifecycleToAPI(sb *store.Sandbox, out *wire.Sandbox) {
	p := sandbox.PolicyOf(sb.Spec)
	out.AutoStopSeconds, out.AutoArchiveSeconds, out.AutoDeleteSeconds = p.AutoStopSeconds, p.AutoArchiveSeconds, p.AutoDeleteSeconds
	out.AutoPauseSeconds = p.AutoPauseSeconds
	out.TTLSeconds, out.Ephemeral, out.KeepAlive = p.TTLSeconds, p.Ephemeral, p.KeepAlive
	if p.TTLSeconds > 0 {
		from := p.TTLFrom
		if from.IsZero() {
			from = sb.CreatedAt
		}
		out.TTLFrom = &from
	}
	out.Entrypoint, out.RestartPolicy = sb.Spec.Entrypoint, sb.Spec.RestartPolicy
	if !sb.LastActivityAt.IsZero() {
		t := sb.LastActivityAt
		out.LastActivityAt = &t
	}
	if !sb.ExpiresAt.IsZero() {
		t := sb.ExpiresAt
		out.ExpiresAt, out.ExpiresAction = &t, sb.ExpiresAction
	}
}
