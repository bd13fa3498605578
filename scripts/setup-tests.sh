#!/usr/bin/env bash
# Installs what only the tests need, on top of what sbx needs to run
# (scripts/setup.sh --deps, which this runs first). scripts/test.sh runs it,
# so the README's test command works on a machine that ran only setup.sh.
# Installs nothing when everything is there. More packages given as
# arguments are installed the same way (scripts/bench-setup.sh).
#
#   sudo ./scripts/setup-tests.sh [PACKAGE...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "setup-tests.sh: run as root (it installs packages): sudo $0" >&2
	exit 1
fi
./scripts/setup.sh --deps

# One package a line, with what needs it. No parentheses in the comments:
# internal/doctor's TestSetupInstallsEveryProgram reads this list.
packages=(
	tmux               # interactive tests
	mmdebstrap         # scripts/build-*-image.sh, scripts/fresh-machine-check.sh
	systemd            # systemd-analyze checks the unit of sbx install-service
	nodejs             # scripts/npm-install.sh and the SDK and compat tests
	git                # integration/upgrade_test.go builds the previous release; git_test.go runs git http-backend; scripts/release.sh
	python3 python3-httpx python3-websockets python3-pytest # the Python SDK, sdks/python, and its suite
	python3-mypy python3-pip python3-setuptools python3-wheel # mypy --strict and the wheel test of sdks/python
	chromium           # headless browser tests of the dashboard and the desktop's noVNC page
	etcd-server        # the Kubernetes control plane of the cluster tests, scripts/build-kube.sh
	mkdocs mkdocs-material # the documentation site: scripts/test.sh runs mkdocs build --strict
	docker.io containerd # integration/oci_image_test.go loads the images of scripts/build-oci.sh into its own dockerd and its containerd, ctr
)
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup-tests.sh: installing ${missing[*]}"
	apt-get update -qq
	# A policy-rc.d that says no keeps dpkg from starting services the
	# tests start on their own (dockerd, containerd, etcd).
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Debian's nodejs comes without npm; NodeSource's has it built in and
# conflicts with Debian's npm package.
if ! command -v npm >/dev/null; then
	echo "setup-tests.sh: installing npm"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
fi
