package wire

import "time"

// CreateSecretRequest is the body of POST /v1/secrets. Name: 1 to 64 of
// A-Z, a-z, 0-9, '_', '-', '.'; Value at most 16 KiB. The value is kept
// encrypted and never returned.
type CreateSecretRequest struct {
	// The secret's name, unique in the team; inject rules name it. A secret of that name is replaced.
	Name string `json:"name"`
	// The value the proxy adds to requests; stored encrypted, never answered back.
	Value string `json:"value"`
	SecretHosts
}

// SecretHosts says where a secret may be sent: 1 to 32 hosts such as
// "api.example.com" or "*.example.com", optionally with ":port" (without,
// 443 for HTTPS and 80 for HTTP), never "*". HTTPS only unless AllowHTTP.
// Inject rules for other hosts are refused, and the proxy checks every
// request's scheme, host and port before it adds the value.
type SecretHosts struct {
	// Where the secret may be sent: 1 to 32 hosts ("api.example.com", "*.example.com"), optionally
	// with ":port"; never "*".
	Hosts []string `json:"hosts"`
	// Allow plain HTTP to these hosts too (else HTTPS only). Default: false.
	AllowHTTP bool `json:"allowHttp,omitempty"`
}

// SecretInfo is what the API tells about a secret: never its value.
// Hosts is empty for a secret made before secrets had hosts: it is
// injected nowhere until they are set (PUT /v1/secrets/{name}/hosts).
type SecretInfo struct {
	// The secret's name.
	Name string `json:"name"`
	// The team that owns it.
	Team string `json:"team"`
	Size int    `json:"size"` // of the value, in bytes
	// When it was created or last replaced.
	CreatedAt time.Time `json:"createdAt"`
	SecretHosts
}
