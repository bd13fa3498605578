package wire

import "time"

// Volume is a named filesystem of a fixed size that sandboxes mount at
// create (CreateSandboxRequest.Volumes); several at once, and it outlives
// them.
type Volume struct {
	// The volume's name, unique in its team; what a create's volumes entry names.
	Name string `json:"name"`
	// Its size in MiB; writes past it fail with ENOSPC.
	SizeMiB int `json:"sizeMiB"`
	// How much of it files use now, in MiB.
	UsedMiB int `json:"usedMiB"`
	// When it was created.
	CreatedAt time.Time `json:"createdAt"`
	// UsedBy lists the ids of the sandboxes (in any state, archived too)
	// that mount it.
	UsedBy []string `json:"usedBy"`
	Team   string   `json:"team,omitempty"` // owner: other teams' keys get 404
}

// CreateVolumeRequest is the body of POST /v1/volumes.
type CreateVolumeRequest struct {
	// The new volume's name: 1 to 63 of a-z, 0-9 and '-'.
	Name    string `json:"name"`
	SizeMiB int    `json:"sizeMiB,omitempty"` // 16 to 1048576. Default: 1024.
}

// VolumeMount mounts volume Name at Path (absolute) inside a sandbox.
type VolumeMount struct {
	// The volume to mount.
	Name string `json:"name"`
	// Where it appears inside the sandbox (an absolute path).
	Path string `json:"path"`
	// Mount it read-only. Default: false.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// Backup is a directory of a sandbox packed into the daemon's blob store
// (POST /v1/sandboxes/{id}/backups); restore it into any sandbox.
type Backup struct {
	// The backup's id, for /v1/backups/{backup}.
	ID string `json:"id"`
	// A name for people, given at create.
	Name    string `json:"name,omitempty"`
	Sandbox string `json:"sandbox"` // id of the sandbox it was taken from
	// The directory it was taken from; a restore goes there unless it names another.
	Path      string `json:"path"`
	SizeBytes int64  `json:"sizeBytes"` // compressed
	// The hex SHA-256 of the stored archive; a restore checks it (409 BACKUP_CORRUPT).
	SHA256 string `json:"sha256"`
	// When it was taken.
	CreatedAt time.Time `json:"createdAt"`
	// When it is deleted; absent: kept until deleted.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// CreateBackupRequest is the body of POST /v1/sandboxes/{id}/backups.
type CreateBackupRequest struct {
	Path string `json:"path"` // a directory inside the sandbox
	// A name for people.
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
	// The S3 bucket's name.
	Bucket string `json:"bucket"`
	// Mount only the keys under this prefix (a "directory" of the bucket).
	Prefix string `json:"prefix,omitempty"`
	// Where it appears inside the sandbox (an absolute path).
	Path string `json:"path"`
	// Mount it read-only. Default: false.
	ReadOnly bool   `json:"readOnly,omitempty"`
	Endpoint string `json:"endpoint"`         // http(s)://host[:port]
	Region   string `json:"region,omitempty"` // the S3 region. Default: "us-east-1".
	// Address the bucket as endpoint/bucket rather than bucket.endpoint (MinIO and most self-hosted
	// S3). Default: false.
	PathStyle bool `json:"pathStyle,omitempty"`
	// Write-only: sent at create, kept by the daemon, never answered.
	// The S3 access key id.
	AccessKeyID string `json:"accessKeyId,omitempty"`
	// The S3 secret access key; never answered back.
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
}
