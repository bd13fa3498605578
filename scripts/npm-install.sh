#!/usr/bin/env bash
# Installs the pinned npm packages of every directory in the repository that
# has a committed package-lock.json (compat SDK tests, the TypeScript SDK,
# lint tools), with `npm ci`. Downloads are cached in $SBX_NPM_CACHE (default
# /var/cache/sbx/npm), and a directory whose lockfile has not changed since
# its last install is skipped, so a second run costs nothing.
#
#   ./scripts/npm-install.sh            # every directory
#   ./scripts/npm-install.sh DIR...     # just these
#
# Needs node and npm (scripts/setup-tests.sh installs Debian's) and the npm
# registry.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SBX_NPM_CACHE:-/var/cache/sbx/npm}
mkdir -p "$cache"

dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
	mapfile -t dirs < <(git ls-files '*package-lock.json' | grep -v node_modules | xargs -r -n1 dirname)
fi
for d in "${dirs[@]}"; do
	stamp="$d/node_modules/.sbx-lock-sha256"
	sum=$(sha256sum "$d/package-lock.json" | cut -d' ' -f1)
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
		continue
	fi
	echo "npm-install: $d" >&2
	(cd "$d" && npm ci --no-audit --no-fund --prefer-offline --cache "$cache" >&2)
	echo "$sum" >"$stamp"
done
