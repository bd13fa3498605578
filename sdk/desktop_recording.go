package sdk

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Screen recordings of a sandbox's desktop: the agent records the X display
// with ffmpeg (x11grab, H.264 in MP4) into a file in the sandbox, under
// DesktopRecordingDir with a JSON file of its metadata beside it, so the
// list survives a restart of the agent or the daemon. Routes:
// …/desktop/recordings (start, list), …/desktop/recordings/{recording}
// (get, delete), …/stop, …/file (the video).

// DesktopRecordingDir is where recordings and their metadata are kept in the sandbox.
const DesktopRecordingDir = "/var/lib/sbx/recordings"

// Recording states.
const (
	RecordingActive    = "recording" // ffmpeg runs
	RecordingCompleted = "completed" // stopped; the file is a whole video
	RecordingFailed    = "failed"    // ffmpeg ended without a video, or the agent stopped while recording
)

// RecordingStartRequest is the body of POST …/desktop/recordings.
type RecordingStartRequest struct {
	// Part of the file's name (letters, digits, - and _ are kept); default "recording".
	Label string `json:"label,omitempty"`
}

// Recording is one screen recording.
type Recording struct {
	// Its id, for …/desktop/recordings/{recording}.
	ID string `json:"id"`
	// The label it was started with.
	Label string `json:"label,omitempty"`
	// The video file's name.
	FileName string `json:"fileName"`
	// The video file's path in the sandbox.
	Path string `json:"path"`
	// "recording", "completed" or "failed".
	Status string `json:"status"`
	// When it started.
	StartedAt time.Time `json:"startedAt"`
	// When it ended; absent while recording.
	EndedAt *time.Time `json:"endedAt,omitempty"`
	// How long it ran, once ended.
	DurationSeconds float64 `json:"durationSeconds,omitempty"`
	// The file's size in bytes.
	SizeBytes int64 `json:"sizeBytes"`
}

// StartRecording starts recording the desktop's screen.
func (c *Client) StartRecording(ctx context.Context, idOrName string, req RecordingStartRequest) (*Recording, error) {
	return desktopDo[Recording](c, ctx, http.MethodPost, idOrName, "/recordings", req)
}

// ListRecordings lists the sandbox's recordings, oldest first.
func (c *Client) ListRecordings(ctx context.Context, idOrName string) ([]Recording, error) {
	list, err := desktopDo[[]Recording](c, ctx, http.MethodGet, idOrName, "/recordings", nil)
	if err != nil {
		return nil, err
	}
	return *list, nil
}

// GetRecording returns a recording.
func (c *Client) GetRecording(ctx context.Context, idOrName, id string) (*Recording, error) {
	if err := checkName("recording id", id); err != nil {
		return nil, err
	}
	return desktopDo[Recording](c, ctx, http.MethodGet, idOrName, "/recordings/"+url.PathEscape(id), nil)
}

// StopRecording stops a recording and returns it once its file is finished.
func (c *Client) StopRecording(ctx context.Context, idOrName, id string) (*Recording, error) {
	if err := checkName("recording id", id); err != nil {
		return nil, err
	}
	return desktopDo[Recording](c, ctx, http.MethodPost, idOrName, "/recordings/"+url.PathEscape(id)+"/stop", nil)
}

// DeleteRecording deletes a recording and its file (stopping it if it runs).
func (c *Client) DeleteRecording(ctx context.Context, idOrName, id string) error {
	if err := checkName("recording id", id); err != nil {
		return err
	}
	return c.desktopCall(ctx, http.MethodDelete, idOrName, "/recordings/"+url.PathEscape(id), nil, nil)
}

// RecordingFile opens a finished recording's video (MP4); close it.
func (c *Client) RecordingFile(ctx context.Context, idOrName, id string) (io.ReadCloser, error) {
	if err := checkName("sandbox id or name", idOrName); err != nil {
		return nil, err
	}
	if err := checkName("recording id", id); err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: sandboxPath(idOrName, "/desktop/recordings/"+url.PathEscape(id)+"/file")})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
