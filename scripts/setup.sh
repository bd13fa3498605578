#!/usr/bin/env bash
# Installs what sbx needs to run from Debian's packages and builds the sbx
# binary. Every program sbx runs must have its package here, and every
# program only the tests run its package here or in scripts/setup-tests.sh
# (which scripts/test.sh runs): internal/doctor TestSetupInstallsEveryProgram
# checks both.
#
#   sudo ./scripts/setup.sh            # packages + /usr/local/bin/sbx, sbx-agent + /usr/local/lib/sbx/runsc
#   sudo ./scripts/setup.sh --deps     # packages only
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: run as root (it installs packages): sudo $0 $*" >&2
	exit 1
fi

# One package a line, with what needs it. No parentheses in the comments:
# internal/doctor's TestSetupInstallsEveryProgram reads this list.
packages=(
	runc runsc         # class container and class gvisor
	busybox-static     # the base image has no libc
	iproute2 nftables  # sandbox networks
	e2fsprogs          # mkfs.ext4 for disk limits and volumes
	util-linux         # unshare for user namespaces
	openssh-client     # ssh, scp, sftp: sbx ssh
	s3fs               # bucket mounts
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup.sh: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v go >/dev/null; then
	echo "setup.sh: Go is not installed; install Go 1.26 or newer (https://go.dev/doc/install) and run again" >&2
	exit 1
fi

[ "${1:-}" = "--deps" ] && exit 0

# -buildvcs=auto: sbx version shows the commit even where GOFLAGS turns stamping off.
# sbx-agent, the small agent every sandbox runs, goes next to sbx, where sbx serve looks.
CGO_ENABLED=0 go build -trimpath -buildvcs=auto -o /usr/local/bin/ ./cmd/sbx ./cmd/sbx-agent
echo "setup.sh: installed /usr/local/bin/sbx and /usr/local/bin/sbx-agent"
# The runsc sbx prefers to Debian's (systrap; see internal/runtime/runsc_find.go).
runsc=$(./scripts/build-runsc.sh)
install -D -m 0755 "$runsc" /usr/local/lib/sbx/runsc.new
mv /usr/local/lib/sbx/runsc.new /usr/local/lib/sbx/runsc
echo "setup.sh: installed /usr/local/lib/sbx/runsc ($(/usr/local/lib/sbx/runsc --version | head -1))"
/usr/local/bin/sbx --version
echo "setup.sh: check the host with: sudo sbx doctor"
