/*
** fuzz_checks.h: invariants of built objects that the fuzz targets check
** after every successful construction: mesh queries against brute force,
** the shape of a field (exits lead downhill to a goal, reachability matches
** the islands), the sampler's outputs, and grid fields (Bellman conditions).
** Each check is linear or close to it in the object's size, so a target
** stays fast enough to run thousands of inputs a second on small inputs.
*/
#ifndef QN_FUZZ_CHECKS_H
#define QN_FUZZ_CHECKS_H

#include "fuzz_common.h"

#define FZ_MAX_POINTS 64

/* Test points for a mesh: random points over the bounds (grown by a tenth),
** corners and centres of quads, portal ends and mid points, and points a
** hair off them, where the tolerances and tie rules matter. */
static inline uint32_t fz_points(const qn_mesh *m, uint64_t seed, qn_vec2 *out, uint32_t cap) {
    qn_rect b = qn_mesh_bounds(m);
    float gx = 0.1f * (b.max.x - b.min.x) + 1.0f, gy = 0.1f * (b.max.y - b.min.y) + 1.0f;
    uint32_t n = 0;
    for (; n < cap / 4; n++)
        out[n] = qn__v2(fz_rand_in(&seed, b.min.x - gx, b.max.x + gx),
                        fz_rand_in(&seed, b.min.y - gy, b.max.y + gy));
    while (n < cap) {
        uint32_t r = fz_rand(&seed);
        qn_vec2 p;
        if (r % 2 == 0 || m->portal_count == 0) {
            qn_vec2 kc[4];
            const qn_vec2 *k = qn__corners(m, fz_rand(&seed) % m->quad_count, kc);
            uint32_t c = fz_rand(&seed) % 5;
            p = c < 4 ? k[c] : qn__scale(qn__add(qn__add(k[0], k[1]), qn__add(k[2], k[3])), 0.25f);
        } else {
            const qn__portal pv = qn__portal_at(m, fz_rand(&seed) % m->portal_count), *pt = &pv;
            uint32_t c = fz_rand(&seed) % 3;
            p = c == 0 ? pt->p0 : (c == 1 ? pt->p1 : qn__portal_mid(pt));
        }
        if (r % 3 == 0) { /* nudge by a few tolerances in a random direction */
            float d = m->eps * (float)(1 + fz_rand(&seed) % 8);
            p.x += (fz_rand(&seed) % 2 ? d : -d);
            p.y += (fz_rand(&seed) % 2 ? d : -d);
        }
        out[n++] = p;
    }
    return n;
}

/* Distance from p to quad q (0 inside). */
static inline float fz_quad_distance(const qn_mesh *m, uint32_t q, qn_vec2 p) {
    if (qn__quad_contains(m, q, p)) return 0.0f;
    qn_vec2 kc[4];
    const qn_vec2 *k = qn__corners(m, q, kc);
    float best = INFINITY;
    for (int i = 0; i < 4; i++) {
        float d = qn__point_segment_dist(p, k[i], k[(i + 1) & 3]);
        if (d < best) best = d;
    }
    return best;
}

static inline void fz_check_locate(const qn_mesh *m, qn_vec2 p, uint32_t hint) {
    uint32_t q = 0;
    qn_status st = qn_mesh_locate(m, p, QN_NONE, &q);
    uint32_t want = fz_brute_locate(m, p);
    FZ_CHECK(q == want, "locate (%.9g, %.9g): quad %u, brute force %u", (double)p.x, (double)p.y, q,
             want);
    FZ_CHECK(st == (want == QN_NONE ? QN_E_OUTSIDE : QN_OK), "locate status %s",
             qn_status_name(st));
    st = qn_mesh_locate(m, p, hint, &q);
    if (hint < m->quad_count && qn__quad_contains(m, hint, p)) want = hint;
    FZ_CHECK(q == want, "locate with hint %u: quad %u, expected %u", hint, q, want);
}

static inline void fz_check_nearest(const qn_mesh *m, qn_vec2 p, bool skip_blocked) {
    float best = INFINITY;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        if (skip_blocked && m->blocked[q]) continue;
        float d = fz_quad_distance(m, q, p);
        if (d < best) best = d;
    }
    uint32_t q = 0;
    qn_vec2 c = {NAN, NAN};
    qn_status st = qn_mesh_nearest(m, p, skip_blocked, &q, &c);
    if (best == INFINITY) {
        FZ_CHECK(st == QN_E_NOT_FOUND && q == QN_NONE, "nearest: %s, quad %u, none qualifies",
                 qn_status_name(st), q);
        return;
    }
    FZ_CHECK(st == QN_OK && q < m->quad_count, "nearest: %s quad %u", qn_status_name(st), q);
    FZ_CHECK(!skip_blocked || !m->blocked[q], "nearest returned blocked quad %u", q);
    FZ_CHECK(qn__finite2(c), "nearest point not finite");
    float got = qn__len(qn__sub(c, p));
    float scale = fabsf(p.x) + fabsf(p.y) + 1.0f;
    FZ_CHECK(got <= best + 4.0f * m->eps + 1e-5f * scale,
             "nearest (%.9g, %.9g): quad %u at %g, brute force %g", (double)p.x, (double)p.y, q,
             (double)got, (double)best);
    FZ_CHECK(fz_quad_distance(m, q, c) <= 4.0f * m->eps + 1e-6f * scale,
             "nearest point (%.9g, %.9g) is not in quad %u", (double)c.x, (double)c.y, q);
}

static inline bool fz_in_open_quad(const qn_mesh *m, qn_vec2 p) {
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (!m->blocked[q] && qn__quad_contains(m, q, p)) return true;
    return false;
}

/* Is p within d of an unblocked quad? */
static inline bool fz_near_open_quad(const qn_mesh *m, qn_vec2 p, float d) {
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (!m->blocked[q] && fz_quad_distance(m, q, p) <= d) return true;
    return false;
}

static inline void fz_check_segment(const qn_mesh *m, qn_vec2 a, qn_vec2 b, uint32_t hint) {
    qn_vec2 hit = {NAN, NAN};
    qn_status st = qn_mesh_segment_inside(m, a, b, hint, &hit);
    uint32_t qa =
        (hint < m->quad_count && qn__quad_contains(m, hint, a)) ? hint : fz_brute_locate(m, a);
    FZ_CHECK(qn__finite2(hit), "segment hit not finite");
    if (qa == QN_NONE) {
        FZ_CHECK(st == QN_E_OUTSIDE, "segment from outside: %s", qn_status_name(st));
        return;
    }
    if (m->blocked[qa]) {
        FZ_CHECK(st == QN_E_BLOCKED, "segment from blocked quad: %s", qn_status_name(st));
        return;
    }
    FZ_CHECK(st == QN_OK || st == QN_E_BLOCKED, "segment: %s", qn_status_name(st));
    /* A segment reported inside ends inside an open quad. */
    if (st == QN_OK)
        FZ_CHECK(fz_in_open_quad(m, b),
                 "segment from (%.9g, %.9g) in quad %u inside, but its end (%.9g, %.9g) is not",
                 (double)a.x, (double)a.y, qa, (double)b.x, (double)b.y);
    st = qn_mesh_segment_inside(m, a, a, hint, NULL);
    FZ_CHECK(st == QN_OK, "zero-length segment in an open quad: %s", qn_status_name(st));
}

/* Point location, nearest quad and segments over a set of points. */
static inline void fz_check_mesh_queries(const qn_mesh *m, const qn_vec2 *pts, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        fz_check_locate(m, pts[i], i % (m->quad_count + 1));
        fz_check_nearest(m, pts[i], i % 2 == 1);
        fz_check_segment(m, pts[i], pts[(i * 7 + 1) % n], QN_NONE);
    }
    uint32_t q;
    FZ_CHECK(qn_mesh_locate(m, qn__v2(NAN, 0), QN_NONE, &q) == QN_E_INVALID_ARG,
             "locate NaN accepted");
}

/* ---- fields ------------------------------------------------------------ */

static inline bool fz_goal_quad(const qn_field *f, uint32_t q) {
    if (!f->spm) return f->slots[q].exit != QN_NONE && (f->slots[q].exit & QN__GOAL_BIT) != 0;
    for (uint32_t i = 0; i < f->goal_count; i++) /* an exact field's goal quads it reaches */
        if (f->goals[i].quad == q) return qn__field_reaches(f, q);
    return false;
}

/* Are f's quad exits there? An exact field makes them on first use
** (qn_field_exits), which fails only when the allocator refuses: then
** the checks of exits are skipped. */
static inline bool fz_exits(const qn_field *f) {
    qn_status st = qn_field_exits(f, NULL);
    FZ_CHECK(st == QN_OK || st == QN_E_NOMEM, "qn_field_exits: %s", qn_status_name(st));
    return st == QN_OK;
}

/* One quad's slot: blocked quads and unreachable ones have no exit and an
** infinite cost, goal quads cost 0, others leave by an open portal of theirs
** into a quad that costs no more (exits: checked only when they are there). */
static inline void fz_check_slot(const qn_field *f, uint32_t q, bool exits) {
    const qn_mesh *m = f->mesh;
    float c = qn_field_quad_cost(f, q);
    uint32_t e = exits ? qn_field_quad_exit(f, q) : QN_NONE;
    FZ_CHECK(!isnan(c) && c >= 0.0f, "quad %u cost %g", q, (double)c);
    if (m->blocked[q]) FZ_CHECK(!isfinite(c) && e == QN_NONE, "blocked quad %u has a way", q);
    if (!exits) {
        if (fz_goal_quad(f, q))
            FZ_CHECK(c == 0.0f && !m->blocked[q], "goal quad %u: cost %g", q, (double)c);
        return;
    }
    if (fz_goal_quad(f, q)) {
        FZ_CHECK(c == 0.0f && e == QN_NONE && !m->blocked[q], "goal quad %u: cost %g", q,
                 (double)c);
        return;
    }
    FZ_CHECK((e == QN_NONE) == !isfinite(c), "quad %u: exit %u with cost %g", q, e, (double)c);
    if (e == QN_NONE) return;
    FZ_CHECK(e < m->portal_count, "quad %u exit %u out of range", q, e);
    const qn__pq *pt = &m->pq[e];
    FZ_CHECK(pt->q[0] == q || pt->q[1] == q, "quad %u exit %u is not its portal", q, e);
    FZ_CHECK(qn__portal_open(m, e, f->radius), "quad %u leaves by closed portal %u", q, e);
    uint32_t nx = qn_field_quad_next(f, q);
    FZ_CHECK(nx == qn__portal_other(m, e, q), "quad %u next %u", q, nx);
    /* But for float rounding (tests/test_exact.c's check_exits says how much). */
    float up = f->spm ? c * 2e-6f + 0.125f * m->eps : 0.0f;
    FZ_CHECK(qn_field_quad_cost(f, nx) <= c + up, "quad %u (cost %.9g) leads uphill to %u (%.9g)",
             q, (double)c, nx, (double)qn_field_quad_cost(f, nx));
}

/* Every exit chain ends in a goal quad (no cycles), linear time. */
static inline void fz_check_chains(const qn_field *f) {
    const qn_mesh *m = f->mesh;
    uint32_t n = m->quad_count;
    uint32_t *mark = calloc(n, sizeof *mark); /* 0 unknown, QN_NONE done, else walk id */
    FZ_CHECK(mark != NULL, "out of memory in the check");
    for (uint32_t s = 0; s < n; s++) {
        if (qn_field_quad_exit(f, s) == QN_NONE) continue;
        uint32_t q = s, steps = 0;
        while (mark[q] == 0 && qn_field_quad_exit(f, q) != QN_NONE) {
            mark[q] = s + 1;
            q = qn_field_quad_next(f, q);
            FZ_CHECK(++steps <= n, "exit chain from %u does not end", s);
        }
        FZ_CHECK(mark[q] != s + 1, "exit chain from quad %u cycles through %u", s, q);
        FZ_CHECK(mark[q] == QN_NONE || fz_goal_quad(f, q), "chain from %u ends at quad %u", s, q);
        for (uint32_t r = s; mark[r] == s + 1; r = qn_field_quad_next(f, r))
            mark[r] = QN_NONE;
    }
    free(mark);
}

/* Reachable quads lie in the island of a goal quad; with radius 0 (every
** portal between open quads is open) every quad of such an island is
** reachable. Only for a field that is current. */
static inline void fz_check_islands(const qn_field *f) {
    const qn_mesh *m = f->mesh;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        uint32_t isl = qn_mesh_island(m, q);
        bool goal_island = false;
        for (uint32_t g = 0; g < f->goal_count && !goal_island; g++)
            goal_island =
                !m->blocked[f->goals[g].quad] && qn_mesh_island(m, f->goals[g].quad) == isl;
        bool reach = isfinite(qn_field_quad_cost(f, q));
        FZ_CHECK(!m->blocked[q] || isl == QN_NONE, "blocked quad %u in island %u", q, isl);
        if (reach) FZ_CHECK(goal_island, "quad %u reachable outside the goals' islands", q);
        if (f->radius == 0.0f && goal_island && !m->blocked[q])
            FZ_CHECK(reach, "quad %u in a goal's island is unreachable at radius 0", q);
    }
}

static inline void fz_check_field_shape(const qn_field *f) {
    FZ_CHECK(qn_field_is_current(f), "field is not current");
    bool exits = fz_exits(f);
    for (uint32_t q = 0; q < f->mesh->quad_count; q++)
        fz_check_slot(f, q, exits);
    if (exits) fz_check_chains(f);
    fz_check_islands(f);
}

/* One sample: the status agrees with where p is, the direction is a unit
** vector or zero, the quad reported contains p. */
static inline void fz_check_sample(const qn_field *f, qn_vec2 p, qn_status st, uint32_t q,
                                   qn_vec2 dir) {
    const qn_mesh *m = f->mesh;
    fz_check_dir(st, dir);
    uint32_t where = fz_brute_locate(m, p);
    if (where == QN_NONE) {
        FZ_CHECK(st == QN_E_OUTSIDE && q == QN_NONE, "outside: %s quad %u", qn_status_name(st), q);
        return;
    }
    FZ_CHECK(q < m->quad_count && qn__quad_contains(m, q, p),
             "sample at (%.9g, %.9g) reports quad %u", (double)p.x, (double)p.y, q);
    switch (st) {
    case QN_E_BLOCKED:
        FZ_CHECK(m->blocked[q], "blocked status in open quad %u", q);
        break;
    case QN_E_UNREACHABLE:
        FZ_CHECK(!isfinite(qn_field_quad_cost(f, q)), "unreachable in quad %u", q);
        break;
    case QN_OK:
    case QN_AT_GOAL:
        FZ_CHECK(!m->blocked[q] && isfinite(qn_field_quad_cost(f, q)), "%s in quad %u",
                 qn_status_name(st), q);
        break;
    default:
        FZ_CHECK(false, "sample status %s inside the mesh", qn_status_name(st));
    }
}

/* Samples (one by one and as a batch, which must agree bit for bit), the
** cost at each point, the way out, and the arrival region's radius. */
static inline void fz_check_sampling(const qn_field *f, const qn_vec2 *pts, uint32_t n) {
    const qn_mesh *m = f->mesh;
    qn_vec2 dirs[FZ_MAX_POINTS];
    uint8_t sts[FZ_MAX_POINTS];
    uint32_t quads[FZ_MAX_POINTS];
    FZ_CHECK(n <= FZ_MAX_POINTS, "too many points");
    for (uint32_t i = 0; i < n; i++)
        quads[i] = QN_NONE;
    FZ_CHECK(qn_field_sample_batch(f, pts, dirs, sts, quads, n) == QN_OK, "batch failed");
    bool any_reachable = false, exits = fz_exits(f);
    for (uint32_t q = 0; q < m->quad_count && !any_reachable; q++)
        any_reachable = !m->blocked[q] && (exits ? qn_field_quad_exit(f, q) != QN_NONE
                                                 : isfinite(qn_field_quad_cost(f, q)));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t q = QN_NONE;
        qn_vec2 d;
        qn_status st = qn_field_sample(f, pts[i], &q, &d);
        FZ_CHECK(st == sts[i] && q == quads[i] && memcmp(&d, &dirs[i], sizeof d) == 0,
                 "sample %u: %s quad %u, batch %s quad %u", i, qn_status_name(st), q,
                 qn_status_name((qn_status)sts[i]), quads[i]);
        fz_check_sample(f, pts[i], st, q, d);
        float c = qn_field_cost_at(f, pts[i], QN_NONE);
        uint32_t lq = fz_brute_locate(m, pts[i]);
        /* A point in a blocked quad and an open portal neighbour stands in
        ** the neighbour (the first, in the quad's portal order). */
        for (uint32_t k = lq != QN_NONE && m->blocked[lq] ? m->qp_start[lq] : 0;
             lq != QN_NONE && m->blocked[lq] && k < m->qp_start[lq + 1]; k++) {
            uint32_t r = qn__portal_other(m, m->qp_list[k], lq);
            if (!m->blocked[r] && qn__quad_contains(m, r, pts[i])) lq = r;
        }
        bool want = lq != QN_NONE && !m->blocked[lq] && isfinite(qn_field_quad_cost(f, lq));
        /* An open quad the field does not reach gives way to another open
        ** one holding the point that it reaches (qn__field_quad_of). */
        for (uint32_t k = 0; lq != QN_NONE && !m->blocked[lq] && !want && k < m->quad_count; k++)
            want = !m->blocked[k] && qn__quad_contains(m, k, pts[i]) &&
                   isfinite(qn_field_quad_cost(f, k));
        FZ_CHECK(!isnan(c) && c >= 0.0f && (isfinite(c) == want), "cost_at %g in quad %u",
                 (double)c, lq);
        qn_vec2 out = {NAN, NAN};
        st = qn_field_way_out(f, pts[i], &q, &out);
        if (st == QN_OK) {
            FZ_CHECK(q < m->quad_count && !m->blocked[q] && isfinite(qn_field_quad_cost(f, q)),
                     "way out into quad %u", q);
            FZ_CHECK(qn__finite2(out) && qn__quad_contains(m, q, out),
                     "way out point (%.9g, %.9g) not in quad %u", (double)out.x, (double)out.y, q);
        } else {
            FZ_CHECK(st == QN_E_NOT_FOUND && q == QN_NONE && !any_reachable, "way out: %s, quad %u",
                     qn_status_name(st), q);
        }
    }
    /* The arrival region's radius for an area: finite, never negative (0
    ** when the field's allocator, failing on purpose here, runs out). */
    float R = -1.0f;
    qn_status st = qn_field_region_radius(f, 1.0f + (float)n, &R);
    FZ_CHECK(st == QN_E_NOMEM ? R == 0.0f : (st == QN_OK && isfinite(R) && R >= 0.0f),
             "region radius: %s, %g", qn_status_name(st), (double)R);
}

/* A path between two points: well-formed, or a failure that fits. */
static inline void fz_check_path_query(qn_pathfinder *pf, float pf_eps, qn_vec2 from, qn_vec2 to,
                                       float radius) {
    qn_vec2 pts[32];
    uint32_t count = 0;
    float cost = -1.0f;
    qn_status st = qn_path_find(pf, from, to, radius, pts, 32, &count, &cost);
    if (st == QN_OK || st == QN_E_BUFFER_TOO_SMALL) {
        /* Points closer than the tolerance are merged: from == to is one point. */
        float direct = qn__len(qn__sub(to, from));
        uint32_t least = direct > 8.0f * pf_eps ? 2 : 1;
        FZ_CHECK(count >= least && isfinite(cost) && cost >= 0.0f,
                 "path over %g: %u points, cost %g", (double)direct, count, (double)cost);
        FZ_CHECK(st == QN_OK ? count <= 32 : count > 32, "%s with %u points", qn_status_name(st),
                 count);
        FZ_CHECK(pts[0].x == from.x && pts[0].y == from.y, "path does not start at from");
        FZ_CHECK(cost >= direct * (1.0f - 1e-4f) - 1e-3f, "path cost %g below distance %g",
                 (double)cost, (double)direct);
        for (uint32_t i = 0; i < count && i < 32; i++)
            FZ_CHECK(qn__finite2(pts[i]), "waypoint %u not finite", i);
        if (st == QN_OK)
            FZ_CHECK(qn__len(qn__sub(pts[count - 1], to)) <= 8.0f * pf_eps,
                     "path ends at (%g, %g), not at to", (double)pts[count - 1].x,
                     (double)pts[count - 1].y);
    } else {
        FZ_CHECK(st == QN_E_OUTSIDE || st == QN_E_BLOCKED || st == QN_E_UNREACHABLE ||
                     st == QN_E_INVALID_ARG,
                 "path: %s", qn_status_name(st));
        FZ_CHECK(count == 0 && cost == 0.0f, "failed path: %u points, cost %g", count,
                 (double)cost);
    }
}

static inline void fz_check_path(const qn_mesh *m, const qn_allocator *a, qn_vec2 from, qn_vec2 to,
                                 float radius) {
    qn_pathfinder *pf = (qn_pathfinder *)1;
    qn_status st = qn_pathfinder_create(m, a, &pf, NULL);
    FZ_CHECK((st == QN_OK) == (pf != NULL), "pathfinder %p with %s", (void *)pf,
             qn_status_name(st));
    if (st != QN_OK) return;
    fz_check_path_query(pf, m->eps, from, to, radius);
    qn_pathfinder_destroy(pf);
}

/* ---- grid fields ---------------------------------------------------------- */

static inline bool fz_cell_open(const qn_grid *g, int64_t x, int64_t y) {
    return x >= 0 && y >= 0 && x < (int64_t)qn_grid_width(g) && y < (int64_t)qn_grid_height(g) &&
           qn_grid_cost(g, (uint32_t)x, (uint32_t)y) != QN_CELL_WALL;
}

/* Bellman conditions of an exact integration field: no legal move from a
** cell leads to a neighbour whose value plus the move's cost is below the
** cell's own (which also means no reachable cell has an unreachable
** neighbour), and the 8-direction flow points at a cheaper neighbour. */
static inline void fz_check_grid_field(const qn_grid_field *f, bool eight) {
    const qn_grid *g = qn_grid_field_grid(f);
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    double cs = (double)qn_grid_cell_size(g);
    static const int dx[8] = {1, 1, 0, -1, -1, -1, 0, 1}, dy[8] = {0, 1, 1, 1, 0, -1, -1, -1};
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            double c = qn_grid_field_cost(f, x, y);
            uint8_t dir = qn_grid_field_dir(f, x, y);
            qn_vec2 v = qn_grid_field_vec(f, x, y);
            FZ_CHECK(!isnan(c) && c >= 0.0, "cell (%u, %u) cost %g", x, y, c);
            FZ_CHECK(isfinite(v.x) && isfinite(v.y), "cell (%u, %u) vector", x, y);
            if (!fz_cell_open(g, x, y)) {
                FZ_CHECK(!isfinite(c) && dir == QN_DIR_NONE, "wall (%u, %u) cost %g", x, y, c);
                continue;
            }
            if (!isfinite(c) || c == 0.0) {
                FZ_CHECK(dir == QN_DIR_NONE, "cell (%u, %u) cost %g has dir %u", x, y, c, dir);
                if (!isfinite(c)) continue;
            } else {
                FZ_CHECK(dir < 8, "reachable cell (%u, %u) has no direction", x, y);
                double nc = qn_grid_field_cost(f, (uint32_t)((int)x + dx[dir]),
                                               (uint32_t)((int)y + dy[dir]));
                FZ_CHECK(nc < c, "cell (%u, %u) (%.17g) flows to dir %u at %.17g", x, y, c, dir,
                         nc);
            }
            for (int k = 0; k < 8; k++) {
                int64_t nx = (int64_t)x + dx[k], ny = (int64_t)y + dy[k];
                bool diag = (k % 2) == 1;
                if (diag && !eight) continue;
                if (!fz_cell_open(g, nx, ny)) continue;
                if (diag && !(fz_cell_open(g, nx, y) && fz_cell_open(g, x, ny))) continue;
                /* A move from the neighbour into this cell costs this cell's byte. */
                double step = (diag ? sqrt(2.0) : 1.0) * cs * qn_grid_cost(g, x, y);
                double nc = qn_grid_field_cost(f, (uint32_t)nx, (uint32_t)ny);
                FZ_CHECK(nc <= c + step + 1e-9 * (c + step),
                         "cell (%lld, %lld) costs %.17g, more than (%u, %u) %.17g + %.17g",
                         (long long)nx, (long long)ny, nc, x, y, c, step);
            }
        }
}

/* Centre of cell (x, y), computed as the library computes it. */
static inline qn_vec2 fz_cell_centre(const qn_grid *g, uint32_t x, uint32_t y) {
    qn_vec2 o = qn_grid_origin(g);
    double cs = (double)qn_grid_cell_size(g);
    return qn__v2((float)((double)o.x + ((double)x + 0.5) * cs),
                  (float)((double)o.y + ((double)y + 0.5) * cs));
}

/* qn_mesh_from_grid: each passable cell centre lies in a quad of the cell's
** cost, each wall centre in none; the quads are rectangles on the grid's
** lines covering exactly the passable area. */
static inline void fz_check_grid_mesh(const qn_grid *g, const qn_mesh *m) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    double passable = 0.0, area = 0.0, cs = (double)qn_grid_cell_size(g);
    qn_vec2 o = qn_grid_origin(g);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint8_t c = qn_grid_cost(g, x, y);
            uint32_t q;
            qn_status st = qn_mesh_locate(m, fz_cell_centre(g, x, y), QN_NONE, &q);
            if (c == QN_CELL_WALL) {
                FZ_CHECK(st == QN_E_OUTSIDE, "wall cell (%u, %u) in quad %u", x, y, q);
                continue;
            }
            passable += 1.0;
            FZ_CHECK(st == QN_OK, "passable cell (%u, %u) in no quad", x, y);
            FZ_CHECK(qn_mesh_quad_cost(m, q) == (float)c && !qn_mesh_quad_blocked(m, q),
                     "cell (%u, %u) cost %u in quad %u of cost %g", x, y, c, q,
                     (double)qn_mesh_quad_cost(m, q));
        }
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        qn_vec2 k[4];
        FZ_CHECK(qn_mesh_quad_corners(m, q, k) == QN_OK, "corners of %u", q);
        for (int i = 0; i < 4; i++) {
            double gx = ((double)k[i].x - (double)o.x) / cs,
                   gy = ((double)k[i].y - (double)o.y) / cs;
            FZ_CHECK(fabs(gx - round(gx)) < 1e-3 && fabs(gy - round(gy)) < 1e-3 && gx > -1e-3 &&
                         gy > -1e-3 && gx < w + 1e-3 && gy < h + 1e-3,
                     "quad %u corner (%g, %g) off the grid lines", q, (double)k[i].x,
                     (double)k[i].y);
        }
        area += (double)qn_mesh_quad_area(m, q);
    }
    FZ_CHECK(fabs(area - passable * cs * cs) <= 1e-4 * passable * cs * cs,
             "quads cover %g, passable cells %g", area, passable * cs * cs);
    FZ_CHECK(qn_mesh_quad_count(m) <= passable, "%u quads for %g cells", qn_mesh_quad_count(m),
             passable);
}

/* qn_grid_from_mesh: an open cell's centre is in an unblocked quad of that
** cost (rounded to 1..254), a wall's in none. */
static inline void fz_check_raster(const qn_mesh *m, const qn_grid *g) {
    for (uint32_t y = 0; y < qn_grid_height(g); y++)
        for (uint32_t x = 0; x < qn_grid_width(g); x++) {
            qn_vec2 c = fz_cell_centre(g, x, y);
            uint8_t byte = qn_grid_cost(g, x, y);
            bool any = false, match = false;
            for (uint32_t q = 0; q < m->quad_count; q++) {
                if (m->blocked[q] || !qn__quad_contains(m, q, c)) continue;
                float r = roundf(qn__quad_cost(m, q));
                any = true;
                match = match || byte == (r < 1.0f ? 1 : (r > 254.0f ? 254 : (uint8_t)r));
            }
            FZ_CHECK(any == (byte != QN_CELL_WALL), "cell (%u, %u) cost %u, centre %s", x, y, byte,
                     any ? "in an open quad" : "in none");
            FZ_CHECK(!any || match, "cell (%u, %u) cost %u, no quad there has it", x, y, byte);
        }
}

#endif
