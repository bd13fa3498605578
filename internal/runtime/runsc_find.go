package runtime

import (
	"os/exec"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// BundledRunsc is where scripts/setup.sh installs the runsc sbx is built
// and tested with (scripts/build-runsc.sh: a current gVisor from the Go
// module proxy, with the systrap platform). sbx prefers it to Debian 12's
// runsc, a 2022 release on the ptrace platform that is several times
// slower to pause, resume and fork.
const BundledRunsc = "/usr/local/lib/sbx/runsc"

// PackagedRunsc is where the .deb installs the same runsc
// (packaging/cmd/mkdeb): a package never writes below /usr/local.
const PackagedRunsc = "/usr/lib/sbx/runsc"

// OwnRunsc is the path of sbx's own runsc: BundledRunsc if it is installed,
// else PackagedRunsc if that is, else BundledRunsc (where setup.sh puts it).
func OwnRunsc() string { return ownRunsc(BundledRunsc, PackagedRunsc) }

func ownRunsc(bundled, packaged string) string {
	if _, err := exec.LookPath(bundled); err != nil {
		if _, err := exec.LookPath(packaged); err == nil {
			return packaged
		}
	}
	return bundled
}

// FindRunsc returns the runsc binary sbx uses by default: OwnRunsc if it
// is installed, else runsc on PATH (Debian's), with fallback true so the
// caller can warn.
func FindRunsc() (path string, fallback bool, err error) { return findRunsc(OwnRunsc()) }

func findRunsc(bundled string) (path string, fallback bool, err error) {
	if p, err := exec.LookPath(bundled); err == nil {
		return p, false, nil
	}
	p, err := exec.LookPath("runsc")
	if err != nil {
		return "", false, errdefs.Unavailable(wire.CodeRuntimeUnavailable,
			"runsc (gVisor) is not installed: install it with scripts/setup.sh (to %s), or Debian's with `apt-get install runsc`", bundled)
	}
	return p, true, nil
}
