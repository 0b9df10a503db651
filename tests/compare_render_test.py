#!/usr/bin/env python3
"""Smoke tests of `quadnav compare` and `quadnav render`: the JSON keys of
every mode, unit counts, arrivals, the grid optimum plumbing, one-line errors,
and SVG output that parses as XML and holds the expected elements."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

QN = sys.argv[1]
DATA = os.environ.get("QN_DATA_DIR", "data")
TOWN = os.path.join(DATA, "levels", "town.json")
MAP = os.path.join(DATA, "maps", "arena.map")
SCEN = MAP + ".scen"
MODES = ("quad", "grid8", "gridvec")
KEYS = ("build_us", "bytes", "sample_ns", "arrived", "units", "wall_contacts", "stuck",
        "stretch_mean", "stretch_p95")
SVG_NS = "{http://www.w3.org/2000/svg}"
failures = []
passed = 0


def run(args):
    p = subprocess.run([QN] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(f"{name}: {str(detail)[:300]}")


def compare_json(name, args, units):
    rc, out, err = run(["compare"] + args + ["--units", str(units), "--json"])
    check(name + " exit 0", rc == 0, err)
    lines = [l for l in out.splitlines() if l.strip()]
    check(name + " one line", len(lines) == 1, out[:200])
    try:
        j = json.loads(out)
    except ValueError as e:
        failures.append(f"{name}: not JSON: {e}: {out[:200]}")
        return {}
    check(name + " units", j.get("units") == units, j)
    for m in MODES:
        r = j.get(m, {})
        check(f"{name} {m} keys", all(k in r for k in KEYS), r)
        if not all(k in r for k in KEYS):
            continue
        check(f"{name} {m} units", r["units"] == units, r)
        check(f"{name} {m} arrived+stuck", r["arrived"] + r["stuck"] == units, r)
        check(f"{name} {m} build/bytes/sample", r["build_us"] > 0 and r["bytes"] > 0
              and r["sample_ns"] > 0, r)
        if r["arrived"]:
            check(f"{name} {m} stretch order", 0 < r["stretch_mean"] <= r["stretch_p95"] * 1.0001
                  or r["arrived"] == 1, r)
    return j


# Town: random starts to the level's first goal, quads against a rasterised grid.
j = compare_json("town", [TOWN], 120)
if j:
    check("town quad all arrive", j["quad"]["arrived"] == 120, j["quad"])
    check("town quad no contact", j["quad"]["wall_contacts"] == 0, j["quad"])
    check("town one goal", j.get("goals") == 1, j)

# Arena with its scenario: rows spread over the file, one instance per goal.
j = compare_json("arena scen", [MAP, "--scen", SCEN], 60)
if j:
    g8 = j["grid8"]
    # 8-direction flow never cuts a corner and walks octile paths from cell
    # centres: every unit arrives, no contact, stretch against the scenario's
    # optimal length at most 1 (plus float dust), and not far below.
    check("arena grid8 arrives", g8["arrived"] == 60 and g8["wall_contacts"] == 0, g8)
    check("arena grid8 stretch", 0.9 < g8["stretch_mean"] <= 1.001
          and g8["stretch_p95"] <= 1.001, g8)
    check("arena quad arrives", j["quad"]["arrived"] == 60, j["quad"])
    check("arena goals", 1 <= j.get("goals", 0) <= 60, j)
    check("arena quads", 0 < j.get("quads", 0) < 49 * 49, j)

# Arena without a scenario: a chosen goal, random starts.
j = compare_json("arena random", [MAP, "--seed", "4"], 50)
if j:
    check("arena random one goal", j.get("goals") == 1, j)
    check("arena random grid8", j["grid8"]["arrived"] == 50, j["grid8"])

# Same input, same numbers (except timings): the run is deterministic.
rc1, out1, _ = run(["compare", MAP, "--units", "20", "--json"])
rc2, out2, _ = run(["compare", MAP, "--units", "20", "--json"])
if rc1 == 0 and rc2 == 0:
    a, b = json.loads(out1), json.loads(out2)
    same = all(a[m][k] == b[m][k] for m in MODES
               for k in ("arrived", "stuck", "wall_contacts", "stretch_mean"))
    check("compare deterministic", same, (a, b))

# A level imported from the map carries the same grid and quads: the same
# results as the map itself (timings aside).
with tempfile.TemporaryDirectory(prefix="qn_compare_") as d:
    lv = os.path.join(d, "arena.json")
    rc, _, err = run(["import-map", MAP, "-o", lv])
    check("import-map for compare", rc == 0, err)
    if rc == 0:
        rc1, out1, err1 = run(["compare", MAP, "--scen", SCEN, "--units", "30", "--json"])
        rc2, out2, err2 = run(["compare", lv, "--scen", SCEN, "--units", "30", "--json"])
        check("compare imported level", rc1 == 0 and rc2 == 0, err1 + err2)
        if rc1 == 0 and rc2 == 0:
            a, b = json.loads(out1), json.loads(out2)
            same = all(a[m][k] == b[m][k] for m in MODES
                       for k in ("bytes", "arrived", "wall_contacts", "stretch_mean"))
            check("imported level same as map", same and a["quads"] == b["quads"], (a, b))

# The markdown table: a header and one row per mode.
rc, out, err = run(["compare", TOWN, "--units", "20"])
rows = [l for l in out.splitlines() if l.startswith("|")]
check("table", rc == 0 and len(rows) == 5 and all(f"| {m} |" in out for m in MODES), out)

# Errors: one line on stderr, exit 1 (failure) or 2 (usage).
rc, out, _ = run(["compare", "--help"])
check("compare --help", rc == 0 and "usage" in out, out)
rc, out, err = run(["compare"])
check("compare without input", rc == 2 and "usage" in err, (rc, err))
for args, want in ((["compare", TOWN, "--units", "0"], 2),
                   (["compare", TOWN, "--bogus"], 2), (["compare", "/nonexistent.json"], 1),
                   (["compare", MAP, "--scen", "/nonexistent.scen"], 1),
                   (["render", TOWN], 2), (["render", TOWN, "--mode", "hex", "-o", "x.svg"], 2),
                   (["render", MAP, "-o", os.devnull], 2),  # a map needs --goal: usage
                   (["render", MAP, "--goal", "0.5,0.5", "-o", os.devnull], 1)):
    rc, out, err = run(args)
    check("error " + " ".join(args[:3]), rc == want and err.count("\n") == 1, (rc, err))
rc, out, _ = run(["render", "--help"])
check("render --help", rc == 0 and "usage" in out and "thin" in out, out)


def svg_check(name, path, mode):
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        failures.append(f"{name}: not XML: {e}")
        return
    check(name + " root", root.tag == SVG_NS + "svg", root.tag)
    count = {t: len(root.findall(".//" + SVG_NS + t)) for t in ("path", "rect", "polyline", "circle")}
    check(name + " elements", count["path"] > 2 and count["rect"] >= 1 and count["circle"] == 1, count)
    check(name + " trails", 1 <= count["polyline"] <= 200, count)
    classes = " ".join(p.get("class", "") for p in root.iter(SVG_NS + "path"))
    if mode == "quad":
        check(name + " portals", "pt" in classes.split(), classes)
    else:
        check(name + " cells", "cell" in classes.split(), classes)
    check(name + " arrows", "ar" in classes.split(), classes)
    check(name + " size", os.path.getsize(path) < 20 << 20, os.path.getsize(path))


with open(SCEN) as f:
    row = f.read().splitlines()[1].split("\t")
arena_goal = f"{int(row[6]) + 0.5},{int(row[7]) + 0.5}"
tmp = tempfile.mkdtemp(prefix="qn_render_")
try:
    # A level path with characters XML must escape, shown in the title.
    odd = os.path.join(tmp, "t&<o>\"wn'.json")
    shutil.copy(TOWN, odd)
    for mode in MODES:
        for label, src, extra in (("town", odd, []), ("arena", MAP, ["--goal", arena_goal])):
            out = os.path.join(tmp, f"{label}_{mode}.svg")
            rc, _, err = run(["render", src, "--mode", mode, "--units", "30", "-o", out] + extra)
            check(f"render {label} {mode}", rc == 0, err)
            if rc == 0:
                svg_check(f"svg {label} {mode}", out, mode)
    root = ET.parse(os.path.join(tmp, "town_quad.svg")).getroot()
    title = root.find(SVG_NS + "title")
    check("title escaped", title is not None and "t&<o>\"wn'" in title.text, title)
finally:
    shutil.rmtree(tmp)

print(f"{passed} passed, {len(failures)} failed")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
