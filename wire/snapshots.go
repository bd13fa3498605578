package wire

import "time"

// Snapshot is a saved sandbox new sandboxes start from: its filesystem, and
// for class gvisor optionally its memory (every process, running).
type Snapshot struct {
	// The snapshot's name, unique in the team; a create's snapshot field names it.
	Name    string `json:"name"`
	Sandbox string `json:"sandbox"` // id of the sandbox it was taken from
	// The class of the sandbox it was taken from; sandboxes made from it have the same.
	Class     string `json:"class"`
	Image     string `json:"image"`     // the image under the snapshot's own layer
	Memory    bool   `json:"memory"`    // sandboxes made from it start with its processes running
	SizeBytes int64  `json:"sizeBytes"` // its own layer plus the memory image
	// When it was taken.
	CreatedAt time.Time `json:"createdAt"`
	// ExpiresInSeconds is how long it lives unused: each sandbox created from
	// it moves ExpiresAt to then plus this. 0: never expires.
	ExpiresInSeconds int `json:"expiresInSeconds"`
	// When it is deleted unless used first; absent: never.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// CreateSnapshotRequest is the body of POST /v1/sandboxes/{id}/snapshots.
type CreateSnapshotRequest struct {
	// The snapshot's name: 1 to 63 of a-z, 0-9, '.', '_' and '-'.
	Name string `json:"name"`
	// IncludeMemory saves every process and its memory too (class gvisor,
	// started or paused sandboxes). A started sandbox is paused for the
	// save and resumed after it.
	IncludeMemory    bool `json:"includeMemory,omitempty"`
	ExpiresInSeconds int  `json:"expiresInSeconds,omitempty"` // 0: never
}

// ForkRequest is the body of POST /v1/sandboxes/{id}/fork.
type ForkRequest struct {
	// Name of the fork; with Count > 1 the forks are Name-1 … Name-N. Empty:
	// unnamed forks.
	Name  string `json:"name,omitempty"`
	Count int    `json:"count,omitempty"` // how many forks to make. Default: 1.
}

// ForkResult is the answer of a fork.
type ForkResult struct {
	// The new sandboxes, started.
	Forks  []Sandbox `json:"forks"`
	Memory bool      `json:"memory"` // the forks' processes were copied running (class gvisor)
	// Why the processes were not copied, when memory is false.
	Note string `json:"note,omitempty"`
}
