#!/usr/bin/env python3
"""Every quadnav command under valgrind, on every bad-input file and once on
each good bundled level and map: each run must exit with the command's
documented status (1 for bad input, 0 for good) and valgrind must report no
memory error and no definite or indirect leak.

usage: valgrind_cli.py QUADNAV   (the 'valgrind' suite: meson test --suite valgrind)

Environment: QN_DATA_DIR, QN_TEST_DATA_DIR as in the other tests;
QN_VALGRIND_JOBS runs that many valgrind processes at once (default 2);
QN_VALGRIND_ONLY=REGEX keeps only the runs whose label matches (for reruns).
Exits 77 (skipped) when valgrind is not installed."""
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

QN = os.path.abspath(sys.argv[1])
DATA = os.environ.get("QN_DATA_DIR", "data")
TDATA = os.environ.get("QN_TEST_DATA_DIR", "tests/data")
JOBS = max(1, int(os.environ.get("QN_VALGRIND_JOBS", "2")))
UNITS = "5"  # sim and compare: a few units are enough to reach every code path
VALGRIND = ["valgrind", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect", "--num-callers=20"]

# An open 4x4 map: the size the scenario files of tests/data/maps claim.
OPEN4 = "type octile\nheight 4\nwidth 4\nmap\n....\n....\n....\n....\n"
# One sample line inside the bundled levels, one outside, one malformed.
SAMPLE_STDIN = "1.5 1.5\n-1e9 0\nnot a point\n"


class Run:
    def __init__(self, label, args, want, stdin=None):
        self.label, self.args, self.want, self.stdin = label, args, want, stdin


def commands_available():
    p = subprocess.run([QN, "--help"], capture_output=True, text=True, timeout=60)
    return set(re.findall(r"^  (\S+)", p.stdout, re.M))


def quad_centre(lv, q):
    pts = ([q["rect"][0:2], q["rect"][2:4]] if "rect" in q
           else [lv["vertices"][i] for i in q["v"]])
    return (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))


def goal_args(path):
    """--goal for a good level that names no goal: the centre of its first
    quad (a level's own goals are used when it has any)."""
    with open(path) as f:
        lv = json.load(f)
    if lv.get("goals"):
        return []
    x, y = quad_centre(lv, lv["quads"][0])
    return ["--goal", f"{x},{y}"]


def path_ends(path):
    """--from and --to for `quadnav path` on a good level: the centre of its
    first open quad to its first goal (or to that centre itself)."""
    with open(path) as f:
        lv = json.load(f)
    q = next(q for q in lv["quads"] if not q.get("blocked"))
    x, y = quad_centre(lv, q)
    to = lv["goals"][0]["at"] if lv.get("goals") else (x, y)
    return ["--from", f"{x},{y}", "--to", f"{to[0]},{to[1]}"]


# Levels the loader accepts but `info` rejects: a goal or spawn outside the
# open quads (mixed.json's spawn "far" at 50,50).
INFO_REJECTS = {"mixed.json"}


def level_runs(path, want, tmp, has, grid_want=None):
    """The level commands on one level file. grid_want: what compare and the
    grid renderings may return (a test level's grid need not cover its goal)."""
    name = os.path.basename(path)
    svg = os.path.join(tmp, "out.svg")
    goal = goal_args(path) if want == 0 else []
    grid_want = grid_want or want
    info_want = 1 if name in INFO_REJECTS else want
    runs = [
        Run("info " + name, ["info", path], info_want),
        Run("info --json " + name, ["info", path, "--json"], info_want),
        Run("field " + name, ["field", path, "--json"] + goal, want),
        Run("sample " + name, ["sample", path] + goal, want, SAMPLE_STDIN),
        Run("sim " + name, ["sim", path, "--units", UNITS, "--json"] + goal, want),
        Run("compare " + name, ["compare", path, "--units", UNITS, "--json"] + goal, grid_want),
        Run("render " + name, ["render", path, "--units", UNITS, "-o", svg] + goal, want),
    ]
    if want == 0:
        # Paths only good input reaches: scripted changes, threads, grid modes.
        runs += [
            Run("sim changes " + name, ["sim", path, "--units", UNITS, "--threads", "2",
                                        "--block", "0@3", "--unblock", "0@9",
                                        "--cost", "0=3@5", "--json"] + goal, want),
            Run("render grid8 " + name, ["render", path, "--mode", "grid8", "--units", UNITS,
                                         "-o", svg] + goal, grid_want),
            Run("render gridvec " + name, ["render", path, "--mode", "gridvec",
                                           "--units", UNITS, "-o", svg] + goal, grid_want),
        ]
    if "path" in has:
        ends = path_ends(path) if want == 0 else ["--from", "0,0", "--to", "1,1"]
        runs.append(Run("path " + name, ["path", path, "--json"] + ends, want))
        if want == 0:
            runs.append(Run("path radius " + name, ["path", path, "--radius", "0.25"] + ends,
                            want))
    return runs


def map_runs(path, want, tmp, has, ok_scen, goal="0.5,0.5", ends=("0,0", "1,0")):
    """The map commands on one .map file; ok_scen is a scenario that fits it;
    ends: two passable cells for `quadnav path`."""
    name = os.path.basename(path)
    runs = [
        Run("import-map " + name, ["import-map", path, "-o", os.path.join(tmp, "out.json"),
                                   "--json"], want),
        Run("compare " + name, ["compare", path, "--units", UNITS, "--json"], want),
        Run("render " + name, ["render", path, "--goal", goal, "--units", UNITS,
                               "-o", os.path.join(tmp, "out.svg")], want),
    ]
    if "path" in has:
        runs.append(Run("path " + name, ["path", path, "--from", ends[0], "--to", ends[1],
                                         "--json"], want))
    if ok_scen:
        runs.append(Run("scen --map " + name, ["scen", ok_scen, "--map", path, "--limit", "5",
                                               "--json"], want))
    return runs


def scen_runs(path, map_path, want):
    """The scenario commands on one .map.scen file, against map_path."""
    name = os.path.basename(path)
    return [
        Run("scen " + name, ["scen", path, "--map", map_path, "--limit", "5", "--json"], want),
        Run("compare --scen " + name, ["compare", map_path, "--scen", path, "--units", UNITS,
                                       "--json"], want),
    ]


def first_row(scen):
    """Start and goal cells of a scenario's first row, as "X,Y" strings."""
    with open(scen) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 9:
                return f"{fields[4]},{fields[5]}", f"{fields[6]},{fields[7]}"
    return "0,0", "0,0"


def plan(tmp, has):
    open4 = os.path.join(tmp, "open4.map")
    with open(open4, "w") as f:
        f.write(OPEN4)
    tmaps = os.path.join(TDATA, "maps")
    ok_scen = os.path.join(tmaps, "ok_crlf_spaces.map.scen")
    runs = []
    for p in sorted(glob.glob(os.path.join(TDATA, "bad", "*.json"))):
        runs += level_runs(p, 1, tmp, has)
    missing = os.path.join(tmp, "no-such-file.json")
    runs += level_runs(missing, 1, tmp, has)
    for p in sorted(glob.glob(os.path.join(tmaps, "*"))):
        base = os.path.basename(p)
        want = 0 if base.startswith("ok_") else 1
        if base.endswith(".scen"):
            runs += scen_runs(p, open4, want)
        elif base.endswith(".map"):
            # The 4x4 scenario fits neither ok map, so scen is run on bad maps only.
            runs += map_runs(p, want, tmp, has, None if want == 0 else ok_scen)
    for p in sorted(glob.glob(os.path.join(DATA, "levels", "*.json"))):
        runs += level_runs(p, 0, tmp, has)
    # The test levels' small grids are placed anywhere, so compare and the
    # grid renderings may refuse a goal outside the grid (exit 1).
    for p in sorted(glob.glob(os.path.join(TDATA, "good", "*.json"))):
        runs += level_runs(p, 0, tmp, has, grid_want=(0, 1))
    for p in sorted(glob.glob(os.path.join(DATA, "maps", "*.map"))):
        # Every bundled map comes with its scenario file.
        scen = p + ".scen"
        start, goal = first_row(scen)
        gx, gy = (int(v) for v in goal.split(","))
        runs += map_runs(p, 0, tmp, has, None, f"{gx + 0.5},{gy + 0.5}", (start, goal))
        runs += scen_runs(scen, p, 0)
    runs.append(Run("demo", ["demo", "--units", UNITS, "--json"], 0))
    return runs


def valgrind_findings(log):
    """The error and leak reports of a valgrind log (empty when clean)."""
    pattern = re.compile(r"(Invalid|uninitialised|Mismatched|definitely lost in|"
                         r"indirectly lost in|Syscall param|overlap|at 0x|by 0x)")
    return [l for l in log.splitlines() if "Command:" not in l and pattern.search(l)]


def execute(i, r, tmp):
    # Each run writes its own files so parallel runs do not share outputs.
    own = os.path.join(tmp, f"run{i}")
    os.makedirs(own, exist_ok=True)
    args = [a.replace(tmp + os.sep + "out.", own + os.sep + "out.") for a in r.args]
    log = os.path.join(own, "vg.log")
    t0 = time.monotonic()
    p = subprocess.run(VALGRIND + ["--log-file=" + log, QN] + args, input=r.stdin,
                       capture_output=True, text=True, timeout=600)
    dt = time.monotonic() - t0
    with open(log) as f:
        text = f.read()
    shutil.rmtree(own, ignore_errors=True)
    problems = []
    if p.returncode == 99 or not re.search(r"ERROR SUMMARY: 0 errors", text):
        problems.append("valgrind reports errors:\n    " +
                        "\n    ".join(valgrind_findings(text)[:60]))
    elif p.returncode not in (r.want if isinstance(r.want, tuple) else (r.want,)):
        problems.append(f"exit {p.returncode}, documented {r.want}; stderr: "
                        f"{p.stderr.strip()[:300]}")
    if p.returncode == 1 and "--json" in args and not p.stderr:
        # info --json reports a bad level as one JSON object on stdout.
        if len(p.stdout.splitlines()) != 1 or '"valid":false' not in p.stdout:
            problems.append(f"exit 1 with no error and no JSON verdict: {p.stdout[:300]!r}")
    elif p.returncode == 1 and p.stderr.count("\n") != 1:
        problems.append(f"error output is not one line: {p.stderr[:300]!r}")
    return r, dt, problems


def main():
    if not shutil.which("valgrind"):
        print("valgrind not found: skipped")
        return 77
    has = commands_available()
    t0 = time.monotonic()
    failures = []
    failed_runs = 0
    with tempfile.TemporaryDirectory(prefix="qn-valgrind-") as tmp:
        runs = plan(tmp, has)
        only = os.environ.get("QN_VALGRIND_ONLY")
        if only:
            runs = [r for r in runs if re.search(only, r.label)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
            futures = [pool.submit(execute, i, r, tmp) for i, r in enumerate(runs)]
            slowest = (0.0, "")
            for fu in concurrent.futures.as_completed(futures):
                r, dt, problems = fu.result()
                slowest = max(slowest, (dt, r.label))
                failed_runs += bool(problems)
                for pr in problems:
                    failures.append(f"{r.label} ({' '.join(r.args)}): {pr}")
    elapsed = time.monotonic() - t0
    cmds = sorted({r.args[0] for r in runs})
    print(f"{len(runs)} runs under valgrind ({', '.join(cmds)}), {JOBS} at a time, "
          f"{elapsed:.0f} s; slowest {slowest[0]:.1f} s: {slowest[1]}")
    if "path" not in has:
        print("note: this quadnav has no 'path' command; not run")
    for f in failures:
        print("FAIL", f)
    print(f"{len(runs) - failed_runs} clean, {failed_runs} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
