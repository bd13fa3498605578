// Package store persists sandboxes, their events and images.
//
// The store is the truth for what a sandbox should be (DESIGN invariant 1). An
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
)

// Sandbox is the stored record of a sandbox.
type Sandbox struct {
	ID     string
	Name   string // "" when the caller gave none; unique otherwise
	State  string // one of sdk.State
	Reason string // why it entered State
	Error  string // message for state "error"
	Spec   Spec

	CreatedAt time.Time
	UpdatedAt time.Time // set by the store on every write
	StartedAt time.Time // zero if never started
	StoppedAt time.Time // zero if not stopped
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
	Workdir     string            `json:"workdir"`
}

// Event records one state change of a sandbox.
type Event struct {
	Seq       int64 // assigned by the store, increasing
	SandboxID string
	Time      time.Time
	State     string
	Reason    string
	Message   string
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
}

// ImageConfig is the part of an image's configuration sbx uses.
type ImageConfig struct {
	Env        []string `json:"env,omitempty"` // KEY=VALUE
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	User       string   `json:"user,omitempty"`
}

// Filter selects sandboxes in ListSandboxes. Zero fields match everything.
type Filter struct {
	State  string
	Labels map[string]string // every pair must match
}

// Store persists sbx state.
type Store interface {
	// CreateSandbox inserts sb. A taken name or id gives a Conflict error.
	CreateSandbox(ctx context.Context, sb *Sandbox) error
	// GetSandbox finds a sandbox by id or, failing that, by name.
	GetSandbox(ctx context.Context, idOrName string) (*Sandbox, error)
	// ListSandboxes returns the matching sandboxes, oldest first.
	ListSandboxes(ctx context.Context, f Filter) ([]*Sandbox, error)
	// UpdateSandbox replaces the record with sb.ID and, if ev is not nil,
	// appends ev in the same transaction. It sets sb.UpdatedAt and ev.Seq.
	UpdateSandbox(ctx context.Context, sb *Sandbox, ev *Event) error
	// DeleteSandbox removes the record and its events. Missing is not an error.
	DeleteSandbox(ctx context.Context, id string) error

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
