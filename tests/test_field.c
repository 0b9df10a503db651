/* test_field.c: instances against a brute-force Bellman-Ford over the same
** portal graph, exit chains, multiple goals, agent radius, bad goals, and
** out-of-memory behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "internal.h"
#include "quadnav.h"
#include "brute.h"
#include "testmesh.h"

static float dist(qn_vec2 a, qn_vec2 b) { return hypotf(a.x - b.x, a.y - b.y); }

/* Expected per-quad costs of the mid-point model: the cheapest open portal
** of each quad by brute force (0 in goal quads). */
static void bellman_ford(const qn_mesh *m, const qn_vec2 *goals, uint32_t ng, float radius,
                         double *quad_cost) {
    uint32_t np = qn_mesh_portal_count(m), nq = qn_mesh_quad_count(m);
    double *g = malloc((np + 1) * sizeof *g);
    assert_true(bf_portal_costs(m, goals, ng, radius, g));
    for (uint32_t q = 0; q < nq; q++) quad_cost[q] = (double)INFINITY;
    for (uint32_t k = 0; k < ng; k++) {
        uint32_t gq;
        qn_mesh_locate(m, goals[k], QN_NONE, &gq);
        quad_cost[gq] = 0;
    }
    for (uint32_t i = 0; i < np; i++) {
        qn_portal p;
        qn_mesh_portal(m, i, &p);
        if (!bf_portal_open(m, &p, radius)) continue;
        if (quad_cost[p.a] != 0) quad_cost[p.a] = fmin(quad_cost[p.a], g[i]);
        if (quad_cost[p.b] != 0) quad_cost[p.b] = fmin(quad_cost[p.b], g[i]);
    }
    free(g);
}

/* From every reachable quad the exit chain reaches a goal quad with strictly
** falling cost. */
static void check_chains(const qn_field *f, const qn_mesh *m) {
    uint32_t nq = qn_mesh_quad_count(m);
    for (uint32_t q = 0; q < nq; q++) {
        float c = qn_field_quad_cost(f, q);
        if (!isfinite(c)) {
            assert_int_equal(qn_field_quad_exit(f, q), QN_NONE);
            continue;
        }
        uint32_t cur = q, steps = 0;
        while (qn_field_quad_cost(f, cur) > 0) {
            uint32_t next = qn_field_quad_next(f, cur);
            assert_int_not_equal(next, QN_NONE);
            assert_true(qn_field_quad_cost(f, next) < qn_field_quad_cost(f, cur));
            assert_false(qn_mesh_quad_blocked(m, next));
            cur = next;
            assert_true(++steps <= nq);
        }
        assert_int_equal(qn_field_quad_exit(f, cur), QN_NONE);
    }
}

static qn_vec2 rect_centre(const tm_mesh *t, uint32_t q) {
    return (qn_vec2){(t->verts[4 * q].x + t->verts[4 * q + 2].x) / 2,
                     (t->verts[4 * q].y + t->verts[4 * q + 2].y) / 2};
}

static void test_against_bellman_ford(void **state) {
    (void)state;
    static tm_mesh t;
    static double expect[TM_MAX_RECTS];
    int checked_unreachable = 0;
    for (uint64_t seed = 1; seed <= 220; seed++) {
        uint64_t s = seed * 7919;
        t.n = 0;
        tm_guillotine(&t, &s, 0, 0, 24, 18, 7, 120);
        for (uint32_t q = 0; q < t.n; q++) {
            t.costs[q] = (float)(1 + tm_rand(&s) % 5);
            t.blocked[q] = (tm_rand(&s) % 12) == 0;
        }
        uint32_t gq = tm_rand(&s) % t.n;
        t.blocked[gq] = 0;
        qn_mesh_desc d = tm_desc(&t);
        qn_mesh *m = NULL;
        assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
        qn_vec2 goals[2] = {rect_centre(&t, gq), rect_centre(&t, gq)};
        uint32_t ng = 1;
        if (seed % 3 == 0) { /* a second goal somewhere else */
            uint32_t g2 = tm_rand(&s) % t.n;
            t.blocked[g2] = 0;
            if (!qn_mesh_quad_blocked(m, g2)) goals[ng++] = rect_centre(&t, g2);
        }
        qn_field_opts o = {.midpoint_costs = true};
        o.radius = (seed % 4 == 0) ? 0.6f : 0.0f;
        qn_field *f = NULL;
        qn_error e;
        qn_status st = qn_field_create(m, goals, ng, &o, NULL, &f, &e);
        if (st != QN_OK) fail_msg("seed %u: %s", (unsigned)seed, e.message);
        bellman_ford(m, goals, ng, o.radius, expect);
        for (uint32_t q = 0; q < t.n; q++) {
            double got = (double)qn_field_quad_cost(f, q);
            if (!isfinite(expect[q]) || qn_mesh_quad_blocked(m, q)) {
                assert_false(isfinite(got));
                checked_unreachable++;
                continue;
            }
            if (fabs(got - expect[q]) > 1e-4 * fmax(1.0, expect[q]))
                fail_msg("seed %u quad %u: field %g, Bellman-Ford %g", (unsigned)seed, q, got,
                         expect[q]);
        }
        check_chains(f, m);
        /* Documented size: 28 bytes a quad (8 with a lookahead of 1 or 2),
        ** 4 a portal, 16 a goal, a header. */
        assert_true(qn_field_bytes(f) <= 128 + 28 * (size_t)t.n +
                                             4 * (size_t)qn_mesh_portal_count(m) + 16 * ng);
        qn_field_destroy(f);
        qn_mesh_destroy(m);
    }
    assert_true(checked_unreachable > 0);
}

static float seg_dist(qn_vec2 p, qn_vec2 a, qn_vec2 b) {
    qn_vec2 ab = {b.x - a.x, b.y - a.y};
    float l2 = ab.x * ab.x + ab.y * ab.y;
    float t = l2 > 0 ? ((p.x - a.x) * ab.x + (p.y - a.y) * ab.y) / l2 : 0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    return dist(p, (qn_vec2){a.x + t * ab.x, a.y + t * ab.y});
}

/* The default nearest-point model: never cheaper than the straight line
** from the exit portal to the goal, different from the mid-point model (it
** is not a bound either way: its greedy crossing points can lose on a zigzag
** route), and its exit chains fall strictly to the goal. */
static void test_nearest_point_model(void **state) {
    (void)state;
    static tm_mesh t;
    int tighter = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        uint64_t s = seed * 4099;
        t.n = 0;
        tm_guillotine(&t, &s, 0, 0, 40, 30, 9, 200);
        qn_mesh_desc d = tm_desc(&t);
        qn_mesh *m = NULL;
        assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
        qn_vec2 goal = rect_centre(&t, tm_rand(&s) % t.n);
        qn_field_opts near = {.discrete = true}, mid = {.midpoint_costs = true};
        qn_field *fn = NULL, *fm = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, &near, NULL, &fn, NULL), QN_OK);
        assert_int_equal(qn_field_create(m, &goal, 1, &mid, NULL, &fm, NULL), QN_OK);
        for (uint32_t q = 0; q < t.n; q++) {
            float cn = qn_field_quad_cost(fn, q), cm = qn_field_quad_cost(fm, q);
            assert_int_equal(isfinite(cn), isfinite(cm));
            if (!isfinite(cn) || cn == 0) continue;
            tighter += cn < cm * 0.999f;
            qn_portal p;
            qn_mesh_portal(m, qn_field_quad_exit(fn, q), &p);
            assert_true(cn >= seg_dist(goal, p.p0, p.p1) * (1 - 1e-5f) - 1e-5f);
        }
        check_chains(fn, m);
        qn_field_destroy(fn);
        qn_field_destroy(fm);
        qn_mesh_destroy(m);
    }
    assert_true(tighter > 100); /* it does shorten paths, often */
}

/* A narrow doorway closes for a wide agent. */
static void test_radius_closes_portals(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 4, 4);
    tm_add_rect(&t, 4, 1, 5, 2); /* doorway 1 wide */
    tm_add_rect(&t, 5, 0, 9, 4);
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = {7, 2};
    qn_field *f = NULL;
    qn_field_opts o = {.radius = 0.4f};
    assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
    assert_true(isfinite(qn_field_quad_cost(f, 0)));
    qn_field_destroy(f);
    o.radius = 0.6f;
    assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
    assert_false(isfinite(qn_field_quad_cost(f, 0)));
    assert_false(isfinite(qn_field_quad_cost(f, 1)));
    assert_float_equal(qn_field_quad_cost(f, 2), 0, 0);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

static void test_costs_and_cost_at(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 2, 2);
    tm_add_rect(&t, 2, 0, 4, 2);
    tm_add_rect(&t, 4, 0, 6, 2);
    t.costs[1] = 3;
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = {5, 1};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
    /* portal x=4 mid (4,1): 1 to the goal; portal x=2 mid (2,1): 1 + 3*2 = 7 */
    assert_float_equal(qn_field_quad_cost(f, 2), 0, 0);
    assert_float_equal(qn_field_quad_cost(f, 1), 1, 1e-6);
    assert_float_equal(qn_field_quad_cost(f, 0), 7, 1e-5);
    assert_int_equal(qn_field_quad_next(f, 0), 1);
    assert_int_equal(qn_field_quad_next(f, 1), 2);
    assert_int_equal(qn_field_quad_next(f, 2), QN_NONE);
    assert_float_equal(qn_field_cost_at(f, (qn_vec2){1, 1}, QN_NONE), 8, 1e-5);
    assert_float_equal(qn_field_cost_at(f, (qn_vec2){5, 0}, QN_NONE), 1, 1e-5);
    assert_false(isfinite(qn_field_cost_at(f, (qn_vec2){9, 9}, QN_NONE)));
    assert_false(isfinite(qn_field_quad_cost(f, 99)));
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

static void test_bad_goals(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 2, 2);
    tm_add_rect(&t, 2, 0, 4, 2);
    t.blocked[1] = 1;
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_field *f = (qn_field *)1;
    qn_error e;
    qn_vec2 g[2] = {{1, 1}, {9, 9}};
    assert_int_equal(qn_field_create(m, g, 2, NULL, NULL, &f, &e), QN_E_OUTSIDE);
    assert_null(f);
    assert_int_equal(e.index, 1);
    g[1] = (qn_vec2){3, 1};
    assert_int_equal(qn_field_create(m, g, 2, NULL, NULL, &f, &e), QN_E_BLOCKED);
    g[1] = (qn_vec2){NAN, 1};
    assert_int_equal(qn_field_create(m, g, 2, NULL, NULL, &f, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_create(m, g, 0, NULL, NULL, &f, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_create(m, g, QN_MAX_GOALS + 1, NULL, NULL, &f, &e), QN_E_LIMIT);
    qn_field_opts o = {.radius = -1.0f};
    assert_int_equal(qn_field_create(m, g, 1, &o, NULL, &f, &e), QN_E_INVALID_ARG);
    o.radius = INFINITY;
    assert_int_equal(qn_field_create(m, g, 1, &o, NULL, &f, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_create(NULL, g, 1, NULL, NULL, &f, &e), QN_E_INVALID_ARG);
    qn_field_destroy(NULL);
    qn_mesh_destroy(m);
}

/* Every allocation of a field build failing in turn: QN_E_NOMEM, nothing
** left allocated. Also with quads blocked and a radius, whose build lists
** the corners the blocked quads add, and then with finished portals
** closed as the build goes (on big meshes only unless lowered here). */
static void test_oom(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 3;
    t.n = 0;
    tm_guillotine(&t, &s, 0, 0, 30, 30, 8, 200);
    uint32_t shut_default = qn__spm_shut_min_quads;
    for (int pass = 0; pass < 3; pass++) {
        qn__spm_shut_min_quads = pass == 2 ? 0 : shut_default;
        for (uint32_t q = 1; pass && q < t.n; q++) t.blocked[q] = q % 7 == 0;
        qn_mesh_desc d = tm_desc(&t);
        qn_mesh *m = NULL;
        assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
        qn_vec2 goal = rect_centre(&t, 0);
        qn_field_opts o = {.radius = pass ? 0.1f : 0.0f};
        failalloc fa;
        uint64_t n = 0;
        for (;; n++) {
            qn_allocator a = failalloc_init(&fa, n);
            qn_field *f = NULL;
            qn_status st = qn_field_create(m, &goal, 1, &o, &a, &f, NULL);
            if (st == QN_OK) {
                qn_field_destroy(f);
                assert_int_equal(fa.live, 0);
                break;
            }
            assert_int_equal(st, QN_E_NOMEM);
            assert_null(f);
            assert_int_equal(fa.live, 0);
        }
        assert_true(n >= 3);
        qn_mesh_destroy(m);
    }
    qn__spm_shut_min_quads = shut_default;
}

/* A room 20 x 20 of 2 x 2 quads, each of cost `cost`, into *t. */
static void room_of(tm_mesh *t, float cost) {
    t->n = 0;
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 10; x++) {
            tm_add_rect(t, 2.0f * (float)x, 2.0f * (float)y, 2.0f * (float)x + 2.0f,
                        2.0f * (float)y + 2.0f);
            t->costs[t->n - 1] = cost;
        }
}

/* An exact field on a mesh whose open quads all cost 2: its costs are the
** distances times 2, as the header says (they were the bare distances). */
static void test_exact_common_cost(void **state) {
    (void)state;
    static tm_mesh room;
    room_of(&room, 2.0f);
    qn_mesh_desc d = tm_desc(&room);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = {10.0f, 10.0f};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
    assert_float_equal(qn_field_cost_at(f, (qn_vec2){15.0f, 10.0f}, QN_NONE), 10.0f, 1e-4f);
    /* Quad 0 (0..2 x 0..2): its nearest point (2, 2), 8 * sqrt(2) away. */
    assert_float_equal(qn_field_quad_cost(f, 0), 2.0f * 11.3137f, 1e-3f);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

/* qn_field_region_radius: the cost within which the field's ground covers
** an area. In a room the ground within R of a goal in its middle is a disc;
** along a corridor, a strip as long as R; the cost is the distance times
** the quads' cost. */
static void test_region_radius(void **state) {
    (void)state;
    static tm_mesh room, lane;
    lane.n = 0;
    for (int x = 0; x < 100; x++)
        tm_add_rect(&lane, (float)x, 0.0f, (float)x + 1.0f, 1.0f);
    for (int pass = 0; pass < 3; pass++) { /* exact, discrete, exact at cost 2 */
        room_of(&room, pass == 2 ? 2.0f : 1.0f);
        qn_mesh_desc d = tm_desc(&room);
        qn_mesh *m = NULL;
        assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
        qn_vec2 goal = {10.0f, 10.0f};
        qn_field_opts o = {.discrete = pass == 1};
        qn_field *f = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
        float R = -1.0f, scale = pass == 2 ? 2.0f : 1.0f;
        assert_int_equal(qn_field_region_radius(f, 3.14159265f * 25.0f, &R), QN_OK);
        if (pass == 1) { /* the portal model's costs: estimates near the distance */
            assert_true(R >= 4.5f && R <= 6.0f);
        } else {
            assert_float_equal(R, 5.0f * scale, 0.15f * scale);
        }
        /* More than the room: all of it, out to its corners. */
        assert_int_equal(qn_field_region_radius(f, 1000.0f, &R), QN_OK);
        if (pass != 1) assert_float_equal(R, 14.142f * scale, 0.3f * scale);
        qn_field_destroy(f);
        qn_mesh_destroy(m);
    }
    qn_mesh_desc d = tm_desc(&lane);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = {0.5f, 0.5f};
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, NULL, &a, &f, NULL), QN_OK);
    float R = -1.0f;
    /* 30 square units of a lane 1 wide: about 30 along it, where a disc of
    ** open ground would take 3.1. */
    assert_int_equal(qn_field_region_radius(f, 30.0f, &R), QN_OK);
    assert_float_equal(R, 29.5f, 0.5f);
    assert_int_equal(qn_field_region_radius(f, 500.0f, &R), QN_OK);
    assert_float_equal(R, 99.5f, 0.5f);
    /* For units of radius 0.25, only the middle half of the lane has room
    ** (to the lattice's rows: 5 of 9): about twice as far. */
    qn_field_opts wide = {.radius = 0.25f};
    qn_field *fw = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &wide, NULL, &fw, NULL), QN_OK);
    assert_int_equal(qn_field_region_radius(fw, 30.0f, &R), QN_OK);
    assert_true(R > 50.0f && R < 62.0f);
    qn_field_destroy(fw);
    /* Out of memory at each allocation in turn: QN_E_NOMEM, nothing kept. */
    int64_t base = atomic_load(&fa.live);
    uint64_t n = 0;
    for (;; n++) {
        fa.fail_at = atomic_load(&fa.calls) + n;
        qn_status st = qn_field_region_radius(f, 30.0f, &R);
        assert_int_equal(atomic_load(&fa.live), base);
        if (st == QN_OK) break;
        assert_int_equal(st, QN_E_NOMEM);
        assert_float_equal(R, 0.0f, 0.0f);
    }
    assert_true(n >= 3);
    fa.fail_at = UINT64_MAX;
    assert_float_equal(R, 29.5f, 0.5f);
    /* Bad arguments. */
    assert_int_equal(qn_field_region_radius(NULL, 30.0f, &R), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_region_radius(f, 30.0f, NULL), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_region_radius(f, 0.0f, &R), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_region_radius(f, -1.0f, &R), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_region_radius(f, NAN, &R), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_region_radius(f, INFINITY, &R), QN_E_INVALID_ARG);
    qn_field_destroy(f);
    assert_int_equal(atomic_load(&fa.live), 0);
    qn_mesh_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_bellman_ford),
        cmocka_unit_test(test_nearest_point_model),
        cmocka_unit_test(test_radius_closes_portals),
        cmocka_unit_test(test_costs_and_cost_at),
        cmocka_unit_test(test_bad_goals),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_exact_common_cost),
        cmocka_unit_test(test_region_radius),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
