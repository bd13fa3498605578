# Sourced by scripts/build-debian-image.sh and scripts/build-python-image.sh
# once they have set image (debian or python) and recipe: sets cache, out,
# log, import_image, mirror and security; prints the cached tarball's path and
# exits when it is there, and exits unless a build can run (root, mmdebstrap).
# The cache file name, $cache/$image-image-<recipe hash>.tar, must not change:
# it is what keeps built images valid.

cache=${SBX_IMAGE_CACHE:-/var/cache/sbx}
key=$(printf '%s' "$recipe" | sha256sum | cut -c1-12)
out="$cache/${image}-image-$key.tar"
log() { echo "build-${image}-image: $*" >&2; }

import_image() {
	if [ "${do_import:-}" = 1 ]; then
		log "importing $out as image \"$image\""
		sbx image import "$image" "$out" >&2
	fi
}
[ "${1:-}" = "--import" ] && do_import=1

if [ -s "$out" ]; then
	log "cached: $out"
	import_image
	echo "$out"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	log "run as root (mmdebstrap needs it to build a rootfs with correct owners): sudo $0 $*"
	exit 1
fi
if ! command -v mmdebstrap >/dev/null; then
	log "mmdebstrap is missing: apt-get install mmdebstrap (or ./scripts/setup-tests.sh)"
	exit 1
fi

# The first Debian archive URI this machine's apt uses (deb822 or one-line format).
apt_mirror() {
	{
		grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{for (i = 2; i <= NF; i++) print $i}'
		grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | sed 's/\[[^]]*\]//' | awk '{print $2}'
	} | grep -E '/debian/?$' | head -n1 || true
}
mirror=${SBX_DEBIAN_MIRROR:-$(apt_mirror)}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
security=${SBX_DEBIAN_SECURITY_MIRROR:-${mirror%/debian}/debian-security}
