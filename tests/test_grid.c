/* test_grid.c: grid mode. Integration fields against independent searches
** (BFS, brute-force Bellman-Ford), the corner rule, the flow fields, early
** exit, sampling statuses, and out-of-memory behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "internal.h"
#include "sim.h"

#define SQRT2 1.41421356237309504880
#define DINF ((double)INFINITY)

static const int dx8[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int dy8[8] = {0, 1, 1, 1, 0, -1, -1, -1};

/* Deterministic generator, so failures can be replayed. */
static uint32_t rng_next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* A random test grid: walls with probability wall_pct, other costs 1 or in
** [1, max_cost]. */
typedef struct tgrid {
    uint32_t w, h;
    uint8_t *c;
} tgrid;

static tgrid random_grid(uint64_t *rng, uint32_t w, uint32_t h, uint32_t wall_pct,
                         uint32_t max_cost) {
    tgrid t = {w, h, malloc((size_t)w * h)};
    assert_non_null(t.c);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        bool wall = rng_next(rng) % 100 < wall_pct;
        t.c[i] = (uint8_t)(wall ? 255u : 1u + rng_next(rng) % max_cost);
    }
    return t;
}

static uint8_t tcost(const tgrid *t, int x, int y) {
    if (x < 0 || y < 0 || x >= (int)t->w || y >= (int)t->h) return 255;
    return t->c[(size_t)y * t->w + (size_t)x];
}

/* Is the move from (x, y) in direction k legal: target passable and, for a
** diagonal, both orthogonal cells passable. */
static bool legal(const tgrid *t, int x, int y, int k, bool eight) {
    if ((k & 1) && !eight) return false;
    if (tcost(t, x + dx8[k], y + dy8[k]) == 255) return false;
    if (k & 1) return tcost(t, x + dx8[k], y) != 255 && tcost(t, x, y + dy8[k]) != 255;
    return true;
}

static qn_grid *make_grid(const tgrid *t) {
    qn_grid_desc d = {t->w, t->h, t->c, 0.0f, {0, 0}};
    qn_grid *g;
    qn_error e;
    assert_int_equal(qn_grid_create(&d, NULL, &g, &e), QN_OK);
    return g;
}

static qn_grid_field *make_field(const qn_grid *g, const uint32_t *goals, uint32_t n,
                                 qn_connectivity conn) {
    qn_grid_field_opts o = {conn, false, 0, false};
    qn_grid_field *f;
    qn_error e;
    assert_int_equal(qn_grid_field_create(g, goals, n, &o, NULL, &f, &e), QN_OK);
    return f;
}

/* A random passable cell, or UINT32_MAX if the grid has none. */
static uint32_t random_open_cell(uint64_t *rng, const tgrid *t) {
    size_t n = (size_t)t->w * t->h;
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t i = rng_next(rng) % (uint32_t)n;
        if (t->c[i] != 255) return i;
    }
    for (size_t i = 0; i < n; i++)
        if (t->c[i] != 255) return (uint32_t)i;
    return UINT32_MAX;
}

/* Reference: Bellman-Ford to a fixed point. A cell's value is the cheapest
** sum over moves of length * cost of the cell entered. */
static void bellman_ford(const tgrid *t, const uint32_t *goals, uint32_t ng, bool eight,
                         double *dist) {
    size_t n = (size_t)t->w * t->h;
    for (size_t i = 0; i < n; i++) dist[i] = DINF;
    for (uint32_t i = 0; i < ng; i++) dist[goals[i]] = 0.0;
    for (bool changed = true; changed;) {
        changed = false;
        for (int y = 0; y < (int)t->h; y++)
            for (int x = 0; x < (int)t->w; x++) {
                size_t i = (size_t)y * t->w + (size_t)x;
                if (t->c[i] == 255) continue;
                for (int k = 0; k < 8; k++) {
                    if (!legal(t, x, y, k, eight)) continue;
                    size_t j = (size_t)(y + dy8[k]) * t->w + (size_t)(x + dx8[k]);
                    double v = dist[j] + (k & 1 ? SQRT2 : 1.0) * t->c[j];
                    if (v < dist[i] - 1e-12 * v) {
                        dist[i] = v;
                        changed = true;
                    }
                }
            }
    }
}

static bool near(double a, double b) {
    if (a == DINF || b == DINF) return a == b;
    return fabs(a - b) <= 1e-9 * (1.0 + fabs(b));
}

/* ---- creation and accessors ------------------------------------------------ */

static void test_grid_create_errors(void **state) {
    (void)state;
    uint8_t c[6] = {1, 1, 1, 1, 1, 1};
    qn_grid_desc d = {3, 2, c, 1.0f, {0, 0}};
    qn_grid *g = (qn_grid *)1;
    qn_error e;
    assert_int_equal(qn_grid_create(NULL, NULL, &g, &e), QN_E_INVALID_ARG);
    assert_null(g);
    d.width = 0;
    assert_int_equal(qn_grid_create(&d, NULL, &g, &e), QN_E_INVALID_ARG);
    d.width = QN_MAX_GRID_SIDE + 1;
    assert_int_equal(qn_grid_create(&d, NULL, &g, &e), QN_E_LIMIT);
    d.width = QN_MAX_GRID_SIDE;
    d.height = QN_MAX_GRID_SIDE; /* 2^28 cells > QN_MAX_GRID_CELLS, checked before reading */
    assert_int_equal(qn_grid_create(&d, NULL, &g, &e), QN_E_LIMIT);
    d.width = 3;
    d.height = 2;
    d.cell_size = NAN;
    assert_int_equal(qn_grid_create(&d, NULL, &g, &e), QN_E_BAD_NUMBER);
    d.cell_size = -1.0f;
    assert_int_equal(qn_grid_create(&d, NULL, &g, &e), QN_E_BAD_NUMBER);
    d.cell_size = 1.0f;
    d.origin.x = INFINITY;
    assert_int_equal(qn_grid_create(&d, NULL, &g, &e), QN_E_BAD_NUMBER);
    d.origin.x = 0;
    c[4] = 0;
    assert_int_equal(qn_grid_create(&d, NULL, &g, &e), QN_E_BAD_NUMBER);
    assert_int_equal(e.index, 4);
    assert_non_null(strstr(e.message, "(1, 1)"));
    assert_null(g);
    qn_grid_destroy(NULL);
}

static void test_grid_accessors(void **state) {
    (void)state;
    uint8_t c[6] = {1, 2, 255, 4, 5, 6};
    qn_grid_desc d = {3, 2, c, 0.0f, {10.0f, -4.0f}};
    qn_grid *g;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    c[0] = 99; /* the grid keeps its own copy */
    assert_int_equal(qn_grid_width(g), 3);
    assert_int_equal(qn_grid_height(g), 2);
    assert_true(qn_grid_cell_size(g) == 1.0f);
    assert_true(qn_grid_origin(g).x == 10.0f);
    assert_int_equal(qn_grid_cost(g, 0, 0), 1);
    assert_int_equal(qn_grid_cost(g, 2, 0), 255);
    assert_int_equal(qn_grid_cost(g, 0, 1), 4);
    assert_int_equal(qn_grid_cost(g, 3, 0), QN_CELL_WALL);
    assert_int_equal(qn_grid_cost(g, 0, 2), QN_CELL_WALL);
    assert_int_equal(qn_grid_costs(g)[5], 6);
    uint32_t x, y;
    assert_int_equal(qn_grid_locate(g, qn__v2(12.5f, -3.0f), &x, &y), QN_OK);
    assert_int_equal(x, 2);
    assert_int_equal(y, 1);
    assert_int_equal(qn_grid_locate(g, qn__v2(13.0f, -3.0f), &x, &y), QN_E_OUTSIDE);
    assert_int_equal(x, QN_NONE);
    assert_int_equal(qn_grid_locate(g, qn__v2(9.99f, -3.0f), &x, &y), QN_E_OUTSIDE);
    assert_int_equal(qn_grid_locate(g, qn__v2(NAN, 0), &x, &y), QN_E_INVALID_ARG);
    qn_grid_destroy(g);
    assert_int_equal(qn_grid_width(NULL), 0);
    assert_int_equal(qn_grid_cost(NULL, 0, 0), QN_CELL_WALL);
}

static void test_dir_vectors(void **state) {
    (void)state;
    for (uint8_t k = 0; k < 8; k++) {
        qn_vec2 v = qn_dir_vector(k);
        assert_true(fabsf(qn__len(v) - 1.0f) < 1e-6f);
        assert_true(fabsf(v.x - (float)dx8[k] / (k & 1 ? (float)SQRT2 : 1.0f)) < 1e-6f);
        assert_true(fabsf(v.y - (float)dy8[k] / (k & 1 ? (float)SQRT2 : 1.0f)) < 1e-6f);
    }
    assert_true(qn_dir_vector(QN_DIR_NONE).x == 0.0f && qn_dir_vector(QN_DIR_NONE).y == 0.0f);
    assert_true(qn_dir_vector(200).x == 0.0f && qn_dir_vector(200).y == 0.0f);
}

static void test_field_args(void **state) {
    (void)state;
    uint8_t c[4] = {1, 255, 1, 1};
    qn_grid_desc d = {2, 2, c, 1.0f, {0, 0}};
    qn_grid *g;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    qn_grid_field *f = (qn_grid_field *)1;
    qn_error e;
    uint32_t goals[2] = {0, 1};
    assert_int_equal(qn_grid_field_create(g, goals, 2, NULL, NULL, &f, &e), QN_E_BLOCKED);
    assert_int_equal(e.index, 1);
    assert_null(f);
    goals[1] = 4;
    assert_int_equal(qn_grid_field_create(g, goals, 2, NULL, NULL, &f, &e), QN_E_INVALID_ARG);
    assert_int_equal(e.index, 1);
    assert_int_equal(qn_grid_field_create(g, goals, 0, NULL, NULL, &f, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_grid_field_create(NULL, goals, 1, NULL, NULL, &f, &e), QN_E_INVALID_ARG);
    qn_grid_field_opts o = {(qn_connectivity)7, false, 0, false};
    assert_int_equal(qn_grid_field_create(g, goals, 1, &o, NULL, &f, &e), QN_E_INVALID_ARG);
    o.connectivity = QN_CONNECT_8;
    o.stop_enabled = true;
    o.stop_cell = 4;
    assert_int_equal(qn_grid_field_create(g, goals, 1, &o, NULL, &f, &e), QN_E_INVALID_ARG);
    qn_grid_field_destroy(NULL);
    assert_true(qn_grid_field_cost(NULL, 0, 0) == DINF);
    assert_int_equal(qn_grid_field_dir(NULL, 0, 0), QN_DIR_NONE);
    qn_grid_destroy(g);
}

/* ---- integration values ------------------------------------------------------ */

/* Plain BFS from the goal over 4-neighbours. */
static void bfs(const tgrid *t, uint32_t goal, double *dist) {
    size_t n = (size_t)t->w * t->h;
    uint32_t *q = malloc(n * sizeof *q);
    assert_non_null(q);
    for (size_t i = 0; i < n; i++) dist[i] = DINF;
    size_t head = 0, tail = 0;
    dist[goal] = 0;
    q[tail++] = goal;
    while (head < tail) {
        uint32_t u = q[head++];
        int x = (int)(u % t->w), y = (int)(u / t->w);
        for (int k = 0; k < 8; k += 2) {
            if (!legal(t, x, y, k, false)) continue;
            uint32_t v = (uint32_t)((y + dy8[k]) * (int)t->w + x + dx8[k]);
            if (dist[v] == DINF) {
                dist[v] = dist[u] + 1;
                q[tail++] = v;
            }
        }
    }
    free(q);
}

static void test_4conn_equals_bfs(void **state) {
    (void)state;
    uint64_t rng = 1;
    for (int round = 0; round < 40; round++) {
        uint32_t w = 1 + rng_next(&rng) % 60, h = 1 + rng_next(&rng) % 60;
        tgrid t = random_grid(&rng, w, h, rng_next(&rng) % 45, 1);
        uint32_t goal = random_open_cell(&rng, &t);
        if (goal == UINT32_MAX) {
            free(t.c);
            continue;
        }
        qn_grid *g = make_grid(&t);
        qn_grid_field *f = make_field(g, &goal, 1, QN_CONNECT_4);
        double *ref = malloc((size_t)w * h * sizeof *ref);
        bfs(&t, goal, ref);
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                double ours = qn_grid_field_cost(f, x, y);
                /* Integers: exact equality, INFINITY for unreachable and walls. */
                if (ours != ref[(size_t)y * w + x])
                    fail_msg("round %d cell (%u,%u): %g vs BFS %g", round, x, y, ours,
                             ref[(size_t)y * w + x]);
            }
        free(ref);
        qn_grid_field_destroy(f);
        qn_grid_destroy(g);
        free(t.c);
    }
}

static void test_weighted_equals_bellman_ford(void **state) {
    (void)state;
    uint64_t rng = 7;
    for (int round = 0; round < 120; round++) {
        uint32_t w = 1 + rng_next(&rng) % 14, h = 1 + rng_next(&rng) % 14;
        uint32_t max_cost = round % 3 == 0 ? 3 : 254;
        tgrid t = random_grid(&rng, w, h, rng_next(&rng) % 35, max_cost);
        uint32_t goals[3], ng = 1 + rng_next(&rng) % 3;
        if (ng > w * h) ng = w * h; /* the documented limit on goal cells */
        for (uint32_t i = 0; i < ng; i++) goals[i] = random_open_cell(&rng, &t);
        if (goals[0] == UINT32_MAX) {
            free(t.c);
            continue;
        }
        qn_grid *g = make_grid(&t);
        double *ref = malloc((size_t)w * h * sizeof *ref);
        for (int conn = 0; conn < 2; conn++) {
            bool eight = conn == QN_CONNECT_8;
            qn_grid_field *f = make_field(g, goals, ng, (qn_connectivity)conn);
            bellman_ford(&t, goals, ng, eight, ref);
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++)
                    if (!near(qn_grid_field_cost(f, x, y), ref[(size_t)y * w + x]))
                        fail_msg("round %d conn %d cell (%u,%u): %.12g vs %.12g", round, conn,
                                 x, y, qn_grid_field_cost(f, x, y), ref[(size_t)y * w + x]);
            qn_grid_field_destroy(f);
        }
        free(ref);
        qn_grid_destroy(g);
        free(t.c);
    }
}

static void test_open_grid_octile(void **state) {
    (void)state;
    tgrid t = {37, 23, malloc(37 * 23)};
    memset(t.c, 1, 37 * 23);
    qn_grid *g = make_grid(&t);
    uint32_t goal = 5 * 37 + 30;
    qn_grid_field *f = make_field(g, &goal, 1, QN_CONNECT_8);
    for (uint32_t y = 0; y < 23; y++)
        for (uint32_t x = 0; x < 37; x++) {
            double ax = fabs((double)x - 30), ay = fabs((double)y - 5);
            double lo = ax < ay ? ax : ay, hi = ax < ay ? ay : ax;
            assert_true(near(qn_grid_field_cost(f, x, y), hi - lo + SQRT2 * lo));
        }
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
    free(t.c);
}

/* Long paths of expensive cells: values far beyond the bucket ring. */
static void test_long_expensive_corridor(void **state) {
    (void)state;
    uint32_t w = 3000;
    tgrid t = {w, 1, malloc(w)};
    memset(t.c, 254, w);
    t.c[1500] = 1;
    qn_grid *g = make_grid(&t);
    uint32_t goal = 0;
    qn_grid_field *f = make_field(g, &goal, 1, QN_CONNECT_8);
    /* Entering cell i costs c[i]; cell 1500 is cheap. */
    assert_true(qn_grid_field_cost(f, 1499, 0) == 254.0 * 1499);
    assert_true(qn_grid_field_cost(f, 1500, 0) == 254.0 * 1500);
    assert_true(qn_grid_field_cost(f, w - 1, 0) == 254.0 * (w - 2) + 1);
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
    free(t.c);
}

static void test_multi_goal_is_minimum(void **state) {
    (void)state;
    uint64_t rng = 99;
    for (int round = 0; round < 20; round++) {
        tgrid t = random_grid(&rng, 30, 20, 25, round % 2 ? 9 : 1);
        uint32_t goals[4];
        for (int i = 0; i < 4; i++) goals[i] = random_open_cell(&rng, &t);
        qn_grid *g = make_grid(&t);
        qn_grid_field *all = make_field(g, goals, 4, QN_CONNECT_8);
        qn_grid_field *one[4];
        for (int i = 0; i < 4; i++) one[i] = make_field(g, &goals[i], 1, QN_CONNECT_8);
        for (uint32_t y = 0; y < 20; y++)
            for (uint32_t x = 0; x < 30; x++) {
                double m = DINF;
                for (int i = 0; i < 4; i++) {
                    double v = qn_grid_field_cost(one[i], x, y);
                    if (v < m) m = v;
                }
                assert_true(near(qn_grid_field_cost(all, x, y), m));
            }
        for (int i = 0; i < 4; i++) {
            assert_true(qn_grid_field_cost(all, goals[i] % 30, goals[i] / 30) == 0.0);
            qn_grid_field_destroy(one[i]);
        }
        qn_grid_field_destroy(all);
        qn_grid_destroy(g);
        free(t.c);
    }
}

static void test_early_exit_matches_full(void **state) {
    (void)state;
    uint64_t rng = 5;
    for (int round = 0; round < 60; round++) {
        tgrid t = random_grid(&rng, 25, 25, 30, round % 2 ? 40 : 1);
        uint32_t goal = random_open_cell(&rng, &t), start = random_open_cell(&rng, &t);
        qn_grid *g = make_grid(&t);
        qn_grid_field *full = make_field(g, &goal, 1, QN_CONNECT_8);
        qn_grid_field_opts o = {QN_CONNECT_8, true, start, false};
        qn_grid_field *part;
        assert_int_equal(qn_grid_field_create(g, &goal, 1, &o, NULL, &part, NULL), QN_OK);
        double want = qn_grid_field_cost(full, start % 25, start / 25);
        assert_true(qn_grid_field_cost(part, start % 25, start / 25) == want);
        /* Every cell the early field knows is exact; the rest read unreachable. */
        for (uint32_t y = 0; y < 25; y++)
            for (uint32_t x = 0; x < 25; x++) {
                double v = qn_grid_field_cost(part, x, y);
                if (v != DINF) assert_true(v == qn_grid_field_cost(full, x, y));
                if (want != DINF && qn_grid_field_cost(full, x, y) > want + 2.0)
                    assert_true(v == DINF);
            }
        qn_grid_field_destroy(part);
        qn_grid_field_destroy(full);
        qn_grid_destroy(g);
        free(t.c);
    }
}

/* ---- flow fields ---------------------------------------------------------------- */

static void test_dir8_flow(void **state) {
    (void)state;
    uint64_t rng = 11;
    for (int round = 0; round < 60; round++) {
        uint32_t w = 2 + rng_next(&rng) % 40, h = 2 + rng_next(&rng) % 40;
        tgrid t = random_grid(&rng, w, h, 35, round % 3 ? 1 : 30);
        uint32_t goal = random_open_cell(&rng, &t);
        if (goal == UINT32_MAX) {
            free(t.c);
            continue;
        }
        bool eight = round % 4 != 0;
        qn_grid *g = make_grid(&t);
        qn_grid_field *f = make_field(g, &goal, 1, eight ? QN_CONNECT_8 : QN_CONNECT_4);
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                uint8_t k = qn_grid_field_dir(f, x, y);
                double v = qn_grid_field_cost(f, x, y);
                if (v == DINF || v == 0.0) {
                    assert_int_equal(k, QN_DIR_NONE); /* walls, unreachable, goal */
                    continue;
                }
                assert_true(k < 8);
                /* Legal: no corner cutting, no diagonal in 4-connected mode. */
                assert_true(legal(&t, (int)x, (int)y, k, eight));
                uint32_t nx = x + (uint32_t)dx8[k], ny = y + (uint32_t)dy8[k];
                double nv = qn_grid_field_cost(f, nx, ny);
                assert_true(nv < v); /* strictly cheaper */
                /* And optimal: the step plus the rest is the cell's value. */
                double step = (k & 1 ? SQRT2 : 1.0) * t.c[(size_t)ny * w + nx];
                assert_true(near(nv + step, v));
            }
        qn_grid_field_destroy(f);
        qn_grid_destroy(g);
        free(t.c);
    }
}

/* Following the flow from every reachable cell ends at the goal. */
static void test_dir8_walk_reaches_goal(void **state) {
    (void)state;
    uint64_t rng = 13;
    tgrid t = random_grid(&rng, 40, 30, 30, 1);
    uint32_t goal = random_open_cell(&rng, &t);
    qn_grid *g = make_grid(&t);
    qn_grid_field *f = make_field(g, &goal, 1, QN_CONNECT_8);
    for (uint32_t i = 0; i < 40 * 30; i++) {
        uint32_t x = i % 40, y = i / 40;
        if (qn_grid_field_cost(f, x, y) == DINF) continue;
        for (int steps = 0; steps < 40 * 30 && qn_grid_field_cost(f, x, y) > 0; steps++) {
            uint8_t k = qn_grid_field_dir(f, x, y);
            assert_true(k < 8);
            x += (uint32_t)dx8[k];
            y += (uint32_t)dy8[k];
        }
        assert_int_equal(y * 40 + x, goal);
    }
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
    free(t.c);
}

static void test_vector_flow(void **state) {
    (void)state;
    uint64_t rng = 17;
    for (int round = 0; round < 30; round++) {
        tgrid t = random_grid(&rng, 30, 30, 30, round % 2 ? 1 : 20);
        uint32_t goal = random_open_cell(&rng, &t);
        qn_grid *g = make_grid(&t);
        qn_grid_field *f = make_field(g, &goal, 1, QN_CONNECT_8);
        for (uint32_t y = 0; y < 30; y++)
            for (uint32_t x = 0; x < 30; x++) {
                qn_vec2 v = qn_grid_field_vec(f, x, y);
                float len = qn__len(v);
                assert_true(len == 0.0f || fabsf(len - 1.0f) < 1e-5f);
                double c = qn_grid_field_cost(f, x, y);
                if (c == DINF || c == 0.0) assert_true(len == 0.0f);
                if (len == 0.0f) continue;
                /* It points downhill: the gradient from the same rule. */
                double l = qn_grid_field_cost(f, x - 1, y), r = qn_grid_field_cost(f, x + 1, y);
                double u = qn_grid_field_cost(f, x, y - 1), d = qn_grid_field_cost(f, x, y + 1);
                double gx = (l == DINF ? c : l) - (r == DINF ? c : r);
                double gy = (u == DINF ? c : u) - (d == DINF ? c : d);
                double n = sqrt(gx * gx + gy * gy);
                assert_true(fabs((double)v.x - gx / n) < 1e-5 && fabs((double)v.y - gy / n) < 1e-5);
            }
        qn_grid_field_destroy(f);
        qn_grid_destroy(g);
        free(t.c);
    }
}

/* A 1-wide corridor with goals at both ends: the middle cell's left and
** right neighbours are equal, so its gradient is zero (a local optimum) and
** vector sampling falls back to the 8-direction flow. */
static void test_local_optimum_falls_back(void **state) {
    (void)state;
    uint8_t c[5] = {1, 1, 1, 1, 1};
    qn_grid_desc d = {5, 1, c, 1.0f, {0, 0}};
    qn_grid *g;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    uint32_t goals[2] = {0, 4};
    qn_grid_field *f = make_field(g, goals, 2, QN_CONNECT_8);
    qn_vec2 v = qn_grid_field_vec(f, 2, 0);
    assert_true(v.x == 0.0f && v.y == 0.0f); /* left == right: flat */
    qn_vec2 dir;
    assert_int_equal(qn_grid_field_sample(f, QN_FLOW_VECTOR, qn__v2(2.5f, 0.5f), NULL, &dir),
                     QN_OK);
    assert_true(fabsf(qn__len(dir) - 1.0f) < 1e-6f); /* the dir8 fallback */
    assert_true(fabsf(dir.y) < 1e-6f);
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
}

/* ---- sampling ---------------------------------------------------------------------- */

static void test_sampling_statuses(void **state) {
    (void)state;
    /* 6x4, cell size 2, origin (-4, 10). Column 3 is a wall; cell (5, 3)
    ** is cut off by walls. Goal at (0, 0). */
    static const char rows[4][7] = {"...@..", "...@..", "......", "...@@."};
    uint8_t c[24];
    for (int i = 0; i < 24; i++) c[i] = rows[i / 6][i % 6] == '@' ? 255 : 1;
    c[2 * 6 + 5] = 255; /* isolate (5, 3) */
    c[2 * 6 + 4] = 255;
    qn_grid_desc d = {6, 4, c, 2.0f, {-4.0f, 10.0f}};
    qn_grid *g;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    uint32_t goal = 0;
    qn_grid_field *f = make_field(g, &goal, 1, QN_CONNECT_8);
    /* Costs are in world units: cell size 2. */
    assert_true(near(qn_grid_field_cost(f, 2, 0), 4.0));
#define AT(cx, cy) qn__v2(-4.0f + 2.0f * (cx) + 1.0f, 10.0f + 2.0f * (cy) + 1.0f)
    qn_vec2 dir;
    uint32_t cell = 12345;
    assert_int_equal(qn_grid_field_sample(f, QN_FLOW_DIR8, AT(0, 0), &cell, &dir), QN_AT_GOAL);
    assert_int_equal(cell, 0);
    assert_true(dir.x == 0.0f && dir.y == 0.0f);
    assert_int_equal(qn_grid_field_sample(f, QN_FLOW_DIR8, AT(3, 0), &cell, &dir), QN_E_BLOCKED);
    assert_int_equal(cell, 3);
    assert_int_equal(qn_grid_field_sample(f, QN_FLOW_DIR8, AT(5, 3), &cell, &dir),
                     QN_E_UNREACHABLE);
    assert_int_equal(cell, 3 * 6 + 5);
    assert_int_equal(qn_grid_field_sample(f, QN_FLOW_DIR8, qn__v2(-4.5f, 11.0f), &cell, &dir),
                     QN_E_OUTSIDE);
    assert_int_equal(cell, QN_NONE);
    assert_int_equal(qn_grid_field_sample(f, QN_FLOW_DIR8, qn__v2(NAN, 11.0f), &cell, &dir),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_grid_field_sample(f, (qn_flow_kind)5, AT(1, 1), &cell, &dir),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_grid_field_sample(NULL, QN_FLOW_DIR8, AT(1, 1), &cell, &dir),
                     QN_E_INVALID_ARG);
    /* Moving: dir8 gives the cell's direction, vector the gradient. */
    assert_int_equal(qn_grid_field_sample(f, QN_FLOW_DIR8, AT(1, 1), &cell, &dir), QN_OK);
    qn_vec2 want = qn_dir_vector(qn_grid_field_dir(f, 1, 1));
    assert_true(dir.x == want.x && dir.y == want.y);
    assert_true(dir.x < 0 && dir.y < 0); /* north-west, toward the goal */
    assert_int_equal(qn_grid_field_sample(f, QN_FLOW_VECTOR, AT(2, 3), &cell, &dir), QN_OK);
    want = qn_grid_field_vec(f, 2, 3);
    assert_true(dir.x == want.x && dir.y == want.y);
    /* Batch equals single calls. */
    qn_vec2 pos[6] = {AT(0, 0), AT(3, 0), AT(5, 3), qn__v2(-5, 0), AT(1, 1), AT(4, 0)};
    qn_vec2 dirs[6];
    uint8_t st[6];
    uint32_t cells[6];
    assert_int_equal(qn_grid_field_sample_batch(f, QN_FLOW_DIR8, pos, dirs, st, cells, 6), QN_OK);
    for (int i = 0; i < 6; i++) {
        qn_vec2 one;
        uint32_t oc;
        assert_int_equal(st[i], qn_grid_field_sample(f, QN_FLOW_DIR8, pos[i], &oc, &one));
        assert_int_equal(cells[i], oc);
        assert_true(dirs[i].x == one.x && dirs[i].y == one.y);
    }
    assert_int_equal(qn_grid_field_sample_batch(f, QN_FLOW_DIR8, pos, dirs, NULL, NULL, 6), QN_OK);
    assert_int_equal(qn_grid_field_sample_batch(f, QN_FLOW_DIR8, NULL, dirs, NULL, NULL, 6),
                     QN_E_INVALID_ARG);
#undef AT
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
}

/* Does the segment a-b enter only cells of lower integration value than
** a's cell? Sampled at 256 points, so a cell it only grazes may be missed. */
static bool descends(const qn_grid_field *f, qn_vec2 a, qn_vec2 b) {
    const qn_grid *g = qn_grid_field_grid(f);
    uint32_t x0, y0, x, y;
    assert_int_equal(qn_grid_locate(g, a, &x0, &y0), QN_OK);
    double d0 = qn_grid_field_cost(f, x0, y0);
    for (int i = 1; i <= 256; i++) {
        float t = (float)i / 256.0f;
        qn_vec2 q = qn__add(a, qn__scale(qn__sub(b, a), t));
        if (qn_grid_locate(g, q, &x, &y) != QN_OK) return false;
        if ((x != x0 || y != y0) && !(qn_grid_field_cost(f, x, y) < d0)) return false;
    }
    return true;
}

/* Does the ray from a along unit dir leave a's cell into a cell of lower
** integration value? Walked in steps of 1/256 of a cell, up to two cells. */
static bool exits_lower(const qn_grid_field *f, qn_vec2 a, qn_vec2 dir) {
    const qn_grid *g = qn_grid_field_grid(f);
    uint32_t x0, y0, x, y;
    assert_int_equal(qn_grid_locate(g, a, &x0, &y0), QN_OK);
    double d0 = qn_grid_field_cost(f, x0, y0);
    float cell = qn_grid_cell_size(g);
    for (int i = 1; i <= 512; i++) {
        qn_vec2 q = qn__add(a, qn__scale(dir, cell * (float)i / 256.0f));
        if (qn_grid_locate(g, q, &x, &y) != QN_OK) return false;
        if (x != x0 || y != y0) return qn_grid_field_cost(f, x, y) < d0;
    }
    return true;
}

/* Vector sampling never sends a unit into a wall or across a blocked
** corner: a straight move of QN_GRID_SAFE_STEP cells along what it returns
** is clear by the quality harness's own exact test, and so is a whole cell
** along the 8-direction flow. The direction is the cell's gradient whenever
** that move is clear and enters only lower cells and the gradient's ray
** leaves the cell into a lower one, else its 8-direction flow. Random grids with walls,
** costs and both connectivities, cell size 2 and an offset origin; points
** anywhere in the cells, on their edges and at their corners. */
static void test_vector_sample_clear(void **state) {
    (void)state;
    uint64_t rng = 41;
    uint32_t samples = 0, gradient = 0, fallback_clear = 0;
    for (int round = 0; round < 40; round++) {
        tgrid t = random_grid(&rng, 24, 20, 10 + (uint32_t)round % 30, round % 3 ? 1 : 9);
        qn_grid_desc d = {t.w, t.h, t.c, 2.0f, {-7.0f, 3.0f}};
        qn_grid *g;
        assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
        uint32_t goal = random_open_cell(&rng, &t);
        qn_grid_field *f = make_field(g, &goal, 1, round % 4 == 3 ? QN_CONNECT_4 : QN_CONNECT_8);
        for (int i = 0; i < 3000; i++) {
            uint32_t cx = rng_next(&rng) % t.w, cy = rng_next(&rng) % t.h;
            double u = (rng_next(&rng) % 8 == 0) ? 0.0 : (double)(rng_next(&rng) % 1000) / 1000.0;
            double v = (rng_next(&rng) % 8 == 0) ? 0.0 : (double)(rng_next(&rng) % 1000) / 1000.0;
            qn_vec2 p = qn_sim_grid_point(g, cx, cy, u, v), dir, d8;
            if (qn_grid_field_sample(f, QN_FLOW_VECTOR, p, NULL, &dir) != QN_OK) continue;
            assert_int_equal(qn_grid_field_sample(f, QN_FLOW_DIR8, p, NULL, &d8), QN_OK);
            samples++;
            qn_vec2 grad = qn_grid_field_vec(f, cx, cy);
            float reach = QN_GRID_SAFE_STEP * 2.0f;
            qn_vec2 end = qn__add(p, qn__scale(dir, reach));
            if (!qn_sim_grid_move_ok(g, p, end, NULL))
                fail_msg("round %d: vector move from (%.9g, %.9g) along (%g, %g) hits a wall",
                         round, (double)p.x, (double)p.y, (double)dir.x, (double)dir.y);
            assert_true(qn_sim_grid_move_ok(g, p, qn__add(p, qn__scale(d8, 1.98f)), NULL));
            if (dir.x == grad.x && dir.y == grad.y) {
                gradient++;
                continue;
            }
            assert_true(dir.x == d8.x && dir.y == d8.y); /* else: the 8-direction flow */
            /* The gradient was refused: its move is not clear or enters a
            ** cell not lower than the unit's, or its ray leaves the cell
            ** into one not lower (or passes within a hair of a grid
            ** vertex, which is refused to be safe). */
            bool grad_zero = grad.x == 0.0f && grad.y == 0.0f;
            qn_vec2 gend = qn__add(p, qn__scale(grad, reach));
            if (!grad_zero && qn_sim_grid_move_ok(g, p, gend, NULL) && descends(f, p, gend) &&
                exits_lower(f, p, grad))
                fallback_clear++;
        }
        qn_grid_field_destroy(f);
        qn_grid_destroy(g);
        free(t.c);
    }
    assert_true(samples > 50000);
    assert_true(gradient > samples / 2);       /* the gradient is what units mostly follow */
    assert_true(fallback_clear < samples / 1000); /* near-vertex refusals only */
}

/* Units stepping a fifth of a cell along vector samples on walled grids all
** arrive, never touch a wall and never get stuck. */
static void test_vector_walk_arrives(void **state) {
    (void)state;
    uint64_t rng = 43;
    qn_sim_grid_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    for (int round = 0; round < 12; round++) {
        tgrid t = random_grid(&rng, 40, 30, 25, round % 2 ? 1 : 6);
        qn_grid *g = make_grid(&t);
        uint32_t goal = random_open_cell(&rng, &t);
        qn_grid_field *f = make_field(g, &goal, 1, QN_CONNECT_8);
        qn_sim_world w;
        qn_sim_world_grid(&w, ctx, f, QN_FLOW_VECTOR,
                          qn__v2((float)(goal % t.w) + 0.5f, (float)(goal / t.w) + 0.5f));
        qn_sim_opts o;
        memset(&o, 0, sizeof o);
        o.units = 300;
        o.seed = (uint64_t)round;
        qn_sim_result r;
        assert_int_equal(qn_sim_run(&w, &o, &r), QN_OK);
        assert_int_equal(r.wall_contacts, 0);
        assert_int_equal(r.stuck, 0);
        assert_int_equal(r.arrived, 300);
        qn_grid_field_destroy(f);
        qn_grid_destroy(g);
        free(t.c);
    }
    free(ctx);
}

/* Fields built without flow arrays answer the same directions. */
static void test_no_flow_same_directions(void **state) {
    (void)state;
    uint64_t rng = 23;
    tgrid t = random_grid(&rng, 33, 17, 30, 5);
    uint32_t goal = random_open_cell(&rng, &t);
    qn_grid *g = make_grid(&t);
    qn_grid_field *with = make_field(g, &goal, 1, QN_CONNECT_8);
    qn_grid_field_opts o = {QN_CONNECT_8, false, 0, true};
    qn_grid_field *without;
    assert_int_equal(qn_grid_field_create(g, &goal, 1, &o, NULL, &without, NULL), QN_OK);
    assert_true(qn_grid_field_bytes(without) < qn_grid_field_bytes(with));
    assert_ptr_equal(qn_grid_field_grid(with), g);
    for (uint32_t y = 0; y < 17; y++)
        for (uint32_t x = 0; x < 33; x++) {
            assert_int_equal(qn_grid_field_dir(with, x, y), qn_grid_field_dir(without, x, y));
            qn_vec2 a = qn_grid_field_vec(with, x, y), b = qn_grid_field_vec(without, x, y);
            assert_true(a.x == b.x && a.y == b.y);
        }
    qn_grid_field_destroy(without);
    qn_grid_field_destroy(with);
    qn_grid_destroy(g);
    free(t.c);
}

/* ---- out of memory ------------------------------------------------------------------- */

static void test_failing_allocator(void **state) {
    (void)state;
    uint64_t rng = 31;
    /* Big enough that the search's bucket arrays grow beyond their first size. */
    tgrid t = random_grid(&rng, 130, 120, 3, 1);
    qn_grid_desc d = {t.w, t.h, t.c, 1.0f, {0, 0}};
    uint32_t goal = random_open_cell(&rng, &t), start = random_open_cell(&rng, &t);
    qn_grid *ref = make_grid(&t);
    for (int mode = 0; mode < 4; mode++) {
        bool succeeded = false;
        for (uint64_t k = 0; k < 2000 && !succeeded; k++) {
            failalloc fa;
            qn_allocator a = failalloc_init(&fa, k);
            qn_grid *g = NULL;
            qn_grid_field *f = NULL;
            qn_status st;
            if (mode == 0) {
                st = qn_grid_create(&d, &a, &g, NULL);
            } else {
                qn_grid_field_opts o = {mode == 3 ? QN_CONNECT_4 : QN_CONNECT_8, mode == 2,
                                        start, false};
                st = qn_grid_field_create(ref, &goal, 1, &o, &a, &f, NULL);
            }
            if (st == QN_OK) {
                succeeded = true;
                assert_true(g || f);
                /* The field's search grew its bucket arrays, so the loop
                ** also failed allocations in the middle of a search. */
                if (mode == 1 || mode == 3) assert_true(fa.calls > 40);
            } else {
                assert_int_equal(st, QN_E_NOMEM);
                assert_null(g);
                assert_null(f);
            }
            qn_grid_destroy(g);
            qn_grid_field_destroy(f);
            assert_int_equal(fa.live, 0);
        }
        assert_true(succeeded);
    }
    qn_grid_destroy(ref);
    free(t.c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_create_errors),
        cmocka_unit_test(test_grid_accessors),
        cmocka_unit_test(test_dir_vectors),
        cmocka_unit_test(test_field_args),
        cmocka_unit_test(test_4conn_equals_bfs),
        cmocka_unit_test(test_weighted_equals_bellman_ford),
        cmocka_unit_test(test_open_grid_octile),
        cmocka_unit_test(test_long_expensive_corridor),
        cmocka_unit_test(test_multi_goal_is_minimum),
        cmocka_unit_test(test_early_exit_matches_full),
        cmocka_unit_test(test_dir8_flow),
        cmocka_unit_test(test_dir8_walk_reaches_goal),
        cmocka_unit_test(test_vector_flow),
        cmocka_unit_test(test_local_optimum_falls_back),
        cmocka_unit_test(test_sampling_statuses),
        cmocka_unit_test(test_vector_sample_clear),
        cmocka_unit_test(test_vector_walk_arrives),
        cmocka_unit_test(test_no_flow_same_directions),
        cmocka_unit_test(test_failing_allocator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
