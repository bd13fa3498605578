package auth

import (
	"context"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// A derived credential (an E2B envd token, an SSH access, a dashboard
// session, a preview token) records the id of the API key it was made
// with and asks the key service at every use whether that key still
// stands: revoking or expiring a key ends everything made from it at once.

// KeyLookup returns the current principal of an API key by id.
type KeyLookup interface {
	// LookupKey returns the principal of key id, or an errdefs
	// Unauthorized error when the key is unknown, revoked or expired.
	LookupKey(ctx context.Context, id string) (Principal, error)
}

// LookupKey asks a, when it is a KeyLookup, for the principal of key id.
// An authenticator that cannot answer refuses: a derived credential whose
// key cannot be checked is not honoured.
func LookupKey(ctx context.Context, a Authenticator, id string) (Principal, error) {
	if l, ok := a.(KeyLookup); ok {
		return l.LookupKey(ctx, id)
	}
	return Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "the API key this credential was made with cannot be checked")
}

// LookupKey answers for the bootstrap admin key, which has no revocation:
// what is derived from it lives until it expires on its own or is
// revoked itself (docs/teams.md, "Derived credentials die with their key").
func (t AdminToken) LookupKey(_ context.Context, id string) (Principal, error) {
	if id != Admin.KeyID || t == "" {
		return Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "unknown API key")
	}
	return Admin, nil
}
