package auth

import "github.com/sbxhq/sbx/wire"

// The scopes besides ScopeAdmin (sdk/teams.go documents each). Every API
// route names the one it needs (internal/api/routes.go).
const (
	ScopeSandboxesWrite Scope = wire.ScopeSandboxesWrite
	ScopeSandboxesRead  Scope = wire.ScopeSandboxesRead
	ScopeExec           Scope = wire.ScopeExec
	ScopeImages         Scope = wire.ScopeImages
	ScopeMetricsRead    Scope = wire.ScopeMetricsRead
	ScopeTeamRead       Scope = wire.ScopeTeamRead
)
