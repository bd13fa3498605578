package sshgw

import (
	"context"
	"errors"
	"io"
	"net/url"
	"sync"

	"github.com/sbxhq/sbx/internal/agentapi"
)

// The agent serves a file as one stream and takes one as one stream, while
// pkg/sftp reads and writes at offsets from several workers at once, in
// any order. fileReader keeps a window of what it streamed so reads that
// arrive out of order are served from it (and a read before the window
// starts the stream again); fileWriter holds writes ahead of the stream
// until the bytes before them have come. Clients write files from start to
// end, so this is all a transfer needs; a write before what was already
// sent is refused.

const (
	readWindow   = 8 << 20  // bytes kept behind the stream's position
	writeAhead   = 64 << 20 // bytes held for writes ahead of the stream
	readChunkMax = 256 << 10
)

type fileReader struct {
	fs   *agentFS
	path string

	mu       sync.Mutex
	body     io.ReadCloser
	winStart int64  // offset of win[0]
	win      []byte // the streamed bytes kept: [winStart, winStart+len(win))
	eof      bool
}

// open starts the stream and skips to off.
func (r *fileReader) open(off int64) error {
	if r.body != nil {
		r.body.Close()
	}
	resp, err := agentapi.Open(r.fs.ctx, r.fs.a, agentapi.GetFile, agentapi.Params{Query: pathQuery(r.path)}, nil, "")
	if err != nil {
		return fsError(err)
	}
	r.body, r.win, r.winStart, r.eof = resp.Body, nil, 0, false
	if off > 0 {
		n, err := io.CopyN(io.Discard, r.body, off)
		r.winStart = n
		if err != nil {
			r.eof = true
		}
	}
	return nil
}

func (r *fileReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if off < r.winStart {
		if err := r.open(off); err != nil {
			return 0, err
		}
	}
	want := off + int64(len(p))
	for r.winStart+int64(len(r.win)) < want && !r.eof {
		buf := make([]byte, min(readChunkMax, int(want-r.winStart-int64(len(r.win)))+readChunkMax))
		n, err := io.ReadFull(r.body, buf)
		r.win = append(r.win, buf[:n]...)
		if err != nil {
			r.eof = true
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return 0, err
			}
		}
		// Keep readWindow bytes, but never those this read still needs.
		// Trimming at twice the window copies each byte about once.
		if drop := min(int64(len(r.win))-readWindow, off-r.winStart); len(r.win) > 2*readWindow && drop > 0 {
			r.win = append([]byte(nil), r.win[drop:]...)
			r.winStart += drop
		}
	}
	if off >= r.winStart+int64(len(r.win)) {
		return 0, io.EOF
	}
	n := copy(p, r.win[off-r.winStart:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *fileReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.body != nil {
		r.body.Close()
	}
	return nil
}

type fileWriter struct {
	pw   *io.PipeWriter
	done chan error

	mu      sync.Mutex
	pos     int64 // bytes sent
	ahead   map[int64][]byte
	aheadSz int
	err     error
	closed  bool
}

// newFileWriter starts the upload of path; the file is there (empty) even
// if nothing is written.
func newFileWriter(f *agentFS, path string) (*fileWriter, error) {
	pr, pw := io.Pipe()
	w := &fileWriter{pw: pw, done: make(chan error, 1), ahead: map[int64][]byte{}}
	go func() {
		resp, err := agentapi.Open(context.WithoutCancel(f.ctx), f.a, agentapi.PutFile,
			agentapi.Params{Query: url.Values{"path": {path}, "parents": {"false"}}}, pr, "application/octet-stream")
		if err == nil {
			resp.Body.Close()
		}
		pr.CloseWithError(errors.New("the upload ended"))
		w.done <- fsError(err)
	}()
	return w, nil
}

func (w *fileWriter) WriteAt(p []byte, off int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.err != nil:
		return 0, w.err
	case off < w.pos:
		w.err = errors.New("sbx sftp writes files from start to end; this client wrote before what it had written")
		return 0, w.err
	case off > w.pos:
		if w.aheadSz+len(p) > writeAhead {
			w.err = errors.New("sbx sftp: writes are too far ahead of the file's end")
			return 0, w.err
		}
		w.ahead[off] = append([]byte(nil), p...)
		w.aheadSz += len(p)
		return len(p), nil
	}
	if err := w.write(p); err != nil {
		return 0, err
	}
	for {
		next, ok := w.ahead[w.pos]
		if !ok {
			return len(p), nil
		}
		delete(w.ahead, w.pos)
		w.aheadSz -= len(next)
		if err := w.write(next); err != nil {
			return 0, err
		}
	}
}

func (w *fileWriter) write(p []byte) error {
	n, err := w.pw.Write(p)
	w.pos += int64(n)
	if err != nil {
		w.err = err
	}
	return err
}

// Close ends the upload and returns its outcome.
func (w *fileWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.err
	}
	w.closed = true
	if len(w.ahead) > 0 && w.err == nil {
		w.err = errors.New("sbx sftp: the file has a hole (a write never came)")
	}
	if w.err != nil {
		w.pw.CloseWithError(w.err)
	} else {
		w.pw.Close()
	}
	w.mu.Unlock()
	if err := <-w.done; err != nil {
		return err
	}
	return w.err
}
