#!/usr/bin/env bash
# The browser viewer: the library and the sim harness compiled to WebAssembly
# with emscripten, plus the page in tools/web/.
#   bash tools/web.sh build   installs emscripten if missing (Debian package;
#                             as root or with sudo), fetches cJSON's source
#                             with apt-get source, and writes build/web/
#                             (index.html, quadnav.js, quadnav.wasm, app.js,
#                             the bundled levels and maps)
#   bash tools/web.sh test    builds, installs chromium if missing, and runs
#                             tests/web_test.py against build/web/ (compares
#                             with the native tool: $QN_QUADNAV, else
#                             build/tools/quadnav, built if missing)
#   bash tools/web.sh deps [test]  only installs / fetches what build (and test)
#                             need
#   bash tools/web.sh serve   serves build/web/ on http://127.0.0.1:8321/ (PORT as a
#                             second argument)
# The C sources are the ones src/meson.build lists (quadnav_sources), plus
# tools/sim.c, sim_grid.c, session.c, toolutil.c, crowd_scene.c (crowd mode; with
# the CLI helpers it calls: cliutil.c, cliload.c, cliio.c) and tools/web/qn_web.c.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/web
deps=build/web-deps
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

apt_install() {
  echo "web: installing $*" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# cJSON's source from Debian (the native build links Debian's libcjson).
fetch_cjson() {
  [ -f "$deps/cjson/cJSON.c" ] && return 0
  local tmp="$deps/apt"
  mkdir -p "$tmp/lists/partial" "$deps/cjson/include/cjson"
  echo "deb-src http://deb.debian.org/debian bookworm main" >"$tmp/src.list"
  local o=(-o Dir::Etc::SourceList="$PWD/$tmp/src.list" -o Dir::Etc::SourceParts=/dev/null
           -o Dir::State::Lists="$PWD/$tmp/lists")
  apt-get "${o[@]}" update -qq >/dev/null
  (cd "$tmp" && apt-get "${o[@]}" source --download-only -qq cjson >/dev/null 2>&1)
  tar -xzf "$tmp"/cjson_*.orig.tar.gz -C "$tmp"
  cp "$tmp"/cJSON-*/cJSON.c "$deps/cjson/"
  cp "$tmp"/cJSON-*/cJSON.h "$deps/cjson/include/cjson/"
}

# The library's sources as src/meson.build lists them (every
# "quadnav_sources = files(...)" and "quadnav_sources += files(...)", the
# level loader included: the page needs it).
lib_sources() {
  awk '/quadnav_sources \+?= *files\(/ { on = 1 } on { print } on && /\)/ { on = 0 }' \
    src/meson.build | grep -o "'[^']*\.c'" | tr -d "'" | sed 's|^|src/|'
}

exports() {
  local f
  f=$(grep -o 'QNW_EXPORT [^(]*(' tools/web/qn_web.c | grep -o 'qnw_[a-z_0-9]*' |
      sed 's/^/_/' | tr '\n' ',')
  echo "${f}_malloc,_free"
}

# What the build and the test need from outside: emscripten, chromium (for
# `test`), cJSON's source.
deps() {
  command -v emcc >/dev/null 2>&1 || apt_install emscripten
  [ "${1:-}" = test ] && { command -v chromium >/dev/null 2>&1 || apt_install chromium; }
  mkdir -p "$deps"
  fetch_cjson
}

# Compiles and links the module into $1 (more emcc options after it).
link() {
  # shellcheck disable=SC2046
  # No thread pool in the page (QN_NO_THREADS, as Meson's -Dthreads=disabled).
  emcc -O3 -flto -std=c11 -fno-math-errno -DQN_NO_THREADS -Wall -Wextra -Wno-sign-compare \
    -Iinclude -Isrc -Itools -I"$deps/cjson/include" -I"$deps/cjson/include/cjson" \
    $(lib_sources) tools/sim.c tools/sim_grid.c tools/session.c tools/toolutil.c \
    tools/crowd_scene.c tools/cliutil.c tools/cliload.c tools/cliio.c \
    tools/web/qn_web.c "$deps/cjson/cJSON.c" \
    -o "$1" "${@:2}" \
    -sMODULARIZE=1 -sEXPORT_NAME=createQuadnav -sALLOW_MEMORY_GROWTH=1 \
    -sENVIRONMENT=web -sFILESYSTEM=0 -sEXPORTED_FUNCTIONS="$(exports)" \
    -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8,HEAPU8,HEAPF32,HEAPF64
}

build() {
  deps
  mkdir -p "$out"
  # Debian's emcc runs its JavaScript optimiser with Debian's node modules.
  export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
  link "$out/quadnav.js"
  # The same module with the .wasm inside the .js, and the small bundled
  # levels in bundled.js: what the page loads when opened from disk
  # (file://), where browsers fetch nothing.
  link "$out/quadnav-embed.js" -sSINGLE_FILE=1
  python3 tools/web/bundle.py "$out/bundled.js" data/levels/*.json data/maps/arena.map
  cp tools/web/index.html tools/web/app.js tools/web/style.css "$out/"
  mkdir -p "$out/levels" "$out/maps"
  cp data/levels/*.json "$out/levels/"
  cp data/maps/*.map "$out/maps/"
  # A 512 x 512 city for the 5,000-unit figure, from the shared MovingAI copy
  # when it is beside the checkout.
  big=../shared/data/movingai/maps/cities/Boston_0_512.map
  [ -f "$big" ] && cp "$big" "$out/maps/"
  echo "web: wrote $out/ (quadnav.wasm $(stat -c %s "$out/quadnav.wasm") bytes);" \
       "open it with: bash tools/web.sh serve" >&2
}

case "${1:-build}" in
  deps) deps "${2:-}" ;;
  build) build ;;
  test)
    deps test
    build
    quadnav="${QN_QUADNAV:-build/tools/quadnav}"
    [ -x "$quadnav" ] || bash tools/setup.sh
    python3 tests/web_test.py "$out" "$quadnav" ;;
  serve)
    exec python3 tools/web/serve.py "$out" "${2:-8321}" ;;
  *) echo "usage: bash tools/web.sh [build|test|serve]" >&2; exit 2 ;;
esac
