/* test_path.c: point-to-point paths and line of sight.
**
** Costs: the A* cost from a point p is checked against a brute-force
** Bellman-Ford over the documented portal graph: min over the open portals
** P of p's quad of w*|p - mid P| + g(P) (w*|p - goal| in the goal quad).
** Against an instance built with midpoint_costs (the same graph model): for
** every quad Q with an exit portal E, the A* cost from mid(E) equals
** qn_field_quad_cost(Q) exactly in the model (E is a portal of the quad
** mid(E) is located in, at distance 0, and no other portal of that quad
** does better since g is a shortest-path cost). The one exception, skipped:
** when mid(E) is located in the goal quad, where a point's cost is its
** straight distance to the goal by definition.
**
** Geometry: every funnel segment stays inside (qn_mesh_segment_inside and
** qn_mesh_line_of_sight at radius 0); with a radius, and start and goal
** clear of walls by it, every segment has line of sight for slightly less;
** with unit costs and radius 0 the path is never longer than the A* cost
** (the path through portal mid points is one of those the search weighs).
** On the bundled MovingAI maps (imported to quads) the radius-0 path is
** never longer than the scenario's octile optimum: the shortest any-angle
** path is at most as long. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "quadnav.h"
#include "brute.h"
#include "testmesh.h"

#define MAXPTS 4096

static double dist(qn_vec2 a, qn_vec2 b) {
    return hypot((double)a.x - (double)b.x, (double)a.y - (double)b.y);
}

#define assert_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

static qn_vec2 mid(const qn_portal *p) {
    return (qn_vec2){(p->p0.x + p->p1.x) / 2, (p->p0.y + p->p1.y) / 2};
}

static bool portal_open(const qn_mesh *m, const qn_portal *p, float radius) {
    return !qn_mesh_quad_blocked(m, p->a) && !qn_mesh_quad_blocked(m, p->b) &&
           (float)dist(p->p0, p->p1) + 1e-5f >= 2 * radius;
}

static qn_mesh *make_mesh(const tm_mesh *t) {
    qn_mesh_desc d = tm_desc(t);
    qn_mesh *m = NULL;
    qn_error e;
    if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) fail_msg("mesh: %s", e.message);
    return m;
}

/* ---- brute force: g(P) = cost from portal P to the goal ---------------- */

static void bellman_ford(const qn_mesh *m, qn_vec2 goal, float radius, double *g) {
    assert_true(bf_portal_costs(m, &goal, 1, radius, g));
}

/* Expected A* cost from p (INFINITY when unreachable). */
static double expected_cost(const qn_mesh *m, const double *g, qn_vec2 p, qn_vec2 goal,
                            float radius) {
    uint32_t q, gq;
    assert_int_equal(qn_mesh_locate(m, p, QN_NONE, &q), QN_OK);
    assert_int_equal(qn_mesh_locate(m, goal, QN_NONE, &gq), QN_OK);
    double w = (double)qn_mesh_quad_cost(m, q);
    if (q == gq) return w * dist(p, goal);
    uint32_t ids[256], n;
    assert_int_equal(qn_mesh_quad_portals(m, q, ids, 256, &n), QN_OK);
    double best = (double)INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        qn_portal pt;
        qn_mesh_portal(m, ids[i], &pt);
        if (portal_open(m, &pt, radius)) best = fmin(best, w * dist(p, mid(&pt)) + g[ids[i]]);
    }
    return best;
}

static qn_vec2 random_point_in(const tm_mesh *t, uint32_t q, uint64_t *s) {
    qn_vec2 a = t->verts[4 * q], b = t->verts[4 * q + 2];
    float u = (float)(tm_rand(s) % 1000) / 1000.0f, v = (float)(tm_rand(s) % 1000) / 1000.0f;
    return (qn_vec2){a.x + (b.x - a.x) * (0.02f + 0.96f * u), a.y + (b.y - a.y) * (0.02f + 0.96f * v)};
}

static void random_guillotine(tm_mesh *t, uint64_t *s, bool unit_costs, uint32_t block_one_in) {
    t->n = 0;
    tm_guillotine(t, s, 0, 0, 24, 18, 7, 120);
    for (uint32_t q = 0; q < t->n; q++) {
        t->costs[q] = unit_costs ? 1.0f : (float)(1 + tm_rand(s) % 5);
        t->blocked[q] = (tm_rand(s) % block_one_in) == 0;
    }
}

/* Every segment of the path stays in traversable space. */
static void check_inside(const qn_mesh *m, const qn_vec2 *pts, uint32_t n) {
    for (uint32_t i = 0; i + 1 < n; i++) {
        qn_vec2 hit;
        qn_status st = qn_mesh_segment_inside(m, pts[i], pts[i + 1], QN_NONE, &hit);
        if (st != QN_OK)
            fail_msg("segment %u (%g,%g)-(%g,%g) leaves at (%g,%g): %s", i, (double)pts[i].x,
                     (double)pts[i].y, (double)pts[i + 1].x, (double)pts[i + 1].y, (double)hit.x,
                     (double)hit.y, qn_status_name(st));
        bool vis;
        assert_int_equal(qn_mesh_line_of_sight(m, pts[i], pts[i + 1], 0, QN_NONE, &vis), QN_OK);
        assert_true(vis);
    }
}

/* ---- costs ----------------------------------------------------------------- */

static void check_against_field(const qn_mesh *m, qn_pathfinder *pf, qn_vec2 goal, float radius,
                                int *checked) {
    qn_field_opts o;
    memset(&o, 0, sizeof o);
    o.radius = radius;
    o.midpoint_costs = true; /* the graph model the A* cost follows */
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
    uint32_t gq;
    qn_mesh_locate(m, goal, QN_NONE, &gq);
    static qn_vec2 pts[MAXPTS];
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        uint32_t e = qn_field_quad_exit(f, q), at;
        if (e == QN_NONE) continue;
        qn_portal p;
        qn_mesh_portal(m, e, &p);
        qn_vec2 x = mid(&p);
        qn_mesh_locate(m, x, QN_NONE, &at);
        if (at == gq) continue;
        uint32_t n;
        float c;
        assert_int_equal(qn_path_find(pf, x, goal, radius, pts, MAXPTS, &n, &c), QN_OK);
        double want = (double)qn_field_quad_cost(f, q);
        if (fabs((double)c - want) > 1e-4 * fmax(1.0, want))
            fail_msg("quad %u: A* %g, instance %g", q, (double)c, want);
        (*checked)++;
    }
    qn_field_destroy(f);
}

static void test_cost_matches_bellman_ford(void **state) {
    (void)state;
    static tm_mesh t;
    static double g[4 * TM_MAX_RECTS];
    static qn_vec2 pts[MAXPTS];
    int ok = 0, unreachable = 0, blocked = 0, field_checked = 0;
    for (uint64_t seed = 1; seed <= 120; seed++) {
        uint64_t s = seed * 104729;
        random_guillotine(&t, &s, false, 12);
        uint32_t gq = tm_rand(&s) % t.n;
        t.blocked[gq] = 0;
        qn_mesh *m = make_mesh(&t);
        qn_vec2 goal = random_point_in(&t, gq, &s);
        float radius = (seed % 4 == 0) ? 0.6f : (seed % 4 == 1 ? 0.3f : 0.0f);
        bellman_ford(m, goal, radius, g);
        qn_pathfinder *pf = NULL;
        assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
        for (int k = 0; k < 25; k++) {
            uint32_t q = tm_rand(&s) % t.n;
            qn_vec2 p = random_point_in(&t, q, &s);
            uint32_t n = 99;
            float c = -1;
            qn_status st = qn_path_find(pf, p, goal, radius, pts, MAXPTS, &n, &c);
            if (t.blocked[q]) {
                assert_int_equal(st, QN_E_BLOCKED);
                assert_int_equal(n, 0);
                blocked++;
                continue;
            }
            double want = expected_cost(m, g, p, goal, radius);
            if (!isfinite(want)) {
                assert_int_equal(st, QN_E_UNREACHABLE);
                unreachable++;
                continue;
            }
            if (st != QN_OK) fail_msg("seed %u: %s, expected cost %g", (unsigned)seed, qn_status_name(st), want);
            if (fabs((double)c - want) > 1e-4 * fmax(1.0, want))
                fail_msg("seed %u from (%g,%g): A* %g, Bellman-Ford %g", (unsigned)seed,
                         (double)p.x, (double)p.y, (double)c, want);
            assert_true(n >= 2);
            assert_true(pts[0].x == p.x && pts[0].y == p.y);
            assert_true(pts[n - 1].x == goal.x && pts[n - 1].y == goal.y);
            check_inside(m, pts, n);
            ok++;
        }
        check_against_field(m, pf, goal, radius, &field_checked);
        qn_pathfinder_destroy(pf);
        qn_mesh_destroy(m);
    }
    assert_true(ok > 1000);
    assert_true(unreachable > 20);
    assert_true(blocked > 20);
    assert_true(field_checked > 3000);
}

/* ---- geometry ---------------------------------------------------------------- */

static bool clear_point(const qn_mesh *m, qn_vec2 p, float r) {
    bool vis = false;
    qn_mesh_line_of_sight(m, p, p, r, QN_NONE, &vis);
    return vis;
}

/* Every segment of the path pts[0..n) has line of sight for 0.98 of the
** radius r (cs names the failing case). */
static void check_clear(const qn_mesh *m, const qn_vec2 *pts, uint32_t n, float r, unsigned cs) {
    for (uint32_t i = 0; i + 1 < n; i++) {
        bool vis = false;
        qn_mesh_line_of_sight(m, pts[i], pts[i + 1], 0.98f * r, QN_NONE, &vis);
        if (!vis)
            fail_msg("case %u r %g: segment %u/%u (%g,%g)-(%g,%g) too close to a wall", cs,
                     (double)r, i, n, (double)pts[i].x, (double)pts[i].y, (double)pts[i + 1].x,
                     (double)pts[i + 1].y);
    }
}

/* Unit costs: the path is never longer than the A* cost; with a radius and
** ends clear of walls, every segment has line of sight for 0.98 of it. The
** meshes have integer coordinates, so distinct wall features are at least
** 1 apart and radii below 0.5 always leave room for such a path. */
static void test_funnel_geometry(void **state) {
    (void)state;
    static tm_mesh t;
    static qn_vec2 pts[MAXPTS];
    int shorter = 0, clear_checked = 0;
    double saved = 0;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        uint64_t s = seed * 15485863;
        random_guillotine(&t, &s, true, 9);
        qn_mesh *m = make_mesh(&t);
        qn_pathfinder *pf = NULL;
        assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
        const float radii[3] = {0.0f, 0.25f, 0.45f};
        for (int k = 0; k < 30; k++) {
            uint32_t qa = tm_rand(&s) % t.n, qb = tm_rand(&s) % t.n;
            qn_vec2 a = random_point_in(&t, qa, &s), b = random_point_in(&t, qb, &s);
            float r = radii[k % 3];
            uint32_t n;
            float c;
            if (qn_path_find(pf, a, b, r, pts, MAXPTS, &n, &c) != QN_OK) continue;
            check_inside(m, pts, n);
            double len = qn_path_length(pts, n);
            if (r == 0.0f) {
                if (len > (double)c * (1 + 1e-5) + 1e-4)
                    fail_msg("seed %u: path %g longer than A* cost %g", (unsigned)seed, len, (double)c);
                shorter++;
                saved += (double)c - len;
            } else if (clear_point(m, a, r) && clear_point(m, b, r)) {
                check_clear(m, pts, n, r, (unsigned)seed);
                clear_checked++;
            }
        }
        qn_pathfinder_destroy(pf);
        qn_mesh_destroy(m);
    }
    assert_true(shorter > 1000);
    assert_true(saved > 100.0); /* string pulling does shorten */
    assert_true(clear_checked > 500);
}

/* Paths on small random grids imported to quads (a third to a tenth of the
** cells walls), at radius 0.1 up to 0.1 * (radii - 1): every segment keeps
** 0.98 of the radius off the walls (start and goal at cell centres, clear
** of walls). Each sweep has its own seed, and each held a path that failed
** once: see test_grid_paths_clear. */
static void sweep_grid_paths(uint64_t seed, int grids, int radii) {
    static qn_vec2 pts[MAXPTS];
    uint64_t s = seed;
    for (int i = 0; i < grids; i++) {
        uint32_t w, h;
        qn_grid *g;
        qn_mesh *m;
        if (!tm_random_grid(&s, 60, &g, &m, &w, &h)) continue; /* no open cell */
        qn_pathfinder *pf = NULL;
        assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
        qn_vec2 goal;
        uint32_t gq, q, n;
        goal = tm_open_cell(&s, m, w, h, &gq);
        for (int u = 0; u < 40; u++) {
            qn_vec2 p;
            do {
                p = (qn_vec2){(float)(tm_rand(&s) % w) + 0.5f, (float)(tm_rand(&s) % h) + 0.5f};
            } while (qn_mesh_locate(m, p, QN_NONE, &q) != QN_OK ||
                     qn_mesh_island(m, q) != qn_mesh_island(m, gq));
            float r = (float)(u % radii) * 0.1f;
            if (r == 0.0f || qn_path_find(pf, p, goal, r, pts, MAXPTS, &n, NULL) != QN_OK) continue;
            check_clear(m, pts, n, r, (unsigned)(seed * 1000u + (uint64_t)i));
        }
        qn_pathfinder_destroy(pf);
        qn_mesh_destroy(m);
        qn_grid_destroy(g);
    }
}

/* - Seeds 6 and 1 (radius 0.2): a corner of the start quad rounded on the
**   wrong side; the stretch's line, bent by the rounding at its far end,
**   left the start quad through a wall before the exit portal, and the
**   corner was judged from that line.
** - Seed 13 (0.3): the same, for a stretch from a bend inside the start
**   (goal) quad, not from the start (to the goal) itself: the path went
**   round a corner of the goal quad through the wall cell beside it.
** - Seed 28 (0.4): a touch point moved off the tangent by a wall ending at
**   its corner turns the stretch as drawn, which then passed a corner in
**   between (one the tangent itself just touched) too near; the corner
**   scan had looked at the tangent. */
static void test_grid_paths_clear(void **state) {
    (void)state;
    sweep_grid_paths(6, 443, 3);
    sweep_grid_paths(1, 533, 3);
    sweep_grid_paths(13, 130, 5);
    sweep_grid_paths(28, 224, 5);
}

/* Two long corridors, [0,N]x[0,1] and [0,N]x[2,3], joined by a row of unit
** cells [i,i+1]x[1,2] with some left out (pillars): each corridor's
** boundary has over 32 vertices (T-junctions), and the pillars' corners lie
** on it. Paths between random points keep their radius off the walls: the
** corner scan must look at every vertex of such long cycles too. */
static void test_long_cycles(void **state) {
    (void)state;
    static tm_mesh t;
    static qn_vec2 pts[MAXPTS];
    const int N = 48;
    int checked = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        uint64_t s = seed * 7919;
        t.n = 0;
        tm_add_rect(&t, 0, 0, (float)N, 1);
        tm_add_rect(&t, 0, 2, (float)N, 3);
        for (int i = 0; i < N; i++)
            if (i == 0 || i == N - 1 || tm_rand(&s) % 3 != 0)
                tm_add_rect(&t, (float)i, 1, (float)i + 1, 2);
        qn_mesh *m = make_mesh(&t);
        qn_pathfinder *pf = NULL;
        assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
        const float radii[3] = {0.0f, 0.25f, 0.45f};
        for (int k = 0; k < 60; k++) {
            qn_vec2 a = {0.5f + (float)(tm_rand(&s) % (uint32_t)(N - 1)), 0.5f};
            qn_vec2 b = {0.5f + (float)(tm_rand(&s) % (uint32_t)(N - 1)), 2.5f};
            float r = radii[k % 3];
            uint32_t n;
            assert_int_equal(qn_path_find(pf, a, b, r, pts, MAXPTS, &n, NULL), QN_OK);
            check_inside(m, pts, n);
            if (r > 0.0f) check_clear(m, pts, n, r, (unsigned)seed);
            checked += r > 0.0f;
        }
        qn_pathfinder_destroy(pf);
        qn_mesh_destroy(m);
    }
    assert_true(checked > 700);
}

/* A corner between two long quads: A = [0,40]x[0,1] under a row of unit
** cells on [0,35], B = [35,75]x[1,2] over a row of unit cells on [41,75];
** the cell [40,41]x[0,1] is missing, so (40,1) is an obstacle corner that
** only A and B (boundary cycles of over 32 vertices) have. The straight way
** from A's left part to B's right part crosses their portal well inside it
** and passes that corner closer than the radius: the corner scan must find
** it on the long cycles. */
static void test_corner_on_long_cycles(void **state) {
    (void)state;
    static tm_mesh t;
    static qn_vec2 pts[MAXPTS];
    t.n = 0;
    tm_add_rect(&t, 0, 0, 40, 1);
    tm_add_rect(&t, 35, 1, 75, 2);
    for (int i = 0; i < 35; i++) tm_add_rect(&t, (float)i, 1, (float)i + 1, 2);
    for (int i = 41; i < 75; i++) tm_add_rect(&t, (float)i, 0, (float)i + 1, 1);
    qn_mesh *m = make_mesh(&t);
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
    const float radii[2] = {0.25f, 0.45f};
    int bent = 0;
    for (int k = 0; k < 20; k++) {
        float r = radii[k % 2];
        qn_vec2 a = {2.0f + (float)k, 0.5f}, b = {74.0f - 0.5f * (float)k, 1.5f};
        uint32_t n;
        assert_int_equal(qn_path_find(pf, a, b, r, pts, MAXPTS, &n, NULL), QN_OK);
        check_inside(m, pts, n);
        check_clear(m, pts, n, r, (unsigned)k);
        bent += n > 2;
    }
    assert_int_equal(bent, 20); /* the straight way would graze (40,1) */
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
}

/* An L: A = [0,10]x[0,2], B = [8,10]x[2,12]; the inner corner is (8,2). */
static qn_mesh *l_mesh(tm_mesh *t) {
    t->n = 0;
    tm_add_rect(t, 0, 0, 10, 2);
    tm_add_rect(t, 8, 2, 10, 12);
    return make_mesh(t);
}

static void test_l_corner(void **state) {
    (void)state;
    tm_mesh t;
    qn_mesh *m = l_mesh(&t);
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
    qn_vec2 pts[64], a = {1, 1}, b = {9, 11};
    uint32_t n;
    float c;
    assert_int_equal(qn_path_find(pf, a, b, 0, pts, 64, &n, &c), QN_OK);
    /* A* through the portal's mid point (9, 2); the path bends at (8, 2). */
    assert_near(c, dist(a, (qn_vec2){9, 2}) + 9.0, 1e-4);
    assert_int_equal(n, 3);
    assert_float_equal(pts[1].x, 8, 1e-3);
    assert_float_equal(pts[1].y, 2, 1e-3);
    assert_near(qn_path_length(pts, n), dist(a, (qn_vec2){8, 2}) + dist((qn_vec2){8, 2}, b), 1e-3);
    /* With a radius the path rounds the corner at that distance. */
    assert_int_equal(qn_path_find(pf, a, b, 0.5f, pts, 64, &n, &c), QN_OK);
    assert_true(n > 3);
    bool too_close = false;
    for (uint32_t i = 0; i + 1 < n; i++) {
        bool vis;
        qn_mesh_line_of_sight(m, pts[i], pts[i + 1], 0.49f, QN_NONE, &vis);
        assert_true(vis);
        qn_mesh_line_of_sight(m, pts[i], pts[i + 1], 0.55f, QN_NONE, &vis);
        too_close |= !vis;
        double dx = (double)pts[i].x - 8.0, dy = (double)pts[i].y - 2.0;
        assert_true(i == 0 || sqrt(dx * dx + dy * dy) >= 0.5 - 1e-4);
    }
    assert_true(too_close); /* it hugs the corner, not wider */
    double len = qn_path_length(pts, n);
    assert_true(len > dist(a, (qn_vec2){8, 2}) + dist((qn_vec2){8, 2}, b));
    /* Rounding a corner of radius r through a turn of angle t adds about r*t. */
    assert_true(len < dist(a, (qn_vec2){8, 2}) + dist((qn_vec2){8, 2}, b) + 0.5 * 3.14159265 / 2 + 0.05);
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
}

/* Two corridors side by side split by a thin wall (explicit links), joined
** at the far end: the path turns round the wall's tip at (10, 1). */
static void test_u_turn(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 10, 1);
    tm_add_rect(&t, 0, 1, 10, 2);
    tm_add_rect(&t, 10, 0, 11, 2);
    qn_mesh_desc d = tm_desc(&t);
    qn_link links[2] = {{0, 2}, {1, 2}};
    d.links = links;
    d.link_count = 2;
    d.has_links = true;
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
    qn_vec2 pts[64], a = {1, 0.5f}, b = {1, 1.5f}, tip = {10, 1};
    uint32_t n;
    float c;
    assert_int_equal(qn_path_find(pf, a, b, 0, pts, 64, &n, &c), QN_OK);
    check_inside(m, pts, n);
    assert_near(qn_path_length(pts, n), dist(a, tip) + dist(tip, b), 1e-3);
    assert_int_equal(qn_path_find(pf, a, b, 0.3f, pts, 64, &n, &c), QN_OK);
    check_inside(m, pts, n);
    assert_true(n >= 6); /* a half turn in pieces of at most pi/8 */
    for (uint32_t i = 0; i + 1 < n; i++) {
        bool vis;
        qn_mesh_line_of_sight(m, pts[i], pts[i + 1], 0.29f, QN_NONE, &vis);
        assert_true(vis);
    }
    /* The straight line crosses the thin wall. */
    bool vis = true;
    assert_int_equal(qn_mesh_line_of_sight(m, a, b, 0, QN_NONE, &vis), QN_OK);
    assert_false(vis);
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
}

static bool los(const qn_mesh *m, float ax, float ay, float bx, float by, float r) {
    bool vis = false;
    assert_int_equal(qn_mesh_line_of_sight(m, (qn_vec2){ax, ay}, (qn_vec2){bx, by}, r, QN_NONE, &vis),
                     QN_OK);
    return vis;
}

static void test_line_of_sight(void **state) {
    (void)state;
    tm_mesh t;
    qn_mesh *m = l_mesh(&t);
    assert_true(los(m, 1, 1, 9, 1, 0));
    assert_false(los(m, 1, 1, 9, 11, 0)); /* cuts the corner */
    assert_true(los(m, 9, 1, 9, 11, 0));
    assert_true(los(m, 9, 1, 9, 11, 0.95f));
    assert_false(los(m, 9, 1, 9, 11, 1.05f));
    assert_true(los(m, 1, 1, 7.5f, 1, 0.95f));
    assert_false(los(m, 1, 1, 7.5f, 1, 1.05f));
    assert_true(los(m, 8.3f, 1, 8.3f, 5, 0.25f)); /* 0.3 from the wall x = 8 */
    assert_false(los(m, 8.3f, 1, 8.3f, 5, 0.35f));
    /* Passes 0.058 from the corner (8, 2), 0.5 from the other walls. */
    assert_true(los(m, 6, 0.5f, 9.5f, 3, 0));
    assert_true(los(m, 6, 0.5f, 9.5f, 3, 0.05f));
    assert_false(los(m, 6, 0.5f, 9.5f, 3, 0.07f));
    assert_false(los(m, 1, 1, 12, 1, 0));    /* b outside */
    assert_true(los(m, 5, 1, 5, 1, 0.9f));   /* a point clear of walls */
    assert_false(los(m, 5, 1, 5, 1, 1.1f));
    assert_true(los(m, 8, 2, 9, 5, 0));      /* from the corner itself */
    assert_true(los(m, 10, 0, 0, 0, 0));     /* along the outline */
    bool vis = true;
    assert_int_equal(qn_mesh_line_of_sight(m, (qn_vec2){20, 1}, (qn_vec2){1, 1}, 0, QN_NONE, &vis),
                     QN_E_OUTSIDE);
    assert_false(vis);
    /* A wrong hint changes nothing. */
    vis = false;
    assert_int_equal(qn_mesh_line_of_sight(m, (qn_vec2){1, 1}, (qn_vec2){9, 1}, 0, 1, &vis), QN_OK);
    assert_true(vis);
    vis = true;
    assert_int_equal(qn_mesh_line_of_sight(m, (qn_vec2){NAN, 1}, (qn_vec2){9, 1}, 0, QN_NONE, &vis),
                     QN_E_INVALID_ARG);
    assert_false(vis);
    assert_int_equal(qn_mesh_line_of_sight(m, (qn_vec2){1, 1}, (qn_vec2){9, 1}, -1, QN_NONE, &vis),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_mesh_line_of_sight(m, (qn_vec2){1, 1}, (qn_vec2){9, 1}, INFINITY, QN_NONE, &vis),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_mesh_line_of_sight(m, (qn_vec2){1, 1}, (qn_vec2){9, 1}, 0, QN_NONE, NULL),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_mesh_line_of_sight(NULL, (qn_vec2){1, 1}, (qn_vec2){9, 1}, 0, QN_NONE, &vis),
                     QN_E_INVALID_ARG);
    qn_mesh_destroy(m);

    /* A blocked quad is a wall; a door narrower than 2r is closed. */
    t.n = 0;
    tm_add_rect(&t, 0, 0, 4, 4);
    tm_add_rect(&t, 4, 1.5f, 8, 2.5f); /* door 1 wide at x = 4 */
    tm_add_rect(&t, 0, 4, 4, 6);
    t.blocked[2] = 1;
    m = make_mesh(&t);
    assert_true(los(m, 2, 2, 6, 2, 0.45f));
    assert_false(los(m, 2, 2, 6, 2, 0.55f));
    assert_false(los(m, 2, 2, 2, 5, 0));     /* into the blocked quad */
    assert_true(los(m, 2, 2, 2, 3.5f, 0.45f));
    assert_false(los(m, 2, 2, 2, 3.5f, 0.55f)); /* 0.5 from the blocked quad's side */
    assert_false(los(m, 2, 5, 2, 2, 0));     /* starts in the blocked quad */
    qn_mesh_destroy(m);
}

/* ---- statuses and buffers --------------------------------------------------- */

static void test_buffer_too_small(void **state) {
    (void)state;
    tm_mesh t;
    qn_mesh *m = l_mesh(&t);
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
    qn_vec2 full[64], part[64], a = {1, 1}, b = {9, 11};
    uint32_t n = 0, k = 0;
    float c = 0, c2 = 0;
    assert_int_equal(qn_path_find(pf, a, b, 0.5f, full, 64, &n, &c), QN_OK);
    assert_int_equal(qn_path_find(pf, a, b, 0.5f, NULL, 0, &k, &c2), QN_E_BUFFER_TOO_SMALL);
    assert_int_equal(k, n);
    assert_true(c2 == c);
    memset(part, 0, sizeof part);
    assert_int_equal(qn_path_find(pf, a, b, 0.5f, part, n - 1, &k, &c2), QN_E_BUFFER_TOO_SMALL);
    assert_int_equal(k, n);
    assert_memory_equal(part, full, (n - 1) * sizeof(qn_vec2));
    assert_true(part[n - 1].x == 0 && part[n - 1].y == 0); /* nothing past cap */
    assert_int_equal(qn_path_find(pf, a, b, 0.5f, part, n, &k, &c2), QN_OK);
    assert_memory_equal(part, full, n * sizeof(qn_vec2));
    /* One quad: two points; cap 1 is too small. */
    assert_int_equal(qn_path_find(pf, a, (qn_vec2){3, 1}, 0, part, 1, &k, &c2), QN_E_BUFFER_TOO_SMALL);
    assert_int_equal(k, 2);
    assert_true(part[0].x == 1 && part[0].y == 1);
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
}

static void test_statuses(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 4, 4);     /* 0 */
    tm_add_rect(&t, 4, 1.5f, 6, 2.5f); /* 1: door 1 wide */
    tm_add_rect(&t, 6, 0, 10, 4);    /* 2 */
    tm_add_rect(&t, 20, 0, 24, 4);   /* 3: an island */
    tm_add_rect(&t, 0, 4, 4, 8);     /* 4: blocked */
    t.blocked[4] = 1;
    t.costs[0] = 3;
    qn_mesh *m = make_mesh(&t);
    qn_pathfinder *pf = NULL;
    qn_error e;
    assert_int_equal(qn_pathfinder_create(NULL, NULL, &pf, &e), QN_E_INVALID_ARG);
    assert_null(pf);
    assert_int_equal(e.code, QN_E_INVALID_ARG);
    assert_int_equal(qn_pathfinder_create(m, NULL, NULL, NULL), QN_E_INVALID_ARG);
    assert_int_equal(qn_pathfinder_create(m, NULL, &pf, &e), QN_OK);
    assert_true(qn_pathfinder_bytes(pf) >= 20 * (size_t)qn_mesh_portal_count(m));
    qn_vec2 pts[64];
    uint32_t n = 7;
    float c = 7;
    /* Same quad: straight, times the quad's cost. */
    assert_int_equal(qn_path_find(pf, (qn_vec2){1, 1}, (qn_vec2){3, 1}, 0, pts, 64, &n, &c), QN_OK);
    assert_int_equal(n, 2);
    assert_float_equal(c, 6, 1e-6);
    assert_float_equal(qn_path_length(pts, n), 2, 1e-6);
#define EXPECT(st, ax, ay, bx, by, r)                                                              \
    do {                                                                                           \
        n = 7, c = 7;                                                                              \
        assert_int_equal(qn_path_find(pf, (qn_vec2){ax, ay}, (qn_vec2){bx, by}, r, pts, 64, &n, &c), \
                         st);                                                                      \
        assert_int_equal(n, 0);                                                                    \
        assert_true(c == 0);                                                                       \
    } while (0)
    EXPECT(QN_E_OUTSIDE, 50, 1, 1, 1, 0);
    EXPECT(QN_E_OUTSIDE, 1, 1, 12, 1, 0);
    EXPECT(QN_E_BLOCKED, 1, 5, 8, 1, 0);
    EXPECT(QN_E_BLOCKED, 8, 1, 1, 5, 0);
    EXPECT(QN_E_UNREACHABLE, 1, 1, 22, 2, 0);
    EXPECT(QN_E_UNREACHABLE, 1, 1, 8, 2, 0.6f); /* the door closes */
    EXPECT(QN_E_INVALID_ARG, NAN, 1, 8, 2, 0);
    EXPECT(QN_E_INVALID_ARG, 1, 1, 8, INFINITY, 0);
    EXPECT(QN_E_INVALID_ARG, 1, 1, 8, 2, -0.1f);
    EXPECT(QN_E_INVALID_ARG, 1, 1, 8, 2, NAN);
#undef EXPECT
    assert_int_equal(qn_path_find(pf, (qn_vec2){1, 1}, (qn_vec2){8, 2}, 0.4f, pts, 64, &n, &c), QN_OK);
    /* From (1,1) to the door's mid (4,2) at cost 3, through the door (2),
    ** then to (8,2): 3*sqrt(10) + 2 + 2. */
    assert_near(c, 3 * sqrt(10.0) + 4, 1e-4);
    assert_int_equal(qn_path_find(pf, (qn_vec2){1, 1}, (qn_vec2){8, 2}, 0, NULL, 4, &n, &c),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_path_find(pf, (qn_vec2){1, 1}, (qn_vec2){8, 2}, 0, pts, 4, NULL, &c),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_path_find(NULL, (qn_vec2){1, 1}, (qn_vec2){8, 2}, 0, pts, 4, &n, &c),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_path_find(pf, (qn_vec2){1, 1}, (qn_vec2){8, 2}, 0, pts, 64, &n, NULL), QN_OK);
    assert_true(qn_path_length(NULL, 5) == 0 && qn_path_length(pts, 1) == 0);
    qn_pathfinder_destroy(pf);
    qn_pathfinder_destroy(NULL);
    assert_int_equal(qn_pathfinder_bytes(NULL), 0);
    qn_mesh_destroy(m);
}

/* Creation fails cleanly at every allocation; a query never allocates. */
static void test_oom(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 11;
    t.n = 0;
    tm_guillotine(&t, &s, 0, 0, 30, 30, 8, 200);
    qn_mesh *m = make_mesh(&t);
    failalloc fa;
    uint64_t fails = 0;
    qn_pathfinder *pf = NULL;
    for (uint64_t at = 0;; at++) {
        qn_allocator a = failalloc_init(&fa, at);
        qn_error e;
        qn_status st = qn_pathfinder_create(m, &a, &pf, &e);
        if (st == QN_OK) break;
        assert_int_equal(st, QN_E_NOMEM);
        assert_int_equal(e.code, QN_E_NOMEM);
        assert_null(pf);
        assert_int_equal(fa.live, 0);
        fails++;
    }
    assert_true(fails >= 2);
    fa.fail_at = fa.calls; /* from now on every allocation fails */
    static qn_vec2 pts[MAXPTS];
    int found = 0;
    for (int k = 0; k < 200; k++) {
        qn_vec2 a = random_point_in(&t, tm_rand(&s) % t.n, &s);
        qn_vec2 b = random_point_in(&t, tm_rand(&s) % t.n, &s);
        uint32_t n;
        float c;
        found += qn_path_find(pf, a, b, (float)(k % 3) * 0.2f, pts, MAXPTS, &n, &c) == QN_OK;
    }
    assert_true(found > 150);
    assert_int_equal(fa.failures, 0);
    qn_pathfinder_destroy(pf);
    assert_int_equal(fa.live, 0);
    qn_mesh_destroy(m);
}

/* The cost search's corridor can go round the wrong side: a long portal's
** mid point is far from where a path crosses it. Q0 = [2,6]x[0,50] meets
** Q1 = [0,2]x[1,41] along x = 2, y in [1,41] (mid point y = 21); a small
** Q2 = [1,2]x[41,42] joins them at the top. From (2.5,40) to (1.5,40.5) the
** model's cheapest way is through Q2, while the straight line crosses the
** long portal. With uniform costs the waypoints follow the any-angle
** corridor (straight); with differing costs, the cost search's. */
static void test_corridor_choice(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 2, 0, 6, 50);
    tm_add_rect(&t, 0, 1, 2, 41);
    tm_add_rect(&t, 1, 41, 2, 42);
    tm_add_rect(&t, 6, 0, 8, 2); /* far away; its cost decides uniformity */
    qn_vec2 a = {2.5f, 40}, b = {1.5f, 40.5f}, pts[64], pts2[64];
    double model = dist(a, (qn_vec2){2, 41.5f}) + dist((qn_vec2){2, 41.5f}, (qn_vec2){1.5f, 41}) + 0.5;
    for (int weighted = 0; weighted < 2; weighted++) {
        t.costs[3] = weighted ? 2.0f : 1.0f;
        qn_mesh *m = make_mesh(&t);
        qn_pathfinder *pf = NULL;
        assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
        uint32_t n, n2;
        float c;
        assert_int_equal(qn_path_find(pf, a, b, 0, pts, 64, &n, &c), QN_OK);
        assert_near(c, model, 1e-4);
        check_inside(m, pts, n);
        if (!weighted) {
            assert_int_equal(n, 2);
            assert_near(qn_path_length(pts, n), dist(a, b), 1e-6);
            /* Without the cost, the same waypoints (the cost search is skipped). */
            assert_int_equal(qn_path_find(pf, a, b, 0, pts2, 64, &n2, NULL), QN_OK);
            assert_int_equal(n2, n);
            assert_memory_equal(pts2, pts, n * sizeof *pts);
        } else {
            /* Up through Q2 and back down: round (2,41), then (1,41)... */
            double len = qn_path_length(pts, n);
            assert_true(len > dist(a, (qn_vec2){2, 41}) + dist((qn_vec2){2, 41}, b) - 1e-3);
            assert_true(len < (double)c);
        }
        qn_pathfinder_destroy(pf);
        qn_mesh_destroy(m);
    }
}

/* The any-angle search's node pool grows with the allocator: a failure
** there is QN_E_NOMEM, leaves nothing behind, and the next query with room
** to grow succeeds. */
static void test_oom_pool_growth(void **state) {
    (void)state;
    static tm_mesh t;
    static qn_vec2 pts[MAXPTS];
    uint64_t s = 5;
    /* A serpentine: 20 rows of 20 unit cells, joined at alternate ends, so a
    ** query crosses hundreds of quads. */
    t.n = 0;
    for (int r = 0; r < 20; r++) {
        for (int x = 0; x < 20; x++) tm_add_rect(&t, (float)x, (float)(2 * r), (float)x + 1, (float)(2 * r + 1));
        float cx = r % 2 ? 0.0f : 19.0f;
        if (r < 19) tm_add_rect(&t, cx, (float)(2 * r + 1), cx + 1, (float)(2 * r + 2));
    }
    qn_mesh *m = make_mesh(&t);
    failalloc fa;
    qn_allocator al = failalloc_init(&fa, UINT64_MAX);
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(m, &al, &pf, NULL), QN_OK);
    size_t before = qn_pathfinder_bytes(pf);
    fa.fail_at = fa.calls; /* no more memory */
    int nomem = 0, ok = 0;
    qn_vec2 a0 = {0, 0}, b0 = {0, 0};
    for (int k = 0; k < 60; k++) {
        /* Short hops fit the first pool; end to end does not. */
        uint32_t qa = tm_rand(&s) % t.n, qb = k % 2 ? (qa + 1) % t.n : t.n - 1 - qa % 20;
        qn_vec2 a = random_point_in(&t, qa, &s);
        qn_vec2 b = random_point_in(&t, qb, &s);
        uint32_t n = 1;
        qn_status st = qn_path_find(pf, a, b, 0, pts, MAXPTS, &n, NULL);
        if (st == QN_E_NOMEM) {
            assert_int_equal(n, 0);
            if (!nomem++) a0 = a, b0 = b;
        } else {
            ok += st == QN_OK;
        }
    }
    assert_true(nomem > 0 && ok > 0);
    assert_int_equal(qn_pathfinder_bytes(pf), before); /* nothing grew */
    fa.fail_at = UINT64_MAX;
    uint32_t n;
    assert_int_equal(qn_path_find(pf, a0, b0, 0, pts, MAXPTS, &n, NULL), QN_OK);
    assert_true(qn_pathfinder_bytes(pf) > before);
    qn_pathfinder_destroy(pf);
    assert_int_equal(fa.live, 0);
    qn_mesh_destroy(m);
}

/* Queries read the mesh as it is: blocking, unblocking and cost changes
** need no new pathfinder. */
static void test_dynamic_changes(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 4, 4);
    tm_add_rect(&t, 4, 0, 8, 4);
    tm_add_rect(&t, 8, 0, 12, 4);
    qn_mesh *m = make_mesh(&t);
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
    qn_vec2 a = {1, 2}, b = {11, 2}, pts[16];
    uint32_t n;
    float c;
    assert_int_equal(qn_path_find(pf, a, b, 0, pts, 16, &n, &c), QN_OK);
    assert_near(c, 10, 1e-5);
    assert_int_equal(qn_mesh_set_quad_blocked(m, 1, true), QN_OK);
    assert_int_equal(qn_path_find(pf, a, b, 0, pts, 16, &n, &c), QN_E_UNREACHABLE);
    assert_int_equal(qn_path_find(pf, a, (qn_vec2){6, 2}, 0, pts, 16, &n, &c), QN_E_BLOCKED);
    assert_int_equal(qn_mesh_set_quad_blocked(m, 1, false), QN_OK);
    assert_int_equal(qn_mesh_set_quad_cost(m, 1, 3.0f), QN_OK);
    /* (1,2) to (4,2): 3; across the middle quad at cost 3: 12; then 3. */
    assert_int_equal(qn_path_find(pf, a, b, 0, pts, 16, &n, &c), QN_OK);
    assert_near(c, 3 + 12 + 3, 1e-4);
    assert_near(qn_path_length(pts, n), 10, 1e-3);
    for (uint32_t q = 0; q < 3; q++) assert_int_equal(qn_mesh_set_quad_cost(m, q, 2.0f), QN_OK);
    assert_int_equal(qn_path_find(pf, a, b, 0, pts, 16, &n, &c), QN_OK);
    assert_near(c, 20, 1e-4);
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
}

/* ---- MovingAI maps: never longer than the octile optimum ------------------------ */

static int check_map(const char *map_path, const char *scen_path) {
    qn_grid *g = NULL;
    qn_scen *sc = NULL;
    qn_mesh *m = NULL;
    qn_pathfinder *pf = NULL;
    qn_error e;
    if (qn_map_load_file(map_path, NULL, &g, &e) != QN_OK) fail_msg("%s: %s", map_path, e.message);
    if (qn_scen_load_file(scen_path, NULL, &sc, &e) != QN_OK) fail_msg("%s: %s", scen_path, e.message);
    if (qn_mesh_from_grid(g, NULL, &m, &e) != QN_OK) fail_msg("%s: %s", map_path, e.message);
    assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
    uint32_t rows = qn_scen_row_count(sc), step = rows / 240 ? rows / 240 : 1, checked = 0;
    double worst = 0, sum_ratio = 0;
    static qn_vec2 pts[MAXPTS];
    for (uint32_t i = 0; i < rows; i += step) {
        const qn_scen_row *r = qn_scen_row_at(sc, i);
        qn_vec2 a = {(float)r->start_x + 0.5f, (float)r->start_y + 0.5f};
        qn_vec2 b = {(float)r->goal_x + 0.5f, (float)r->goal_y + 0.5f};
        uint32_t n;
        float c;
        qn_status st = qn_path_find(pf, a, b, 0, pts, MAXPTS, &n, &c);
        if (st != QN_OK) fail_msg("%s row %u: %s", scen_path, i, qn_status_name(st));
        double len = qn_path_length(pts, n), opt = r->optimal;
        if (len > opt + 1e-3 * opt + 1e-3)
            fail_msg("%s row %u (%u,%u)->(%u,%u): path %.6f longer than octile optimum %.6f",
                     scen_path, i, r->start_x, r->start_y, r->goal_x, r->goal_y, len, opt);
        if (opt > 0) {
            worst = fmax(worst, len / opt);
            sum_ratio += len / opt;
        }
        if (i % (4 * step) == 0) check_inside(m, pts, n);
        checked++;
    }
    assert_true(checked >= (rows < 200 ? rows : 200));
    print_message("%s: %u rows, %u quads, path/octile mean %.4f, max %.4f\n", map_path, checked,
                  qn_mesh_quad_count(m), sum_ratio / checked, worst);
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
    qn_scen_destroy(sc);
    qn_grid_destroy(g);
    return 1;
}

static void test_movingai_octile_bound(void **state) {
    (void)state;
    const char *data = getenv("QN_DATA_DIR");
    char dir[4096], map[4200], scen[4300];
    snprintf(dir, sizeof dir, "%s/maps", data ? data : "data");
    DIR *dh = opendir(dir);
    int maps = 0;
    for (struct dirent *de; dh && (de = readdir(dh));) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".map") != 0) continue;
        snprintf(map, sizeof map, "%s/%s", dir, de->d_name);
        snprintf(scen, sizeof scen, "%s.scen", map);
        FILE *f = fopen(scen, "rb");
        if (!f) continue;
        fclose(f);
        maps += check_map(map, scen);
    }
    if (dh) closedir(dh);
    if (maps == 0) {
        print_message("no bundled maps with scenarios in %s: skipped\n", dir);
        skip();
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_matches_bellman_ford),
        cmocka_unit_test(test_funnel_geometry), cmocka_unit_test(test_grid_paths_clear),
        cmocka_unit_test(test_long_cycles),
        cmocka_unit_test(test_corner_on_long_cycles),
        cmocka_unit_test(test_l_corner),
        cmocka_unit_test(test_u_turn),
        cmocka_unit_test(test_line_of_sight),
        cmocka_unit_test(test_buffer_too_small),
        cmocka_unit_test(test_statuses),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_corridor_choice),
        cmocka_unit_test(test_oom_pool_growth),
        cmocka_unit_test(test_dynamic_changes),
        cmocka_unit_test(test_movingai_octile_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
