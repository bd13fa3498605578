// Package store persists sandboxes, their events and images.
//
// The store is the truth for what a sandbox should be (docs/architecture.md, invariant 1). An
// implementation must be safe for concurrent use, keep every committed write
// across a crash, and migrate its schema forward without losing data.
//
// Errors: lookups of missing records return an errdefs NotFound error (code
// SANDBOX_NOT_FOUND or IMAGE_NOT_FOUND); a duplicate sandbox name returns an
// errdefs Conflict error with code NAME_TAKEN.
package store

import (
	"context"
	"time"

	"github.com/sbxhq/sbx/wire"
)

// Sandbox is the stored record of a sandbox.
type Sandbox struct {
	ID   string
	Name string // "" when the caller gave none; unique in its team otherwise
	Team string // owner; CreateSandbox stamps the caller's team when ""
	// Pool names the warm pool (of Team) this started instance waits in
	// until a create adopts it; "" for every user's sandbox. A lookup made
	// for a request (a principal in ctx) never finds a pool's instance.
	Pool string

	State  wire.State // stored as its string; sandbox/transitions.go says what each allows
	Reason string     // why it entered State
	Error  string     // message for state "error"
	Spec   Spec

	CreatedAt time.Time
	UpdatedAt time.Time // set by the store on every write
	StartedAt time.Time // zero if never started
	StoppedAt time.Time // zero if not stopped

	// The lifecycle policy's bookkeeping, in columns so that due sandboxes
	// are found with one query (see ListExpiring).
	LastActivityAt time.Time // last recorded activity; zero if none yet
	ExpiresAt      time.Time // next deadline; zero if none
	ExpiresAction  string    // what is due at ExpiresAt: "stop", "archive", "delete"
}

// Spec is what the caller asked for, resolved against defaults and the image.
type Spec struct {
	Image       string            `json:"image"`
	ImageID     string            `json:"imageId"`
	Layers      []string          `json:"layers"` // layer digests, bottom first
	ImageConfig ImageConfig       `json:"imageConfig"`
	Env         map[string]string `json:"env,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	CPU         float64           `json:"cpu"`
	MemoryMiB   int               `json:"memoryMiB"`
	PidsLimit   int               `json:"pidsLimit"`
	DiskMiB     int               `json:"diskMiB,omitempty"` // 0: writes go to the host's data dir
	// DiskDefault says DiskMiB is the daemon's default disk (the create
	// named none), whose size depends on the free space at create.
	DiskDefault bool   `json:"diskDefault,omitempty"`
	Workdir     string `json:"workdir"`
	// Class is "container" (runc; also when empty, as in records made
	// before classes) or "gvisor" (runsc). Parent is the id of the sandbox
	// this one was forked from; Snapshot the snapshot it was created from.
	Class    string `json:"class,omitempty"`
	Parent   string `json:"parent,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`

	// Lifecycle: see policy.go in internal/sandbox. A nil Policy (records
	// made before policies existed) means the defaults.
	Policy        *Policy      `json:"policy,omitempty"`
	Entrypoint    []string     `json:"entrypoint,omitempty"`
	RestartPolicy string       `json:"restartPolicy,omitempty"`
	Archive       *ArchiveInfo `json:"archive,omitempty"` // set while archived

	// Network: "bridge" or "none" ("" in records made before networking
	// existed: none). Egress is the policy of a bridge sandbox.
	Network string  `json:"network,omitempty"`
	Egress  *Egress `json:"egress,omitempty"`

	// Volumes are the named volumes it mounts (kept while archived).
	Volumes []wire.VolumeMount `json:"volumes,omitempty"`
	// VolumeIDs are their ids (package volume), one per Volumes entry, bound
	// at create; none in records made before ids (sandbox/volumes.go).
	VolumeIDs []string `json:"volumeIds,omitempty"`
	// Buckets are its bucket mounts, keys included (never answered). On
	// disk the keys are sealed into SealedBucketKeys (seal.go); a Spec the
	// store returns has them back in Buckets and SealedBucketKeys nil.
	Buckets          []wire.BucketMount `json:"buckets,omitempty"`
	SealedBucketKeys []byte             `json:"sealedBucketKeys,omitempty"`

	// Recovery: the sandbox came back after its host was lost
	// (sandbox/checkpoint.go).
	Recovery *wire.Recovery `json:"recovery,omitempty"`
}

// Policy is a sandbox's lifecycle policy; durations in seconds.
type Policy struct {
	AutoStopSeconds    int       `json:"autoStopSeconds"`            // 0: never idle-stopped
	AutoPauseSeconds   int       `json:"autoPauseSeconds,omitempty"` // 0: never idle-paused; exclusive with AutoStopSeconds
	AutoArchiveSeconds int       `json:"autoArchiveSeconds"`         // > 0
	AutoDeleteSeconds  int       `json:"autoDeleteSeconds"`          // -1: never
	TTLSeconds         int       `json:"ttlSeconds"`                 // 0: none
	TTLFrom            time.Time `json:"ttlFrom,omitempty"`          // when the TTL was set
	Ephemeral          bool      `json:"ephemeral,omitempty"`
	KeepAlive          bool      `json:"keepAlive,omitempty"`
}

// ArchiveInfo locates an archived sandbox's filesystem in the blob store.
type ArchiveInfo struct {
	Key    string    `json:"key"`
	SHA256 string    `json:"sha256"` // of the stored (compressed) bytes
	Size   int64     `json:"size"`
	At     time.Time `json:"at"`
}

// Event records one state change of a sandbox.
type Event struct {
	Seq       int64 // assigned by the store, increasing
	SandboxID string
	// SandboxName is the sandbox's name when the event was recorded; the
	// store fills it in from the record in UpdateSandbox.
	SandboxName string
	Team        string // the sandbox's team; the store fills it in when ""
	Time        time.Time
	State       wire.State
	Reason      string
	Message     string
}

// Image is the stored record of an image.
type Image struct {
	Name      string
	ID        string   // content digest, "sha256:…"
	Layers    []string // layer digests ("sha256:…" of the uncompressed tar), bottom first
	Config    ImageConfig
	Source    string
	SizeBytes int64
	CreatedAt time.Time
	// Team owns the image; PutImage stamps the caller's team when "". Every
	// team sees its own images and team default's (the installation's
	// shared images); only the owner replaces or deletes one.
	Team string
}

// ImageConfig is the part of an image's configuration sbx uses.
// SourceBuild is the Source of an image an sbx build made: the only kind
// whose ENTRYPOINT/CMD a sandbox runs as its main process (see
// internal/sandbox resolveSpec).
const SourceBuild = "build"

type ImageConfig struct {
	Env        []string `json:"env,omitempty"` // KEY=VALUE
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	User       string   `json:"user,omitempty"`
	// Labels are LABELs of a built image (internal/build).
	Labels map[string]string `json:"labels,omitempty"`
}

// Filter selects sandboxes in ListSandboxes. Zero fields match everything.
type Filter struct {
	State  string
	Labels map[string]string // every pair must match
	// UserSandboxes leaves out the instances waiting in warm pools.
	UserSandboxes bool
}

// Store persists sbx state.
type Store interface {
	// CreateSandbox inserts sb. A taken name or id gives a Conflict error.
	CreateSandbox(ctx context.Context, sb *Sandbox) error
	// Every read and write below (and CreateSandbox) is scoped to the team
	// of the principal in ctx (internal/auth): another team's sandbox is
	// not found. The bootstrap admin key and the daemon's own work under a
	// named auth.System scope see every team; a context with neither is
	// refused with ErrNoScope (team.go), never answered for every team.

	// GetSandbox finds a sandbox by id or, failing that, by name.
	GetSandbox(ctx context.Context, idOrName string) (*Sandbox, error)
	// ListSandboxes returns the matching sandboxes, oldest first.
	ListSandboxes(ctx context.Context, f Filter) ([]*Sandbox, error)
	// UpdateSandbox replaces the record with sb.ID and, if ev is not nil,
	// appends ev in the same transaction. It sets sb.UpdatedAt and ev.Seq.
	UpdateSandbox(ctx context.Context, sb *Sandbox, ev *Event) error
	// DeleteSandbox removes the record and its events. Missing is not an error.
	DeleteSandbox(ctx context.Context, id string) error

	// SetDeadline sets LastActivityAt, ExpiresAt and ExpiresAction of the
	// sandbox id, but only while it is in state, and reports whether it
	// was. It leaves UpdatedAt and every other field alone, so it never
	// undoes a concurrent state change.
	SetDeadline(ctx context.Context, id string, state wire.State, lastActivity, expiresAt time.Time, action string) (bool, error)
	// ListExpiring returns up to limit sandboxes that have a deadline,
	// soonest first.
	ListExpiring(ctx context.Context, limit int) ([]*Sandbox, error)
	// AppendEvent appends an event that changes no record, such as the
	// "deleted" event that outlives a deleted sandbox. It sets ev.Seq, and
	// ev.Time to now if zero.
	AppendEvent(ctx context.Context, ev *Event) error
	// PruneEvents removes the events recorded before before of sandboxes
	// that no longer exist (their "deleted" events) and returns how many.
	PruneEvents(ctx context.Context, before time.Time) (int64, error)

	// ListEvents returns up to limit events of a sandbox with Seq > after.
	// An empty sandboxID lists the events of all sandboxes.
	ListEvents(ctx context.Context, sandboxID string, after int64, limit int) ([]Event, error)

	// PutImage inserts or replaces the image with img.Name.
	PutImage(ctx context.Context, img *Image) error
	GetImage(ctx context.Context, name string) (*Image, error)
	ListImages(ctx context.Context) ([]*Image, error)
	// DeleteImage removes the record. Missing gives a NotFound error.
	DeleteImage(ctx context.Context, name string) error

	Close() error
}
