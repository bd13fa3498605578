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
CGO_ENABLED=0 go build -o /dev/null ./cmd/sbx
go test -race -count=1 -timeout 60m "$@" ./...
# Every fuzz target briefly (FUZZTIME, default 10s each); longer by hand.
./scripts/fuzz.sh
