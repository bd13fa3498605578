package store

import (
	"context"
	"time"

	"github.com/sbxhq/sbx/wire"
)

// Lease is an address of the sandbox network held by the running instance
// of one sandbox. A sandbox holds at most one lease and an address belongs to
// at most one sandbox, so two instances never share an address, even across
// daemon restarts.
type Lease struct {
	SandboxID string
	IP        string // e.g. "10.88.0.2"
	CreatedAt time.Time
}

// Port is a port of a sandbox exposed through the daemon's preview proxy.
type Port struct {
	SandboxID string
	Port      int
	Public    bool   // reachable without a key or token
	Token     string // the preview token that grants access to this port
	CreatedBy string // id of the API key that exposed it; "" before schema 9
	CreatedAt time.Time
}

// NetworkStore persists address leases and exposed ports. Both belong to a
// sandbox: deleting the sandbox record deletes them.
//
// Errors: CreateLease gives a Conflict (code ADDRESS_TAKEN) when the address
// or the sandbox already has a lease; CreatePort gives a Conflict (code
// PORT_EXISTS) when the port is already exposed; both give a NotFound (code
// SANDBOX_NOT_FOUND) for an unknown sandbox. GetLease, GetPort and DeletePort
// give a NotFound (LEASE_NOT_FOUND, PORT_NOT_FOUND) for a missing record.
type NetworkStore interface {
	CreateLease(ctx context.Context, l *Lease) error
	GetLease(ctx context.Context, sandboxID string) (*Lease, error)
	ListLeases(ctx context.Context) ([]Lease, error)
	// DeleteLease releases the sandbox's lease. Missing is not an error.
	DeleteLease(ctx context.Context, sandboxID string) error

	CreatePort(ctx context.Context, p *Port) error
	GetPort(ctx context.Context, sandboxID string, port int) (*Port, error)
	// ListPorts returns a sandbox's exposed ports in port order; an empty
	// sandboxID lists the ports of every sandbox.
	ListPorts(ctx context.Context, sandboxID string) ([]Port, error)
	DeletePort(ctx context.Context, sandboxID string, port int) error
}

// Egress is a sandbox's egress policy as stored in its Spec. Mode is one of
// "allow-all", "block-all", "allow-list", "deny-list"; CIDRs and Domains are
// the list's entries, normalised (see package network).
type Egress struct {
	Mode    string   `json:"mode"`
	CIDRs   []string `json:"cidrs,omitempty"`
	Domains []string `json:"domains,omitempty"`
	// HTTP is the policy's http section, checked (see package network).
	HTTP *wire.HTTPEgress `json:"http,omitempty"`
}
