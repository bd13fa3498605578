package wire

import "time"

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
