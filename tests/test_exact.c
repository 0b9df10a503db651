/* test_exact.c: exact instances (shortest path maps). Their costs against
** an independent brute-force visibility graph written here and against
** qn_path_find; the sampled direction is the first leg of a shortest path;
** units arrive without touching walls at several radii; an update after a
** change equals a rebuild. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "quadnav.h"
#include "sim.h"
#include "walkcheck.h"
#include "testmesh.h"

#define MAXPTS 4096

static qn_mesh *make_mesh(const tm_mesh *t) {
    qn_mesh_desc d = tm_desc(t);
    qn_mesh *m = NULL;
    qn_error e;
    if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) fail_msg("mesh: %s", e.message);
    return m;
}

static qn_vec2 random_point_in(const tm_mesh *t, uint32_t q, uint64_t *s) {
    qn_vec2 a = t->verts[4 * q], b = t->verts[4 * q + 2];
    float u = (float)(tm_rand(s) % 1000) / 1000.0f, v = (float)(tm_rand(s) % 1000) / 1000.0f;
    return (qn_vec2){a.x + (b.x - a.x) * (0.02f + 0.96f * u), a.y + (b.y - a.y) * (0.02f + 0.96f * v)};
}

static void random_rects(tm_mesh *t, uint64_t *s, int w, int h, int depth, int max_rects,
                         uint32_t block_one_in) {
    t->n = 0;
    tm_guillotine(t, s, 0, 0, w, h, depth, max_rects);
    for (uint32_t q = 0; q < t->n; q++) t->blocked[q] = (tm_rand(s) % block_one_in) == 0;
}

/* random_rects, and a random quad left open for the goal: its index. */
static uint32_t random_rects_goal(tm_mesh *t, uint64_t *s, int w, int h, int depth, int max_rects,
                                  uint32_t block_one_in) {
    random_rects(t, s, w, h, depth, max_rects, block_one_in);
    uint32_t gq = tm_rand(s) % t->n;
    t->blocked[gq] = 0;
    return gq;
}

/* ---- the brute-force oracle --------------------------------------------------
** Free space is the union of the open rectangles, edges included (a path
** may touch walls). A segment is free when the rectangles' closed parts of
** it cover it, and wherever coverage passes from one rectangle to the next
** at a single point, the two share an edge of positive length there (so no
** squeezing through a point where two rectangles touch corner to corner). */

typedef struct rect {
    double x0, y0, x1, y1;
} rect;

static bool clip(const rect *r, double ax, double ay, double bx, double by, double *t0, double *t1) {
    double lo = 0.0, hi = 1.0, d[2] = {bx - ax, by - ay}, a[2] = {ax, ay};
    double mn[2] = {r->x0, r->y0}, mx[2] = {r->x1, r->y1};
    for (int k = 0; k < 2; k++) {
        if (fabs(d[k]) < 1e-12) {
            if (a[k] < mn[k] - 1e-9 || a[k] > mx[k] + 1e-9) return false;
            continue;
        }
        double u = (mn[k] - a[k]) / d[k], v = (mx[k] - a[k]) / d[k];
        if (u > v) {
            double x = u;
            u = v;
            v = x;
        }
        lo = fmax(lo, u);
        hi = fmin(hi, v);
    }
    *t0 = lo;
    *t1 = hi;
    return hi >= lo - 1e-12;
}

static bool share_edge_at(const rect *a, const rect *b, double px, double py) {
    const double e = 1e-7;
    bool vx = fabs(a->x1 - b->x0) < e || fabs(a->x0 - b->x1) < e;
    bool vy = fabs(a->y1 - b->y0) < e || fabs(a->y0 - b->y1) < e;
    double ylo = fmax(a->y0, b->y0), yhi = fmin(a->y1, b->y1);
    double xlo = fmax(a->x0, b->x0), xhi = fmin(a->x1, b->x1);
    if (vx && yhi - ylo > e && py >= ylo - e && py <= yhi + e) return true;
    if (vy && xhi - xlo > e && px >= xlo - e && px <= xhi + e) return true;
    return false;
}

/* The segment from a (in rectangle ra) to b (in rectangle rb). */
static bool seg_free(const rect *rs, uint32_t n, double ax, double ay, double bx, double by,
                     uint32_t ra, uint32_t rb) {
    double reach = 0.0;
    int32_t prev = (int32_t)ra;
    for (int guard = 0; guard < 4 * (int)n + 4 && reach < 1.0 - 1e-9; guard++) {
        int32_t best = -1;
        double bt1 = reach, bt0 = 0.0;
        for (uint32_t i = 0; i < n; i++) {
            double t0, t1;
            if (!clip(&rs[i], ax, ay, bx, by, &t0, &t1)) continue;
            if (t0 > reach + 1e-9 || t1 <= bt1 + 1e-12) continue;
            /* Starting exactly where coverage ends: it must continue
            ** across a shared edge, not through a corner point. */
            if (prev >= 0 && (int32_t)i != prev && t0 > reach - 1e-9 &&
                !share_edge_at(&rs[prev], &rs[i], ax + (bx - ax) * reach, ay + (by - ay) * reach))
                continue;
            best = (int32_t)i, bt1 = t1, bt0 = t0;
        }
        if (best < 0) return false;
        (void)bt0;
        reach = bt1;
        prev = best;
    }
    return reach >= 1.0 - 1e-9 && ((uint32_t)prev == rb || share_edge_at(&rs[prev], &rs[rb], bx, by));
}

typedef struct oracle {
    rect rs[TM_MAX_RECTS];
    uint32_t n;
    qn_vec2 node[4 * TM_MAX_RECTS + 1];
    uint32_t nrect[4 * TM_MAX_RECTS + 1]; /* the rectangle a node belongs to */
    uint32_t of[TM_MAX_RECTS];           /* tm index -> open rectangle index */
    double dist[4 * TM_MAX_RECTS + 1];
    uint32_t nn;
} oracle;

/* Dijkstra over the visibility graph of the open rectangles' corners and
** the goal (node 0), O(V^2) with a free-segment test per pair. */
static void oracle_build(oracle *o, const tm_mesh *t, qn_vec2 goal, uint32_t gq) {
    o->n = 0;
    o->nn = 1;
    for (uint32_t q = 0; q < t->n; q++) {
        if (t->blocked[q]) continue;
        qn_vec2 a = t->verts[4 * q], b = t->verts[4 * q + 2];
        o->of[q] = o->n;
        for (int k = 0; k < 4; k++) o->node[o->nn] = t->verts[4 * q + k], o->nrect[o->nn++] = o->n;
        o->rs[o->n++] = (rect){(double)a.x, (double)a.y, (double)b.x, (double)b.y};
    }
    o->node[0] = goal;
    o->nrect[0] = o->of[gq];
    static bool done[4 * TM_MAX_RECTS + 1];
    for (uint32_t i = 0; i < o->nn; i++) o->dist[i] = (double)INFINITY, done[i] = false;
    o->dist[0] = 0.0;
    for (;;) {
        uint32_t u = UINT32_MAX;
        for (uint32_t i = 0; i < o->nn; i++)
            if (!done[i] && isfinite(o->dist[i]) && (u == UINT32_MAX || o->dist[i] < o->dist[u])) u = i;
        if (u == UINT32_MAX) break;
        done[u] = true;
        for (uint32_t v = 0; v < o->nn; v++) {
            if (done[v]) continue;
            double dx = (double)o->node[v].x - (double)o->node[u].x;
            double dy = (double)o->node[v].y - (double)o->node[u].y;
            double c = o->dist[u] + sqrt(dx * dx + dy * dy);
            if (c < o->dist[v] && seg_free(o->rs, o->n, (double)o->node[u].x, (double)o->node[u].y,
                                           (double)o->node[v].x, (double)o->node[v].y,
                                           o->nrect[u], o->nrect[v]))
                o->dist[v] = c;
        }
    }
}

static double oracle_cost(const oracle *o, qn_vec2 p, uint32_t q) {
    double best = (double)INFINITY;
    for (uint32_t i = 0; i < o->nn; i++) {
        if (!isfinite(o->dist[i])) continue;
        double dx = (double)o->node[i].x - (double)p.x, dy = (double)o->node[i].y - (double)p.y;
        double c = o->dist[i] + sqrt(dx * dx + dy * dy);
        if (c < best && seg_free(o->rs, o->n, (double)p.x, (double)p.y, (double)o->node[i].x,
                                 (double)o->node[i].y, o->of[q], o->nrect[i]))
            best = c;
    }
    return best;
}

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-3 * fmax(1.0, b); }

/* A random mesh of rectangles with a goal in one open quad, its exact field
** and a pathfinder. */
typedef struct scene {
    qn_mesh *m;
    qn_field *f;
    qn_pathfinder *pf;
    qn_vec2 goal;
    uint32_t gq;
} scene;

static scene scene_make(tm_mesh *t, uint64_t *s, int w, int h, int depth, int max_rects,
                        uint32_t block_one_in) {
    scene sc;
    sc.gq = random_rects_goal(t, s, w, h, depth, max_rects, block_one_in);
    sc.m = make_mesh(t);
    sc.goal = random_point_in(t, sc.gq, s);
    sc.f = NULL;
    sc.pf = NULL;
    assert_int_equal(qn_field_create(sc.m, &sc.goal, 1, NULL, NULL, &sc.f, NULL), QN_OK);
    assert_int_equal(qn_pathfinder_create(sc.m, NULL, &sc.pf, NULL), QN_OK);
    return sc;
}

static void scene_free(scene *sc) {
    qn_pathfinder_destroy(sc->pf);
    qn_field_destroy(sc->f);
    qn_mesh_destroy(sc->m);
}

/* The field, qn_path_find and the oracle agree on small random meshes;
** also with finished portals closed during the build (interval.c, on big
** meshes only unless lowered here). */
static void test_against_visibility_graph(void **state) {
    (void)state;
    static tm_mesh t;
    static oracle o;
    static qn_vec2 pts[MAXPTS];
    int checked = 0, unreachable = 0;
    uint32_t shut_default = qn__spm_shut_min_quads;
    for (uint64_t run = 0; run < 120; run++) {
        uint64_t seed = run % 60 + 1;
        qn__spm_shut_min_quads = run < 60 ? shut_default : 0;
        uint64_t s = seed * 7919;
        scene sc = scene_make(&t, &s, 12, 9, 4, 24, 5);
        qn_field *f = sc.f;
        qn_pathfinder *pf = sc.pf;
        qn_vec2 goal = sc.goal;
        oracle_build(&o, &t, goal, sc.gq);
        for (int k = 0; k < 15; k++) {
            uint32_t q = tm_rand(&s) % t.n;
            if (t.blocked[q]) continue;
            qn_vec2 p = random_point_in(&t, q, &s);
            double want = oracle_cost(&o, p, q), got = (double)qn_field_cost_at(f, p, QN_NONE);
            uint32_t n = 0;
            qn_status st = qn_path_find(pf, p, goal, 0.0f, pts, MAXPTS, &n, NULL);
            if (!isfinite(want)) {
                assert_false(isfinite(got));
                assert_int_equal(st, QN_E_UNREACHABLE);
                unreachable++;
                continue;
            }
            assert_int_equal(st, QN_OK);
            double len = qn_path_length(pts, n);
            if (!close_to(got, want) || !close_to(len, want))
                fail_msg("seed %u p (%g,%g) goal (%g,%g): field %g, path %g, visibility graph %g",
                         (unsigned)seed, (double)p.x, (double)p.y, (double)goal.x,
                         (double)goal.y, got, len, want);
            checked++;
        }
        scene_free(&sc);
    }
    qn__spm_shut_min_quads = shut_default;
    assert_true(checked > 800);
    print_message("visibility graph: %d points agree, %d unreachable\n", checked, unreachable);
}

/* A turn by a random angle about the origin, then a move by (100, 50). */
typedef struct turn {
    float th, c, s;
} turn;

static qn_vec2 turn_point(const turn *tn, qn_vec2 p) {
    return (qn_vec2){tn->c * p.x - tn->s * p.y + 100.0f, tn->s * p.x + tn->c * p.y + 50.0f};
}

/* u: t with every vertex turned by a random turn (returned). */
static turn turned_copy(const tm_mesh *t, tm_mesh *u, uint64_t *s) {
    turn tn;
    tn.th = (float)(tm_rand(s) % 6283) / 1000.0f;
    tn.c = cosf(tn.th), tn.s = sinf(tn.th);
    *u = *t;
    for (uint32_t v = 0; v < 4 * t->n; v++)
        u->verts[v] = turn_point(&tn, t->verts[v]);
    return tn;
}

/* An exact field's exits: none for goal quads and those it does not reach
** (cost 0 and infinite), else an open portal of the quad into one that
** costs no more (but for rounding); every chain ends at a goal quad. */
static void check_exits(const qn_field *f, const qn_mesh *m, qn_vec2 goal, float radius) {
    uint32_t nq = qn_mesh_quad_count(m), gq;
    assert_non_null(f->spm); /* exact: the map reached every quad open to the goal */
    assert_int_equal(qn_mesh_locate(m, goal, QN_NONE, &gq), QN_OK);
    for (uint32_t q = 0; q < nq; q++) {
        float c = qn_field_quad_cost(f, q);
        uint32_t e = qn_field_quad_exit(f, q);
        if (q == gq || !isfinite(c)) {
            assert_int_equal(e, QN_NONE);
            if (q == gq) assert_float_equal(c, 0.0, 0.0);
            continue;
        }
        if (e == QN_NONE) fail_msg("quad %u (cost %g) has no exit", q, (double)c);
        qn_portal pt;
        assert_int_equal(qn_mesh_portal(m, e, &pt), QN_OK);
        assert_true(pt.a == q || pt.b == q);
        assert_true(hypotf(pt.p1.x - pt.p0.x, pt.p1.y - pt.p0.y) + 1e-4f >= 2.0f * radius);
        uint32_t next = qn_field_quad_next(f, q);
        assert_int_equal(next, pt.a == q ? pt.b : pt.a);
        /* Two quads whose cheapest point is the same can differ by float
        ** rounding: a part in a million, and on meshes far from the origin
        ** up to a rounding step of their coordinates (an eighth of the
        ** mesh tolerance: 0.004 at 30,000 units out, seen 1e-4). */
        if (!(qn_field_quad_cost(f, next) <= c * (1.0f + 2e-6f) + 0.125f * m->eps))
            fail_msg("quad %u (cost %.9g) leads uphill to %u (%.9g)", q, (double)c, next,
                     (double)qn_field_quad_cost(f, next));
        uint32_t cur = q, steps = 0;
        while (qn_field_quad_exit(f, cur) != QN_NONE) {
            cur = qn_field_quad_next(f, cur);
            if (++steps > nq) fail_msg("the exit chain from quad %u does not end", q);
        }
        assert_int_equal(cur, gq);
    }
}

/* An exact field's quad cost is the least cost over the quad: no more than
** the visibility graph's at any point of it, and no less than the least of
** those at a grid of its points, less the grid's half diagonal (a cost
** changes no faster than the distance). Its exits lead down to the goal. */
static void test_quad_costs(void **state) {
    (void)state;
    static tm_mesh t;
    static oracle o;
    int checked = 0;
    for (uint64_t seed = 1; seed <= 80; seed++) {
        uint64_t s = seed * 104729;
        scene sc = scene_make(&t, &s, 12, 9, 4, 24, 5);
        oracle_build(&o, &t, sc.goal, sc.gq);
        for (uint32_t q = 0; q < t.n; q++) {
            if (t.blocked[q]) continue;
            qn_vec2 a = t.verts[4 * q], b = t.verts[4 * q + 2];
            double least = (double)INFINITY, c = (double)qn_field_quad_cost(sc.f, q);
            const int n = 12;
            for (int i = 0; i <= n; i++)
                for (int j = 0; j <= n; j++) {
                    qn_vec2 p = {a.x + (b.x - a.x) * (float)i / (float)n,
                                 a.y + (b.y - a.y) * (float)j / (float)n};
                    least = fmin(least, oracle_cost(&o, p, q));
                }
            if (!isfinite(least)) {
                assert_false(isfinite(c));
                continue;
            }
            double half = 0.5 * hypot((double)(b.x - a.x), (double)(b.y - a.y)) / n;
            if (!(c <= least + 1e-3 * fmax(1.0, least) &&
                  c >= least - half - 1e-3 * fmax(1.0, least)))
                fail_msg("seed %u quad %u: cost %g, least of the grid %g (spacing %g)",
                         (unsigned)seed, q, c, least, 2 * half);
            checked++;
        }
        check_exits(sc.f, sc.m, sc.goal, 0.0f);
        scene_free(&sc);
    }
    print_message("quad costs: %d quads agree\n", checked);
    assert_true(checked > 400);
}

/* Exits on bigger meshes rich in T-junctions, turned ones (quads that are
** not rectangles) and for a radius that closes portals. */
static void test_exits(void **state) {
    (void)state;
    static tm_mesh t, u;
    uint64_t s = 77;
    for (int i = 0; i < 40; i++) {
        uint32_t gq = random_rects_goal(&t, &s, 30, 30, 8, 300, 9);
        turn tn = turned_copy(&t, &u, &s);
        qn_vec2 ga = random_point_in(&t, gq, &s);
        qn_vec2 gb = turn_point(&tn, ga);
        for (int k = 0; k < 2; k++) {
            qn_mesh *m = make_mesh(k ? &u : &t);
            qn_field_opts o = {.radius = i % 3 == 0 ? 0.6f : 0.0f};
            qn_field *f = NULL;
            assert_int_equal(qn_field_create(m, k ? &gb : &ga, 1, &o, NULL, &f, NULL), QN_OK);
            check_exits(f, m, k ? gb : ga, o.radius);
            qn_field_destroy(f);
            qn_mesh_destroy(m);
        }
    }
}

/* Exits on fans of thin kites round one vertex, where shortest paths pass
** through that vertex from quad to quad. A quad's cost is its least over
** each entry's wedge; a wedge side is kept to a step of angle, and a kite
** corner on it fell outside, which put a quad's cost above its
** neighbour's (up to 0.08 here, 8 with two goals; the fuzz target found
** it: tests/fuzz/regress/level-exact-kites-uphill.json). */
static void test_exits_kites(void **state) {
    (void)state;
    enum { MOST = 120 };
    static qn_vec2 v[1 + 2 * MOST];
    static uint32_t quads[4 * MOST];
    uint64_t s = 5;
    for (int trial = 0; trial < 120; trial++) {
        uint32_t n = 16 + (uint32_t)(qn_rand_unit(&s) * 100.0);
        double r = 60.0 + qn_rand_unit(&s) * 100.0, ro = r * (1.05 + qn_rand_unit(&s) * 0.4);
        v[0] = qn__v2(0.0f, 0.0f);
        for (uint32_t i = 0; i < n; i++) {
            double t = 6.283185307179586 * i / n, t2 = t + 3.141592653589793 / n;
            v[1 + i] = qn__v2((float)(r * cos(t)), (float)(r * sin(t)));
            v[1 + n + i] = qn__v2((float)(ro * cos(t2)), (float)(ro * sin(t2)));
            uint32_t k[4] = {0, 1 + i, 1 + n + i, 1 + (i + 1) % n};
            memcpy(&quads[4 * i], k, sizeof k);
        }
        qn_mesh_desc d = {
            .vertices = v, .vertex_count = 1 + 2 * n, .quads = quads, .quad_count = n};
        qn_mesh *m = NULL;
        assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
        for (int k = 0; k < 4; k++) {
            /* the goal in a random kite, toward its outer corner */
            uint32_t q = (uint32_t)(qn_rand_unit(&s) * n) % n;
            qn_vec2 c[4];
            qn_mesh_quad_corners(m, q, c);
            float a = 0.1f + 0.8f * (float)qn_rand_unit(&s),
                  b = (1.0f - a) * (float)qn_rand_unit(&s);
            qn_vec2 goal = qn__v2(a * c[2].x + 0.5f * b * (c[1].x + c[3].x),
                                  a * c[2].y + 0.5f * b * (c[1].y + c[3].y));
            qn_field_opts o = {.radius = k < 2 ? 0.0f : 1.0f};
            qn_field *f = NULL;
            assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
            check_exits(f, m, goal, o.radius);
            qn_field_destroy(f);
        }
        qn_mesh_destroy(m);
    }
}

/* Two unit squares side by side and one near 1e6: the mesh's tolerance
** (from its extent) dwarfs the squares, and the propagation misses the
** second. The field is then the discrete one, which reaches it. */
static void test_lost_quad_falls_back(void **state) {
    (void)state;
    static const char json[] =
        "{\"format\": 1, \"quads\": [{\"rect\": [0, 0, 1, 1]}, "
        "{\"rect\": [1, 0, 2.5, 1]}, {\"rect\": [999999, 999999, 1000000, 1000000]}]}";
    qn_level *lv = NULL;
    qn_error e;
    if (qn_level_load_mem(json, sizeof json - 1, NULL, &lv, &e) != QN_OK) fail_msg("%s", e.message);
    const qn_mesh *m = qn_level_mesh(lv);
    qn_vec2 goal = {0.5f, 0.5f};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
    assert_true(isfinite(qn_field_quad_cost(f, 1)));
    assert_int_equal(qn_field_quad_next(f, 1), 0);
    qn_vec2 d;
    uint32_t q = QN_NONE;
    assert_int_equal(qn_field_sample(f, (qn_vec2){2.0f, 0.5f}, &q, &d), QN_OK);
    assert_true(d.x < -0.9f);
    qn_field_destroy(f);
    qn_level_destroy(lv);
}

/* Bigger meshes rich in T-junctions: the field's cost at random points is
** the length of qn_path_find's path, and the sampled direction is the
** path's first leg. */
static void test_against_paths(void **state) {
    (void)state;
    static tm_mesh t;
    static qn_vec2 pts[MAXPTS];
    int checked = 0, legs = 0, legs_ok = 0;
    for (uint64_t seed = 1; seed <= 80; seed++) {
        uint64_t s = seed * 104729;
        scene sc = scene_make(&t, &s, 40, 30, 8, 300, 9);
        qn_field *f = sc.f;
        qn_pathfinder *pf = sc.pf;
        qn_vec2 goal = sc.goal;
        for (int k = 0; k < 25; k++) {
            uint32_t q = tm_rand(&s) % t.n;
            if (t.blocked[q]) continue;
            qn_vec2 p = random_point_in(&t, q, &s);
            uint32_t n = 0;
            qn_status st = qn_path_find(pf, p, goal, 0.0f, pts, MAXPTS, &n, NULL);
            double got = (double)qn_field_cost_at(f, p, QN_NONE);
            if (st == QN_E_UNREACHABLE) {
                assert_false(isfinite(got));
                continue;
            }
            assert_int_equal(st, QN_OK);
            double len = qn_path_length(pts, n);
            if (!close_to(got, len))
                fail_msg("seed %u p (%g,%g): field %g, path %g", (unsigned)seed, (double)p.x,
                         (double)p.y, got, len);
            checked++;
            qn_vec2 dir;
            uint32_t hint = QN_NONE;
            qn_status ss = qn_field_sample(f, p, &hint, &dir);
            assert_true(ss == QN_OK || ss == QN_AT_GOAL);
            qn_vec2 leg = {pts[1].x - p.x, pts[1].y - p.y};
            float ll = sqrtf(leg.x * leg.x + leg.y * leg.y);
            if (ss != QN_OK || ll < 0.5f) continue;
            legs++;
            legs_ok += (dir.x * leg.x + dir.y * leg.y) / ll > 0.995f;
        }
        scene_free(&sc);
    }
    assert_true(checked > 600);
    /* Two shortest paths of equal length may leave differently. */
    if (legs_ok < legs - legs / 50) fail_msg("first legs agree for %d of %d", legs_ok, legs);
    print_message("paths: %d costs agree; first legs %d of %d\n", checked, legs_ok, legs);
}

/* Turning a mesh changes no length: on random T-junction-rich meshes with
** blocked quads, each turned by a random angle, qn_field_cost_at at random
** points equals the cost at the same point of the unturned mesh (whose
** field the visibility graph checks above) within 1e-3 relative, and so
** does the length of qn_path_find's path on the turned mesh. Along a
** side of a root's view, the turned mesh's lines are exact only to a few
** ulps: a quad seen edge-on along it was left without any root, its cost
** then the discrete bound. */
static void test_turned_meshes(void **state) {
    (void)state;
    static tm_mesh t, u;
    uint64_t s = 5;
    int checked = 0;
    for (int i = 0; i < 60; i++) {
        uint32_t gq = random_rects_goal(&t, &s, 30, 30, 8, 300, 9);
        turn tn = turned_copy(&t, &u, &s);
        qn_mesh *ma = make_mesh(&t), *mb = make_mesh(&u);
        qn_vec2 ga = random_point_in(&t, gq, &s);
        qn_vec2 gb = turn_point(&tn, ga);
        qn_field *fa = NULL, *fb = NULL;
        assert_int_equal(qn_field_create(ma, &ga, 1, NULL, NULL, &fa, NULL), QN_OK);
        assert_int_equal(qn_field_create(mb, &gb, 1, NULL, NULL, &fb, NULL), QN_OK);
        qn_pathfinder *pf = NULL;
        assert_int_equal(qn_pathfinder_create(mb, NULL, &pf, NULL), QN_OK);
        for (uint32_t q = 0; q < t.n; q++) {
            if (t.blocked[q]) continue;
            qn_vec2 p = random_point_in(&t, q, &s);
            qn_vec2 pb = turn_point(&tn, p);
            double a = (double)qn_field_cost_at(fa, p, QN_NONE);
            double b = (double)qn_field_cost_at(fb, pb, QN_NONE);
            if (!isfinite(a)) continue;
            if (!(fabs(a - b) <= 1e-3 * fmax(1.0, a)))
                fail_msg("mesh %d turned %g: quad %u (%g,%g): cost %g, turned %g", i, (double)tn.th,
                         q, (double)p.x, (double)p.y, a, b);
            checked++;
            if (q % 8) continue; /* and the turned mesh's path, as long */
            static qn_vec2 pts[MAXPTS];
            uint32_t n;
            assert_int_equal(qn_path_find(pf, pb, gb, 0.0f, pts, MAXPTS, &n, NULL), QN_OK);
            double len = qn_path_length(pts, n);
            if (!(fabs(len - a) <= 1e-3 * fmax(1.0, a)))
                fail_msg("mesh %d turned %g: quad %u: path %g, cost %g", i, (double)tn.th, q, len,
                         a);
        }
        qn_pathfinder_destroy(pf);
        qn_field_destroy(fa);
        qn_field_destroy(fb);
        qn_mesh_destroy(ma);
        qn_mesh_destroy(mb);
    }
    assert_true(checked > 2000);
}

/* ---- walking ------------------------------------------------------------------ */

/* Units arrive from random places; an exact field's exits (check_exits),
** and with want_exact, that the field is exact. */
static void walk(const qn_mesh *m, qn_vec2 goal, float radius, uint32_t units, const char *what,
                 bool want_exact) {
    qn_field_opts fo = {.radius = radius};
    qn_field *f = NULL;
    qn_error e;
    if (qn_field_create(m, &goal, 1, &fo, NULL, &f, &e) != QN_OK) fail_msg("%s", e.message);
    if (want_exact || f->spm) check_exits(f, m, goal, radius);
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, f, goal);
    expect_all_arrive(&w, units, 7, what, radius);
    qn_field_destroy(f);
}

static void test_walk_levels(void **state) {
    (void)state;
    const char *names[] = {"town", "maze", "field"};
    for (int i = 0; i < 3; i++) {
        qn_vec2 goal;
        qn_level *lv = load_level_goal(names[i], &goal);
        const float radii[] = {0.0f, 0.1f, 0.25f};
        for (int r = 0; r < 3; r++)
            walk(qn_level_mesh(lv), goal, radii[r], 500, names[i], false);
        qn_level_destroy(lv);
    }
}

/* The bundled levels turned and moved tens of thousands of units from the
** origin, where float coordinates are 0.002 to 0.008 apart: units still
** arrive without a wall contact at radius 0, 0.1 and 0.25. A point agent's
** breadth grew with the largest coordinate (64 mesh tolerances, 1.2 units
** at 20,000), and 84 of 300 units stuck in the maze's 1-unit corridors. */
static void test_walk_far_levels(void **state) {
    (void)state;
    const char *names[] = {"town", "maze", "field"};
    const double moves[][3] = {{0.0, 20000.0, -15000.0}, {20.0, -60000.0, 40000.0}};
    for (int i = 0; i < 3; i++) {
        qn_vec2 goal;
        qn_level *lv = load_level_goal(names[i], &goal);
        qn_error e;
        const qn_mesh *m = qn_level_mesh(lv);
        for (int k = 0; k < 2; k++) {
            qn_mesh *far = tm_far_mesh(m, moves[k][0], moves[k][1], moves[k][2], &e);
            if (!far) fail_msg("%s moved: %s", names[i], e.message);
            assert_int_equal(qn_mesh_portal_count(far), qn_mesh_portal_count(m));
            qn_vec2 g = tm_far_point(goal, moves[k][0], moves[k][1], moves[k][2]);
            const float radii[] = {0.0f, 0.1f, 0.25f};
            char what[64];
            snprintf(what, sizeof what, "%s moved to (%g, %g)", names[i], moves[k][1], moves[k][2]);
            for (int r = 0; r < 3; r++) walk(far, g, radii[r], 300, what, false);
            qn_mesh_destroy(far);
        }
        qn_level_destroy(lv);
    }
}

/* The point (u, w) of quad c[0..4) (both in [0, 1]), mapped bilinearly. */
static qn_vec2 bilinear(const qn_vec2 c[4], float u, float w) {
    return (qn_vec2){
        (1 - u) * (1 - w) * c[0].x + u * (1 - w) * c[1].x + u * w * c[2].x + (1 - u) * w * c[3].x,
        (1 - u) * (1 - w) * c[0].y + u * (1 - w) * c[1].y + u * w * c[2].y + (1 - u) * w * c[3].y};
}

/* The bundled levels of uniform cost turned by a few angles and moved
** 1,000 and 5,000 units out, where float coordinates are 6e-5 and 5e-4
** apart: each field is exact, and its costs at points well inside the
** quads are the level's own within 2e-3. A root 0.6 or 1 from the end of
** its view's side was taken in line with a quad edge 5 to 13 beyond it only
** within the tolerance times that short side: the side's direction, carried
** that far, is off by more than that from the rounding of its ends alone:
** the maze turned 15 degrees 1,000 out fell back to the discrete model (no
** root reached a dead-end quad), and in a scratch sweep of 192 fields (two
** levels, 8 angles, 2 scales, 3 placements, radii 0 and 0.25) 12 did, and
** fields and paths elsewhere disagreed by up to 37 %. */
static void test_turned_levels_exact(void **state) {
    (void)state;
    const char *names[] = {"town", "maze"};
    const double angles[] = {7.0, 15.0, 22.5, 45.0, 53.0, 73.3, 81.0, 110.0, 133.0, 251.0};
    const double moves[][2] = {{1000.0, -500.0}, {5000.0, 3000.0}};
    int checked = 0;
    for (int i = 0; i < 2; i++) {
        qn_vec2 goal;
        qn_level *lv = load_level_goal(names[i], &goal);
        const qn_mesh *m = qn_level_mesh(lv);
        qn_field *f = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
        uint64_t s = 11;
        for (size_t a = 0; a < sizeof angles / sizeof *angles; a++)
            for (int k = 0; k < 2; k++) {
                qn_error e;
                double th = angles[a], dx = moves[k][0], dy = moves[k][1];
                qn_mesh *far = tm_far_mesh(m, th, dx, dy, &e);
                if (!far) fail_msg("%s turned: %s", names[i], e.message);
                qn_vec2 g = tm_far_point(goal, th, dx, dy);
                qn_field *ff = NULL;
                assert_int_equal(qn_field_create(far, &g, 1, NULL, NULL, &ff, NULL), QN_OK);
                if (!ff->spm)
                    fail_msg("%s turned %g and moved to (%g, %g): the field is not exact", names[i],
                             th, dx, dy);
                for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
                    qn_vec2 c[4];
                    assert_int_equal(qn_mesh_quad_corners(m, q, c), QN_OK);
                    float u = 0.1f + 0.8f * (float)(tm_rand(&s) % 1000) / 1000.0f,
                          w = 0.1f + 0.8f * (float)(tm_rand(&s) % 1000) / 1000.0f;
                    qn_vec2 p = bilinear(c, u, w);
                    double want = (double)qn_field_cost_at(f, p, QN_NONE);
                    if (!isfinite(want)) continue;
                    double got = (double)qn_field_cost_at(ff, tm_far_point(p, th, dx, dy), QN_NONE);
                    if (!(fabs(got - want) <= 2e-3 * want + 0.01))
                        fail_msg("%s turned %g, moved to (%g, %g): (%g, %g) costs %g, the level %g",
                                 names[i], th, dx, dy, (double)p.x, (double)p.y, got, want);
                    checked++;
                }
                qn_field_destroy(ff);
                qn_mesh_destroy(far);
            }
        qn_field_destroy(f);
        qn_level_destroy(lv);
    }
    assert_true(checked > 3000);
}

/* A grid of nx x ny cells of side 2, its inner vertices moved at random by
** up to 0.4 (quads of every shape, sharing their corners), one cell in
** `hole_in` left out (never the middle one); every point turned by th
** degrees and moved by (dx, dy) (far_point). The middle cell's index into
** *mid. The caller frees the mesh. */
static qn_mesh *jittered_mesh(uint64_t seed, uint32_t nx, uint32_t ny, uint32_t hole_in, double th,
                              double dx, double dy, uint32_t *mid) {
    qn_vec2 *v = malloc((size_t)(nx + 1) * (ny + 1) * sizeof *v);
    uint32_t *idx = malloc(4 * (size_t)nx * ny * sizeof *idx), nq = 0;
    assert_non_null(v);
    assert_non_null(idx);
    uint64_t s = seed;
    for (uint32_t j = 0; j <= ny; j++)
        for (uint32_t i = 0; i <= nx; i++) {
            float jx = i > 0 && i < nx ? (float)((int)(tm_rand(&s) % 401) - 200) / 1000.0f : 0.0f;
            float jy = j > 0 && j < ny ? (float)((int)(tm_rand(&s) % 401) - 200) / 1000.0f : 0.0f;
            qn_vec2 p = {2.0f * ((float)i + jx), 2.0f * ((float)j + jy)};
            v[j * (nx + 1) + i] = tm_far_point(p, th, dx, dy);
        }
    for (uint32_t j = 0; j < ny; j++)
        for (uint32_t i = 0; i < nx; i++) {
            bool middle = i == nx / 2 && j == ny / 2;
            if (!middle && tm_rand(&s) % hole_in == 0) continue;
            if (middle) *mid = nq;
            uint32_t a = j * (nx + 1) + i, *q = idx + 4 * nq++;
            q[0] = a, q[1] = a + 1, q[2] = a + nx + 2, q[3] = a + nx + 1;
        }
    qn_mesh_desc d = {
        .vertices = v, .vertex_count = (nx + 1) * (ny + 1), .quads = idx, .quad_count = nq};
    qn_mesh *m = NULL;
    qn_error e;
    if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) fail_msg("jittered mesh: %s", e.message);
    free(v);
    free(idx);
    return m;
}

/* A mesh of jittered quads and the same mesh turned and moved 30,000 units
** out: the exact field's costs agree (within float precision there: 1e-3
** and 0.01) and units walk it cleanly. The engine's tolerance was 4 mesh tolerances,
** 0.11 there, and costs came out up to 42 % long; segment walks (the sim's
** wall contacts) stopped at points where four quads meet. */
static void test_far_jittered_meshes(void **state) {
    (void)state;
    const double th = 33.0, dx = 30000.0, dy = 30000.0;
    int checked = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        uint32_t mid = 0, mid2 = 0;
        qn_mesh *m = jittered_mesh(seed, 40, 30, 5, 0.0, 0.0, 0.0, &mid);
        qn_mesh *far = jittered_mesh(seed, 40, 30, 5, th, dx, dy, &mid2);
        assert_int_equal(qn_mesh_quad_count(m), qn_mesh_quad_count(far));
        qn_vec2 goal = {41.0f, 31.0f}, gfar = tm_far_point(goal, th, dx, dy);
        qn_field *f = NULL, *ff = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
        assert_int_equal(qn_field_create(far, &gfar, 1, NULL, NULL, &ff, NULL), QN_OK);
        uint64_t s = seed * 77;
        for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
            qn_vec2 c[4];
            assert_int_equal(qn_mesh_quad_corners(m, q, c), QN_OK);
            float u = (float)(tm_rand(&s) % 1000) / 1000.0f,
                  w = (float)(tm_rand(&s) % 1000) / 1000.0f;
            qn_vec2 p = bilinear(c, u, w);
            double a = (double)qn_field_cost_at(f, p, QN_NONE);
            double b = (double)qn_field_cost_at(ff, tm_far_point(p, th, dx, dy), QN_NONE);
            if (!isfinite(a)) continue;
            /* float coordinates out there are 0.002 to 0.004 apart */
            if (!(fabs(a - b) <= 1e-3 * a + 0.01))
                fail_msg("seed %llu quad %u (%g, %g): cost %g, moved out %g",
                         (unsigned long long)seed, q, (double)p.x, (double)p.y, a, b);
            checked++;
        }
        qn_field_destroy(f);
        qn_field_destroy(ff);
        const float radii[] = {0.0f, 0.1f, 0.25f};
        for (int r = 0; r < 3; r++)
            walk(far, gfar, radii[r], 300, "jittered mesh moved out", false);
        qn_mesh_destroy(m);
        qn_mesh_destroy(far);
    }
    assert_true(checked > 2000);
}

static void walk_map(const char *name, qn_vec2 goal, uint32_t units) {
    const char *dir = getenv("QN_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/maps/%s", dir ? dir : "data", name);
    qn_grid *g = NULL;
    qn_error e;
    if (qn_map_load_file(path, NULL, &g, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_from_grid(g, NULL, &m, &e), QN_OK);
    uint32_t q;
    assert_int_equal(qn_mesh_locate(m, goal, QN_NONE, &q), QN_OK);
    const float radii[] = {0.0f, 0.1f, 0.25f};
    for (int r = 0; r < 3; r++)
        walk(m, goal, radii[r], units, name, true);
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
}

/* Every map bundled for the tests, at the three radii. */
static void test_walk_map(void **state) {
    (void)state;
    walk_map("arena.map", (qn_vec2){25.5f, 25.5f}, 400);
    walk_map("lak303d.map", (qn_vec2){70.5f, 70.5f}, 300);
    walk_map("Berlin_0_256.map", (qn_vec2){100.5f, 100.5f}, 300);
}

/* One unit walking from p as a game would: a step of the sampled distance
** ahead, at most 0.2 and at least 0.05, arrival within 0.05 of the goal.
** Fails the test if it touches a wall, never arrives, or (keep > 0) passes
** a wall nearer than keep where it is farther than its radius from its
** start and the goal. */
static void walk_unit(const qn_mesh *m, const qn_field *f, float radius, qn_vec2 p, qn_vec2 goal,
                      float keep, int what) {
    qn_vec2 start = p, dir;
    uint32_t hint = QN_NONE;
    qn_status st = QN_OK;
    for (int k = 0; k < 20000 && st == QN_OK; k++) {
        if (hypotf(p.x - goal.x, p.y - goal.y) <= 0.05f) {
            st = QN_AT_GOAL;
            break;
        }
        float ahead;
        st = qn_field_sample_ahead(f, p, &hint, &dir, &ahead);
        if (st != QN_OK) break;
        float step = ahead < 0.2f ? (ahead > 0.05f ? ahead : 0.05f) : 0.2f;
        qn_vec2 n = {p.x + dir.x * step, p.y + dir.y * step};
        bool clear = false;
        assert_int_equal(qn_mesh_line_of_sight(m, p, n, 0.0f, QN_NONE, &clear), QN_OK);
        if (!clear) fail_msg("scene %d r %g: wall touched at (%g,%g)", what, (double)radius,
                             (double)p.x, (double)p.y);
        if (keep > 0.0f && hypotf(p.x - goal.x, p.y - goal.y) > radius &&
            hypotf(p.x - start.x, p.y - start.y) > radius) {
            assert_int_equal(qn_mesh_line_of_sight(m, p, n, keep, QN_NONE, &clear), QN_OK);
            if (!clear) fail_msg("scene %d r %g: nearer than %g to a wall at (%g,%g)", what,
                                 (double)radius, (double)keep, (double)p.x, (double)p.y);
        }
        p = n;
    }
    if (st != QN_AT_GOAL)
        fail_msg("scene %d r %g: from (%g,%g) to (%g,%g) ends at (%g,%g): %s", what,
                 (double)radius, (double)start.x, (double)start.y, (double)goal.x,
                 (double)goal.y, (double)p.x, (double)p.y, qn_status_name(st));
}

/* walk_unit from p, keeping half the radius off walls, when p is clear of
** walls by the radius and the field reaches it: 1, else 0 (not walked). */
static int walk_from(const qn_mesh *m, const qn_field *f, float radius, qn_vec2 p, qn_vec2 goal,
                     int what) {
    qn_vec2 dir;
    uint32_t hint = QN_NONE;
    bool room = false;
    assert_int_equal(qn_mesh_line_of_sight(m, p, p, radius, QN_NONE, &room), QN_OK);
    if (!room || qn_field_sample(f, p, &hint, &dir) != QN_OK) return 0;
    walk_unit(m, f, radius, p, goal, 0.5f * radius, what);
    return 1;
}

/* Each quad's obstacle corners as the mesh's boundary lists them (a mask of
** its cycle, or for a cycle of more than 31 vertices their kinds) are those
** of its cycle whose vertex kind says corner, on random meshes and on a
** comb: a long strip under squares with gaps between them, whose cycle
** has about 80 vertices, half of them corners. On the comb, units of radius
** 0.3 walk along the strip past those corners and keep half their radius
** off them. */
static void test_corner_masks(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 5;
    int long_cycles = 0, walks = 0;
    for (int i = 0; i < 21; i++) {
        t.n = 0;
        if (i < 20) {
            random_rects(&t, &s, 40, 30, 8, 300, 9);
        } else {
            tm_add_rect(&t, 0.0f, 0.0f, 80.0f, 1.0f);
            for (int x = 0; x < 80; x += 2) tm_add_rect(&t, (float)x, 1.0f, (float)x + 1.0f, 2.0f);
        }
        qn_mesh *m = make_mesh(&t);
        const qn__boundary *b = qn__mesh_boundary(m, NULL);
        assert_non_null(b);
        for (uint32_t q = 0; q < t.n; q++) {
            uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base, next = 0;
            long_cycles += k > 31 && (b->cmask[q] & QN__CMASK_LONG);
            for (uint32_t v = 0; v < k; v++) {
                if (!(b->vkind[b->bvid[base + v]] & QN__VK_CORNER)) continue;
                uint32_t got = qn__next_corner(b, q, next);
                if (got != v) fail_msg("mesh %d quad %u: corner %u listed as %u", i, q, v, got);
                next = v + 1;
            }
            assert_int_equal(qn__next_corner(b, q, next), UINT32_MAX);
        }
        if (i == 20) {
            qn_vec2 goal = {79.5f, 0.5f};
            qn_field_opts fo = {.radius = 0.3f};
            qn_field *f = NULL;
            assert_int_equal(qn_field_create(m, &goal, 1, &fo, NULL, &f, NULL), QN_OK);
            for (int x = 0; x < 78; x += 6) { /* x even: a square above */
                walks += walk_from(m, f, 0.3f, (qn_vec2){(float)x + 0.5f, 0.5f}, goal, i);
                walks += walk_from(m, f, 0.3f, (qn_vec2){(float)x + 0.5f, 1.5f}, goal, i);
            }
            qn_field_destroy(f);
        }
        qn_mesh_destroy(m);
    }
    assert_true(long_cycles >= 1 && walks >= 20);
}

/* A build that closes finished portals as it goes (and gives their pieces
** back) makes the same map: on T-junction-rich meshes with blocked quads,
** at radius 0 and 0.25, qn_field_cost_at at random points equals that of
** a build without closing within 1e-5 relative, the sampled directions
** agree, and units walk to the goal. (Closing may drop a piece of a few
** millionths of a portal's width, at its end, that no piece yet covered:
** such a sliver wins nowhere that a sample can tell.) */
static void test_closing_same_map(void **state) {
    (void)state;
    static tm_mesh t;
    uint32_t shut_default = qn__spm_shut_min_quads;
    uint64_t s = 17;
    int points = 0, walks = 0;
    for (int i = 0; i < 16; i++) {
        uint32_t gq = random_rects_goal(&t, &s, 40, 30, 8, 300, 9);
        qn_mesh *m = make_mesh(&t);
        qn_vec2 goal = random_point_in(&t, gq, &s);
        bool clear = false; /* a goal the units can stand on */
        for (int k = 0; k < 50 && !clear; k++) {
            goal = random_point_in(&t, gq, &s);
            assert_int_equal(qn_mesh_line_of_sight(m, goal, goal, 0.25f, QN_NONE, &clear), QN_OK);
        }
        for (int ri = 0; ri < 2 && clear; ri++) {
            qn_field_opts fo = {.radius = ri ? 0.25f : 0.0f};
            qn_field *f[2] = {NULL, NULL};
            for (int k = 0; k < 2; k++) {
                qn__spm_shut_min_quads = k ? 0 : UINT32_MAX;
                assert_int_equal(qn_field_create(m, &goal, 1, &fo, NULL, &f[k], NULL), QN_OK);
            }
            qn__spm_shut_min_quads = shut_default;
            for (int k = 0; k < 200; k++) {
                uint32_t q = tm_rand(&s) % t.n;
                qn_vec2 p = random_point_in(&t, q, &s), d[2];
                float c[2];
                qn_status st[2];
                for (int j = 0; j < 2; j++) {
                    uint32_t hint = QN_NONE;
                    c[j] = qn_field_cost_at(f[j], p, QN_NONE);
                    st[j] = qn_field_sample(f[j], p, &hint, &d[j]);
                }
                assert_int_equal(st[0], st[1]);
                if (isfinite(c[0]) != isfinite(c[1]) ||
                    (isfinite(c[0]) && fabsf(c[0] - c[1]) > 1e-5f * fmaxf(1.0f, c[0])))
                    fail_msg("mesh %d r %g at (%g,%g): cost %g, closing %g", i,
                             (double)fo.radius, (double)p.x, (double)p.y, (double)c[0],
                             (double)c[1]);
                if (st[0] == QN_OK && d[0].x * d[1].x + d[0].y * d[1].y < 0.9999f)
                    fail_msg("mesh %d r %g at (%g,%g): direction (%g,%g), closing (%g,%g)", i,
                             (double)fo.radius, (double)p.x, (double)p.y, (double)d[0].x,
                             (double)d[0].y, (double)d[1].x, (double)d[1].y);
                points++;
                if (k % 25 == 0 && !t.blocked[q])
                    walks += walk_from(m, f[1], fo.radius, p, goal, i);
            }
            qn_field_destroy(f[0]);
            qn_field_destroy(f[1]);
        }
        qn_mesh_destroy(m);
    }
    assert_true(points >= 5000 && walks > 150);
    print_message("closing: %d points agree, %d walks\n", points, walks);
}

/* Units nearly as wide as a cell (radius 0.4 and 0.45) on small random
** grids imported to quads, walking as a game would: a step of the sampled
** distance ahead, at most 0.2 and at least 0.05, arrival within 0.05 of the
** goal. Every unit arrives without touching a wall. Two faults made units
** go back and forth for ever here: a corner in the way rounded from inside
** its circle was left toward its own root's way on, not the unit's (in a
** gap between two such circles, sent back and forth between them); and
** where the way was bent near a wall, the distance ahead claimed two radii
** even when the point aimed at was nearer (stepping past the goal, or past
** the point on a corner's circle, and back). */
static void test_walk_grids_wide_agents(void **state) {
    (void)state;
    const float radii[2] = {0.4f, 0.45f};
    uint64_t s = 1;
    int walks = 0;
    for (int i = 0; i < 40; i++) {
        uint32_t w, h;
        qn_grid *g;
        qn_mesh *m;
        if (!tm_random_grid(&s, 48, &g, &m, &w, &h)) continue; /* no open cell */
        qn_vec2 goal, p, dir;
        uint32_t q, hint;
        goal = tm_open_cell(&s, m, w, h, &q);
        for (int ri = 0; ri < 2; ri++) {
            qn_field_opts fo = {.radius = radii[ri]};
            qn_field *f = NULL;
            assert_int_equal(qn_field_create(m, &goal, 1, &fo, NULL, &f, NULL), QN_OK);
            for (int u = 0; u < 10; u++) {
                int tries = 0; /* a start the field reaches at this radius */
                do {
                    p = (qn_vec2){(float)(tm_rand(&s) % w) + 0.5f, (float)(tm_rand(&s) % h) + 0.5f};
                    hint = QN_NONE;
                } while (++tries < 1000 && (qn_mesh_locate(m, p, QN_NONE, &q) != QN_OK ||
                                            qn_field_sample(f, p, &hint, &dir) != QN_OK));
                if (tries >= 1000) continue;
                walk_unit(m, f, radii[ri], p, goal, 0.0f, i);
                walks++;
            }
            qn_field_destroy(f);
        }
        qn_mesh_destroy(m);
        qn_grid_destroy(g);
    }
    assert_true(walks > 600);
}

/* Distance a unit walks from p to the goal with steps as compare takes
** them (to where the way turns, 0.05 to 0.2), failing the test on a wall
** contact or when it does not arrive. */
static double walked_to(const qn_mesh *m, const qn_field *f, qn_vec2 p, qn_vec2 goal) {
    double walked = 0.0;
    uint32_t hint = QN_NONE;
    for (int k = 0; k < 20000; k++) {
        if (hypotf(p.x - goal.x, p.y - goal.y) <= 0.05f) return walked;
        qn_vec2 dir;
        float ahead;
        qn_status st = qn_field_sample_ahead(f, p, &hint, &dir, &ahead);
        if (st == QN_AT_GOAL) return walked + (double)hypotf(p.x - goal.x, p.y - goal.y);
        if (st != QN_OK) fail_msg("at (%g,%g): %s", (double)p.x, (double)p.y, qn_status_name(st));
        float step = ahead < 0.2f ? (ahead > 0.05f ? ahead : 0.05f) : 0.2f;
        qn_vec2 n = {p.x + dir.x * step, p.y + dir.y * step};
        bool clear = false;
        assert_int_equal(qn_mesh_line_of_sight(m, p, n, 0.0f, QN_NONE, &clear), QN_OK);
        if (!clear) fail_msg("wall touched at (%g,%g)", (double)p.x, (double)p.y);
        p = n;
        walked += (double)step;
    }
    fail_msg("no arrival from (%g,%g)", (double)p.x, (double)p.y);
    return 0.0;
}

/* A winding corridor one cell wide (21 runs of 6 cells, 20 U-turns) in the
** corner of a map 4,096 cells wide. A point agent keeps a hair off walls,
** and the hair was taken at the level's extent, a quarter of a cell here:
** a unit of radius 0 or 0.1 walked as one of 0.25 does, 13 % over the
** shortest length. It is now what the aim toward the root steered at
** needs, so a point agent walks within 3 % of the shortest length and one
** of radius 0.1 within 2 % of the shortest way that keeps 0.1 off walls
** (qn_path_find's). */
static void test_hair_on_wide_maps(void **state) {
    (void)state;
    const uint32_t w = 4096, h = 41;
    uint8_t *c = malloc((size_t)w * h);
    assert_non_null(c);
    memset(c, QN_CELL_WALL, (size_t)w * h);
    for (uint32_t y = 0; y < h; y += 2)
        for (uint32_t x = 0; x < 6; x++)
            c[(size_t)y * w + x] = 1;
    for (uint32_t k = 0; k < 20; k++)
        c[(size_t)(2 * k + 1) * w + (k % 2 ? 0 : 5)] = 1;
    c[(size_t)(h - 1) * w + (w - 1)] = 1; /* the far corner: the map's extent */
    qn_grid_desc gd = {w, h, c, 1.0f, {0.0f, 0.0f}};
    qn_grid *g = NULL;
    qn_mesh *m = NULL;
    assert_int_equal(qn_grid_create(&gd, NULL, &g, NULL), QN_OK);
    assert_int_equal(qn_mesh_from_grid(g, NULL, &m, NULL), QN_OK);
    qn_vec2 start = {0.5f, 0.5f}, goal = {0.5f, (float)h - 0.5f};
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(m, NULL, &pf, NULL), QN_OK);
    const float radii[] = {0.0f, 0.1f};
    const double most[] = {1.03, 1.02};
    for (int i = 0; i < 2; i++) {
        qn_vec2 pts[256];
        uint32_t n = 0;
        assert_int_equal(qn_path_find(pf, start, goal, radii[i], pts, 256, &n, NULL), QN_OK);
        double shortest = qn_path_length(pts, n);
        qn_field_opts o = {.radius = radii[i]};
        qn_field *f = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
        double walked = walked_to(m, f, start, goal);
        if (walked > most[i] * shortest)
            fail_msg("radius %g: walked %g, shortest %g", (double)radii[i], walked, shortest);
        qn_field_destroy(f);
    }
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
    free(c);
}

/* Point agents (radius 0) far from their roots, on open maps with few
** obstacles (a 180 x 180 grid, one cell in 30 blocked, the goal near a
** corner): a wedge's sides are kept to a step of angle, and the sampler
** takes a point within a slack of a side as inside, so a unit just past an
** obstacle corner, up to about 2e-4 of its distance to the root outside
** that corner's shadow, could take the far root and head straight through
** the corner (compare counted such wall contacts on generated maps). */
static void test_walk_far_roots(void **state) {
    (void)state;
    uint64_t s = 7;
    int walks = 0;
    for (int i = 0; i < 3; i++) {
        const uint32_t w = 180, h = 180;
        uint8_t *c = malloc((size_t)w * h);
        assert_non_null(c);
        for (uint32_t k = 0; k < w * h; k++)
            c[k] = tm_rand(&s) % 30 == 0 ? QN_CELL_WALL : 1;
        c[(h - 10) * w + (w - 10)] = 1;
        qn_grid *g = NULL;
        qn_mesh *m = NULL;
        assert_true(tm_grid_of(c, w, h, &g, &m));
        qn_vec2 goal = {(float)(w - 10) + 0.5f, (float)(h - 10) + 0.5f};
        qn_field *f = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
        for (int u = 0; u < 120; u++) {
            uint32_t q, hint = QN_NONE;
            qn_vec2 p = tm_open_cell(&s, m, w, h, &q), dir;
            if (qn_field_sample(f, p, &hint, &dir) != QN_OK) continue;
            walk_unit(m, f, 0.0f, p, goal, 0.0f, i);
            walks++;
        }
        qn_field_destroy(f);
        qn_mesh_destroy(m);
        qn_grid_destroy(g);
    }
    assert_true(walks > 300);
}

/* A goal nearer a wall than the radius (beside a wall, in a corner, by an
** obstacle's corner), which no unit's centre can reach: units of radius
** 0.25 and 0.4 from all round arrive (QN_AT_GOAL) without touching a wall;
** they stepped back and forth beside it for good. A goal clear of the walls
** by the radius is reached as before (test_walk_map and the others). */
static void test_goal_by_wall(void **state) {
    (void)state;
    const uint32_t w = 12, h = 12;
    uint8_t c[12 * 12];
    for (uint32_t k = 0; k < w * h; k++)
        c[k] = 1;
    c[6 * w + 6] = QN_CELL_WALL; /* an obstacle in the middle */
    qn_grid_desc d = {w, h, c, 1.0f, {0.0f, 0.0f}};
    qn_grid *g = NULL;
    qn_mesh *m = NULL;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    assert_int_equal(qn_mesh_from_grid(g, NULL, &m, NULL), QN_OK);
    const qn_vec2 goals[4] = {{0.02f, 5.3f}, {0.03f, 0.02f}, {5.99f, 6.5f}, {7.01f, 5.98f}};
    const float radii[2] = {0.25f, 0.4f};
    uint64_t s = 3;
    for (int gi = 0; gi < 4; gi++)
        for (int ri = 0; ri < 2; ri++) {
            qn_field_opts fo = {.radius = radii[ri]};
            qn_field *f = NULL;
            assert_int_equal(qn_field_create(m, &goals[gi], 1, &fo, NULL, &f, NULL), QN_OK);
            for (int u = 0; u < 12; u++) {
                uint32_t q;
                qn_vec2 p = tm_open_cell(&s, m, w, h, &q);
                walk_unit(m, f, radii[ri], p, goals[gi], 0.0f, 10 * gi + ri);
            }
            qn_field_destroy(f);
        }
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
}

/* Units of radius 0.1, 0.25 and 0.4 on T-junction-rich meshes with a
** ninth of the quads blocked: every unit arrives without touching a wall
** and never passes one nearer than half its radius. The corners of blocked
** quads are not the mesh's own; the sampler rounded only the mesh's, and
** units grazed the others (or, rarely, ran into the blocked quad). */
static void test_walk_blocked_corners(void **state) {
    (void)state;
    static tm_mesh t;
    const float radii[3] = {0.1f, 0.25f, 0.4f};
    uint64_t s = 1;
    int walks = 0;
    for (int i = 0; i < 40; i++) {
        uint32_t gq = random_rects_goal(&t, &s, 30, 30, 8, 300, 9);
        qn_mesh *m = make_mesh(&t);
        qn_vec2 goal = random_point_in(&t, gq, &s);
        bool clear = false; /* a goal the widest unit can stand on */
        for (int k = 0; k < 50 && !clear; k++) {
            goal = random_point_in(&t, gq, &s);
            assert_int_equal(qn_mesh_line_of_sight(m, goal, goal, 0.4f, QN_NONE, &clear), QN_OK);
        }
        for (int ri = 0; ri < 3 && clear; ri++) {
            qn_field_opts fo = {.radius = radii[ri]};
            qn_field *f = NULL;
            assert_int_equal(qn_field_create(m, &goal, 1, &fo, NULL, &f, NULL), QN_OK);
            for (int u = 0; u < 8; u++) {
                uint32_t q = tm_rand(&s) % t.n;
                qn_vec2 p = random_point_in(&t, q, &s);
                if (!t.blocked[q]) walks += walk_from(m, f, radii[ri], p, goal, i);
            }
            qn_field_destroy(f);
        }
        qn_mesh_destroy(m);
    }
    assert_true(walks > 500);
}

/* Units of radius 0.1, 0.2 and 0.3 on meshes of general convex quads (a
** lattice with its inner points moved at random, a seventh of the quads
** blocked): every unit arrives without touching a wall and never passes
** one nearer than half its radius. The ends of closed portals along a
** bent wall were taken for corners even where the wall is hollow (units
** rounded a point inside a dent, into the wall), and a corner well off the
** way could be rounded on either side as the way turned past its walls. */
static void test_walk_jittered_meshes(void **state) {
    (void)state;
    static qn_vec2 v[40 * 40];
    static uint32_t quads[4 * 39 * 39];
    static uint8_t blocked[39 * 39];
    const float radii[3] = {0.1f, 0.2f, 0.3f};
    uint64_t s = 3;
    int walks = 0;
    for (int i = 0; i < 40; i++) {
        uint32_t w = 8 + tm_rand(&s) % 30, h = 8 + tm_rand(&s) % 30, n = 0;
        float jit = 0.05f + 0.3f * (float)(tm_rand(&s) % 100) / 100.0f;
        for (uint32_t y = 0; y <= h; y++)
            for (uint32_t x = 0; x <= w; x++) {
                float jx = jit * ((float)(tm_rand(&s) % 2001) / 1000.0f - 1.0f);
                float jy = jit * ((float)(tm_rand(&s) % 2001) / 1000.0f - 1.0f);
                bool inner_x = x > 0 && x < w, inner_y = y > 0 && y < h;
                v[y * (w + 1) + x] = (qn_vec2){(float)x + (inner_x ? jx : 0.0f),
                                               (float)y + (inner_y ? jy : 0.0f)};
            }
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++, n++) {
                uint32_t a = y * (w + 1) + x;
                quads[4 * n] = a, quads[4 * n + 1] = a + 1;
                quads[4 * n + 2] = a + w + 2, quads[4 * n + 3] = a + w + 1;
                blocked[n] = tm_rand(&s) % 7 == 0;
            }
        uint32_t gq = tm_rand(&s) % n;
        blocked[gq] = 0;
        qn_mesh_desc d = {0};
        d.vertices = v, d.vertex_count = (w + 1) * (h + 1);
        d.quads = quads, d.quad_count = n, d.blocked = blocked;
        qn_mesh *m = NULL;
        if (qn_mesh_create(&d, NULL, &m, NULL) != QN_OK) continue; /* a quad moved out of convex */
        qn_vec2 k[4];
        assert_int_equal(qn_mesh_quad_corners(m, gq, k), QN_OK);
        qn_vec2 goal = {0.25f * (k[0].x + k[1].x + k[2].x + k[3].x),
                        0.25f * (k[0].y + k[1].y + k[2].y + k[3].y)};
        for (int ri = 0; ri < 3; ri++) {
            qn_field_opts fo = {.radius = radii[ri]};
            qn_field *f = NULL;
            assert_int_equal(qn_field_create(m, &goal, 1, &fo, NULL, &f, NULL), QN_OK);
            for (int u = 0; u < 10; u++) {
                uint32_t q = tm_rand(&s) % n;
                if (blocked[q]) continue;
                assert_int_equal(qn_mesh_quad_corners(m, q, k), QN_OK);
                qn_vec2 p = {0.25f * (k[0].x + k[1].x + k[2].x + k[3].x),
                             0.25f * (k[0].y + k[1].y + k[2].y + k[3].y)};
                walks += walk_from(m, f, radii[ri], p, goal, i);
            }
            qn_field_destroy(f);
        }
        qn_mesh_destroy(m);
    }
    assert_true(walks > 500);
}

/* After blocking and unblocking quads, an updated exact field gives the
** same costs as one built afresh. */
static void test_update_equals_rebuild(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 99;
    random_rects(&t, &s, 40, 30, 8, 300, 1000000);
    qn_mesh *m = make_mesh(&t);
    qn_vec2 goal = random_point_in(&t, 0, &s);
    qn_field_opts fo = {.repairable = true};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &fo, NULL, &f, NULL), QN_OK);
    for (int round = 0; round < 6; round++) {
        uint32_t q = 1 + tm_rand(&s) % (t.n - 1);
        assert_int_equal(qn_mesh_set_quad_blocked(m, q, round % 3 != 2), QN_OK);
        assert_int_equal(qn_field_update(f, NULL), QN_OK);
        qn_field *fresh = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &fresh, NULL), QN_OK);
        for (int k = 0; k < 200; k++) {
            qn_vec2 p = random_point_in(&t, tm_rand(&s) % t.n, &s);
            float a = qn_field_cost_at(f, p, QN_NONE), b = qn_field_cost_at(fresh, p, QN_NONE);
            assert_true((isinf(a) && isinf(b)) || a == b);
        }
        qn_field_destroy(fresh);
    }
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

/* qn_field_sample_ahead: the same direction as qn_field_sample, and a
** distance to the turn no longer than the way left to the goal. */
static void test_sample_ahead(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 17;
    random_rects(&t, &s, 40, 30, 8, 300, 9);
    t.blocked[0] = 0;
    qn_mesh *m = make_mesh(&t);
    qn_vec2 goal = random_point_in(&t, 0, &s);
    qn_field_opts fo = {.radius = 0.1f};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &fo, NULL, &f, NULL), QN_OK);
    int checked = 0;
    for (int k = 0; k < 400; k++) {
        uint32_t q = tm_rand(&s) % t.n;
        if (t.blocked[q]) continue;
        qn_vec2 p = random_point_in(&t, q, &s), d1, d2;
        uint32_t h1 = QN_NONE, h2 = QN_NONE;
        float ahead = -1.0f;
        qn_status a = qn_field_sample(f, p, &h1, &d1);
        qn_status b = qn_field_sample_ahead(f, p, &h2, &d2, &ahead);
        assert_int_equal(a, b);
        if (a != QN_OK) continue;
        assert_true(d1.x == d2.x && d1.y == d2.y && h1 == h2);
        float left = qn_field_cost_at(f, p, QN_NONE);
        assert_true(ahead > 0.0f && ahead <= left + 0.2f + 1e-3f * left);
        checked++;
    }
    assert_true(checked > 200);
    float ahead = 1.0f;
    qn_vec2 d;
    assert_int_equal(qn_field_sample_ahead(f, goal, NULL, &d, NULL), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample_ahead(NULL, goal, NULL, &d, &ahead), QN_E_INVALID_ARG);
    assert_true(ahead == 0.0f);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

/* One query of one pathfinder against a fresh pathfinder: the same status,
** length (1e-4 relative) and cost; the length checked against the oracle
** when one is given. Returns the length (or -1 when unreachable). */
static double same_as_fresh(qn_pathfinder *pf, const qn_mesh *m, qn_vec2 p, qn_vec2 goal,
                            const oracle *o, uint32_t q) {
    static qn_vec2 a[MAXPTS], b[MAXPTS];
    qn_pathfinder *fresh = NULL;
    assert_int_equal(qn_pathfinder_create(m, NULL, &fresh, NULL), QN_OK);
    uint32_t na = 0, nb = 0;
    float ca = 0.0f, cb = 0.0f;
    qn_status sa = qn_path_find(pf, p, goal, 0.0f, a, MAXPTS, &na, &ca);
    qn_status sb = qn_path_find(fresh, p, goal, 0.0f, b, MAXPTS, &nb, &cb);
    qn_pathfinder_destroy(fresh);
    assert_int_equal(sa, sb);
    if (sa == QN_E_UNREACHABLE) return -1.0;
    assert_int_equal(sa, QN_OK);
    double la = qn_path_length(a, na), lb = qn_path_length(b, nb);
    if (fabs(la - lb) > 1e-4 * fmax(1.0, lb) || fabsf(ca - cb) > 1e-4f * fmaxf(1.0f, cb))
        fail_msg("p (%g,%g): reused pathfinder %g (cost %g), fresh %g (cost %g)", (double)p.x,
                 (double)p.y, la, (double)ca, lb, (double)cb);
    if (o) {
        double want = oracle_cost(o, p, q);
        if (!close_to(la, want)) fail_msg("p (%g,%g): path %g, visibility graph %g", (double)p.x, (double)p.y, la, want);
    }
    return la;
}

/* Many queries on one pathfinder answer as fresh pathfinders do, and as the
** oracle: its per-query reset and the landmark bounds it builds once it has
** searched enough change no answer, nor do blocking
** and unblocking quads between queries (an unblocked quad drops them). */
static void test_many_queries_one_pathfinder(void **state) {
    (void)state;
    static tm_mesh t;
    static oracle o;
    int used = 0, checked = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        uint64_t s = seed * 31337;
        scene sc = scene_make(&t, &s, 12, 9, 4, 24, 5);
        oracle_build(&o, &t, sc.goal, sc.gq);
        /* Until the landmarks are built, then as many again. */
        for (int k = 0, until = 3000; k < until; k++) {
            uint32_t q = tm_rand(&s) % t.n;
            if (t.blocked[q]) continue;
            same_as_fresh(sc.pf, sc.m, random_point_in(&t, q, &s), sc.goal, &o, q);
            checked++;
            if (until == 3000 && qn__pathfinder_has_landmarks(sc.pf)) until = 2 * k + 100;
        }
        used += qn__pathfinder_has_landmarks(sc.pf);
        /* Block an open quad other than the goal's, query, unblock, query. */
        uint32_t b = QN_NONE;
        for (uint32_t i = 0; i < t.n && b == QN_NONE; i++)
            if (!t.blocked[(sc.gq + 1 + i) % t.n] && (sc.gq + 1 + i) % t.n != sc.gq) b = (sc.gq + 1 + i) % t.n;
        for (int round = 0; round < 2 && b != QN_NONE; round++) {
            assert_int_equal(qn_mesh_set_quad_blocked(sc.m, b, round == 0), QN_OK);
            for (int k = 0; k < 60; k++) {
                uint32_t q = tm_rand(&s) % t.n;
                if (t.blocked[q] || (round == 0 && q == b)) continue;
                same_as_fresh(sc.pf, sc.m, random_point_in(&t, q, &s), sc.goal, round ? &o : NULL, q);
                checked++;
            }
        }
        scene_free(&sc);
    }
    assert_true(checked > 1500);
    assert_true(used >= 4); /* the landmarks were built (a goal on a small island may never need them) */
    print_message("one pathfinder, many queries: %d agree\n", checked);
}

/* One pathfinder serving units of several sizes in turn answers as a fresh
** one does: its walls and corners are kept while the radius opens the
** same portals, and marked again when it closes others (radii from 0 to
** 1.2 on meshes whose portals are 1 to a few units wide). */
static void test_radii_one_pathfinder(void **state) {
    (void)state;
    static tm_mesh t;
    static qn_vec2 a[MAXPTS], b[MAXPTS];
    const float radii[6] = {0.0f, 0.3f, 0.45f, 0.55f, 0.9f, 1.2f};
    int checked = 0, reached[6] = {0};
    for (uint64_t seed = 1; seed <= 8; seed++) {
        uint64_t s = seed * 4099;
        scene sc = scene_make(&t, &s, 16, 12, 5, 40, 6);
        for (int k = 0; k < 120; k++) {
            uint32_t q = tm_rand(&s) % t.n;
            int ri = (int)(tm_rand(&s) % 6);
            if (t.blocked[q]) continue;
            qn_vec2 p = random_point_in(&t, q, &s);
            qn_pathfinder *fresh = NULL;
            assert_int_equal(qn_pathfinder_create(sc.m, NULL, &fresh, NULL), QN_OK);
            uint32_t na = 0, nb = 0;
            qn_status sa = qn_path_find(sc.pf, p, sc.goal, radii[ri], a, MAXPTS, &na, NULL);
            qn_status sb = qn_path_find(fresh, p, sc.goal, radii[ri], b, MAXPTS, &nb, NULL);
            qn_pathfinder_destroy(fresh);
            double la = sa == QN_OK ? qn_path_length(a, na) : -1.0;
            double lb = sb == QN_OK ? qn_path_length(b, nb) : -1.0;
            if (sa != sb || fabs(la - lb) > 1e-4 * fmax(1.0, lb))
                fail_msg("seed %u r %g p (%g,%g): reused pathfinder %s %g, fresh %s %g",
                         (unsigned)seed, (double)radii[ri], (double)p.x, (double)p.y,
                         qn_status_name(sa), la, qn_status_name(sb), lb);
            reached[ri] += sa == QN_OK;
            checked++;
        }
        scene_free(&sc);
    }
    assert_true(checked > 600);
    for (int i = 0; i < 6; i++) assert_true(reached[i] > 10);
    print_message("radii in turn: %d agree; reached at r 0 %d, r 1.2 %d\n", checked, reached[0],
                  reached[5]);
}

/* A grid of unit cells with ten fences (cells side by side with no link),
** at the origin and turned 0.35 degrees and moved 20,000 units out
** (tests/data/far/): the far field's cost at a point is the origin's at the
** same point. A view's side that runs along a lattice diagonal passes
** vertex after vertex; each clip near one added float steps to its end,
** and 20,000 units out the end drifted past the tolerance from the fence's
** end it reached, which then was no corner to bend round: costs were up to
** 14 units high at 21 of 400 points. The point paths from there too:
** qn_path_find started a point within the tolerance of a cell's edge in
** the cell beyond (and so went back to that edge's portal first), or on a
** fence's shut-in side (unreachable). Points within 0.05 of a wall are
** left out (within the mesh tolerance, 0.02 there, a point is on both
** sides of a fence). */
static void test_far_fence_costs(void **state) {
    (void)state;
    const char *dir = getenv("QN_TEST_DATA_DIR");
    const char *names[2] = {"fences_origin.json", "fences_far.json"};
    qn_level *lv[2];
    qn_field *f[2];
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/far/%s", dir && *dir ? dir : "tests/data", names[i]);
        qn_error e;
        if (qn_level_load_file(path, NULL, &lv[i], &e) != QN_OK)
            fail_msg("%s: %s", path, e.message);
        qn_vec2 goal;
        const char *gname;
        assert_int_equal(qn_level_goal(lv[i], 0, &gname, &goal), QN_OK);
        assert_int_equal(qn_field_create(qn_level_mesh(lv[i]), &goal, 1, NULL, NULL, &f[i], NULL),
                         QN_OK);
    }
    const qn_mesh *far = qn_level_mesh(lv[1]);
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(far, NULL, &pf, NULL), QN_OK);
    static qn_vec2 way[4096];
    qn_vec2 fgoal;
    const char *gname;
    assert_int_equal(qn_level_goal(lv[1], 0, &gname, &fgoal), QN_OK);
    uint64_t s = 77;
    uint32_t compared = 0, off = 0, poff = 0;
    for (int k = 0; k < 600; k++) {
        qn_vec2 p = {(float)(tm_rand(&s) % 24000) / 1000.0f,
                     (float)(tm_rand(&s) % 24000) / 1000.0f};
        float t = qn_field_cost_at(f[0], p, QN_NONE);
        if (!isfinite(t)) continue;
        qn_vec2 q = tm_far_point(p, 0.35, 20000.0, -15000.0);
        bool clear = false;
        assert_int_equal(qn_mesh_line_of_sight(far, q, q, 0.05f, QN_NONE, &clear), QN_OK);
        if (!clear) continue;
        float c = qn_field_cost_at(f[1], q, QN_NONE);
        compared++;
        if (!(fabsf(c - t) <= 0.02f + 1e-3f * t)) {
            if (off++ < 5)
                print_message("(%g, %g): %g at the origin, %g far out\n", (double)p.x, (double)p.y,
                              (double)t, (double)c);
        }
        /* The point path from there: as long, but for the corners' insets
        ** (a few tolerances each). */
        uint32_t n = 0;
        qn_status st = qn_path_find(pf, q, fgoal, 0.0f, way, 4096, &n, NULL);
        double len = st == QN_OK ? qn_path_length(way, n) : (double)INFINITY;
        if (!(fabs(len - (double)t) <= 0.05 + 2e-3 * (double)t)) {
            if (poff++ < 5)
                print_message("(%g, %g): %g at the origin, path %g far out (%s)\n", (double)p.x,
                              (double)p.y, (double)t, len, qn_status_name(st));
        }
    }
    qn_pathfinder_destroy(pf);
    assert_true(compared > 300);
    assert_int_equal(off, 0);
    assert_int_equal(poff, 0);
    for (int i = 0; i < 2; i++) {
        qn_field_destroy(f[i]);
        qn_level_destroy(lv[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_visibility_graph),
        cmocka_unit_test(test_against_paths),
        cmocka_unit_test(test_quad_costs),
        cmocka_unit_test(test_exits),
        cmocka_unit_test(test_exits_kites),
        cmocka_unit_test(test_lost_quad_falls_back),
        cmocka_unit_test(test_turned_meshes),
        cmocka_unit_test(test_walk_levels),
        cmocka_unit_test(test_walk_far_levels),
        cmocka_unit_test(test_far_jittered_meshes),
        cmocka_unit_test(test_turned_levels_exact),
        cmocka_unit_test(test_far_fence_costs),
        cmocka_unit_test(test_walk_map),
        cmocka_unit_test(test_corner_masks),
        cmocka_unit_test(test_closing_same_map),
        cmocka_unit_test(test_walk_grids_wide_agents),
        cmocka_unit_test(test_walk_blocked_corners),
        cmocka_unit_test(test_walk_far_roots),
        cmocka_unit_test(test_hair_on_wide_maps),
        cmocka_unit_test(test_goal_by_wall),
        cmocka_unit_test(test_walk_jittered_meshes),
        cmocka_unit_test(test_update_equals_rebuild),
        cmocka_unit_test(test_sample_ahead),
        cmocka_unit_test(test_many_queries_one_pathfinder),
        cmocka_unit_test(test_radii_one_pathfinder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
