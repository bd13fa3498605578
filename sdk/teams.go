package sdk

import "time"

// Scopes an API key can hold (see README "Keys, teams and quotas").
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
	ID        string    `json:"id"`
	Quotas    Quotas    `json:"quotas"`
	CreatedAt time.Time `json:"createdAt"`
}

// Quotas limit what a team may hold at once; 0 means no limit.
type Quotas struct {
	MaxSandboxes int     `json:"maxSandboxes,omitempty"`
	MaxRunning   int     `json:"maxRunning,omitempty"` // sandboxes with an instance (started, paused, …)
	CPU          float64 `json:"cpu,omitempty"`        // sum of the sandboxes' cpu
	MemoryMiB    int     `json:"memoryMiB,omitempty"`  // sum of the sandboxes' memoryMiB
	DiskMiB      int     `json:"diskMiB,omitempty"`    // sandboxes' diskMiB + volumes' sizes + backups' stored bytes
	MaxSnapshots int     `json:"maxSnapshots,omitempty"`
}

// CreateTeamRequest makes a team (PUT /v1/teams/{id} sets the quotas of an existing one).
type CreateTeamRequest struct {
	ID     string `json:"id"`
	Quotas Quotas `json:"quotas"`
}

// TeamUsage is what a team holds now, against its quotas.
type TeamUsage struct {
	Team      string  `json:"team"`
	Quotas    Quotas  `json:"quotas"`
	Sandboxes int     `json:"sandboxes"`
	Running   int     `json:"running"`
	CPU       float64 `json:"cpu"`
	MemoryMiB int     `json:"memoryMiB"`
	DiskMiB   int     `json:"diskMiB"`
	Snapshots int     `json:"snapshots"`
}

// APIKey describes a key; its secret is shown only once, in CreatedKey.
type APIKey struct {
	ID         string     `json:"id"`
	Name       string     `json:"name,omitempty"`
	Team       string     `json:"team"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	RevokedAt  *time.Time `json:"revokedAt,omitempty"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
}

// CreateKeyRequest asks for a new API key. Team defaults to the caller's.
type CreateKeyRequest struct {
	Name       string   `json:"name,omitempty"`
	Team       string   `json:"team,omitempty"`
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
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	KeyID     string    `json:"keyId"`
	Team      string    `json:"team"`
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	Status    int       `json:"status"`
	Code      Code      `json:"code,omitempty"` // the error code of a failed request
	RequestID string    `json:"requestId,omitempty"`
}

// TeamWebhook is where a team's events are POSTed, signed as the
// operator's webhooks are (X-Sbx-Signature) with Secret. Answers never
// show the secret.
type TeamWebhook struct {
	URL    string `json:"url"`
	Secret string `json:"secret,omitempty"`
}
