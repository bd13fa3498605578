#!/usr/bin/env bash
# Builds the "debian" image, a general starting point: Debian bookworm
# (mmdebstrap, minbase) with bash, coreutils, curl, git and ca-certificates,
# apt to install more, and a user "user" (uid 1000, home /home/user), as a
# rootfs tarball that `sbx image import` takes.
#
#   sudo ./scripts/build-debian-image.sh            # build or reuse; prints the tarball path
#   sudo ./scripts/build-debian-image.sh --import   # and import it as image "debian"
#                                                   # into the daemon of SBX_HOST
#
# Cached like scripts/build-python-image.sh: in $SBX_IMAGE_CACHE (default
# /var/cache/sbx) under a name keyed by a hash of the recipe, so it is built
# once per machine and again only when this recipe changes; delete the file
# to rebuild. The mirror comes from SBX_DEBIAN_MIRROR, else from this
# machine's apt sources, else deb.debian.org.
#
# Needs root, mmdebstrap (scripts/setup-tests.sh installs it) and network
# access to the Debian archive.
set -euo pipefail
cd "$(dirname "$0")/.."

suite=bookworm
variant=minbase
packages=(bash coreutils curl git ca-certificates)
dpkgopts=(
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/lintian/*'
)
# The unprivileged account most tools expect; useradd is in minbase (passwd).
user_hook='chroot "$1" useradd --create-home --uid 1000 --user-group --shell /bin/bash user'
recipe="v1 $suite $variant ${packages[*]} ${dpkgopts[*]} $user_hook"

image=debian
. scripts/image-common.sh

mkdir -p "$cache"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT

log "building $out from $mirror (suite $suite, packages: ${packages[*]})"
start=$(date +%s)
# Downloaded packages are shared with the python image's build ($cache/debs).
mkdir -p "$cache/debs"
debs=$(printf '%q' "$cache/debs") # for the hooks' shell
mmdebstrap --quiet --variant="$variant" --format=tar \
	--include="$(IFS=,; echo "${packages[*]}")" \
	--skip=essential/unlink \
	--setup-hook="mkdir -p \"\$1/var/cache/apt/archives\" && find $debs -maxdepth 1 -name '*.deb' -exec cp -t \"\$1/var/cache/apt/archives\" {} +" \
	--customize-hook="find \"\$1/var/cache/apt/archives\" -maxdepth 1 -name '*.deb' -exec cp -u -t $debs {} +" \
	--customize-hook="$user_hook" \
	"${dpkgopts[@]}" \
	"$suite" "$tmp" \
	"deb $mirror $suite main" \
	"deb $mirror $suite-updates main" \
	"deb $security $suite-security main" >&2
mv "$tmp" "$out"
trap - EXIT
ln -sfn "$(basename "$out")" "$cache/debian-image.tar"
# Older builds of this recipe are superseded.
find "$cache" -maxdepth 1 -name 'debian-image-*.tar' ! -name "$(basename "$out")" -delete
log "built $out ($(du -h "$out" | cut -f1)) in $(($(date +%s) - start))s"
import_image
echo "$out"
