package wire

import "time"

// Network modes of a sandbox (CreateSandboxRequest.Network).
const (
	NetworkBridge = "bridge" // own network namespace on the sbx bridge, NAT, DNS (default)
	NetworkNone   = "none"   // loopback only
)

// Egress policy modes (EgressPolicy.Mode).
const (
	EgressAllowAll  = "allow-all"
	EgressBlockAll  = "block-all"
	EgressAllowList = "allow-list" // only the listed CIDRs and domains
	EgressDenyList  = "deny-list"  // everything but the listed CIDRs and domains
)

// EgressPolicy says what a sandbox may connect to. CIDRs are IPv4 addresses
// or prefixes; Domains are DNS names, "example.com" for that name only or
// "*.example.com" for every name below it. Domain rules follow the name's
// addresses as the sandbox resolves it through sbx's DNS server.
type EgressPolicy struct {
	// "allow-all", "block-all", "allow-list" (only cidrs and domains) or "deny-list" (all but cidrs
	// and domains).
	Mode string `json:"mode"`
	// IPv4 addresses or prefixes ("10.0.0.0/8") the list mode applies to.
	CIDRs []string `json:"cidrs,omitempty"`
	// DNS names the list mode applies to: "example.com" for that name, "*.example.com" for every name
	// below it.
	Domains []string `json:"domains,omitempty"`
	// HTTP, when set, sends the sandbox's HTTP and HTTPS through the
	// daemon's egress proxy under these rules (egresshttp.go).
	HTTP *HTTPEgress `json:"http,omitempty"`
}

// NetworkInfo is a sandbox's network: GET /v1/sandboxes/{id}/network.
type NetworkInfo struct {
	// "bridge" (own namespace, NAT, DNS) or "none" (loopback only).
	Mode    string `json:"mode"`
	Address string `json:"address,omitempty"` // the sandbox's IPv4 address while it runs (bridge)
	Gateway string `json:"gateway,omitempty"` // also its DNS server
	// The egress policy of a bridge sandbox.
	Egress *EgressPolicy `json:"egress,omitempty"`
}

// ExposePortRequest is the body of POST /v1/sandboxes/{id}/ports.
type ExposePortRequest struct {
	// The TCP port inside the sandbox to expose (1 to 65535).
	Port   int  `json:"port"`
	Public bool `json:"public,omitempty"` // reachable without a key or token
}

// Port is an exposed port of a sandbox and how to reach it.
type Port struct {
	// The TCP port inside the sandbox.
	Port int `json:"port"`
	// Reachable without a key or token.
	Public  bool   `json:"public"`
	URL     string `json:"url"`               // the preferred preview URL: HostURL if set, else PathURL
	HostURL string `json:"hostUrl,omitempty"` // http://{port}-{sandbox}.{preview-domain}/ when the daemon has one
	PathURL string `json:"pathUrl"`           // {daemon}/v1/sandboxes/{id}/ports/{port}/
	// Token opens a private port: header X-Sbx-Preview-Token, or the query
	// parameter sbx_token (which also sets a cookie for the browser).
	Token string `json:"token"`
	// When it was exposed.
	CreatedAt time.Time `json:"createdAt"`
}

// SignPortRequest is the body of POST /v1/sandboxes/{id}/signed-urls.
type SignPortRequest struct {
	Port             int `json:"port"`                       // an exposed port
	ExpiresInSeconds int `json:"expiresInSeconds,omitempty"` // how long the URL works, at most 30 days. Default: 3600.
}

// SignedURL is a preview URL that works without a key or token until it expires.
type SignedURL struct {
	// The preview URL, with its signature in the query; works without a key or token until expiresAt.
	URL string `json:"url"`
	// When the signature stops working.
	ExpiresAt time.Time `json:"expiresAt"`
}
