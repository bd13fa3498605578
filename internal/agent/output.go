package agent

import "sync"

// outputLog is the bounded output of a background process or a terminal: a
// sequence of chunks, numbered from 1 as they arrive, of which the newest
// (at most limit bytes, but always the last chunk) are kept. Readers ask for
// the chunks after a sequence number and wait on changed() for more, so a
// slow reader never holds up the writer; it loses the oldest chunks instead
// and sees the gap in the sequence numbers.
type outputLog struct {
	limit int

	mu      sync.Mutex
	chunks  []chunk // oldest first
	size    int     // bytes in chunks
	seq     int64   // of the last chunk appended
	closed  bool    // no more output will come
	changed chan struct{}
}

type chunk struct {
	seq    int64
	stream string // "stdout", "stderr" or "pty"
	data   []byte
}

func newOutputLog(limit int) *outputLog {
	return &outputLog{limit: limit, changed: make(chan struct{})}
}

// write appends a copy of p. It is an execOutput, for pump.
func (l *outputLog) write(stream string, p []byte) {
	data := append([]byte(nil), p...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.seq++
	l.chunks = append(l.chunks, chunk{seq: l.seq, stream: stream, data: data})
	l.size += len(data)
	for l.size > l.limit && len(l.chunks) > 1 {
		l.size -= len(l.chunks[0].data)
		l.chunks[0] = chunk{} // let the data go
		l.chunks = l.chunks[1:]
	}
	l.wake()
}

func (l *outputLog) started(int) {}

// close marks the end of the output.
func (l *outputLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		l.wake()
	}
}

func (l *outputLog) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// since returns the retained chunks with a sequence number above after,
// whether the log is closed, and a channel closed on the next change. The
// chunks' data must not be modified.
func (l *outputLog) since(after int64) (out []chunk, closed bool, changed <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Sequence numbers are dense, so the first wanted chunk is found by
	// arithmetic rather than a search.
	if n := len(l.chunks); n > 0 {
		i := max(int(after-l.chunks[0].seq+1), 0)
		if i < n {
			out = append(out, l.chunks[i:]...)
		}
	}
	return out, l.closed, l.changed
}

// last returns the sequence number of the newest chunk.
func (l *outputLog) last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}
