/*
** pair.c: portals and overlap checks in O(n log n) for n quads.
**
** Portals are shared edge segments. Most come as twins: an edge whose exact
** reverse (same two end points, other direction) belongs to another quad;
** a hash of the end points finds those in linear time. The edges left (mesh
** boundary and T-junctions) are sorted into the buckets they pass through;
** inside a bucket they are sorted by direction, and an edge is only compared
** with edges whose direction is within what its length and the local
** tolerance allow. Overlaps: each pair of quads sharing a bucket of the exact
** membership grid is tested once (separating axes, local tolerance).
**
** Tolerances are local: t(q) = 8 float epsilons times the largest |coordinate|
** of quad q (at least 1), so a far-away quad does not loosen the tests of
** small quads near the origin.
*/
#include "build.h"

#include <float.h>
#include <stdlib.h>

/* max and min of doubles that are never NaN here (no libm call). */
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }

#define EMPTY UINT32_MAX
#define PI 3.14159265358979323846

/* A point in double precision: geometry tests compute in double. */
typedef struct dv2 {
    double x, y;
} dv2;

static dv2 dv(qn_vec2 p) {
    dv2 d = {(double)p.x, (double)p.y};
    return d;
}

/* ---- helpers ---------------------------------------------------------- */

static uint32_t fbits(float f) {
    f += 0.0f; /* -0 and +0 hash alike */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint32_t hash_edge(qn_vec2 a, qn_vec2 b) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    uint32_t w[4] = {fbits(a.x), fbits(a.y), fbits(b.x), fbits(b.y)};
    for (int i = 0; i < 4; i++) {
        h ^= w[i];
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return (uint32_t)(h ^ (h >> 32));
}

static bool same_point(qn_vec2 a, qn_vec2 b) { return a.x == b.x && a.y == b.y; }

/* Corner e (4 * quad + k) of the mesh being built: a mesh of rectangles
** keeps only their boxes by now (qn__corners). */
static qn_vec2 corner(const qn_mesh *m, size_t e) {
    return m->corners ? m->corners[e] : qn__rect_corner(m->rects[e >> 2], (unsigned)(e & 3u));
}
static qn_vec2 corner_next(const qn_mesh *m, uint32_t e) {
    return corner(m, (e & ~3u) | ((e + 1) & 3u));
}

/* Quad q's local tolerance: kept per quad, or, for a mesh of rectangles,
** worked out from its box as qn__mesh_shapes works it out (the largest
** |coordinate| of its corners). */
static float quad_tol(const qn__builder *bd, uint32_t q) {
    if (bd->tol) return bd->tol[q];
    qn_rect r = bd->m->rects[q];
    double a = dmax(dmax(fabs((double)r.min.x), fabs((double)r.min.y)),
                    dmax(fabs((double)r.max.x), fabs((double)r.max.y)));
    return (float)qn__tol_at(a);
}

static double dlen(qn_vec2 a, qn_vec2 b) {
    double dx = (double)b.x - (double)a.x, dy = (double)b.y - (double)a.y;
    return sqrt(dx * dx + dy * dy);
}

static qn_status push_cand(qn__builder *bd, qn__cand c) {
    if (bd->ncand == bd->capcand) {
        uint32_t ncap = bd->capcand ? bd->capcand * 2 : 256;
        if (bd->capcand >= UINT32_MAX / 4)
            return qn__fail(bd->err, QN_E_LIMIT, QN_NONE, "more than %u shared edge segments",
                            UINT32_MAX / 4);
        qn__cand *n = qn__realloc(&bd->m->alloc, bd->cands, bd->capcand * sizeof(qn__cand),
                                  ncap * sizeof(qn__cand));
        if (!n) return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
        bd->cands = n;
        bd->capcand = ncap;
    }
    bd->cands[bd->ncand++] = c;
    return QN_OK;
}

/* The candidate for edges e (of quad qe) and f (of quad qf) sharing the
** segment s0 -> s1, which runs along e's direction. */
static qn_status push_shared(qn__builder *bd, uint32_t e, uint32_t f, qn_vec2 s0, qn_vec2 s1) {
    uint32_t qe = e >> 2, qf = f >> 2;
    qn__cand c;
    if (qe < qf) {
        c = (qn__cand){qe, qf, (uint8_t)(e & 3), (uint8_t)(f & 3), s0, s1};
    } else {
        c = (qn__cand){qf, qe, (uint8_t)(f & 3), (uint8_t)(e & 3), s1, s0};
    }
    return push_cand(bd, c);
}

static qn_status overlap_error(qn__builder *bd, uint32_t qa, uint32_t qb) {
    uint32_t lo = qa < qb ? qa : qb, hi = qa < qb ? qb : qa;
    return qn__fail(bd->err, QN_E_OVERLAP, hi, "quad %u overlaps quad %u", hi, lo);
}

/* Sorts small runs in place (insertion sort): most buckets and most quads'
** candidate lists hold a handful of entries, where qsort's setup dominates. */
static void sort_small(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                       void *tmp) {
    char *b = base;
    for (size_t i = 1; i < n; i++) {
        size_t j = i;
        if (cmp(b + (j - 1) * size, b + i * size) <= 0) continue;
        memcpy(tmp, b + i * size, size);
        while (j > 0 && cmp(b + (j - 1) * size, tmp) > 0) {
            memcpy(b + j * size, b + (j - 1) * size, size);
            j--;
        }
        memcpy(b + j * size, tmp, size);
    }
}

static void sort_any(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                     void *tmp) {
    if (n > 24) qsort(base, n, size, cmp);
    else if (n > 1) sort_small(base, n, size, cmp, tmp);
}

/* ---- twins ------------------------------------------------------------ */

/* Edge slot of (a, b) in the table, or the empty slot where it would go. */
static size_t twin_slot(const qn_mesh *m, const uint32_t *table, size_t mask, qn_vec2 a,
                        qn_vec2 b) {
    size_t i = hash_edge(a, b) & mask;
    while (table[i] != EMPTY) {
        uint32_t e = table[i];
        if (same_point(corner(m, e), a) && same_point(corner_next(m, e), b)) return i;
        i = (i + 1) & mask;
    }
    return i;
}

/* Pairs every edge with its exact reverse; done[e] = 1 for those. Two quads
** with the same directed edge lie on the same side of it: an overlap. */
static qn_status match_twins(qn__builder *bd, uint8_t *done) {
    qn_mesh *m = bd->m;
    size_t ne = 4 * (size_t)m->quad_count, size = 16;
    while (size < 2 * ne) size *= 2;
    uint32_t *table = qn__alloc(&m->alloc, size * sizeof(uint32_t));
    if (!table) return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (edge table)");
    memset(table, 0xFF, size * sizeof(uint32_t));
    qn_status st = QN_OK;
    /* The slots are random: fetch the one QN__FETCH_AHEAD edges on early. */
    for (size_t e = 0; e < ne && st == QN_OK; e++) {
        if (e + QN__FETCH_AHEAD < ne) {
            uint32_t g = (uint32_t)(e + QN__FETCH_AHEAD);
            QN__PREFETCH(&table[hash_edge(corner(m, g), corner_next(m, g)) & (size - 1)]);
        }
        size_t i = twin_slot(m, table, size - 1, corner(m, (uint32_t)e),
                             corner_next(m, (uint32_t)e));
        if (table[i] != EMPTY) st = overlap_error(bd, table[i] >> 2, (uint32_t)e >> 2);
        else table[i] = (uint32_t)e;
    }
    for (size_t e = 0; e < ne && st == QN_OK; e++) {
        if (e + QN__FETCH_AHEAD < ne) {
            uint32_t g = (uint32_t)(e + QN__FETCH_AHEAD);
            QN__PREFETCH(&table[hash_edge(corner_next(m, g), corner(m, g)) & (size - 1)]);
        }
        qn_vec2 a = corner(m, (uint32_t)e), b = corner_next(m, (uint32_t)e);
        uint32_t f = table[twin_slot(m, table, size - 1, b, a)];
        if (f == EMPTY || (f >> 2) == (e >> 2)) continue;
        done[e] = 1;
        if (f > e) st = push_shared(bd, (uint32_t)e, f, a, b);
    }
    qn__free(&m->alloc, table, size * sizeof(uint32_t));
    return st;
}

/* ---- the other edges: buckets, directions, sweeps ----------------------- */

/* One edge without a twin: direction in [0, pi), length, tolerance. */
typedef struct loose {
    uint32_t e;
    float tol;
    double theta, len;
    double off; /* signed distance of its line from the origin */
} loose;

/* Bucket membership of a loose edge, sorted by direction inside a bucket. */
typedef struct member {
    double theta, off;
    uint32_t i; /* index into the loose array */
} member;

typedef struct sweep {
    qn__builder *bd;
    loose *ls;
    uint32_t nl;
    uint32_t *start; /* cells + 1 */
    member *mem;
    size_t nmem;
} sweep;

static uint32_t coord_cell(double v, double origin, double inv, uint32_t n) {
    double f = (v - origin) * inv;
    if (!(f > 0.0)) return 0;
    if (f >= (double)n) return n - 1;
    return (uint32_t)f;
}

/* Calls visit(cell) for each bucket the edge (grown by tol) passes through,
** row by row. Returns the count when visit is NULL. */
static size_t edge_cells(const qn_mesh *m, qn_vec2 a, qn_vec2 b, double tol, uint32_t *out) {
    double ox = (double)m->grid_origin.x, oy = (double)m->grid_origin.y;
    double cs = (double)m->grid_cell, inv = 1.0 / cs;
    double x0 = (double)a.x, y0 = (double)a.y, x1 = (double)b.x, y1 = (double)b.y;
    double ymin = dmin(y0, y1), ymax = dmax(y0, y1), xmin = dmin(x0, x1), xmax = dmax(x0, x1);
    uint32_t r0 = coord_cell(ymin - tol, oy, inv, m->grid_h);
    uint32_t r1 = coord_cell(ymax + tol, oy, inv, m->grid_h);
    size_t n = 0;
    for (uint32_t r = r0; r <= r1; r++) {
        double lo = xmin, hi = xmax;
        if (y1 - y0 != 0.0) {
            double ya = dmin(dmax(oy + (double)r * cs, ymin), ymax);
            double yb = dmin(dmax(oy + (double)(r + 1) * cs, ymin), ymax);
            double xa = x0 + (ya - y0) * (x1 - x0) / (y1 - y0);
            double xb = x0 + (yb - y0) * (x1 - x0) / (y1 - y0);
            lo = dmax(dmin(xa, xb), xmin);
            hi = dmin(dmax(xa, xb), xmax);
        }
        uint32_t c0 = coord_cell(lo - tol, ox, inv, m->grid_w);
        uint32_t c1 = coord_cell(hi + tol, ox, inv, m->grid_w);
        for (uint32_t c = c0; c <= c1; c++, n++)
            if (out) out[n] = r * m->grid_w + c;
    }
    return n;
}

static qn_status collect_loose(sweep *S, const uint8_t *done) {
    qn_mesh *m = S->bd->m;
    size_t ne = 4 * (size_t)m->quad_count;
    uint32_t nl = 0;
    for (size_t e = 0; e < ne; e++) nl += !done[e];
    S->ls = qn__alloc(&m->alloc, (size_t)nl * sizeof(loose));
    if (!S->ls) return qn__fail(S->bd->err, QN_E_NOMEM, QN_NONE, "out of memory (edges)");
    for (size_t e = 0; e < ne; e++) {
        if (done[e]) continue;
        qn_vec2 a = corner(m, (uint32_t)e), b = corner_next(m, (uint32_t)e);
        double th = atan2((double)b.y - (double)a.y, (double)b.x - (double)a.x);
        if (th < 0) th += PI;
        if (th >= PI) th -= PI;
        loose *l = &S->ls[S->nl++];
        l->e = (uint32_t)e;
        l->tol = quad_tol(S->bd, (uint32_t)(e >> 2));
        l->theta = th;
        l->len = dlen(a, b);
        l->off = cos(th) * (double)a.y - sin(th) * (double)a.x;
    }
    return QN_OK;
}

static int cmp_member(const void *x, const void *y) {
    const member *a = x, *b = y;
    if (a->theta != b->theta) return a->theta < b->theta ? -1 : 1;
    if (a->off != b->off) return a->off < b->off ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

/* Bucket lists of the loose edges (counting pass, then filling pass). */
static qn_status bucket_loose(sweep *S) {
    qn_mesh *m = S->bd->m;
    size_t cells = (size_t)m->grid_w * m->grid_h;
    S->start = qn__calloc(&m->alloc, cells + 1, sizeof(uint32_t));
    if (!S->start) return qn__fail(S->bd->err, QN_E_NOMEM, QN_NONE, "out of memory (edges)");
    size_t total = 0, maxc = 0;
    for (uint32_t i = 0; i < S->nl; i++) {
        uint32_t e = S->ls[i].e;
        size_t k = edge_cells(m, corner(m, e), corner_next(m, e), 2.0 * (double)S->ls[i].tol, NULL);
        total += k;
        if (k > maxc) maxc = k;
    }
    if (total > UINT32_MAX / 2)
        return qn__fail(S->bd->err, QN_E_LIMIT, QN_NONE, "edges too long for the edge index");
    uint32_t *tmp = qn__alloc(&m->alloc, (maxc + 1) * sizeof(uint32_t));
    S->mem = qn__alloc(&m->alloc, (total + 1) * sizeof(member));
    S->nmem = total;
    if (!tmp || !S->mem) {
        qn__free(&m->alloc, tmp, (maxc + 1) * sizeof(uint32_t));
        return qn__fail(S->bd->err, QN_E_NOMEM, QN_NONE, "out of memory (edges)");
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < S->nl; i++) {
            uint32_t e = S->ls[i].e;
            size_t k =
                edge_cells(m, corner(m, e), corner_next(m, e), 2.0 * (double)S->ls[i].tol, tmp);
            for (size_t j = 0; j < k; j++) {
                if (pass == 0) S->start[tmp[j] + 1]++;
                else S->mem[S->start[tmp[j]]++] = (member){S->ls[i].theta, S->ls[i].off, i};
            }
        }
        if (pass == 0)
            for (size_t c = 0; c < cells; c++) S->start[c + 1] += S->start[c];
    }
    /* The filling pass moved each start to the next bucket's: shift back. */
    for (size_t c = cells; c > 0; c--) S->start[c] = S->start[c - 1];
    S->start[0] = 0;
    qn__free(&m->alloc, tmp, (maxc + 1) * sizeof(uint32_t));
    member swap;
    for (size_t c = 0; c < cells; c++)
        sort_any(S->mem + S->start[c], S->start[c + 1] - S->start[c], sizeof(member), cmp_member,
                 &swap);
    return QN_OK;
}

/* Compares loose edges e (the longer) and f: on one line within the
** tolerance, overlapping by more than it. Opposite directions: a portal
** candidate; the same direction: two quads on one side, an overlap. */
static qn_status compare_edges(qn__builder *bd, const loose *le, const loose *lf) {
    const qn_mesh *m = bd->m;
    uint32_t e = le->e, f = lf->e;
    if ((e >> 2) == (f >> 2)) return QN_OK;
    dv2 a0 = dv(corner(m, e)), a1 = dv(corner_next(m, e));
    dv2 b0 = dv(corner(m, f)), b1 = dv(corner_next(m, f));
    double len = le->len, tol = dmax((double)le->tol, (double)lf->tol);
    double ux = (a1.x - a0.x) / len, uy = (a1.y - a0.y) / len;
    double d0 = ux * (b0.y - a0.y) - uy * (b0.x - a0.x);
    double d1 = ux * (b1.y - a0.y) - uy * (b1.x - a0.x);
    if (fabs(d0) > tol || fabs(d1) > tol) return QN_OK;
    double t0 = ux * (b0.x - a0.x) + uy * (b0.y - a0.y);
    double t1 = ux * (b1.x - a0.x) + uy * (b1.y - a0.y);
    double lo = dmax(0.0, dmin(t0, t1)), hi = dmin(len, dmax(t0, t1));
    if (hi - lo <= tol) return QN_OK;
    if (t1 > t0) return overlap_error(bd, e >> 2, f >> 2);
    /* Ends of the shared part: f's own vertices where they lie inside e. */
    qn_vec2 s0 = t1 > tol ? corner_next(m, f) : corner(m, e);
    qn_vec2 s1 = t0 < len - tol ? corner(m, f) : corner_next(m, e);
    return push_shared(bd, e, f, s0, s1);
}

/* Largest direction difference two loose edges on one line can show, seen
** from the shorter one (i): asin(2 tol / len) with tol the larger of both. */
static double window(const loose *li, double tmax) {
    double x = 2.0 * ((double)li->tol + tmax) / li->len;
    return x >= 1.0 ? PI : 1.5708 * x + 1e-12;
}

static bool shorter(const loose *li, uint32_t i, const loose *lj, uint32_t j) {
    return li->len < lj->len || (li->len == lj->len && i < j);
}

/* Tests the pair (i, j) from the shorter edge's side. */
static qn_status try_pair(sweep *S, const member *mem, uint32_t i, uint32_t j) {
    const loose *li = &S->ls[mem[i].i], *lj = &S->ls[mem[j].i];
    if (!shorter(li, mem[i].i, lj, mem[j].i)) return QN_OK;
    return compare_edges(S->bd, lj, li);
}

/* Members sorted by (direction, offset). From each member i, scans both
** ways round the circle of directions while within its window; among
** exactly parallel edges, jumps over those whose lines are too far apart. */
static qn_status sweep_bucket(sweep *S, const member *mem, uint32_t n, uint32_t *lo,
                              uint32_t *hi) {
    double tmax = 0.0;
    for (uint32_t i = 0; i < n; i++) tmax = dmax(tmax, (double)S->ls[mem[i].i].tol);
    for (uint32_t i = 0; i < n; i++) /* runs of one direction: [lo, hi) */
        lo[i] = i > 0 && mem[i - 1].theta == mem[i].theta ? lo[i - 1] : i;
    for (uint32_t i = n; i-- > 0;)
        hi[i] = i + 1 < n && mem[i + 1].theta == mem[i].theta ? hi[i + 1] : i + 1;
    qn_status st = QN_OK;
    for (uint32_t i = 0; i < n && st == QN_OK; i++) {
        const loose *li = &S->ls[mem[i].i];
        double w = window(li, tmax), wc = 2.0 * ((double)li->tol + tmax), th = mem[i].theta;
        uint32_t j = i + 1;
        for (; j < n && st == QN_OK; j++) {
            if (mem[j].theta == th) {
                if (mem[j].off - mem[i].off > wc) j = hi[i] - 1;
                else st = try_pair(S, mem, i, j);
                continue;
            }
            if (mem[j].theta - th > w) break;
            st = try_pair(S, mem, i, j);
        }
        for (uint32_t k = 0; j == n && k < lo[i] && st == QN_OK; k++) { /* past pi */
            if (mem[k].theta + PI - th > w) break;
            st = try_pair(S, mem, i, k);
        }
        for (j = i; j-- > 0 && st == QN_OK;) {
            if (mem[j].theta == th) {
                if (mem[i].off - mem[j].off > wc) j = lo[i];
                else st = try_pair(S, mem, i, j);
                continue;
            }
            if (th - mem[j].theta > w) break;
            st = try_pair(S, mem, i, j);
        }
        for (uint32_t k = n; j == UINT32_MAX && k-- > hi[i] && st == QN_OK;) { /* below 0 */
            if (th + PI - mem[k].theta > w) break;
            st = try_pair(S, mem, i, k);
        }
    }
    return st;
}

static qn_status match_loose(qn__builder *bd, const uint8_t *done) {
    qn_mesh *m = bd->m;
    sweep S = {bd, NULL, 0, NULL, NULL, 0};
    size_t cells = (size_t)m->grid_w * m->grid_h;
    qn_status st = collect_loose(&S, done);
    if (st == QN_OK) st = bucket_loose(&S);
    uint32_t kmax = 0;
    for (size_t c = 0; st == QN_OK && c < cells; c++)
        kmax = S.start[c + 1] - S.start[c] > kmax ? S.start[c + 1] - S.start[c] : kmax;
    uint32_t *run = st == QN_OK ? qn__alloc(&m->alloc, 2 * (size_t)kmax * sizeof(uint32_t)) : NULL;
    if (st == QN_OK && !run) st = qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (edges)");
    for (size_t c = 0; st == QN_OK && c < cells; c++)
        st = sweep_bucket(&S, S.mem + S.start[c], S.start[c + 1] - S.start[c], run, run + kmax);
    qn__free(&m->alloc, run, 2 * (size_t)kmax * sizeof(uint32_t));
    qn__free(&m->alloc, S.ls, (size_t)S.nl * sizeof(loose));
    if (S.start) qn__free(&m->alloc, S.mem, (S.nmem + 1) * sizeof(member));
    qn__free(&m->alloc, S.start, (cells + 1) * sizeof(uint32_t));
    return st;
}

/* ---- every edge of a mesh of rectangles: sweeps along lines ------------- */

/* When every quad is an axis-aligned rectangle (qn__axis_rect), every edge
** is horizontal or vertical, and compare_edges pairs (or finds in conflict)
** only edges of one orientation whose lines lie within the larger local
** tolerance of each other and which overlap along them. Sorted by line,
** exact twins sit side by side and are paired first (rect_twins), as the
** hashing of match_twins would pair them; of the loose edges left, those
** whose lines chain within the largest tolerance form a group;
** sorted along the line inside it, each edge is compared with those still
** open where it starts. compare_edges then decides every pair exactly as
** the bucket sweep would (from the longer edge, ties to the later one); the
** pairs compared are a superset of those, so the outcome is the same when
** no conflict is found. On a conflict the caller reruns the bucket sweep,
** which reports the same error as ever (after match_twins, as before). */
typedef struct rside {
    float line, lo; /* the line's coordinate; where the span along it starts */
    uint32_t i;     /* the edge (4 * quad + side): odd ones are vertical */
} rside;

/* Where edge r's span along its line ends (kept in no record: 12 bytes an
** edge, not 16, at the peak of a big load). */
static float rside_hi(const qn_mesh *m, const rside *r) {
    qn_vec2 a = corner(m, r->i), b = corner_next(m, r->i);
    float la = (r->i & 1u) ? a.y : a.x, lb = (r->i & 1u) ? b.y : b.x;
    return la < lb ? lb : la;
}

/* Edge e's record for compare_edges, made when needed: a mesh of rectangles
** keeps no loose array (it would take 32 bytes an edge at the peak of a
** big load). The same values match_loose_rects stored before. */
static loose rect_loose(const qn__builder *bd, uint32_t e) {
    loose l = {e, quad_tol(bd, e >> 2), 0.0, dlen(corner(bd->m, e), corner_next(bd->m, e)), 0.0};
    return l;
}

static int cmp_rside_lo(const void *x, const void *y) {
    const rside *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

/* The digit (`mask` wide) at `shift` of the key of r's `lo` (by_lo) or `line`. */
static uint32_t rside_digit(const rside *r, bool by_lo, int shift, uint32_t mask) {
    return (qn__float_order_key(by_lo ? r->lo : r->line) >> shift) & mask;
}

/* Bits of a radix sort's digit for n keys: 16 (two passes over 32-bit
** keys, counts of 65,536 buckets), or 8 for a few thousand keys or fewer,
** where clearing and summing 65,536 counts a pass took nearly all of
** making a small mesh (450 us for 132 quads: a hierarchy's sector meshes
** are that size). Any width sorts the same: the passes are stable. */
static int radix_bits(size_t n) { return n < 4096 ? 8 : 16; }

/* Stable radix sort of r[0..n) by the key of field `lo` (by_lo) or `line`,
** a digit a pass (radix_bits), skipping a pass whose digit is the same for
** all (the low one, on small integer coordinates); tmp: room for n, count:
** for 65,537. Returns where the result is. */
static rside *radix_rsides(rside *r, rside *tmp, uint32_t n, bool by_lo, uint32_t *count) {
    int bits = radix_bits(n);
    uint32_t nd = 1u << bits, mask = nd - 1u;
    for (int shift = 0; shift < 32; shift += bits) {
        memset(count, 0, (nd + 1) * sizeof *count);
        for (uint32_t k = 0; k < n; k++)
            count[rside_digit(&r[k], by_lo, shift, mask) + 1]++;
        bool one = false;
        for (uint32_t d = 1; d <= nd && !one; d++)
            one = count[d] == n;
        if (one) continue;
        for (uint32_t d = 0; d < nd; d++)
            count[d + 1] += count[d];
        for (uint32_t k = 0; k < n; k++)
            tmp[count[rside_digit(&r[k], by_lo, shift, mask)]++] = r[k];
        rside *t = r;
        r = tmp;
        tmp = t;
    }
    return r;
}

/* One group of edges near one line, sorted by (lo, i) here; act: room for
** n. A group on one exact line comes sorted so from sweep_lines. */
static qn_status sweep_group(sweep *S, rside *g, uint32_t n, uint32_t *act) {
    if (n > 1 && g[0].line != g[n - 1].line) qsort(g, n, sizeof *g, cmp_rside_lo);
    uint32_t na = 0, ahead = QN__FETCH_AHEAD;
    for (uint32_t k = 0; k < n; k++) {
        /* Edges come by position, their boxes in another order: a cache
        ** miss each, fetched ahead. */
        if (k + ahead < n) QN__PREFETCH(&S->bd->m->rects[g[k + ahead].i >> 2]);
        uint32_t keep = 0;
        for (uint32_t a = 0; a < na; a++) /* drop edges that end before this one starts */
            if (rside_hi(S->bd->m, &g[act[a]]) >= g[k].lo) act[keep++] = act[a];
        na = keep;
        loose li = na ? rect_loose(S->bd, g[k].i) : (loose){0};
        for (uint32_t a = 0; a < na; a++) {
            uint32_t i = g[k].i, j = g[act[a]].i;
            loose lj = rect_loose(S->bd, j);
            qn_status st = shorter(&li, i, &lj, j) ? compare_edges(S->bd, &lj, &li)
                                                   : compare_edges(S->bd, &li, &lj);
            if (st != QN_OK) return st;
        }
        act[na++] = k;
    }
    return QN_OK;
}

/* Exact twins among one orientation's edges r[0..n), sorted by (line, lo,
** i): edges with the same line, lo and hi have the same two end points.
** Opposite directions in two quads: twins, paired as match_twins pairs them
** (done, one candidate from the lower edge's side); the same direction: two
** quads on one side (match_twins reports it), so a conflict here. */
static qn_status rect_twins(sweep *S, const rside *r, uint32_t n, uint8_t *done) {
    const qn_mesh *m = S->bd->m;
    for (uint32_t from = 0, k = 1; from < n; k++) {
        if (k < n && r[k].line == r[from].line && r[k].lo == r[from].lo) continue;
        for (uint32_t x = from; x + 1 < k; x++) /* a run: nearly always 1 or 2 */
            for (uint32_t y = x + 1; y < k; y++) {
                if (rside_hi(m, &r[x]) != rside_hi(m, &r[y])) continue;
                uint32_t e = r[x].i, f = r[y].i;
                if (e > f) {
                    uint32_t t = e;
                    e = f;
                    f = t;
                }
                qn_vec2 a = corner(m, e), b = corner_next(m, e);
                if (same_point(corner(m, f), a)) return QN_E_OVERLAP;
                if ((e >> 2) == (f >> 2)) continue;
                done[e] = done[f] = 1;
                qn_status st = push_shared(S->bd, e, f, a, b);
                if (st != QN_OK) return st;
            }
        from = k;
    }
    return QN_OK;
}

/* The edges of one orientation (vertical: 1, horizontal: 0): twins paired,
** then the loose ones swept; r and tmp: room for the edges of one
** orientation (two per rectangle), count: 65537. */
static qn_status sweep_lines(sweep *S, rside *r, rside *tmp, uint32_t *count, uint8_t *done,
                             bool vertical, double tmax) {
    const qn_mesh *m = S->bd->m;
    uint32_t n = 0;
    for (uint32_t e = vertical ? 1u : 0u; e < 4 * m->quad_count; e += 2) {
        qn_vec2 a = corner(m, e), b = corner_next(m, e);
        float la = vertical ? a.y : a.x, lb = vertical ? b.y : b.x;
        r[n++] = (rside){vertical ? a.x : a.y, la < lb ? la : lb, e};
    }
    /* By (line, lo, i): by lo first, then stably by line (i is the order made). */
    rside *given = r, *lo_sorted = radix_rsides(r, tmp, n, true, count);
    r = radix_rsides(lo_sorted, lo_sorted == r ? tmp : r, n, false, count);
    /* The edges open along one line, in the buffer the sort left free. */
    uint32_t *act = (uint32_t *)(void *)(r == given ? tmp : given);
    qn_status st = rect_twins(S, r, n, done);
    if (st != QN_OK) return st;
    /* The loose ones, in the same order (records and flags fetched ahead). */
    uint32_t kept = 0, ahead = QN__FETCH_AHEAD;
    for (uint32_t k = 0; k < n; k++) {
        if (k + ahead < n) QN__PREFETCH(&done[r[k + ahead].i]);
        if (!done[r[k].i]) r[kept++] = r[k];
    }
    n = kept;
    for (uint32_t from = 0, k = 1; st == QN_OK && from < n; k++)
        if (k == n || (double)r[k].line - (double)r[k - 1].line > tmax) {
            st = sweep_group(S, r + from, k - from, act);
            from = k;
        }
    return st;
}

/* QN_OK with every portal candidate of the edges pushed; QN_E_NOMEM
** or QN_E_LIMIT (no message: bd->err is NULL here); any other status means
** "ask the bucket sweep" (the cands pushed here are then dropped). */
static qn_status match_loose_rects(qn__builder *bd, uint8_t *done) {
    qn_mesh *m = bd->m;
    /* Two edges of each orientation per rectangle: r and tmp hold one
    ** orientation's. */
    size_t half = 2 * (size_t)m->quad_count + 1;
    double tmax = 0.0;
    for (uint32_t q = 0; q < m->quad_count; q++)
        tmax = dmax(tmax, (double)quad_tol(bd, q));
    sweep S = {bd, NULL, 0, NULL, NULL, 0};
    rside *r = qn__alloc(&m->alloc, 2 * half * sizeof(rside));
    uint32_t *count = qn__alloc(&m->alloc, 65537 * sizeof(uint32_t));
    qn_status st = r && count ? QN_OK : QN_E_NOMEM;
    rside *tmp = r ? r + half : NULL;
    if (st == QN_OK) st = sweep_lines(&S, r, tmp, count, done, false, tmax);
    if (st == QN_OK) st = sweep_lines(&S, r, tmp, count, done, true, tmax);
    qn__free(&m->alloc, count, 65537 * sizeof(uint32_t));
    qn__free(&m->alloc, r, 2 * half * sizeof(rside));
    return st;
}

static bool all_rects(const qn_mesh *m) {
    if (m->rects) return true;
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (!qn__axis_rect(&m->corners[4 * (size_t)q])) return false;
    return true;
}

/* Every edge: a mesh of rectangles by lines, twins included, when that
** finds no conflict; else (and then) exact twins by hashing and the loose
** edges by buckets. */
static qn_status match_edges(qn__builder *bd, uint8_t *done) {
    if (all_rects(bd->m)) {
        uint32_t before = bd->ncand;
        qn_error *err = bd->err;
        bd->err = NULL; /* a conflict here is reported by the general path */
        qn_status st = match_loose_rects(bd, done);
        bd->err = err;
        if (st == QN_OK) return QN_OK;
        if (st == QN_E_NOMEM) return qn__fail(err, st, QN_NONE, "out of memory (edges)");
        if (st == QN_E_LIMIT)
            return qn__fail(err, st, QN_NONE, "more than %u shared edge segments",
                            UINT32_MAX / 4);
        bd->ncand = before;
        memset(done, 0, 4 * (size_t)bd->m->quad_count);
    }
    qn_status st = match_twins(bd, done);
    return st == QN_OK ? match_loose(bd, done) : st;
}

/* ---- one candidate per quad pair: the longest -------------------------- */

static double cand_len(const qn__cand *c) { return dlen(c->p0, c->p1); }

static int cmp_cand_best(const void *x, const void *y) {
    const qn__cand *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    double la = cand_len(a), lb = cand_len(b);
    if (la != lb) return la > lb ? -1 : 1;
    if (a->ea != b->ea) return a->ea < b->ea ? -1 : 1;
    if (a->eb != b->eb) return a->eb < b->eb ? -1 : 1;
    /* Last the points, so that the order the runs come in never decides. */
    const float ka[4] = {a->p0.x, a->p0.y, a->p1.x, a->p1.y},
                kb[4] = {b->p0.x, b->p0.y, b->p1.x, b->p1.y};
    for (int i = 0; i < 4; i++)
        if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

/* Sorts by (a, b) and keeps the longest segment of each pair: quads with a
** split edge may touch a neighbour along two collinear pieces. Candidates
** are sorted by a (counting sort) into a block, each quad's few then by
** (b, length, edges, points) and the first of each pair kept. A big list
** goes in rounds, each taking the quads of one range (about a quarter of
** the candidates): the rest move up to the front and the list shrinks, so
** the peak is the list and a quarter, not twice the list (tens of
** megabytes on a million-quad mesh). */
uint32_t qn__pair_rounds_above = 1u << 20;

static qn_status best_per_pair(qn__builder *bd) {
    qn_mesh *m = bd->m;
    uint32_t n = bd->ncand, nq = m->quad_count, rounds = n > qn__pair_rounds_above ? 4u : 1u;
    uint32_t *start = qn__calloc(&m->alloc, (size_t)nq + 1, sizeof(uint32_t));
    if (!start) return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    for (uint32_t i = 0; i < n; i++) start[bd->cands[i].a + 1]++;
    for (uint32_t q = 0; q < nq; q++) start[q + 1] += start[q];
    qn__cand *out = NULL, tmp;
    uint32_t nout = 0, outcap = 0, left = n, cap = bd->capcand;
    qn_status st = QN_OK;
    for (uint32_t r = 0, lo = 0; r < rounds && st == QN_OK; r++) {
        /* Quads [lo, hi): the candidates up to the r + 1-th share. */
        uint32_t want = (uint32_t)((uint64_t)n * (r + 1) / rounds), hi = lo;
        while (hi < nq && (r + 1 == rounds || start[hi + 1] <= want))
            hi++;
        if (hi == lo && lo < nq) hi = lo + 1; /* one quad with more than a share */
        uint32_t base = start[lo], cnt = start[hi] - base;
        qn__cand *blk = qn__alloc(&m->alloc, ((size_t)cnt + 1) * sizeof(qn__cand));
        if (!blk) {
            st = qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
            break;
        }
        /* start[q] is each quad's cursor, and then the end of its run. */
        uint32_t rest = 0;
        for (uint32_t i = 0; i < left; i++) {
            qn__cand c = bd->cands[i];
            if (c.a >= lo && c.a < hi)
                blk[start[c.a]++ - base] = c;
            else
                bd->cands[rest++] = c;
        }
        left = rest;
        uint32_t keep = 0;
        for (uint32_t q = lo, from = 0; q < hi; q++) {
            uint32_t to = start[q] - base;
            sort_any(blk + from, to - from, sizeof(qn__cand), cmp_cand_best, &tmp);
            for (uint32_t i = from; i < to; i++) /* keep <= i: reads stay ahead */
                if (keep == 0 || blk[keep - 1].a != blk[i].a || blk[keep - 1].b != blk[i].b)
                    blk[keep++] = blk[i];
            from = to;
        }
        if (!out) { /* the first round's block grows to take the others' */
            out = blk;
            nout = keep;
            outcap = cnt + 1;
        } else {
            qn__cand *grown = qn__realloc(&m->alloc, out, (size_t)outcap * sizeof(qn__cand),
                                          ((size_t)nout + keep + 1) * sizeof(qn__cand));
            if (grown) {
                out = grown;
                outcap = nout + keep + 1;
                memcpy(out + nout, blk, (size_t)keep * sizeof(qn__cand));
                nout += keep;
            } else {
                st = qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
            }
            qn__free(&m->alloc, blk, ((size_t)cnt + 1) * sizeof(qn__cand));
        }
        if (st == QN_OK && r + 1 < rounds) { /* give back what the taken ones held */
            qn__cand *fit = qn__realloc(&m->alloc, bd->cands, (size_t)cap * sizeof(qn__cand),
                                        ((size_t)left + 1) * sizeof(qn__cand));
            if (fit)
                bd->cands = fit, cap = left + 1;
            else
                st = qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
        }
        lo = hi;
    }
    qn__free(&m->alloc, start, ((size_t)nq + 1) * sizeof(uint32_t));
    if (st == QN_OK) { /* the list is now out */
        qn__free(&m->alloc, bd->cands, (size_t)cap * sizeof(qn__cand));
        bd->cands = out;
        bd->ncand = nout;
        bd->capcand = outcap;
    } else { /* what is left of the list, freed by the caller */
        qn__free(&m->alloc, out, (size_t)outcap * sizeof(qn__cand));
        bd->capcand = cap;
        bd->ncand = left;
    }
    return st;
}

/* ---- overlaps ------------------------------------------------------------ */

/* Separating-axis test on the 8 edge normals; touching (within the local
** tolerance) is not overlap. */
static bool quads_overlap(const qn__builder *bd, uint32_t a, uint32_t b) {
    const qn_mesh *m = bd->m;
    double t = 4.0 * dmax((double)quad_tol(bd, a), (double)quad_tol(bd, b));
    qn_vec2 ka[4], kb[4];
    const qn_vec2 *ca = qn__corners(m, a, ka), *cb = qn__corners(m, b, kb);
    if (qn__axis_rect(ca) && qn__axis_rect(cb)) {
        /* Two rectangles: how far the other's furthest corner lies inside
        ** each edge is a difference of two corner coordinates, exact in
        ** double, and the same number the general test below computes (its
        ** edge length is then the exact |dx| or |dy|, its products exact). */
        for (int s = 0; s < 2; s++) {
            const qn_vec2 *c = s ? cb : ca, *o = s ? ca : cb;
            if ((double)o[2].y - (double)c[0].y <= t || (double)c[1].x - (double)o[0].x <= t ||
                (double)c[2].y - (double)o[0].y <= t || (double)o[2].x - (double)c[3].x <= t)
                return false;
        }
        return true;
    }
    for (int s = 0; s < 2; s++) {
        const qn_vec2 *c = s ? cb : ca, *o = s ? ca : cb;
        for (int i = 0; i < 4; i++) {
            dv2 p = dv(c[i]), q = dv(c[(i + 1) & 3]);
            double ex = q.x - p.x, ey = q.y - p.y, len = sqrt(ex * ex + ey * ey);
            double maxo = -DBL_MAX;
            for (int k = 0; k < 4; k++) {
                /* distance inside edge i's line */
                dv2 v = dv(o[k]);
                maxo = dmax(maxo, (ex * (v.y - p.y) - ey * (v.x - p.x)) / len);
            }
            if (maxo <= t) return false;
        }
    }
    return true;
}

/* ---- corners sharing a point: wedges -------------------------------------- */

/* The wedge of quad q at its corner c: counter-clockwise from the direction
** of the edge leaving c to that of the edge entering it. */
typedef struct wedge {
    double start, width;
    uint32_t corner; /* 4 * quad + k */
} wedge;

static int cmp_wedge(const void *x, const void *y) {
    const wedge *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->corner < b->corner ? -1 : (a->corner > b->corner);
}

/* atan2 of the four axis directions (+x, +y, -x, -y): what it returns for
** any length along them (C Annex F), so a rectangle's corner needs none. */
typedef struct axis_angles {
    double a[4];
} axis_angles;

static axis_angles make_axis_angles(void) {
    axis_angles t = {{atan2(0.0, 1.0), atan2(1.0, 0.0), atan2(0.0, -1.0), atan2(-1.0, 0.0)}};
    return t;
}

static wedge corner_wedge(const qn_mesh *m, uint32_t c, const axis_angles *ax) {
    dv2 v = dv(corner(m, c)), n = dv(corner_next(m, c));
    dv2 p = dv(corner(m, (c & ~3u) | ((c + 3) & 3u)));
    double s, e;
    if (m->rects || qn__axis_rect(&m->corners[c & ~3u])) {
        /* corner k leaves along axis k (+x, +y, -x, -y), comes from axis k + 1 */
        s = ax->a[c & 3u];
        e = ax->a[(c + 1) & 3u];
    } else {
        s = atan2(n.y - v.y, n.x - v.x);
        e = atan2(p.y - v.y, p.x - v.x);
    }
    double w = e - s;
    while (w <= 0) w += 2 * PI;
    while (w > 2 * PI) w -= 2 * PI;
    wedge out = {s < 0 ? s + 2 * PI : s, w, c};
    return out;
}

/* Shortest edge at corner c, for the angular tolerance. */
static double corner_edge_min(const qn_mesh *m, uint32_t c) {
    qn_vec2 p = corner(m, (c & ~3u) | ((c + 3) & 3u)), v = corner(m, c);
    return dmin(dlen(v, corner_next(m, c)), dlen(p, v));
}

/* Convex quads with a common corner point are disjoint exactly when their
** wedges there are: sorted by start, each ends before the next begins. */
static qn_status check_fan(qn__builder *bd, wedge *w, uint32_t k) {
    const qn_mesh *m = bd->m;
    qsort(w, k, sizeof(wedge), cmp_wedge);
    for (uint32_t i = 0; i < k; i++) {
        const wedge *a = &w[i], *b = &w[(i + 1) % k];
        double gap = b->start - a->start;
        if (i + 1 == k) gap += 2 * PI;
        uint32_t qa = a->corner >> 2, qb = b->corner >> 2;
        double len = dmin(corner_edge_min(m, a->corner), corner_edge_min(m, b->corner));
        double tol = 4.0 * ((double)quad_tol(bd, qa) + (double)quad_tol(bd, qb)) / len;
        if (gap < a->width - tol) return overlap_error(bd, qa, qb);
    }
    return QN_OK;
}

/* In a mesh of axis-aligned rectangles, corner k of a rectangle fills one
** quadrant at its point (k = 0, its lower left corner: the quadrant up and
** right; and so on round), and the rectangle lies wholly in it. Two
** rectangles sharing a corner point therefore overlap exactly when they
** fill the same quadrant there: when their corners at that point have the
** same k. Per k, the corners' points sorted (radix, a digit a pass on the
** coordinates' bits, -0 taken as +0) show any repeat. 1: no repeat (the
** fan check would find nothing); 0: a repeat (the fan check then finds and
** names the pair as it always has); -1: out of memory. */
static int rect_fans_clear(qn_mesh *m) {
    uint32_t n = m->quad_count;
    uint64_t *a = qn__alloc(&m->alloc, ((size_t)n + 1) * sizeof(uint64_t));
    uint64_t *b = qn__alloc(&m->alloc, ((size_t)n + 1) * sizeof(uint64_t));
    uint32_t *count = qn__alloc(&m->alloc, 65537 * sizeof(uint32_t));
    int clear = a && b && count ? 1 : -1;
    for (int k = 0; k < 4 && clear == 1; k++) {
        for (uint32_t q = 0; q < n; q++) {
            qn_vec2 p = corner(m, 4 * (size_t)q + (size_t)k);
            a[q] = (uint64_t)fbits(p.x) << 32 | fbits(p.y);
        }
        uint64_t *r = a, *t = b;
        int bits = radix_bits(n);
        uint32_t nd = 1u << bits, mask = nd - 1u;
        for (int shift = 0; shift < 64; shift += bits) {
            memset(count, 0, (nd + 1) * sizeof *count);
            for (uint32_t i = 0; i < n; i++)
                count[((r[i] >> shift) & mask) + 1]++;
            bool one = false;
            for (uint32_t d = 1; d <= nd && !one; d++)
                one = count[d] == n;
            if (one) continue; /* the same digit everywhere */
            for (uint32_t d = 0; d < nd; d++)
                count[d + 1] += count[d];
            for (uint32_t i = 0; i < n; i++)
                t[count[(r[i] >> shift) & mask]++] = r[i];
            uint64_t *x = r;
            r = t;
            t = x;
        }
        for (uint32_t i = 1; i < n && clear == 1; i++)
            if (r[i] == r[i - 1]) clear = 0;
    }
    qn__free(&m->alloc, a, ((size_t)n + 1) * sizeof(uint64_t));
    qn__free(&m->alloc, b, ((size_t)n + 1) * sizeof(uint64_t));
    qn__free(&m->alloc, count, 65537 * sizeof(uint32_t));
    return clear;
}

/* Groups the corners by exact point (a hash chain through `next`) and checks
** the wedges of every point shared by two or more quads. A mesh of
** rectangles is cleared first by rect_fans_clear when it can be. */
static qn_status check_fans(qn__builder *bd) {
    qn_mesh *m = bd->m;
    if (all_rects(m)) {
        int clear = rect_fans_clear(m);
        if (clear < 0) return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (corners)");
        if (clear) return QN_OK;
    }
    size_t nc = 4 * (size_t)m->quad_count, size = 16, wcap = 64;
    while (size < 2 * nc) size *= 2;
    uint32_t *table = qn__alloc(&m->alloc, size * sizeof(uint32_t));
    uint32_t *next = qn__alloc(&m->alloc, nc * sizeof(uint32_t));
    wedge *w = qn__alloc(&m->alloc, wcap * sizeof(wedge));
    axis_angles ax = make_axis_angles();
    qn_status st = QN_OK;
    if (!table || !next || !w) st = qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (corners)");
    if (table) memset(table, 0xFF, size * sizeof(uint32_t));
    for (size_t c = 0; st == QN_OK && c < nc; c++) {
        if (c + QN__FETCH_AHEAD < nc) {
            qn_vec2 f = corner(m, c + QN__FETCH_AHEAD);
            QN__PREFETCH(&table[hash_edge(f, f) & (size - 1)]);
        }
        qn_vec2 p = corner(m, c);
        size_t i = hash_edge(p, p) & (size - 1);
        while (table[i] != EMPTY && !same_point(corner(m, table[i]), p))
            i = (i + 1) & (size - 1);
        next[c] = table[i]; /* the chain of this point, newest first */
        table[i] = (uint32_t)c;
    }
    for (size_t i = 0; st == QN_OK && i < size; i++) {
        if (table[i] == EMPTY || next[table[i]] == EMPTY) continue;
        uint32_t k = 0;
        for (uint32_t c = table[i]; c != EMPTY; c = next[c]) {
            if (k == wcap) {
                wedge *nw = qn__realloc(&m->alloc, w, wcap * sizeof(wedge), 2 * wcap * sizeof(wedge));
                if (!nw) {
                    st = qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (corners)");
                    break;
                }
                w = nw;
                wcap *= 2;
            }
            w[k++] = corner_wedge(m, c, &ax);
        }
        if (st == QN_OK) st = check_fan(bd, w, k);
    }
    qn__free(&m->alloc, table, size * sizeof(uint32_t));
    qn__free(&m->alloc, next, nc * sizeof(uint32_t));
    qn__free(&m->alloc, w, wcap * sizeof(wedge));
    return st;
}

/* ---- pairs sharing a bucket ------------------------------------------------ */

static bool has_corner_at(const qn_mesh *m, uint32_t q, qn_vec2 p);

/* The point most quads of a bucket have a corner at (the hub of a fan), among
** the corners of its first few quads: pairs of quads that both have a corner
** there were checked by the fans. A hub that none of them has is missed,
** which only costs separating-axis tests. */
static bool bucket_hub(const qn_mesh *m, const uint32_t *list, uint32_t k, qn_vec2 *hub) {
    uint32_t best = 1;
    for (uint32_t i = 0; i < 3 && i < k; i++)
        for (int c = 0; c < 4; c++) {
            qn_vec2 p = corner(m, 4 * (size_t)list[i] + (size_t)c);
            uint32_t n = 0;
            for (uint32_t j = 0; j < k; j++) n += has_corner_at(m, list[j], p);
            if (n > best) best = n, *hub = p;
        }
    return best >= 2;
}

static bool has_corner_at(const qn_mesh *m, uint32_t q, qn_vec2 p) {
    for (int c = 0; c < 4; c++)
        if (same_point(corner(m, 4 * (size_t)q + (size_t)c), p)) return true;
    return false;
}

static qn_status check_bucket(qn__builder *bd, const uint32_t *list, uint32_t k,
                              uint8_t *at_hub) {
    const qn_mesh *m = bd->m;
    qn_vec2 hub = {0, 0};
    bool fan = k > 32 && bucket_hub(m, list, k, &hub);
    for (uint32_t i = 0; i < k; i++) at_hub[i] = fan && has_corner_at(m, list[i], hub);
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t j = i + 1; j < k; j++) {
            if (at_hub[i] && at_hub[j]) continue;
            if (quads_overlap(bd, list[i], list[j])) return overlap_error(bd, list[i], list[j]);
        }
    return QN_OK;
}

/* Every pair of quads meeting a bucket, tested in each bucket they share
** (so sum over buckets of k^2 tests), except pairs around a fan's hub. */
static qn_status check_overlaps(qn__builder *bd) {
    qn_mesh *m = bd->m;
    size_t cells = (size_t)m->grid_w * m->grid_h;
    uint32_t kmax = 0;
    for (size_t c = 0; c < cells; c++) {
        uint32_t k = m->cell_start[c + 1] - m->cell_start[c];
        if (k > kmax) kmax = k;
    }
    uint8_t *at_hub = qn__alloc(&m->alloc, kmax);
    qn_status st = QN_OK;
    if (!at_hub) st = qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (overlap check)");
    for (size_t c = 0; st == QN_OK && c < cells; c++)
        st = check_bucket(bd, m->cell_list + m->cell_start[c], m->cell_start[c + 1] - m->cell_start[c],
                          at_hub);
    qn__free(&m->alloc, at_hub, kmax);
    if (st == QN_OK) st = check_fans(bd);
    return st;
}

/* ---- entry ------------------------------------------------------------- */

qn_status qn__mesh_pairs(qn__builder *bd) {
    qn_mesh *m = bd->m;
    size_t ne = 4 * (size_t)m->quad_count;
    uint8_t *done = qn__calloc(&m->alloc, ne, 1);
    if (!done) return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (edges)");
    qn_status st = check_overlaps(bd);
    if (st == QN_OK) st = match_edges(bd, done);
    qn__free(&m->alloc, done, ne);
    if (st == QN_OK) st = best_per_pair(bd);
    return st;
}
