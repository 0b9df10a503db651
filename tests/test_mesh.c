/* test_mesh.c: mesh validation, adjacency (T-junctions), point location,
** nearest quad, segment checks, and out-of-memory behaviour. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "internal.h"
#include "quadnav.h"
#include "testmesh.h"

static qn_mesh *build(const tm_mesh *t) {
    qn_mesh_desc d = tm_desc(t);
    qn_mesh *m = NULL;
    qn_error e;
    qn_status st = qn_mesh_create(&d, NULL, &m, &e);
    if (st != QN_OK) fail_msg("mesh_create: %s: %s", qn_status_name(st), e.message);
    return m;
}

static qn_status build_err(const qn_mesh_desc *d, qn_error *e) {
    qn_mesh *m = (qn_mesh *)1;
    qn_status st = qn_mesh_create(d, NULL, &m, e);
    assert_null(m);
    assert_int_equal(e->code, st);
    return st;
}

/* Finds the portal between quads a and b; QN_NONE if none. */
static uint32_t find_portal(const qn_mesh *m, uint32_t a, uint32_t b, qn_portal *out) {
    for (uint32_t i = 0; i < qn_mesh_portal_count(m); i++) {
        qn_portal p = {0};
        qn_mesh_portal(m, i, &p);
        if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) {
            if (out) *out = p;
            return i;
        }
    }
    return QN_NONE;
}

static bool same_segment(qn_portal p, float x0, float y0, float x1, float y1) {
    return (p.p0.x == x0 && p.p0.y == y0 && p.p1.x == x1 && p.p1.y == y1) ||
           (p.p0.x == x1 && p.p0.y == y1 && p.p1.x == x0 && p.p1.y == y0);
}

/* Meshes a and b have the same portals in the same order (each segment
** with its ends in the same order when in_order, else either way round). */
static void assert_same_portals(const qn_mesh *a, const qn_mesh *b, bool in_order) {
    assert_int_equal(qn_mesh_portal_count(a), qn_mesh_portal_count(b));
    for (uint32_t i = 0; i < qn_mesh_portal_count(a); i++) {
        qn_portal pa, pb;
        qn_mesh_portal(a, i, &pa);
        qn_mesh_portal(b, i, &pb);
        assert_int_equal(pa.a, pb.a);
        assert_int_equal(pa.b, pb.b);
        if (in_order)
            assert_true(pa.p0.x == pb.p0.x && pa.p0.y == pb.p0.y && pa.p1.x == pb.p1.x &&
                        pa.p1.y == pb.p1.y);
        else
            assert_true(same_segment(pa, pb.p0.x, pb.p0.y, pb.p1.x, pb.p1.y));
    }
}

static void test_two_squares(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 1, 1);
    tm_add_rect(&t, 1, 0, 2, 1);
    qn_mesh *m = build(&t);
    assert_int_equal(qn_mesh_quad_count(m), 2);
    assert_int_equal(qn_mesh_portal_count(m), 1);
    qn_portal p = {0};
    assert_int_equal(qn_mesh_portal(m, 0, &p), QN_OK);
    assert_int_equal(p.a, 0);
    assert_int_equal(p.b, 1);
    assert_true(same_segment(p, 1, 0, 1, 1));
    assert_int_equal(qn_mesh_island_count(m), 1);
    qn_rect b = qn_mesh_bounds(m);
    assert_true(b.min.x == 0 && b.min.y == 0 && b.max.x == 2 && b.max.y == 1);
    assert_float_equal(qn_mesh_quad_area(m, 1), 1.0, 1e-6);
    qn_mesh_destroy(m);
}

/* One long edge touching two smaller quads: one portal per overlap, and an
** offset T-junction whose portal is a part of both edges. */
static void test_t_junctions(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 4, 1); /* 0: long */
    tm_add_rect(&t, 0, 1, 1, 2); /* 1 */
    tm_add_rect(&t, 1, 1, 3, 2); /* 2 */
    tm_add_rect(&t, 3, 1.5f, 4, 3); /* 3: sits on quad 4 */
    tm_add_rect(&t, 3, 1, 5, 1.5f); /* 4: sticks out past the end of quad 0 */
    qn_mesh *m = build(&t);
    qn_portal p = {0};
    assert_int_not_equal(find_portal(m, 0, 1, &p), QN_NONE);
    assert_true(same_segment(p, 0, 1, 1, 1));
    assert_int_not_equal(find_portal(m, 0, 2, &p), QN_NONE);
    assert_true(same_segment(p, 1, 1, 3, 1));
    assert_int_not_equal(find_portal(m, 1, 2, &p), QN_NONE);
    assert_true(same_segment(p, 1, 1, 1, 2));
    assert_int_not_equal(find_portal(m, 0, 4, &p), QN_NONE);
    assert_true(same_segment(p, 3, 1, 4, 1)); /* overlap of [3,5] with [0,4] */
    assert_int_not_equal(find_portal(m, 3, 4, &p), QN_NONE);
    assert_true(same_segment(p, 3, 1.5f, 4, 1.5f));
    assert_int_not_equal(find_portal(m, 2, 4, &p), QN_NONE);
    assert_true(same_segment(p, 3, 1, 3, 1.5f));
    assert_int_not_equal(find_portal(m, 2, 3, &p), QN_NONE);
    assert_true(same_segment(p, 3, 1.5f, 3, 2));
    assert_int_equal(qn_mesh_portal_count(m), 7);
    uint32_t list[8], count;
    assert_int_equal(qn_mesh_quad_portals(m, 0, list, 8, &count), QN_OK);
    assert_int_equal(count, 3);
    assert_int_equal(qn_mesh_quad_portals(m, 0, list, 1, &count), QN_E_BUFFER_TOO_SMALL);
    assert_int_equal(count, 3);
    qn_mesh_destroy(m);
}

static void test_corner_touch_is_no_portal(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 1, 1);
    tm_add_rect(&t, 1, 1, 2, 2);
    qn_mesh *m = build(&t);
    assert_int_equal(qn_mesh_portal_count(m), 0);
    assert_int_equal(qn_mesh_island_count(m), 2);
    assert_int_not_equal(qn_mesh_island(m, 0), qn_mesh_island(m, 1));
    qn_mesh_destroy(m);
}

/* Non-axis-aligned quads sharing a slanted edge, plus a triangle with a split
** edge (a fourth vertex on its long side). */
static void test_slanted_and_split_edge(void **state) {
    (void)state;
    /* Two parallelograms sharing the slanted edge (2,0)-(3,2). */
    qn_vec2 v[] = {{0, 0}, {2, 0}, {3, 2}, {1, 2}, {4, 0}, {5, 2}};
    uint32_t q[] = {0, 1, 2, 3, 1, 4, 5, 2};
    qn_mesh_desc d = {0};
    d.vertices = v;
    d.vertex_count = 6;
    d.quads = q;
    d.quad_count = 2;
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_portal p = {0};
    assert_int_not_equal(find_portal(m, 0, 1, &p), QN_NONE);
    assert_true(same_segment(p, 2, 0, 3, 2));
    qn_mesh_destroy(m);
    /* Triangle (0,0),(4,0),(2,2) with its long edge split at (2,0), above two
    ** squares: one portal per square. */
    qn_vec2 v2[] = {{0, 0}, {2, 0}, {4, 0}, {2, 2}, {0, -1}, {2, -1}, {4, -1}};
    uint32_t q2[] = {0, 1, 2, 3, 4, 5, 1, 0, 5, 6, 2, 1};
    d.vertices = v2;
    d.vertex_count = 7;
    d.quads = q2;
    d.quad_count = 3;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    assert_int_not_equal(find_portal(m, 0, 1, &p), QN_NONE);
    assert_true(same_segment(p, 0, 0, 2, 0));
    assert_int_not_equal(find_portal(m, 0, 2, &p), QN_NONE);
    assert_true(same_segment(p, 2, 0, 4, 0));
    qn_mesh_destroy(m);
}

/* ---- validation ---------------------------------------------------------- */

static void test_bad_quads(void **state) {
    (void)state;
    qn_error e;
    qn_vec2 v[] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0.2f, 0.8f}, {2, 0}, {NAN, 0}};
    qn_mesh_desc d = {0};
    d.vertices = v;
    d.vertex_count = 6;
    d.quad_count = 1;
    uint32_t cw[] = {0, 3, 2, 1};
    d.quads = cw;
    assert_int_equal(build_err(&d, &e), QN_E_WINDING);
    assert_int_equal(e.index, 0);
    assert_non_null(strstr(e.message, "quad 0"));
    /* A bow tie (0,0),(2,0),(0,1),(1,1): positive area, crossing edges. */
    uint32_t bow[] = {0, 5, 3, 2};
    d.quads = bow;
    assert_int_equal(build_err(&d, &e), QN_E_NONCONVEX_QUAD);
    uint32_t flat[] = {0, 1, 5, 1};
    d.quads = flat;
    assert_int_equal(build_err(&d, &e), QN_E_DEGENERATE_QUAD);
    uint32_t line[] = {0, 1, 5, 0};
    d.quads = line;
    assert_int_equal(build_err(&d, &e), QN_E_DEGENERATE_QUAD);
    uint32_t range[] = {0, 1, 2, 9};
    d.quads = range;
    assert_int_equal(build_err(&d, &e), QN_E_INDEX_RANGE);
    assert_non_null(strstr(e.message, "vertex index 9"));
    uint32_t ok[] = {0, 1, 2, 3};
    d.quads = ok;
    d.vertex_count = 7;
    assert_int_equal(build_err(&d, &e), QN_E_BAD_NUMBER);
    assert_int_equal(e.index, 6);
    d.vertex_count = 4;
    float cost = 0.5f;
    d.costs = &cost;
    assert_int_equal(build_err(&d, &e), QN_E_BAD_NUMBER);
    cost = NAN;
    assert_int_equal(build_err(&d, &e), QN_E_BAD_NUMBER);
    d.costs = NULL;
    v[2].x = 2e6f;
    assert_int_equal(build_err(&d, &e), QN_E_BAD_NUMBER);
    v[2].x = 1;
    d.quad_count = 0;
    assert_int_equal(build_err(&d, &e), QN_E_INVALID_ARG);
    d.quad_count = QN_MAX_QUADS + 1;
    assert_int_equal(build_err(&d, &e), QN_E_LIMIT);
    assert_int_equal(qn_mesh_create(NULL, NULL, NULL, &e), QN_E_INVALID_ARG);
}

static void test_concave_quad(void **state) {
    (void)state;
    qn_error e;
    qn_vec2 v[] = {{0, 0}, {4, 0}, {1, 1}, {0, 4}};
    uint32_t q[] = {0, 1, 2, 3};
    qn_mesh_desc d = {0};
    d.vertices = v;
    d.vertex_count = 4;
    d.quads = q;
    d.quad_count = 1;
    assert_int_equal(build_err(&d, &e), QN_E_NONCONVEX_QUAD);
}

static void test_overlaps(void **state) {
    (void)state;
    qn_error e;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 2, 2);
    tm_add_rect(&t, 1, 1, 3, 3);
    qn_mesh_desc d = tm_desc(&t);
    assert_int_equal(build_err(&d, &e), QN_E_OVERLAP);
    assert_non_null(strstr(e.message, "quad 1 overlaps quad 0"));
    t.n = 0;
    tm_add_rect(&t, 0, 0, 10, 10);
    tm_add_rect(&t, 20, 0, 21, 1);
    tm_add_rect(&t, 4, 4, 5, 5); /* inside quad 0 */
    d = tm_desc(&t);
    assert_int_equal(build_err(&d, &e), QN_E_OVERLAP);
    assert_int_equal(e.index, 2);
    t.n = 0;
    tm_add_rect(&t, 0, 0, 2, 2);
    tm_add_rect(&t, 0, 0, 2, 2); /* identical */
    d = tm_desc(&t);
    assert_int_equal(build_err(&d, &e), QN_E_OVERLAP);
}

static void test_links(void **state) {
    (void)state;
    qn_error e;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 1, 1);
    tm_add_rect(&t, 1, 0, 2, 1);
    tm_add_rect(&t, 2, 0, 3, 1);
    tm_add_rect(&t, 3, 1, 4, 2); /* corner only with quad 2 */
    qn_mesh_desc d = tm_desc(&t);
    d.has_links = true;
    qn_link l1[] = {{0, 1}};
    d.links = l1;
    d.link_count = 1;
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, &e), QN_OK);
    assert_int_equal(qn_mesh_portal_count(m), 1); /* 1-2 touch, but are not linked */
    assert_int_equal(qn_mesh_island_count(m), 3);
    qn_mesh_destroy(m);
    qn_link l2[] = {{0, 1}, {1, 7}};
    d.links = l2;
    d.link_count = 2;
    assert_int_equal(build_err(&d, &e), QN_E_LINK_TARGET);
    assert_int_equal(e.index, 1);
    qn_link l3[] = {{0, 2}};
    d.links = l3;
    d.link_count = 1;
    assert_int_equal(build_err(&d, &e), QN_E_LINK_NO_EDGE);
    qn_link l4[] = {{2, 3}};
    d.links = l4;
    assert_int_equal(build_err(&d, &e), QN_E_LINK_NO_EDGE);
    qn_link l5[] = {{0, 1}, {1, 2}, {1, 0}};
    d.links = l5;
    d.link_count = 3;
    assert_int_equal(build_err(&d, &e), QN_E_LINK_DUPLICATE);
    assert_int_equal(e.index, 2);
    qn_link l6[] = {{1, 1}};
    d.links = l6;
    d.link_count = 1;
    assert_int_equal(build_err(&d, &e), QN_E_LINK_NO_EDGE);
}

/* ---- random meshes against a brute-force adjacency ----------------------- */

static float overlap_len(float a0, float a1, float b0, float b1, float *lo, float *hi) {
    *lo = a0 > b0 ? a0 : b0;
    *hi = a1 < b1 ? a1 : b1;
    return *hi - *lo;
}

/* Axis-aligned rectangles: brute-force shared segment of quads i and j. */
static bool rect_portal(const tm_mesh *t, uint32_t i, uint32_t j, float s[4]) {
    const qn_vec2 *a = &t->verts[4 * i], *b = &t->verts[4 * j];
    float lo, hi;
    if (a[1].x == b[0].x || a[0].x == b[1].x) {
        float x = a[1].x == b[0].x ? a[1].x : a[0].x;
        if (overlap_len(a[0].y, a[2].y, b[0].y, b[2].y, &lo, &hi) > 0) {
            s[0] = x, s[1] = lo, s[2] = x, s[3] = hi;
            return true;
        }
    }
    if (a[2].y == b[0].y || a[0].y == b[2].y) {
        float y = a[2].y == b[0].y ? a[2].y : a[0].y;
        if (overlap_len(a[0].x, a[1].x, b[0].x, b[1].x, &lo, &hi) > 0) {
            s[0] = lo, s[1] = y, s[2] = hi, s[3] = y;
            return true;
        }
    }
    return false;
}

static void test_random_adjacency(void **state) {
    (void)state;
    static tm_mesh t;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        uint64_t s = seed;
        t.n = 0;
        tm_guillotine(&t, &s, 0, 0, 40, 30, 9, 300);
        qn_mesh *m = build(&t);
        uint32_t expect = 0;
        for (uint32_t i = 0; i < t.n; i++)
            for (uint32_t j = i + 1; j < t.n; j++) {
                float seg[4];
                if (!rect_portal(&t, i, j, seg)) continue;
                expect++;
                qn_portal p = {0};
                if (find_portal(m, i, j, &p) == QN_NONE) fail_msg("seed %u: %u-%u missing", (unsigned)seed, i, j);
                assert_true(same_segment(p, seg[0], seg[1], seg[2], seg[3]));
            }
        assert_int_equal(qn_mesh_portal_count(m), expect);
        /* Location: every quad's centre is found in that quad. */
        for (uint32_t q = 0; q < t.n; q++) {
            qn_vec2 c = {(t.verts[4 * q].x + t.verts[4 * q + 2].x) / 2,
                         (t.verts[4 * q].y + t.verts[4 * q + 2].y) / 2};
            uint32_t found;
            assert_int_equal(qn_mesh_locate(m, c, QN_NONE, &found), QN_OK);
            assert_int_equal(found, q);
        }
        qn_mesh_destroy(m);
    }
}

/* A mesh of rectangles pairs its edges by sweeping lines (twins included);
** any other mesh by hashing exact twins and sweeping buckets. Both must give
** the same portals, and the same status, on rectangle levels with twins,
** T-junctions, corners moved a hair (less and more than the tolerance),
** duplicated and overlapping rectangles and slivers. The general path is
** forced by one kite apart from the rest (it touches nothing). */
static void test_rect_pairing_matches_general(void **state) {
    (void)state;
    static tm_mesh t;
    static const float hair[4] = {1e-7f, 1e-6f, 1e-5f, 1e-3f};
    uint32_t built = 0, refused = 0;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        uint64_t s = seed * 7919;
        t.n = 0;
        tm_guillotine(&t, &s, 0, 0, 24, 18, 8, 200);
        static const float scales[4] = {1.0f, 1.0f, 0.1f, 3.7f};
        static const float offs[5] = {0.0f, 0.0f, 0.5f, 1000.25f, 123456.0f};
        float scale = scales[tm_rand(&s) % 4], off = offs[tm_rand(&s) % 5];
        for (uint32_t v = 0; v < 4 * t.n; v++)
            t.verts[v].x = t.verts[v].x * scale + off, t.verts[v].y = t.verts[v].y * scale + off;
        /* A hair off: one rectangle in 20 gets each side moved a little (a
        ** rectangle still), by 1e-7 to 1e-3 of its coordinate. */
        for (uint32_t q = 0; q < t.n; q++) {
            if (tm_rand(&s) % 20 != 0) continue;
            qn_vec2 *c = &t.verts[4 * q];
            float side[4] = {c[0].x, c[0].y, c[2].x, c[2].y};
            for (int k = 0; k < 4; k++) {
                float d = hair[tm_rand(&s) % 4] * fmaxf(1.0f, fabsf(side[k]));
                side[k] += tm_rand(&s) % 2 ? d : -d;
            }
            if (!(side[0] < side[2]) || !(side[1] < side[3])) continue;
            c[0] = (qn_vec2){side[0], side[1]}, c[1] = (qn_vec2){side[2], side[1]};
            c[2] = (qn_vec2){side[2], side[3]}, c[3] = (qn_vec2){side[0], side[3]};
        }
        if (tm_rand(&s) % 5 == 0 && t.n < 199) { /* a duplicate or an overlap */
            const qn_vec2 *c = &t.verts[4 * (tm_rand(&s) % t.n)];
            float w = (c[1].x - c[0].x) * (tm_rand(&s) % 2 ? 1.0f : 1.5f);
            tm_add_rect(&t, c[0].x, c[0].y, c[0].x + w, c[2].y);
        }
        if (tm_rand(&s) % 8 == 0 && t.n < 199) { /* a sliver on a rectangle's top */
            const qn_vec2 *c = &t.verts[4 * (tm_rand(&s) % t.n)];
            tm_add_rect(&t, c[0].x, c[2].y, c[1].x, c[2].y + 1e-4f * (1.0f + off));
        }
        qn_mesh_desc d = tm_desc(&t);
        qn_mesh *a = NULL, *b = NULL;
        qn_error ea, eb;
        qn_status sa = qn_mesh_create(&d, NULL, &a, &ea);
        /* The same with a kite 10 units past the top right corner. */
        float far = 24.0f * scale + off + 10.0f + 1e-3f * off;
        uint32_t n = t.n, v = 4 * n;
        t.verts[v + 0] = (qn_vec2){far, far};
        t.verts[v + 1] = (qn_vec2){far + 2.0f, far + 1.0f};
        t.verts[v + 2] = (qn_vec2){far + 1.0f, far + 3.0f};
        t.verts[v + 3] = (qn_vec2){far - 0.5f, far + 1.0f};
        for (uint32_t k = 0; k < 4; k++) t.quads[v + k] = v + k;
        t.costs[n] = 1.0f;
        t.blocked[n] = 0;
        t.n = n + 1;
        d = tm_desc(&t);
        qn_status sb = qn_mesh_create(&d, NULL, &b, &eb);
        t.n = n;
        if (sa != sb)
            fail_msg("seed %u: rectangles %s (%s), general %s (%s)", (unsigned)seed,
                     qn_status_name(sa), ea.message, qn_status_name(sb), eb.message);
        if (sa == QN_OK) {
            built++;
            assert_same_portals(a, b, false);
        } else {
            refused++;
        }
        qn_mesh_destroy(a);
        qn_mesh_destroy(b);
    }
    /* Both kinds of outcome were exercised. */
    assert_true(built > 150);
    assert_true(refused > 100);
}

/* A big mesh's portal candidates are sorted in rounds, a range of quads a
** round (so the list is never held twice): forced on small meshes here,
** the portals must be those of one round, in the same order, for meshes of
** rectangles (lines swept) and others (buckets), with split edges that
** touch one neighbour along two pieces. */
static void test_pair_rounds_same(void **state) {
    (void)state;
    static tm_mesh t;
    uint32_t saved = qn__pair_rounds_above, compared = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t s = seed * 104729;
        t.n = 0;
        tm_guillotine(&t, &s, 0, 0, 30, 20, 6, 180);
        if (seed % 2 == 0 && t.n < 199) { /* a kite apart: the general road */
            uint32_t n = t.n, v = 4 * n;
            const qn_vec2 k[4] = {{40, 40}, {42, 41}, {41, 43}, {39.5f, 41}};
            for (uint32_t i = 0; i < 4; i++)
                t.verts[v + i] = k[i], t.quads[v + i] = v + i;
            t.costs[n] = 1.0f;
            t.blocked[n] = 0;
            t.n = n + 1;
        }
        qn_mesh_desc d = tm_desc(&t);
        qn_mesh *a = NULL, *b = NULL;
        qn__pair_rounds_above = saved;
        qn_status sa = qn_mesh_create(&d, NULL, &a, NULL);
        qn__pair_rounds_above = 0;
        qn_status sb = qn_mesh_create(&d, NULL, &b, NULL);
        qn__pair_rounds_above = saved;
        assert_int_equal(sa, sb);
        if (sa == QN_OK) {
            compared++;
            assert_same_portals(a, b, true);
        }
        qn_mesh_destroy(a);
        qn_mesh_destroy(b);
    }
    assert_true(compared > 150);
}

/* ---- queries ------------------------------------------------------------- */

static void test_locate(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 2, 2);
    tm_add_rect(&t, 2, 0, 4, 2);
    tm_add_rect(&t, 0, 2, 4, 3);
    qn_mesh *m = build(&t);
    uint32_t q;
    assert_int_equal(qn_mesh_locate(m, (qn_vec2){1, 1}, QN_NONE, &q), QN_OK);
    assert_int_equal(q, 0);
    assert_int_equal(qn_mesh_locate(m, (qn_vec2){3, 2.5f}, QN_NONE, &q), QN_OK);
    assert_int_equal(q, 2);
    /* On the shared edge x = 2: the lowest index, unless the hint holds it. */
    assert_int_equal(qn_mesh_locate(m, (qn_vec2){2, 1}, QN_NONE, &q), QN_OK);
    assert_int_equal(q, 0);
    assert_int_equal(qn_mesh_locate(m, (qn_vec2){2, 1}, 1, &q), QN_OK);
    assert_int_equal(q, 1);
    assert_int_equal(qn_mesh_locate(m, (qn_vec2){2, 2}, QN_NONE, &q), QN_OK);
    assert_int_equal(q, 0);
    assert_int_equal(qn_mesh_locate(m, (qn_vec2){3, 1}, 0, &q), QN_OK); /* wrong hint */
    assert_int_equal(q, 1);
    assert_int_equal(qn_mesh_locate(m, (qn_vec2){5, 1}, QN_NONE, &q), QN_E_OUTSIDE);
    assert_int_equal(q, QN_NONE);
    assert_int_equal(qn_mesh_locate(m, (qn_vec2){NAN, 1}, QN_NONE, &q), QN_E_INVALID_ARG);
    qn_vec2 c;
    assert_int_equal(qn_mesh_nearest(m, (qn_vec2){5, 1}, false, &q, &c), QN_OK);
    assert_int_equal(q, 1);
    assert_float_equal(c.x, 4, 1e-6);
    assert_float_equal(c.y, 1, 1e-6);
    assert_int_equal(qn_mesh_nearest(m, (qn_vec2){1, 1}, false, &q, &c), QN_OK);
    assert_int_equal(q, 0);
    assert_int_equal(qn_mesh_nearest(m, (qn_vec2){-100, 2.5f}, false, &q, &c), QN_OK);
    assert_int_equal(q, 2);
    qn_mesh_destroy(m);
}

static void test_nearest_random(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 99;
    t.n = 0;
    tm_guillotine(&t, &s, 0, 0, 50, 50, 10, 400);
    t.blocked[3] = 1;
    qn_mesh *m = build(&t);
    for (int i = 0; i < 500; i++) {
        qn_vec2 p = {(float)(tm_rand(&s) % 7000) / 100.0f - 10.0f,
                     (float)(tm_rand(&s) % 7000) / 100.0f - 10.0f};
        uint32_t q;
        qn_vec2 c;
        assert_int_equal(qn_mesh_nearest(m, p, true, &q, &c), QN_OK);
        assert_false(qn_mesh_quad_blocked(m, q));
        float best = INFINITY;
        for (uint32_t k = 0; k < t.n; k++) {
            if (t.blocked[k]) continue;
            const qn_vec2 *r = &t.verts[4 * k];
            float dx = fmaxf(fmaxf(r[0].x - p.x, 0), p.x - r[2].x);
            float dy = fmaxf(fmaxf(r[0].y - p.y, 0), p.y - r[2].y);
            best = fminf(best, sqrtf(dx * dx + dy * dy));
        }
        float got = sqrtf((c.x - p.x) * (c.x - p.x) + (c.y - p.y) * (c.y - p.y));
        assert_float_equal(got, best, 1e-3);
    }
    qn_mesh_destroy(m);
}

static void test_segment_inside(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 4, 2); /* 0 */
    tm_add_rect(&t, 2, 2, 4, 6); /* 1: below the right half of 0 */
    tm_add_rect(&t, 4, 0, 6, 2); /* 2: blocked */
    t.blocked[2] = 1;
    qn_mesh *m = build(&t);
    qn_vec2 hit;
    assert_int_equal(qn_mesh_segment_inside(m, (qn_vec2){1, 1}, (qn_vec2){3, 1}, QN_NONE, &hit), QN_OK);
    assert_int_equal(qn_mesh_segment_inside(m, (qn_vec2){3, 1}, (qn_vec2){3, 5}, QN_NONE, &hit), QN_OK);
    /* Cuts the wall corner at (2, 2). */
    assert_int_equal(qn_mesh_segment_inside(m, (qn_vec2){0.5f, 1}, (qn_vec2){2.5f, 4}, QN_NONE, &hit),
                     QN_E_BLOCKED);
    assert_float_equal(hit.y, 2, 1e-3);
    /* Into the blocked quad. */
    assert_int_equal(qn_mesh_segment_inside(m, (qn_vec2){3, 1}, (qn_vec2){5, 1}, QN_NONE, &hit),
                     QN_E_BLOCKED);
    assert_float_equal(hit.x, 4, 1e-3);
    assert_int_equal(qn_mesh_segment_inside(m, (qn_vec2){-1, 1}, (qn_vec2){1, 1}, QN_NONE, &hit),
                     QN_E_OUTSIDE);
    qn_mesh_destroy(m);
}

/* A segment that crosses a T-junction a hair's breadth from the point where
** two portals meet is still inside (it once picked the wrong portal). */
static void test_segment_grazes_t_junction(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 14, 44, 26, 60);
    tm_add_rect(&t, 26, 52, 30, 56);
    tm_add_rect(&t, 26, 56, 36, 60);
    qn_mesh *m = build(&t);
    qn_vec2 hit;
    assert_int_equal(qn_mesh_segment_inside(m, (qn_vec2){16.7394f, 52.2548f},
                                            (qn_vec2){29.6379f, 57.4716f}, QN_NONE, &hit),
                     QN_OK);
    assert_int_equal(qn_mesh_segment_inside(m, (qn_vec2){16.7394f, 52.2548f},
                                            (qn_vec2){29.6379f, 55.9f}, QN_NONE, &hit),
                     QN_OK);
    qn_mesh_destroy(m);
}

/* ---- out of memory --------------------------------------------------------- */

static void test_oom(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 5;
    t.n = 0;
    tm_guillotine(&t, &s, 0, 0, 30, 30, 8, 200);
    qn_mesh_desc d = tm_desc(&t);
    failalloc fa;
    uint64_t n = 0;
    for (;; n++) {
        qn_allocator a = failalloc_init(&fa, n);
        qn_mesh *m = NULL;
        qn_status st = qn_mesh_create(&d, &a, &m, NULL);
        if (st == QN_OK) {
            assert_true(fa.live > 0);
            assert_int_equal((int64_t)qn_mesh_bytes(m) > 0, 1);
            qn_mesh_destroy(m);
            assert_int_equal(fa.live, 0);
            break;
        }
        assert_int_equal(st, QN_E_NOMEM);
        assert_null(m);
        assert_int_equal(fa.live, 0);
    }
    assert_true(n > 5);
}

static uint32_t uf_find(uint32_t *up, uint32_t x) {
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

/* The islands of m match components worked out here (union-find over the
** portals between open quads): the same partition, blocked quads none. */
static void islands_match(const qn_mesh *m) {
    uint32_t n = qn_mesh_quad_count(m), np = qn_mesh_portal_count(m);
    uint32_t *up = malloc(n * sizeof *up), *id = malloc(n * sizeof *id), count = 0;
    assert_non_null(up);
    assert_non_null(id);
    for (uint32_t q = 0; q < n; q++)
        up[q] = q, id[q] = QN_NONE;
    for (uint32_t e = 0; e < np; e++) {
        qn_portal p;
        assert_int_equal(qn_mesh_portal(m, e, &p), QN_OK);
        if (!qn_mesh_quad_blocked(m, p.a) && !qn_mesh_quad_blocked(m, p.b))
            up[uf_find(up, p.a)] = uf_find(up, p.b);
    }
    for (uint32_t q = 0; q < n; q++) {
        uint32_t isl = qn_mesh_island(m, q);
        if (qn_mesh_quad_blocked(m, q)) {
            assert_int_equal(isl, QN_NONE);
            continue;
        }
        assert_true(isl < qn_mesh_island_count(m));
        uint32_t r = uf_find(up, q);
        if (id[r] == QN_NONE) id[r] = isl, count++;
        assert_int_equal(id[r], isl); /* one island per component */
    }
    assert_int_equal(count, qn_mesh_island_count(m)); /* and one component per island */
    free(up);
    free(id);
}

/* Blocking a list of quads at once leaves the mesh as blocking them one at
** a time does (flags, islands, island count, version), for lists with
** repeats, then unblocking part of them, and the islands are the mesh's
** components; a bad index changes nothing. */
static void test_block_many(void **state) {
    (void)state;
    uint64_t s = 11;
    int meshes = 0;
    for (int i = 0; i < 30; i++) {
        uint32_t w, h;
        qn_grid *g;
        qn_mesh *a, *b;
        if (!tm_random_grid(&s, 40, &g, &a, &w, &h)) continue;
        assert_int_equal(qn_mesh_from_grid(g, NULL, &b, NULL), QN_OK);
        uint32_t n = qn_mesh_quad_count(a), list[64];
        for (int round = 0; round < 4; round++) {
            bool block = round % 2 == 0;
            size_t k = 1 + tm_rand(&s) % 64;
            for (size_t j = 0; j < k; j++)
                list[j] = j > 0 && tm_rand(&s) % 8 == 0 ? list[j - 1] : tm_rand(&s) % n;
            assert_int_equal(qn_mesh_set_quads_blocked(a, list, k, block), QN_OK);
            for (size_t j = 0; j < k; j++)
                assert_int_equal(qn_mesh_set_quad_blocked(b, list[j], block), QN_OK);
            assert_true(qn_mesh_version(a) == qn_mesh_version(b));
            islands_match(a);
            assert_int_equal(qn_mesh_island_count(a), qn_mesh_island_count(b));
            for (uint32_t q = 0; q < n; q++) {
                assert_int_equal(qn_mesh_quad_blocked(a, q), qn_mesh_quad_blocked(b, q));
                assert_int_equal(qn_mesh_island(a, q), qn_mesh_island(b, q));
            }
        }
        uint64_t v = qn_mesh_version(a);
        uint32_t bad[2] = {n / 2, n};
        assert_int_equal(qn_mesh_set_quads_blocked(a, bad, 2, !qn_mesh_quad_blocked(a, n / 2)),
                         QN_E_INVALID_ARG);
        assert_true(qn_mesh_version(a) == v);
        assert_int_equal(qn_mesh_set_quads_blocked(a, NULL, 1, true), QN_E_INVALID_ARG);
        assert_int_equal(qn_mesh_set_quads_blocked(a, NULL, 0, true), QN_OK);
        assert_int_equal(qn_mesh_set_quads_blocked(NULL, bad, 1, true), QN_E_INVALID_ARG);
        qn_mesh_destroy(a);
        qn_mesh_destroy(b);
        qn_grid_destroy(g);
        meshes++;
    }
    assert_true(meshes > 20);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_squares),
        cmocka_unit_test(test_t_junctions),
        cmocka_unit_test(test_corner_touch_is_no_portal),
        cmocka_unit_test(test_slanted_and_split_edge),
        cmocka_unit_test(test_bad_quads),
        cmocka_unit_test(test_concave_quad),
        cmocka_unit_test(test_overlaps),
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_random_adjacency),
        cmocka_unit_test(test_rect_pairing_matches_general),
        cmocka_unit_test(test_pair_rounds_same),
        cmocka_unit_test(test_locate),
        cmocka_unit_test(test_nearest_random),
        cmocka_unit_test(test_segment_inside),
        cmocka_unit_test(test_segment_grazes_t_junction),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_block_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
