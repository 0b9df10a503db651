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

/* The C library's allocator through every size change a block can take:
** small, up to large (mapped on its own), larger, smaller but still large,
** and back to small, its bytes kept each time; a large zeroed block is
** zero; sizes just below and at the mapping threshold. */
static void fill(uint8_t *p, size_t n, uint8_t seed) {
    for (size_t i = 0; i < n; i += 4093) p[i] = (uint8_t)(seed + i);
    p[n - 1] = (uint8_t)(seed + 7);
}

static void check(const uint8_t *p, size_t n, uint8_t seed) {
    for (size_t i = 0; i + 1 < n; i += 4093) assert_int_equal(p[i], (uint8_t)(seed + i));
}

static void test_default_allocator_sizes(void **state) {
    (void)state;
    qn_allocator a = qn__allocator(NULL);
    const size_t mib = (size_t)1 << 20;
    size_t sizes[] = {1000, 4 * mib - 1, 4 * mib, 9 * mib + 3, 64 * mib + 5, 6 * mib, 5 * mib,
                      3 * mib, 100};
    size_t n = sizes[0];
    uint8_t *p = qn__alloc(&a, n);
    assert_non_null(p);
    fill(p, n, 1);
    for (size_t k = 1; k < sizeof sizes / sizeof *sizes; k++) {
        size_t m = sizes[k];
        uint8_t *q = qn__realloc(&a, p, n, m);
        assert_non_null(q);
        size_t kept = n < m ? n : m;
        check(q, kept, (uint8_t)k);
        if (n <= m) assert_int_equal(q[n - 1], (uint8_t)(k + 7));
        fill(q, m, (uint8_t)(k + 1));
        p = q, n = m;
    }
    qn__free(&a, p, n);
    for (size_t m = 4 * mib - 8; m <= 4 * mib + 8; m += 8) {
        uint8_t *z = qn__calloc(&a, m, 1);
        assert_non_null(z);
        size_t nonzero = 0;
        for (size_t i = 0; i < m; i += 511) nonzero += z[i] != 0;
        nonzero += z[m - 1] != 0;
        assert_int_equal(nonzero, 0);
        z[m / 2] = 1;
        qn__free(&a, z, m);
    }
    assert_null(qn__realloc(&a, NULL, 0, SIZE_MAX - 4096));
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
        cmocka_unit_test(test_default_allocator_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
