#!/usr/bin/env bash
# Runs the default test suite in build/ (see tools/setup.sh; QN_BUILD names
# another build folder) and closes with one line "N passed, N failed".
# Extra arguments go to `meson test`, for example --suite movingai.
set -uo pipefail
cd "$(dirname "$0")/.."
build="${QN_BUILD:-build}"
meson test -C "$build" --print-errorlogs "$@"
status=$?
log="$build/meson-logs/testlog.json"
if [ -f "$log" ]; then
  passed=$(grep -c '"result": "OK"' "$log" || true)
  failed=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
  skipped=$(grep -c '"result": "SKIP"' "$log" || true)
  echo "${passed} passed, ${failed} failed, ${skipped} skipped"
fi
exit $status
