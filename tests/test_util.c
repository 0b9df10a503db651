/* test_util.c: status names and text, version, allocator plumbing, the heap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "core/heap.h"

static void test_status_tables(void **state) {
    (void)state;
    assert_int_equal(QN_OK, 0);
    assert_string_equal(qn_status_name(QN_OK), "QN_OK");
    assert_string_equal(qn_status_name(QN_E_OVERLAP), "QN_E_OVERLAP");
    assert_string_equal(qn_status_str(QN_E_NOMEM), "out of memory");
    assert_string_equal(qn_status_name((qn_status)9999), "QN_UNKNOWN");
    assert_string_equal(qn_status_str((qn_status)-1), "unknown status");
    for (int c = 0; c < (int)QN_STATUS_COUNT; c++) {
        assert_non_null(qn_status_str((qn_status)c));
        assert_int_equal(strncmp(qn_status_name((qn_status)c), "QN_", 3), 0);
    }
}

static void test_version(void **state) {
    (void)state;
    assert_int_equal(qn_version_number(), QN_VERSION_NUMBER);
    assert_string_equal(qn_version_string(), QN_VERSION_STRING);
}

static void test_fail_fills_error(void **state) {
    (void)state;
    qn_error e;
    qn__error_clear(&e);
    assert_int_equal(e.index, QN_NONE);
    assert_int_equal(qn__fail(&e, QN_E_LIMIT, 7, "quad %u too big", 7u), QN_E_LIMIT);
    assert_int_equal(e.code, QN_E_LIMIT);
    assert_int_equal(e.index, 7);
    assert_string_equal(e.message, "quad 7 too big");
    assert_int_equal(qn__fail(NULL, QN_E_IO, 0, "x"), QN_E_IO);
}

static void test_read_missing_file(void **state) {
    (void)state;
    qn_allocator a = qn__allocator(NULL);
    char *buf = (char *)1;
    size_t n = 5;
    qn_error e;
    assert_int_equal(qn__read_file("/nonexistent/qn/file", &a, &buf, &n, &e), QN_E_IO);
    assert_null(buf);
    assert_int_equal(n, 0);
    assert_non_null(strstr(e.message, "/nonexistent/qn/file"));
}

/* The shared heap (src/core/heap.h) against a plain array: random pushes,
** lowered keys and pops; then every queued key changed at once and the
** order restored (qn__heap_order). Each pop takes a least key, and every
** queued id keeps the key it was given (qn__heap_key, pos). */
static uint32_t least_queued(const float *key, const bool *in, uint32_t n) {
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (in[i] && (best == UINT32_MAX || key[i] < key[best])) best = i;
    return best;
}

static void test_heap_order(void **state) {
    (void)state;
    enum { N = 500 };
    qn__hent a[N];
    uint32_t pos[N];
    float key[N];
    bool in[N] = {false};
    qn__heap h = {a, 0, pos};
    uint64_t s = 7;
    for (int round = 0; round < 2; round++) {
        for (int op = 0; op < 4000; op++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t id = (uint32_t)(s >> 33) % N, kind = (uint32_t)(s >> 20) % 4;
            float k = (float)((s >> 40) % 1000);
            if (kind < 2 && !in[id]) {
                qn__heap_push(&h, id, k);
                key[id] = k, in[id] = true;
            } else if (kind == 2 && in[id] && k < key[id]) {
                qn__heap_lowered(&h, id, k);
                key[id] = k;
            } else if (kind == 3 && h.n > 0) {
                uint32_t want = least_queued(key, in, N), got = qn__heap_pop(&h);
                assert_true(in[got]);
                assert_true(key[got] == key[want]);
                in[got] = false;
            }
        }
        for (uint32_t i = 0; i < N; i++)
            if (in[i]) assert_true(qn__heap_key(&h, i) == key[i]);
        /* New keys for everything queued, as a re-aimed search gives them. */
        for (uint32_t i = 0; i < h.n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            a[i].key = key[a[i].id] = (float)((s >> 40) % 1000);
        }
        qn__heap_order(&h);
        for (uint32_t i = 0; i < h.n; i++) assert_int_equal(pos[a[i].id], i);
    }
    float last = -1.0f;
    while (h.n > 0) {
        uint32_t want = least_queued(key, in, N), got = qn__heap_pop(&h);
        assert_true(key[got] == key[want] && key[got] >= last);
        last = key[got];
        in[got] = false;
    }
    assert_int_equal(least_queued(key, in, N), UINT32_MAX);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_tables),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_heap_order),
        cmocka_unit_test(test_fail_fills_error),
        cmocka_unit_test(test_read_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
