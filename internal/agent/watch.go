package agent

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// A watch reports changes under a path as NDJSON WatchEvents, from inotify.
// Events go out in the order the kernel reports them; the only merging is
// of back-to-back writes to one file. A directory that appears is watched
// at once and scanned, so files created in it before its watch existed are
// reported as created; a create the scan reported is not reported again
// when the kernel's own event for it, queued before the scan ended, is read.
//
// The file API's own temporary names (uploadPrefix) are never reported: an
// upload, written to a temporary file and renamed into place, is reported
// as a create (when the file is new) and a write of its final path.

// renameWait is how long a MOVED_FROM waits for its MOVED_TO before it
// counts as a removal (the file left the watched tree).
var renameWait = 20 * time.Millisecond

const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

type watcher struct {
	f         *os.File // the inotify instance
	fd        int
	root      string // the watched directory
	only      string // when a single file is watched: its name in root
	recursive bool
	include   []string
	exclude   []string
	dirs      map[int]string // watch descriptor → directory
	out       *ndjson
	lastWrite string // path of the last write sent, to merge repeats

	// scanned holds the paths a catch-up scan reported as created, until
	// every event queued when that scan ended (scanWindow bytes) is read:
	// a create among them for such a path is the same news twice. Nil
	// outside that window.
	scanned    map[string]bool
	scanWindow int

	mu      sync.Mutex
	stopped bool // the client left or the agent is stopping
}

func (s *server) handleWatch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := s.path(q.Get("path"))
	if err != nil {
		writeError(w, err)
		return
	}
	recursive, err := httpjson.BoolParam(r, "recursive")
	if err != nil {
		writeError(w, err)
		return
	}
	wt := &watcher{recursive: recursive, include: q["include"], exclude: q["exclude"], dirs: map[int]string{}}
	for _, g := range append(q["include"], q["exclude"]...) {
		if _, err := path.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil || g == "" {
			writeError(w, errdefs.Invalid(wire.CodeInvalidGlob, "bad glob pattern %q", g))
			return
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		writeError(w, errdefs.NotFound(wire.CodePathNotFound, "cannot watch %s: it does not exist", p))
		return
	}
	wt.root = p
	if !fi.IsDir() {
		// Watch the directory, filtered to the file, so that a file
		// replaced by rename (as editors save) is still followed.
		wt.root, wt.only, wt.recursive = filepath.Dir(p), filepath.Base(p), false
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		writeError(w, errdefs.Unavailable(wire.CodeWatchLimit, "cannot create a watch: %v", err))
		return
	}
	wt.fd = fd
	wt.f = os.NewFile(uintptr(fd), "inotify")
	defer wt.f.Close()
	if err := wt.addTree(wt.root, false); err != nil {
		writeError(w, err)
		return
	}

	wt.out = startNDJSON(w)
	wt.out.send(wire.WatchEvent{Type: "ready", Path: p, IsDir: fi.IsDir(), Time: time.Now()})
	go func() {
		// An expired read deadline ends the read loop.
		select {
		case <-r.Context().Done():
		case <-s.streamsDone():
		}
		wt.mu.Lock()
		wt.stopped = true
		wt.f.SetReadDeadline(time.Now())
		wt.mu.Unlock()
	}()
	err = wt.run()
	if r.Context().Err() != nil {
		wt.out.stop()
		return
	}
	var body *wire.ErrorBody
	var e *errdefs.Error
	switch {
	case errors.As(err, &e):
		body = &wire.ErrorBody{Code: e.Code, Message: e.Message}
	case errors.Is(err, os.ErrDeadlineExceeded):
		body = &wire.ErrorBody{Code: wire.CodeShuttingDown, Message: "the sandbox is stopping"}
	default:
		body = &wire.ErrorBody{Code: wire.CodeWatchFailed, Message: err.Error()}
	}
	wt.out.finish(wire.WatchEvent{Type: "error", Error: body, Time: time.Now()})
}

// addTree watches dir and, when recursive, every directory below it that
// is not excluded. With report set it also reports what it finds as created
// (for a directory that appeared while its parent was watched).
func (wt *watcher) addTree(dir string, report bool) error {
	if !wt.recursive {
		return wt.addWatch(dir, true)
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && !report {
				return errdefs.NotFound(wire.CodePathNotFound, "cannot watch %s: %v", p, err)
			}
			return nil // vanished meanwhile
		}
		if p != dir {
			if wt.excluded(p) || isUploadTemp(d.Name()) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if report {
				wt.emit("create", p, "", d.IsDir())
				if wt.scanned == nil {
					wt.scanned = map[string]bool{}
				}
				wt.scanned[p] = true
			}
		}
		if !d.IsDir() {
			return nil
		}
		return wt.addWatch(p, p == dir && !report)
	})
}

// addWatch watches one directory. Failing to watch the root is an error;
// a subdirectory that vanished or cannot be read is skipped.
func (wt *watcher) addWatch(dir string, isRoot bool) error {
	wd, err := unix.InotifyAddWatch(wt.fd, dir, watchMask)
	switch {
	case err == nil:
		wt.dirs[wd] = dir
		return nil
	case errors.Is(err, unix.ENOSPC):
		return errdefs.Unavailable(wire.CodeWatchLimit, "cannot watch %s: too many watches (fs.inotify.max_user_watches)", dir)
	case isRoot:
		return errdefs.Invalid(wire.CodeWatchFailed, "cannot watch %s: %v", dir, err)
	}
	return nil
}

// run reads events until the watch ends and returns why.
func (wt *watcher) run() error {
	buf := make([]byte, 64<<10)
	var pending *unix.InotifyEvent // a MOVED_FROM awaiting its MOVED_TO
	var pendingPath string
	var pendingDir bool
	flushPending := func() {
		if pending != nil {
			if !isUploadTemp(pendingPath) {
				wt.emit("remove", pendingPath, "", pendingDir)
			}
			if pendingDir {
				wt.forgetTree(pendingPath)
			}
			pending = nil
		}
	}
	for {
		// The deadline serves both the rename pairing and the end of the
		// watch; mu keeps the first from undoing the second.
		wt.mu.Lock()
		if wt.stopped {
			wt.mu.Unlock()
			return os.ErrDeadlineExceeded
		}
		if pending != nil {
			wt.f.SetReadDeadline(time.Now().Add(renameWait))
		} else {
			wt.f.SetReadDeadline(time.Time{})
		}
		wt.mu.Unlock()
		n, err := wt.f.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			flushPending()
			continue // stopped, or the rename wait is over
		}
		if err != nil {
			return err
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			size := unix.SizeofInotifyEvent + int(ev.Len)
			off += size
			if wt.scanWindow <= 0 {
				wt.scanned = nil // drops a big scan's memory too
			}
			wt.scanWindow -= size
			name := strings.TrimRight(string(nameBytes), "\x00")
			mask := ev.Mask
			isDir := mask&unix.IN_ISDIR != 0

			if mask&unix.IN_Q_OVERFLOW != 0 {
				flushPending()
				wt.out.send(wire.WatchEvent{Type: "overflow", Time: time.Now()})
				continue
			}
			dir, ok := wt.dirs[int(ev.Wd)]
			if mask&unix.IN_IGNORED != 0 {
				delete(wt.dirs, int(ev.Wd))
				if dir == wt.root {
					flushPending()
					return errdefs.NotFound(wire.CodeWatchRootGone, "the watched path %s was removed or moved away", wt.root)
				}
				continue
			}
			if !ok {
				continue
			}
			if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
				if dir == wt.root {
					flushPending()
					if wt.only == "" {
						wt.emit("remove", wt.root, "", true)
					}
					return errdefs.NotFound(wire.CodeWatchRootGone, "the watched path %s was removed or moved away", wt.root)
				}
				continue // reported by the parent's watch
			}
			p := filepath.Join(dir, name)
			if isUploadTemp(name) && mask&unix.IN_MOVED_FROM == 0 {
				continue // an upload under way: reported when renamed
			}
			if pending != nil && !(mask&unix.IN_MOVED_TO != 0 && ev.Cookie == pending.Cookie) {
				flushPending()
			}
			if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) == 0 {
				delete(wt.scanned, p) // gone or changed: a later create is new
			}
			switch {
			case mask&unix.IN_MOVED_FROM != 0:
				e := *ev
				pending, pendingPath, pendingDir = &e, p, isDir
			case mask&unix.IN_MOVED_TO != 0:
				if pending != nil && isUploadTemp(pendingPath) { // an upload lands
					isNew := strings.HasPrefix(filepath.Base(pendingPath), uploadNewPrefix)
					wt.emitUpload(p, isNew && !wt.seenByScan(p))
					pending = nil
				} else if pending != nil { // paired: a rename inside the tree
					old := pendingPath
					pending = nil
					wt.emitRename(old, p, isDir)
					if isDir && !wt.renameTree(old, p) && wt.recursive && !wt.excluded(p) {
						// It moved before its create was handled, so it
						// was never watched: catch up under the new name.
						if err := wt.scan(p, n-off); err != nil {
							return err
						}
					}
				} else if !wt.seenByScan(p) {
					// Report what a directory holds too: one that arrives
					// whole (a tar upload) is news throughout.
					if err := wt.created(p, isDir, n-off); err != nil {
						return err
					}
				}
			case mask&unix.IN_CREATE != 0:
				if !wt.seenByScan(p) {
					if err := wt.created(p, isDir, n-off); err != nil {
						return err
					}
				}
			case mask&unix.IN_MODIFY != 0:
				wt.emit("write", p, "", isDir)
			case mask&unix.IN_DELETE != 0:
				wt.emit("remove", p, "", isDir)
			}
		}
	}
}

// created reports p as created and, for a directory in a recursive watch,
// watches and scans it. unread is how many bytes of the last read are
// still to be handled.
func (wt *watcher) created(p string, isDir bool, unread int) error {
	wt.emit("create", p, "", isDir)
	if isDir && wt.recursive && !wt.excluded(p) {
		return wt.scan(p, unread)
	}
	return nil
}

// scan watches a directory that appeared and reports what it holds. Every
// event queued when it ends may repeat one of its creates.
func (wt *watcher) scan(dir string, unread int) error {
	err := wt.addTree(dir, true)
	queued, _ := unix.IoctlGetInt(wt.fd, unix.TIOCINQ) // FIONREAD: bytes queued
	wt.scanWindow = unread + queued
	return err
}

// seenByScan reports (once) whether a scan already reported p as created.
func (wt *watcher) seenByScan(p string) bool {
	seen := wt.scanned[p]
	delete(wt.scanned, p)
	return seen
}

// isUploadTemp reports whether the last element of p is a temporary name
// of the file API.
func isUploadTemp(p string) bool {
	return strings.HasPrefix(filepath.Base(p), uploadPrefix)
}

// emitUpload reports an upload landing at p. Its write is one event of
// its own, never merged with writes before or after it.
func (wt *watcher) emitUpload(p string, created bool) {
	if !wt.wanted(p) {
		return
	}
	if created {
		wt.send(wire.WatchEvent{Type: "create", Path: p, Time: time.Now()})
	}
	wt.out.send(wire.WatchEvent{Type: "write", Path: p, Time: time.Now()})
	wt.lastWrite = ""
}

// emitRename reports a rename, or only its visible half when one side is
// filtered out.
func (wt *watcher) emitRename(old, p string, isDir bool) {
	oldOK, newOK := wt.wanted(old), wt.wanted(p)
	switch {
	case oldOK && newOK:
		wt.send(wire.WatchEvent{Type: "rename", Path: p, OldPath: old, IsDir: isDir, Time: time.Now()})
	case oldOK:
		wt.send(wire.WatchEvent{Type: "remove", Path: old, IsDir: isDir, Time: time.Now()})
	case newOK:
		wt.send(wire.WatchEvent{Type: "create", Path: p, IsDir: isDir, Time: time.Now()})
	}
}

func (wt *watcher) emit(typ, p, old string, isDir bool) {
	if !wt.wanted(p) {
		return
	}
	wt.send(wire.WatchEvent{Type: typ, Path: p, OldPath: old, IsDir: isDir, Time: time.Now()})
}

func (wt *watcher) send(ev wire.WatchEvent) {
	// Writes to one file come in bursts; one event per burst is enough, and
	// merging only back-to-back repeats cannot reorder anything.
	if ev.Type == "write" {
		if ev.Path == wt.lastWrite {
			return
		}
		wt.lastWrite = ev.Path
	} else {
		wt.lastWrite = ""
	}
	wt.out.send(ev)
}

// wanted applies the single-file filter and the include/exclude globs.
func (wt *watcher) wanted(p string) bool {
	if wt.only != "" {
		return filepath.Dir(p) == wt.root && filepath.Base(p) == wt.only
	}
	if wt.excluded(p) {
		return false
	}
	if len(wt.include) == 0 {
		return true
	}
	rel, _ := filepath.Rel(wt.root, p)
	for _, g := range wt.include {
		if globMatch(g, rel) {
			return true
		}
	}
	return false
}

// excluded reports whether p or a directory between it and the root
// matches an exclude glob.
func (wt *watcher) excluded(p string) bool {
	if len(wt.exclude) == 0 {
		return false
	}
	rel, err := filepath.Rel(wt.root, p)
	if err != nil || rel == "." {
		return false
	}
	for {
		for _, g := range wt.exclude {
			if globMatch(g, rel) {
				return true
			}
		}
		parent := filepath.Dir(rel)
		if parent == "." {
			return false
		}
		rel = parent
	}
}

// renameTree updates the paths of watched directories under old and
// reports whether old itself was watched.
func (wt *watcher) renameTree(old, p string) bool {
	found := false
	for wd, d := range wt.dirs {
		if d == old {
			wt.dirs[wd] = p
			found = true
		} else if rest, ok := strings.CutPrefix(d, old+"/"); ok {
			wt.dirs[wd] = p + "/" + rest
		}
	}
	return found
}

// forgetTree drops the watches of a directory that left the tree.
func (wt *watcher) forgetTree(dir string) {
	for wd, d := range wt.dirs {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			unix.InotifyRmWatch(wt.fd, uint32(wd))
			delete(wt.dirs, wd)
		}
	}
}

// globMatch matches a slash-separated relative path: a pattern without "/"
// matches the last element; otherwise the whole path, where "**" stands
// for any number of elements.
func globMatch(pattern, rel string) bool {
	rel = filepath.ToSlash(rel)
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(rel))
		return ok
	}
	return matchParts(strings.Split(pattern, "/"), strings.Split(rel, "/"))
}

func matchParts(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if matchParts(pat[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], parts[0]); !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}
