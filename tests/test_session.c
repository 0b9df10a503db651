/* test_session.c: the run stepped one step at a time gives what qn_sim_run
** gives; the session (terrain from memory, goal, mode, run, changes) that
** `quadnav sim` on maps and the web viewer share; its bad inputs. */
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
#include "session.h"
#include "sim.h"

static char *read_bundled(const char *rel, size_t *len) {
    const char *dir = getenv("QN_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "data", rel);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    char *buf = malloc(1 << 22);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 22) - 1, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

static void assert_same(const qn_sim_result *a, const qn_sim_result *b) {
    assert_int_equal(a->units, b->units);
    assert_int_equal(a->arrived, b->arrived);
    assert_int_equal(a->stuck, b->stuck);
    assert_int_equal(a->wall_contacts, b->wall_contacts);
    assert_int_equal(a->samples, b->samples);
    assert_int_equal(a->steps, b->steps);
    assert_int_equal(a->escapes, b->escapes);
    assert_true(a->stretch_mean == b->stretch_mean);
    assert_true(a->stretch_p95 == b->stretch_p95);
}

/* The stepped run in every mode equals qn_sim_run over the same world. */
static void stepped_equals_run(const char *rel, qn_vec2 goal, qn_sim_mode mode) {
    size_t len;
    char *text = read_bundled(rel, &len);
    qn_session *s = NULL;
    qn_error e;
    assert_int_equal(qn_session_create(text, len, &s, &e), QN_OK);
    free(text);
    double us = -1;
    if (qn_session_set_goal(s, mode, goal, 0.25f, &us, &e) != QN_OK) fail_msg("%s", e.message);
    assert_true(us >= 0);
    qn_sim_opts o = {.units = 300, .seed = 9, .step = 0.2f};
    assert_int_equal(qn_session_start(s, &o), QN_OK);
    uint32_t steps = 0;
    while (qn_session_step(s))
        steps++;
    assert_false(qn_session_step(s)); /* done: stays done */
    qn_sim_result stepped, whole;
    assert_int_equal(qn_sim_state_result(qn_session_run(s), &stepped), QN_OK);
    assert_int_equal(stepped.steps, steps);
    /* The same world through qn_sim_run: a second session, same goal. */
    text = read_bundled(rel, &len);
    qn_session *t = NULL;
    assert_int_equal(qn_session_create(text, len, &t, &e), QN_OK);
    free(text);
    assert_int_equal(qn_session_set_goal(t, mode, goal, 0.25f, NULL, &e), QN_OK);
    assert_int_equal(qn_session_start(t, &o), QN_OK); /* builds the world */
    qn_sim_world w;
    qn_sim_quad_ctx qc;
    qn_sim_grid_ctx *gc = malloc(sizeof *gc);
    assert_non_null(gc);
    if (mode == QN_MODE_QUAD)
        qn_sim_world_quad(&w, &qc, qn_session_field(t), goal);
    else
        qn_sim_world_grid(&w, gc, qn_session_grid_field(t),
                          mode == QN_MODE_GRID8 ? QN_FLOW_DIR8 : QN_FLOW_VECTOR, goal);
    assert_int_equal(qn_sim_run(&w, &o, &whole), QN_OK);
    assert_same(&stepped, &whole);
    assert_int_equal(whole.arrived, 300);
    assert_int_equal(whole.wall_contacts, 0);
    free(gc);
    qn_session_destroy(t);
    qn_session_destroy(s);
}

static void test_stepped_town_quad(void **state) {
    (void)state;
    stepped_equals_run("levels/town.json", (qn_vec2){60, 45}, QN_MODE_QUAD);
}
static void test_stepped_town_gridvec(void **state) {
    (void)state;
    stepped_equals_run("levels/town.json", (qn_vec2){60, 45}, QN_MODE_GRIDVEC);
}
static void test_stepped_map_quad(void **state) {
    (void)state;
    stepped_equals_run("maps/arena.map", (qn_vec2){30.5f, 20.5f}, QN_MODE_QUAD);
}
static void test_stepped_map_grid8(void **state) {
    (void)state;
    stepped_equals_run("maps/arena.map", (qn_vec2){30.5f, 20.5f}, QN_MODE_GRID8);
}

/* Timing one sample in 16 changes nothing in the run; the sample time is
** scaled to every sample. */
static void test_clock_every(void **state) {
    (void)state;
    size_t len;
    char *text = read_bundled("levels/town.json", &len);
    qn_session *s = NULL;
    qn_error e;
    assert_int_equal(qn_session_create(text, len, &s, &e), QN_OK);
    free(text);
    qn_sim_result r[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(qn_session_set_goal(s, QN_MODE_QUAD, (qn_vec2){60, 45}, 0.25f, NULL, &e),
                         QN_OK);
        qn_sim_opts o = {.units = 200, .seed = 4, .clock_every = i ? 16u : 0u};
        assert_int_equal(qn_session_start(s, &o), QN_OK);
        while (qn_session_step(s)) continue;
        assert_int_equal(qn_sim_state_result(qn_session_run(s), &r[i]), QN_OK);
    }
    assert_int_equal(r[0].sample_timed, r[0].samples);
    assert_true(r[1].sample_timed < r[1].samples / 8);
    assert_true(r[1].sample_timed > r[1].samples / 32);
    assert_true(r[1].sample_seconds > 0.0);
    r[0].sample_seconds = r[1].sample_seconds = 0.0;
    r[0].sample_timed = r[1].sample_timed = 0;
    assert_same(&r[0], &r[1]);
    assert_true(r[0].walked == r[1].walked);
    qn_session_destroy(s);
}

static const char small_map[] = "type octile\nheight 4\nwidth 6\nmap\n"
                                "......\n"
                                "..@@..\n"
                                "..@@..\n"
                                "......\n";

/* Mid-run: positions and states copy out; walking units count as stuck in
** the summary so far; changes repair the instance. */
static void test_midrun_and_changes(void **state) {
    (void)state;
    qn_session *s = NULL;
    qn_error e;
    assert_int_equal(qn_session_create(small_map, strlen(small_map), &s, &e), QN_OK);
    assert_true(qn_session_is_map(s));
    assert_null(qn_session_level(s));
    assert_true(qn_mesh_quad_count(qn_session_mesh(s)) > 0);
    qn_vec2 goal = {5.5f, 0.5f};
    assert_int_equal(qn_session_set_goal(s, QN_MODE_QUAD, goal, 0.25f, NULL, &e), QN_OK);
    qn_sim_opts o = {.units = 20, .seed = 3};
    assert_int_equal(qn_session_start(s, &o), QN_OK);
    assert_true(qn_session_step(s));
    float xy[40];
    uint8_t st[20];
    assert_int_equal(qn_sim_state_units(qn_session_run(s), xy, st), 20);
    qn_sim_result r;
    assert_int_equal(qn_sim_state_result(qn_session_run(s), &r), QN_OK);
    uint32_t walking = 0;
    for (int i = 0; i < 20; i++)
        walking += st[i] == QN_SIM_UNIT_ACTIVE;
    assert_int_equal(r.stuck, walking);
    assert_int_equal(r.arrived + r.stuck, 20);
    /* Block the quad under the goal: the field is repaired, the goal is cut. */
    uint32_t q;
    assert_int_equal(qn_mesh_locate(qn_session_mesh(s), goal, QN_NONE, &q), QN_OK);
    double us = -1;
    assert_int_equal(qn_session_block_quad(s, q, true, &us, &e), QN_OK);
    assert_true(us >= 0);
    assert_false(isfinite(qn_field_quad_cost(qn_session_field(s), q)));
    assert_int_equal(qn_session_block_quad(s, 999, true, NULL, &e), QN_E_INVALID_ARG);
    /* A stamp while a quad instance is current changes the grid only. */
    assert_int_equal(qn_session_stamp(s, 0, 3, 1, 4, QN_CELL_WALL, NULL, &e), QN_OK);
    const qn_grid *g = qn_session_grid(s, &e);
    assert_int_equal(qn_grid_cost(g, 0, 3), QN_CELL_WALL);
    assert_int_equal(qn_session_set_goal(s, QN_MODE_GRID8, goal, 0.25f, NULL, &e), QN_OK);
    assert_null(qn_session_run(s)); /* a new goal ends the run */
    assert_false(isfinite(qn_grid_field_cost(qn_session_grid_field(s), 0, 3)));
    assert_true(isfinite(qn_grid_field_cost(qn_session_grid_field(s), 0, 0)));
    /* Wall off the goal's column: the grid instance is repaired. */
    assert_int_equal(qn_session_stamp(s, 4, 0, 5, 4, QN_CELL_WALL, &us, &e), QN_OK);
    assert_false(isfinite(qn_grid_field_cost(qn_session_grid_field(s), 0, 0)));
    assert_int_equal(qn_session_stamp(s, 4, 0, 7, 4, QN_CELL_WALL, &us, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_session_stamp(s, 4, 0, 4, 4, QN_CELL_WALL, &us, &e), QN_E_INVALID_ARG);
    /* Unblocking the quad under the goal while a grid instance is current:
    ** the mesh changes, no grid repair. */
    assert_int_equal(qn_session_block_quad(s, q, false, NULL, &e), QN_OK);
    assert_false(qn_mesh_quad_blocked(qn_session_mesh(s), q));
    qn_session_destroy(s);
}

static void test_bad_inputs(void **state) {
    (void)state;
    qn_session *s = NULL;
    qn_error e;
    const char bad_map[] = "type octile\nheight 2\nwidth 2\nmap\n..\n.";
    assert_int_not_equal(qn_session_create(bad_map, strlen(bad_map), &s, &e), QN_OK);
    assert_null(s);
    assert_true(strlen(e.message) > 0);
    const char bad_level[] =
        "{\"format\":1,\"quads\":[{\"rect\":[0,0,10,10]},{\"rect\":[5,5,15,15]}]}";
    assert_int_equal(qn_session_create(bad_level, strlen(bad_level), &s, &e), QN_E_OVERLAP);
    assert_non_null(strstr(e.message, "quads[1]"));
    assert_int_equal(qn_session_create(NULL, 0, &s, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_session_create(small_map, strlen(small_map), &s, &e), QN_OK);
    qn_sim_opts o = {.units = 5};
    assert_int_equal(qn_session_start(s, &o), QN_E_INVALID_ARG); /* no goal yet */
    assert_false(qn_session_step(s));
    assert_int_equal(qn_session_set_goal(s, QN_MODE_GRID8, (qn_vec2){2.5f, 1.5f}, 0.25f, NULL, &e),
                     QN_E_BLOCKED); /* a wall cell */
    assert_int_equal(qn_session_set_goal(s, QN_MODE_GRIDVEC, (qn_vec2){60, 1}, 0.25f, NULL, &e),
                     QN_E_OUTSIDE);
    assert_int_not_equal(qn_session_set_goal(s, QN_MODE_QUAD, (qn_vec2){60, 1}, 0.25f, NULL, &e),
                         QN_OK);
    qn_session_destroy(s);
    qn_session_destroy(NULL);
    qn_sim_mode m;
    assert_true(qn_sim_mode_parse("gridvec", &m) && m == QN_MODE_GRIDVEC);
    assert_true(qn_sim_mode_parse("crowd", &m) && m == QN_MODE_CROWD);
    assert_false(qn_sim_mode_parse("walk", &m));
    assert_string_equal(qn_sim_mode_name(QN_MODE_CROWD), "crowd");
    assert_false(qn_sim_mode_parse(NULL, &m));
    assert_string_equal(qn_sim_mode_name(QN_MODE_GRID8), "grid8");
}

/* Crowd mode stepped through the session (the viewer's path) gives the
** figures of qn_crowd_scene_level + qn_crowd_scene_run (`quadnav sim
** --crowd`) for the same level, goal, units and seed. */
static void test_crowd_mode(void **state) {
    (void)state;
    size_t len;
    char *text = read_bundled("levels/town.json", &len);
    qn_session *s = NULL;
    qn_error e;
    assert_int_equal(qn_session_create(text, len, &s, &e), QN_OK);
    free(text);
    qn_crowd_metrics a, b;
    assert_false(qn_session_crowd_metrics(s, &a)); /* no run yet */
    qn_vec2 goal = {60, 45};
    assert_int_equal(qn_session_set_goal(s, QN_MODE_CROWD, goal, 0.25f, NULL, &e), QN_OK);
    assert_non_null(qn_session_field(s)); /* the quad field, drawn under the crowd */
    qn_sim_opts o = {.units = 150, .seed = 4};
    assert_int_equal(qn_session_start(s, &o), QN_OK);
    assert_null(qn_session_run(s));
    assert_non_null(qn_session_crowd(s));
    while (qn_session_step(s)) {}
    assert_true(qn_session_crowd_metrics(s, &a));
    qn_crowd_scene sc;
    char path[4096];
    const char *dir = getenv("QN_DATA_DIR");
    snprintf(path, sizeof path, "%s/levels/town.json", dir ? dir : "data");
    assert_int_equal(qn_crowd_scene_level(&sc, path, "60,45", 150, 4, 0.25f), 0);
    assert_int_equal(qn_crowd_scene_run(&sc, 1, 0, &b, NULL, NULL), 0);
    qn_crowd_scene_free(&sc);
    assert_int_equal(a.units, 150);
    assert_int_equal(a.arrived, b.arrived);
    assert_int_equal(a.stuck, b.stuck);
    assert_int_equal(a.steps, b.steps);
    assert_int_equal(a.wall_contacts, b.wall_contacts);
    assert_int_equal(a.overlap_pairs, b.overlap_pairs);
    assert_true(a.max_overlap == b.max_overlap);
    assert_int_equal(a.arrived, 150);
    assert_false(qn_session_step(s)); /* every unit arrived: no step taken */
    /* A terrain too small for the units: QN_E_LIMIT, no run left behind. */
    o.units = 400;
    assert_int_equal(qn_session_start(s, &o), QN_OK);
    qn_session_destroy(s);
    assert_int_equal(qn_session_create(small_map, strlen(small_map), &s, &e), QN_OK);
    assert_int_equal(qn_session_set_goal(s, QN_MODE_CROWD, (qn_vec2){0.5f, 0.5f}, 0.25f, NULL, &e),
                     QN_OK);
    assert_int_equal(qn_session_start(s, &o), QN_E_LIMIT);
    assert_null(qn_session_crowd(s));
    assert_false(qn_session_step(s));
    qn_session_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stepped_town_quad),  cmocka_unit_test(test_stepped_town_gridvec),
        cmocka_unit_test(test_stepped_map_quad),   cmocka_unit_test(test_stepped_map_grid8),
        cmocka_unit_test(test_clock_every),
        cmocka_unit_test(test_midrun_and_changes), cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_crowd_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
