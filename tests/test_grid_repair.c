/* test_grid_repair.c: dynamic changes in grid mode. After any sequence of
** stamps, a field brought up to date by qn_grid_field_update equals a fresh
** build on the stamped grid exactly: the same doubles, the same 8-direction
** flow and the same vectors. Random grids and the bundled maps; walls put up
** and taken down, costs raised and lowered, goals walled in and walled over;
** journal overflow, early-exit fields, out of memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "internal.h"

#define DINF ((double)INFINITY)

/* Deterministic generator, so failures can be replayed. */
static uint32_t rng_next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static uint32_t rng_below(uint64_t *s, uint32_t n) { return rng_next(s) % n; }

/* ---- comparing against a fresh build ------------------------------------------ */

/* The goals a fresh build accepts now: those that are not walls. */
static uint32_t open_goals(const qn_grid *g, const uint32_t *goals, uint32_t n, uint32_t *out) {
    uint32_t k = 0, w = qn_grid_width(g);
    for (uint32_t i = 0; i < n; i++)
        if (qn_grid_cost(g, goals[i] % w, goals[i] / w) != QN_CELL_WALL) out[k++] = goals[i];
    return k;
}

/* Cell by cell: bit-identical values, directions and vectors. */
static void expect_same(const qn_grid_field *rep, const qn_grid_field *ref, bool flow,
                        const char *what) {
    const qn_grid *g = qn_grid_field_grid(rep);
    for (uint32_t y = 0; y < qn_grid_height(g); y++)
        for (uint32_t x = 0; x < qn_grid_width(g); x++) {
            double a = qn_grid_field_cost(rep, x, y), b = qn_grid_field_cost(ref, x, y);
            if (memcmp(&a, &b, sizeof a) != 0)
                fail_msg("%s: cell (%u, %u) value %.17g, rebuild %.17g", what, x, y, a, b);
            if (!flow) continue;
            uint8_t da = qn_grid_field_dir(rep, x, y), db = qn_grid_field_dir(ref, x, y);
            if (da != db) fail_msg("%s: cell (%u, %u) dir %u, rebuild %u", what, x, y, da, db);
            qn_vec2 va = qn_grid_field_vec(rep, x, y), vb = qn_grid_field_vec(ref, x, y);
            if (memcmp(&va, &vb, sizeof va) != 0)
                fail_msg("%s: cell (%u, %u) vec (%.9g, %.9g), rebuild (%.9g, %.9g)", what, x, y,
                         (double)va.x, (double)va.y, (double)vb.x, (double)vb.y);
        }
}

/* With every goal walled over, every cell is unreachable and has no direction. */
static void expect_all_unreachable(const qn_grid_field *f, const char *what) {
    const qn_grid *g = qn_grid_field_grid(f);
    for (uint32_t y = 0; y < qn_grid_height(g); y++)
        for (uint32_t x = 0; x < qn_grid_width(g); x++) {
            if (qn_grid_field_cost(f, x, y) != DINF)
                fail_msg("%s: cell (%u, %u) reachable with every goal walled", what, x, y);
            if (qn_grid_field_dir(f, x, y) != QN_DIR_NONE)
                fail_msg("%s: cell (%u, %u) has a direction", what, x, y);
        }
}

/* Updates f and checks it against a fresh build with the same options. */
static void update_and_check(qn_grid_field *f, const uint32_t *goals, uint32_t ng,
                             const qn_grid_field_opts *o, const char *what) {
    qn_error e;
    const qn_grid *g = qn_grid_field_grid(f);
    assert_int_equal(qn_grid_field_update(f, &e), QN_OK);
    assert_int_equal(e.code, QN_OK);
    assert_true(qn_grid_field_is_current(f));
    uint32_t *og = malloc((size_t)ng * sizeof *og);
    assert_non_null(og);
    uint32_t nopen = open_goals(g, goals, ng, og);
    if (nopen == 0) {
        expect_all_unreachable(f, what);
    } else {
        qn_grid_field *ref = NULL;
        assert_int_equal(qn_grid_field_create(g, og, nopen, o, NULL, &ref, &e), QN_OK);
        expect_same(f, ref, !o->no_flow && !o->stop_enabled, what);
        qn_grid_field_destroy(ref);
    }
    free(og);
}

/* ---- random stamps ------------------------------------------------------------- */

/* One random stamp of up to `side` cells a side: a wall block, an opening
** (cost 1, which also lowers costs), or a random cost. Now and then it lands
** on a goal: walled over or opened again. */
static void random_stamp(qn_grid *g, uint64_t *s, uint32_t side, const uint32_t *goals,
                         uint32_t ng) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    uint32_t sw = 1 + rng_below(s, side < w ? side : w), sh = 1 + rng_below(s, side < h ? side : h);
    uint32_t x0 = rng_below(s, w - sw + 1), y0 = rng_below(s, h - sh + 1);
    if (rng_below(s, 10) == 0) { /* on a goal */
        uint32_t goal = goals[rng_below(s, ng)];
        x0 = goal % w;
        y0 = goal / w;
        sw = sh = 1;
    }
    uint32_t kind = rng_below(s, 10);
    uint8_t cost = kind < 3 ? QN_CELL_WALL : kind < 6 ? 1 : (uint8_t)(2 + rng_below(s, 253));
    uint64_t before = qn_grid_version(g);
    assert_int_equal(qn_grid_stamp(g, x0, y0, x0 + sw, y0 + sh, cost), QN_OK);
    assert_true(qn_grid_version(g) == before || qn_grid_version(g) == before + 1);
    for (uint32_t y = y0; y < y0 + sh; y++)
        for (uint32_t x = x0; x < x0 + sw; x++) assert_int_equal(qn_grid_cost(g, x, y), cost);
}

static qn_grid *random_grid(uint64_t *s, uint32_t w, uint32_t h) {
    uint8_t *c = malloc((size_t)w * h);
    assert_non_null(c);
    uint32_t wall_pct = rng_below(s, 40), max_cost = rng_below(s, 2) ? 1 : 1 + rng_below(s, 30);
    for (size_t i = 0; i < (size_t)w * h; i++)
        c[i] = rng_below(s, 100) < wall_pct ? QN_CELL_WALL : (uint8_t)(1 + rng_below(s, max_cost));
    qn_grid_desc d = {w, h, c, 1.0f, {0, 0}};
    qn_grid *g = NULL;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    free(c);
    return g;
}

/* Up to `max` distinct open cells as goals; 0 when the grid has none. */
static uint32_t pick_goals(const qn_grid *g, uint64_t *s, uint32_t max, uint32_t *goals) {
    uint32_t w = qn_grid_width(g), n = w * qn_grid_height(g), k = 0;
    for (int tries = 0; tries < 400 && k < max; tries++) {
        uint32_t c = rng_below(s, n);
        bool dup = false;
        for (uint32_t i = 0; i < k; i++) dup |= goals[i] == c;
        if (!dup && qn_grid_cost(g, c % w, c / w) != QN_CELL_WALL) goals[k++] = c;
    }
    return k;
}

/* An earlier sequence may have walled a goal over: open it for a fresh build. */
static void reopen_goals(qn_grid *g, const uint32_t *goals, uint32_t ng) {
    uint32_t w = qn_grid_width(g);
    for (uint32_t i = 0; i < ng; i++)
        if (qn_grid_cost(g, goals[i] % w, goals[i] / w) == QN_CELL_WALL)
            assert_int_equal(qn_grid_stamp(g, goals[i] % w, goals[i] / w, goals[i] % w + 1,
                                           goals[i] / w + 1, 1),
                             QN_OK);
}

/* One sequence: a field on g, then `rounds` rounds of 1..4 stamps, each
** round followed by an update checked against a rebuild. */
static void run_sequence(qn_grid *g, const uint32_t *goals, uint32_t ng,
                         const qn_grid_field_opts *o, uint64_t *s, int rounds, uint32_t side,
                         const char *name) {
    qn_grid_field *f = NULL;
    qn_error e;
    reopen_goals(g, goals, ng);
    assert_int_equal(qn_grid_field_create(g, goals, ng, o, NULL, &f, &e), QN_OK);
    assert_true(qn_grid_field_is_current(f));
    char what[160];
    for (int r = 0; r < rounds; r++) {
        uint32_t stamps = 1 + rng_below(s, 4);
        for (uint32_t i = 0; i < stamps; i++) random_stamp(g, s, side, goals, ng);
        snprintf(what, sizeof what, "%s round %d", name, r);
        update_and_check(f, goals, ng, o, what);
    }
    qn_grid_field_destroy(f);
}

/* 1,200 sequences on random grids: walls and costs, both connectivities,
** one to four goals, about six updates each. */
static void test_random_sequences(void **state) {
    (void)state;
    uint64_t s = 12345;
    int sequences = 0;
    for (int i = 0; i < 1200; i++) {
        qn_grid *g = random_grid(&s, 4 + rng_below(&s, 40), 4 + rng_below(&s, 40));
        uint32_t goals[4];
        uint32_t ng = pick_goals(g, &s, 1 + rng_below(&s, 4), goals);
        if (ng > 0) {
            qn_grid_field_opts o = {i % 2 ? QN_CONNECT_4 : QN_CONNECT_8, false, 0, i % 7 == 0};
            char name[64];
            snprintf(name, sizeof name, "sequence %d", i);
            run_sequence(g, goals, ng, &o, &s, 2 + (int)rng_below(&s, 8), 6, name);
            sequences++;
        }
        qn_grid_destroy(g);
    }
    assert_true(sequences >= 1000);
}

/* ---- the bundled maps ---------------------------------------------------------- */

static qn_grid *load_map(const char *name) {
    const char *dir = getenv("QN_DATA_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/maps/%s", dir && *dir ? dir : "data", name);
    qn_grid *g = NULL;
    qn_error e;
    if (qn_map_load_file(path, NULL, &g, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    return g;
}

/* Walls the 3x3 block around a goal's ring (not the goal), checks, and
** takes the ring down again. With the goal sealed, only the other goals
** reach anything. */
static void seal_goal(qn_grid_field *f, qn_grid *g, const uint32_t *goals, uint32_t ng,
                      const qn_grid_field_opts *o, const char *name) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g), x = goals[0] % w, y = goals[0] / w;
    uint32_t x0 = x > 1 ? x - 1 : 0, y0 = y > 1 ? y - 1 : 0;
    uint32_t x1 = x + 2 < w ? x + 2 : w, y1 = y + 2 < h ? y + 2 : h;
    uint8_t keep = qn_grid_cost(g, x, y);
    uint8_t *saved = malloc((size_t)(x1 - x0) * (y1 - y0));
    assert_non_null(saved);
    for (uint32_t yy = y0; yy < y1; yy++)
        for (uint32_t xx = x0; xx < x1; xx++) saved[(yy - y0) * (x1 - x0) + xx - x0] = qn_grid_cost(g, xx, yy);
    assert_int_equal(qn_grid_stamp(g, x0, y0, x1, y1, QN_CELL_WALL), QN_OK);
    assert_int_equal(qn_grid_stamp(g, x, y, x + 1, y + 1, keep), QN_OK);
    char what[160];
    snprintf(what, sizeof what, "%s: goal sealed in", name);
    update_and_check(f, goals, ng, o, what);
    if (ng == 1) /* the goal itself is at 0; every other cell is cut off */
        for (uint32_t c = 0; c < w * h; c++)
            if (c != goals[0]) assert_true(qn_grid_field_cost(f, c % w, c / w) == DINF);
    for (uint32_t yy = y0; yy < y1; yy++)
        for (uint32_t xx = x0; xx < x1; xx++)
            assert_int_equal(qn_grid_stamp(g, xx, yy, xx + 1, yy + 1,
                                           saved[(yy - y0) * (x1 - x0) + xx - x0]),
                             QN_OK);
    snprintf(what, sizeof what, "%s: goal unsealed", name);
    update_and_check(f, goals, ng, o, what);
    free(saved);
}

static void map_sequences(const char *map, int sequences, int rounds, uint32_t side,
                          uint64_t seed) {
    qn_grid *g = load_map(map);
    uint64_t s = seed;
    for (int i = 0; i < sequences; i++) {
        uint32_t goals[3];
        uint32_t ng = pick_goals(g, &s, 1 + (uint32_t)i % 3, goals);
        assert_true(ng > 0);
        qn_grid_field_opts o = {i % 2 ? QN_CONNECT_4 : QN_CONNECT_8, false, 0, false};
        char name[96];
        snprintf(name, sizeof name, "%s sequence %d", map, i);
        run_sequence(g, goals, ng, &o, &s, rounds, side, name);
        qn_grid_field *f = NULL;
        reopen_goals(g, goals, ng);
        assert_int_equal(qn_grid_field_create(g, goals, ng, &o, NULL, &f, NULL), QN_OK);
        seal_goal(f, g, goals, ng, &o, name);
        qn_grid_field_destroy(f);
    }
    qn_grid_destroy(g);
}

static void test_arena(void **state) {
    (void)state;
    map_sequences("arena.map", 40, 10, 8, 7);
}

static void test_lak303d(void **state) {
    (void)state;
    map_sequences("lak303d.map", 12, 6, 12, 8);
}

static void test_berlin(void **state) {
    (void)state;
    map_sequences("Berlin_0_256.map", 3, 4, 16, 9);
}

/* ---- particular cases ---------------------------------------------------------- */

static qn_grid *open_grid(uint32_t w, uint32_t h) {
    uint8_t *c = malloc((size_t)w * h);
    assert_non_null(c);
    memset(c, 1, (size_t)w * h);
    qn_grid_desc d = {w, h, c, 1.0f, {0, 0}};
    qn_grid *g = NULL;
    assert_int_equal(qn_grid_create(&d, NULL, &g, NULL), QN_OK);
    free(c);
    return g;
}

static void test_stamp_arguments(void **state) {
    (void)state;
    qn_grid *g = open_grid(10, 6);
    assert_int_equal(qn_grid_version(g), 0);
    assert_int_equal(qn_grid_stamp(NULL, 0, 0, 1, 1, 5), QN_E_INVALID_ARG);
    assert_int_equal(qn_grid_stamp(g, 0, 0, 1, 1, 0), QN_E_INVALID_ARG);   /* cost 0 */
    assert_int_equal(qn_grid_stamp(g, 3, 0, 3, 1, 5), QN_E_INVALID_ARG);   /* empty */
    assert_int_equal(qn_grid_stamp(g, 0, 4, 1, 2, 5), QN_E_INVALID_ARG);   /* inverted */
    assert_int_equal(qn_grid_stamp(g, 8, 0, 11, 1, 5), QN_E_INVALID_ARG);  /* past width */
    assert_int_equal(qn_grid_stamp(g, 0, 5, 1, 7, 5), QN_E_INVALID_ARG);   /* past height */
    assert_int_equal(qn_grid_version(g), 0);
    for (uint32_t i = 0; i < 60; i++) assert_int_equal(qn_grid_costs(g)[i], 1);
    /* The whole grid is a valid rectangle; a stamp changing nothing does not count. */
    assert_int_equal(qn_grid_stamp(g, 0, 0, 10, 6, 1), QN_OK);
    assert_int_equal(qn_grid_version(g), 0);
    assert_int_equal(qn_grid_stamp(g, 9, 5, 10, 6, QN_CELL_WALL), QN_OK);
    assert_int_equal(qn_grid_version(g), 1);
    assert_int_equal(qn_grid_cost(g, 9, 5), QN_CELL_WALL);
    assert_int_equal(qn_grid_stamp(g, 8, 4, 10, 6, QN_CELL_WALL), QN_OK); /* 3 cells change */
    assert_int_equal(qn_grid_version(g), 2);
    assert_int_equal(qn_grid_version(NULL), 0);
    assert_int_equal(qn_grid_field_update(NULL, NULL), QN_E_INVALID_ARG);
    assert_false(qn_grid_field_is_current(NULL));
    qn_grid_destroy(g);
}

/* The corner rule follows the stamps: a wall next to a diagonal move
** forbids it, taking the wall down allows it again. */
static void test_corner_rule_follows(void **state) {
    (void)state;
    qn_grid *g = open_grid(3, 3);
    uint32_t goal = 0;
    qn_grid_field *f = NULL;
    assert_int_equal(qn_grid_field_create(g, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
    assert_true(fabs(qn_grid_field_cost(f, 1, 1) - sqrt(2.0)) < 1e-12);
    assert_int_equal(qn_grid_field_dir(f, 1, 1), 5); /* NW */
    assert_int_equal(qn_grid_stamp(g, 1, 0, 2, 1, QN_CELL_WALL), QN_OK);
    assert_false(qn_grid_field_is_current(f));
    assert_int_equal(qn_grid_field_update(f, NULL), QN_OK);
    assert_true(qn_grid_field_is_current(f));
    assert_true(qn_grid_field_cost(f, 1, 1) == 2.0); /* down, then left */
    assert_int_equal(qn_grid_field_dir(f, 1, 1), 4); /* W */
    assert_int_equal(qn_grid_stamp(g, 1, 0, 2, 1, 1), QN_OK);
    assert_int_equal(qn_grid_field_update(f, NULL), QN_OK);
    assert_true(fabs(qn_grid_field_cost(f, 1, 1) - sqrt(2.0)) < 1e-12);
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
}

/* A goal stamped to a wall stops being a goal: alone, it leaves every cell
** unreachable (sampling says so); opened again, it is a goal again. With
** other goals, they take over. */
static void test_goal_walled_over(void **state) {
    (void)state;
    qn_grid *g = open_grid(8, 5);
    uint32_t goals[2] = {1 * 8 + 1, 3 * 8 + 6};
    qn_grid_field_opts o = {QN_CONNECT_8, false, 0, false};
    qn_grid_field *one = NULL, *two = NULL;
    assert_int_equal(qn_grid_field_create(g, goals, 1, &o, NULL, &one, NULL), QN_OK);
    assert_int_equal(qn_grid_field_create(g, goals, 2, &o, NULL, &two, NULL), QN_OK);
    assert_int_equal(qn_grid_stamp(g, 1, 1, 2, 2, QN_CELL_WALL), QN_OK);
    update_and_check(one, goals, 1, &o, "single goal walled");
    update_and_check(two, goals, 2, &o, "one of two goals walled");
    qn_vec2 dir;
    assert_int_equal(qn_grid_field_sample(one, QN_FLOW_DIR8, qn__v2(5.5f, 2.5f), NULL, &dir),
                     QN_E_UNREACHABLE);
    assert_int_equal(qn_grid_field_sample(one, QN_FLOW_VECTOR, qn__v2(1.5f, 1.5f), NULL, &dir),
                     QN_E_BLOCKED);
    assert_int_equal(qn_grid_field_sample(two, QN_FLOW_DIR8, qn__v2(5.5f, 2.5f), NULL, &dir),
                     QN_OK);
    /* (0, 0) now goes to the goal at (6, 3): 3 straight and 3 diagonal steps. */
    assert_true(fabs(qn_grid_field_cost(two, 0, 0) - (3.0 + 3.0 * sqrt(2.0))) < 1e-9);
    /* A fresh build refuses the walled goal. */
    qn_grid_field *fresh = NULL;
    assert_int_equal(qn_grid_field_create(g, goals, 1, &o, NULL, &fresh, NULL), QN_E_BLOCKED);
    assert_int_equal(qn_grid_stamp(g, 1, 1, 2, 2, 3), QN_OK); /* open, at a cost */
    update_and_check(one, goals, 1, &o, "single goal opened");
    update_and_check(two, goals, 2, &o, "goal opened");
    assert_true(qn_grid_field_cost(one, 1, 1) == 0.0);
    assert_int_equal(qn_grid_field_sample(one, QN_FLOW_DIR8, qn__v2(1.5f, 1.5f), NULL, &dir),
                     QN_AT_GOAL);
    qn_grid_field_destroy(one);
    qn_grid_field_destroy(two);
    qn_grid_destroy(g);
}

/* More stamps than the journal keeps: the update rebuilds, and still equals
** a fresh build; exactly a journal's worth is repaired. */
static void test_journal_overflow(void **state) {
    (void)state;
    qn_grid *g = open_grid(40, 30);
    uint32_t goal = 15 * 40 + 20;
    qn_grid_field_opts o = {QN_CONNECT_8, false, 0, false};
    for (uint32_t extra = 0; extra < 2; extra++) {
        qn_grid_field *f = NULL;
        assert_int_equal(qn_grid_field_create(g, &goal, 1, &o, NULL, &f, NULL), QN_OK);
        uint64_t v0 = qn_grid_version(g);
        for (uint32_t i = 0; i < QN_GRID_JOURNAL + extra * 7; i++) {
            uint32_t x = (i * 7) % 40, y = (i * 11) % 30;
            if (y * 40 + x == goal) x = (x + 1) % 40;
            uint8_t c = qn_grid_cost(g, x, y) == 1 ? (uint8_t)(2 + i % 200) : 1;
            if (i % 5 == 0) c = qn_grid_cost(g, x, y) == QN_CELL_WALL ? 1 : QN_CELL_WALL;
            assert_int_equal(qn_grid_stamp(g, x, y, x + 1, y + 1, c), QN_OK);
        }
        assert_int_equal(qn_grid_version(g) - v0, QN_GRID_JOURNAL + extra * 7);
        assert_false(qn_grid_field_is_current(f));
        update_and_check(f, &goal, 1, &o, extra ? "journal overflowed" : "journal full");
        qn_grid_field_destroy(f);
    }
    qn_grid_destroy(g);
}

/* Early-exit fields are rebuilt with their stop cell, and the value there
** is exact; integration-only fields repair their values. A field built
** after a stamp starts current. */
static void test_other_field_kinds(void **state) {
    (void)state;
    uint64_t s = 99;
    for (int i = 0; i < 40; i++) {
        qn_grid *g = random_grid(&s, 10 + rng_below(&s, 30), 10 + rng_below(&s, 30));
        uint32_t cells[2];
        if (pick_goals(g, &s, 2, cells) == 2) {
            qn_grid_field_opts stop = {i % 2 ? QN_CONNECT_4 : QN_CONNECT_8, true, cells[1], false};
            run_sequence(g, cells, 1, &stop, &s, 4, 5, "early exit");
            qn_grid_field_opts bare = {QN_CONNECT_8, false, 0, true};
            run_sequence(g, cells, 1, &bare, &s, 4, 5, "no flow");
        }
        qn_grid_destroy(g);
    }
    qn_grid *g = open_grid(5, 5);
    assert_int_equal(qn_grid_stamp(g, 2, 2, 3, 3, 9), QN_OK);
    uint32_t goal = 0;
    qn_grid_field *f = NULL;
    assert_int_equal(qn_grid_field_create(g, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
    assert_true(qn_grid_field_is_current(f));
    assert_int_equal(qn_grid_field_update(f, NULL), QN_OK); /* nothing to do */
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
}

/* Cutting an open grid in two with a wall and opening a door: rises and
** falls over most of the grid, and the door closed again. */
static void test_cut_and_door(void **state) {
    (void)state;
    qn_grid *g = open_grid(60, 40);
    uint32_t goal = 20 * 60 + 5;
    qn_grid_field_opts o = {QN_CONNECT_8, false, 0, false};
    qn_grid_field *f = NULL;
    assert_int_equal(qn_grid_field_create(g, &goal, 1, &o, NULL, &f, NULL), QN_OK);
    assert_int_equal(qn_grid_stamp(g, 30, 0, 31, 40, QN_CELL_WALL), QN_OK);
    update_and_check(f, &goal, 1, &o, "cut");
    assert_true(qn_grid_field_cost(f, 50, 20) == DINF);
    assert_int_equal(qn_grid_stamp(g, 30, 35, 31, 36, 1), QN_OK);
    update_and_check(f, &goal, 1, &o, "door");
    assert_true(isfinite(qn_grid_field_cost(f, 50, 20)));
    assert_int_equal(qn_grid_stamp(g, 28, 10, 30, 12, 40), QN_OK); /* mud by the wall */
    assert_int_equal(qn_grid_stamp(g, 30, 35, 31, 36, QN_CELL_WALL), QN_OK);
    update_and_check(f, &goal, 1, &o, "door closed");
    assert_true(qn_grid_field_cost(f, 50, 20) == DINF);
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
}

static void test_level_grid_mut(void **state) {
    (void)state;
    assert_null(qn_level_grid_mut(NULL));
    const char *dir = getenv("QN_TEST_DATA_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/good/mixed.json", dir && *dir ? dir : "tests/data");
    qn_level *lv = NULL;
    qn_error e;
    if (qn_level_load_file(path, NULL, &lv, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    qn_grid *g = qn_level_grid_mut(lv);
    assert_non_null(g);
    assert_ptr_equal(g, qn_level_grid(lv));
    uint8_t was = qn_grid_cost(g, 0, 0);
    uint8_t now = was == 7 ? 8 : 7;
    assert_int_equal(qn_grid_stamp(g, 0, 0, 1, 1, now), QN_OK);
    assert_int_equal(qn_grid_cost(qn_level_grid(lv), 0, 0), now);
    qn_level_destroy(lv);
}

/* ---- out of memory --------------------------------------------------------------- */

/* Fails allocation k of an update, for k = 0, 1, ... until one succeeds:
** a failed update leaves every cell unreachable and the field not current;
** the next update (memory back) equals a rebuild; nothing leaks. `big`
** stamps more than a quarter of the grid (the rebuild path). */
static void oom_loop(bool big) {
    uint64_t s = 5;
    qn_grid *g = random_grid(&s, 120, 90);
    uint32_t goal;
    assert_int_equal(pick_goals(g, &s, 1, &goal), 1);
    qn_grid_field_opts o = {QN_CONNECT_8, false, 0, false};
    bool succeeded = false;
    uint64_t k;
    for (k = 0; k < 5000 && !succeeded; k++) {
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, UINT64_MAX);
        qn_grid_field *f = NULL;
        assert_int_equal(qn_grid_field_create(g, &goal, 1, &o, &a, &f, NULL), QN_OK);
        /* A wall line through the middle and a cheaper strip: much moves. */
        uint8_t line = qn_grid_cost(g, 60, 0) == QN_CELL_WALL ? 1 : QN_CELL_WALL;
        if (big)
            assert_int_equal(qn_grid_stamp(g, 0, 0, 120, 50, (uint8_t)(1 + k % 2)), QN_OK);
        else
            assert_int_equal(qn_grid_stamp(g, 60, 0, 61, 90, line), QN_OK);
        if (goal % 120 == 60) assert_int_equal(qn_grid_stamp(g, 60, goal / 120, 61, goal / 120 + 1, 1), QN_OK);
        fa.fail_at = fa.calls + k;
        qn_error e;
        qn_status st = qn_grid_field_update(f, &e);
        fa.fail_at = UINT64_MAX;
        if (st == QN_OK) {
            succeeded = true;
        } else {
            assert_int_equal(st, QN_E_NOMEM);
            assert_int_equal(e.code, QN_E_NOMEM);
            assert_true(fa.failures > 0);
            assert_false(qn_grid_field_is_current(f));
            for (uint32_t c = 0; c < 120 * 90; c++) {
                assert_true(qn_grid_field_cost(f, c % 120, c / 120) == DINF);
                assert_int_equal(qn_grid_field_dir(f, c % 120, c / 120), QN_DIR_NONE);
            }
            qn_vec2 dir;
            assert_int_equal(qn_grid_field_sample(f, QN_FLOW_VECTOR,
                                                  qn__v2((float)(goal % 120) + 0.5f,
                                                         (float)(goal / 120) + 0.5f),
                                                  NULL, &dir),
                             QN_E_UNREACHABLE);
        }
        update_and_check(f, &goal, 1, &o, big ? "after oom (big)" : "after oom");
        qn_grid_field_destroy(f);
        assert_int_equal(fa.live, 0);
    }
    assert_true(succeeded);
    assert_true(k > 3); /* several allocations could fail: the loop reached them */
    qn_grid_destroy(g);
}

static void test_failing_allocator(void **state) {
    (void)state;
    oom_loop(false);
    oom_loop(true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stamp_arguments),
        cmocka_unit_test(test_corner_rule_follows),
        cmocka_unit_test(test_goal_walled_over),
        cmocka_unit_test(test_journal_overflow),
        cmocka_unit_test(test_other_field_kinds),
        cmocka_unit_test(test_cut_and_door),
        cmocka_unit_test(test_level_grid_mut),
        cmocka_unit_test(test_random_sequences),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_lak303d),
        cmocka_unit_test(test_berlin),
        cmocka_unit_test(test_failing_allocator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
