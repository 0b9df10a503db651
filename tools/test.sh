#!/usr/bin/env bash
# Runs the default test suite in build/ (see tools/setup.sh; QN_BUILD names
# another build folder) and closes with one line "N passed, N failed".
# Extra arguments go to `meson test`, for example --suite movingai (which
# needs the MovingAI copy in ../shared/data/movingai: see README.md).
set -uo pipefail
cd "$(dirname "$0")/.."
build="${QN_BUILD:-build}"
movingai="$(cd .. && pwd)/shared/data/movingai"

wants_movingai=false
prev=""
for a in "$@"; do
  case "$a" in
    --suite=movingai|--suite=*:movingai) wants_movingai=true ;;
    movingai|*:movingai) [ "$prev" = "--suite" ] && wants_movingai=true ;;
  esac
  prev="$a"
done
if [ "$wants_movingai" = true ] && [ ! -f "$movingai/MANIFEST.tsv" ]; then
  echo "test.sh: the movingai suite needs the MovingAI benchmark copy, and" \
       "$movingai/MANIFEST.tsv is missing (README.md, 'Data', says where it comes from;" \
       "after adding it run: meson setup --reconfigure $build)" >&2
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

log="$build/meson-logs/testlog.json"
rm -f "$log" # never count a previous run's results
meson test -C "$build" --print-errorlogs "$@"
status=$?
if [ ! -s "$log" ]; then
  echo "test.sh: no test ran (meson test exited with $status; is the suite name right," \
       "and configured? meson setup --reconfigure $build)" >&2
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi
passed=$(grep -c '"result": "OK"' "$log" || true)
failed=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
skipped=$(grep -c '"result": "SKIP"' "$log" || true)
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
exit $status
