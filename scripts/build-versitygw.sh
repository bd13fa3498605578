#!/usr/bin/env bash
# Builds versitygw, the S3 server the storage tests run against (Apache-2.0;
# MinIO's server is AGPL, so not that one), from the Go module proxy and
# prints the binary's path. The binary is cached in $SBX_VERSITYGW_CACHE
# (default /var/cache/sbx/versitygw), keyed by version, so a second run costs
# nothing:
#
#   SBX_VERSITYGW=$(./scripts/build-versitygw.sh)
#
# Needs Go and the Go module proxy.
set -euo pipefail
version=${SBX_VERSITYGW_VERSION:-v1.8.0}
cache=${SBX_VERSITYGW_CACHE:-/var/cache/sbx/versitygw}
bin="$cache/$version/versitygw"
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "build-versitygw: building github.com/versity/versitygw/cmd/versitygw@$version" >&2
# A static binary: the tests run it on the host, nothing else needs it.
CGO_ENABLED=0 GOBIN="$tmp/bin" GOFLAGS=-trimpath go install "github.com/versity/versitygw/cmd/versitygw@$version" >&2
mkdir -p "$cache/$version"
mv "$tmp/bin/versitygw" "$bin.new"
mv "$bin.new" "$bin" # atomic: a concurrent reader sees the whole binary or none
echo "$bin"
