#!/usr/bin/env bash
# Builds runsc, gVisor's runtime, from the Go module proxy and prints the
# binary's path. Debian 12's runsc (2022) has only the slow ptrace platform
# and waits for the host's init to reap at every `runsc delete`; this one has
# systrap. The gVisor version is the one packaging/runsc/go.mod requires.
#
# A plain `go install` of runsc compiles the sandbox's and the gofer's seccomp
# filters at every start and restore (gVisor's Bazel build precompiles them);
# this build precompiles the ones sbx runs (packaging/runsc/precompile), on a
# copy of gVisor's source with one file added
# (packaging/runsc/patches/boot_filter_config_sbx.go.in). A cross build
# (GOARCH other than the host's) cannot run the precompiler and leaves the
# filters to run time.
#
# It is cached in $SBX_RUNSC_CACHE (default /var/cache/sbx/runsc), keyed by
# the content of packaging/runsc, this script, the Go version and GOARCH, so
# a second run costs nothing:
#
#   SBX_RUNSC=$(./scripts/build-runsc.sh)
#
# scripts/setup.sh installs it where sbx looks first (/usr/local/lib/sbx/runsc);
# scripts/release.sh ships it. Needs Go and the Go module proxy.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
pkg=$repo/packaging/runsc
version=$(sed -n 's/^require gvisor.dev\/gvisor \(v[^ ]*\)$/\1/p' "$pkg/go.mod")
[ -n "$version" ] || { echo "build-runsc: no gVisor version in $pkg/go.mod" >&2; exit 1; }
arch=${GOARCH:-$(go env GOHOSTARCH)}
key=$( (cd "$repo" && cat scripts/build-runsc.sh packaging/runsc/go.mod packaging/runsc/go.sum packaging/runsc/precompile/*.go packaging/runsc/patches/*; go version; echo "$arch") | sha256sum | cut -c1-12)
cache=${SBX_RUNSC_CACHE:-/var/cache/sbx/runsc}
bin="$cache/$version-$arch-$key/runsc"
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "build-runsc: building gvisor.dev/gvisor/runsc@$version for $arch" >&2
# Nothing from the caller's Go settings: the build depends on the inputs of
# the key alone (scripts/release.sh checks it is reproducible).
export CGO_ENABLED=0 GOOS=linux GOFLAGS= GOAMD64=v1 GOARM64=v8.0 GOEXPERIMENT=
cp -r "$pkg/go.mod" "$pkg/go.sum" "$pkg/precompile" "$tmp/"
cd "$tmp"
src=$(GOARCH= go mod download -json gvisor.dev/gvisor | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
cp -r "$src" gvisor
chmod -R u+w gvisor
go mod edit -replace gvisor.dev/gvisor=./gvisor
if [ "$arch" = "$(go env GOHOSTARCH)" ]; then
	cp "$pkg/patches/boot_filter_config_sbx.go.in" gvisor/runsc/boot/filter/config/zz_sbx_precompile.go
	echo "build-runsc: precompiling seccomp filters" >&2
	GOARCH= go run ./precompile -boot gvisor/runsc/boot/filter/filter_precompiled.go \
		-gofer gvisor/runsc/fsgofer/filter/filter_precompiled.go >&2
fi
# The -X is what gVisor's own build stamps: runsc --version says which it is
# (not VERSION_MISSING).
GOARCH=$arch go build -trimpath -ldflags="-buildid= -X gvisor.dev/gvisor/runsc/version.version=$version" \
	-o runsc.new gvisor.dev/gvisor/runsc >&2
mkdir -p "$(dirname "$bin")"
mv runsc.new "$bin" # atomic: a concurrent reader sees the whole binary or none
echo "$bin"
