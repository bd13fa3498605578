#!/usr/bin/env bash
# Builds runsc, gVisor's runtime, from the Go module proxy and prints the
# binary's path. Debian 12's runsc (2022) has only the slow ptrace platform
# and waits for the host's init to reap at every `runsc delete`; this one has
# systrap. It is cached in $SBX_RUNSC_CACHE (default /var/cache/sbx/runsc),
# keyed by version, so a second run costs nothing:
#
#   SBX_RUNSC=$(./scripts/build-runsc.sh)
#
# scripts/setup.sh installs it where sbx looks first (/usr/local/lib/sbx/runsc).
# Needs Go and the Go module proxy.
set -euo pipefail
version=${SBX_RUNSC_VERSION:-v0.0.0-20260905035102-160fafc42237}
cache=${SBX_RUNSC_CACHE:-/var/cache/sbx/runsc}
bin="$cache/$version/runsc"
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "build-runsc: building gvisor.dev/gvisor/runsc@$version" >&2
# gVisor's own builds are static and pure Go (CGO_ENABLED=0).
CGO_ENABLED=0 GOBIN="$tmp/bin" GOFLAGS=-trimpath go install "gvisor.dev/gvisor/runsc@$version" >&2
mkdir -p "$cache/$version"
mv "$tmp/bin/runsc" "$bin.new"
mv "$bin.new" "$bin" # atomic: a concurrent reader sees the whole binary or none
echo "$bin"
