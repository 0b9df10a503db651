#!/usr/bin/env python3
"""`quadnav compare` on maps made here from seeds (tools/gen_map.py: random
obstacles, caves, mazes one and three cells wide, rooms, round blobs, rows
of pillars, whose corridors the decomposition cuts), as
someone checking the library on maps it was never tuned for would run it,
at radii 0, 0.1 and 0.25:

- every unit of every mode arrives, with no wall contact and none stuck;
- quad units walk within half a percent of the clearance path (the
  shortest path that keeps the radius from walls, clearance_stretch_mean:
  what a body of that radius must walk at least, up to corners it may pass
  a little nearer), measured against the exact radius-0 length;
- and no longer than units of the vector flow.

Point agents (radius 0) also walk a larger map of blobs with 120 units
placed from seed 304: past an obstacle corner, a few of them (6 before
the fix) took a root 100 units away through its wedge's slack and headed
straight through the corner.

Crowds (`quadnav sim --crowd`, 80 units with bodies of radius 0.25 and
0.4, to the open cell nearest the map's middle) on the same maps: every
unit arrives, with no wall contact and no overlapping pair. In the mazes
queues stood still for good where corridors turn, and the arrival region
(a disc of open ground's size) held too few units."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import gen_map  # noqa: E402

from tally import check, failures, finish  # noqa: E402

QN = sys.argv[1]
MAPS = (  # name, family, width, height, seed, density, corridor or room width
    ("random30", "random", 80, 80, 2, 0.3, 0),
    ("cave", "cave", 90, 70, 4, 0, 0),
    ("maze1", "maze", 81, 81, 5, 0, 1),
    ("maze3", "maze", 80, 80, 6, 0, 3),
    ("rooms", "rooms", 81, 81, 7, 0, 9),
    ("blobs", "blobs", 120, 100, 8, 0, 0),
    ("pillars", "pillars", 90, 60, 9, 0.85, 3),
)
# name, family, size, map seed, units, unit seed: radius 0 only
FAR = (("blobs180", "blobs", 180, 304, 120, 304),)


def run_compare(label, path, radius, units, seed):
    """compare's JSON, after checking that every unit of every mode arrives
    untouched; None when the run fails."""
    p = subprocess.run([QN, "compare", path, "--radius", radius, "--units", str(units),
                        "--seed", str(seed), "--json"], capture_output=True, text=True,
                       timeout=300)
    check(label + " exit 0", p.returncode == 0, p.stderr)
    if p.returncode != 0:
        return None
    j = json.loads(p.stdout)
    for mode in ("quad", "grid8", "gridvec"):
        r = j[mode]
        check(f"{label} {mode} all arrive", r["arrived"] == r["units"] == units, r)
        check(f"{label} {mode} no wall contact", r["wall_contacts"] == 0, r)
        check(f"{label} {mode} none stuck", r["stuck"] == 0, r)
    return j


def middle_cell(g):
    """The open cell nearest the map's middle, as a --goal (its centre)."""
    h, w = len(g), len(g[0])
    cells = [(abs(x - w // 2) + abs(y - h // 2), x, y) for y in range(h) for x in range(w)
             if g[y][x] == "."]
    _, x, y = min(cells)
    return f"{x + 0.5},{y + 0.5}"


def run_crowd(label, path, goal, radius):
    p = subprocess.run([QN, "sim", "--crowd", path, "--goal", goal, "--units", "80",
                        "--radius", radius, "--seed", "3", "--json"], capture_output=True,
                       text=True, timeout=300)
    check(label + " exit 0", p.returncode == 0, p.stderr)
    if p.returncode != 0:
        return
    j = json.loads(p.stdout)
    check(label + " all arrive", j["arrived"] == j["units"] == 80 and j["stuck"] == 0, j)
    check(label + " no wall contact, no overlap",
          j["wall_contacts"] == 0 and j["overlap_pairs"] == 0, j)


with tempfile.TemporaryDirectory() as tmp:
    for name, family, size, seed, units, unit_seed in FAR:
        path = os.path.join(tmp, name + ".map")
        gen_map.write(path, gen_map.make(family, size, size, seed, 0, 0))
        run_compare(f"{name} r=0", path, "0", units, unit_seed)
    for name, family, w, h, seed, density, cells in MAPS:
        path = os.path.join(tmp, name + ".map")
        gen_map.write(path, gen_map.make(family, w, h, seed, density, cells))
        for radius in ("0", "0.1", "0.25"):
            label = f"{name} r={radius}"
            j = run_compare(label, path, radius, 60, 3)
            if j is None or radius == "0":
                continue
            q, clear = j["quad"]["exact_stretch_mean"], j["clearance_stretch_mean"]
            check(f"{label} quad within 0.5 % of the clearance path",
                  q is not None and clear is not None and q <= 1.005 * clear, (q, clear))
            vec = j["gridvec"]["exact_stretch_mean"]
            check(f"{label} quad no longer than the vector flow",
                  q is not None and vec is not None and q <= vec, (q, vec))
        g = gen_map.make(family, w, h, seed, density, cells)
        for radius in ("0.25", "0.4"):
            run_crowd(f"{name} crowd r={radius}", path, middle_cell(g), radius)

finish()
