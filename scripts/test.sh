#!/usr/bin/env bash
# Runs every check and test. Needs root: integration tests run real runc
# sandboxes. Usage: sudo ./scripts/test.sh [go test flags]
#
# At the end (pass or fail) it prints how long each stage took. The
# artefacts only the integration tests need build in the background while
# the unit tests run.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
# timed NAME CMD...: runs CMD, noting its wall time and result under NAME.
timed() {
	local name=$1 start=$SECONDS rc=0
	shift
	"$@" || rc=$?
	echo "$((SECONDS - start)) $rc $name" >>"$work/stages"
	return $rc
}
print_stages() {
	echo
	echo "test.sh stages (wall seconds; the background ones overlap the unit tests):"
	printf '  %-36s %7s  %s\n' STAGE SECONDS RESULT
	if [ -f "$work/stages" ]; then
		while read -r secs rc name; do
			printf '  %-36s %7d  %s\n' "$name" "$secs" "$([ "$rc" = 0 ] && echo ok || echo "failed ($rc)")"
		done <"$work/stages"
	fi
	printf '  %-36s %7d\n' total "$SECONDS"
}
trap 'print_stages >&2 || true; rm -rf "$work"' EXIT

# What only the tests need (chromium, etcd, mmdebstrap, the SDK toolchains),
# on top of what sbx needs to run; nothing when it is all there.
timed "setup-tests.sh" ./scripts/setup-tests.sh

# The Kubernetes control plane of the cluster tests is the longest build
# here (scripts/build-kube.sh, cached after the first time) and only
# compiles Go, while the image builds below mostly download and unpack: on
# a fresh machine it builds in the background from the start.
if [ -z "${SBX_KUBE_BIN:-}" ]; then
	timed "build kube (background)" ./scripts/build-kube.sh >"$work/kube.out" 2>"$work/kube.log" &
	kube_build=$!
fi

checks() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
	if [ -n "$unformatted" ]; then
		echo "gofmt needed on: $unformatted" >&2
		return 1
	fi
	go vet ./...
}
timed "gofmt and vet" checks

# The pinned npm packages of the SDK and compat tests, which unit tests
# (internal/ui, internal/api) use too.
timed "npm install" ./scripts/npm-install.sh

# The documentation site (mkdocs.yml): a link to a missing file or heading
# fails it. Built into $work, not the checkout.
timed "docs site (mkdocs --strict)" mkdocs build --strict --site-dir "$work/site"

# What only the integration tests use, built or installed once per machine
# and cached in /var/cache/sbx (minutes the first time, then nothing): the
# python and debian images, runsc and the desktop image. A variable already
# set names an artefact to use instead. One after the other (they share
# caches), beside the unit tests.
artefact() { # artefact VAR SCRIPT: VAR=<what SCRIPT printed> on stdout
	local var=$1 script=$2 name path
	if [ -n "${!var:-}" ]; then
		echo "$var=${!var}"
		return
	fi
	name=${script##*/build-}
	path=$(timed "build ${name%.sh}" "$script") || return 1
	echo "$var=$path"
}
artefacts() {
	artefact SBX_PYTHON_IMAGE ./scripts/build-python-image.sh &&
		artefact SBX_DEBIAN_IMAGE ./scripts/build-debian-image.sh &&
		artefact SBX_RUNSC ./scripts/build-runsc.sh && # the runsc every sbx serve of the tests runs
		artefact SBX_DESKTOP_IMAGE ./scripts/build-desktop-image.sh # integration/desktop_test.go
}
# The S3 server first, in the foreground: the blob store's unit tests
# (internal/blob/s3) run against it too.
versitygw=$(artefact SBX_VERSITYGW ./scripts/build-versitygw.sh)
export "$versitygw"
artefacts >"$work/artefacts.env" 2>"$work/artefacts.log" &
artefacts_build=$!

timed "build sbx (static)" env CGO_ENABLED=0 go build -o /dev/null ./cmd/sbx
unit=$(go list ./... | grep -v '/integration$')
unit_rc=0
timed "unit tests" go test -race -count=1 -timeout 60m "$@" $unit || unit_rc=$?

wait_for() { # wait_for PID LOG NAME: the background build's result, its log shown
	local rc=0
	wait "$1" || rc=$?
	cat "$2" >&2
	if [ "$rc" != 0 ]; then
		echo "test.sh: $3 failed (log above)" >&2
		exit 1
	fi
}
wait_for "$artefacts_build" "$work/artefacts.log" "an integration artefact's build"
while IFS='=' read -r var path; do
	export "$var=$path"
done <"$work/artefacts.env"
if [ -n "${kube_build:-}" ]; then # the cluster tests' control plane (integration/kube_harness_test.go)
	wait_for "$kube_build" "$work/kube.log" "scripts/build-kube.sh"
	SBX_KUBE_BIN=$(cat "$work/kube.out")
fi
export SBX_KUBE_BIN

timed "integration tests" go test -race -count=1 -timeout 60m "$@" ./integration
if [ "$unit_rc" != 0 ]; then
	echo "test.sh: unit tests failed (output above)" >&2
	exit "$unit_rc"
fi
# Every fuzz target briefly (FUZZTIME, default 10s each); longer by hand.
timed "fuzz" ./scripts/fuzz.sh
