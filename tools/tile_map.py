#!/usr/bin/env python3
"""Tiles a MovingAI map N x N times into one bigger map, for the big-world
figures: tools/tile_map.py IN.map N OUT.map

The 4096x4096 map of the README:
  tools/tile_map.py ../shared/data/movingai/maps/random/random512-10-0.map 8 big.map
"""
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: tile_map.py IN.map N OUT.map")
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if n < 1:
        sys.exit("tile_map.py: N must be at least 1")
    with open(src, encoding="ascii") as f:
        lines = f.read().splitlines()
    head = {}
    i = 0
    while lines[i].strip() != "map":
        key, val = lines[i].split()
        head[key] = val
        i += 1
    w, h = int(head["width"]), int(head["height"])
    rows = [r[:w] for r in lines[i + 1:i + 1 + h]]
    if len(rows) != h or any(len(r) != w for r in rows):
        sys.exit("tile_map.py: %s: rows do not match width x height" % src)
    with open(out, "w", encoding="ascii") as f:
        f.write("type octile\nheight %d\nwidth %d\nmap\n" % (h * n, w * n))
        for _ in range(n):
            for r in rows:
                f.write(r * n + "\n")


if __name__ == "__main__":
    main()
