package wire

import "time"

// Scopes an API key can hold (docs/teams.md).
const (
	ScopeAdmin          = "admin"           // everything, including keys, teams and the audit log
	ScopeSandboxesWrite = "sandboxes:write" // create, change, start, stop, delete, snapshot, fork
	ScopeSandboxesRead  = "sandboxes:read"  // get, list, events, logs, stats
	ScopeExec           = "exec"            // the toolbox: exec, files, processes, sessions, PTYs, code
	ScopeImages         = "images"          // import, pull, delete images
	ScopeMetricsRead    = "metrics:read"    // GET /metrics
	ScopeTeamRead       = "team:read"       // GET its own team and its usage
)

// Scopes lists every scope.
func Scopes() []string {
	return []string{ScopeAdmin, ScopeSandboxesWrite, ScopeSandboxesRead, ScopeExec, ScopeImages, ScopeMetricsRead, ScopeTeamRead}
}

// Team owns sandboxes, snapshots, events and API keys. Daytona calls it an
// organization, E2B a team.
type Team struct {
	// The team's id: what keys, sandboxes and other objects name as their team.
	ID string `json:"id"`
	// The team's limits; 0 in a field: no limit.
	Quotas Quotas `json:"quotas"`
	// When the team was created.
	CreatedAt time.Time `json:"createdAt"`
}

// Quotas limit what a team may hold at once; 0 means no limit.
type Quotas struct {
	// The most sandboxes the team may have, in any state; 0: no limit.
	MaxSandboxes int     `json:"maxSandboxes,omitempty"`
	MaxRunning   int     `json:"maxRunning,omitempty"` // sandboxes with an instance (started, paused, …)
	CPU          float64 `json:"cpu,omitempty"`        // sum of the sandboxes' cpu
	MemoryMiB    int     `json:"memoryMiB,omitempty"`  // sum of the sandboxes' memoryMiB
	DiskMiB      int     `json:"diskMiB,omitempty"`    // sandboxes' diskMiB + volumes' sizes + backups' stored bytes
	// The most snapshots the team may have; 0: no limit.
	MaxSnapshots int `json:"maxSnapshots,omitempty"`
}

// CreateTeamRequest makes a team (PUT /v1/teams/{id} sets the quotas of an existing one).
type CreateTeamRequest struct {
	// The new team's id: 1 to 63 of a-z, 0-9 and '-'.
	ID string `json:"id"`
	// The team's limits; 0 in a field: no limit.
	Quotas Quotas `json:"quotas"`
}

// TeamUsage is what a team holds now, against its quotas.
type TeamUsage struct {
	// The team's id.
	Team string `json:"team"`
	// The team's limits, to compare with; 0: no limit.
	Quotas Quotas `json:"quotas"`
	// Sandboxes the team has now, in any state (maxSandboxes).
	Sandboxes int `json:"sandboxes"`
	// Its sandboxes with an instance: started, paused and in between (maxRunning).
	Running int `json:"running"`
	// The sum of its sandboxes' cpu (quota cpu).
	CPU float64 `json:"cpu"`
	// The sum of its sandboxes' memoryMiB (quota memoryMiB).
	MemoryMiB int `json:"memoryMiB"`
	// Its sandboxes' diskMiB, volumes' sizes and backups' stored bytes, in MiB (quota diskMiB).
	DiskMiB int `json:"diskMiB"`
	// Snapshots the team has (maxSnapshots).
	Snapshots int `json:"snapshots"`
}

// APIKey describes a key; its secret is shown only once, in CreatedKey.
type APIKey struct {
	// The key's id; the part of the key before its secret, and what DELETE /v1/keys/{key} takes.
	ID string `json:"id"`
	// A name for people to tell keys apart.
	Name string `json:"name,omitempty"`
	// The team the key acts for.
	Team string `json:"team"`
	// What the key may do (sandboxes:read, sandboxes:write, exec, images, admin, …).
	Scopes []string `json:"scopes"`
	// When the key was made.
	CreatedAt time.Time `json:"createdAt"`
	// When the key stops working; absent: never.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// When the key was revoked; a revoked key is refused.
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	// When a request last used the key.
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
}

// CreateKeyRequest asks for a new API key. Team defaults to the caller's.
type CreateKeyRequest struct {
	// A name for people to tell keys apart.
	Name string `json:"name,omitempty"`
	// The team the key acts for (root admin only). By default the caller's team.
	Team string `json:"team,omitempty"`
	// What the key may do: the scopes the bearer security scheme lists.
	Scopes     []string `json:"scopes"`
	TTLSeconds int      `json:"ttlSeconds,omitempty"` // 0: never expires
}

// CreatedKey is a new key with its secret: store it now, it is not shown again.
type CreatedKey struct {
	APIKey
	Key string `json:"key"` // "sbx_<id>_<secret>": send as "Authorization: Bearer <key>"
}

// AuditEntry is one mutating request as the audit log keeps it.
type AuditEntry struct {
	// The entry's number, increasing; GET /v1/audit?after=seq pages on.
	Seq int64 `json:"seq"`
	// When the request was answered.
	Time time.Time `json:"time"`
	// The id of the key that made the request.
	KeyID string `json:"keyId"`
	// The key's team.
	Team string `json:"team"`
	// The request's HTTP method.
	Method string `json:"method"`
	// The request's path.
	Path string `json:"path"`
	// The HTTP status of the answer.
	Status int  `json:"status"`
	Code   Code `json:"code,omitempty"` // the error code of a failed request
	// The request's X-Request-Id, to match it with the daemon's log.
	RequestID string `json:"requestId,omitempty"`
}

// TeamWebhook is where a team's events are POSTed, signed as the
// operator's webhooks are (X-Sbx-Signature) with Secret. Answers never
// show the secret.
type TeamWebhook struct {
	// Where the team's events are POSTed as JSON (http or https).
	URL string `json:"url"`
	// Signs each delivery: X-Sbx-Signature is sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">, with
	// X-Sbx-Timestamp; never answered back.
	Secret string `json:"secret,omitempty"`
}
