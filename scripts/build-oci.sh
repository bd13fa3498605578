#!/usr/bin/env bash
# Builds the OCI image archives of sbx for Kubernetes (deploy/kubernetes)
# and prints their paths, host image first:
#
#   ./scripts/build-oci.sh [OUTDIR]      # default OUTDIR: dist/oci
#
#   sbx-host_VERSION_linux_ARCH.oci.tar     ghcr.io/sbxhq/sbx-host:VERSION
#       sbx, sbx-agent (/usr/local/bin), sbx's runsc (/usr/local/lib/sbx/runsc),
#       and Debian 12's runc, nftables, iproute2, e2fsprogs, busybox-static,
#       util-linux and mount with the shared libraries they need
#   sbx-gateway_VERSION_linux_ARCH.oci.tar  ghcr.io/sbxhq/sbx-gateway:VERSION
#       sbx alone (static)
#
# Load one with `docker load -i FILE` or `ctr -n k8s.io images import FILE`
# (docs/kubernetes/deploy.md). packaging/cmd/mkoci writes them with
# go-containerregistry, reproducibly: the same binaries, packages and
# SOURCE_DATE_EPOCH give the same bytes.
#
# The binaries: those in $SBX_OCI_BIN (sbx, sbx-agent, runsc; scripts/release.sh
# passes its own) or else built from this working tree (CGO_ENABLED=0) with
# runsc from scripts/build-runsc.sh. SBX_OCI_ARCH (default: this machine's
# dpkg architecture; another needs `dpkg --add-architecture` and
# $SBX_OCI_BIN) picks the packages. SOURCE_DATE_EPOCH defaults to HEAD's
# commit time. The .deb files come from the Debian archive this machine's apt
# uses (apt-get download), kept in $SBX_DEB_CACHE (default /var/cache/sbx/debs,
# named by version); mkoci caches the Debian layer in $SBX_OCI_CACHE (default
# /var/cache/sbx/oci) by the packages' hash, so only the first build unpacks them.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "build-oci: $*" >&2; }
die() { log "$*"; exit 1; }

out=$(realpath -m "${1:-dist/oci}")
arch=${SBX_OCI_ARCH:-$(dpkg --print-architecture)}
debs=${SBX_DEB_CACHE:-/var/cache/sbx/debs}
cache=${SBX_OCI_CACHE:-/var/cache/sbx/oci}
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' internal/version/version.go)
[ -n "$version" ] || die "no Version in internal/version/version.go"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
# What sbx serve runs (internal/doctor/programs.go): unshare is util-linux's.
roots="runc nftables iproute2 e2fsprogs busybox-static util-linux mount"

work=$(mktemp -d /var/tmp/sbx-oci.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$debs" "$work/bin"

bin=${SBX_OCI_BIN:-}
if [ -z "$bin" ]; then
	[ "$arch" = "$(go env GOARCH)" ] || die "SBX_OCI_ARCH=$arch needs its binaries in SBX_OCI_BIN"
	bin=$work/bin
	log "building sbx and sbx-agent of this tree"
	CGO_ENABLED=0 go build -trimpath -ldflags=-buildid= -o "$bin/" ./cmd/sbx ./cmd/sbx-agent
	cp "$(./scripts/build-runsc.sh)" "$bin/runsc"
fi
for b in sbx sbx-agent runsc; do
	[ -x "$bin/$b" ] || die "$bin/$b is missing"
done

# The pool mkoci picks from: the roots and everything they depend on (a
# superset: mkoci keeps only the packages whose libraries are needed).
# Alternatives (libsystemd0 | libelogind0) are both listed: libelogind0
# is dropped so the library comes from the package Debian installs.
# libatm1 is a Recommends of iproute2 that its tc ATM plugin links.
pool=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
	--no-replaces --no-enhances $(printf "%s:$arch " $roots libatm1) 2>/dev/null |
	grep -v '^[ <]' | sed 's/:.*//' | grep -vx libelogind0 | sort -u)
files=()
fetch=()
while read -r pkg ver parch; do
	f="$debs/${pkg}_${ver//:/%3a}_${parch}.deb"
	files+=("$f")
	[ -s "$f" ] || fetch+=("$pkg:$arch=$ver")
done < <(apt-cache show --no-all-versions $(printf "%s:$arch " $pool) |
	awk '/^Package:/{p=$2} /^Version:/{v=$2} /^Architecture:/{a=$2} /^$/{if(p!="")print p, v, a; p=""}')
if [ ${#fetch[@]} -gt 0 ]; then
	log "downloading ${#fetch[@]} packages into $debs"
	(cd "$debs" && apt-get download -q "${fetch[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
fi
for f in "${files[@]}"; do
	[ -s "$f" ] || die "apt-get download did not give $f"
done

go build -o "$work/mkoci" ./packaging/cmd/mkoci
labels=(-label "org.opencontainers.image.version=$version" -label "org.opencontainers.image.licenses=Apache-2.0"
	-label "org.opencontainers.image.source=https://github.com/sbxhq/sbx")
host=$out/sbx-host_${version}_linux_${arch}.oci.tar
gateway=$out/sbx-gateway_${version}_linux_${arch}.oci.tar
log "sbx-host $version ($arch)"
"$work/mkoci" -name "ghcr.io/sbxhq/sbx-host:$version" -arch "$arch" -mtime "$SOURCE_DATE_EPOCH" -cache "$cache" \
	-root "${roots// /,}" "${labels[@]}" \
	-file "/usr/local/bin/sbx=$bin/sbx" -file "/usr/local/bin/sbx-agent=$bin/sbx-agent" \
	-file "/usr/local/lib/sbx/runsc=$bin/runsc" \
	-entrypoint /usr/local/bin/sbx -cmd serve -o "$host" "${files[@]}" >/dev/null
log "sbx-gateway $version ($arch)"
"$work/mkoci" -name "ghcr.io/sbxhq/sbx-gateway:$version" -arch "$arch" -mtime "$SOURCE_DATE_EPOCH" "${labels[@]}" \
	-file "/usr/local/bin/sbx=$bin/sbx" -entrypoint /usr/local/bin/sbx -cmd gateway -o "$gateway" >/dev/null
echo "$host"
echo "$gateway"
