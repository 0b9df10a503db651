#!/usr/bin/env python3
"""Writes a MovingAI map of one of several families, made from a seed, to
try quadnav on maps nobody tuned it for (the same seed gives the same map):

  random  cells blocked at random, each with probability --density
  cave    cellular automaton caves (4-5 rule, five rounds)
  maze    a depth-first maze with corridors --width cells wide
  rooms   square rooms of --width cells with 2-cell doors
  blobs   open ground with round obstacles of radius 2-11
  pillars single-cell pillars on a lattice of --width cells (3 when less
          than 2), each lattice place blocked with probability --density:
          corridors between rows of trees (a gap of two cells at 3)

  tools/gen_map.py FAMILY WIDTH HEIGHT OUT.map [--seed S] [--density P]
                   [--width W]

Blocked cells are '@' ('T' in caves and blobs), open ones '.'. Whether the
open ground is connected is up to the family (random and cave maps may
have islands; `quadnav compare` picks starts the goal can be reached from).
"""
import argparse
import random


def random_map(w, h, rng, density):
    return [["@" if rng.random() < density else "." for _ in range(w)] for _ in range(h)]


def cave_map(w, h, rng):
    wall = [[rng.random() < 0.45 for _ in range(w)] for _ in range(h)]
    for _ in range(5):
        nxt = [[False] * w for _ in range(h)]
        for y in range(h):
            for x in range(w):
                n = 0
                for dy in (-1, 0, 1):
                    for dx in (-1, 0, 1):
                        yy, xx = y + dy, x + dx
                        n += yy < 0 or xx < 0 or yy >= h or xx >= w or wall[yy][xx]
                nxt[y][x] = n >= 5
        wall = nxt
    return [["T" if v else "." for v in row] for row in wall]


def maze_map(w, h, rng, width):
    step = width + 1
    cw, ch = max(1, w // step), max(1, h // step)
    g = [["@"] * w for _ in range(h)]

    def carve(x0, y0, x1, y1):
        for y in range(y0, min(y1, h)):
            for x in range(x0, min(x1, w)):
                g[y][x] = "."

    seen = {(0, 0)}
    stack = [(0, 0)]
    carve(0, 0, width, width)
    while stack:
        x, y = stack[-1]
        nbs = [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
               if 0 <= x + dx < cw and 0 <= y + dy < ch and (x + dx, y + dy) not in seen]
        if not nbs:
            stack.pop()
            continue
        nx, ny = rng.choice(nbs)
        seen.add((nx, ny))
        carve(nx * step, ny * step, nx * step + width, ny * step + width)
        if nx != x:  # the wall between the two cells
            wx = max(x, nx) * step - 1
            carve(wx, y * step, wx + 1, y * step + width)
        else:
            wy = max(y, ny) * step - 1
            carve(x * step, wy, x * step + width, wy + 1)
        stack.append((nx, ny))
    return g


def rooms_map(w, h, rng, size):
    size = max(size, 5)
    g = [["@" if x % size == 0 or y % size == 0 else "." for x in range(w)] for y in range(h)]
    for y in range(0, h, size):
        for x in range(0, w, size):
            if x + size < w:  # a door east
                d = rng.randrange(1, size - 2)
                for k in range(2):
                    if y + d + k < h:
                        g[y + d + k][x + size] = "."
            if y + size < h:  # a door south
                d = rng.randrange(1, size - 2)
                for k in range(2):
                    if x + d + k < w:
                        g[y + size][x + d + k] = "."
    return g


def blobs_map(w, h, rng):
    g = [["."] * w for _ in range(h)]
    for _ in range(max(1, w * h // 600)):
        cx, cy, r = rng.randrange(w), rng.randrange(h), rng.randrange(2, 12)
        for y in range(max(0, cy - r), min(h, cy + r + 1)):
            for x in range(max(0, cx - r), min(w, cx + r + 1)):
                if (x - cx) ** 2 + (y - cy) ** 2 <= r * r:
                    g[y][x] = "T"
    return g


def pillars_map(w, h, rng, step, density):
    step = step if step >= 2 else 3
    g = [["."] * w for _ in range(h)]
    for y in range(1, h, step):
        for x in range(1, w, step):
            if rng.random() < density:
                g[y][x] = "@"
    return g


def make(family, w, h, seed=1, density=0.2, width=2):
    rng = random.Random(seed)
    if family == "random":
        return random_map(w, h, rng, density)
    if family == "cave":
        return cave_map(w, h, rng)
    if family == "maze":
        return maze_map(w, h, rng, width)
    if family == "rooms":
        return rooms_map(w, h, rng, width)
    if family == "blobs":
        return blobs_map(w, h, rng)
    if family == "pillars":
        return pillars_map(w, h, rng, width, density)
    raise ValueError(f"unknown family {family!r}")


def write(path, g):
    with open(path, "w") as f:
        f.write(f"type octile\nheight {len(g)}\nwidth {len(g[0])}\nmap\n")
        for row in g:
            f.write("".join(row) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("family", choices=("random", "cave", "maze", "rooms", "blobs", "pillars"))
    ap.add_argument("width", type=int)
    ap.add_argument("height", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--density", type=float, default=0.2,
                    help="random: blocked share; pillars: share of lattice places blocked")
    ap.add_argument("--width", dest="cells", type=int, default=2,
                    help="maze: corridor width; rooms: room size; pillars: lattice step (cells)")
    a = ap.parse_args()
    if not (1 <= a.width <= 8192 and 1 <= a.height <= 8192):
        ap.error("width and height must be 1..8192")
    write(a.out, make(a.family, a.width, a.height, a.seed, a.density, a.cells))


if __name__ == "__main__":
    main()
