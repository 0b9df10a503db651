/* test_live.c: the destination cache (budget, recency, reference counts,
** updates), batch sampling over threads, and the way out for cut-off units. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "quadnav.h"
#include "testmesh.h"

/* A random mesh of at least 100 quads (a few seeds stop splitting early). */
static qn_mesh *random_mesh(tm_mesh *t, uint64_t seed) {
    uint64_t s = seed;
    do {
        t->n = 0;
        tm_guillotine(t, &s, 0, 0, 40, 30, 9, 300);
    } while (t->n < 100);
    qn_mesh_desc d = tm_desc(t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    return m;
}

static qn_vec2 centre(const tm_mesh *t, uint32_t q) {
    return (qn_vec2){(t->verts[4 * q].x + t->verts[4 * q + 2].x) / 2,
                     (t->verts[4 * q].y + t->verts[4 * q + 2].y) / 2};
}

static void test_cache_budget_and_lru(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = random_mesh(&t, 5);
    const qn_field *f0 = NULL;
    qn_cache *probe = NULL;
    assert_int_equal(qn_cache_create(m, NULL, NULL, &probe, NULL), QN_OK);
    assert_int_equal(qn_cache_acquire(probe, centre(&t, 0), 0, &f0, NULL), QN_OK);
    size_t one = qn_field_bytes(f0);
    qn_cache_destroy(probe);

    qn_cache_opts o = {.budget_bytes = 4 * one + one / 2};
    qn_cache *c = NULL;
    assert_int_equal(qn_cache_create(m, &o, NULL, &c, NULL), QN_OK);
    const qn_field *f[8];
    for (uint32_t i = 0; i < 6; i++) {
        assert_int_equal(qn_cache_acquire(c, centre(&t, i), 0, &f[i], NULL), QN_OK);
        qn_cache_release(c, f[i]);
        qn_cache_stats st;
        qn_cache_get_stats(c, &st);
        assert_true(st.bytes <= o.budget_bytes);
    }
    qn_cache_stats st;
    qn_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 4);
    assert_int_equal(st.misses, 6);
    assert_int_equal(st.evictions, 2);
    assert_int_equal(st.held, 0);
    /* The newest four remain: 2..5 hit, 0 misses again. */
    const qn_field *g;
    assert_int_equal(qn_cache_acquire(c, centre(&t, 5), 0, &g, NULL), QN_OK);
    assert_ptr_equal(g, f[5]);
    qn_cache_get_stats(c, &st);
    assert_int_equal(st.hits, 1);
    /* Hold 2, 3, 4 and 5: the budget is then full of held fields, so a new
    ** destination does not fit, and nothing held is freed. */
    const qn_field *h[3];
    for (uint32_t i = 2; i < 5; i++)
        assert_int_equal(qn_cache_acquire(c, centre(&t, i), 0, &h[i - 2], NULL), QN_OK);
    assert_int_equal(qn_cache_acquire(c, centre(&t, 7), 0, &g, NULL), QN_E_LIMIT);
    assert_null(g);
    qn_vec2 dir;
    for (int i = 0; i < 3; i++)
        assert_int_not_equal(qn_field_sample(h[i], centre(&t, 10), NULL, &dir), QN_E_INVALID_ARG);
    qn_cache_get_stats(c, &st);
    assert_int_equal(st.held, 4);
    assert_true(st.bytes <= o.budget_bytes);
    /* Releasing one makes room: the least recently used unheld one goes. */
    qn_cache_release(c, h[0]); /* centre 2 */
    assert_int_equal(qn_cache_acquire(c, centre(&t, 7), 0, &g, NULL), QN_OK);
    qn_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 4);
    assert_true(st.bytes <= o.budget_bytes);
    /* Another radius is another key. */
    const qn_field *r1;
    qn_cache_release(c, g);
    qn_cache_release(c, h[1]);
    assert_int_equal(qn_cache_acquire(c, centre(&t, 5), 0.3f, &r1, NULL), QN_OK);
    assert_ptr_not_equal(r1, f[5]);
    assert_int_equal(qn_cache_acquire(c, (qn_vec2){NAN, 0}, 0, &g, NULL), QN_E_INVALID_ARG);
    assert_int_equal(qn_cache_acquire(c, (qn_vec2){-99, -99}, 0, &g, NULL), QN_E_OUTSIDE);
    qn_cache_destroy(c);
    qn_mesh_destroy(m);
}

/* Many destinations in and out of a small budget, with random holds. */
static void test_cache_churn(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = random_mesh(&t, 8);
    qn_cache_opts o = {.budget_bytes = 20000};
    qn_cache *c = NULL;
    assert_int_equal(qn_cache_create(m, &o, NULL, &c, NULL), QN_OK);
    const qn_field *held[16] = {0};
    uint64_t s = 3;
    for (int i = 0; i < 3000; i++) {
        uint32_t slot = tm_rand(&s) % 16;
        if (held[slot]) {
            qn_cache_release(c, held[slot]);
            held[slot] = NULL;
        }
        qn_status st = qn_cache_acquire(c, centre(&t, tm_rand(&s) % 40), 0, &held[slot], NULL);
        assert_true(st == QN_OK || st == QN_E_LIMIT);
        qn_cache_stats cs;
        qn_cache_get_stats(c, &cs);
        assert_true(cs.bytes <= o.budget_bytes);
        /* Every held field is still alive and answers. */
        for (int k = 0; k < 16; k++)
            if (held[k]) assert_true(qn_field_bytes(held[k]) > 0);
    }
    qn_cache_destroy(c);
    qn_mesh_destroy(m);
}

static void test_cache_update_repairs(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = random_mesh(&t, 11);
    for (int rep = 0; rep < 2; rep++) {
        qn_cache_opts o = {.repairable = rep == 1};
        qn_cache *c = NULL;
        assert_int_equal(qn_cache_create(m, &o, NULL, &c, NULL), QN_OK);
        const qn_field *f;
        assert_int_equal(qn_cache_acquire(c, centre(&t, 0), 0, &f, NULL), QN_OK);
        qn_mesh_set_quad_cost(m, 3, qn_mesh_quad_cost(m, 3) + 2);
        qn_mesh_set_quad_blocked(m, 5, !qn_mesh_quad_blocked(m, 5));
        assert_false(qn_field_is_current(f));
        assert_int_equal(qn_cache_update(c, NULL), QN_OK);
        assert_true(qn_field_is_current(f));
        qn_field *ref = NULL;
        qn_vec2 goal = centre(&t, 0);
        qn_field_opts ro = {.midpoint_costs = o.repairable}; /* the model each uses */
        assert_int_equal(qn_field_create(m, &goal, 1, &ro, NULL, &ref, NULL), QN_OK);
        for (uint32_t q = 0; q < t.n; q++) {
            float a = qn_field_quad_cost(f, q), b = qn_field_quad_cost(ref, q);
            assert_true((isinf(a) && isinf(b)) || fabsf(a - b) <= 1e-4f * fmaxf(1, b));
        }
        qn_field_destroy(ref);
        qn_cache_stats st;
        qn_cache_get_stats(c, &st);
        assert_int_equal(st.updates, 1);
        qn_cache_destroy(c);
    }
    qn_mesh_destroy(m);
}

static void test_cache_oom(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = random_mesh(&t, 12);
    for (uint64_t n = 0;; n++) {
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, n);
        qn_cache *c = NULL;
        qn_status st = qn_cache_create(m, NULL, &a, &c, NULL);
        if (st == QN_OK) {
            const qn_field *f;
            for (uint32_t i = 0; i < 20 && st == QN_OK; i++)
                st = qn_cache_acquire(c, centre(&t, i), 0, &f, NULL);
            qn_cache_destroy(c);
        }
        assert_int_equal(fa.live, 0);
        if (st == QN_OK) break;
        assert_int_equal(st, QN_E_NOMEM);
    }
    qn_mesh_destroy(m);
}

static void test_parallel_matches_single(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = random_mesh(&t, 21);
    qn_vec2 goal = centre(&t, 0);
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
    enum { N = 20000 };
    static qn_vec2 pos[N], d1[N], d4[N];
    static uint8_t s1[N], s4[N];
    static uint32_t q1[N], q4[N];
    uint64_t s = 4;
    for (int i = 0; i < N; i++) {
        pos[i] = (qn_vec2){(float)(tm_rand(&s) % 4000) / 100.0f, (float)(tm_rand(&s) % 3000) / 100.0f};
        q1[i] = q4[i] = QN_NONE;
    }
    assert_int_equal(qn_field_sample_batch(f, pos, d1, s1, q1, N), QN_OK);
    for (uint32_t th = 1; th <= 8; th++) {
        memset(d4, 0, sizeof d4);
        for (int i = 0; i < N; i++) q4[i] = QN_NONE;
        assert_int_equal(qn_field_sample_parallel(f, pos, d4, s4, q4, N, th), QN_OK);
        assert_memory_equal(d1, d4, sizeof d1);
        assert_memory_equal(s1, s4, sizeof s1);
        assert_memory_equal(q1, q4, sizeof q1);
    }
    assert_int_equal(qn_field_sample_parallel(f, pos, d4, s4, q4, 3, 8), QN_OK);
    assert_int_equal(qn_field_sample_parallel(f, pos, d4, s4, q4, N, 0), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample_parallel(f, pos, d4, s4, q4, N, 65), QN_E_INVALID_ARG);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

/* A stand-in for a game's job system: runs the jobs last to first and
** counts how often each one ran. */
typedef struct job_log {
    uint32_t calls, job_count;
    uint32_t runs[300];
} job_log;

static void run_reversed(void *ud, uint32_t job_count, qn_job_fn fn, void *job_data) {
    job_log *log = ud;
    log->calls++;
    log->job_count = job_count;
    for (uint32_t j = job_count; j-- > 0;) {
        assert_true(j < 300);
        log->runs[j]++;
        fn(job_data, j);
    }
}

static void test_jobs_runner(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = random_mesh(&t, 22);
    qn_vec2 goal = centre(&t, 0);
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL), QN_OK);
    enum { N = 5000 };
    static qn_vec2 pos[N], d1[N], d2[N];
    static uint8_t s1[N], s2[N];
    static uint32_t q1[N], q2[N];
    uint64_t s = 9;
    for (int i = 0; i < N; i++)
        pos[i] = (qn_vec2){(float)(tm_rand(&s) % 4000) / 100.0f, (float)(tm_rand(&s) % 3000) / 100.0f};
    for (int i = 0; i < N; i++)
        q1[i] = QN_NONE;
    assert_int_equal(qn_field_sample_batch(f, pos, d1, s1, q1, N), QN_OK);
    static const uint32_t jobs[] = {1, 7, 64, 65, 299};
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
        job_log log;
        memset(&log, 0, sizeof log);
        qn_jobs runner = {run_reversed, &log};
        memset(d2, 0, sizeof d2);
        for (int i = 0; i < N; i++)
            q2[i] = QN_NONE;
        assert_int_equal(qn_field_sample_jobs(f, pos, d2, s2, q2, N, jobs[k], &runner), QN_OK);
        assert_int_equal(log.calls, 1);
        assert_int_equal(log.job_count, jobs[k]);
        for (uint32_t j = 0; j < jobs[k]; j++)
            assert_int_equal(log.runs[j], 1);
        assert_memory_equal(d1, d2, sizeof d1);
        assert_memory_equal(s1, s2, sizeof s1);
        assert_memory_equal(q1, q2, sizeof q1);
        /* The built-in runner, more jobs than threads included. */
        memset(d2, 0, sizeof d2);
        assert_int_equal(qn_field_sample_jobs(f, pos, d2, s2, NULL, N, jobs[k], NULL), QN_OK);
        assert_memory_equal(d1, d2, sizeof d1);
    }
    /* More jobs than units: one job per unit; no units: one empty job. */
    job_log log;
    memset(&log, 0, sizeof log);
    qn_jobs runner = {run_reversed, &log};
    assert_int_equal(qn_field_sample_jobs(f, pos, d2, s2, q2, 5, 200, &runner), QN_OK);
    assert_int_equal(log.job_count, 5);
    assert_int_equal(qn_field_sample_jobs(f, pos, d2, s2, q2, 0, 4, &runner), QN_OK);
    assert_int_equal(log.job_count, 1);
    assert_int_equal(log.calls, 2);
    qn_jobs no_run = {NULL, NULL};
    assert_int_equal(qn_field_sample_jobs(f, pos, d2, s2, q2, N, 4, &no_run), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample_jobs(f, pos, d2, s2, q2, N, 0, &runner), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample_jobs(f, pos, d2, s2, q2, N, QN_MAX_JOBS + 1, NULL),
                     QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample_jobs(NULL, pos, d2, s2, q2, N, 4, NULL), QN_E_INVALID_ARG);
    assert_int_equal(qn_field_sample_jobs(f, NULL, d2, s2, q2, N, 4, NULL), QN_E_INVALID_ARG);
    assert_int_equal(log.calls, 2); /* never called for bad arguments */
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

static void test_way_out(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 4, 4);   /* 0 */
    tm_add_rect(&t, 4, 0, 8, 4);   /* 1: will be blocked */
    tm_add_rect(&t, 8, 0, 12, 4);  /* 2: goal */
    tm_add_rect(&t, 20, 0, 24, 4); /* 3: island */
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    qn_vec2 goal = {10, 2};
    qn_field_opts o = {.repairable = true};
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &f, NULL), QN_OK);
    qn_mesh_set_quad_blocked(m, 1, true);
    assert_int_equal(qn_field_update(f, NULL), QN_OK);
    qn_vec2 dir, at;
    uint32_t q;
    /* In the blocked quad, nearer quad 0 than 2: quad 0 is cut off, so the way
    ** out leads to quad 2. */
    assert_int_equal(qn_field_sample(f, (qn_vec2){5, 2}, NULL, &dir), QN_E_BLOCKED);
    assert_int_equal(qn_field_way_out(f, (qn_vec2){5, 2}, &q, &at), QN_OK);
    assert_int_equal(q, 2);
    /* On the portal into quad 2, level with the unit. */
    assert_float_equal(at.x, 8, 1e-6);
    assert_float_equal(at.y, 2, 1e-6);
    /* Standing there, the unit is out: it samples in quad 2. */
    assert_int_equal(qn_field_sample(f, at, &q, &dir), QN_OK);
    assert_int_equal(q, 2);
    assert_int_equal(qn_field_way_out(f, (qn_vec2){22, 2}, &q, &at), QN_OK);
    assert_int_equal(q, 2);
    assert_int_equal(qn_field_way_out(f, (qn_vec2){NAN, 2}, &q, &at), QN_E_INVALID_ARG);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_budget_and_lru),
        cmocka_unit_test(test_cache_churn),
        cmocka_unit_test(test_cache_update_repairs),
        cmocka_unit_test(test_cache_oom),
        cmocka_unit_test(test_parallel_matches_single),
        cmocka_unit_test(test_jobs_runner),
        cmocka_unit_test(test_way_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
