#!/usr/bin/env bash
# Proves the README's "Set up and run" on a fresh Debian 12: builds a bare
# bookworm root filesystem with mmdebstrap (variant apt: dpkg, apt and
# essential packages only, less than any real install has), copies the
# committed tree of this repository and the host's Go toolchain into it, and
# inside it, as the root of a mount namespace of its own (pivot_root):
#
#   1. scripts/setup.sh      installs the packages and builds /usr/local/bin/sbx
#   2. sbx version, sbx doctor   every check must pass (doctor exits 1 otherwise)
#   3. sbx serve, sbx create, sbx exec   in a network namespace of its own
#      (loopback plus the daemon's bridge), so nothing touches the host's network
#
#   sudo ./scripts/fresh-machine-check.sh
#
# With --deb it checks the release instead, as someone who never builds:
# scripts/release.sh builds this commit's artefacts for the host's
# architecture (with runsc), and inside a bare root that has neither Go nor
# this repository:
#
#   1. apt-get install ./sbx_VERSION_ARCH.deb   pulls the declared dependencies
#   2. sbx version, sbx doctor
#   3. the packaged unit's ExecStart with /etc/sbx/sbx.env, as systemd would
#      start it, then sbx create and sbx exec in class container and gvisor,
#      in a network namespace of its own
#   4. the upgrade: with a sandbox and its background process running,
#      apt-get install of the next patch version's .deb (this commit with
#      the version raised, built the same way), then what systemctl
#      try-restart does under the unit's KillMode=process (SIGTERM to sbx
#      serve alone, then ExecStart again): the new daemon runs, and the
#      sandbox and its process went on running throughout
#
#   sudo ./scripts/fresh-machine-check.sh --deb
#
# The root is not booted (systemd-nspawn -b): a bare root has no systemd, and
# sbx serve needs the host's cgroup v2 tree, /dev and the right to make user
# and mount namespaces, which the pivot_root below gives it; the package's
# postinst skips its systemctl steps there, as in any chroot.
#
# Not run by CI (it downloads a few hundred MB of Debian packages and takes
# minutes); run it after changing setup.sh, what the code executes or the
# packaging. Downloaded .deb files are kept in $SBX_DEB_CACHE (default
# /var/cache/sbx/debs, shared with scripts/build-python-image.sh), Go modules
# come from the host's module cache. Needs root, mmdebstrap, unshare and
# network access to the Debian archive. The root filesystem is deleted at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

log() { echo "fresh-machine-check: $*" >&2; }
mode=source
case "${1:-}" in
--deb) mode=deb ;;
"") ;;
*) log "usage: $0 [--deb]"; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
	log "run as root: sudo $0"
	exit 1
fi
for p in mmdebstrap unshare git go; do
	command -v "$p" >/dev/null || { log "$p is missing (scripts/setup-tests.sh installs mmdebstrap; unshare is util-linux)"; exit 1; }
done

debs=${SBX_DEB_CACHE:-/var/cache/sbx/debs}
mirror=${SBX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
goroot=$(go env GOROOT)
gomodcache=$(go env GOMODCACHE)
mkdir -p "$debs"
work=$(mktemp -d /var/tmp/sbx-fresh.XXXXXX)
root=$work/root
cleanup() {
	# The chroot's mounts live in a mount namespace that is gone by now.
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT
start=$(date +%s)

if [ "$mode" = deb ]; then
	arch=$(dpkg --print-architecture)
	version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' internal/version/version.go)
	log "building the release of $version for $arch (scripts/release.sh)"
	SBX_RELEASE_ARCHES=$arch SBX_RELEASE_OCI=0 ./scripts/release.sh "$version" "$work/dist"
	# The upgrade's package: this commit with the patch version raised, in
	# a clone of its own, built by that clone's release.sh.
	next=$(echo "$version" | awk -F. '{printf "%d.%d.%d", $1, $2, $3 + 1}')
	git clone --quiet --no-hardlinks "$repo" "$work/next"
	git -C "$work/next" checkout --quiet "$(git rev-parse HEAD)"
	sed -i "s/^const Version = \".*\"$/const Version = \"$next\"/" "$work/next/internal/version/version.go"
	git -C "$work/next" -c user.name=fresh-machine-check -c user.email=check@localhost commit --quiet -am "version $next (upgrade check)"
	SBX_RELEASE_ARCHES=$arch SBX_RELEASE_OCI=0 "$work/next/scripts/release.sh" "$next" "$work/dist-next"
	log "releases $version and $next built after $(($(date +%s) - start))s"
fi

log "building a bare Debian 12 rootfs in $root"
mmdebstrap --quiet --variant=apt --include=ca-certificates \
	--skip=essential/unlink \
	--setup-hook="mkdir -p \"\$1/var/cache/apt/archives\" && find $(printf '%q' "$debs") -maxdepth 1 -name '*.deb' -exec cp -t \"\$1/var/cache/apt/archives\" {} +" \
	bookworm "$root" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
	"deb ${mirror%/debian}/debian-security bookworm-security main" >&2
log "rootfs ready after $(($(date +%s) - start))s"
cp /etc/resolv.conf "$root/etc/resolv.conf"

in_root() { # in_root [unshare flags...] -- script [args]
	local flags=()
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	unshare --mount --pid --fork "${flags[@]}" bash -c '
		set -e
		root=$1 debs=$2 mods=$3 script=$4
		mount --make-rprivate /
		mount --bind "$root" "$root" # a mount point, for pivot_root
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount --rbind /dev "$root/dev"
		mount -t tmpfs tmpfs "$root/run"
		mount -t tmpfs tmpfs "$root/tmp"
		mount --bind "$debs" "$root/var/cache/apt/archives"
		[ ! -d "$root/root/go/pkg/mod" ] || mount --bind -o ro "$mods" "$root/root/go/pkg/mod"
		# pivot_root, not chroot: the kernel refuses a chrooted process a
		# user namespace, and sbx makes one per sandbox.
		cd "$root"
		mkdir -p .oldroot
		pivot_root . .oldroot
		# The host'"'"'s umount (the bare system has none before setup.sh).
		exec /bin/bash -c "/.oldroot/usr/bin/umount -l /.oldroot || umount -l /.oldroot; cd / && exec bash $script"' _ "$root" "$debs" "$gomodcache" "$1"
}

# sandbox.sh [serve command]: sbx serve, create, exec (and in class gvisor
# with SBX_CHECK_GVISOR=1), in the network namespace it is given.
cat >"$root/root/sandbox.sh" <<'EOF'
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ip link set lo up
echo 1 > /proc/sys/net/ipv4/ip_forward # this namespace only (procps is not needed by sbx)
${SBX_SERVE:-sbx serve} --bridge sbxfresh0 --subnet 10.253.0.0/24 >/var/log/sbx-serve.log 2>&1 &
serve=$!
for i in $(seq 100); do sbx ls >/dev/null 2>&1 && break; sleep 0.2; done
classes=container
[ -z "${SBX_CHECK_GVISOR:-}" ] || classes="container gvisor"
for class in $classes; do
	out=$(sbx create "demo-$class" --class "$class" >/dev/null && sbx exec "demo-$class" -- sh -c 'echo hello from $(hostname)') || true
	echo "$class: $out"
	[ "$out" = "hello from demo-$class" ] || { cat /var/log/sbx-serve.log >&2; exit 1; }
	sbx rm "demo-$class" >/dev/null
done
if [ -e /root/quickstart.sh ]; then
	# The README's CLI quickstart, verbatim; sudo is a no-op here (root).
	sudo() { "$@"; }
	cd /tmp
	. /root/quickstart.sh
	echo "quickstart: passed"
fi
kill "$serve"; wait "$serve" || true
EOF

if [ "$mode" = deb ]; then
	mkdir -p "$root/root/next"
	cp "$work/dist/sbx_${version}_${arch}.deb" "$root/root/"
	cp "$work/dist-next/sbx_${next}_${arch}.deb" "$root/root/next/"
	cat >"$root/root/install.sh" <<'EOF'
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd /root
if command -v go >/dev/null || [ -e /root/sbx ]; then echo "the root has Go or the source tree" >&2; exit 1; fi
t=$(date +%s)
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./sbx_*.deb >/dev/null
echo "fresh-machine-check: apt-get install ./sbx_*.deb took $(($(date +%s) - t))s" >&2
dpkg -s sbx | grep -E '^(Status|Version|Depends):'
sbx version
sbx doctor --subnet 10.253.0.0/24 --bridge sbxfresh0
EOF
	cat >"$root/root/service.sh" <<'EOF'
set -euo pipefail
# What systemd would run: the unit's ExecStart with its EnvironmentFile.
set -a; . /etc/sbx/sbx.env; set +a
SBX_SERVE=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/sbx.service) SBX_CHECK_GVISOR=1 exec bash /root/sandbox.sh
EOF
	cat >"$root/root/upgrade.sh" <<'EOF'
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ip link set lo up
echo 1 > /proc/sys/net/ipv4/ip_forward
set -a; . /etc/sbx/sbx.env; set +a
cd /root
serve_cmd="$(sed -n 's/^ExecStart=//p' /lib/systemd/system/sbx.service) --bridge sbxfresh0 --subnet 10.253.0.0/24"
fail() { echo "upgrade: $*" >&2; cat /var/log/sbx-serve.log >&2; exit 1; }
start_serve() {
	$serve_cmd >>/var/log/sbx-serve.log 2>&1 &
	serve=$!
	for i in $(seq 100); do sbx ls >/dev/null 2>&1 && return; sleep 0.2; done
	fail "sbx serve did not answer"
}
start_serve
sbx create keep >/dev/null
sbx exec -d --id count keep -- sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/n; sleep 0.1; done' >/dev/null
sleep 1
before=$(sbx exec keep -- cat /tmp/n)
pid() { sbx ps keep | awk '$1 == "count" && $3 == "running" {print $2}'; }
pid_before=$(pid)
[ -n "$pid_before" ] || fail "the background process is not running: $(sbx ps keep)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./next/sbx_*.deb >/dev/null
new=$(dpkg-query -W -f '${Version}' sbx)
echo "upgrade: dpkg has sbx $new; the old daemon runs $(readlink /proc/$serve/exe)"
# systemctl try-restart under KillMode=process: SIGTERM to sbx serve alone.
kill -TERM "$serve"; wait "$serve" || true
start_serve
case "$(readlink /proc/$serve/exe)" in *deleted*) fail "the restarted daemon runs the old binary" ;; esac
sbx version | grep -qx "sbx $new" || fail "sbx version is not $new: $(sbx version | head -1)"
[ "$(pid)" = "$pid_before" ] || fail "the background process (pid $pid_before) did not survive: $(sbx ps keep)"
sleep 1
after=$(sbx exec keep -- cat /tmp/n)
[ "$after" -gt "$before" ] || fail "the counter stopped at $before ($after)"
echo "upgrade: to $new with sandbox keep running: its process (pid $pid_before) counted $before -> $after across the restart"
sbx rm keep >/dev/null
kill -TERM "$serve"; wait "$serve" || true
EOF
	# The README's CLI quickstart block, run as it stands (set -e: any
	# failing line fails the check).
	awk '/^\*\*CLI\*\*$/ {cli=1; next} cli && /^```sh$/ {code=1; next} code && /^```$/ {exit} code' \
		"$repo/README.md" >"$root/root/quickstart.sh"
	[ -s "$root/root/quickstart.sh" ] || { log "no CLI quickstart block in README.md"; exit 1; }
	log "the README's CLI quickstart:"; sed 's/^/    /' "$root/root/quickstart.sh" >&2
	log "step 1+2: apt-get install ./sbx_${version}_${arch}.deb, sbx version, sbx doctor"
	in_root -- /root/install.sh
	log "step 3: the packaged unit's sbx serve; create and exec in class container and gvisor, then the README's CLI quickstart (own network namespace)"
	in_root --net -- /root/service.sh
	log "step 4: apt-get install ./sbx_${next}_${arch}.deb over a running sandbox, the unit's restart (own network namespace)"
	in_root --net -- /root/upgrade.sh
	log "passed in $(($(date +%s) - start))s"
	exit 0
fi

# "git clone", as a user would; Go as the README asks for it.
git clone --quiet --no-hardlinks "$repo" "$root/root/sbx"
git -C "$root/root/sbx" checkout --quiet "$(git rev-parse HEAD)"
mkdir -p "$root/usr/local" "$root/root/go/pkg/mod"
cp -a "$goroot" "$root/usr/local/go"

# Inside: step 1 and 2 in the host's network namespace (apt and the Go proxy
# need it), step 3 in a fresh one.
cat >"$root/root/check.sh" <<'EOF'
set -euo pipefail
export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd /root/sbx
t=$(date +%s)
./scripts/setup.sh
echo "fresh-machine-check: setup.sh took $(($(date +%s) - t))s" >&2
sbx version
sbx doctor --subnet 10.253.0.0/24 --bridge sbxfresh0
EOF

log "step 1+2: scripts/setup.sh, sbx version, sbx doctor"
in_root -- /root/check.sh
log "step 3: sbx serve, create, exec (own network namespace)"
in_root --net -- /root/sandbox.sh
log "passed in $(($(date +%s) - start))s"
