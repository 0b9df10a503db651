/* test_repair.c: dynamic changes. A field repaired after any sequence of
** cost changes and (un)blocking equals a fresh build of the changed mesh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "quadnav.h"
#include "testmesh.h"

/* Same costs within float rounding, and the same exits. */
static void expect_equal(const qn_field *rep, const qn_field *ref, const char *what) {
    const qn_mesh *m = qn_field_mesh(ref);
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        float a = qn_field_quad_cost(rep, q), b = qn_field_quad_cost(ref, q);
        if (isfinite(a) != isfinite(b) || (isfinite(a) && fabsf(a - b) > 1e-4f * fmaxf(1, b)))
            fail_msg("%s: quad %u cost %g, rebuild %g", what, q, (double)a, (double)b);
        /* Exits follow the documented tie rule (lowest portal index among
        ** equal costs), and the repair computes bit-identical portal costs
        ** here, so exits must match exactly. */
        uint32_t ea = qn_field_quad_exit(rep, q), eb = qn_field_quad_exit(ref, q);
        if (ea != eb) fail_msg("%s: quad %u exit %u, rebuild %u", what, q, ea, eb);
        /* The funnel walks the exit chain from each quad's records (its
        ** step along the chain, refreshed with the slot): the same
        ** direction at the quad's centre and near a corner, within float
        ** rounding (a repaired field's directions can differ from a
        ** rebuild's in the last bits). */
        qn_vec2 k[4];
        qn_mesh_quad_corners(m, q, k);
        qn_vec2 at[2] = {{0.25f * (k[0].x + k[1].x + k[2].x + k[3].x),
                          0.25f * (k[0].y + k[1].y + k[2].y + k[3].y)},
                         {0.9f * k[0].x + 0.1f * k[2].x, 0.9f * k[0].y + 0.1f * k[2].y}};
        for (int i = 0; i < 2; i++) {
            qn_vec2 da, db;
            uint32_t qa = q, qb = q;
            qn_status sa = qn_field_sample(rep, at[i], &qa, &da);
            qn_status sb = qn_field_sample(ref, at[i], &qb, &db);
            if (sa != sb || fabsf(da.x - db.x) > 1e-5f || fabsf(da.y - db.y) > 1e-5f)
                fail_msg("%s: quad %u point %d: sampled %s (%g, %g), rebuild %s (%g, %g)", what,
                         q, i, qn_status_name(sa), (double)da.x, (double)da.y,
                         qn_status_name(sb), (double)db.x, (double)db.y);
        }
    }
}

static void random_change(qn_mesh *m, uint64_t *s, uint32_t protect) {
    uint32_t n = qn_mesh_quad_count(m);
    uint32_t q = tm_rand(s) % n;
    switch (tm_rand(s) % 4) {
    case 0:
    case 1: assert_int_equal(qn_mesh_set_quad_cost(m, q, (float)(1 + tm_rand(s) % 6)), QN_OK); break;
    case 2:
        if (q != protect || tm_rand(s) % 8 == 0)
            assert_int_equal(qn_mesh_set_quad_blocked(m, q, true), QN_OK);
        break;
    default: assert_int_equal(qn_mesh_set_quad_blocked(m, q, false), QN_OK); break;
    }
}

static void run_sequences(qn_mesh *m, const qn_vec2 *goals, uint32_t ng, uint64_t seed,
                          int rounds, const char *name) {
    uint32_t protect;
    assert_int_equal(qn_mesh_locate(m, goals[0], QN_NONE, &protect), QN_OK);
    for (int r = 0; r < 2; r++) {
        qn_field_opts o = {.radius = r ? 0.6f : 0.0f, .repairable = true};
        qn_field *rep = NULL;
        qn_error e;
        if (qn_field_create(m, goals, ng, &o, NULL, &rep, &e) != QN_OK) {
            /* A goal quad may be blocked by an earlier sequence: unblock. */
            for (uint32_t i = 0; i < ng; i++) {
                uint32_t gq;
                assert_int_equal(qn_mesh_locate(m, goals[i], QN_NONE, &gq), QN_OK);
                qn_mesh_set_quad_blocked(m, gq, false);
            }
            assert_int_equal(qn_field_create(m, goals, ng, &o, NULL, &rep, &e), QN_OK);
        }
        uint64_t s = seed * 31 + (uint64_t)r;
        for (int round = 0; round < rounds; round++) {
            int changes = 1 + (int)(tm_rand(&s) % 4);
            for (int c = 0; c < changes; c++) random_change(m, &s, protect);
            assert_int_equal(qn_field_update(rep, &e), QN_OK);
            assert_true(qn_field_is_current(rep));
            /* A fresh field of the same options: the mid-point model where
            ** costs differ (repaired in place), the exact map where all
            ** open quads cost the same (rebuilt). */
            qn_field_opts ro = o;
            qn_field *ref = NULL;
            qn_status st = qn_field_create(m, goals, ng, &ro, NULL, &ref, &e);
            if (st == QN_E_BLOCKED) { /* goal quad blocked: everything unreachable */
                for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++)
                    if (qn_field_quad_cost(rep, q) != 0)
                        assert_false(isfinite(qn_field_quad_cost(rep, q)) && ng == 1);
                continue;
            }
            assert_int_equal(st, QN_OK);
            char what[96];
            snprintf(what, sizeof what, "%s seed %u round %d", name, (unsigned)seed, round);
            expect_equal(rep, ref, what);
            qn_field_destroy(ref);
        }
        qn_field_destroy(rep);
    }
}

static qn_vec2 centre(const tm_mesh *t, uint32_t q) {
    return (qn_vec2){(t->verts[4 * q].x + t->verts[4 * q + 2].x) / 2,
                     (t->verts[4 * q].y + t->verts[4 * q + 2].y) / 2};
}

/* 600 random meshes x 2 radii, each with several rounds of 1-4 changes. */
static void test_random_meshes(void **state) {
    (void)state;
    static tm_mesh t;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        uint64_t s = seed * 104729;
        t.n = 0;
        tm_guillotine(&t, &s, 0, 0, 30, 24, 8, 160);
        for (uint32_t q = 0; q < t.n; q++) t.costs[q] = (float)(1 + tm_rand(&s) % 3);
        qn_mesh_desc d = tm_desc(&t);
        qn_mesh *m = NULL;
        assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
        qn_vec2 goals[2] = {centre(&t, tm_rand(&s) % t.n), centre(&t, tm_rand(&s) % t.n)};
        run_sequences(m, goals, seed % 5 == 0 ? 2 : 1, seed, 4, "random");
        qn_mesh_destroy(m);
    }

}

static void test_bundled_levels(void **state) {
    (void)state;
    static const char *const names[] = {"town", "maze", "field"};
    const char *dir = getenv("QN_DATA_DIR");
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/levels/%s.json", dir ? dir : "data", names[i]);
        qn_level *level = NULL;
        assert_int_equal(qn_level_load_file(path, NULL, &level, NULL), QN_OK);
        qn_vec2 goal;
        const char *gname;
        qn_level_goal(level, 0, &gname, &goal);
        for (uint64_t seed = 1; seed <= 40; seed++)
            run_sequences(qn_level_mesh_mut(level), &goal, 1, seed, 3, names[i]);
        qn_level_destroy(level);
    }
}

/* More pending changes than the journal holds: the update rebuilds. */
static void test_journal_overflow(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 77;
    t.n = 0;
    tm_guillotine(&t, &s, 0, 0, 30, 24, 8, 160);
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = centre(&t, 0);
    qn_field_opts o = {.repairable = true};
    qn_field *f = NULL, *ref = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
    uint64_t v0 = qn_mesh_version(m);
    for (int i = 0; i < 3000; i++)
        qn_mesh_set_quad_cost(m, 1 + tm_rand(&s) % (t.n - 1), (float)(1 + i % 5));
    assert_true(qn_mesh_version(m) - v0 > 1024);
    assert_false(qn_field_is_current(f));
    assert_int_equal(qn_field_update(f, NULL), QN_OK);
    qn_field_opts ro = {.midpoint_costs = true};
    assert_int_equal(qn_field_create(m, &goal, 1, &ro, NULL, &ref, NULL), QN_OK);
    expect_equal(f, ref, "overflow");
    /* A change to the same value is no change. */
    uint64_t v1 = qn_mesh_version(m);
    qn_mesh_set_quad_cost(m, 0, qn_mesh_quad_cost(m, 0));
    assert_int_equal(qn_mesh_version(m), v1);
    assert_int_equal(qn_mesh_set_quad_cost(m, 0, 0.5f), QN_E_INVALID_ARG);
    assert_int_equal(qn_mesh_set_quad_cost(m, t.n, 2.0f), QN_E_INVALID_ARG);
    assert_int_equal(qn_mesh_set_quad_blocked(m, t.n, true), QN_E_INVALID_ARG);
    qn_field_destroy(ref);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

/* Blocking a corridor cuts units off; unblocking brings them back; the
** islands follow. */
static void test_block_unblock(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 4, 2);
    tm_add_rect(&t, 4, 0, 8, 2);
    tm_add_rect(&t, 8, 0, 12, 2);
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = {11, 1};
    qn_field_opts o = {.repairable = true};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
    assert_true(isfinite(qn_field_quad_cost(f, 0)));
    assert_int_equal(qn_mesh_set_quad_blocked(m, 1, true), QN_OK);
    assert_int_equal(qn_mesh_island_count(m), 2);
    assert_int_equal(qn_field_update(f, NULL), QN_OK);
    assert_false(isfinite(qn_field_quad_cost(f, 0)));
    qn_vec2 dir;
    assert_int_equal(qn_field_sample(f, (qn_vec2){1, 1}, NULL, &dir), QN_E_UNREACHABLE);
    assert_int_equal(qn_field_sample(f, (qn_vec2){5, 1}, NULL, &dir), QN_E_BLOCKED);
    assert_int_equal(qn_mesh_set_quad_blocked(m, 1, false), QN_OK);
    assert_int_equal(qn_mesh_island_count(m), 1);
    assert_int_equal(qn_field_update(f, NULL), QN_OK);
    /* (4,1) -> (8,1) -> goal (11,1) */
    assert_float_equal(qn_field_quad_cost(f, 0), 7, 1e-5);
    assert_int_equal(qn_field_sample(f, (qn_vec2){1, 1}, NULL, &dir), QN_OK);
    assert_float_equal(dir.x, 1, 1e-5);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

static void test_update_oom(void **state) {
    (void)state;
    static tm_mesh t;
    uint64_t s = 9;
    t.n = 0;
    tm_guillotine(&t, &s, 0, 0, 30, 24, 8, 160);
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = centre(&t, 0);
    for (uint64_t n = 0;; n++) {
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, n);
        qn_field_opts o = {.repairable = true};
        qn_field *f = NULL;
        qn_status st = qn_field_create(m, &goal, 1, &o, &a, &f, NULL);
        if (st != QN_OK) {
            assert_int_equal(st, QN_E_NOMEM);
            assert_int_equal(fa.live, 0);
            continue;
        }
        qn_mesh_set_quad_cost(m, 1, qn_mesh_quad_cost(m, 1) == 2.0f ? 3.0f : 2.0f);
        st = qn_field_update(f, NULL);
        qn_field_destroy(f);
        assert_int_equal(fa.live, 0);
        if (st == QN_OK) break;
        assert_int_equal(st, QN_E_NOMEM);
    }
    qn_mesh_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_unblock),
        cmocka_unit_test(test_journal_overflow),
        cmocka_unit_test(test_random_meshes),
        cmocka_unit_test(test_bundled_levels),
        cmocka_unit_test(test_update_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
