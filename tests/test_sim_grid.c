/* test_sim_grid.c: the grid-mode world of the simulation harness: the exact
** segment test against cells (walls, corners, grid vertices, the grid's edge),
** uniform starts over reachable cells, and whole runs on an open grid and on a
** bundled map. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quadnav.h"
#include "sim.h"

/* A grid from rows of '.' (ground) and '@' (wall). */
static qn_grid *grid_of(const char *const *rows, uint32_t h, float cs, qn_vec2 origin) {
    uint32_t w = (uint32_t)strlen(rows[0]);
    uint8_t *c = malloc((size_t)w * h);
    assert_non_null(c);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            c[y * w + x] = rows[y][x] == '@' ? QN_CELL_WALL : QN_CELL_NORMAL;
    qn_grid_desc d = {w, h, c, cs, origin};
    qn_grid *g = NULL;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    free(c);
    return g;
}

static qn_vec2 v2(float x, float y) {
    qn_vec2 v = {x, y};
    return v;
}

static bool move(const qn_grid *g, float ax, float ay, float bx, float by, qn_vec2 *hit) {
    return qn_sim_grid_move_ok(g, v2(ax, ay), v2(bx, by), hit);
}

/* The hit of a refused move must lie in cell (x, y), a passable one. */
static void assert_hit_in(const qn_grid *g, qn_vec2 hit, uint32_t x, uint32_t y) {
    uint32_t hx, hy;
    assert_int_equal(qn_grid_locate(g, hit, &hx, &hy), QN_OK);
    assert_int_equal(hx, x);
    assert_int_equal(hy, y);
}

static void test_move_straight_and_blocked(void **state) {
    (void)state;
    static const char *const rows[] = {"..@..", ".....", "....."};
    qn_grid *g = grid_of(rows, 3, 1.0f, v2(0, 0));
    qn_vec2 hit;
    assert_true(move(g, 0.5f, 1.5f, 4.5f, 1.5f, &hit));  /* along the open middle row */
    assert_true(move(g, 0.5f, 2.5f, 4.2f, 1.1f, &hit));  /* slanted, open cells only */
    assert_true(move(g, 1.5f, 0.5f, 1.5f, 0.5f, &hit));  /* no move at all */
    assert_false(move(g, 0.5f, 0.5f, 3.5f, 0.5f, &hit)); /* through the wall at (2, 0) */
    assert_hit_in(g, hit, 1, 0);
    assert_float_equal(hit.x, 2.0, 1e-4);
    assert_float_equal(hit.y, 0.5, 1e-6);
    /* From the other side, leaving the wall's cell boundary at x = 3. */
    assert_false(move(g, 4.5f, 0.5f, 2.9f, 0.5f, &hit));
    assert_hit_in(g, hit, 3, 0);
    assert_float_equal(hit.x, 3.0, 1e-6);
    /* Slanted into the wall from below: enters (2, 0) through its bottom edge. */
    assert_false(move(g, 1.5f, 1.5f, 2.7f, 0.5f, &hit));
    assert_hit_in(g, hit, 2, 1);
    assert_true(fabsf(hit.y - 1.0f) < 1e-5f);
    /* Exactly through the vertex (2, 1) instead: refused before leaving (1, 1). */
    assert_false(move(g, 1.5f, 1.5f, 2.5f, 0.5f, &hit));
    assert_hit_in(g, hit, 1, 1);
    /* Leaving the grid is leaving passable space. */
    assert_false(move(g, 0.5f, 1.5f, -0.5f, 1.5f, &hit));
    assert_hit_in(g, hit, 0, 1);
    assert_float_equal(hit.x, 0.0, 1e-6);
    assert_false(move(g, 4.5f, 2.5f, 4.5f, 3.0f, &hit)); /* y = 3 is row 3: outside */
    assert_hit_in(g, hit, 4, 2);
    /* A start in a wall or outside is refused, with the hit at the start. */
    assert_false(move(g, 2.5f, 0.5f, 2.5f, 1.5f, &hit));
    assert_float_equal(hit.x, 2.5, 0);
    assert_float_equal(hit.y, 0.5, 0);
    assert_false(move(g, -1.0f, 1.5f, 0.5f, 1.5f, &hit));
    assert_false(move(g, 0.5f, 1.5f, NAN, 1.5f, &hit));
    assert_false(qn_sim_grid_move_ok(NULL, v2(0.5f, 0.5f), v2(0.6f, 0.5f), &hit));
    qn_grid_destroy(g);
}

/* Diagonal moves between two cells that share only a corner. */
static void test_move_corner_cut(void **state) {
    (void)state;
    static const char *const open[] = {"..", ".."};
    static const char *const ne_wall[] = {".@", ".."};
    static const char *const sw_wall[] = {"..", "@."};
    static const char *const pinch[] = {".@", "@."};
    qn_grid *g = grid_of(open, 2, 1.0f, v2(0, 0));
    qn_vec2 hit;
    assert_true(move(g, 0.5f, 0.5f, 1.5f, 1.5f, &hit)); /* exactly through vertex (1, 1) */
    qn_grid_destroy(g);
    const char *const *walled[] = {ne_wall, sw_wall, pinch};
    for (int i = 0; i < 3; i++) {
        g = grid_of(walled[i], 2, 1.0f, v2(0, 0));
        /* Through the vertex (1, 1): one orthogonal neighbour is a wall. */
        assert_false(move(g, 0.5f, 0.5f, 1.5f, 1.5f, &hit));
        assert_hit_in(g, hit, 0, 0);
        assert_float_equal(hit.x, 1.0, 1e-6);
        assert_float_equal(hit.y, 1.0, 1e-6);
        /* And back the other way. */
        assert_false(move(g, 1.5f, 1.5f, 0.5f, 0.5f, &hit));
        assert_hit_in(g, hit, 1, 1);
        /* Ending exactly on the vertex puts the unit in cell (1, 1): also a cut. */
        assert_false(move(g, 0.5f, 0.5f, 1.0f, 1.0f, &hit));
        qn_grid_destroy(g);
    }
    /* Near the corner but not through it: the cells actually crossed decide. */
    g = grid_of(ne_wall, 2, 1.0f, v2(0, 0));
    assert_true(move(g, 0.5f, 0.5f, 1.4f, 1.5f, &hit));  /* via (0, 1), open */
    assert_false(move(g, 0.5f, 0.5f, 1.5f, 1.4f, &hit)); /* via (1, 0), the wall */
    assert_hit_in(g, hit, 0, 0);
    /* Leaving a unit sitting on the vertex, into its own cell, is fine. */
    assert_true(move(g, 1.0f, 1.0f, 1.5f, 1.5f, &hit));
    qn_grid_destroy(g);
}

static void test_move_vertex_and_faces(void **state) {
    (void)state;
    /* The other diagonal through vertex (1, 1): south-west from (1, 0). */
    static const char *const nw_wall[] = {"@.", ".."};
    qn_grid *g = grid_of(nw_wall, 2, 1.0f, v2(0, 0));
    qn_vec2 hit;
    assert_false(move(g, 1.5f, 0.5f, 0.5f, 1.5f, &hit));
    assert_hit_in(g, hit, 1, 0);
    assert_true(move(g, 1.5f, 1.5f, 1.5f, 0.5f, &hit));
    qn_grid_destroy(g);
    /* Along a wall's face: points on y = 1 belong to row 1. */
    static const char *const top_wall[] = {"@@@", "...", "..."};
    g = grid_of(top_wall, 3, 1.0f, v2(0, 0));
    assert_true(move(g, 0.5f, 1.0f, 2.5f, 1.0f, &hit));
    assert_true(move(g, 0.5f, 1.5f, 2.0f, 1.0f, &hit)); /* ends on the face */
    assert_false(move(g, 0.5f, 1.5f, 2.0f, 0.999f, &hit));
    assert_hit_in(g, hit, 1, 1);
    qn_grid_destroy(g);
    static const char *const bottom_wall[] = {"...", "@@@"};
    g = grid_of(bottom_wall, 2, 1.0f, v2(0, 0));
    assert_false(move(g, 0.5f, 0.5f, 2.5f, 1.0f, &hit)); /* y = 1 is in the wall row */
    assert_hit_in(g, hit, 2, 0);
    assert_true(move(g, 0.5f, 0.5f, 2.5f, 0.99f, &hit));
    qn_grid_destroy(g);
}

/* Cell size 2 and a shifted origin: the same rules in world units. */
static void test_move_scaled(void **state) {
    (void)state;
    static const char *const rows[] = {"..", ".@"};
    qn_grid *g = grid_of(rows, 2, 2.0f, v2(10, -4));
    qn_vec2 hit;
    assert_true(move(g, 11, -3, 13, -3, &hit));
    assert_false(move(g, 11, -3, 13, -1, &hit)); /* through vertex (12, -2), into the wall */
    assert_hit_in(g, hit, 0, 0);
    assert_float_equal(hit.x, 12.0, 1e-5);
    assert_float_equal(hit.y, -2.0, 1e-5);
    assert_false(move(g, 13, -3, 13, -1, &hit));
    assert_hit_in(g, hit, 1, 0);
    qn_grid_destroy(g);
}

/* Random segments on a random grid against dense point sampling: a move
** that is accepted never has a sample point in a wall, and a refused move's
** hit lies in a passable cell with only passable samples before it. */
static void test_move_random(void **state) {
    (void)state;
    enum { W = 12, H = 9 };
    uint8_t c[W * H];
    uint64_t rng = 7;
    for (int i = 0; i < W * H; i++)
        c[i] = qn_rand_unit(&rng) < 0.25 ? QN_CELL_WALL : QN_CELL_NORMAL;
    qn_grid_desc d = {W, H, c, 1.0f, {0, 0}};
    qn_grid *g = NULL;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    int accepted = 0, refused = 0;
    for (int n = 0; n < 4000; n++) {
        qn_vec2 a = v2((float)(qn_rand_unit(&rng) * W), (float)(qn_rand_unit(&rng) * H));
        qn_vec2 b = v2(a.x + (float)(qn_rand_unit(&rng) * 6 - 3),
                       a.y + (float)(qn_rand_unit(&rng) * 6 - 3));
        uint32_t x, y;
        if (qn_grid_locate(g, a, &x, &y) != QN_OK || qn_grid_cost(g, x, y) == QN_CELL_WALL)
            continue;
        qn_vec2 hit;
        bool ok = qn_sim_grid_move_ok(g, a, b, &hit);
        float len = hypotf(b.x - a.x, b.y - a.y);
        float stop = ok ? len : hypotf(hit.x - a.x, hit.y - a.y) - 1e-3f;
        if (!ok) {
            assert_int_equal(qn_grid_locate(g, hit, &x, &y), QN_OK);
            assert_int_not_equal(qn_grid_cost(g, x, y), QN_CELL_WALL);
        }
        for (float s = 0; s < stop; s += 1e-3f) {
            qn_vec2 p = v2(a.x + (b.x - a.x) * s / len, a.y + (b.y - a.y) * s / len);
            bool in =
                qn_grid_locate(g, p, &x, &y) == QN_OK && qn_grid_cost(g, x, y) != QN_CELL_WALL;
            if (!in)
                fail_msg("segment %d (%g,%g)-(%g,%g) ok=%d: sample %g in a wall", n, (double)a.x,
                         (double)a.y, (double)b.x, (double)b.y, ok, (double)s);
        }
        ok ? accepted++ : refused++;
    }
    assert_true(accepted > 300 && refused > 300);
    qn_grid_destroy(g);
}

/* ---- the world ----------------------------------------------------------- */

static qn_grid_field *field_at(const qn_grid *g, uint32_t x, uint32_t y) {
    uint32_t cell = y * qn_grid_width(g) + x;
    qn_grid_field *f = NULL;
    assert_int_equal(qn_grid_field_create(g, &cell, 1, NULL, NULL, &f, NULL), QN_OK);
    return f;
}

/* A seeded random w x h grid (a quarter of the cells walls) and a goal cell
** on open ground. */
static qn_grid *random_grid(uint64_t *rng, uint32_t w, uint32_t h, uint32_t *goal) {
    uint8_t c[16 * 16];
    for (uint32_t i = 0; i < w * h; i++)
        c[i] = qn_rand_unit(rng) < 0.25 ? QN_CELL_WALL : QN_CELL_NORMAL;
    *goal = (uint32_t)(qn_rand_unit(rng) * w * h) % (w * h);
    c[*goal] = QN_CELL_NORMAL;
    qn_grid_desc d = {w, h, c, 1.0f, v2(0, 0)};
    qn_grid *g = NULL;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    return g;
}

/* Units walked from every reachable cell centre toward `goal` with the
** vector flow; the number that do not arrive. */
static uint32_t vector_failures(const qn_grid *g, uint32_t goal, qn_sim_grid_ctx *ctx) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g), fails = 0;
    qn_grid_field *f = field_at(g, goal % w, goal / w);
    qn_sim_world world;
    qn_sim_world_grid(&world, ctx, f, QN_FLOW_VECTOR,
                      v2((float)(goal % w) + 0.5f, (float)(goal / w) + 0.5f));
    for (uint32_t i = 0; i < w * h; i++) {
        double d = qn_grid_field_cost(f, i % w, i / w);
        if (!(d > 0.0) || !isfinite(d)) continue;
        qn_vec2 s = v2((float)(i % w) + 0.5f, (float)(i / w) + 0.5f);
        qn_sim_opts o = {0};
        o.units = 1;
        o.starts = &s;
        o.start_count = 1;
        qn_sim_result r;
        assert_int_equal(qn_sim_run(&world, &o, &r), QN_OK);
        assert_int_equal(r.wall_contacts, 0);
        fails += r.arrived == 0;
    }
    qn_grid_field_destroy(f);
    return fails;
}

/* The vector flow brings every unit home on cluttered grids. Central
** differences beside walls used to point into a cell of equal value whose
** own gradient pointed back, and a unit shuttled between the two forever
** (about one of these grids in twenty had such a pair). */
static void test_vector_flow_arrives(void **state) {
    (void)state;
    qn_sim_grid_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    uint64_t rng = 99;
    uint32_t fails = 0, bad_grids = 0;
    for (int t = 0; t < 300; t++) {
        uint32_t goal;
        qn_grid *g = random_grid(&rng, 16, 16, &goal);
        uint32_t k = vector_failures(g, goal, ctx);
        fails += k;
        bad_grids += k > 0;
        qn_grid_destroy(g);
    }
    if (fails) fail_msg("%u units on %u of 300 grids did not arrive", fails, bad_grids);
    free(ctx);
}

/* Grids placed far from the origin (their cells 0.002-0.004 apart in
** float there): units walk the vector flow without a wall contact. The
** sampler's test of a move passing a cell corner took passes within 1e-4
** cells of it as through it; a unit's next position rounds by more out
** there, and a move seen beside a corner went through it (5 contacts in
** 300 walks of the town level 20,000 units out). */
static void test_vector_flow_far(void **state) {
    (void)state;
    qn_sim_grid_ctx *ctx = calloc(1, sizeof *ctx);
    static uint8_t c[48 * 48];
    assert_non_null(ctx);
    uint64_t rng = 7;
    const qn_vec2 at[] = {{20000.0f, -15000.0f}, {-60000.0f, 50000.0f}};
    uint64_t contacts = 0, missed = 0;
    for (int t = 0; t < 40; t++) {
        for (uint32_t i = 0; i < 48 * 48; i++)
            c[i] = qn_rand_unit(&rng) < 0.25 ? QN_CELL_WALL : QN_CELL_NORMAL;
        uint32_t goal = (uint32_t)(qn_rand_unit(&rng) * 48 * 48) % (48 * 48);
        c[goal] = QN_CELL_NORMAL;
        qn_vec2 o = at[t % 2];
        qn_grid_desc d = {48, 48, c, 1.0f, o};
        qn_grid *g = NULL;
        assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
        qn_grid_field *f = NULL;
        assert_int_equal(qn_grid_field_create(g, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
        qn_sim_world world;
        qn_sim_world_grid(&world, ctx, f, QN_FLOW_VECTOR,
                          v2(o.x + (float)(goal % 48) + 0.5f, o.y + (float)(goal / 48) + 0.5f));
        qn_sim_opts so = {0};
        so.units = 100;
        so.seed = (uint64_t)t + 1;
        so.step = 0.2f;
        qn_sim_result r;
        assert_int_equal(qn_sim_run(&world, &so, &r), QN_OK);
        contacts += r.wall_contacts;
        missed += r.units - r.arrived;
        qn_grid_field_destroy(f);
        qn_grid_destroy(g);
    }
    if (contacts || missed)
        fail_msg("far grids: %llu contacts, %llu units not arrived", (unsigned long long)contacts,
                 (unsigned long long)missed);
    free(ctx);
}

/* Open 21x21 grid, goal at the centre cell: every unit arrives without a
** contact in both flow kinds; starts in line with the goal walk straight. */
static void test_world_open(void **state) {
    (void)state;
    enum { N = 21 };
    uint8_t c[N * N];
    memset(c, QN_CELL_NORMAL, sizeof c);
    qn_grid_desc d = {N, N, c, 1.0f, {0, 0}};
    qn_grid *g = NULL;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    qn_grid_field *f = field_at(g, 10, 10);
    qn_vec2 goal = {10.5f, 10.5f};
    qn_sim_grid_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    for (int k = 0; k < 2; k++) {
        qn_sim_world w;
        qn_sim_world_grid(&w, ctx, f, k ? QN_FLOW_VECTOR : QN_FLOW_DIR8, goal);
        assert_int_equal(ctx->reachable, N * N);
        qn_sim_opts o = {0};
        o.units = 500;
        o.seed = 3;
        qn_sim_result r;
        assert_int_equal(qn_sim_run(&w, &o, &r), QN_OK);
        assert_int_equal(r.arrived, 500);
        assert_int_equal(r.wall_contacts, 0);
        assert_int_equal(r.stuck, 0);
        /* In line (orthogonal and diagonal) with the goal: straight walks. */
        qn_vec2 starts[] = {{2.5f, 10.5f}, {10.5f, 1.5f}, {19.5f, 10.5f},
                            {2.5f, 2.5f},  {18.5f, 2.5f}, {3.5f, 17.5f}};
        o.starts = starts;
        o.start_count = 6;
        o.units = 6;
        assert_int_equal(qn_sim_run(&w, &o, &r), QN_OK);
        assert_int_equal(r.arrived, 6);
        assert_float_equal(r.stretch_mean, 1.0, 1e-3);
        assert_float_equal(r.stretch_p95, 1.0, 1e-3);
    }
    /* The reference is the octile optimum of the start cell. */
    qn_sim_world w;
    qn_sim_world_grid(&w, ctx, f, QN_FLOW_DIR8, goal);
    assert_true(fabs(w.reference(w.ctx, v2(2.2f, 7.9f)) - (5.0 + 3.0 * sqrt(2.0))) < 1e-9);
    assert_true(isinf(w.reference(w.ctx, v2(-1, 5))));
    free(ctx);
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
}

/* Starts come only from reachable cells, each about equally often, and lie
** inside the drawn cell. */
static void test_world_random_start(void **state) {
    (void)state;
    static const char *const rows[] = {
        "..@.....", /* the two cells left of the wall column are shut in */
        "@@@.....",
        "....@@..",
        "@@@@@...",
    };
    qn_grid *g = grid_of(rows, 4, 1.0f, v2(0, 0));
    qn_grid_field *f = field_at(g, 7, 3);
    qn_sim_grid_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    qn_sim_world w;
    qn_sim_world_grid(&w, ctx, f, QN_FLOW_DIR8, v2(7.5f, 3.5f));
    uint32_t want = 0, counts[32] = {0};
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t x = 0; x < 8; x++)
            want += isfinite(qn_grid_field_cost(f, x, y));
    assert_int_equal(ctx->reachable, want);
    assert_int_equal(want, 19);
    uint64_t rng = 11;
    for (int i = 0; i < 19000; i++) {
        double u1 = qn_rand_unit(&rng), u2 = qn_rand_unit(&rng), u3 = qn_rand_unit(&rng);
        qn_vec2 p;
        assert_true(w.random_start(w.ctx, u1, u2, u3, &p));
        uint32_t x, y;
        assert_int_equal(qn_grid_locate(g, p, &x, &y), QN_OK);
        assert_true(isfinite(qn_grid_field_cost(f, x, y)));
        counts[y * 8 + x]++;
    }
    for (uint32_t i = 0; i < 32; i++) {
        if (!isfinite(qn_grid_field_cost(f, i % 8, i / 8)))
            assert_int_equal(counts[i], 0);
        else
            assert_true(counts[i] > 800 && counts[i] < 1200); /* 1000 expected */
    }
    /* The extremes of u land in the first and last reachable cells. */
    qn_vec2 p;
    uint32_t x, y;
    assert_true(w.random_start(w.ctx, 0.0, 0.0, 0.0, &p));
    qn_grid_locate(g, p, &x, &y);
    assert_true(x == 3 && y == 0);
    assert_true(w.random_start(w.ctx, 0.9999999999, 0.9999999999, 0.9999999999, &p));
    qn_grid_locate(g, p, &x, &y);
    assert_true(x == 7 && y == 3);
    free(ctx);
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
}

/* The bundled arena map: with 8-direction flow every unit arrives and never
** touches a wall (the flow itself never cuts a corner). */
static void test_world_arena(void **state) {
    (void)state;
    const char *dir = getenv("QN_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/maps/arena.map", dir ? dir : "data");
    qn_grid *g = NULL;
    qn_error e;
    if (qn_map_load_file(path, NULL, &g, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    qn_grid_field *f = field_at(g, 24, 12);
    assert_true(qn_grid_cost(g, 24, 12) != QN_CELL_WALL);
    qn_sim_grid_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    qn_sim_world w;
    qn_sim_world_grid(&w, ctx, f, QN_FLOW_DIR8, v2(24.5f, 12.5f));
    qn_sim_opts o = {0};
    o.units = 400;
    o.seed = 5;
    qn_sim_result r;
    assert_int_equal(qn_sim_run(&w, &o, &r), QN_OK);
    assert_int_equal(r.arrived, 400);
    assert_int_equal(r.wall_contacts, 0);
    assert_int_equal(r.stuck, 0);
    /* 8-direction walks are octile paths from inside a cell: near 1. */
    assert_true(r.stretch_mean > 0.9 && r.stretch_mean < 1.3);
    free(ctx);
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_move_straight_and_blocked),
        cmocka_unit_test(test_move_corner_cut),
        cmocka_unit_test(test_move_vertex_and_faces),
        cmocka_unit_test(test_move_scaled),
        cmocka_unit_test(test_move_random),
        cmocka_unit_test(test_world_open),
        cmocka_unit_test(test_world_random_start),
        cmocka_unit_test(test_world_arena),
        cmocka_unit_test(test_vector_flow_arrives),
        cmocka_unit_test(test_vector_flow_far),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
