package sdk

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// Screen recordings of a sandbox's desktop: the agent records the X display
// with ffmpeg (x11grab, H.264 in MP4) into a file in the sandbox, under
// DesktopRecordingDir with a JSON file of its metadata beside it, so the
// list survives a restart of the agent or the daemon. Routes:
// …/desktop/recordings (start, list), …/desktop/recordings/{recording}
// (get, delete), …/stop, …/file (the video).

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
