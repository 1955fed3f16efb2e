#!/usr/bin/env bash
# Runs the real-editor test N times in a row (default 10) and prints how many passed, e.g. 10/10.
# Not part of CI: one run is ~30-60 s and ~1.4 GiB. Needs `npm run package` first.
#   bash scripts/editor-test-repeat.sh [N]      (env as for npm run test:editor: CODEBURN_PYTHON)
set -uo pipefail
cd "$(dirname "$0")/.."
n="${1:-10}"
passed=0
logs="$(mktemp -d "${TMPDIR:-/tmp}/codeburn-editor-repeat-XXXXXX")"
for i in $(seq 1 "$n"); do
  start=$(date +%s)
  if node scripts/editor-test.mjs >"$logs/run-$i.log" 2>&1; then
    passed=$((passed + 1)); result=passed
  else
    result="FAILED (log: $logs/run-$i.log)"
  fi
  echo "run $i/$n: $result in $(( $(date +%s) - start )) s" >&2
done
echo "$passed/$n"
[ "$passed" = "$n" ]
