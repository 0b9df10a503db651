#!/usr/bin/env python3
"""The command line gives the same answer every time: `quadnav sim --json`
at 1, 2 and 3 threads, `quadnav compare --json`, `field --json` run twice,
the level `import-map` writes and the SVG `render` writes, all identical
except the keys that hold measured times (and the thread count itself).

usage: determinism_cli.py QUADNAV"""
import json
import os
import subprocess
import sys
import tempfile

QN = sys.argv[1]
DATA = os.environ.get("QN_DATA_DIR", "data")
LEVELS = [os.path.join(DATA, "levels", n + ".json") for n in ("town", "maze", "field")]
MAP = os.path.join(DATA, "maps", "arena.map")
# Measured times and the thread count: the only keys allowed to differ.
SIM_VOLATILE = {"sample_ns", "build_us", "threads"}
COMPARE_VOLATILE = {"build_us", "sample_ns"}
IMPORT_VOLATILE = {"ms", "decompose_ms", "output"}  # output: the file name given with -o
failures = []
passed = 0


def run(args):
    p = subprocess.run([QN] + args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        failures.append(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout


def strip(obj, volatile):
    """obj without the volatile keys, at any depth."""
    if isinstance(obj, dict):
        return {k: strip(v, volatile) for k, v in obj.items() if k not in volatile}
    if isinstance(obj, list):
        return [strip(v, volatile) for v in obj]
    return obj


def diff(a, b, where=""):
    """The first place where two JSON values differ, as text."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: present in one run only"
            d = diff(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return ""
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} vs {len(b)} elements"
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, f"{where}[{i}]")
            if d:
                return d
        return ""
    return "" if a == b else f"{where}: {a!r} vs {b!r}"


def same_json(name, outs, volatile, required):
    """Every output parses, carries the required keys, and all agree once the
    volatile keys are removed. Compared as parsed JSON and as text, so a
    number printed with another rounding also counts as a difference."""
    global passed
    try:
        objs = [json.loads(o) for o in outs]
    except ValueError as e:
        failures.append(f"{name}: not JSON: {e}")
        return
    missing = [k for k in required if k not in json.dumps(objs[0])]
    if missing:
        failures.append(f"{name}: keys {missing} missing: {outs[0][:200]}")
        return
    ref = strip(objs[0], volatile)
    for i, o in enumerate(objs[1:], 1):
        d = diff(ref, strip(o, volatile))
        if d or json.dumps(ref) != json.dumps(strip(o, volatile)):
            failures.append(f"{name}: run {i} differs from run 0 at {d or 'key order'}")
            return
    passed += 1


SIM_KEYS = ("arrived", "wall_contacts", "stuck", "stretch_mean", "stretch_p95", "samples")
for lv in LEVELS:
    base = ["sim", lv, "--units", "400", "--json"]
    outs = [run(base + ["--threads", str(t)]) for t in (1, 2, 3)]
    same_json("sim threads " + lv, outs, SIM_VOLATILE, SIM_KEYS)
    # The runs must really have used the threads asked for.
    used = [json.loads(o).get("threads") if o else None for o in outs]
    if used != [1, 2, 3]:
        failures.append(f"sim {lv}: threads reported {used}, asked 1, 2, 3")

# Scripted changes repair the field mid-run; threads must not matter either.
changes = ["--block", "3@10", "--cost", "5=4@20", "--unblock", "3@60"]
outs = [run(["sim", LEVELS[0], "--units", "300", "--json", "--threads", str(t)] + changes)
        for t in (1, 2)]
same_json("sim changes", outs, SIM_VOLATILE, SIM_KEYS + ("escapes",))

for target in (LEVELS[0], MAP):
    base = ["compare", target, "--units", "150", "--json"]
    same_json("compare " + target, [run(base), run(base)], COMPARE_VOLATILE,
              ("quad", "grid8", "gridvec", "stretch_mean"))
base = ["compare", MAP, "--scen", MAP + ".scen", "--units", "60", "--json"]
same_json("compare --scen", [run(base), run(base)], COMPARE_VOLATILE, ("quad", "goals"))

for lv in LEVELS:
    base = ["field", lv, "--json"]
    same_json("field " + lv, [run(base), run(base)], {"build_us"}, ("field", "reachable"))

with tempfile.TemporaryDirectory(prefix="qn-determinism-") as tmp:
    outs, files = [], []
    for i in range(2):
        path = os.path.join(tmp, f"level{i}.json")
        outs.append(run(["import-map", MAP, "-o", path, "--json"]))
        with open(path, "rb") as f:
            files.append(f.read())
    same_json("import-map", outs, IMPORT_VOLATILE, ("quads", "portals"))
    if files[0] != files[1] or not files[0]:
        failures.append("import-map: the two level files differ")
    else:
        passed += 1

    for mode in ("quad", "grid8", "gridvec"):
        svgs = []
        for i in range(2):
            path = os.path.join(tmp, f"{mode}{i}.svg")
            run(["render", LEVELS[0], "--mode", mode, "--units", "50", "-o", path])
            with open(path, "rb") as f:
                svgs.append(f.read())
        if svgs[0] != svgs[1] or b"<svg" not in svgs[0]:
            failures.append(f"render {mode}: the two SVG files differ")
        else:
            passed += 1

for f in failures:
    print("FAIL", f)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
