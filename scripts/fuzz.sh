#!/usr/bin/env bash
# Runs every fuzz target for a short while (CI) or as long as you like:
#   ./scripts/fuzz.sh            # 10s each
#   FUZZTIME=10m ./scripts/fuzz.sh
# New fuzz targets are found by name (func FuzzX in a *_test.go file).
# A failure leaves the input under <pkg>/testdata/fuzz/<FuzzX>/; rerun it with
# go test -run '<FuzzX>/<file>' ./<pkg>.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}
# Minimising every new input can take the whole budget of a short run.
minimize=${FUZZMINIMIZETIME:-10x}

grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' internal cmd sdk 2>/dev/null | sort |
while read -r file; do
	pkg=./$(dirname "$file")
	for target in $(grep -oE '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
		echo "== $target ($pkg, $fuzztime)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg"
	done
done
