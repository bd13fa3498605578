#!/usr/bin/env bash
# Installs what the benchmark's peers need (Debian 12): Docker Engine (docker.io)
# and podman, without starting their services: the benchmark starts its own
# dockerd on a temporary directory and stops it at the end. CI does not run
# this; the tests do not need Docker. Then:
#   CGO_ENABLED=0 go build -o /tmp/sbx ./cmd/sbx
#   sudo go run ./bench -sbx /tmp/sbx -json /tmp/bench.json
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "bench-setup.sh: run as root (it installs packages): sudo $0" >&2
	exit 1
fi
./scripts/setup-tests.sh # sbx's packages and node, which the Daytona and E2B rows run
missing=()
packages=(docker.io podman)
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench-setup.sh: installing ${missing[*]}"
	apt-get update -qq
	# A policy-rc.d that says no keeps dpkg from starting dockerd and
	# containerd on install (systemd hosts still enable them for boot).
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
dockerd --version
podman --version
