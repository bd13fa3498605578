package httpegress

import (
	"sync"

	"github.com/sbxhq/sbx/wire"
)

// Bounds of the request log, which lives in the daemon's memory.
const (
	logPerSandbox = 1000 // recent entries kept per sandbox
	logSandboxes  = 4096 // sandboxes with a log; the least recently written goes first
)

// Log keeps each sandbox's recent HTTP egress log and lets readers follow it.
type Log struct {
	mu    sync.Mutex
	tick  uint64
	boxes map[string]*sandboxLog
}

type sandboxLog struct {
	entries []wire.EgressLogEntry // a ring of logPerSandbox
	next    int                   // where the next entry goes once full
	written uint64                // Log.tick at the last write
	subs    map[chan wire.EgressLogEntry]bool
}

// NewLog returns an empty log.
func NewLog() *Log { return &Log{boxes: map[string]*sandboxLog{}} }

func (l *Log) box(id string) *sandboxLog {
	b := l.boxes[id]
	if b == nil {
		if len(l.boxes) >= logSandboxes {
			l.evict()
		}
		b = &sandboxLog{subs: map[chan wire.EgressLogEntry]bool{}}
		l.boxes[id] = b
	}
	return b
}

func (l *Log) evict() {
	var oldest string
	var at uint64
	for id, b := range l.boxes {
		if len(b.subs) == 0 && (oldest == "" || b.written < at) {
			oldest, at = id, b.written
		}
	}
	delete(l.boxes, oldest)
}

// Add records e for sandbox id and hands it to its followers; a follower
// too slow to take it misses it rather than slowing the proxy.
func (l *Log) Add(id string, e wire.EgressLogEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.box(id)
	l.tick++
	b.written = l.tick
	if len(b.entries) < logPerSandbox {
		b.entries = append(b.entries, e)
	} else {
		b.entries[b.next] = e
		b.next = (b.next + 1) % logPerSandbox
	}
	for ch := range b.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

// Recent returns sandbox id's kept entries, oldest first.
func (l *Log) Recent(id string) []wire.EgressLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.boxes[id]
	if b == nil {
		return []wire.EgressLogEntry{}
	}
	return b.ordered()
}

// ordered copies b's kept entries, oldest first.
func (b *sandboxLog) ordered() []wire.EgressLogEntry {
	out := make([]wire.EgressLogEntry, 0, len(b.entries))
	out = append(out, b.entries[b.next:]...)
	return append(out, b.entries[:b.next]...)
}

// Follow returns the kept entries and a channel of the ones to come, as
// one atomic step (nothing is missed or repeated between the two); stop
// ends the subscription.
func (l *Log) Follow(id string) (recent []wire.EgressLogEntry, next <-chan wire.EgressLogEntry, stop func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.box(id)
	ch := make(chan wire.EgressLogEntry, 256)
	b.subs[ch] = true
	return b.ordered(), ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(b.subs, ch)
	}
}
