#!/usr/bin/env bash
# Builds the release artefacts of VERSION from a clean checkout of HEAD:
#
#   ./scripts/release.sh 0.1.0 [OUTDIR]     # default OUTDIR: dist/VERSION
#
#   sbx_VERSION_linux_ARCH.tar.gz   sbx, sbx-agent, runsc (sbx's build of gVisor),
#                                   the systemd unit, LICENSE, README.md, CHANGELOG.md
#   sbx_VERSION_ARCH.deb            the same installed under /usr (packaging/cmd/mkdeb)
#   sbx-host_VERSION_linux_ARCH.oci.tar, sbx-gateway_VERSION_linux_ARCH.oci.tar
#                                   the Kubernetes images (scripts/build-oci.sh) of
#                                   these binaries, for docker load / ctr import
#   SHA256SUMS                      sha256sum of each
#
# for ARCH in amd64 and arm64. The images hold Debian packages of ARCH, so
# they are built for the arches apt can download here: this machine's and
# those `dpkg --add-architecture` added (others are skipped, with a note). VERSION must be internal/version's Version at
# HEAD: a release is a commit, and its binaries need no -ldflags. Builds are
# reproducible: the same commit and Go toolchain give the same bytes
# (CGO_ENABLED=0 static binaries, -trimpath, an empty build id, every file
# time and SOURCE_DATE_EPOCH the commit's time, tar entries sorted and owned
# by root, gzip without a name or time); packaging/release_test.go builds
# twice and compares. Uncommitted changes are not in the build.
#
# SBX_RELEASE_ARCHES (default "amd64 arm64"), SBX_RELEASE_RUNSC=0 (leave
# runsc out: the tarball and package then use Debian's runsc, or the one
# scripts/setup.sh installs; no images then, the host image ships runsc)
# and SBX_RELEASE_OCI=0 (no images) narrow a build, for tests.
# Needs Go, git, GNU tar and the Go module proxy (or a warm module cache).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
log() { echo "release: $*" >&2; }
die() { log "$*"; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 VERSION [OUTDIR]"
version=$1
out=$(realpath -m "${2:-dist/$version}")
arches=${SBX_RELEASE_ARCHES:-amd64 arm64}
with_runsc=${SBX_RELEASE_RUNSC:-1}
with_oci=${SBX_RELEASE_OCI:-$with_runsc}
[ "$with_oci" = 0 ] || [ "$with_runsc" = 1 ] || die "SBX_RELEASE_OCI=1 needs runsc: the host image ships it"
apt_arches=" $(dpkg --print-architecture 2>/dev/null || true) $(dpkg --print-foreign-architectures 2>/dev/null | tr '\n' ' ')"

commit=$(git rev-parse HEAD)
work=$(mktemp -d /var/tmp/sbx-release.XXXXXX)
trap 'rm -rf "$work"' EXIT
# A clean checkout, as anyone would clone it: nothing uncommitted or ignored.
git clone --quiet --no-hardlinks --no-checkout "$repo" "$work/src"
git -C "$work/src" checkout --quiet "$commit"
src=$work/src
have=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' "$src/internal/version/version.go")
[ "$have" = "$version" ] || die "VERSION $version is not internal/version's Version at $commit ($have): commit the version first"

export SOURCE_DATE_EPOCH=$(git -C "$src" log -1 --format=%ct "$commit")
# Nothing from the caller's Go settings: the build depends on the commit and
# the toolchain alone.
export CGO_ENABLED=0 GOOS=linux GOFLAGS= GOAMD64=v1 GOARM64=v8.0 GOEXPERIMENT=
ldflags=-buildid=
log "sbx $version from $commit ($(go version)), SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH"

rm -rf "$out"
mkdir -p "$out"
for arch in $arches; do
	bin=$work/bin/$arch
	mkdir -p "$bin"
	log "$arch: sbx, sbx-agent"
	(cd "$src" && GOARCH=$arch go build -trimpath -buildvcs=true -ldflags="$ldflags" -o "$bin/" ./cmd/sbx ./cmd/sbx-agent)
	runsc_flag=()
	if [ "$with_runsc" = 1 ]; then
		# The runsc setup.sh installs and the tests run, content-keyed in
		# its cache (precompiled seccomp filters on the host's architecture).
		log "$arch: runsc (scripts/build-runsc.sh)"
		cp "$(GOARCH=$arch "$src/scripts/build-runsc.sh")" "$bin/runsc"
		runsc_flag=(-runsc "$bin/runsc")
	fi

	name=sbx_${version}_linux_${arch}
	dir=$work/tar/$name
	mkdir -p "$dir"
	cp "$bin"/* "$dir/"
	cp "$src/LICENSE" "$src/README.md" "$src/CHANGELOG.md" "$src/packaging/sbx.service" "$dir/"
	chmod 0755 "$dir" "$dir"/sbx*
	chmod 0644 "$dir"/*.md "$dir/LICENSE" "$dir/sbx.service"
	[ ! -e "$dir/runsc" ] || chmod 0755 "$dir/runsc"
	tar -C "$work/tar" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
		--format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
		-cf - "$name" | gzip -n >"$out/$name.tar.gz"

	log "$arch: .deb"
	(cd "$src" && GOARCH= GOOS= go run ./packaging/cmd/mkdeb -version "$version" -arch "$arch" \
		-sbx "$bin/sbx" -agent "$bin/sbx-agent" "${runsc_flag[@]}" -mtime "$SOURCE_DATE_EPOCH" -o "$out") >/dev/null

	if [ "$with_oci" = 1 ]; then
		if [[ "$apt_arches" == *" $arch "* ]]; then
			log "$arch: OCI images"
			(cd "$src" && GOARCH= GOOS= SBX_OCI_BIN=$bin SBX_OCI_ARCH=$arch ./scripts/build-oci.sh "$out") >/dev/null
		else
			log "$arch: no OCI images: apt here has no $arch packages (dpkg --add-architecture $arch && apt-get update)"
		fi
	fi
done
(cd "$out" && sha256sum -- *.tar.gz *.deb $(ls *.oci.tar 2>/dev/null) >SHA256SUMS)
log "wrote $out:"
(cd "$out" && ls -l) >&2
