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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_harness_straight),
        cmocka_unit_test(test_town),
        cmocka_unit_test(test_maze),
        cmocka_unit_test(test_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
