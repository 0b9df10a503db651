/* test_sample.c: the edge-projection sampler's geometry cases and statuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "quadnav.h"
#include "testmesh.h"

typedef struct fixture {
    tm_mesh t;
    qn_mesh *m;
    qn_field *f;
} fixture;

static void make_la(fixture *x, qn_vec2 goal, float radius, uint32_t lookahead) {
    qn_mesh_desc d = tm_desc(&x->t);
    qn_error e;
    if (qn_mesh_create(&d, NULL, &x->m, &e) != QN_OK) fail_msg("%s", e.message);
    qn_field_opts o = {.radius = radius, .lookahead = lookahead};
    if (qn_field_create(x->m, &goal, 1, &o, NULL, &x->f, &e) != QN_OK) fail_msg("%s", e.message);
}

/* The geometry cases below are the article's two-portal edge projection. */
static void make(fixture *x, qn_vec2 goal, float radius) { make_la(x, goal, radius, 2); }

static void unmake(fixture *x) {
    qn_field_destroy(x->f);
    qn_mesh_destroy(x->m);
}

static void expect_dir(const qn_field *f, qn_vec2 p, float dx, float dy) {
    qn_vec2 dir;
    uint32_t hint = QN_NONE;
    assert_int_equal(qn_field_sample(f, p, &hint, &dir), QN_OK);
    float len = hypotf(dx, dy);
    if (fabsf(dir.x - dx / len) > 1e-3f || fabsf(dir.y - dy / len) > 1e-3f)
        fail_msg("at (%g, %g): got (%g, %g), expected (%g, %g)", (double)p.x, (double)p.y,
                 (double)dir.x, (double)dir.y, (double)(dx / len), (double)(dy / len));
}

/* Projection on the portal: steer through it at the goal beyond. */
static void test_projection_inside(void **state) {
    (void)state;
    static fixture x;
    memset(&x, 0, sizeof x);
    tm_add_rect(&x.t, 0, 0, 10, 2);
    tm_add_rect(&x.t, 10, 0, 20, 2);
    make(&x, (qn_vec2){15, 1}, 0);
    expect_dir(x.f, (qn_vec2){5, 1}, 1, 0);
    expect_dir(x.f, (qn_vec2){5, 0.5f}, 10, 0.5f);
    unmake(&x);
}

/* Projection off the portal: steer at its nearest end point (inset by the
** radius). */
static void test_projection_outside(void **state) {
    (void)state;
    static fixture x;
    memset(&x, 0, sizeof x);
    tm_add_rect(&x.t, 0, 0, 10, 2); /* 0: corridor */
    tm_add_rect(&x.t, 8, 2, 10, 12); /* 1: goes down from its right end */
    make(&x, (qn_vec2){9, 11}, 0);
    expect_dir(x.f, (qn_vec2){2, 1}, 6, 1);
    unmake(&x);
    memset(&x, 0, sizeof x);
    tm_add_rect(&x.t, 0, 0, 10, 2);
    tm_add_rect(&x.t, 8, 2, 10, 12);
    make(&x, (qn_vec2){9, 11}, 0.5f);
    expect_dir(x.f, (qn_vec2){2, 1}, 6.5f, 1);
    /* In the span of the inset portal: on to the goal, straight down. */
    expect_dir(x.f, (qn_vec2){9, 1}, 0, 10);
    unmake(&x);
}

/* The plain rule would aim at the goal across the wall corner; the aim is
** clamped to the portal's inset end point. */
static void test_corner_clamp(void **state) {
    (void)state;
    static fixture x;
    memset(&x, 0, sizeof x);
    tm_add_rect(&x.t, 0, 0, 2, 2);  /* 0: a shaft */
    tm_add_rect(&x.t, 0, 2, 10, 4); /* 1: a corridor below, holding the goal */
    make(&x, (qn_vec2){9, 3}, 0);
    expect_dir(x.f, (qn_vec2){0.5f, 0.5f}, 1.5f, 1.5f);
    unmake(&x);
    memset(&x, 0, sizeof x);
    tm_add_rect(&x.t, 0, 0, 2, 2);
    tm_add_rect(&x.t, 0, 2, 10, 4);
    make(&x, (qn_vec2){9, 3}, 0.25f);
    expect_dir(x.f, (qn_vec2){0.5f, 0.5f}, 1.25f, 1.5f);
    /* Close to the corridor the straight line clears the corner: no clamp. */
    expect_dir(x.f, (qn_vec2){1.5f, 1.99f}, 7.5f, 1.01f);
    /* A little further up it would cross beyond the inset end: clamped. */
    expect_dir(x.f, (qn_vec2){1.5f, 1.9f}, 0.25f, 0.1f);
    unmake(&x);
}

/* Three quads: in the span of the first portal, aim at the nearest point of
** the next quad's exit portal. */
static void test_next_portal(void **state) {
    (void)state;
    static fixture x;
    memset(&x, 0, sizeof x);
    tm_add_rect(&x.t, 0, 0, 4, 4);   /* 0 */
    tm_add_rect(&x.t, 4, 0, 8, 4);   /* 1 */
    tm_add_rect(&x.t, 4, 4, 8, 10);  /* 2: goal, below 1 */
    make(&x, (qn_vec2){6, 9}, 0);
    /* From (1, 3): exit of 0 is x = 4, y in [0, 4]: in span. Next portal is
    ** y = 4, x in [4, 8]; nearest point to (1, 3) is (4, 4). */
    expect_dir(x.f, (qn_vec2){1, 3}, 3, 1);
    unmake(&x);
}

/* Around a bend made of many small quads: the two-portal rule aims at the
** next portal; the funnel aims straight at the inner corner (inset by the
** radius) it has to pass. */
static void test_funnel_corner(void **state) {
    (void)state;
    static fixture x;
    for (int la = 0; la < 2; la++) {
        memset(&x, 0, sizeof x);
        for (int i = 0; i < 10; i++) tm_add_rect(&x.t, (float)i, 0, (float)i + 1, 2); /* east */
        for (int j = 0; j < 6; j++) tm_add_rect(&x.t, 8, 2 + (float)j, 10, 3 + (float)j); /* south */
        make_la(&x, (qn_vec2){9, 7.5f}, 0.25f, la ? 0 : 2);
        qn_vec2 p = {0.5f, 1.0f}, dir;
        assert_int_equal(qn_field_sample(x.f, p, NULL, &dir), QN_OK);
        if (la) { /* funnel: the inner corner is at (8, 2); the last east-west
                   ** portal, x = 8, may be crossed up to y = 2 - 0.25 */
            float dx = 8.0f - p.x, dy = 1.75f - p.y, l = hypotf(dx, dy);
            assert_float_equal(dir.x, dx / l, 1e-3);
            assert_float_equal(dir.y, dy / l, 1e-3);
        } else { /* two portals: through x = 1 toward the portal at x = 2 */
            assert_float_equal(dir.x, 1.0, 1e-3);
        }
        /* Either way, the straight line to the aim stays inside. */
        qn_vec2 far = {p.x + dir.x * 7.0f, p.y + dir.y * 7.0f};
        assert_int_equal(qn_mesh_segment_inside(x.m, p, far, QN_NONE, NULL), QN_OK);
        unmake(&x);
    }
}

/* A unit in a big quad with two ways out leaves by the one that is best from
** where it stands, not by the quad's single stored exit. */
static void test_exit_from_position(void **state) {
    (void)state;
    static fixture x;
    memset(&x, 0, sizeof x);
    tm_add_rect(&x.t, 0, 0, 20, 4);   /* 0: a wide hall */
    tm_add_rect(&x.t, 0, 4, 2, 10);   /* 1: west shaft */
    tm_add_rect(&x.t, 18, 4, 20, 10); /* 2: east shaft */
    tm_add_rect(&x.t, 0, 10, 20, 12); /* 3: goal corridor */
    make_la(&x, (qn_vec2){10, 11}, 0.25f, 0);
    qn_vec2 dir;
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){1, 1}, NULL, &dir), QN_OK);
    assert_true(dir.y > 0 && dir.x < 0.3f); /* down the west shaft */
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){19, 1}, NULL, &dir), QN_OK);
    assert_true(dir.y > 0 && dir.x > -0.3f); /* down the east shaft */
    unmake(&x);
}

static void test_statuses(void **state) {
    (void)state;
    static fixture x;
    memset(&x, 0, sizeof x);
    tm_add_rect(&x.t, 0, 0, 4, 4);
    tm_add_rect(&x.t, 4, 0, 8, 4);
    tm_add_rect(&x.t, 20, 0, 24, 4); /* island */
    tm_add_rect(&x.t, 8, 0, 12, 4);  /* blocked */
    x.t.blocked[3] = 1;
    make(&x, (qn_vec2){6, 2}, 0);
    qn_vec2 dir;
    uint32_t q = QN_NONE;
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){6, 2}, &q, &dir), QN_AT_GOAL);
    assert_int_equal(q, 1);
    assert_true(dir.x == 0 && dir.y == 0);
    expect_dir(x.f, (qn_vec2){7, 3}, -1, -1); /* goal quad: at the goal point */
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){22, 2}, &q, &dir), QN_E_UNREACHABLE);
    assert_int_equal(q, 2);
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){10, 2}, &q, &dir), QN_E_BLOCKED);
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){15, 2}, &q, &dir), QN_E_OUTSIDE);
    assert_int_equal(q, QN_NONE);
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){NAN, 2}, &q, &dir), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){1, INFINITY}, NULL, &dir), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample(NULL, (qn_vec2){1, 1}, NULL, &dir), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample(x.f, (qn_vec2){1, 1}, NULL, NULL), QN_E_INVALID_ARG);
    unmake(&x);
}

/* The batch form gives what single calls give, hints or not. */
static void test_batch_matches_single(void **state) {
    (void)state;
    static fixture x;
    memset(&x, 0, sizeof x);
    uint64_t s = 11;
    tm_guillotine(&x.t, &s, 0, 0, 40, 40, 9, 300);
    make(&x, (qn_vec2){0.5f, 0.5f}, 0.1f);
    enum { N = 2000 };
    static qn_vec2 pos[N], dirs[N];
    static uint8_t st[N];
    static uint32_t hints[N];
    for (int i = 0; i < N; i++) {
        pos[i] = (qn_vec2){(float)(tm_rand(&s) % 4400) / 100.0f - 2, (float)(tm_rand(&s) % 4400) / 100.0f - 2};
        hints[i] = tm_rand(&s) % 400; /* arbitrary, often wrong or out of range */
    }
    assert_int_equal(qn_field_sample_batch(x.f, pos, dirs, st, hints, N), QN_OK);
    int moving = 0;
    for (int i = 0; i < N; i++) {
        qn_vec2 d;
        qn_status one = qn_field_sample(x.f, pos[i], NULL, &d);
        assert_int_equal(one, st[i]);
        if (one == QN_OK) {
            moving++;
            assert_float_equal(hypotf(d.x, d.y), 1.0, 1e-4);
            /* A point on a shared edge may resolve to another quad with a hint. */
            uint32_t q;
            qn_mesh_locate(x.m, pos[i], QN_NONE, &q);
            if (q == hints[i]) assert_true(d.x == dirs[i].x && d.y == dirs[i].y);
        }
    }
    assert_true(moving > N / 2);
    assert_int_equal(qn_field_sample_batch(x.f, NULL, dirs, st, NULL, 1), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample_batch(x.f, NULL, NULL, NULL, NULL, 0), QN_OK);
    unmake(&x);
}

/* A level from JSON text (sizeof of a literal, its NUL included), and its
** first goal into *goal. */
static qn_level *level_from(const char *json, size_t size, qn_vec2 *goal) {
    qn_level *lv = NULL;
    const char *name;
    assert_int_equal(qn_level_load_mem(json, size - 1, NULL, &lv, NULL), QN_OK);
    assert_int_equal(qn_level_goal(lv, 0, &name, goal), QN_OK);
    return lv;
}

/* A fence far from the origin: quad 0 touches quad 1 with no portal (the
** level's links leave it shut in), and a point just inside quad 1, within
** the mesh tolerance (0.02 at 20,000 units) of the fence, is inside quad 0
** too, which point location finds first. It belongs to quad 1, the side
** the field reaches: before, the sampler answered QN_E_UNREACHABLE there
** and qn_field_cost_at INFINITY (1 or 2 of 300 sim units on such levels). */
static void test_fence_side(void **state) {
    (void)state;
    static const char json[] =
        "{\"format\": 1, \"quads\": [{\"rect\": [20000, 0, 20001, 1]}, "
        "{\"rect\": [20001, 0, 20002, 1]}, {\"rect\": [20002, 0, 20003, 1]}], "
        "\"links\": [[1, 2]], \"goals\": [{\"name\": \"g\", \"at\": [20002.5, 0.5]}]}";
    qn_vec2 goal;
    qn_level *lv = level_from(json, sizeof json, &goal);
    const qn_mesh *m = qn_level_mesh(lv);
    uint32_t shared = 0;
    for (int disc = 0; disc < 2; disc++) {
        qn_field_opts o = {.discrete = disc != 0};
        qn_field *f = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
        assert_false(isfinite(qn_field_quad_cost(f, 0)));
        for (float dx = 0.002f; dx < 0.03f; dx += 0.002f) {
            qn_vec2 p = {20001.0f + dx, 0.5f}, d;
            uint32_t q, hint = QN_NONE;
            assert_int_equal(qn_mesh_locate(m, p, QN_NONE, &q), QN_OK);
            shared += q == 0;
            assert_int_equal(qn_field_sample(f, p, &hint, &d), QN_OK);
            assert_int_equal(hint, 1);
            assert_true(d.x > 0.9f);
            float c = qn_field_cost_at(f, p, QN_NONE);
            assert_true(fabsf(c - (1.5f - dx)) < 0.01f);
        }
        qn_field_destroy(f);
    }
    assert_true(shared > 0); /* the case arose: point location said quad 0 */
    qn_level_destroy(lv);
}

/* A fence ending at a corner root whose obstacle side the walls do not
** give (the way on runs straight back along the fence), 20,000 units out,
** where the reach tolerance is 0.08: a unit of radius 0.25 behind the
** fence, 0.05 from its end. Before, it stood "on the corner" and went on
** along the way, along the fence's wrong side, then was sent back across
** the fence to the point beside the corner and slid back along it: the
** same two places for ever (1 or 2 of 300 sim units on far fence levels).
** It must go round the end: it arrives, and never moves away from the goal
** by more than a radius and a step past where it started. */
static void test_fence_end(void **state) {
    (void)state;
    /* 5 x 2 unit cells; the fence shuts the lower row from the upper one
    ** from x = 0 to 4: the lower row is reached round the end at (4, 1). */
    static const char json[] =
        "{\"format\": 1, \"quads\": [{\"rect\": [20000, -15000, 20001, -14999]}, "
        "{\"rect\": [20001, -15000, 20002, -14999]}, {\"rect\": [20002, -15000, 20003, -14999]}, "
        "{\"rect\": [20003, -15000, 20004, -14999]}, {\"rect\": [20004, -15000, 20005, -14999]}, "
        "{\"rect\": [20000, -14999, 20001, -14998]}, {\"rect\": [20001, -14999, 20002, -14998]}, "
        "{\"rect\": [20002, -14999, 20003, -14998]}, {\"rect\": [20003, -14999, 20004, -14998]}, "
        "{\"rect\": [20004, -14999, 20005, -14998]}], "
        "\"links\": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 9], [5, 6], [6, 7], [7, 8], [8, 9]], "
        "\"goals\": [{\"name\": \"g\", \"at\": [20000.5, -14998.9]}]}";
    qn_vec2 goal;
    qn_level *lv = level_from(json, sizeof json, &goal);
    const qn_mesh *m = qn_level_mesh(lv);
    qn_field_opts o = {.radius = 0.25f};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
    const qn_vec2 starts[] = {{20003.98f, -14999.047f},
                              {20003.78f, -14999.047f},
                              {20003.9f, -14999.2f},
                              {20003.6f, -14999.1f}};
    for (size_t k = 0; k < sizeof starts / sizeof *starts; k++) {
        qn_vec2 p = starts[k];
        uint32_t hint = QN_NONE;
        float c0 = qn_field_cost_at(f, p, QN_NONE), most = c0;
        assert_true(isfinite(c0));
        int steps = 0;
        for (; steps < 400; steps++) {
            qn_vec2 d, next, hit;
            float ahead;
            qn_status st = qn_field_sample_ahead(f, p, &hint, &d, &ahead);
            if (st == QN_AT_GOAL) break;
            assert_int_equal(st, QN_OK);
            float len = ahead < 0.2f ? (ahead > 0.05f ? ahead : 0.05f) : 0.2f;
            next = (qn_vec2){p.x + len * d.x, p.y + len * d.y};
            assert_int_equal(qn_mesh_segment_inside(m, p, next, hint, &hit), QN_OK);
            p = next;
            float c = qn_field_cost_at(f, p, QN_NONE);
            most = c > most ? c : most;
            if (hypotf(p.x - goal.x, p.y - goal.y) < 0.2f) break;
        }
        assert_true(steps < 400);
        assert_true(most < c0 + 0.25f + 0.2f + 0.05f);
    }
    qn_field_destroy(f);
    qn_level_destroy(lv);
}

/* A point on the edge between a blocked quad and an open one stands on
** open ground, for the sampler and qn_field_cost_at alike (point location
** finds the blocked quad, which comes first). Before, the sample answered
** QN_OK from the open quad while the cost said INFINITY. */
static void test_blocked_edge(void **state) {
    (void)state;
    for (int disc = 0; disc < 2; disc++) {
        static fixture x;
        memset(&x, 0, sizeof x);
        tm_add_rect(&x.t, 0, 0, 4, 4); /* blocked */
        tm_add_rect(&x.t, 4, 0, 8, 4);
        x.t.blocked[0] = 1;
        qn_mesh_desc d = tm_desc(&x.t);
        assert_int_equal(qn_mesh_create(&d, NULL, &x.m, NULL), QN_OK);
        qn_vec2 goal = {6, 2};
        qn_field_opts o = {.discrete = disc != 0};
        assert_int_equal(qn_field_create(x.m, &goal, 1, &o, NULL, &x.f, NULL), QN_OK);
        qn_vec2 p = {4, 3}, dir;
        uint32_t q = QN_NONE;
        assert_int_equal(qn_mesh_locate(x.m, p, QN_NONE, &q), QN_OK);
        assert_int_equal(q, 0); /* the case: location says the blocked quad */
        q = QN_NONE;
        assert_int_equal(qn_field_sample(x.f, p, &q, &dir), QN_OK);
        assert_int_equal(q, 1);
        float c = qn_field_cost_at(x.f, p, QN_NONE);
        assert_true(fabsf(c - hypotf(2, 1)) < 1e-3f);
        /* Inside the blocked quad: blocked, and no cost. */
        assert_int_equal(qn_field_sample(x.f, (qn_vec2){2, 2}, NULL, &dir), QN_E_BLOCKED);
        assert_false(isfinite(qn_field_cost_at(x.f, (qn_vec2){2, 2}, QN_NONE)));
        unmake(&x);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_projection_inside), cmocka_unit_test(test_projection_outside),
        cmocka_unit_test(test_corner_clamp),      cmocka_unit_test(test_next_portal),
        cmocka_unit_test(test_funnel_corner),     cmocka_unit_test(test_exit_from_position),
        cmocka_unit_test(test_statuses),          cmocka_unit_test(test_batch_matches_single),
        cmocka_unit_test(test_fence_side),        cmocka_unit_test(test_fence_end),
        cmocka_unit_test(test_blocked_edge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
