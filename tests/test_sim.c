/* test_sim.c: the simulation on every bundled level: every unit arrives,
** no move leaves traversable space, none is stuck. Also the harness itself
** on a level where the answer is known. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quadnav.h"
#include "sim.h"
#include "testmesh.h"

static qn_level *load_bundled(const char *name) {
    const char *dir = getenv("QN_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/levels/%s.json", dir ? dir : "data", name);
    qn_level *level = NULL;
    qn_error e;
    if (qn_level_load_file(path, NULL, &level, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    return level;
}

static void run_level(const char *name) {
    qn_level *level = load_bundled(name);
    const qn_mesh *m = qn_level_mesh(level);
    for (uint32_t gi = 0; gi < qn_level_goal_count(level); gi++) {
        qn_vec2 goal;
        const char *gname;
        assert_int_equal(qn_level_goal(level, gi, &gname, &goal), QN_OK);
        for (int r = 0; r < 2; r++) {
            qn_field_opts fo = {.radius = r == 0 ? 0.25f : 0.5f};
            qn_field *f = NULL;
            qn_error e;
            if (qn_field_create(m, &goal, 1, &fo, NULL, &f, &e) != QN_OK) fail_msg("%s", e.message);
            qn_sim_world w;
            qn_sim_quad_ctx ctx;
            qn_sim_world_quad(&w, &ctx, f, goal);
            for (uint64_t seed = 1; seed <= 2; seed++) {
                qn_sim_opts o = {0};
                o.units = 1000;
                o.seed = seed;
                o.step = 0.2f;
                qn_sim_result res;
                assert_int_equal(qn_sim_run(&w, &o, &res), QN_OK);
                if (res.arrived != res.units || res.wall_contacts || res.stuck)
                    fail_msg("%s goal %s radius %g seed %u: arrived %u/%u, contacts %llu, stuck %u",
                             name, gname, (double)fo.radius, (unsigned)seed, res.arrived,
                             res.units, (unsigned long long)res.wall_contacts, res.stuck);
                /* Stretch is walked / cost-at-start, where the cost goes via
                ** portal mid points: near 1, a little under is expected. */
                assert_true(res.stretch_mean > 0.7 && res.stretch_mean < 1.3);
                assert_true(res.stretch_p95 >= res.stretch_mean && res.stretch_p95 < 1.6);
            }
            /* From the level's spawns as well. */
            uint32_t ns = qn_level_spawn_count(level);
            qn_vec2 starts[64];
            for (uint32_t i = 0; i < ns && i < 64; i++) qn_level_spawn(level, i, &gname, &starts[i]);
            qn_sim_opts o = {0};
            o.units = 200;
            o.starts = starts;
            o.start_count = ns < 64 ? ns : 64;
            qn_sim_result res;
            assert_int_equal(qn_sim_run(&w, &o, &res), QN_OK);
            assert_int_equal(res.arrived, res.units);
            assert_int_equal(res.wall_contacts, 0);
            qn_field_destroy(f);
        }
    }
    qn_level_destroy(level);
}

static void test_town(void **state) { (void)state; run_level("town"); }
static void test_maze(void **state) { (void)state; run_level("maze"); }
static void test_field(void **state) { (void)state; run_level("field"); }

/* A straight corridor: every unit walks straight to the goal, so the walked
** distance equals the straight-line distance, and the harness must say so. */
static void test_harness_straight(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 10, 4);
    tm_add_rect(&t, 10, 0, 20, 4);
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = {19, 2};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, f, goal);
    qn_vec2 start = {1, 2};
    qn_sim_opts o = {0};
    o.units = 3;
    o.starts = &start;
    o.start_count = 1;
    qn_sim_result r;
    assert_int_equal(qn_sim_run(&w, &o, &r), QN_OK);
    assert_int_equal(r.arrived, 3);
    assert_int_equal(r.stuck, 0);
    /* cost at start: 9 to the portal mid (10, 2) + 9 from there = 18 = walked */
    assert_float_equal(r.stretch_mean, 1.0, 1e-4);
    /* A unit outside every quad is lost: stuck, not arrived. */
    qn_vec2 lost = {30, 30};
    o.starts = &lost;
    o.units = 1;
    assert_int_equal(qn_sim_run(&w, &o, &r), QN_OK);
    assert_int_equal(r.arrived, 0);
    assert_int_equal(r.stuck, 1);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

/* Units do not interact: any thread count gives the same outcome. */
static void test_threads_same_result(void **state) {
    (void)state;
    qn_level *level = load_bundled("maze");
    qn_vec2 goal;
    const char *gname;
    qn_level_goal(level, 0, &gname, &goal);
    qn_field_opts fo = {.radius = 0.25f};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(qn_level_mesh(level), &goal, 1, &fo, NULL, &f, NULL), QN_OK);
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, f, goal);
    qn_sim_result r1, r3;
    qn_sim_opts o = {.units = 500, .seed = 9};
    assert_int_equal(qn_sim_run(&w, &o, &r1), QN_OK);
    o.threads = 3;
    assert_int_equal(qn_sim_run(&w, &o, &r3), QN_OK);
    assert_int_equal(r1.arrived, r3.arrived);
    assert_int_equal(r1.steps, r3.steps);
    assert_int_equal(r1.samples, r3.samples);
    assert_true(r1.stretch_mean == r3.stretch_mean && r1.stretch_p95 == r3.stretch_p95);
    qn_field_destroy(f);
    qn_level_destroy(level);
}

#ifndef QN_TRIES
#define QN_TRIES 30
#define QN_STRIDE 2
#endif

typedef struct blocker {
    qn_mesh *mesh;
    qn_field *field;
    uint32_t quad, at;
} blocker;

static void block_now(void *ud, uint32_t step) {
    blocker *b = ud;
    if (step != b->at) return;
    assert_int_equal(qn_mesh_set_quad_blocked(b->mesh, b->quad, true), QN_OK);
    assert_int_equal(qn_field_update(b->field, NULL), QN_OK);
}

/* A street is blocked while units walk: units on it walk out, everyone
** re-routes, nobody is lost (the town stays connected without it). */
static void test_block_during_run(void **state) {
    (void)state;
    qn_level *level = load_bundled("town");
    qn_mesh *m = qn_level_mesh_mut(level);
    qn_vec2 goal;
    const char *gname;
    qn_level_goal(level, 0, &gname, &goal);
    uint32_t goal_quad;
    qn_mesh_locate(m, goal, QN_NONE, &goal_quad);
    qn_field_opts fo = {.radius = 0.25f, .repairable = true};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &fo, NULL, &f, NULL), QN_OK);
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, f, goal);
    uint32_t tried = 0;
    for (uint32_t q = 0; q < qn_mesh_quad_count(m) && tried < QN_TRIES; q += QN_STRIDE) {
        if (q == goal_quad) continue;
        qn_mesh_set_quad_blocked(m, q, true);
        bool split = qn_mesh_island_count(m) != 1;
        qn_mesh_set_quad_blocked(m, q, false);
        qn_field_update(f, NULL);
        if (split) continue;
        tried++;
        blocker b = {m, f, q, 60};
        qn_sim_opts o = {.units = 400, .seed = q, .before_step = block_now, .before_step_ud = &b};
        qn_sim_result r;
        assert_int_equal(qn_sim_run(&w, &o, &r), QN_OK);
        if (r.arrived != r.units || r.wall_contacts)
            fail_msg("blocking quad %u: arrived %u of %u, %llu contacts, %u stuck", q, r.arrived,
                     r.units, (unsigned long long)r.wall_contacts, r.stuck);
        qn_mesh_set_quad_blocked(m, q, false);
        qn_field_update(f, NULL);
    }
    assert_true(tried >= 8);
    qn_field_destroy(f);
    qn_level_destroy(level);
}

/* Far-out levels where units once failed: each run's units all arrive,
** with no wall contact.
** - fences_far.json: a 24 x 24 grid of unit cells with ten fences (cells
**   side by side with no link), turned 0.35 degrees and moved 20,000 units
**   out (the mesh tolerance is 0.02 there); 300 units of radius 0.25. A
**   unit behind a fence, within a radius of its end, went to and fro
**   beside it; and a unit passing a fence's end on one side was sent round
**   it on the side the corner's own paths take, beyond the fence, on
**   alternate steps.
** - jitter_far.json: 20 x 16 quads of a jittered lattice, a few left out,
**   turned 0.7 degrees and moved 30,000 units out; 200 point agents. One
**   started within the reach tolerance of a corner (0.11 there) on the
**   obstacle's side of the corner's way on, was told to go straight along
**   that way, and walked into the obstacle's face. */
static void test_far_levels(void **state) {
    (void)state;
    static const struct {
        const char *file;
        float radius;
        uint32_t units;
        uint64_t seed;
    } runs[] = {{"fences_far.json", 0.25f, 300, 4}, {"jitter_far.json", 0.0f, 200, 6}};
    const char *dir = getenv("QN_TEST_DATA_DIR");
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/far/%s", dir && *dir ? dir : "tests/data", runs[k].file);
        qn_level *level = NULL;
        qn_error e;
        if (qn_level_load_file(path, NULL, &level, &e) != QN_OK)
            fail_msg("%s: %s", path, e.message);
        qn_vec2 goal;
        const char *gname;
        assert_int_equal(qn_level_goal(level, 0, &gname, &goal), QN_OK);
        qn_field_opts fo = {.radius = runs[k].radius};
        qn_field *f = NULL;
        assert_int_equal(qn_field_create(qn_level_mesh(level), &goal, 1, &fo, NULL, &f, NULL),
                         QN_OK);
        qn_sim_world w;
        qn_sim_quad_ctx ctx;
        qn_sim_world_quad(&w, &ctx, f, goal);
        qn_sim_opts o = {0};
        o.units = runs[k].units;
        o.seed = runs[k].seed;
        o.step = 0.2f;
        qn_sim_result res;
        assert_int_equal(qn_sim_run(&w, &o, &res), QN_OK);
        if (res.arrived != res.units || res.wall_contacts || res.stuck)
            fail_msg("%s: arrived %u/%u, contacts %llu, stuck %u", runs[k].file, res.arrived,
                     res.units, (unsigned long long)res.wall_contacts, res.stuck);
        qn_field_destroy(f);
        qn_level_destroy(level);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_harness_straight),
        cmocka_unit_test(test_far_levels),
        cmocka_unit_test(test_town),
        cmocka_unit_test(test_maze),
        cmocka_unit_test(test_field),
        cmocka_unit_test(test_threads_same_result),
        cmocka_unit_test(test_block_during_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
