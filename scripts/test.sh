#!/usr/bin/env bash
# Runs every check and test. Needs root: integration tests run real runc
# sandboxes. Usage: sudo ./scripts/test.sh [go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

# What only the tests need (chromium, etcd, mmdebstrap, the SDK toolchains),
# on top of what sbx needs to run; nothing when it is all there.
./scripts/setup-tests.sh

# The Kubernetes control plane of the cluster tests is the longest build
# here (scripts/build-kube.sh, cached after the first time) and only
# compiles Go, while the image builds below mostly download and unpack: on
# a fresh machine it builds in the background from the start.
if [ -z "${SBX_KUBE_BIN:-}" ]; then
	kube_tmp=$(mktemp -d)
	./scripts/build-kube.sh >"$kube_tmp/out" 2>"$kube_tmp/log" &
	kube_build=$!
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on: $unformatted" >&2
	exit 1
fi
go vet ./...

# What the integration tests use, built or installed once per machine and
# cached in /var/cache/sbx (minutes the first time, then nothing): the
# python and debian images, the pinned npm packages of the SDK and compat
# tests, and the S3 server of the storage tests. A variable already set
# names an artefact to use instead.
SBX_PYTHON_IMAGE=${SBX_PYTHON_IMAGE:-$(./scripts/build-python-image.sh)}
SBX_DEBIAN_IMAGE=${SBX_DEBIAN_IMAGE:-$(./scripts/build-debian-image.sh)}
SBX_VERSITYGW=${SBX_VERSITYGW:-$(./scripts/build-versitygw.sh)}
export SBX_PYTHON_IMAGE SBX_DEBIAN_IMAGE SBX_VERSITYGW
SBX_RUNSC=${SBX_RUNSC:-$(./scripts/build-runsc.sh)}; export SBX_RUNSC # the runsc every sbx serve of the tests runs
SBX_DESKTOP_IMAGE=${SBX_DESKTOP_IMAGE:-$(./scripts/build-desktop-image.sh)}; export SBX_DESKTOP_IMAGE # integration/desktop_test.go
if [ -n "${kube_build:-}" ]; then # the cluster tests' control plane (integration/kube_harness_test.go)
	if ! wait "$kube_build"; then
		cat "$kube_tmp/log" >&2
		echo "test.sh: scripts/build-kube.sh failed (log above)" >&2
		exit 1
	fi
	cat "$kube_tmp/log" >&2
	SBX_KUBE_BIN=$(cat "$kube_tmp/out")
	rm -rf "$kube_tmp"
fi
export SBX_KUBE_BIN
./scripts/npm-install.sh
CGO_ENABLED=0 go build -o /dev/null ./cmd/sbx
go test -race -count=1 -timeout 60m "$@" ./...
# Every fuzz target briefly (FUZZTIME, default 10s each); longer by hand.
./scripts/fuzz.sh
