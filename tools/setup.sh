#!/usr/bin/env bash
# Installs what the build needs on Debian (only what is missing), then
# configures (once) and builds quadnav into build/. A second run only rebuilds.
# In CI (CI=true) warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v meson >/dev/null 2>&1 || need+=(meson)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists libcjson 2>/dev/null || need+=(libcjson-dev)
pkg-config --exists cmocka 2>/dev/null || need+=(libcmocka-dev)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Runs a step quietly; when it fails, shows everything it printed (the
# compiler's errors) and stops with its exit status.
quietly() {
  local out status=0
  out=$("$@" 2>&1) || status=$?
  if [ $status -ne 0 ]; then
    printf '%s\n' "$out" >&2
    echo "setup: failed ($status): $*" >&2
    exit $status
  fi
}

werror=false
[ "${CI:-}" = "true" ] && werror=true
if [ ! -f build/build.ninja ]; then
  quietly meson setup build -Dwerror="$werror"
elif [ "$werror" = true ]; then
  quietly meson configure build -Dwerror=true
fi
quietly ninja -C build
echo "setup: built in build/ (build/tools/quadnav)" >&2
