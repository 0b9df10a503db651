/* test_util.c: status names and text, version, allocator plumbing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_tables),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_fail_fills_error),
        cmocka_unit_test(test_read_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
