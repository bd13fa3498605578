package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/wire"
)

// The plumbing of one interpreter: its output pumps and its frame channel.

// runOutput receives what a run produces: begin once the run has its
// context, then output and results as they come. write is called from two
// goroutines at once (one per stream) and must not keep p.
type runOutput interface {
	begin()
	write(stream string, p []byte)
	result(r wire.CodeResult)
}

// outPump copies one output pipe of an interpreter to the run in progress, or
// discards it between runs (a background job's late output). Every read and
// its delivery happen under mu, so drain can take mu and know that all
// output read so far has been delivered, then empty the pipe itself.
type outPump struct {
	stream string
	f      *os.File
	rc     syscall.RawConn

	mu   sync.Mutex
	sink runOutput // nil: discard
	buf  []byte
}

func newOutPump(stream string, f *os.File) (*outPump, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &outPump{stream: stream, f: f, rc: rc, buf: make([]byte, 32<<10)}, nil
}

// loop reads until the pipe reports EOF or is closed.
func (p *outPump) loop() {
	for {
		done := false
		err := p.rc.Read(func(fd uintptr) bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			n, err := unix.Read(int(fd), p.buf)
			if err == unix.EAGAIN || err == unix.EINTR {
				return false // wait until readable
			}
			if n > 0 {
				p.deliver(p.buf[:n])
			} else {
				done = true // EOF or a read error
			}
			return true
		})
		if err != nil || done {
			return
		}
	}
}

// deliver hands p to the sink; p.mu is held.
func (p *outPump) deliver(b []byte) {
	if p.sink != nil {
		p.sink.write(p.stream, b)
	}
}

func (p *outPump) attach(out runOutput) {
	p.mu.Lock()
	p.sink = out
	p.mu.Unlock()
}

// drain delivers everything already written to the pipe. A driver sends a
// frame only after the writes that came before it returned, so draining
// before handling a frame keeps output and results in the order they were
// made, and draining after "done" collects all of a run's output.
func (p *outPump) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainLocked()
}

func (p *outPump) drainLocked() {
	p.rc.Control(func(fd uintptr) {
		for {
			n, err := unix.Read(int(fd), p.buf)
			if err == unix.EINTR {
				continue
			}
			if n <= 0 || err != nil {
				return // EAGAIN: empty
			}
			p.deliver(p.buf[:n])
		}
	})
}

// drainAndDetach drains the pipe, then stops delivering to the run.
func (p *outPump) drainAndDetach() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainLocked()
	p.sink = nil
}

// driverFrame is one message from a driver on fd 4.
type driverFrame struct {
	Type      string          `json:"type"` // ready, result, error, done
	Seq       int64           `json:"seq"`
	Main      bool            `json:"main"`
	Data      json.RawMessage `json:"data"` // result: {mime: data}
	Name      string          `json:"name"`
	Value     string          `json:"value"`
	Traceback string          `json:"traceback"`
	ExitCode  *int            `json:"exitCode"` // bash: the status of the run
}

// maxDriverFrame bounds one frame (a result with a large image is a few MiB).
const maxDriverFrame = 64 << 20

var errFrameTooLarge = errors.New("driver frame over 64 MiB")

// readFrames reads JSON lines from r and passes each frame to deliver until
// EOF. A line that is not a frame is skipped; user code that writes to fd 4
// on purpose can confuse its own context, nothing else.
func readFrames(r io.Reader, deliver func(driverFrame)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxDriverFrame {
			return errFrameTooLarge
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return err
		}
		var f driverFrame
		if json.Unmarshal(bytes.TrimSpace(line), &f) == nil && f.Type != "" {
			deliver(f)
		}
		line = line[:0]
		if cap(line) > 1<<20 {
			line = nil // do not keep a large image's buffer for good
		}
	}
}
