package sandbox

import "github.com/sbxhq/sbx/sdk"

// ValidateCreate checks a create request as Create does, for a surface
// that hands it to another host (the Kubernetes gateway) and must refuse
// bad input before anything is made.
func ValidateCreate(req *sdk.CreateSandboxRequest) error { return validateCreate(req) }

// NewID returns a fresh sandbox id, as Create makes one.
func NewID() string { return newID() }
