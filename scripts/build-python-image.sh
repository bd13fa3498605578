#!/usr/bin/env bash
# Builds the "python" image for code contexts: Debian bookworm (mmdebstrap,
# minbase) with python3 (also as `python`), numpy, pandas, matplotlib, the
# python language server pylsp (the agent's LSP bridge, internal/agent/lsp)
# and nodejs, as a rootfs tarball that `sbx image import` takes.
#
#   sudo ./scripts/build-python-image.sh            # build or reuse; prints the tarball path
#   sudo ./scripts/build-python-image.sh --import   # and import it as image "python"
#                                                   # into the daemon of SBX_HOST
#
# The tarball is cached outside the repository, in $SBX_IMAGE_CACHE (default
# /var/cache/sbx), under a name keyed by a hash of everything that decides its
# contents (suite, variant, packages, excludes), so a build happens once per
# machine and again only when this recipe changes. Delete the file to rebuild
# (for example to pick up security updates). The mirror comes from
# SBX_DEBIAN_MIRROR, else from this machine's apt sources, else deb.debian.org.
#
# Needs root, mmdebstrap (scripts/setup-tests.sh installs it) and network
# access to the Debian archive.
set -euo pipefail
cd "$(dirname "$0")/.."

suite=bookworm
variant=minbase
packages=(python3 python-is-python3 python3-pylsp python3-numpy python3-pandas python3-matplotlib python3-pip nodejs npm git curl ca-certificates)
# Documentation and translations are a third of the size and nothing here
# reads them; licences stay.
dpkgopts=(
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/lintian/*'
)
# python3-scipy (which matplotlib's font tools need) depends on the pythran
# compiler, which pulls in g++, gcc and the boost headers: 500 MB that
# nothing needs at run time. An empty stand-in package satisfies it.
stub_control="Package: python3-pythran
Version: 99:0.sbx1
Architecture: all
Maintainer: sbx <sbx@localhost>
Description: empty stand-in for pythran (sbx python image)
 python3-scipy depends on the pythran compiler, which pulls in a C++
 toolchain and the boost headers that nothing in this image needs at run time."
recipe="v2 $suite $variant ${packages[*]} ${dpkgopts[*]} $stub_control"
# The account E2B's SDK runs commands as (internal/compat/e2b): "user",
# uid/gid 1000, home /home/user, shell bash. Part of the recipe's hash.
user_hook='echo "user:x:1000:1000::/home/user:/bin/bash" >>"$1/etc/passwd" && echo "user:x:1000:" >>"$1/etc/group" && echo "user:*:19000:0:99999:7:::" >>"$1/etc/shadow" && mkdir -p "$1/home/user" && chown 1000:1000 "$1/home/user" && chmod 0755 "$1/home/user"'
recipe="$recipe $user_hook"

image=python
. scripts/image-common.sh

mkdir -p "$cache"
tmp="$out.tmp.$$"
work=$(mktemp -d)
trap 'rm -rf "$tmp" "$work"' EXIT
mkdir -p "$work/stub/DEBIAN"
printf '%s\n' "$stub_control" >"$work/stub/DEBIAN/control"
dpkg-deb --root-owner-group --build "$work/stub" "$work/python3-pythran.deb" >/dev/null

log "building $out from $mirror (suite $suite, packages: ${packages[*]})"
start=$(date +%s)
# Downloaded packages are kept in $cache/debs, so a changed recipe rebuilds
# without fetching everything again. The hook makes the local stub package
# visible to dpkg inside the chroot.
mkdir -p "$cache/debs"
debs=$(printf '%q' "$cache/debs") # for the hooks' shell
mmdebstrap --quiet --variant="$variant" --format=tar \
	--include="$(IFS=,; echo "${packages[*]}"),$work/python3-pythran.deb" \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
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
rm -rf "$work"
trap - EXIT
ln -sfn "$(basename "$out")" "$cache/python-image.tar"
# Older builds of this recipe are superseded.
find "$cache" -maxdepth 1 -name 'python-image-*.tar' ! -name "$(basename "$out")" -delete
log "built $out ($(du -h "$out" | cut -f1)) in $(($(date +%s) - start))s"
import_image
echo "$out"
