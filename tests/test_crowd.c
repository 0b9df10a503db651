/* test_crowd.c: the crowd layer. Two units head-on; a queue round a bend
** of a corridor one wide; two ways merging into a gap one unit wide; an
** arrival region along the way; units never leave the
** mesh under random pushes on random meshes; determinism across runs,
** thread counts and range splits; add and remove during a run; small
** scenarios' metrics with margins; argument checks and out-of-memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "crowd_scene.h"
#include "failalloc.h"
#include "quadnav.h"
#include "testmesh.h"

static qn_mesh *open_square(float side) {
    static tm_mesh t;
    t.n = 0;
    tm_add_rect(&t, 0, 0, side, side);
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    return m;
}

static qn_crowd_unit_desc unit_at(float x, float y) {
    qn_crowd_unit_desc d;
    memset(&d, 0, sizeof d);
    d.position = (qn_vec2){x, y};
    d.radius = 0.5f;
    d.max_speed = 2.0f;
    d.max_accel = 8.0f;
    return d;
}

static double pair_overlap(const qn_crowd *c, uint32_t a, uint32_t b) {
    qn_crowd_unit ua, ub;
    assert_int_equal(qn_crowd_get(c, a, &ua), QN_OK);
    assert_int_equal(qn_crowd_get(c, b, &ub), QN_OK);
    double d = hypot((double)(ua.position.x - ub.position.x), (double)(ua.position.y - ub.position.y));
    double rs = (double)(ua.radius + ub.radius);
    return d < rs ? (rs - d) / rs : 0.0;
}

/* Two units walk straight at each other (exactly head-on, then slightly
** off): they pass without overlapping and both arrive. */
static void test_head_on(void **state) {
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        qn_mesh *m = open_square(40);
        qn_crowd *c = NULL;
        assert_int_equal(qn_crowd_create(m, NULL, NULL, &c, NULL), QN_OK);
        float off = variant ? 0.3f : 0.0f;
        qn_crowd_unit_desc a = unit_at(5, 20), b = unit_at(35, 20 + off);
        a.goal = (qn_vec2){35, 20};
        b.goal = (qn_vec2){5, 20 + off};
        a.goal_radius = b.goal_radius = 1.0f;
        uint32_t ia, ib;
        assert_int_equal(qn_crowd_add(c, &a, &ia, NULL), QN_OK);
        assert_int_equal(qn_crowd_add(c, &b, &ib, NULL), QN_OK);
        assert_int_equal(qn_crowd_set_path(c, ia, &a.goal, 1), QN_OK);
        assert_int_equal(qn_crowd_set_path(c, ib, &b.goal, 1), QN_OK);
        double worst = 0.0;
        qn_crowd_stats st;
        int steps = 0;
        for (; steps < 400; steps++) {
            assert_int_equal(qn_crowd_step(c, 0.1f), QN_OK);
            double o = pair_overlap(c, ia, ib);
            worst = o > worst ? o : worst;
            qn_crowd_get_stats(c, &st);
            if (st.arrived == 2) break;
        }
        assert_int_equal(st.arrived, 2);
        assert_true(worst < 0.05);
        assert_true(steps < 300); /* 30 m at 2 m/s is 150 steps; the detour is short */
        assert_int_equal(st.wall_contacts, 0);
        qn_crowd_destroy(c);
        qn_mesh_destroy(m);
    }
}

/* A crowd over the rectangles of t, its units following one exact field
** of the given agent radius toward goal (the four tests below). */
typedef struct fixture {
    qn_mesh *m;
    qn_field *f;
    qn_crowd *c;
    qn_vec2 goal;
    uint32_t n;
} fixture;

static void fixture_open(fixture *x, const tm_mesh *t, qn_vec2 goal, float radius) {
    qn_mesh_desc d = tm_desc(t);
    memset(x, 0, sizeof *x);
    x->goal = goal;
    assert_int_equal(qn_mesh_create(&d, NULL, &x->m, NULL), QN_OK);
    qn_field_opts fo = {.radius = radius};
    assert_int_equal(qn_field_create(x->m, &goal, 1, &fo, NULL, &x->f, NULL), QN_OK);
    assert_int_equal(qn_crowd_create(x->m, NULL, NULL, &x->c, NULL), QN_OK);
}

/* Adds a unit at p (speed 1.5, of that radius), bound for the goal with
** a region of radius gr; returns its id. */
static uint32_t fixture_add(fixture *x, qn_vec2 p, float radius, float gr) {
    qn_crowd_unit_desc u = unit_at(p.x, p.y);
    u.radius = radius;
    u.max_speed = 1.5f;
    u.max_accel = 6.0f;
    u.field = x->f;
    u.goal = x->goal;
    u.goal_radius = gr;
    uint32_t id;
    assert_int_equal(qn_crowd_add(x->c, &u, &id, NULL), QN_OK);
    x->n++;
    return id;
}

/* Steps until every unit has arrived, at most `steps` of 0.1 s; the
** deepest overlap of units 0 and 1 into *worst (when not NULL). Returns
** the units arrived. */
static uint32_t fixture_run(fixture *x, int steps, double *worst) {
    qn_crowd_stats st = {0};
    for (int k = 0; k < steps; k++) {
        assert_int_equal(qn_crowd_step(x->c, 0.1f), QN_OK);
        if (worst) {
            double o = pair_overlap(x->c, 0, 1);
            *worst = o > *worst ? o : *worst;
        }
        qn_crowd_get_stats(x->c, &st);
        if (st.arrived == x->n) break;
    }
    assert_int_equal(st.wall_contacts, 0);
    return st.arrived;
}

static void fixture_close(fixture *x) {
    qn_crowd_destroy(x->c);
    qn_field_destroy(x->f);
    qn_mesh_destroy(x->m);
}

/* A queue where a corridor one wide turns: the unit ahead stands in the
** corner of the bend, against both walls, its follower behind it with their
** margins touching at a slant. The unit ahead goes on round the bend (it
** stood still for good when the pair shared their avoidance: it could not
** move across toward the follower, and the follower could not move into
** it), and both arrive, never overlapping. */
static void test_queue_round_a_bend(void **state) {
    (void)state;
    static tm_mesh t;
    t.n = 0;
    tm_add_rect(&t, 4, 154, 5, 155);  /* the bend */
    tm_add_rect(&t, 5, 154, 12, 155); /* on to the goal */
    tm_add_rect(&t, 4, 155, 5, 162);  /* the way they came */
    fixture x;
    fixture_open(&x, &t, (qn_vec2){11.5f, 154.5f}, 0.4f);
    uint32_t ahead = fixture_add(&x, (qn_vec2){4.4f, 154.4f}, 0.4f, 1.5f);
    fixture_add(&x, (qn_vec2){4.6f, 155.42f}, 0.4f, 1.5f);
    double worst = 0.0;
    assert_int_equal(fixture_run(&x, 50, &worst), 0);
    qn_crowd_unit u; /* well round the bend by now */
    assert_int_equal(qn_crowd_get(x.c, ahead, &u), QN_OK);
    assert_true(u.position.x > 6.0f);
    assert_int_equal(fixture_run(&x, 550, &worst), 2);
    assert_true(worst < 0.05);
    fixture_close(&x);
}

/* Two ways merge in a cell one wide (as in a random map): one unit comes
** from the east, one from the north, both bound west. Held up in the cell,
** each against a wall and each in the other's way, they stood still for
** good (neither heads for the other alone); the one nearer the goal along
** their instance goes first, and both arrive. */
static void test_merge_into_a_gap(void **state) {
    (void)state;
    static tm_mesh t;
    t.n = 0;
    tm_add_rect(&t, -10, 1, 1, 2); /* west, to the goal */
    tm_add_rect(&t, 1, 1, 2, 2);   /* the cell */
    tm_add_rect(&t, 1, -5, 2, 1);  /* north */
    tm_add_rect(&t, 2, 1, 8, 2);   /* east */
    fixture x;
    fixture_open(&x, &t, (qn_vec2){-9.5f, 1.5f}, 0.3f);
    fixture_add(&x, (qn_vec2){1.7f, 1.7f}, 0.3f, 1.5f);
    fixture_add(&x, (qn_vec2){1.3f, 1.03f}, 0.3f, 1.5f);
    double worst = 0.0;
    assert_int_equal(fixture_run(&x, 400, &worst), 2);
    assert_true(worst < 0.05);
    fixture_close(&x);
}

/* The arrival region of a unit that follows an exact instance reaches
** along the instance: in a U of corridors, a unit in the far arm, 8 from
** the goal in a straight line but 46 along the U, is outside a region of
** radius 10 (on the old disc it was inside, and slowed down), and walks on
** at full speed until it is within the region along the way. */
static void test_region_along_the_way(void **state) {
    (void)state;
    static tm_mesh t;
    t.n = 0;
    tm_add_rect(&t, 0, 0, 2, 20);
    tm_add_rect(&t, 0, 20, 10, 22);
    tm_add_rect(&t, 8, 0, 10, 20);
    fixture x;
    qn_vec2 goal = {1.0f, 1.0f};
    fixture_open(&x, &t, goal, 0.5f);
    uint32_t id = fixture_add(&x, (qn_vec2){9.0f, 1.0f}, 0.5f, 10.0f);
    qn_crowd_unit now;
    assert_int_equal(fixture_run(&x, 10, NULL), 0);
    assert_int_equal(qn_crowd_get(x.c, id, &now), QN_OK);
    assert_true(hypotf(now.position.x - goal.x, now.position.y - goal.y) < 10.0f);
    assert_true(hypotf(now.velocity.x, now.velocity.y) > 0.95f * 1.5f);
    /* Along the way in, it slows down, and arrives. */
    bool slowed = false;
    uint32_t arrived = 0;
    for (int k = 0; k < 600 && !arrived; k++) {
        arrived = fixture_run(&x, 1, NULL);
        assert_int_equal(qn_crowd_get(x.c, id, &now), QN_OK);
        slowed |= now.position.x < 2.0f && now.position.y < 6.0f &&
                  hypotf(now.velocity.x, now.velocity.y) < 0.6f * 1.5f;
    }
    assert_true(slowed);
    assert_int_equal(arrived, 1);
    fixture_close(&x);
}

/* A full region's last units: four units single file in a corridor to a
** goal at its end, in a region of radius 2.2 (rim 3.2) that holds three.
** The fourth stops touching the third, about 4 from the goal, beyond the
** rim, and arrives there (it waited for good). */
static void test_arrive_against_arrived(void **state) {
    (void)state;
    static tm_mesh t;
    t.n = 0;
    tm_add_rect(&t, 0, 0, 30, 1.2f);
    fixture x;
    fixture_open(&x, &t, (qn_vec2){0.6f, 0.6f}, 0.5f);
    for (int k = 0; k < 4; k++)
        fixture_add(&x, (qn_vec2){10.0f + 2.0f * (float)k, 0.6f}, 0.5f, 2.2f);
    assert_int_equal(fixture_run(&x, 600, NULL), 4);
    fixture_close(&x);
}

/* A corridor 8 wide filled wall to wall, 28 long, by units that arrived at their goal
** (placed inside its region with nothing to follow, they arrive after being
** held up for a second); a unit bound for the far end walks straight at
** them. They step aside, it passes and arrives, and no pair ever overlaps
** deeper than the scenario target. */
static void test_pass_through_arrived(void **state) {
    (void)state;
    static tm_mesh t;
    t.n = 0;
    tm_add_rect(&t, 0, 0, 48, 8);
    qn_mesh_desc md = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&md, NULL, &m, NULL), QN_OK);
    qn_crowd *c = NULL;
    assert_int_equal(qn_crowd_create(m, NULL, NULL, &c, NULL), QN_OK);
    uint32_t n = 0, id;
    for (int gx = 0; gx < 20; gx++)
        for (int gy = 0; gy < 5; gy++, n++) {
            qn_crowd_unit_desc d = unit_at(10.7f + 1.4f * (float)gx, 1.2f + 1.4f * (float)gy);
            d.goal = (qn_vec2){24, 4};
            d.goal_radius = 15.0f;
            assert_int_equal(qn_crowd_add(c, &d, &id, NULL), QN_OK);
        }
    qn_crowd_stats st;
    for (int step = 0; step < 100; step++) {
        assert_int_equal(qn_crowd_step(c, 0.1f), QN_OK);
        qn_crowd_get_stats(c, &st);
        if (st.arrived == n) break;
    }
    assert_int_equal(st.arrived, n);
    qn_crowd_unit_desc p = unit_at(4, 4);
    p.goal = (qn_vec2){44, 4};
    p.goal_radius = 1.0f;
    uint32_t ip;
    assert_int_equal(qn_crowd_add(c, &p, &ip, NULL), QN_OK);
    assert_int_equal(qn_crowd_set_path(c, ip, &p.goal, 1), QN_OK);
    double worst = 0.0;
    int steps = 0;
    for (; steps < 1000; steps++) {
        assert_int_equal(qn_crowd_step(c, 0.1f), QN_OK);
        for (uint32_t a = 0; a <= n; a++)
            for (uint32_t b = a + 1; b <= n; b++) {
                double o = pair_overlap(c, a, b);
                worst = o > worst ? o : worst;
            }
        qn_crowd_get_stats(c, &st);
        if (st.arrived == n + 1) break;
    }
    if (st.arrived != n + 1 || worst >= 0.25)
        fail_msg("arrived %u of %u in %d steps, deepest overlap %g", st.arrived, n + 1, steps,
                 worst);
    qn_crowd_destroy(c);
    qn_mesh_destroy(m);
}

/* A random mesh (guillotine cuts, holes, some quads blocked), units pushed
** around by random paths toward points inside and outside the mesh and by
** teleports: after every step every unit is in an unblocked quad. */
static void test_never_leaves_mesh(void **state) {
    (void)state;
    static tm_mesh t;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        uint64_t s = seed * 7919;
        t.n = 0;
        tm_guillotine(&t, &s, 0, 0, 24, 24, 6, 60);
        for (uint32_t q = 0; q < t.n; q++) t.blocked[q] = (tm_rand(&s) % 9) == 0;
        qn_mesh_desc d = tm_desc(&t);
        qn_mesh *m = NULL;
        assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
        qn_crowd *c = NULL;
        assert_int_equal(qn_crowd_create(m, NULL, NULL, &c, NULL), QN_OK);
        for (int k = 0; k < 400 && qn_crowd_unit_count(c) < 40; k++) {
            qn_crowd_unit_desc u = unit_at((float)(tm_rand(&s) % 2400) / 100.0f,
                                           (float)(tm_rand(&s) % 2400) / 100.0f);
            u.radius = 0.05f + (float)(tm_rand(&s) % 30) / 100.0f;
            u.max_speed = 1.0f + (float)(tm_rand(&s) % 400) / 100.0f;
            u.velocity = (qn_vec2){(float)(tm_rand(&s) % 5) - 2.0f, (float)(tm_rand(&s) % 5) - 2.0f};
            uint32_t id;
            qn_status st = qn_crowd_add(c, &u, &id, NULL);
            assert_true(st == QN_OK || st == QN_E_OUTSIDE || st == QN_E_BLOCKED);
        }
        for (int step = 0; step < 150; step++) {
            for (uint32_t id = 0; id < qn_crowd_id_bound(c); id++) {
                uint32_t r = tm_rand(&s) % 40;
                qn_vec2 to = {(float)(tm_rand(&s) % 3000) / 100.0f - 3.0f,
                              (float)(tm_rand(&s) % 3000) / 100.0f - 3.0f};
                if (r == 0) qn_crowd_set_path(c, id, &to, 1);
                if (r == 1) qn_crowd_teleport(c, id, to); /* refused when outside */
            }
            assert_int_equal(qn_crowd_step(c, 0.05f + (float)(step % 3) * 0.1f), QN_OK);
            for (uint32_t id = 0; id < qn_crowd_id_bound(c); id++) {
                qn_crowd_unit u;
                if (qn_crowd_get(c, id, &u) != QN_OK) continue;
                uint32_t q;
                assert_int_equal(qn_mesh_locate(m, u.position, u.quad, &q), QN_OK);
                assert_false(qn_mesh_quad_blocked(m, q));
            }
        }
        qn_crowd_destroy(c);
        qn_mesh_destroy(m);
    }
}

/* Every unit's state (read straight into the array, so that padding bytes
** are the zeros qn_crowd_get writes), as bytes to compare. */
static size_t snapshot(const qn_crowd *c, qn_crowd_unit *out, size_t cap) {
    size_t n = 0;
    for (uint32_t id = 0; id < qn_crowd_id_bound(c) && n < cap; id++)
        if (qn_crowd_get(c, id, &out[n]) == QN_OK) {
            out[n].field = NULL; /* instances are built anew for each run */
            n++;
        }
    return n;
}

/* How a run is stepped: 0 single call, 1..3 threads, 4 the range form in
** uneven ranges run in reverse order. */
static void step_mode(qn_crowd *c, float dt, int mode) {
    if (mode == 0) {
        assert_int_equal(qn_crowd_step(c, dt), QN_OK);
    } else if (mode <= 3) {
        assert_int_equal(qn_crowd_step_parallel(c, dt, (uint32_t)mode), QN_OK);
    } else {
        uint32_t n = qn_crowd_unit_count(c), cut[4] = {0, n / 7, n / 2, n};
        assert_int_equal(qn_crowd_step_begin(c, dt), QN_OK);
        for (int k = 2; k >= 0; k--) assert_int_equal(qn_crowd_step_range(c, cut[k], cut[k + 1]), QN_OK);
        for (uint32_t pass = 0; pass < qn_crowd_resolve_passes(c); pass++)
            for (int k = 0; k < 3; k++)
                assert_int_equal(qn_crowd_resolve_range(c, cut[k], cut[k + 1]), QN_OK);
        assert_int_equal(qn_crowd_step_end(c), QN_OK);
    }
}

static void test_determinism(void **state) {
    (void)state;
    static qn_crowd_unit ref[400], got[400];
    size_t nref = 0;
    for (int mode = 0; mode <= 4; mode++)
        for (int rep = 0; rep < (mode == 0 ? 2 : 1); rep++) {
            qn_crowd_scene s;
            assert_int_equal(qn_crowd_scene_build(&s, "counterflow", 300, 5, NULL), 0);
            for (int step = 0; step < 120; step++) step_mode(s.crowd, s.dt, mode);
            size_t n = snapshot(s.crowd, got, 400);
            if (mode == 0 && rep == 0) {
                memcpy(ref, got, n * sizeof *got);
                nref = n;
            } else {
                assert_int_equal(n, nref);
                assert_memory_equal(ref, got, n * sizeof *got);
            }
            qn_crowd_scene_free(&s);
        }
}

/* Units added and removed between steps: ids are reused, the rest keep
** walking, removed ids are gone, a removed leader frees its followers. */
static void test_add_remove(void **state) {
    (void)state;
    qn_crowd_scene s;
    assert_int_equal(qn_crowd_scene_build(&s, "crossroads", 120, 3, NULL), 0);
    qn_crowd *c = s.crowd;
    for (int step = 0; step < 50; step++) assert_int_equal(qn_crowd_step(c, s.dt), QN_OK);
    for (uint32_t id = 0; id < 120; id += 3) assert_int_equal(qn_crowd_remove(c, id), QN_OK);
    assert_int_equal(qn_crowd_unit_count(c), 80);
    qn_crowd_unit u;
    assert_int_equal(qn_crowd_get(c, 3, &u), QN_E_NOT_FOUND);
    assert_int_equal(qn_crowd_remove(c, 3), QN_E_NOT_FOUND);
    assert_int_equal(qn_crowd_teleport(c, 3, (qn_vec2){45, 45}), QN_E_NOT_FOUND);
    /* Add 10 new ones in the centre: they take freed ids. */
    for (int k = 0; k < 10; k++) {
        qn_crowd_unit_desc d = unit_at(100.0f + (float)k, 105.0f);
        d.radius = 0.25f;
        d.field = s.fields[0];
        d.goal = s.goals[0];
        d.goal_radius = 4.0f;
        uint32_t id;
        assert_int_equal(qn_crowd_add(c, &d, &id, NULL), QN_OK);
        assert_true(id < 120 && id % 3 == 0);
    }
    /* A formation: leader and one follower; removing the leader frees it. */
    uint32_t lead = 1, fol = 2;
    assert_int_equal(qn_crowd_set_leader(c, fol, lead, (qn_vec2){-1, 0}), QN_OK);
    assert_int_equal(qn_crowd_set_leader(c, lead, fol, (qn_vec2){-1, 0}), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_set_leader(c, lead, lead, (qn_vec2){-1, 0}), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_get(c, fol, &u), QN_OK);
    assert_int_equal(u.leader, lead);
    for (int step = 0; step < 20; step++) assert_int_equal(qn_crowd_step(c, s.dt), QN_OK);
    assert_int_equal(qn_crowd_remove(c, lead), QN_OK);
    assert_int_equal(qn_crowd_get(c, fol, &u), QN_OK);
    assert_int_equal(u.leader, QN_NONE);
    qn_crowd_metrics mt;
    assert_int_equal(qn_crowd_scene_run(&s, 1, 3000, &mt, NULL, NULL), 0);
    qn_crowd_stats st;
    qn_crowd_get_stats(c, &st);
    assert_int_equal(st.units, 89);
    assert_int_equal(st.arrived, 89);
    qn_crowd_scene_free(&s);
}

/* Small versions of the scenarios, with margins on the targets (overlap
** rate 0.005, deepest 0.25): half of each, and every unit arrives. */
static void check_scenario(const char *name, uint32_t units, double deep) {
    qn_crowd_scene s;
    assert_int_equal(qn_crowd_scene_build(&s, name, units, 1, NULL), 0);
    qn_crowd_metrics m;
    assert_int_equal(qn_crowd_scene_run(&s, 1, 0, &m, NULL, NULL), 0);
    double rate = (double)m.overlap_pairs / ((double)m.units * m.steps);
    if (m.arrived != m.units || m.wall_contacts || rate >= 0.0025 || m.max_overlap >= deep)
        fail_msg("%s/%u: arrived %u of %u in %u steps, wall contacts %llu, overlap rate %g, "
                 "deepest %g", name, units, m.arrived, m.units, m.steps,
                 (unsigned long long)m.wall_contacts, rate, m.max_overlap);
    if (s.leader != QN_NONE && (m.slot_error_mean > 0.8 || m.reform_s_max > 2.5))
        fail_msg("formation: slot error %g radii, re-formed in %g s", m.slot_error_mean,
                 m.reform_s_max);
    qn_crowd_scene_free(&s);
}

static void test_scenarios(void **state) {
    (void)state;
    check_scenario("doorway", 100, 0.125);
    check_scenario("counterflow", 100, 0.125);
    check_scenario("crossroads", 100, 0.125);
    check_scenario("formation", 12, 0.125);
    /* The ring's collapse, the hard case (no velocity avoids every
    ** neighbour): the same margin since units keep their gaps. */
    check_scenario("circle1000", 60, 0.125);
    check_scenario("circle1000", 300, 0.125);
}

static void test_bad_arguments(void **state) {
    (void)state;
    qn_mesh *m = open_square(10);
    qn_crowd *c = (qn_crowd *)1;
    qn_error e;
    assert_int_equal(qn_crowd_create(NULL, NULL, NULL, &c, &e), QN_E_INVALID_ARG);
    assert_null(c);
    qn_crowd_opts o = {.max_neighbours = 99};
    assert_int_equal(qn_crowd_create(m, &o, NULL, &c, &e), QN_E_INVALID_ARG);
    assert_non_null(strstr(e.message, "max_neighbours"));
    o = (qn_crowd_opts){.resolve_passes = QN_CROWD_MAX_RESOLVE_PASSES + 1};
    assert_int_equal(qn_crowd_create(m, &o, NULL, &c, &e), QN_E_INVALID_ARG);
    assert_non_null(strstr(e.message, "resolve_passes"));
    assert_int_equal(qn_crowd_resolve_passes(NULL), 0);
    o = (qn_crowd_opts){.time_horizon = NAN};
    assert_int_equal(qn_crowd_create(m, &o, NULL, &c, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_create(m, NULL, NULL, &c, &e), QN_OK);
    uint32_t id = 7;
    qn_crowd_unit_desc d = unit_at(20, 5);
    assert_int_equal(qn_crowd_add(c, &d, &id, &e), QN_E_OUTSIDE);
    assert_int_equal(id, QN_NONE);
    d = unit_at(5, 5);
    d.radius = 0;
    assert_int_equal(qn_crowd_add(c, &d, &id, &e), QN_E_INVALID_ARG);
    assert_non_null(strstr(e.message, "radius"));
    d = unit_at(5, 5);
    d.position.x = INFINITY;
    assert_int_equal(qn_crowd_add(c, &d, &id, &e), QN_E_INVALID_ARG);
    d = unit_at(5, 5);
    d.max_accel = 0;
    assert_int_equal(qn_crowd_add(c, &d, &id, &e), QN_E_INVALID_ARG);
    d = unit_at(5, 5);
    d.goal_radius = -1;
    assert_int_equal(qn_crowd_add(c, &d, &id, &e), QN_E_INVALID_ARG);
    d = unit_at(5, 5);
    assert_int_equal(qn_crowd_add(c, &d, &id, &e), QN_OK);
    assert_int_equal(qn_crowd_step(c, 0.0f), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_step(c, NAN), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_step_parallel(c, 0.1f, 0), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_teleport(c, id, (qn_vec2){50, 5}), QN_E_OUTSIDE);
    assert_int_equal(qn_crowd_set_path(c, id, NULL, 3), QN_E_INVALID_ARG);
    assert_int_equal(qn_formation_slots(QN_FORMATION_BOX, 3, 0.0f, NULL), QN_E_INVALID_ARG);
    /* The range form: nothing else may run during a step; a missed unit
    ** makes end refuse to commit. */
    assert_int_equal(qn_crowd_step_begin(c, 0.1f), QN_OK);
    uint32_t id2;
    assert_int_equal(qn_crowd_add(c, &d, &id2, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_remove(c, id), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_step_begin(c, 0.1f), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_step_range(c, 0, 2), QN_E_INVALID_ARG);
    assert_int_equal(qn_crowd_resolve_range(c, 0, 1), QN_E_MISMATCH);
    assert_int_equal(qn_crowd_step_end(c), QN_E_MISMATCH);
    assert_int_equal(qn_crowd_step_end(c), QN_E_INVALID_ARG);
    /* Too few resolve passes leave end refusing; one too many is refused. */
    uint32_t passes = qn_crowd_resolve_passes(c);
    assert_true(passes == QN_CROWD_DEFAULT_RESOLVE_PASSES);
    assert_int_equal(qn_crowd_step_begin(c, 0.1f), QN_OK);
    assert_int_equal(qn_crowd_step_range(c, 0, 1), QN_OK);
    for (uint32_t k = 0; k + 1 < passes; k++) assert_int_equal(qn_crowd_resolve_range(c, 0, 1), QN_OK);
    assert_int_equal(qn_crowd_step_end(c), QN_E_MISMATCH);
    assert_int_equal(qn_crowd_step_begin(c, 0.1f), QN_OK);
    assert_int_equal(qn_crowd_step_range(c, 0, 1), QN_OK);
    for (uint32_t k = 0; k < passes; k++) assert_int_equal(qn_crowd_resolve_range(c, 0, 1), QN_OK);
    assert_int_equal(qn_crowd_resolve_range(c, 0, 1), QN_E_MISMATCH);
    assert_int_equal(qn_crowd_step_end(c), QN_OK);
    assert_int_equal(qn_crowd_step(c, 0.1f), QN_OK);
    /* A field of another mesh is refused. */
    qn_mesh *other = open_square(10);
    qn_field *f = NULL;
    qn_vec2 g = {1, 1};
    assert_int_equal(qn_field_create(other, &g, 1, NULL, NULL, &f, NULL), QN_OK);
    assert_int_equal(qn_crowd_set_target(c, id, f, g, 1.0f), QN_E_INVALID_ARG);
    qn_field_destroy(f);
    qn_mesh_destroy(other);
    qn_crowd_destroy(c);
    qn_crowd_destroy(NULL);
    qn_mesh_destroy(m);
}

/* Every allocation of create, add, set_path and step fails in turn:
** a clean error, nothing leaked, and the crowd still works afterwards. */
static void test_out_of_memory(void **state) {
    (void)state;
    qn_mesh *m = open_square(30);
    for (uint64_t at = 0; at < 200; at++) {
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, at);
        qn_crowd *c = NULL;
        qn_status st = qn_crowd_create(m, NULL, &a, &c, NULL);
        bool ok = st == QN_OK;
        for (int k = 0; ok && k < 70; k++) {
            qn_crowd_unit_desc d = unit_at(1.0f + (float)(k % 10) * 2.5f, 1.0f + (float)(k / 10) * 2.5f);
            uint32_t id;
            st = qn_crowd_add(c, &d, &id, NULL);
            qn_vec2 to = {15, 15};
            if (st == QN_OK) st = qn_crowd_set_path(c, id, &to, 1);
            ok = st == QN_OK;
        }
        if (ok) st = qn_crowd_step(c, 0.1f);
        assert_true(st == QN_OK || st == QN_E_NOMEM);
        qn_crowd_destroy(c);
        assert_int_equal(fa.live, 0);
        if (fa.failures == 0) break; /* got through with no failure: done */
    }
    qn_mesh_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_on),
        cmocka_unit_test(test_pass_through_arrived),
        cmocka_unit_test(test_queue_round_a_bend),
        cmocka_unit_test(test_merge_into_a_gap),
        cmocka_unit_test(test_region_along_the_way),
        cmocka_unit_test(test_arrive_against_arrived),
        cmocka_unit_test(test_never_leaves_mesh),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_add_remove),
        cmocka_unit_test(test_scenarios),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
