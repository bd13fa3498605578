#!/usr/bin/env bash
# Runs every check and test. Needs root: integration tests run real runc
# sandboxes. Usage: sudo ./scripts/test.sh [go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

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
SBX_KUBE_BIN=${SBX_KUBE_BIN:-$(./scripts/build-kube.sh)} && export SBX_KUBE_BIN # the cluster tests' control plane (integration/kube_harness_test.go)
./scripts/npm-install.sh
CGO_ENABLED=0 go build -o /dev/null ./cmd/sbx
go test -race -count=1 -timeout 60m "$@" ./...
# Every fuzz target briefly (FUZZTIME, default 10s each); longer by hand.
./scripts/fuzz.sh
