package agent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Screen recordings: ffmpeg records the desktop's X display (x11grab) into
// an MP4 under wire.DesktopRecordingDir. What a recording is lives on disk
// (<id>.json beside the video); the agent's memory holds only the ffmpeg
// processes that run now. ffmpeg stops on SIGINT, which makes it finish
// the file (an MP4 needs its index written at the end).

const (
	recordingRate     = 10 // frames per second
	recordingStopWait = 15 * time.Second
	maxActive         = 4    // recordings at once
	maxListed         = 1000 // recordings a list reads
)

// recordings is the agent's running recordings.
type recordings struct {
	mu     sync.Mutex
	active map[string]*activeRecording
}

// activeRecording is one ffmpeg that runs.
type activeRecording struct {
	pid      int
	stopping bool          // stop sent SIGINT: its exit is the end asked for
	finished chan struct{} // closed once its metadata says how it ended
}

var recordingIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

func recordingMetaPath(id string) string {
	return filepath.Join(wire.DesktopRecordingDir, id+".json")
}

// readRecording reads a recording's metadata; one on disk as recording that
// no ffmpeg of this agent runs was cut off (the agent restarted) and is
// failed.
func (s *server) readRecording(id string) (wire.Recording, error) {
	if !recordingIDPattern.MatchString(id) {
		return wire.Recording{}, errdefs.NotFound(wire.CodeRecordingNotFound, "no recording %q", id)
	}
	b, err := os.ReadFile(recordingMetaPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return wire.Recording{}, errdefs.NotFound(wire.CodeRecordingNotFound, "no recording %q", id)
	} else if err != nil {
		return wire.Recording{}, errdefs.Internal(err, "read recording %s", id)
	}
	var rec wire.Recording
	if err := json.Unmarshal(b, &rec); err != nil {
		return wire.Recording{}, errdefs.Internal(err, "recording %s: its metadata does not parse", id)
	}
	if rec.Status == wire.RecordingActive {
		s.recordings.mu.Lock()
		_, runs := s.recordings.active[id]
		s.recordings.mu.Unlock()
		if !runs {
			rec.Status = wire.RecordingFailed
		}
	}
	if fi, err := os.Stat(rec.Path); err == nil {
		rec.SizeBytes = fi.Size()
	}
	return rec, nil
}

func writeRecording(rec wire.Recording) error {
	b, _ := json.Marshal(rec)
	tmp := recordingMetaPath(rec.ID) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return errdefs.Internal(err, "write recording metadata")
	}
	if err := os.Rename(tmp, recordingMetaPath(rec.ID)); err != nil {
		return errdefs.Internal(err, "write recording metadata")
	}
	return nil
}

var labelUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func (s *server) handleRecordingStart(w http.ResponseWriter, r *http.Request) {
	var req wire.RecordingStartRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	rec, err := s.startRecording(req.Label)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, rec)
}

func (s *server) startRecording(label string) (wire.Recording, error) {
	run, err := s.desktop.running()
	if err != nil {
		return wire.Recording{}, err
	}
	if _, err := lookPath("ffmpeg", "/", os.Environ()); err != nil {
		return wire.Recording{}, errdefs.Invalid(wire.CodeDesktopUnavailable, "this image has no ffmpeg, which recordings need (scripts/build-desktop-image.sh builds an image with it)")
	}
	if err := os.MkdirAll(wire.DesktopRecordingDir, 0o755); err != nil {
		return wire.Recording{}, errdefs.Internal(err, "create %s", wire.DesktopRecordingDir)
	}
	rs := &s.recordings
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.active) >= maxActive {
		return wire.Recording{}, errdefs.Conflict(wire.CodeRecordingActive, "%d recordings run already: stop one first", maxActive)
	}
	var b [8]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	name := labelUnsafe.ReplaceAllString(label, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "recording"
	}
	now := time.Now().UTC()
	rec := wire.Recording{ID: id, Label: label, Status: wire.RecordingActive, StartedAt: now,
		FileName: fmt.Sprintf("%s_%s_%s.mp4", name, now.Format("20060102_150405"), id[:8])}
	rec.Path = filepath.Join(wire.DesktopRecordingDir, rec.FileName)
	if err := writeRecording(rec); err != nil {
		return wire.Recording{}, err
	}
	argv := []string{"ffmpeg", "-nostdin", "-loglevel", "error", "-y",
		"-f", "x11grab", "-draw_mouse", "1", "-framerate", strconv.Itoa(recordingRate),
		"-video_size", fmt.Sprintf("%dx%d", run.width, run.height), "-i", wire.DesktopDisplay,
		"-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2", // H.264 in 4:2:0 wants even sizes
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", rec.Path}
	c, err := s.prepare(&wire.ExecRequest{Cmd: argv, Cwd: "/", Env: desktopEnv()})
	if err != nil {
		os.Remove(recordingMetaPath(id))
		return wire.Recording{}, err
	}
	log, err := os.Create(filepath.Join(desktopLogDir, "recording-"+id+".log"))
	if err != nil {
		os.Remove(recordingMetaPath(id))
		return wire.Recording{}, errdefs.Internal(err, "create the recording's log")
	}
	defer log.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return wire.Recording{}, errdefs.Internal(err, "open %s", os.DevNull)
	}
	defer null.Close()
	proc, err := s.start(c, null, log, log)
	if err != nil {
		os.Remove(recordingMetaPath(id))
		return wire.Recording{}, err
	}
	if rs.active == nil {
		rs.active = map[string]*activeRecording{}
	}
	a := &activeRecording{pid: proc.pid, finished: make(chan struct{})}
	rs.active[id] = a
	go s.recordingEnded(rec, a, proc)
	return rec, nil
}

// recordingEnded waits for a recording's ffmpeg and writes how it ended.
func (s *server) recordingEnded(rec wire.Recording, a *activeRecording, proc *child) {
	<-proc.done
	s.forgetGroup(proc.pid)
	end := time.Now().UTC()
	rec.EndedAt = &end
	rec.DurationSeconds = end.Sub(rec.StartedAt).Seconds()
	rec.Status = wire.RecordingFailed
	s.recordings.mu.Lock()
	stopping := a.stopping
	s.recordings.mu.Unlock()
	if fi, err := os.Stat(rec.Path); err == nil && fi.Size() > 0 && stopping {
		rec.Status = wire.RecordingCompleted
		rec.SizeBytes = fi.Size()
	}
	if err := writeRecording(rec); err != nil {
		logf("recording %s: %v", rec.ID, err)
	}
	s.recordings.mu.Lock()
	delete(s.recordings.active, rec.ID)
	s.recordings.mu.Unlock()
	close(a.finished)
}

// stopRecording ends a recording: SIGINT so ffmpeg finishes the file,
// SIGKILL if it takes longer than recordingStopWait.
func (s *server) stopRecording(id string) (wire.Recording, error) {
	rec, err := s.readRecording(id)
	if err != nil {
		return wire.Recording{}, err
	}
	s.recordings.mu.Lock()
	a := s.recordings.active[id]
	if a != nil {
		a.stopping = true
	}
	s.recordings.mu.Unlock()
	if a == nil {
		return wire.Recording{}, errdefs.Conflict(wire.CodeRecordingNotActive, "recording %s is not running (it is %s)", id, rec.Status)
	}
	syscall.Kill(-a.pid, syscall.SIGINT)
	select {
	case <-a.finished:
	case <-time.After(recordingStopWait):
		syscall.Kill(-a.pid, syscall.SIGKILL)
		<-a.finished
	}
	return s.readRecording(id)
}

func (s *server) handleRecordingStop(w http.ResponseWriter, r *http.Request) {
	rec, err := s.stopRecording(r.PathValue("recording"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

func (s *server) handleRecordingList(w http.ResponseWriter, r *http.Request) {
	names, _ := filepath.Glob(filepath.Join(wire.DesktopRecordingDir, "*.json"))
	slices.Sort(names)
	out := []wire.Recording{}
	for _, n := range names {
		if len(out) == maxListed {
			break
		}
		if rec, err := s.readRecording(filepath.Base(n[:len(n)-len(".json")])); err == nil {
			out = append(out, rec)
		}
	}
	slices.SortFunc(out, func(a, b wire.Recording) int { return a.StartedAt.Compare(b.StartedAt) })
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleRecordingGet(w http.ResponseWriter, r *http.Request) {
	rec, err := s.readRecording(r.PathValue("recording"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// handleRecordingDelete deletes a recording's file and metadata, stopping
// it first if it runs.
func (s *server) handleRecordingDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("recording")
	rec, err := s.readRecording(id)
	if err == nil && rec.Status == wire.RecordingActive {
		_, err = s.stopRecording(id)
		if errdefs.CodeOf(err) == wire.CodeRecordingNotActive { // it ended meanwhile
			err = nil
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if err := os.Remove(rec.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		writeError(w, errdefs.Internal(err, "delete %s", rec.Path))
		return
	}
	os.Remove(recordingMetaPath(id))
	w.WriteHeader(http.StatusNoContent)
}

// handleRecordingFile sends a finished recording's video.
func (s *server) handleRecordingFile(w http.ResponseWriter, r *http.Request) {
	rec, err := s.readRecording(r.PathValue("recording"))
	if err == nil && rec.Status == wire.RecordingActive {
		err = errdefs.Conflict(wire.CodeRecordingActive, "recording %s is still running: stop it first", rec.ID)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	f, err := os.Open(rec.Path)
	if err != nil {
		writeError(w, errdefs.NotFound(wire.CodeFileNotFound, "recording %s has no video file (%v)", rec.ID, err))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		writeError(w, errdefs.Internal(err, "stat %s", rec.Path))
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", rec.FileName))
	io.Copy(w, f)
}
