#!/usr/bin/env python3
"""Smoke tests of the quadnav command-line contract: exit codes, one JSON
object with --json, the documented keys, one-line errors."""
import json
import os
import subprocess
import tempfile
import sys

from tally import check, failures, finish

QN = sys.argv[1]
DATA = os.environ.get("QN_DATA_DIR", "data")
TDATA = os.environ.get("QN_TEST_DATA_DIR", "tests/data")
LEVELS = [os.path.join(DATA, "levels", n + ".json") for n in ("town", "maze", "field")]
def run(args, stdin=None):
    p = subprocess.run([QN] + args, input=stdin, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def one_json(name, out):
    lines = [l for l in out.splitlines() if l.strip()]
    check(name + " one line", len(lines) == 1, out[:200])
    try:
        return json.loads(out)
    except ValueError as e:
        failures.append(f"{name}: not JSON: {e}: {out[:200]}")
        return {}


rc, out, _ = run(["--help"])
check("--help", rc == 0 and "sim" in out, out)
for cmd in ("info", "field", "sample", "sim", "demo", "bench", "scen", "import-map", "compare",
            "render", "path", "bake"):
    rc, out, _ = run([cmd, "--help"])
    check(cmd + " --help", rc == 0 and "usage" in out, out)
rc, _, err = run(["nonsense"])
check("unknown command", rc == 2 and err.count("\n") == 1, err)
rc, _, err = run(["sim", LEVELS[0], "--frobnicate"])
check("unknown option", rc == 2 and err.count("\n") == 1, err)
rc, _, err = run(["sim", LEVELS[0], "--units", "abc"])
check("bad --units", rc != 0 and err.count("\n") == 1, err)

for lv in LEVELS:
    rc, out, _ = run(["info", lv, "--json"])
    j = one_json("info " + lv, out)
    check("info ok " + lv, rc == 0 and j.get("valid") is True and j.get("quads", 0) > 0, out)
    rc, out, _ = run(["field", lv, "--json"])
    j = one_json("field " + lv, out)
    check("field " + lv, rc == 0 and len(j.get("field", [])) == j.get("quads"), out[:200])
    check("field reachable " + lv, 0 < j.get("reachable", 0) <= j.get("quads", 0), out[:200])
    rc, out, _ = run(["sim", lv, "--units", "300", "--json"])
    j = one_json("sim " + lv, out)
    keys = ("units", "arrived", "wall_contacts", "stuck", "stretch_mean", "stretch_p95")
    check("sim keys " + lv, all(k in j for k in keys), out)
    check("sim arrival " + lv, j.get("arrived") == 300 and j.get("wall_contacts") == 0
          and j.get("stuck") == 0, out)

# A bad level: exit 1, one line naming the element; with --json, valid false.
bad = os.path.join(TDATA, "bad", "overlap-partial.json")
if not os.path.exists(bad):
    bad = sorted(os.path.join(TDATA, "bad", f) for f in os.listdir(os.path.join(TDATA, "bad"))
                 if f.endswith(".json"))[0]
rc, out, err = run(["info", bad])
check("bad info", rc == 1 and out == "" and err.count("\n") == 1 and "QN_E_" in err, err)
rc, out, err = run(["info", bad, "--json"])
j = one_json("bad info json", out)
check("bad info json", rc == 1 and j.get("valid") is False and j.get("status", "").startswith("QN_E_"), out)
rc, _, err = run(["info", "/nonexistent.json"])
check("missing file", rc == 1 and "QN_E_IO" in err, err)

# sample: one output line per input line, with the documented words.
rc, out, _ = run(["sample", LEVELS[0]], stdin="60 45\n10 10\n-500 -500\nnot numbers\n")
lines = out.splitlines()
check("sample lines", rc == 0 and len(lines) == 4, out)
if len(lines) == 4:
    check("sample at goal", lines[0].split()[2] == "at_goal", lines[0])
    check("sample outside", lines[2].split()[2] == "outside", lines[2])
    check("sample invalid", lines[3].split()[2] == "invalid", lines[3])
rc, out, err = run(["field", LEVELS[0], "--goal", "-900,-900"])
check("goal outside", rc == 1 and "QN_E_OUTSIDE" in err, err)

# sim with threads and scripted changes: same answers on 1 and 2 threads.
rc, out1, _ = run(["sim", LEVELS[0], "--units", "200", "--json", "--threads", "1"])
rc2, out2, _ = run(["sim", LEVELS[0], "--units", "200", "--json", "--threads", "2"])
j1, j2 = one_json("sim t1", out1), one_json("sim t2", out2)
for k in ("arrived", "stuck", "wall_contacts", "stretch_mean", "stretch_p95", "steps"):
    check("sim threads same " + k, rc == 0 and rc2 == 0 and j1.get(k) == j2.get(k), out1 + out2)
rc, out, _ = run(["sim", LEVELS[0], "--units", "300", "--json", "--block", "40@60",
                  "--cost", "10=5@20"])
j = one_json("sim changes", out)
check("sim changes", rc == 0 and j.get("changes") == 2 and j.get("arrived") == 300, out)
rc, _, err = run(["sim", LEVELS[0], "--block", "9999@3"])
check("sim bad change", rc == 1 and "9999" in err, err)
rc, _, err = run(["sim", LEVELS[0], "--block", "x@3"])
check("sim malformed change", rc == 2, err)

# path: waypoints from start to end, length at least the straight line.
rc, out, _ = run(["path", LEVELS[0], "--from", "10,10", "--to", "60,45", "--json"])
j = one_json("path", out)
wp = j.get("waypoints", [])
check("path", rc == 0 and len(wp) >= 2 and wp[0] == [10, 10] and wp[-1] == [60, 45]
      and j.get("length", 0) >= ((50 ** 2 + 35 ** 2) ** 0.5) - 1e-3, out)
MAP = os.path.join(DATA, "maps", "arena.map")
rc, out, _ = run(["path", MAP, "--from", "3,3", "--to", "40,40", "--json"])
j = one_json("path map", out)
wp = j.get("waypoints", [])
check("path map cell centres", rc == 0 and wp and wp[0] == [3.5, 3.5] and wp[-1] == [40.5, 40.5],
      out)
rc, _, err = run(["path", LEVELS[0], "--from", "-5,-5", "--to", "60,45"])
check("path outside", rc == 1 and err.count("\n") == 1, err)

rc, out, _ = run(["demo", "--json"])
j = one_json("demo", out)
check("demo", rc == 0 and j.get("units") == 1000 and j.get("arrived") == 1000, out)

rc, out, _ = run(["demo", "--web"])
check("demo --web", rc == 0 and "tools/web.sh" in out, out)

# sim on a map and in grid modes (the session code the browser viewer runs).
ARENA = os.path.join(DATA, "maps", "arena.map")
for mode in ("quad", "grid8", "gridvec"):
    rc, out, _ = run(["sim", ARENA, "--goal", "30.5,20.5", "--units", "200", "--mode", mode, "--json"])
    j = one_json("sim map " + mode, out)
    check("sim map " + mode, rc == 0 and j.get("arrived") == 200 and j.get("wall_contacts") == 0,
          out)
rc, out, _ = run(["sim", LEVELS[0], "--units", "200", "--mode", "gridvec", "--json"])
j = one_json("sim level gridvec", out)
check("sim level gridvec", rc == 0 and j.get("arrived") == 200, out)
rc, out1, _ = run(["sim", LEVELS[0], "--units", "200", "--json"])
rc2, out2, _ = run(["sim", LEVELS[0], "--units", "200", "--mode", "quad", "--json"])
a, b = json.loads(out1), json.loads(out2)
check("sim --mode quad = default", all(a[k] == b[k] for k in ("arrived", "stretch_mean", "steps")),
      out1 + out2)
# --mode hier: a hierarchical instance, on a level and on a map, with
# scripted blocking on the map (the hier and the destination updated; the
# units on a quad as it is blocked walk out); weighted quads are refused.
rc, out, _ = run(["sim", LEVELS[1], "--units", "200", "--radius", "0.1", "--mode", "hier", "--json"])
j = one_json("sim hier level", out)
check("sim hier level", rc == 0 and j.get("mode") == "hier" and j.get("arrived") == 200
      and j.get("wall_contacts") == 0 and j.get("sectors_built", 0) >= 1 and j.get("bytes", 0) > 0,
      out)
LAK = os.path.join(DATA, "maps", "lak303d.map")
rc, out, _ = run(["sim", LAK, "--goal", "70.5,70.5", "--units", "300", "--radius", "0.1", "--mode",
                  "hier", "--block", "100@20", "--block", "150@20", "--unblock", "100@60", "--json"])
j = one_json("sim hier map changes", out)
check("sim hier map changes", rc == 0 and j.get("changes") == 3 and j.get("arrived") == 300
      and j.get("wall_contacts") == 0 and j.get("hier_sectors", 0) > 1, out)
rc, out, err = run(["sim", LEVELS[2], "--units", "10", "--mode", "hier"])
check("sim hier weighted", rc == 1 and out == "" and err.count("\n") == 1 and "cost" in err, err)
rc, _, err = run(["sim", ARENA, "--units", "10"])
# A missing --goal and options a map cannot take are usage errors (issue 10).
check("sim map needs --goal", rc == 2 and err.count("\n") == 1 and "--goal" in err, err)
rc, _, err = run(["sim", LEVELS[0], "--mode", "crowd"])
check("sim bad --mode", rc == 2 and err.count("\n") == 1 and "crowd" in err, err)
rc, _, err = run(["sim", ARENA, "--goal", "30.5,20.5", "--block", "1@3"])
check("sim map refuses --block", rc == 2 and err.count("\n") == 1, err)
rc, _, err = run(["sim", ARENA, "--goal", "-40,2", "--mode", "grid8"])
check("sim map goal outside", rc == 1 and err.count("\n") == 1 and "goal" in err, err)

rc, out, _ = run(["bench", "--quick", "--json"])
j = one_json("bench", out)
for k in ("instance_us_650", "naive_instance_us_650", "mesh_create_us_650", "sample_ns_per_unit_1000",
          "sample_ns_per_unit_100000", "load_ms_squares_50176", "load_ms_band_1000",
          "load_ms_kites_8000", "load_ms_long_20000", "load_ms_long_50000"):
    check("bench key " + k, isinstance(j.get(k), (int, float)) and j[k] > 0, out[:300])

# Crowds: the scenario keys, a level too small for the units asked for, the SVG.
rc, out, _ = run(["sim", "--crowd", "--scenario", "crossroads", "--units", "40", "--json"])
j = one_json("sim --crowd", out)
keys = ("units", "arrived", "stuck", "wall_contacts", "overlap_pairs", "overlap_rate",
        "max_overlap", "steps", "step_budget", "step_us_per_1000")
check("sim --crowd keys", rc == 0 and all(k in j for k in keys), out)
check("sim --crowd arrival", j.get("arrived") == 40 and j.get("stuck") == 0
      and j.get("wall_contacts") == 0, out)
rc, _, err = run(["sim", "--crowd", LEVELS[0], "--units", "1000000"])
check("sim --crowd too many", rc == 1 and "cannot hold" in err, err)
# A level with a room its goal cannot be reached from (8 x 3 unit cells; no
# link crosses x = 5): no unit starts there, so every unit arrives.
with tempfile.TemporaryDirectory() as tmp:
    cells = [(i, j) for j in range(3) for i in range(8)]
    idx = {c: k for k, c in enumerate(cells)}
    links = [[idx[(i, j)], idx[(i + 1, j)]] for (i, j) in cells if i + 1 < 8 and i != 4]
    links += [[idx[(i, j)], idx[(i, j + 1)]] for (i, j) in cells if j + 1 < 3]
    lv = {"format": 1, "quads": [{"rect": [i, j, i + 1, j + 1]} for (i, j) in cells],
          "links": links, "goals": [{"name": "g", "at": [1.5, 1.5]}]}
    path = os.path.join(tmp, "room.json")
    with open(path, "w") as f:
        json.dump(lv, f)
    rc, out, _ = run(["sim", "--crowd", path, "--units", "24", "--radius", "0.2", "--json"])
    j = one_json("sim --crowd fenced room", out)
    check("sim --crowd starts where the goal is reached", rc == 0 and j.get("arrived") == 24
          and j.get("stuck") == 0, out)
# A crowd in a maze one cell wide: a corridor that winds 19 times across an
# 81 x 39 map, the goal at one end. The units' queue runs far along the
# corridor, beyond a disc of open ground's size (the arrival region is sized
# by the ground the goal's field reaches), and the far end is 1,500 cells
# away (the step budget grows with the farthest unit's cost).
with tempfile.TemporaryDirectory() as tmp:
    w, h = 81, 39
    rows = []
    for y in range(h):
        if y % 2 == 1:
            rows.append("@" + "." * (w - 2) + "@")
        else:
            gap = -1 if y in (0, h - 1) else (w - 2 if (y // 2) % 2 else 1)
            rows.append("".join("." if x == gap else "@" for x in range(w)))
    path = os.path.join(tmp, "snake.map")
    with open(path, "w") as f:
        f.write("type octile\nheight %d\nwidth %d\nmap\n%s\n" % (h, w, "\n".join(rows)))
    rc, out, err = run(["sim", "--crowd", path, "--goal", "1.5,1.5", "--units", "60",
                        "--radius", "0.25", "--json"])
    j = one_json("sim --crowd maze", out)
    check("sim --crowd in a maze one cell wide", rc == 0 and j.get("arrived") == 60
          and j.get("stuck") == 0 and j.get("wall_contacts") == 0, out + err)
rc, _, err = run(["sim", "--crowd", "--scenario", "nowhere"])
check("sim --crowd unknown scenario", rc == 1 and "unknown scenario" in err, err)
with tempfile.TemporaryDirectory() as tmp:
    svg = os.path.join(tmp, "crowd.svg")
    rc, _, err = run(["render", "--crowd", "--scenario", "doorway", "--units", "30",
                      "--steps", "200", "-o", svg])
    ok = rc == 0 and os.path.exists(svg)
    if ok:
        import xml.dom.minidom
        ok = len(xml.dom.minidom.parse(svg).getElementsByTagName("circle")) == 30
    check("render --crowd", ok, err)
# bench --map on a small map: every part runs (the mesh-cache figures free
# the run's mesh and load it again from the baked file), units arrive.
rc, out, err = run(["bench", "--map", ARENA, "--json"])
j = one_json("bench --map", out)
for k in ("import_ms", "quads", "mesh_bytes_per_quad", "level_load_ms", "bake_load_ms",
          "mesh_cache_ms", "mesh_cache_mb", "full_instance_ms", "full_instance_bytes",
          "grid_field_ms", "hier_first_1000_ms", "grid_hier_first_1000_ms",
          "hier_stretch_ratio", "peak_rss_mb"):
    check("bench --map key " + k, isinstance(j.get(k), (int, float)) and j[k] > 0, out[:300] + err)
check("bench --map arrivals", rc == 0 and j.get("hier_arrived_100") == 100
      and j.get("grid_hier_arrived_100") == 100, out[:300] + err)

rc, out, _ = run(["bench", "--quick", "--json", "--no-grid", "--no-live"])
j = one_json("bench crowd", out)
for k in ("crowd_step_us_1000", "crowd_step_us_10000", "crowd_speedup_2threads"):
    check("bench key " + k, isinstance(j.get(k), (int, float)) and j[k] > 0, out[:300])

# bake: a baked level loads in every command that takes a level and gives
# the same answers; the input is never the output.
with tempfile.TemporaryDirectory() as tmp:
    qnm = os.path.join(tmp, "level.qnm")
    rc, out, err = run(["bake", LEVELS[0], "-o", qnm, "--json"])
    j = one_json("bake", out)
    check("bake", rc == 0 and j.get("quads", 0) > 0 and os.path.getsize(qnm) == j.get("bytes"),
          out + err)
    rc1, out1, _ = run(["info", LEVELS[0], "--json"])
    rc2, out2, _ = run(["info", qnm, "--json"])
    j1, j2 = one_json("info json", out1), one_json("info qnm", out2)
    check("info of a baked level", rc1 == 0 and rc2 == 0 and
          all(j1.get(k) == j2.get(k) for k in ("quads", "portals", "islands", "goals")),
          out1 + out2)
    rc1, out1, _ = run(["field", LEVELS[0], "--json"])
    rc2, out2, _ = run(["field", qnm, "--json"])
    check("field of a baked level", rc1 == 0 and rc2 == 0 and
          one_json("f1", out1).get("field") == one_json("f2", out2).get("field"), out2[:200])
    rc, out, err = run(["bake", qnm, "-o", qnm])
    check("bake refuses its input", rc == 1 and err.count("\n") == 1 and os.path.getsize(qnm) > 0,
          err)
    with open(qnm, "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 1]))
    rc, out, err = run(["info", qnm])
    check("damaged baked level", rc == 1 and "QN_E_CORRUPT" in err, err)

finish()
