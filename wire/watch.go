package wire

import "time"

// WatchEvent is one line of a watch stream. Type is "ready" (the watch is
// set up), "create", "write", "remove", "rename" (Path is the new name,
// OldPath the old), "overflow" (the kernel dropped events), "heartbeat" or
// "error" (the watch ended).
type WatchEvent struct {
	// "ready" (watching began), "create", "write", "remove", "rename" (path, oldPath), "overflow"
	// (events were lost), "heartbeat" or "error" (the stream ends).
	Type string `json:"type"`
	// The path that changed, absolute.
	Path string `json:"path,omitempty"`
	// Where it was before ("rename"), when known.
	OldPath string `json:"oldPath,omitempty"`
	// The path is a directory.
	IsDir bool `json:"isDir,omitempty"`
	// When the change was seen.
	Time time.Time `json:"time,omitzero"`
	// What failed ("error").
	Error *ErrorBody `json:"error,omitempty"`
}
