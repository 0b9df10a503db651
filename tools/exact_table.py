#!/usr/bin/env python3
"""Runs `quadnav compare MAP --scen MAP.scen --radius R --json` on the maps of
issue 9's table and prints, per map and mode, the exact stretch (distance
walked / exact any-angle shortest length, mean and 95th percentile), the
octile stretch, arrivals and sampling time, as a markdown table.

  tools/exact_table.py [--quadnav build/tools/quadnav]
                       [--data ../shared/data/movingai] [--units 1000]
                       [--radius 0.1] [--json OUT.json] [MAP ...]

MAP names are family/name as in the data folder (default: the table's
eight). Maps run one after another, each command printed to stderr first.
"""
import argparse
import json
import os
import subprocess
import sys

MAPS = ("dao/den011d", "dao/brc202d", "dao/arena", "sc1/Aftershock", "mazes/maze512-1-0",
        "rooms/8room_000", "cities/Berlin_0_256", "random/random512-10-0")
MODES = ("quad", "grid8", "gridvec")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--quadnav", default=os.path.join(here, "..", "build", "tools", "quadnav"))
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data", "movingai"))
    ap.add_argument("--units", default="1000")
    ap.add_argument("--radius", default="0.1")
    ap.add_argument("--json", help="also write every run's JSON here (a list)")
    ap.add_argument("maps", nargs="*", default=MAPS)
    a = ap.parse_args()
    runs = []
    print("| map | quads | mode | arrived | exact mean | exact p95 | octile mean | sample_ns |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for name in a.maps:
        m = os.path.join(a.data, "maps", name + ".map")
        s = os.path.join(a.data, "scenarios", name + ".map.scen")
        cmd = [a.quadnav, "compare", m, "--scen", s, "--radius", a.radius, "--units", a.units,
               "--json"]
        print(" ".join(cmd), file=sys.stderr, flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{name}: exit {p.returncode}: {p.stderr.strip()}", file=sys.stderr)
            return 1
        j = json.loads(p.stdout)
        runs.append(j)
        for mode in MODES:
            r = j[mode]
            print(f"| {name} | {j['quads']} | {mode} | {r['arrived']}/{r['units']} | "
                  f"{r['exact_stretch_mean']:.4f} | {r['exact_stretch_p95']:.4f} | "
                  f"{r['stretch_mean']:.4f} | {r['sample_ns']:.0f} |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(runs, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
