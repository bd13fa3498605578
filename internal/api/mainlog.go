package api

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/wire"
)

// mainLogOptions are GET /v1/sandboxes/{id}/logs's selections of the
// retained output, applied by the daemon.
type mainLogOptions struct {
	tail   int64     // only the last tail lines; -1: all
	since  time.Time // only output written at or after since; zero: all
	stamps bool      // send each chunk's write time
}

func parseMainLogOptions(r *http.Request, now time.Time) (mainLogOptions, error) {
	o := mainLogOptions{tail: -1}
	var err error
	if o.stamps, err = httpjson.BoolParam(r, "timestamps"); err != nil {
		return o, err
	}
	q := r.URL.Query()
	if v := q.Get("tail"); v != "" && v != "all" {
		if o.tail, err = intParam(v, "tail", 0, math.MaxInt32); err != nil {
			return o, err
		}
	}
	if v := q.Get("since"); v != "" {
		if o.since, err = parseSince(v, now); err != nil {
			return o, err
		}
	}
	return o, nil
}

// parseSince takes what docker logs --since takes: a duration back from
// now ("5m", "1h30m"), an RFC 3339 time, or Unix seconds.
func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < math.MaxInt64/1e9 {
		return time.Unix(0, int64(s*1e9)), nil
	}
	return time.Time{}, errdefs.Invalid(wire.CodeInvalidParameter,
		"query parameter since must be a duration back from now (5m, 1h30m), an RFC 3339 time or Unix seconds, got %q", v)
}

// mainLogFile is one file of the main log (main.log or main.log.1) with
// the index of when each part was written (agentapi.LogTimesSuffix).
type mainLogFile struct {
	f, times *os.File // times is nil when the agent wrote no index
	size     int64    // at open; tail and since count within it
	pos      int64    // the next byte of f to send
	recs     []agentapi.LogTime
	timesPos int64 // the next byte of times to read
}

// openMainLog opens a log file and its index; nil if the log is missing.
func openMainLog(path string) *mainLogFile {
	f, err := sandbox.OpenLogFile(path)
	if err != nil {
		return nil
	}
	l := &mainLogFile{f: f}
	if fi, err := f.Stat(); err == nil {
		l.size = fi.Size()
	}
	l.times, _ = sandbox.OpenLogFile(path + agentapi.LogTimesSuffix)
	return l
}

func (l *mainLogFile) Close() {
	l.f.Close()
	if l.times != nil {
		l.times.Close()
	}
}

// readTimes reads the records appended since the last call, keeping those
// that go forward in offset (the sandbox can write the file).
func (l *mainLogFile) readTimes() {
	if l.times == nil {
		return
	}
	buf := make([]byte, 256*agentapi.LogTimeSize)
	for {
		n, err := l.times.ReadAt(buf, l.timesPos)
		n -= n % agentapi.LogTimeSize // a torn record waits for the next call
		for b := buf[:n]; len(b) > 0; b = b[agentapi.LogTimeSize:] {
			rec := agentapi.DecodeLogTime(b)
			if k := len(l.recs); k == 0 || rec.Offset > l.recs[k-1].Offset {
				l.recs = append(l.recs, rec)
			}
		}
		l.timesPos += int64(n)
		if err != nil || n < len(buf) {
			return
		}
	}
}

// span returns the write time of the byte at l.pos and where the span of
// that write ends (-1: not known yet), forgetting the records before it.
func (l *mainLogFile) span() (*time.Time, int64) {
	for len(l.recs) > 1 && l.recs[1].Offset <= l.pos {
		l.recs = l.recs[1:]
	}
	if len(l.recs) == 0 || l.recs[0].Offset > l.pos {
		return nil, -1
	}
	t := l.recs[0].Time
	if len(l.recs) > 1 {
		return &t, l.recs[1].Offset
	}
	return &t, -1
}

// skipBefore moves pos to the first byte written at or after t.
func (l *mainLogFile) skipBefore(t time.Time) {
	l.readTimes()
	for _, rec := range l.recs {
		if !rec.Time.Before(t) {
			l.pos = max(l.pos, rec.Offset)
			return
		}
	}
	l.pos = max(l.pos, l.size)
}

// send copies the file from pos to its current end; with stamps each
// chunk is one write's bytes and carries its time. False: the client left.
func (l *mainLogFile) send(ns *agentapi.Writer, stamps bool) bool {
	buf := make([]byte, 32<<10)
	for {
		chunk := buf
		var at *time.Time
		if stamps {
			l.readTimes()
			var end int64
			if at, end = l.span(); end > l.pos && end-l.pos < int64(len(chunk)) {
				chunk = chunk[:end-l.pos]
			}
		}
		n, err := l.f.ReadAt(chunk, l.pos)
		if n > 0 {
			l.pos += int64(n)
			if !ns.Send(wire.LogLine{Type: "data", Data: chunk[:n], Time: at}) {
				return false
			}
		}
		if err != nil || n == 0 {
			return errors.Is(err, io.EOF) || err == nil
		}
	}
}

// tailFrom moves the start of files (the log in order, oldest first) so
// that only their last n lines are sent; a newline ending the log does not
// start another line.
func tailFrom(files []*mainLogFile, n int64) {
	if n == 0 {
		for _, l := range files {
			l.pos = l.size
		}
		return
	}
	trailing := true
	buf := make([]byte, 32<<10)
	for i := len(files) - 1; i >= 0; i-- {
		l := files[i]
		end := l.size
		for end > l.pos {
			start := max(l.pos, end-int64(len(buf)))
			b := buf[:end-start]
			if _, err := l.f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
				return
			}
			if trailing && len(b) > 0 && b[len(b)-1] == '\n' {
				b = b[:len(b)-1]
			}
			trailing = false
			for j := len(b); n > 0; {
				j = bytes.LastIndexByte(b[:j], '\n')
				if j < 0 {
					break
				}
				if n--; n == 0 {
					l.pos = start + int64(j) + 1
					for _, earlier := range files[:i] {
						earlier.pos = earlier.size
					}
					return
				}
			}
			end = start
		}
	}
}

// checkTimes refuses since and timestamps on a log whose agent kept no
// write times (one from before they were kept).
func (o mainLogOptions) checkTimes(files []*mainLogFile) error {
	if !o.stamps && o.since.IsZero() {
		return nil
	}
	for _, l := range files {
		if l.times == nil && l.size > 0 {
			return errdefs.Invalid(wire.CodeInvalidParameter,
				"this sandbox's main log has no write times (its agent predates them), so since and timestamps cannot apply; restart the sandbox to keep them")
		}
	}
	return nil
}
