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
# sbx's packages, node (the Daytona and E2B rows), docker.io (setup-tests.sh
# has it, without starting its services) and podman.
packages=(podman)
./scripts/setup-tests.sh "${packages[@]}"
dockerd --version
podman --version
