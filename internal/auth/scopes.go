package auth

import "github.com/sbxhq/sbx/sdk"

// The scopes besides ScopeAdmin (sdk/teams.go documents each). Every API
// route names the one it needs (internal/api/routes.go).
const (
	ScopeSandboxesWrite Scope = sdk.ScopeSandboxesWrite
	ScopeSandboxesRead  Scope = sdk.ScopeSandboxesRead
	ScopeExec           Scope = sdk.ScopeExec
	ScopeImages         Scope = sdk.ScopeImages
	ScopeMetricsRead    Scope = sdk.ScopeMetricsRead
	ScopeTeamRead       Scope = sdk.ScopeTeamRead
)
