#!/usr/bin/env python3
"""`quadnav import-map`: exit codes, one-line errors, the --json keys, and
the level it writes, checked here independently of the C code: every
passable map cell in exactly one quad rect and no wall in any, the grid rows
equal to the map, and `quadnav info` loading the level with the same quad
and portal counts the import printed."""
import json
import os
import subprocess
import sys
import tempfile

from tally import check, failures, finish

QN = sys.argv[1]
DATA = os.environ.get("QN_DATA_DIR", "data")
TDATA = os.environ.get("QN_TEST_DATA_DIR", "tests/data")
MAPS = ["arena", "lak303d", "Berlin_0_256"]
GROUND = set(".GS")


def run(args):
    p = subprocess.run([QN] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr



def read_map(path):
    """The rows of a MovingAI map (LF or CRLF, final newline optional)."""
    with open(path, newline="") as f:
        lines = f.read().replace("\r\n", "\n").split("\n")
    start = next(i for i, l in enumerate(lines) if l.strip() == "map") + 1
    head = dict(l.split() for l in lines[:start - 1] if l.strip())
    h, w = int(head["height"]), int(head["width"])
    return w, h, lines[start:start + h]


def check_level(name, level, w, h, rows, summary):
    check(name + " format", level.get("format") == 1, level.get("format"))
    check(name + " name", level.get("name") == name, level.get("name"))
    check(name + " no links", "links" not in level)
    g = level.get("grid", {})
    check(name + " grid size", g.get("width") == w and g.get("height") == h, (g.get("width"), g.get("height")))
    want = ["".join("." if c in GROUND else "@" for c in r) for r in rows]
    check(name + " grid rows", g.get("rows") == want)
    check(name + " no costs", "costs" not in g)  # a MovingAI map is all cost 1
    cover = [[0] * w for _ in range(h)]
    ints = True
    for q in level.get("quads", []):
        r = q["rect"]
        ints = ints and all(isinstance(v, int) for v in r) and "cost" not in q
        for y in range(r[1], r[3]):
            for x in range(r[0], r[2]):
                cover[y][x] += 1
    check(name + " integer rects", ints)
    bad = [(x, y) for y in range(h) for x in range(w)
           if cover[y][x] != (1 if rows[y][x] in GROUND else 0)]
    check(name + " every passable cell once, no wall", not bad, bad[:5])
    cells = sum(c in GROUND for r in rows for c in r)
    check(name + " cells", summary.get("cells") == cells, (summary.get("cells"), cells))
    check(name + " quads", summary.get("quads") == len(level.get("quads", [])), summary)
    q = max(summary.get("quads", 1), 1)
    check(name + " ratio", abs(summary.get("ratio", 0) - cells / q) < 1e-3 * cells / q, summary)


def import_one(name, tmp):
    path = os.path.join(DATA, "maps", name + ".map")
    if not os.path.exists(path):
        return
    out = os.path.join(tmp, name + ".json")
    rc, stdout, err = run(["import-map", path, "-o", out, "--json"])
    check(name + " exit", rc == 0, err)
    lines = [l for l in stdout.splitlines() if l.strip()]
    check(name + " one json line", len(lines) == 1, stdout)
    try:
        summary = json.loads(stdout)
    except ValueError as e:
        failures.append(f"{name}: not JSON: {e}")
        return
    keys = ("map", "width", "height", "cells", "quads", "ratio", "portals", "ms")
    check(name + " keys", all(k in summary for k in keys), summary)
    w, h, rows = read_map(path)
    check(name + " size", summary.get("width") == w and summary.get("height") == h, summary)
    with open(out) as f:
        level = json.load(f)
    check_level(name, level, w, h, rows, summary)
    rc, info, err = run(["info", out, "--json"])
    try:
        j = json.loads(info)
    except ValueError:
        j = {}
    check(name + " info loads", rc == 0 and j.get("valid") is True, info + err)
    check(name + " info counts", j.get("quads") == summary.get("quads")
          and j.get("portals") == summary.get("portals"), (j, summary))
    rc, text, _ = run(["import-map", path, "-o", out])
    check(name + " text summary", rc == 0 and "quads" in text and "portals" in text
          and str(summary.get("quads")) in text, text)


def usage_and_errors(tmp):
    rc, out, _ = run(["import-map", "--help"])
    check("--help", rc == 0 and "usage" in out and "-o" in out, out)
    arena = os.path.join(DATA, "maps", "arena.map")
    out = os.path.join(tmp, "x.json")
    for args in ([], [arena], ["-o", out], [arena, "-o"], [arena, "-o", out, "--frob"],
                 [arena, arena, "-o", out]):
        rc, stdout, err = run(["import-map"] + args)
        check(f"usage {args}", rc == 2 and err.count("\n") == 1 and stdout == "", (rc, err))
    rc, stdout, err = run(["import-map", "/nonexistent.map", "-o", out])
    check("missing map", rc == 1 and err.count("\n") == 1 and "QN_E_IO" in err, err)
    check("missing map writes nothing", not os.path.exists(out))
    bad = os.path.join(TDATA, "maps", "bad_char.map")
    if os.path.exists(bad):
        rc, stdout, err = run(["import-map", bad, "-o", out])
        check("bad map", rc == 1 and err.count("\n") == 1 and "QN_E_MAP_SYNTAX" in err, err)
    walls = os.path.join(tmp, "walls.map")
    with open(walls, "w") as f:
        f.write("type octile\nheight 2\nwidth 3\nmap\n@@@\n@T@\n")
    rc, stdout, err = run(["import-map", walls, "-o", out])
    check("all walls", rc == 1 and err.count("\n") == 1 and "QN_E_INVALID_ARG" in err, err)
    rc, stdout, err = run(["import-map", arena, "-o", os.path.join(tmp, "no", "such", "dir.json")])
    check("unwritable output", rc == 1 and err.count("\n") == 1, err)


with tempfile.TemporaryDirectory() as tmp:
    usage_and_errors(tmp)
    for m in MAPS:
        import_one(m, tmp)

finish()
