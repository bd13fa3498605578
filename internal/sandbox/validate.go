package sandbox

import (
	"crypto/rand"
	"encoding/base32"
	"path"
	"regexp"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

var (
	nameRe     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	envKeyRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	labelKeyRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$`)
)

// Limits bound what a caller may ask for.
const (
	maxCPU        = 64
	maxMemoryMiB  = 1 << 20 // 1 TiB
	minMemoryMiB  = 16
	maxPids       = 1 << 22
	minPids       = 16
	maxLabels     = 64
	maxLabelValue = 256
	maxEnv        = 256
	maxEnvValue   = 32 << 10
)

// ValidateName checks a caller-chosen sandbox name.
func ValidateName(name string) error {
	if !nameRe.MatchString(name) {
		return errdefs.Invalid(wire.CodeInvalidName, "invalid sandbox name %q: use 1 to 63 characters of a-z, 0-9 and '-', starting with a letter or digit", name)
	}
	if strings.HasPrefix(name, "sbx-") {
		return errdefs.Invalid(wire.CodeInvalidName, "invalid sandbox name %q: the prefix \"sbx-\" is reserved for ids", name)
	}
	return nil
}

// validateCreate checks a create request before anything is made.
func validateCreate(req *wire.CreateSandboxRequest) error {
	if req.Name != "" {
		if err := ValidateName(req.Name); err != nil {
			return err
		}
	}
	if err := validateLimits(req.CPU, req.MemoryMiB, req.PidsLimit); err != nil {
		return err
	}
	switch {
	case req.DiskMiB < 0 || req.DiskMiB > maxDiskMiB || (req.DiskMiB != 0 && req.DiskMiB < minDiskMiB):
		return errdefs.Invalid(wire.CodeInvalidDisk, "diskMiB must be between %d and %d, got %d", minDiskMiB, maxDiskMiB, req.DiskMiB)
	}
	if req.Workdir != "" && (!path.IsAbs(req.Workdir) || strings.ContainsRune(req.Workdir, 0) || path.Clean(req.Workdir) != req.Workdir) {
		return errdefs.Invalid(wire.CodeInvalidWorkdir, "workdir must be a clean absolute path such as /workspace, got %q", req.Workdir)
	}
	if len(req.Env) > maxEnv {
		return errdefs.Invalid(wire.CodeInvalidEnv, "at most %d environment variables", maxEnv)
	}
	for k, v := range req.Env {
		if !envKeyRe.MatchString(k) {
			return errdefs.Invalid(wire.CodeInvalidEnv, "invalid environment variable name %q: use letters, digits and '_', not starting with a digit", k)
		}
		if len(v) > maxEnvValue || strings.ContainsRune(v, 0) {
			return errdefs.Invalid(wire.CodeInvalidEnv, "environment variable %s: value too long or contains a NUL byte", k)
		}
	}
	return validateLabels(req.Labels)
}

// validateLimits checks cpu, memory and pids limits (create and update); 0
// means "not given".
func validateLimits(cpu float64, memoryMiB, pidsLimit int) error {
	switch {
	case cpu < 0 || cpu > maxCPU:
		return errdefs.Invalid(wire.CodeInvalidCPU, "cpu must be between 0.01 and %d cores, got %g", maxCPU, cpu)
	case cpu != 0 && cpu < 0.01:
		return errdefs.Invalid(wire.CodeInvalidCPU, "cpu must be at least 0.01 cores, got %g", cpu)
	case memoryMiB < 0 || memoryMiB > maxMemoryMiB || (memoryMiB != 0 && memoryMiB < minMemoryMiB):
		return errdefs.Invalid(wire.CodeInvalidMemory, "memoryMiB must be between %d and %d, got %d", minMemoryMiB, maxMemoryMiB, memoryMiB)
	case pidsLimit < 0 || pidsLimit > maxPids || (pidsLimit != 0 && pidsLimit < minPids):
		return errdefs.Invalid(wire.CodeInvalidPidsLimit, "pidsLimit must be between %d and %d, got %d", minPids, maxPids, pidsLimit)
	}
	return nil
}

// validateLabels checks a sandbox's labels (create and update).
func validateLabels(labels map[string]string) error {
	if len(labels) > maxLabels {
		return errdefs.Invalid(wire.CodeInvalidLabel, "at most %d labels", maxLabels)
	}
	for k, v := range labels {
		if !labelKeyRe.MatchString(k) {
			return errdefs.Invalid(wire.CodeInvalidLabel, "invalid label key %q: use up to 63 characters of letters, digits, '.', '_', '/' and '-'", k)
		}
		if len(v) > maxLabelValue || strings.ContainsAny(v, "\x00\n") {
			return errdefs.Invalid(wire.CodeInvalidLabel, "label %s: value longer than %d characters or contains a control character", k, maxLabelValue)
		}
	}
	return nil
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns a fresh sandbox id: "sbx-" and 16 random base32 characters (80 bits).
func newID() string {
	b := make([]byte, 10)
	rand.Read(b)
	return "sbx-" + idEncoding.EncodeToString(b)
}
