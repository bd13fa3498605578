package daytona

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// Computer-use recordings: Daytona's /computeruse/recordings routes onto the
// agent's screen recordings (internal/agent/desktop_recording.go), which
// keep each recording as a file and its metadata in the sandbox.

// daytonaRecording is a recording in the SDK's Recording shape.
func daytonaRecording(rec wire.Recording) map[string]any {
	out := map[string]any{"id": rec.ID, "fileName": rec.FileName, "filePath": rec.Path, "status": rec.Status,
		"startTime": rec.StartedAt.Format(time.RFC3339Nano), "sizeBytes": rec.SizeBytes}
	if rec.EndedAt != nil {
		out["endTime"] = rec.EndedAt.Format(time.RFC3339Nano)
		out["durationSeconds"] = rec.DurationSeconds
	}
	return out
}

func (h *Handler) recordingStart(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Label string `json:"label"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	rec, err := agentCall[wire.Recording](h, r, agentapi.RecordingStart, wire.RecordingStartRequest{Label: in.Label})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, daytonaRecording(rec))
	return nil
}

func (h *Handler) recordingStop(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ID string `json:"id"`
	}
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	if in.ID == "" {
		return invalid(wire.CodeInvalidParameter, "id is required: the recording to stop")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	rec, err := agentapi.Call[wire.Recording](r.Context(), c, agentapi.RecordingStop, at(in.ID), nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, daytonaRecording(rec))
	return nil
}

func (h *Handler) recordingList(w http.ResponseWriter, r *http.Request) error {
	list, err := agentCall[[]wire.Recording](h, r, agentapi.RecordingList, nil)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(list))
	for _, rec := range list {
		out = append(out, daytonaRecording(rec))
	}
	writeJSON(w, http.StatusOK, map[string]any{"recordings": out})
	return nil
}

func (h *Handler) recordingGet(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	rec, err := agentapi.Call[wire.Recording](r.Context(), c, agentapi.RecordingGet, at(r.PathValue("rec")), nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, daytonaRecording(rec))
	return nil
}

func (h *Handler) recordingDelete(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.RecordingDelete, at(r.PathValue("rec")), nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) recordingDownload(w http.ResponseWriter, r *http.Request) error {
	// The SDK asks for a stream and, on an error, never reads the answer:
	// its keep-alive connection would hold node open until the server's
	// idle timeout. A closed connection lets it go.
	w.Header().Set("Connection", "close")
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	resp, err := agentapi.Open(r.Context(), c, agentapi.RecordingFile, at(r.PathValue("rec")), nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	for _, k := range []string{"Content-Type", "Content-Disposition"} {
		w.Header().Set(k, resp.Header.Get(k))
	}
	if resp.ContentLength >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	w.WriteHeader(http.StatusOK)
	io.Copy(w, resp.Body)
	return nil
}
