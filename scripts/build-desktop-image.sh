#!/usr/bin/env bash
# Builds the "desktop" image for computer-use agents: Debian bookworm
# (mmdebstrap, minbase) with a virtual X server (Xvfb), a light window
# manager and panel (openbox, tint2), a VNC server (x11vnc), noVNC and its
# WebSocket bridge (novnc, python3-websockify), xdotool, a terminal (xterm),
# a browser (chromium), fonts and ffmpeg (screen recordings with x11grab,
# internal/agent/desktop_recording.go), as a rootfs tarball that `sbx image import`
# takes. The sandbox agent starts and supervises these programs when the
# desktop API is called (internal/agent/desktop*.go); nothing runs at boot.
#
#   sudo ./scripts/build-desktop-image.sh            # build or reuse; prints the tarball path
#   sudo ./scripts/build-desktop-image.sh --import   # and import it as image "desktop"
#                                                    # into the daemon of SBX_HOST
#
# Cached like scripts/build-python-image.sh: in $SBX_IMAGE_CACHE (default
# /var/cache/sbx) under a name keyed by a hash of the recipe, so it is built
# once per machine and again only when this recipe changes; delete the file
# to rebuild. Downloaded packages are shared with the other images
# ($cache/debs). The mirror comes from SBX_DEBIAN_MIRROR, else from this
# machine's apt sources, else deb.debian.org.
#
# Needs root, mmdebstrap (scripts/setup-tests.sh installs it) and network
# access to the Debian archive.
set -euo pipefail
cd "$(dirname "$0")/.."

suite=bookworm
variant=minbase
packages=(
	xvfb x11vnc novnc python3-websockify   # display, VNC server, browser view
	openbox tint2 xdotool xterm            # window manager, panel, input, terminal
	chromium fonts-dejavu-core fonts-liberation2
	ca-certificates procps
	ffmpeg                                 # screen recordings
)
dpkgopts=(
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/lintian/*'
)
# The unprivileged account most tools expect, as in the debian image.
user_hook='chroot "$1" useradd --create-home --uid 1000 --user-group --shell /bin/bash user'
# Chromium's own sandbox needs namespaces a container does not hand out; the
# sandbox is the isolation boundary here. /dev/shm is small in containers.
chromium_hook='mkdir -p "$1/etc/chromium.d" && printf "%s\n" "export CHROMIUM_FLAGS=\"\$CHROMIUM_FLAGS --no-sandbox --disable-dev-shm-usage --no-first-run --disable-gpu\"" >"$1/etc/chromium.d/sbx"'
# Empty stand-ins for two dependencies nothing here uses, a quarter of the
# image: noVNC's package depends on nodejs (for its build tools, not the page
# it serves), and Xvfb's GLX pulls in the Mesa drivers with LLVM (Xvfb runs
# without GLX; chromium renders in software with its own SwiftShader).
stub() {
	printf '%s\n' "Package: $1" "Version: 99:0.sbx1" "Architecture: amd64" "Multi-Arch: $2" \
		"Maintainer: sbx <sbx@localhost>" "Description: empty stand-in for $1 (sbx desktop image)" \
		" Nothing in the desktop image uses it; see scripts/build-desktop-image.sh."
}
stubs=(nodejs:allowed libgl1-mesa-dri:same)
recipe="v2 $suite $variant ${packages[*]} ${dpkgopts[*]} $user_hook $chromium_hook ${stubs[*]} $(stub x y)"

image=desktop
. scripts/image-common.sh

mkdir -p "$cache"
tmp="$out.tmp.$$"
work=$(mktemp -d)
trap 'rm -rf "$tmp" "$work"' EXIT
stub_debs=()
for s in "${stubs[@]}"; do
	mkdir -p "$work/${s%%:*}/DEBIAN"
	stub "${s%%:*}" "${s#*:}" >"$work/${s%%:*}/DEBIAN/control"
	dpkg-deb --root-owner-group --build "$work/${s%%:*}" "$work/${s%%:*}.deb" >/dev/null
	stub_debs+=("$work/${s%%:*}.deb")
done

log "building $out from $mirror (suite $suite, packages: ${packages[*]})"
start=$(date +%s)
mkdir -p "$cache/debs"
debs=$(printf '%q' "$cache/debs") # for the hooks' shell
mmdebstrap --quiet --variant="$variant" --format=tar \
	--include="$(IFS=,; echo "${packages[*]} ${stub_debs[*]}" | tr ' ' ,)" \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	--skip=essential/unlink \
	--setup-hook="mkdir -p \"\$1/var/cache/apt/archives\" && find $debs -maxdepth 1 -name '*.deb' -exec cp -t \"\$1/var/cache/apt/archives\" {} +" \
	--customize-hook="find \"\$1/var/cache/apt/archives\" -maxdepth 1 -name '*.deb' -exec cp -u -t $debs {} +" \
	--customize-hook="$user_hook" \
	--customize-hook="$chromium_hook" \
	"${dpkgopts[@]}" \
	"$suite" "$tmp" \
	"deb $mirror $suite main" \
	"deb $mirror $suite-updates main" \
	"deb $security $suite-security main" >&2
mv "$tmp" "$out"
rm -rf "$work"
trap - EXIT
ln -sfn "$(basename "$out")" "$cache/desktop-image.tar"
# Older builds of this recipe are superseded.
find "$cache" -maxdepth 1 -name 'desktop-image-*.tar' ! -name "$(basename "$out")" -delete
log "built $out ($(du -h "$out" | cut -f1)) in $(($(date +%s) - start))s"
import_image
echo "$out"
