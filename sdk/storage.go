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
	Team   string   `json:"team,omitempty"` // owner: other teams' keys get 404
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

// Backup is a directory of a sandbox packed into the daemon's blob store
// (POST /v1/sandboxes/{id}/backups); restore it into any sandbox.
type Backup struct {
	ID        string     `json:"id"`
	Name      string     `json:"name,omitempty"`
	Sandbox   string     `json:"sandbox"` // id of the sandbox it was taken from
	Path      string     `json:"path"`
	SizeBytes int64      `json:"sizeBytes"` // compressed
	SHA256    string     `json:"sha256"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// CreateBackupRequest is the body of POST /v1/sandboxes/{id}/backups.
type CreateBackupRequest struct {
	Path             string `json:"path"` // a directory inside the sandbox
	Name             string `json:"name,omitempty"`
	ExpiresInSeconds int    `json:"expiresInSeconds,omitempty"` // 0: kept until deleted
}

// RestoreBackupRequest is the body of POST /v1/backups/{id}/restore.
type RestoreBackupRequest struct {
	Sandbox string `json:"sandbox"`        // id or name; started if it is not
	Path    string `json:"path,omitempty"` // missing or empty directory; default the backup's path
}

// BucketMount mounts an S3 bucket, or a prefix of one, at Path inside a
// sandbox (CreateSandboxRequest.Buckets). The daemon mounts it on the host
// with s3fs; the keys stay on the host and are never returned.
type BucketMount struct {
	Bucket    string `json:"bucket"`
	Prefix    string `json:"prefix,omitempty"`
	Path      string `json:"path"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
	Endpoint  string `json:"endpoint"`         // http(s)://host[:port]
	Region    string `json:"region,omitempty"` // default us-east-1
	PathStyle bool   `json:"pathStyle,omitempty"`
	// Write-only: sent at create, kept by the daemon, never answered.
	AccessKeyID     string `json:"accessKeyId,omitempty"`
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
}
