#!/usr/bin/env python3
"""Builds, verifies and writes the three quad levels bundled with quadnav.

    python3 tools/levels/make_levels.py            # write data/levels/*.json
    python3 tools/levels/make_levels.py --check    # fail if the files differ
    python3 tools/levels/make_levels.py --preview DIR   # also draw PNGs

town  - streets, alleys, a plaza joined by T-junctions and a diagonal street
        of sheared quads (the 1000-unit riot setting);
maze  - a seeded random maze whose corridor cells are merged into long
        rectangles, side corridors meeting their long edges;
field - open ground cut into rectangles around rocks and buildings, a band of
        mud (cost 4) and a fenced pen (blocked).

Every level is checked here before it is written (overlaps, winding,
convexity, thin quads and portals, connectivity, goal and spawn placement),
so a broken level never reaches the repository. Standard library only; the
output is deterministic (the maze uses its own seeded generator).

Coordinates are world units with y growing downward. Every coordinate is a
multiple of 1/2, so the checks below run on doubled integer coordinates and
are exact.
"""

import argparse
import heapq
import json
import math
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "..", "data", "levels"))

MIN_WIDTH = 1.0      # no quad thinner than this, no portal narrower
MAX_ASPECT = 12.0    # longest edge / width: no long slivers
POINT_MARGIN = 1.0   # goals and spawns keep this far from their quad's edges


class LevelError(Exception):
    pass


# ----------------------------------------------------------------------------
# Quads and levels
# ----------------------------------------------------------------------------

def half_units(v, what):
    """Doubled coordinate as an exact integer; rejects anything finer than 1/2."""
    d = v * 2
    if d != int(d):
        raise LevelError("%s: coordinate %r is not a multiple of 1/2" % (what, v))
    return int(d)


def num(v):
    """Number for JSON: integers without a fraction, halves as decimals."""
    return int(v) if v == int(v) else float(v)


class Quad:
    """A convex quad; corners in positive-area order (clockwise on screen)."""

    def __init__(self, pts, rect=None, cost=1, blocked=False, qid=None):
        self.pts = [tuple(p) for p in pts]
        self.rect = rect
        self.cost = cost
        self.blocked = blocked
        self.qid = qid

    @classmethod
    def box(cls, x0, y0, x1, y1, **kw):
        return cls([(x0, y0), (x1, y0), (x1, y1), (x0, y1)],
                   rect=(x0, y0, x1, y1), **kw)

    def bbox(self):
        xs = [p[0] for p in self.pts]
        ys = [p[1] for p in self.pts]
        return min(xs), min(ys), max(xs), max(ys)

    def area(self):
        s = 0
        for i in range(4):
            (ax, ay), (bx, by) = self.pts[i], self.pts[(i + 1) % 4]
            s += ax * by - bx * ay
        return s / 2


class Level:
    def __init__(self, name):
        self.name = name
        self.quads = []
        self.goals = []   # [(name, (x, y))]
        self.spawns = []
        self.facts = {}   # printed in the summary
        self.check = None  # extra check (level, portals) -> facts, or None

    def add(self, quad):
        self.quads.append(quad)
        return quad


# ----------------------------------------------------------------------------
# Exact geometry on doubled integer coordinates
# ----------------------------------------------------------------------------

def sub(a, b):
    return (a[0] - b[0], a[1] - b[1])


def cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1]


def ipts(quad, index):
    return [(half_units(x, "quad %d" % index), half_units(y, "quad %d" % index))
            for x, y in quad.pts]


def check_shape(p, index):
    """Positive area, no zero-length edge, strictly convex. p: doubled ints."""
    area2 = sum(cross(p[i], p[(i + 1) % 4]) for i in range(4))
    if area2 <= 0:
        raise LevelError("quad %d: area %s is not positive (wound the wrong way?)"
                         % (index, area2 / 8))
    for i in range(4):
        e0 = sub(p[(i + 1) % 4], p[i])
        e1 = sub(p[(i + 2) % 4], p[(i + 1) % 4])
        if e0 == (0, 0):
            raise LevelError("quad %d: edge %d has zero length" % (index, i))
        if cross(e0, e1) <= 0:
            raise LevelError("quad %d: not strictly convex at corner %d"
                             % (index, (i + 1) % 4))


def width_and_aspect(p):
    """Width (smallest extent across an edge) and longest edge / width, in
    world units. For a rectangle: the short side and long / short."""
    width = math.inf
    longest = 0.0
    for i in range(4):
        a, b = p[i], p[(i + 1) % 4]
        e = sub(b, a)
        elen = math.hypot(*e)
        longest = max(longest, elen)
        depth = max(abs(cross(e, sub(v, a))) for v in p) / elen
        width = min(width, depth)
    return width / 2, longest / width


def interiors_overlap(p, q):
    """Separating axes over both quads' edge normals; touching is apart."""
    for poly in (p, q):
        for i in range(4):
            e = sub(poly[(i + 1) % 4], poly[i])
            n = (-e[1], e[0])
            pa = [dot(n, v) for v in p]
            qa = [dot(n, v) for v in q]
            if max(pa) <= min(qa) or max(qa) <= min(pa):
                return False
    return True


def shared_segment(a0, a1, b0, b1):
    """Overlap of two collinear edges as (p0, p1, full_a, full_b), p0 and p1
    being end points of one edge or the other (so still exact), or None
    when the edges share no positive length."""
    d = sub(a1, a0)
    if cross(d, sub(b0, a0)) != 0 or cross(d, sub(b1, a0)) != 0:
        return None
    dd = dot(d, d)
    t0, t1 = dot(sub(b0, a0), d), dot(sub(b1, a0), d)
    if t0 > t1:
        t0, t1, b0, b1 = t1, t0, b1, b0
    if min(dd, t1) <= max(0, t0):
        return None
    # the overlap runs from the later start to the earlier end
    p0 = a0 if t0 <= 0 else b0
    p1 = a1 if t1 >= dd else b1
    return p0, p1, t0 <= 0 and t1 >= dd, t0 >= 0 and t1 <= dd


class Portal:
    def __init__(self, a, b, p0, p1, partial):
        self.a, self.b = a, b
        self.p0, self.p1 = p0, p1  # world coordinates
        self.width = math.dist(p0, p1)
        self.partial = partial     # covers only part of one of the two edges

    def mid(self):
        return ((self.p0[0] + self.p1[0]) / 2, (self.p0[1] + self.p1[1]) / 2)


def find_portals(quads, pts):
    """All portals by the shared-segment rule; raises on overlapping quads."""
    boxes = [(min(x for x, _ in p), min(y for _, y in p),
              max(x for x, _ in p), max(y for _, y in p)) for p in pts]
    order = sorted(range(len(quads)), key=lambda k: boxes[k][0])
    portals = []
    for oi, a in enumerate(order):
        ba = boxes[a]
        for b in order[oi + 1:]:
            bb = boxes[b]
            if bb[0] > ba[2]:
                break
            if bb[1] > ba[3] or ba[1] > bb[3]:
                continue
            if interiors_overlap(pts[a], pts[b]):
                raise LevelError("quads %d (%s) and %d (%s) overlap"
                                 % (a, quads[a].qid, b, quads[b].qid))
            portals.extend(edge_portals(a, b, pts))
    portals.sort(key=lambda pr: (pr.a, pr.b))
    return portals


def edge_portals(a, b, pts):
    world = lambda p: (p[0] / 2, p[1] / 2)
    found = []
    for i in range(4):
        a0, a1 = pts[a][i], pts[a][(i + 1) % 4]
        for j in range(4):
            s = shared_segment(a0, a1, pts[b][j], pts[b][(j + 1) % 4])
            if s is not None:
                p0, p1, full_a, full_b = s
                found.append(Portal(min(a, b), max(a, b), world(p0), world(p1),
                                    not (full_a and full_b)))
    return found


def inside_depth(p, pt):
    """Smallest distance from pt to the edge lines of quad p (world units),
    negative when pt is outside. pt in doubled integer coordinates."""
    depth = math.inf
    for i in range(4):
        a, b = p[i], p[(i + 1) % 4]
        e = sub(b, a)
        depth = min(depth, cross(e, sub(pt, a)) / math.hypot(*e) / 2)
    return depth


# ----------------------------------------------------------------------------
# Verification
# ----------------------------------------------------------------------------

def locate(level, pts, at, what):
    ipt = (half_units(at[0], what), half_units(at[1], what))
    for k, p in enumerate(pts):
        depth = inside_depth(p, ipt)
        if depth > 0:
            if depth < POINT_MARGIN:
                raise LevelError("%s at %r is only %.2f from the edge of quad %d"
                                 % (what, at, depth, k))
            if level.quads[k].blocked:
                raise LevelError("%s at %r lies in blocked quad %d" % (what, at, k))
            return k
    raise LevelError("%s at %r is not strictly inside any quad" % (what, at))


def verify(level):
    """Checks the level; returns its portals and a summary dict."""
    quads = level.quads
    if not quads:
        raise LevelError("no quads")
    pts = [ipts(q, k) for k, q in enumerate(quads)]
    for k, q in enumerate(quads):
        check_shape(pts[k], k)
        width, aspect = width_and_aspect(pts[k])
        if width < MIN_WIDTH:
            raise LevelError("quad %d (%s) is %.2f wide" % (k, q.qid, width))
        if aspect > MAX_ASPECT:
            raise LevelError("quad %d (%s) is a sliver: aspect %.1f" % (k, q.qid, aspect))
        if not (q.cost >= 1):
            raise LevelError("quad %d: cost %r below 1" % (k, q.cost))
    ids = [q.qid for q in quads if q.qid is not None]
    if len(ids) != len(set(ids)):
        raise LevelError("duplicate quad id")
    portals = find_portals(quads, pts)
    for pr in portals:
        if pr.width < MIN_WIDTH:
            raise LevelError("portal between quads %d and %d is %.2f wide"
                             % (pr.a, pr.b, pr.width))
    if not level.goals or len(level.spawns) < 2:
        raise LevelError("needs a goal and two spawns")
    names = [n for n, _ in level.goals] + [n for n, _ in level.spawns]
    if len(names) != len(set(names)):
        raise LevelError("duplicate goal or spawn name")
    goal_quads = [locate(level, pts, at, "goal " + n) for n, at in level.goals]
    for n, at in level.spawns:
        locate(level, pts, at, "spawn " + n)
    check_connected(level, portals, goal_quads[0])
    return portals, summary(level, portals)


def neighbours(level, portals):
    adj = [[] for _ in level.quads]
    for k, pr in enumerate(portals):
        adj[pr.a].append((pr.b, k))
        adj[pr.b].append((pr.a, k))
    return adj


def check_connected(level, portals, start):
    adj = neighbours(level, portals)
    seen = {start}
    todo = [start]
    while todo:
        k = todo.pop()
        for n, _ in adj[k]:
            if n not in seen and not level.quads[n].blocked:
                seen.add(n)
                todo.append(n)
    for k, q in enumerate(level.quads):
        if q.blocked:
            if not any(not level.quads[n].blocked for n, _ in adj[k]):
                raise LevelError("blocked quad %d touches no open quad" % k)
        elif k not in seen:
            raise LevelError("quad %d (%s) cannot be reached from the first goal"
                             % (k, q.qid))


def summary(level, portals):
    xs = [x for q in level.quads for x, _ in q.pts]
    ys = [y for q in level.quads for _, y in q.pts]
    return {
        "quads": len(level.quads),
        "portals": len(portals),
        "t_portals": sum(1 for pr in portals if pr.partial),
        "area": sum(q.area() for q in level.quads),
        "size": (max(xs) - min(xs), max(ys) - min(ys)),
        "sheared": sum(1 for q in level.quads if q.rect is None),
        "blocked": sum(1 for q in level.quads if q.blocked),
        "costly": sum(1 for q in level.quads if q.cost != 1),
    }


def path_cost(level, portals, src, dst, cost_of=None):
    """Cheapest cost from point src to point dst over portal mid points, each
    step within one quad costing distance times the quad's cost (the model
    the library's Dijkstra uses). Returns (cost, set of quads crossed)."""
    cost_of = cost_of or (lambda q: q.cost)
    pts = [ipts(q, k) for k, q in enumerate(level.quads)]
    qs = locate(level, pts, src, "path start")
    qd = locate(level, pts, dst, "path end")
    nodes = [src, dst] + [pr.mid() for pr in portals]
    in_quad = [[] for _ in level.quads]
    in_quad[qs].append(0)
    in_quad[qd].append(1)
    for k, pr in enumerate(portals):
        if not (level.quads[pr.a].blocked or level.quads[pr.b].blocked):
            in_quad[pr.a].append(k + 2)
            in_quad[pr.b].append(k + 2)
    best = {0: 0.0}
    back = {}
    heap = [(0.0, 0)]
    while heap:
        c, n = heapq.heappop(heap)
        if c > best[n]:
            continue
        if n == 1:
            break
        quads_here = [qs] if n == 0 else [qd] if n == 1 else \
            [portals[n - 2].a, portals[n - 2].b]
        for qk in quads_here:
            if level.quads[qk].blocked:
                continue
            w = cost_of(level.quads[qk])
            for m in in_quad[qk]:
                nc = c + math.dist(nodes[n], nodes[m]) * w
                if nc < best.get(m, math.inf) - 1e-9:
                    best[m] = nc
                    back[m] = (n, qk)
                    heapq.heappush(heap, (nc, m))
    crossed = set()
    n = 1
    while n in back:
        n, qk = back[n]
        crossed.add(qk)
    return best.get(1, math.inf), crossed


# ----------------------------------------------------------------------------
# Decomposition helpers
# ----------------------------------------------------------------------------

WALL = object()


def arrangement(features, extra_x=(), extra_y=()):
    """Cells between every feature coordinate, each labelled by the last
    (highest priority) feature covering it. features: [(label, x0, y0, x1, y1)].
    The label WALL cuts a hole. Returns xs, ys, grid[j][i]."""
    xs = sorted({f[1] for f in features} | {f[3] for f in features} | set(extra_x))
    ys = sorted({f[2] for f in features} | {f[4] for f in features} | set(extra_y))
    grid = [[None] * (len(xs) - 1) for _ in range(len(ys) - 1)]
    for label, x0, y0, x1, y1 in features:
        for j in range(ys.index(y0), ys.index(y1)):
            for i in range(xs.index(x0), xs.index(x1)):
                grid[j][i] = label
    for row in grid:
        for i, label in enumerate(row):
            if label is WALL:
                row[i] = None
    return xs, ys, grid


def merge_runs(xs, ys, grid):
    """Rectangles of equal labels: maximal row runs, stacked while identical.
    Keeps every feature whole where nothing of higher priority cuts it."""
    done = []
    open_runs = {}
    for j in range(len(ys)):
        runs = set()
        if j < len(ys) - 1:
            row = grid[j]
            i = 0
            while i < len(row):
                if row[i] is None:
                    i += 1
                    continue
                i1 = i
                while i1 + 1 < len(row) and row[i1 + 1] == row[i]:
                    i1 += 1
                runs.add((row[i], i, i1))
                i = i1 + 1
        for key in list(open_runs):
            if key not in runs:
                label, i0, i1 = key
                done.append((label, xs[i0], ys[open_runs.pop(key)], xs[i1 + 1], ys[j]))
        for key in sorted(runs, key=lambda r: r[1]):
            open_runs.setdefault(key, j)
    done.sort(key=lambda r: (r[2], r[1]))
    return done


def greedy_rects(xs, ys, grid, max_aspect):
    """Covers the labelled cells with few, roughly square rectangles: the
    largest uniform rectangle of aspect <= max_aspect first, then the next
    largest that fits what is left. Single cells are always allowed."""
    nx, ny = len(xs) - 1, len(ys) - 1
    runlen = [[0] * (nx + 1) for _ in range(ny)]
    for j in range(ny):
        for i in range(nx - 1, -1, -1):
            if grid[j][i] is not None:
                same = i + 1 < nx and grid[j][i + 1] == grid[j][i]
                runlen[j][i] = 1 + (runlen[j][i + 1] if same else 0)
    cands = []
    for j0 in range(ny):
        for i0 in range(nx):
            label = grid[j0][i0]
            if label is None:
                continue
            w = nx
            j1 = j0
            while j1 < ny and grid[j1][i0] == label:
                w = min(w, runlen[j1][i0])
                for i1 in range(i0, i0 + w):
                    dx, dy = xs[i1 + 1] - xs[i0], ys[j1 + 1] - ys[j0]
                    single = i1 == i0 and j1 == j0
                    if single or max(dx, dy) <= max_aspect * min(dx, dy):
                        cands.append((-dx * dy, j0, i0, j1, i1))
                j1 += 1
    cands.sort()
    used = [[False] * nx for _ in range(ny)]
    out = []
    for _, j0, i0, j1, i1 in cands:
        if any(used[j][i] for j in range(j0, j1 + 1) for i in range(i0, i1 + 1)):
            continue
        for j in range(j0, j1 + 1):
            for i in range(i0, i1 + 1):
                used[j][i] = True
        out.append((grid[j0][i0], xs[i0], ys[j0], xs[i1 + 1], ys[j1 + 1]))
    out.sort(key=lambda r: (r[2], r[1]))
    return out


def split_long(quads, cap):
    """Cuts rectangles longer than cap times their width into pieces. Cuts
    never fall inside a portal on the long sides, so every portal stays
    whole; cuts at the end of a side street are preferred."""
    k = 0
    while k < len(quads):
        q = quads[k]
        if q.rect is None:
            k += 1
            continue
        x0, y0, x1, y1 = q.rect
        along_x = x1 - x0 >= y1 - y0
        lo, hi = (x0, x1) if along_x else (y0, y1)
        thick = (y1 - y0) if along_x else (x1 - x0)
        n = math.ceil((hi - lo) / (cap * thick))
        if n <= 1:
            k += 1
            continue
        cuts = choose_cuts(quads, k, along_x, lo, hi, thick, n)
        pieces = []
        bounds = [lo] + cuts + [hi]
        for m in range(len(bounds) - 1):
            a, b = bounds[m], bounds[m + 1]
            r = (a, y0, b, y1) if along_x else (x0, a, x1, b)
            qid = "%s-%d" % (q.qid, m + 1) if q.qid else None
            pieces.append(Quad.box(*r, cost=q.cost, blocked=q.blocked, qid=qid))
        quads[k:k + 1] = pieces
        k += len(pieces)
    return quads


def choose_cuts(quads, k, along_x, lo, hi, thick, n):
    pts = [ipts(q, m) for m, q in enumerate(quads)]
    spans = []
    for m in range(len(quads)):
        if m == k:
            continue
        for pr in edge_portals(k, m, pts):
            if along_x and pr.p0[1] == pr.p1[1]:
                spans.append(tuple(sorted((pr.p0[0], pr.p1[0]))))
            elif not along_x and pr.p0[0] == pr.p1[0]:
                spans.append(tuple(sorted((pr.p0[1], pr.p1[1]))))
    inside = lambda c: any(a < c < b for a, b in spans)
    ends = sorted({c for s in spans for c in s if lo < c < hi and not inside(c)})
    cuts = []
    step = (hi - lo) / n
    for m in range(1, n):
        ideal = lo + m * step
        prev = cuts[-1] if cuts else lo
        ok = lambda c: c - prev >= thick and hi - c >= thick and not inside(c)
        near = [c for c in ends if ok(c) and abs(c - ideal) <= step / 3]
        if near:
            cuts.append(min(near, key=lambda c: (abs(c - ideal), c)))
            continue
        plain = [c for c in range(math.ceil(lo), math.floor(hi) + 1) if ok(c)]
        if plain:
            cuts.append(min(plain, key=lambda c: (abs(c - ideal), c)))
    return cuts


# ----------------------------------------------------------------------------
# Town: the 1000-unit riot
# ----------------------------------------------------------------------------

def build_town():
    lv = Level("town")
    # Lowest priority first: a later feature wins where two overlap, so the
    # avenues are cut by the cross streets and the cross streets keep their
    # long edges, which side streets meet in T-junctions.
    streets = [
        # vertical streets, running past the cross streets
        ("west-avenue", 8, 8, 13, 82),
        ("east-avenue", 107, 8, 112, 82),
        ("mill-street", 28, 8, 32, 82),
        ("tanner-street", 88, 8, 92, 82),
        ("north-road", 58, 0, 62, 35),
        ("chapel-street", 47, 8, 51, 35),
        ("smith-street", 69, 8, 73, 35),
        ("market-street", 50, 55, 54, 82),
        ("well-street", 66, 55, 70, 82),
        ("south-road", 100, 82, 104, 90),
        # alleys, two units wide, between the blocks
        ("alley-mill", 13, 18, 28, 20),
        ("alley-chapel", 32, 17, 47, 19),
        ("alley-smith", 73, 18, 88, 20),
        ("alley-bell", 32, 36, 41, 38),          # dead end behind the plaza
        ("alley-post", 79, 28, 81, 41),
        ("alley-gaol", 92, 30, 107, 32),
        ("alley-dyer", 13, 54, 28, 56),
        ("alley-cooper", 92, 52, 100, 54),       # dead end
        ("alley-baker", 38, 67, 40, 77),
        ("alley-fuller", 54, 71, 66, 73),
        ("alley-cross", 70, 72, 88, 74),
        ("alley-rope", 13, 36, 28, 38),
        ("alley-nail", 62, 18, 69, 20),
        ("alley-tin", 97, 67, 99, 77),
        ("alley-last", 20, 70, 22, 77),          # dead end
        ("alley-wick", 100, 36, 107, 38),        # dead end
        ("alley-loom", 51, 20, 58, 22),
        ("chapel-yard", 36, 28, 44, 32),
        ("tanners-court", 13, 70, 19, 74),
        # cross streets
        ("north-street", 8, 8, 112, 13),
        ("south-street", 8, 77, 112, 82),
        ("upper-street", 13, 24, 107, 28),
        ("lower-street", 13, 63, 107, 67),
        ("west-gate-road", 0, 43, 45, 47),
        ("east-road", 75, 41, 120, 45),
        # the plaza wins everywhere it lies
        ("plaza", 45, 35, 75, 55),
    ]
    xs, ys, grid = arrangement(streets)
    rects = merge_runs(xs, ys, grid)
    count = {}
    quads = []
    for label, x0, y0, x1, y1 in rects:
        count[label] = count.get(label, 0) + 1
        quads.append((label, count[label], (x0, y0, x1, y1)))
    for label, nr, r in quads:
        qid = label if count[label] == 1 else "%s-%d" % (label, nr)
        lv.add(Quad.box(*r, qid=qid))
    # A diagonal street from the west gate road down to the lower street:
    # a flared mouth, then sheared quads. Each shares whole edges with the
    # next and meets the axis-aligned streets along horizontal edges.
    rows = [(47, 33, 39), (51, 35.5, 40.5), (55, 38, 43), (59, 40.5, 45.5), (63, 43, 48)]
    for m in range(len(rows) - 1):
        (ya, la, ra), (yb, lb, rb) = rows[m], rows[m + 1]
        lv.add(Quad([(la, ya), (ra, ya), (rb, yb), (lb, yb)], qid="slant-lane-%d" % (m + 1)))
    split_long(lv.quads, 6)
    lv.goals = [("plaza", (60, 45)), ("gate", (2, 45))]
    lv.spawns = [("north-gate", (60, 3)), ("south-gate", (102, 87)),
                 ("east-gate", (118, 43)), ("bell-alley", (39, 37)),
                 ("cooper-alley", (98, 53))]
    return lv


# ----------------------------------------------------------------------------
# Maze: seeded random maze merged into long corridors
# ----------------------------------------------------------------------------

class SplitMix64:
    """Tiny seeded generator, so the maze does not depend on the Python
    version's random module."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n

    def shuffle(self, items):
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


MAZE_N = 13        # cells per side
MAZE_PITCH = 3     # corridor 2 + wall 1
MAZE_SEED = 20240611
MAZE_LOOPS = 14    # walls knocked out after the perfect maze, for loops
MAZE_RUN = 6       # longest corridor, in cells


def maze_passages(n, rng):
    """Recursive backtracker (long winding corridors, some dead ends), then a
    few extra openings so there are loops. Returns a set of cell pairs."""
    open_ = set()
    seen = {(0, 0)}
    stack = [(0, 0)]
    while stack:
        c = stack[-1]
        nbrs = [(c[0] + dx, c[1] + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))]
        nbrs = [d for d in nbrs if 0 <= d[0] < n and 0 <= d[1] < n and d not in seen]
        if not nbrs:
            stack.pop()
            continue
        d = nbrs[rng.below(len(nbrs))]
        open_.add(tuple(sorted((c, d))))
        seen.add(d)
        stack.append(d)
    walls = [((i, j), (i + di, j + dj)) for j in range(n) for i in range(n)
             for di, dj in ((1, 0), (0, 1)) if i + di < n and j + dj < n]
    walls = [w for w in walls if w not in open_]
    rng.shuffle(walls)
    for w in walls:
        if len(open_) - len(seen) + 1 >= MAZE_LOOPS:
            break
        if not strands_post(n, open_, w):
            open_.add(w)
    return open_


def posts_of(w):
    """The two wall posts (grid corners) at the ends of the wall between the
    cells of w, as (x, y) corner indices."""
    (i, j), (k, _) = w
    if k != i:
        return (i + 1, j), (i + 1, j + 1)
    return (i, j + 1), (i + 1, j + 1)


def strands_post(n, open_, w):
    """Would opening w leave a wall post standing alone (a pillar in the
    middle of a corridor)? Posts on the outer border never stand alone."""
    for px, py in posts_of(w):
        if px in (0, n) or py in (0, n):
            continue
        walls = [((px - 1, py - 1), (px, py - 1)), ((px - 1, py), (px, py)),
                 ((px - 1, py - 1), (px - 1, py)), ((px, py - 1), (px, py))]
        if all(x == w or x in open_ for x in walls):
            return True
    return False


def maze_runs(n, open_):
    """Assigns every cell to a straight run: the longest run of free cells
    first, at most MAZE_RUN long. Returns (runs, cell -> run index)."""
    owner = {}
    runs = []
    while len(owner) < n * n:
        best = None
        for j in range(n):
            for i in range(n):
                if (i, j) in owner:
                    continue
                for axis, (dx, dy) in (("h", (1, 0)), ("v", (0, 1))):
                    p = (i - dx, j - dy)
                    if (p, (i, j)) in open_ and p not in owner:
                        continue  # not the start of this run
                    cells = [(i, j)]
                    while True:
                        c = cells[-1]
                        d = (c[0] + dx, c[1] + dy)
                        if (c, d) not in open_ or d in owner:
                            break
                        cells.append(d)
                    if best is None or len(cells) > len(best[1]):
                        best = (axis, cells)
        axis, cells = best
        parts = math.ceil(len(cells) / MAZE_RUN)
        cells = cells[:math.ceil(len(cells) / parts)]
        if len(cells) == 1:
            axis = None
        for c in cells:
            owner[c] = len(runs)
        runs.append({"axis": axis, "cells": cells, "ext": [0, 0]})
    return runs, owner


def build_maze():
    lv = Level("maze")
    n, pitch = MAZE_N, MAZE_PITCH
    open_ = maze_passages(n, SplitMix64(MAZE_SEED))
    runs, owner = maze_runs(n, open_)
    doors = []
    for a, b in sorted(open_):
        ra, rb = owner[a], owner[b]
        if ra == rb:
            continue
        axis = "h" if a[1] == b[1] else "v"
        # The opening joins a's far end (ext[1]) to b's near end (ext[0]):
        # lengthen a run that points along it, else the opening is a door.
        for r, end, cell in ((runs[ra], 1, a), (runs[rb], 0, b)):
            at_end = cell == (r["cells"][-1] if end else r["cells"][0])
            if r["axis"] in (axis, None) and at_end and not r["ext"][end]:
                r["axis"] = axis
                r["ext"][end] = 1
                break
        else:
            doors.append((axis, a))
    rects = []
    for r in runs:
        (i0, j0), (i1, j1) = r["cells"][0], r["cells"][-1]
        x0, y0 = 1 + pitch * i0, 1 + pitch * j0
        x1, y1 = 3 + pitch * i1, 3 + pitch * j1
        if r["axis"] == "h":
            x0, x1 = x0 - r["ext"][0], x1 + r["ext"][1]
        elif r["axis"] == "v":
            y0, y1 = y0 - r["ext"][0], y1 + r["ext"][1]
        rects.append((x0, y0, x1, y1))
    for axis, (i, j) in doors:
        if axis == "h":
            rects.append((3 + pitch * i, 1 + pitch * j, 4 + pitch * i, 3 + pitch * j))
        else:
            rects.append((1 + pitch * i, 3 + pitch * j, 3 + pitch * i, 4 + pitch * j))
    for r in sorted(rects, key=lambda r: (r[1], r[0])):
        lv.add(Quad.box(*r))
    c = lambda i, j: (2 + pitch * i, 2 + pitch * j)
    lv.goals = [("exit", c(n - 1, n - 1))]
    lv.spawns = [("north-west", c(0, 0)), ("north-east", c(n - 1, 0)),
                 ("south-west", c(0, n - 1)), ("centre", c(n // 2, n // 2))]
    degree = {}
    for a, b in open_:
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    lv.facts = {"dead ends": sum(1 for d in degree.values() if d == 1),
                "loops": len(open_) - n * n + 1,
                "doors": len(doors)}
    return lv


# ----------------------------------------------------------------------------
# Field: open ground around obstacles, mud and a fenced pen
# ----------------------------------------------------------------------------

def build_field():
    lv = Level("field")
    features = [
        ("field", 0, 0, 100, 80),
        # a band of mud across the direct line from the east to the well
        ("mud", 40, 14, 52, 30),
        ("mud", 44, 30, 58, 48),
        ("mud", 48, 48, 62, 64),
        ("pen", 66, 64, 78, 74),
        # obstacles: holes in the walkable area
        (WALL, 10, 8, 24, 20),    # farmhouse
        (WALL, 64, 6, 80, 16),    # barn
        (WALL, 36, 26, 42, 32),   # rock
        (WALL, 30, 52, 36, 56),   # rock
        (WALL, 74, 30, 80, 36),   # rock
        (WALL, 84, 50, 92, 60),   # copse
        (WALL, 16, 34, 26, 44),   # pond
        (WALL, 14, 60, 40, 62),   # hedge
        (WALL, 56, 66, 62, 72),   # shed
        (WALL, 88, 20, 94, 26),   # rock
        (WALL, 26, 70, 30, 74),   # stones
        (WALL, 82, 66, 86, 70),   # stump
        (WALL, 64, 24, 68, 28),   # cart
        (WALL, 4, 24, 8, 28),     # trough
    ]
    grid_lines = range(0, 101, 10)
    xs, ys, grid = arrangement(features, grid_lines, [y for y in grid_lines if y <= 80])
    count = {}
    for label, x0, y0, x1, y1 in greedy_rects(xs, ys, grid, 3):
        count[label] = count.get(label, 0) + 1
        if label == "pen":
            lv.add(Quad.box(x0, y0, x1, y1, blocked=True, qid="pen"))
        else:
            lv.add(Quad.box(x0, y0, x1, y1, cost=4 if label == "mud" else 1,
                            qid="%s-%d" % (label, count[label])))
    lv.goals = [("well", (6, 40))]
    lv.spawns = [("east-gate", (96, 40)), ("north-east", (96, 4)),
                 ("south-east", (96, 76))]
    lv.check = check_mud
    return lv


def check_mud(lv, portals):
    """The mud must matter: with mud at cost 1 the cheapest way from the east
    gate crosses it; with its real cost the way goes round."""
    goal = lv.goals[0][1]
    src = lv.spawns[0][1]
    muddy = {k for k, q in enumerate(lv.quads) if q.cost > 1}
    free, free_quads = path_cost(lv, portals, src, goal, lambda q: 1)
    real, real_quads = path_cost(lv, portals, src, goal)
    if not free_quads & muddy:
        raise LevelError("the mud lies off the path even when it is free")
    if real_quads & muddy:
        raise LevelError("the path still crosses the mud at cost 4")
    return {"path if mud were free": round(free, 1), "path round the mud": round(real, 1)}


# ----------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------

def compact(v):
    return json.dumps(v, separators=(", ", ": "))


def to_json(lv):
    verts = []
    index = {}
    quads = []
    for q in lv.quads:
        if q.rect is not None:
            d = {"rect": [num(c) for c in q.rect]}
        else:
            vi = []
            for p in q.pts:
                key = (num(p[0]), num(p[1]))
                if key not in index:
                    index[key] = len(verts)
                    verts.append(list(key))
                vi.append(index[key])
            d = {"v": vi}
        if q.cost != 1:
            d["cost"] = q.cost
        if q.blocked:
            d["blocked"] = True
        if q.qid is not None:
            d["id"] = q.qid
        quads.append(d)
    named = lambda pts: [{"name": n, "at": [num(at[0]), num(at[1])]} for n, at in pts]
    lines = ["{", '  "format": 1,', '  "name": %s,' % json.dumps(lv.name)]
    if verts:
        rows = [", ".join(compact(v) for v in verts[k:k + 8]) for k in range(0, len(verts), 8)]
        lines.append('  "vertices": [')
        lines.append(",\n".join("    " + r for r in rows))
        lines.append("  ],")
    for key, items, last in (("quads", quads, False), ("goals", named(lv.goals), False),
                             ("spawns", named(lv.spawns), True)):
        lines.append('  "%s": [' % key)
        lines.append(",\n".join("    " + compact(d) for d in items))
        lines.append("  ]" + ("" if last else ","))
    lines.append("}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # must round-trip
    return text


def write_png(path, w, h, rgb):
    raw = b"".join(b"\x00" + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(tag, data):
        c = struct.pack(">I", len(data)) + tag + data
        return c + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def preview(lv, portals, path):
    """A picture for eyeballing a level: quads shaded by cost, outlines dark,
    portals green (T-junction portals yellow), goals red, spawns blue."""
    x0 = min(x for q in lv.quads for x, _ in q.pts)
    y0 = min(y for q in lv.quads for _, y in q.pts)
    x1 = max(x for q in lv.quads for x, _ in q.pts)
    y1 = max(y for q in lv.quads for _, y in q.pts)
    scale = max(2, int(720 / max(x1 - x0, y1 - y0)))
    w, h = int((x1 - x0) * scale) + 1, int((y1 - y0) * scale) + 1
    img = bytearray([40, 40, 40] * w * h)

    def put(px, py, col):
        if 0 <= px < w and 0 <= py < h:
            img[(py * w + px) * 3:(py * w + px) * 3 + 3] = bytes(col)

    def line(a, b, col):
        n = int(math.dist(a, b) * scale) + 1
        for t in range(n + 1):
            put(round((a[0] + (b[0] - a[0]) * t / n - x0) * scale),
                round((a[1] + (b[1] - a[1]) * t / n - y0) * scale), col)

    for k, q in enumerate(lv.quads):
        p = ipts(q, k)
        col = (150, 70, 70) if q.blocked else (140, 110, 60) if q.cost > 1 else (225, 225, 215)
        bx0, by0, bx1, by1 = q.bbox()
        for py in range(int((by0 - y0) * scale), int((by1 - y0) * scale) + 1):
            for px in range(int((bx0 - x0) * scale), int((bx1 - x0) * scale) + 1):
                pt = (2 * (px / scale + x0), 2 * (py / scale + y0))
                if inside_depth(p, pt) >= 0:
                    put(px, py, col)
    for q in lv.quads:
        for i in range(4):
            line(q.pts[i], q.pts[(i + 1) % 4], (110, 110, 110))
    for pr in portals:
        line(pr.p0, pr.p1, (230, 190, 0) if pr.partial else (0, 170, 0))
    for pts, col in ((lv.goals, (220, 0, 0)), (lv.spawns, (0, 60, 220))):
        for _, (ax, ay) in pts:
            for dy in range(-3, 4):
                for dx in range(-3, 4):
                    put(round((ax - x0) * scale) + dx, round((ay - y0) * scale) + dy, col)
    write_png(path, w, h, img)


def self_test():
    """The checks must catch what they claim to: each small broken level
    below is rejected with the expected complaint, and a T-junction gives
    one portal per overlap."""
    box = Quad.box

    def level(quads, goal=(1.5, 1.5)):
        lv = Level("test")
        lv.quads = quads
        lv.goals = [("g", goal)]
        lv.spawns = [("a", (4.5, 1.5)), ("b", (4.5, 1.5))]
        return lv

    pair = [box(0, 0, 3, 3), box(3, 0, 6, 3)]
    bad = [
        ([box(0, 0, 3, 3), box(2, 0, 5, 3)], "overlap"),
        ([Quad([(0, 0), (0, 3), (3, 3), (3, 0)]), pair[1]], "not positive"),
        ([Quad([(0, 0), (3, 0), (1, 1), (0, 3)]), pair[1]], "convex"),
        ([box(0, 0, 3, 3), box(3, 2.5, 6, 5.5)], "wide"),
        ([box(0, 0, 3, 3), box(3, 0, 3.5, 3), box(3.5, 0, 6, 3)], "wide"),
        ([box(0, 0, 3, 3), box(3, 0, 40, 3)], "sliver"),
        (pair + [box(7, 0, 10, 3)], "reached"),
        (pair + [box(7, 0, 10, 3, blocked=True)], "touches no open"),
        ([pair[0], box(3, 0, 6, 3, blocked=True)], "in blocked quad"),
    ]
    for quads, complaint in bad:
        try:
            verify(level(quads))
        except LevelError as e:
            assert complaint in str(e), (complaint, str(e))
        else:
            raise AssertionError("verify accepted a level with: " + complaint)
    try:
        verify(level(pair, goal=(0.5, 1.5)))
        raise AssertionError("verify accepted a goal next to an edge")
    except LevelError as e:
        assert "from the edge" in str(e), str(e)
    portals, s = verify(level([box(0, 0, 3, 6), box(3, 0, 6, 3), box(3, 3, 6, 6)]))
    assert (s["portals"], s["t_portals"]) == (3, 2), s
    assert sorted(pr.width for pr in portals) == [3, 3, 3], [pr.width for pr in portals]


def report(lv, s):
    flags = "".join("  %s %s" % (k, s[k]) for k in ("sheared", "costly", "blocked") if s[k])
    facts = "".join("  %s %s" % kv for kv in lv.facts.items())
    print("%-6s %4d quads  %4d portals  %3d T-junction portals  area %g  size %gx%g%s%s"
          % (lv.name, s["quads"], s["portals"], s["t_portals"], s["area"],
             s["size"][0], s["size"][1], flags, facts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="directory for the JSON files")
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in --out instead of writing them")
    ap.add_argument("--preview", metavar="DIR", help="also write a PNG per level here")
    args = ap.parse_args()
    self_test()
    stale = []
    for build in (build_town, build_maze, build_field):
        try:
            lv = build()
            portals, s = verify(lv)
            if lv.check:
                lv.facts.update(lv.check(lv, portals))
        except LevelError as e:
            sys.exit("%s: %s" % (build.__name__[len("build_"):], e))
        report(lv, s)
        text = to_json(lv)
        path = os.path.join(args.out, lv.name + ".json")
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(path)
            except OSError:
                stale.append(path)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        if args.preview:
            os.makedirs(args.preview, exist_ok=True)
            preview(lv, portals, os.path.join(args.preview, lv.name + ".png"))
    if stale:
        sys.exit("out of date (run tools/levels/make_levels.py): " + ", ".join(stale))


if __name__ == "__main__":
    main()
