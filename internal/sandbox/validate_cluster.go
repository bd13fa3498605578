package sandbox

import (
	"time"

	"github.com/sbxhq/sbx/wire"
)

// ValidateCreate checks a create request as Create does, for a surface
// that hands it to another host (the Kubernetes gateway) and must refuse
// bad input before anything is made.
func ValidateCreate(req *wire.CreateSandboxRequest) error { return validateCreate(req) }

// NewID returns a fresh sandbox id, as Create makes one.
func NewID() string { return newID() }

// ValidateUpdate checks a PATCH as Update does, without a sandbox: for the
// Kubernetes gateway, which keeps the settings of a sandbox no host has
// (suspended) in its Sandbox object.
func ValidateUpdate(req wire.UpdateSandboxRequest) error {
	p := defaultPolicy(ClassContainer)
	if err := applyPolicy(&p, req, time.Now()); err != nil {
		return err
	}
	if req.Env != nil {
		if _, err := changedEnv(nil, req.Env); err != nil {
			return err
		}
	}
	if _, _, err := resizeOf(req); err != nil {
		return err
	}
	if req.Labels != nil {
		return validateLabels(req.Labels)
	}
	return nil
}
