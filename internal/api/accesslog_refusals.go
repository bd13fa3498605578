package api

import (
	"sync"
	"time"
)

// refusalLog thins the access lines of 429 answers. A key at its rate
// limit can be refused thousands of times a second; a line each (~250
// bytes) would fill the disk the daemon's log is on at over a megabyte a
// second. One refusal a second is logged, with the number left out since
// the last logged one.
type refusalLog struct {
	mu       sync.Mutex
	last     time.Time
	unlogged int
}

// take reports whether the refusal at now gets a line, and if so how many
// refusals before it did not.
func (l *refusalLog) take(now time.Time) (log bool, unlogged int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.last) < time.Second {
		l.unlogged++
		return false, 0
	}
	unlogged, l.last, l.unlogged = l.unlogged, now, 0
	return true, unlogged
}
