#!/usr/bin/env bash
# Rebuilds the dashboard's front end (web/) into internal/ui/assets, which
# is committed and embedded in the sbx binary, so `go build` needs no node.
# Run it after changing web/src and commit the result; the test
# TestAssetsAreFresh (internal/ui) fails while the assets are stale.
#
#   ./scripts/build-ui.sh
#
# Needs node and npm; the packages come from web/package-lock.json
# (scripts/npm-install.sh, offline from its cache after the first run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/npm-install.sh web
rm -rf internal/ui/assets
node web/build.mjs internal/ui/assets
echo "build-ui: internal/ui/assets rebuilt" >&2
