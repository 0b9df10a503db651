#!/usr/bin/env python3
"""`quadnav compare` on maps made here from seeds (tools/gen_map.py: random
obstacles, caves, mazes one and three cells wide, rooms, round blobs), as
someone checking the library on maps it was never tuned for would run it,
at radii 0.1 and 0.25:

- every unit of every mode arrives, with no wall contact and none stuck;
- quad units walk within half a percent of the clearance path (the
  shortest path that keeps the radius from walls, clearance_stretch_mean:
  what a body of that radius must walk at least, up to corners it may pass
  a little nearer), measured against the exact radius-0 length;
- and no longer than units of the vector flow."""
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
)


with tempfile.TemporaryDirectory() as tmp:
    for name, family, w, h, seed, density, cells in MAPS:
        path = os.path.join(tmp, name + ".map")
        gen_map.write(path, gen_map.make(family, w, h, seed, density, cells))
        for radius in ("0.1", "0.25"):
            label = f"{name} r={radius}"
            p = subprocess.run([QN, "compare", path, "--radius", radius, "--units", "60",
                                "--seed", "3", "--json"], capture_output=True, text=True,
                               timeout=300)
            check(label + " exit 0", p.returncode == 0, p.stderr)
            if p.returncode != 0:
                continue
            j = json.loads(p.stdout)
            for mode in ("quad", "grid8", "gridvec"):
                r = j[mode]
                check(f"{label} {mode} all arrive", r["arrived"] == r["units"] == 60, r)
                check(f"{label} {mode} no wall contact", r["wall_contacts"] == 0, r)
                check(f"{label} {mode} none stuck", r["stuck"] == 0, r)
            q, clear = j["quad"]["exact_stretch_mean"], j["clearance_stretch_mean"]
            check(f"{label} quad within 0.5 % of the clearance path",
                  q is not None and clear is not None and q <= 1.005 * clear, (q, clear))
            vec = j["gridvec"]["exact_stretch_mean"]
            check(f"{label} quad no longer than the vector flow",
                  q is not None and vec is not None and q <= vec, (q, vec))

finish()
