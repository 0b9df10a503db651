#!/usr/bin/env python3
"""Smoke tests of `quadnav compare` and `quadnav render`: the JSON keys of
every mode, unit counts, arrivals, the grid optimum plumbing, exact stretch
and per-unit records checked against an independent visibility-graph
shortest path, one-line errors, and SVG output that parses as XML and holds
the expected elements."""
import heapq
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from tally import check, failures, finish

QN = sys.argv[1]
DATA = os.environ.get("QN_DATA_DIR", "data")
TOWN = os.path.join(DATA, "levels", "town.json")
MAP = os.path.join(DATA, "maps", "arena.map")
SCEN = MAP + ".scen"
MODES = ("quad", "grid8", "gridvec")
KEYS = ("build_us", "bytes", "sample_ns", "arrived", "units", "wall_contacts", "stuck",
        "stretch_mean", "stretch_p95", "exact_stretch_mean", "exact_stretch_p95")
SVG_NS = "{http://www.w3.org/2000/svg}"


def run(args):
    p = subprocess.run([QN] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr



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

# --hier: a mode through a hierarchical instance, with the keys of the
# others; every unit arrives without a contact and walks within 2 % of quad
# mode (mean exact stretch); the sector graph's figures at the top. --tiles:
# the same for grid tiles, within 3 % of the whole-grid vector flow.
# Without --hier, no such mode; on a level whose quads cost more than 1, a
# one-line error.
def lazy_mode(flag, mode, base, factor, extra):
    """compare --FLAG on arena's rows: mode MODE with every key, its
    *_graph_ms and *_graph_bytes, all 60 arrive without a contact, and a
    mean exact stretch within FACTOR of mode BASE's."""
    rc, out, err = run(["compare", MAP, "--scen", SCEN, "--units", "60", "--" + flag, "--json"]
                       + extra)
    check(f"compare --{flag} exit 0", rc == 0, err)
    if rc != 0:
        return
    j = json.loads(out)
    r = j.get(mode, {})
    check(f"compare --{flag} keys", all(k in r for k in KEYS), r)
    check(f"compare --{flag} graph figures", j.get(mode + "_graph_ms", -1) >= 0
          and j.get(mode + "_graph_bytes", 0) > 0, j)
    if all(k in r for k in KEYS):
        check(f"compare --{flag} arrives", r["arrived"] == 60 and r["wall_contacts"] == 0, r)
        check(f"compare --{flag} stretch", r["exact_stretch_mean"]
              <= factor * j[base]["exact_stretch_mean"], (r, j[base]))


lazy_mode("hier", "hier", "quad", 1.02, ["--radius", "0.1"])
lazy_mode("tiles", "tiles", "gridvec", 1.03, [])
check("compare without --hier", "hier" not in (compare_json("arena plain", [MAP], 10) or {"hier": 1}),
      "hier mode without --hier")
rc, out, err = run(["compare", os.path.join(DATA, "levels", "field.json"), "--units", "5", "--hier"])
check("compare --hier on costs: error", rc == 1 and out == "" and len(err.strip().splitlines()) == 1
      and "cost" in err, (rc, out, err))

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

# ---- exact any-angle shortest paths, independently: a visibility graph ----

def read_map(path):
    """The open cells of a MovingAI map as a set of (x, y)."""
    with open(path) as f:
        lines = f.read().split("\n")
    h, w = int(lines[1].split()[1]), int(lines[2].split()[1])
    return {(x, y) for y in range(h) for x in range(w) if lines[4 + y][x] in ".G"}, w, h


def corners(cells, w, h):
    """Grid vertices with exactly three open cells around them: the only
    places where a shortest path through the open cells bends."""
    out = []
    for y in range(1, h):
        for x in range(1, w):
            around = [(x - 1, y - 1) in cells, (x, y - 1) in cells,
                      (x - 1, y) in cells, (x, y) in cells]
            if sum(around) == 3:
                out.append((float(x), float(y)))
    return out


def visible(cells, a, b):
    """Does segment a-b stay in the closed union of open cells, without
    passing through a vertex where only two diagonal cells are open (no
    corner is cut there, as in the mesh and the grid)?"""
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    ts = {0.0, 1.0}
    for (p, d) in ((ax, dx), (ay, dy)):
        if abs(d) > 1e-12:
            lo, hi = sorted((p, p + d))
            for k in range(math.ceil(lo), math.floor(hi) + 1):
                t = (k - p) / d
                if 0.0 < t < 1.0:
                    ts.add(t)
    ts = sorted(ts)
    for t0, t1 in zip(ts, ts[1:]):
        if t1 - t0 < 1e-12:
            continue
        t = (t0 + t1) / 2
        mx, my = ax + dx * t, ay + dy * t
        xs = [round(mx) - 1, round(mx)] if abs(mx - round(mx)) < 1e-9 else [math.floor(mx)]
        ys = [round(my) - 1, round(my)] if abs(my - round(my)) < 1e-9 else [math.floor(my)]
        if not any((x, y) in cells for x in xs for y in ys):
            return False
    for t in ts[1:-1]:  # vertices passed strictly inside the segment
        vx, vy = ax + dx * t, ay + dy * t
        if abs(vx - round(vx)) < 1e-9 and abs(vy - round(vy)) < 1e-9:
            x, y = round(vx), round(vy)
            nw, ne, sw, se = ((x - 1, y - 1) in cells, (x, y - 1) in cells,
                              (x - 1, y) in cells, (x, y) in cells)
            if (nw and se and not ne and not sw) or (ne and sw and not nw and not se):
                return False
    return True


class VisGraph:
    def __init__(self, path):
        self.cells, w, h = read_map(path)
        self.nodes = corners(self.cells, w, h)
        n = len(self.nodes)
        self.adj = [[] for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                if visible(self.cells, self.nodes[i], self.nodes[j]):
                    d = math.dist(self.nodes[i], self.nodes[j])
                    self.adj[i].append((j, d))
                    self.adj[j].append((i, d))

    def shortest(self, s, g):
        """Exact shortest length s -> g (Dijkstra over the corners)."""
        if visible(self.cells, s, g):
            return math.dist(s, g)
        n = len(self.nodes)
        to_goal = {i: math.dist(c, g) for i, c in enumerate(self.nodes)
                   if visible(self.cells, c, g)}
        dist = [math.inf] * n
        heap = []
        for i, c in enumerate(self.nodes):
            if visible(self.cells, s, c):
                dist[i] = math.dist(s, c)
                heapq.heappush(heap, (dist[i], i))
        best = math.inf
        while heap:
            d, i = heapq.heappop(heap)
            if d > dist[i] or d >= best:
                continue
            if i in to_goal:
                best = min(best, d + to_goal[i])
            for j, e in self.adj[i]:
                if d + e < dist[j]:
                    dist[j] = d + e
                    heapq.heappush(heap, (dist[j], j))
        return best


def percentile95(v):
    v = sorted(v)
    return v[max(math.ceil(0.95 * len(v)), 1) - 1]


# Arena rows with --per-unit: every record against the scenario rows, and
# exact stretch recomputed from the records and this visibility graph: so
# qn_path_find at radius 0 is the exact any-angle length on these rows.
UNITS = 40
rc, out, err = run(["compare", MAP, "--scen", SCEN, "--units", str(UNITS), "--radius", "0.1",
                    "--json", "--per-unit"])
check("per-unit exit 0", rc == 0, err)
if rc == 0:
    j = json.loads(out)
    with open(SCEN) as f:
        rows = [l.split("\t") for l in f.read().splitlines()[1:] if l.strip()]
    picked = [rows[i * len(rows) // UNITS] for i in range(UNITS)]
    vgraph = VisGraph(MAP)
    exact = [vgraph.shortest((int(r[4]) + 0.5, int(r[5]) + 0.5), (int(r[6]) + 0.5, int(r[7]) + 0.5))
             for r in picked]
    # The visibility graph agrees with the scenario's octile optimum where a
    # straight or single-diagonal line is the shortest: never longer.
    check("visibility graph <= octile", all(e <= float(r[8]) + 1e-3 for e, r in zip(exact, picked)),
          [(e, r[8]) for e, r in zip(exact, picked)])
    for m in MODES:
        r = j[m]
        pu = r.get("per_unit", [])
        check(f"per-unit {m} count", len(pu) == UNITS, len(pu))
        if len(pu) != UNITS:
            continue
        check(f"per-unit {m} keys", all(set(u) == {"start", "goal", "walked", "arrived"}
                                        for u in pu), pu[:2])
        check(f"per-unit {m} rows", all(
            u["start"] == [int(w[4]) + 0.5, int(w[5]) + 0.5]
            and u["goal"] == [int(w[6]) + 0.5, int(w[7]) + 0.5] for u, w in zip(pu, picked)),
            (pu[:2], picked[:2]))
        check(f"per-unit {m} arrived", sum(u["arrived"] for u in pu) == r["arrived"], r)
        st = [u["walked"] / e if e > 0 else 1.0 for u, e in zip(pu, exact) if u["arrived"]]
        if not st:
            failures.append(f"per-unit {m}: no unit arrived")
            continue
        mean = sum(st) / len(st)
        check(f"exact stretch {m} mean = visibility graph",
              abs(mean - r["exact_stretch_mean"]) <= 1e-4 * mean, (mean, r["exact_stretch_mean"]))
        check(f"exact stretch {m} p95 = visibility graph",
              abs(percentile95(st) - r["exact_stretch_p95"]) <= 1e-4 * mean,
              (percentile95(st), r["exact_stretch_p95"]))
        # Nobody walks shorter than the shortest path.
        check(f"exact stretch {m} >= 1", min(st) >= 1.0 - 1e-4, min(st))
    check("quad exact stretch near 1", j["quad"]["exact_stretch_mean"] < 1.1, j["quad"])
    # A clearance-keeping path is never shorter than the exact one, and a
    # radius of 0.1 adds little on this map.
    cs, cp = j.get("clearance_stretch_mean"), j.get("clearance_stretch_p95")
    check("clearance stretch in [1, 1.1]", cs is not None and 1.0 - 1e-4 <= cs <= cp < 1.1, (cs, cp))

# Without --per-unit there is no per_unit array; --per-unit needs --json.
rc, out, err = run(["compare", MAP, "--scen", SCEN, "--units", "5", "--json"])
check("no per_unit by default", rc == 0 and all("per_unit" not in v for v in
                                                json.loads(out).values() if isinstance(v, dict)),
      out[:200])
rc, out, err = run(["compare", MAP, "--per-unit"])
check("--per-unit needs --json", rc == 2 and err.count("\n") == 1, (rc, err))

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

finish()
