package doctor

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/sbxhq/sbx/internal/version"
)

// VersionInfo is what sbx version prints.
type VersionInfo struct {
	Version    string `json:"version"`              // sbx's semver (internal/version)
	Module     string `json:"module,omitempty"`     // module version the Go toolchain stamped, e.g. a pseudo-version
	Commit     string `json:"commit,omitempty"`     // vcs.revision
	Modified   bool   `json:"modified,omitempty"`   // built from a tree with uncommitted changes
	CommitTime string `json:"commitTime,omitempty"` // vcs.time; Go embeds no build time (builds are reproducible)
	Go         string `json:"go"`
	Runc       string `json:"runc"` // first line of runc --version, or "not found"
	Runsc      string `json:"runsc"`
}

// Version describes this binary (from the build information the Go
// toolchain embeds) and the runc and runsc it would run.
func Version(ctx context.Context, h Host) VersionInfo {
	bi, _ := debug.ReadBuildInfo()
	v := versionOf(bi)
	v.Runc = programVersion(ctx, h, "runc")
	runsc := "runsc" // Debian's, which sbx serve falls back to
	if h.Runsc != "" {
		runsc = h.Runsc // SBX_RUNSC, which serve runs instead
	} else if _, err := h.LookPath(h.BundledRunsc); h.BundledRunsc != "" && err == nil {
		runsc = h.BundledRunsc // what sbx serve runs by default (runtime.FindRunsc), as checkRunsc says
	}
	v.Runsc = programVersion(ctx, h, runsc)
	return v
}

// versionOf reads the module version and VCS stamps of bi (nil: none).
func versionOf(bi *debug.BuildInfo) VersionInfo {
	v := VersionInfo{Version: version.Version, Go: runtime.Version()}
	if bi != nil {
		v.Module = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			case "vcs.time":
				v.CommitTime = s.Value
			}
		}
	}
	return v
}

func programVersion(ctx context.Context, h Host, program string) string {
	path, err := h.LookPath(program)
	if err != nil {
		return "not found"
	}
	out, err := h.Output(ctx, path, "--version")
	if err != nil {
		return path + ": does not run (" + err.Error() + ")"
	}
	return path + ": " + firstLine(out)
}

// commitTime is the time of the commit this binary was built from, or zero.
func commitTime() time.Time {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return time.Time{}
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.time" {
			t, _ := time.Parse(time.RFC3339, s.Value)
			return t
		}
	}
	return time.Time{}
}
