package wire

import "time"

// CreateSSHAccessRequest is the body of POST /v1/sandboxes/{id}/ssh-access:
// a token that expires (the SSH user name), or, with PublicKey, a key that
// logs in as the sandbox's id.
type CreateSSHAccessRequest struct {
	// ExpiresInSeconds is how long the access lasts: at most 30 days;
	// default 3600 (an hour) for a token, 30 days for a public key. Either
	// ends sooner when the API key that made it is revoked or expires.
	ExpiresInSeconds int64 `json:"expiresInSeconds,omitempty"`
	// PublicKey, in authorized_keys form ("ssh-ed25519 AAAA… comment"),
	// grants that key instead of making a token.
	PublicKey string `json:"publicKey,omitempty"`
}

// SSHAccess is a way into a sandbox over the daemon's SSH gateway. Token and
// Command are only in the answer that creates a token; the daemon keeps
// just the token's hash.
type SSHAccess struct {
	// The access's id, for DELETE …/ssh-access/{access}.
	ID string `json:"id"`
	// The sandbox it opens.
	SandboxID string `json:"sandboxId"`
	Token     string `json:"token,omitempty"`   // the SSH user name
	Command   string `json:"command,omitempty"` // ready to paste: ssh -p PORT TOKEN@HOST
	// Host and Port are where the gateway listens; HostKey is its public
	// key for known_hosts ("ssh-ed25519 AAAA…"). In the create answer.
	Host string `json:"host,omitempty"`
	// The port the SSH gateway listens on (create answer).
	Port int `json:"port,omitempty"`
	// The gateway's public key for known_hosts, e.g. "ssh-ed25519 AAAA…" (create answer).
	HostKey string `json:"hostKey,omitempty"`
	// The registered key, in authorized_keys form (key access only).
	PublicKey   string `json:"publicKey,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"` // SHA256:… of PublicKey
	// When the access was made.
	CreatedAt time.Time `json:"createdAt"`
	// When it stops working.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}
