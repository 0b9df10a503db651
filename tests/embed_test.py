#!/usr/bin/env python3
"""quadnav embedded the ways a game embeds a C library, each tried for real
in a throwaway folder:

  vendor      the sources on a plain compiler line (no Meson): with JSON and
              pthreads, and with neither (QN_NO_THREADS, io/level.c left out)
  subproject  a parent Meson project with its own default test setup using
              quadnav from subprojects/ (symlinked and static; copied and
              shared): no quadnav tests, tools, data or install unless asked
  installed   quadnav installed into a prefix: SONAME libquadnav.so.0,
              headers, quadnav.pc; a program built with pkg-config, shared
              and static
              and a build with -Djson=disabled -Dthreads=disabled
  wrap        the cJSON wrap fallback (subprojects/cjson.wrap), forced with
              --force-fallback-for=libcjson; needs the cJSON release tarball
              named in the wrap (no network here): set QN_CJSON_TARBALL to
              its path, else the mode is skipped (exit 77)

usage: embed_test.py SOURCE_ROOT MODE [CC ...]   (CC defaults to $CC or cc)
Closes with "N passed, N failed"."""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import tally

SRC = os.path.abspath(sys.argv[1])
MODE = sys.argv[2]
CC = sys.argv[3:] or [os.environ.get("CC", "cc")]



def skip_dirs(*patterns):
    """Like shutil.ignore_patterns, but for directories only: build folders
    are left out, a source file such as src/mesh/build.h is not."""
    import fnmatch

    def ignore(folder, names):
        return {n for n in names if os.path.isdir(os.path.join(folder, n))
                and any(fnmatch.fnmatch(n, p) for p in patterns)}
    return ignore

def check(name, cond, detail=""):
    """A build's log matters at its end: the last 1,500 characters kept."""
    return tally.check(name, cond, detail, keep=1500, tail=True)


def run(args, cwd=None, env=None, timeout=900):
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def needed_libs(path):
    """DT_NEEDED and DT_SONAME entries of an ELF file (readelf -d)."""
    rc, out = run(["readelf", "-d", path])
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    soname = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return needed, soname


def lib_sources(with_json):
    files = sorted(glob.glob(os.path.join(SRC, "src", "*", "*.c")))
    return [f for f in files if with_json or not f.endswith(os.path.join("io", "level.c"))]


# ---- vendor ----------------------------------------------------------------

def vendor(tmp):
    """The README's vendoring line, strict C11, warnings as errors."""
    flags = ["-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1",
             "-I", os.path.join(SRC, "include"), "-I", os.path.join(SRC, "src")]
    town = os.path.join(SRC, "data", "levels", "town.json")
    exe = os.path.join(tmp, "game_loop")
    rc, out = run(CC + flags + ["-o", exe, os.path.join(SRC, "examples", "game_loop.c")]
                  + lib_sources(True) + ["-lcjson", "-lm", "-pthread"])
    if check("vendor: cc -I include -I src examples/game_loop.c src/*/*.c -lcjson -lm -pthread",
             rc == 0, out):
        rc, out = run([exe, town, "north-road-3"])
        check("vendor: game_loop runs", rc == 0 and "200 arrived" in out, out)
    exe = os.path.join(tmp, "mesh_api")
    rc, out = run(CC + flags + ["-DQN_NO_THREADS", "-o", exe,
                                os.path.join(SRC, "examples", "mesh_api.c")]
                  + lib_sources(False) + ["-lm"])
    if check("vendor: -DQN_NO_THREADS without io/level.c, cJSON or pthreads", rc == 0, out):
        rc, out = run([exe])
        check("vendor: mesh_api runs", rc == 0 and "16 of 16" in out, out)


# ---- subproject ------------------------------------------------------------

PARENT_MESON = """project('parent', 'c', default_options : ['c_std=c11'])
qn = dependency('quadnav')
game = executable('game', 'game.c', dependencies : qn, install : true)
test('game', game)
# The parent's own default setup: quadnav must not add another.
add_test_setup('default', is_default : true)
"""

PARENT_GAME = r"""#include <quadnav.h>
#include <stdio.h>
/* One room, a goal in it, one unit a step away. */
int main(void) {
    static const char json[] = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,4,4], \"id\": \"room\"}]}";
    qn_level *level;
    qn_field *field;
    qn_vec2 goal = {3, 2}, dir;
    if (qn_level_load_mem(json, sizeof json - 1, NULL, &level, NULL) != QN_OK) return 1;
    if (qn_level_find_quad(level, "room") != 0) return 2;
    if (qn_field_create(qn_level_mesh(level), &goal, 1, NULL, NULL, &field, NULL) != QN_OK) return 3;
    qn_status st = qn_field_sample(field, (qn_vec2){1, 2}, NULL, &dir);
    printf("quadnav %s: %s, dir (%g, %g)\n", qn_version_string(), qn_status_name(st), dir.x, dir.y);
    qn_field_destroy(field);
    qn_level_destroy(level);
    return st == QN_OK && dir.x > 0.99f ? 0 : 4;
}
"""


def make_parent(tmp, name, link):
    root = os.path.join(tmp, name)
    os.makedirs(os.path.join(root, "subprojects"))
    with open(os.path.join(root, "meson.build"), "w") as f:
        f.write(PARENT_MESON)
    with open(os.path.join(root, "game.c"), "w") as f:
        f.write(PARENT_GAME)
    dest = os.path.join(root, "subprojects", "quadnav")
    if link:
        os.symlink(SRC, dest)
    else:
        shutil.copytree(SRC, dest, symlinks=True, ignore=skip_dirs(
            ".git", "build*", "builddir", "fuzz-out", "subprojects"))
        if os.path.isdir(os.path.join(SRC, "subprojects")):
            shutil.copytree(os.path.join(SRC, "subprojects"), os.path.join(dest, "subprojects"),
                            ignore=shutil.ignore_patterns("cJSON-*", "packagecache"))
    return root


def installed_files(prefix):
    out = []
    for d, _, files in os.walk(prefix):
        out += [os.path.relpath(os.path.join(d, f), prefix) for f in files]
    return sorted(out)


def try_parent(tmp, name, link, library):
    root = make_parent(tmp, name, link)
    build, prefix = os.path.join(root, "b"), os.path.join(tmp, name + "-prefix")
    what = f"subproject ({name}, {library})"
    rc, out = run(["meson", "setup", build, root, "-Ddefault_library=" + library,
                   "--prefix", prefix])
    if not check(f"{what}: meson setup", rc == 0 and "Traceback" not in out, out):
        return None
    rc, out = run(["ninja", "-C", build, "-j2"])
    if not check(f"{what}: build", rc == 0, out):
        return None
    rc, out = run(["meson", "test", "-C", build])
    with open(os.path.join(build, "meson-logs", "testlog.json")) as f:
        names = [json.loads(line)["name"] for line in f if line.strip()]
    check(f"{what}: meson test runs the parent's test only", rc == 0 and names == ["game"],
          f"rc {rc}, tests {names}\n{out}")
    targets = json.loads(run(["meson", "introspect", "--targets", build])[1])
    ours = sorted(t["name"] for t in targets if t["subproject"] == "quadnav")
    check(f"{what}: only the library is built", ours == ["quadnav"], ours)
    needed, _ = needed_libs(os.path.join(build, "game"))
    if library == "static":
        check(f"{what}: game links quadnav statically",
              not any(n.startswith("libquadnav") for n in needed), needed)
    else:
        check(f"{what}: game needs libquadnav.so.0", "libquadnav.so.0" in needed, needed)
    rc, out = run(["meson", "install", "-C", build, "--quiet"])
    files = installed_files(prefix)
    check(f"{what}: meson install installs the game and nothing of quadnav",
          rc == 0 and len(files) == 1 and files[0].endswith("bin/game"), f"rc {rc}, {files}\n{out}")
    return build, prefix


def subproject(tmp):
    try_parent(tmp, "symlinked", True, "static")
    got = try_parent(tmp, "copied", False, "shared")
    if not got:
        return
    # Asked for, quadnav installs its library, header and quadnav.pc.
    build, prefix = got
    shutil.rmtree(prefix)
    rc, out = run(["meson", "configure", build, "-Dquadnav:install=true"])
    if rc == 0:
        rc, out = run(["meson", "install", "-C", build, "--quiet"])
    files = installed_files(prefix)
    want = ["include/quadnav.h", "include/quadnav_version.h", "libquadnav.so.0", "quadnav.pc"]
    check("subproject: -Dquadnav:install=true installs library, headers and quadnav.pc",
          rc == 0 and all(any(f.endswith(w) for f in files) for w in want)
          and not any(f.endswith("bin/quadnav") or "share/quadnav" in f for f in files),
          f"rc {rc}, {files}\n{out}")


# ---- installed -------------------------------------------------------------

def installed(tmp):
    build, prefix = os.path.join(tmp, "b"), os.path.join(tmp, "prefix")
    rc, out = run(["meson", "setup", build, SRC, "--prefix", prefix, "-Ddefault_library=both",
                   "-Dtests=false", "-Dtools=false", "-Dexamples=false"])
    if rc == 0:
        rc, out = run(["ninja", "-C", build, "-j2"])
    if rc == 0:
        rc, out = run(["meson", "install", "-C", build, "--quiet"])
    if not check("installed: setup, build and install", rc == 0, out):
        return
    files = installed_files(prefix)
    so = [f for f in files if re.search(r"libquadnav\.so\.\d+\.\d+\.\d+$", f)]
    if check("installed: one versioned shared library", len(so) == 1, files):
        _, soname = needed_libs(os.path.join(prefix, so[0]))
        check("installed: SONAME libquadnav.so.0", soname == ["libquadnav.so.0"], soname)
    pcs = [f for f in files if f.endswith("pkgconfig/quadnav.pc")]
    if not check("installed: quadnav.pc", len(pcs) == 1, files):
        return
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(os.path.join(prefix, pcs[0])))
    game_c = os.path.join(tmp, "game.c")
    with open(game_c, "w") as f:
        f.write(PARENT_GAME)
    libdir = os.path.dirname(os.path.join(prefix, so[0]))
    for kind in ("shared", "static"):
        args = ["--cflags", "--libs"] + (["--static"] if kind == "static" else [])
        rc, flags = run(["pkg-config"] + args + ["quadnav"], env=env)
        flags = flags.split()
        if kind == "static":
            check("installed: pkg-config --static lists cJSON and libm",
                  "-lcjson" in flags and "-lm" in flags, flags)
            # Link the archive itself: the linker would pick the .so first.
            flags = [os.path.join(libdir, "libquadnav.a") if x == "-lquadnav" else x
                     for x in flags]
        exe = os.path.join(tmp, "game-" + kind)
        rc, out = run(CC + ["-std=c11", "-o", exe, game_c] + flags, env=env)
        if not check(f"installed: cc game.c $(pkg-config {' '.join(args)} quadnav)",
                     rc == 0, out):
            continue
        needed, _ = needed_libs(exe)
        check(f"installed: {kind} game needs libquadnav.so.0: {kind == 'shared'}",
              ("libquadnav.so.0" in needed) == (kind == "shared"), needed)
        rc, out = run([exe], env=dict(env, LD_LIBRARY_PATH=libdir))
        check(f"installed: {kind} game runs", rc == 0 and "QN_OK" in out, out)


def api_only(tmp):
    """-Djson=disabled -Dthreads=disabled: no cJSON, no pthreads, no loader;
    the mesh example and the big-world one (a MovingAI map, no JSON) still
    build and run."""
    build = os.path.join(tmp, "api-only")
    rc, out = run(["meson", "setup", build, SRC, "-Djson=disabled", "-Dthreads=disabled",
                   "-Dexamples=true"])
    if rc == 0:
        rc, out = run(["ninja", "-C", build, "-j2"])
    if not check("api-only: -Djson=disabled -Dthreads=disabled builds", rc == 0, out):
        return
    lib = os.path.join(build, "src", "libquadnav.so.0")
    needed, _ = needed_libs(lib)
    check("api-only: the library needs neither cJSON nor pthreads",
          not any("cjson" in n or "pthread" in n for n in needed), needed)
    rc, syms = run(["nm", "-D", "--defined-only", lib])
    check("api-only: no level loader, the rest of the API there",
          rc == 0 and "qn_level_load_file" not in syms and "qn_field_sample_jobs" in syms
          and "qn_mesh_create" in syms, syms[-500:])
    rc, out = run(["meson", "test", "-C", build])
    with open(os.path.join(build, "meson-logs", "testlog.json")) as f:
        names = [json.loads(line)["name"] for line in f if line.strip()]
    check("api-only: the mesh and big-world examples run (the level one is not built)",
          rc == 0 and names == ["example_mesh_api", "example_big_world"], f"{names}\n{out}")


# ---- wrap ------------------------------------------------------------------

def wrap(tmp):
    tarball = os.environ.get("QN_CJSON_TARBALL", "")
    if not tarball or not os.path.isfile(tarball):
        print("wrap: skipped: set QN_CJSON_TARBALL to the cJSON tarball subprojects/cjson.wrap "
              "names (no network here)")
        sys.exit(77)
    with open(os.path.join(SRC, "subprojects", "cjson.wrap")) as f:
        wrapfile = dict(re.findall(r"^(\w+)\s*=\s*(.*?)\s*$", f.read(), re.M))
    with open(tarball, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    check("wrap: the tarball has the wrap's source_hash", digest == wrapfile["source_hash"],
          f"{digest} != {wrapfile['source_hash']}")
    # A copy of quadnav whose package cache holds the tarball: Meson takes it
    # from there instead of downloading, after checking the hash.
    root = os.path.join(tmp, "quadnav")
    shutil.copytree(SRC, root, symlinks=True, ignore=skip_dirs(
        ".git", "build*", "builddir", "fuzz-out", "cJSON-*", "packagecache"))
    cache = os.path.join(root, "subprojects", "packagecache")
    os.makedirs(cache)
    shutil.copy(tarball, os.path.join(cache, wrapfile["source_filename"]))
    build = os.path.join(tmp, "b")
    rc, out = run(["meson", "setup", build, root, "--force-fallback-for=libcjson",
                   "-Dtests=false", "-Dtools=false", "-Dexamples=true"])
    if not check("wrap: meson setup with cJSON from the wrap",
                 rc == 0 and re.search(r"Dependency libcjson( from subproject \S+)? found: YES \S+ \((overridden|cached)\)", out),
                 out):
        return
    rc, out = run(["ninja", "-C", build, "-j2"])
    if check("wrap: build", rc == 0, out):
        rc, out = run(["meson", "test", "-C", build, "--suite", "examples"])
        check("wrap: the examples run on the wrap's cJSON", rc == 0, out)


def installed_and_api_only(tmp):
    installed(tmp)
    api_only(tmp)


MODES = {"vendor": vendor, "subproject": subproject, "installed": installed_and_api_only,
         "wrap": wrap}
with tempfile.TemporaryDirectory(prefix="qn-embed-") as tmp:
    MODES[MODE](tmp)
tally.finish(sys.stderr)
