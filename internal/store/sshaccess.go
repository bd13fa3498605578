package store

import (
	"context"
	"time"
)

// SSHAccess lets SSH clients into one sandbox through the daemon's SSH
// gateway: either a token (the SSH user name; only its sha256 is kept) or a
// public key (the user name is then the sandbox's id or name). It acts for
// the team and key that created it.
type SSHAccess struct {
	ID        string // "ssh-…"
	SandboxID string
	TokenHash string   // hex sha256 of the token; "" for a public key
	PublicKey string   // authorized_keys form; "" for a token
	Team      string   // of the principal that created it
	CreatedBy string   // key id of that principal
	Scopes    []string // that principal's scopes: the gateway acts with them
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never (public keys only)
}

// SSHAccessStore persists SSH access. Records belong to a sandbox: deleting
// the sandbox deletes them.
//
// Errors: CreateSSHAccess gives a NotFound (SANDBOX_NOT_FOUND) for an
// unknown sandbox; SSHAccessByTokenHash and DeleteSSHAccess a NotFound
// (SSH_ACCESS_NOT_FOUND) for a missing record.
type SSHAccessStore interface {
	CreateSSHAccess(ctx context.Context, a *SSHAccess) error
	SSHAccessByTokenHash(ctx context.Context, hash string) (*SSHAccess, error)
	// ListSSHAccess returns a sandbox's records, oldest first, expired
	// ones included.
	ListSSHAccess(ctx context.Context, sandboxID string) ([]SSHAccess, error)
	// DeleteSSHAccess removes the record id of the sandbox.
	DeleteSSHAccess(ctx context.Context, sandboxID, id string) error
	// DeleteExpiredSSHAccess removes the records that expired before t.
	DeleteExpiredSSHAccess(ctx context.Context, t time.Time) (int64, error)
}
