package sdk

import "time"

// Volume is a named filesystem of a fixed size that sandboxes mount at
// create (CreateSandboxRequest.Volumes); several at once, and it outlives
// them.
type Volume struct {
	Name      string    `json:"name"`
	SizeMiB   int       `json:"sizeMiB"`
	UsedMiB   int       `json:"usedMiB"`
	CreatedAt time.Time `json:"createdAt"`
	// UsedBy lists the ids of the sandboxes (in any state, archived too)
	// that mount it.
	UsedBy []string `json:"usedBy"`
}

// CreateVolumeRequest is the body of POST /v1/volumes.
type CreateVolumeRequest struct {
	Name    string `json:"name"`
	SizeMiB int    `json:"sizeMiB,omitempty"` // default 1024; 16 to 1048576
}

// VolumeMount mounts volume Name at Path (absolute) inside a sandbox.
type VolumeMount struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}
