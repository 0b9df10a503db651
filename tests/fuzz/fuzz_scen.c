/*
** fuzz_scen.c: the MovingAI .map.scen reader.
**
** On a file that loads: every row's cells lie inside the map size it
** states, that size is within the grid limits, the optimal length is finite
** and not negative, its tolerance is positive and small, and row access
** past the end gives NULL. On failure: a filled error whose line and column
** lie inside the input. The same text with CR LF line breaks reads the
** same. Then the input again with an allocator failing at
** call N (from a hash of the input): no leak, and the same status or
** QN_E_NOMEM.
*/
#include "fuzz_common.h"

static void check_row(const qn_scen_row *r, uint32_t i) {
    FZ_CHECK(r->map_width >= 1 && r->map_height >= 1 && r->map_width <= QN_MAX_GRID_SIDE &&
                 r->map_height <= QN_MAX_GRID_SIDE,
             "row %u: map %ux%u", i, r->map_width, r->map_height);
    FZ_CHECK(r->start_x < r->map_width && r->start_y < r->map_height && r->goal_x < r->map_width &&
                 r->goal_y < r->map_height,
             "row %u: start (%u, %u), goal (%u, %u) outside %ux%u", i, r->start_x, r->start_y,
             r->goal_x, r->goal_y, r->map_width, r->map_height);
    FZ_CHECK(isfinite(r->optimal) && r->optimal >= 0.0, "row %u: optimal %g", i, r->optimal);
    double tol = qn_scen_tolerance(r);
    FZ_CHECK(isfinite(tol) && tol >= 1e-6 && tol <= 1.01 + 1e-5 * r->optimal,
             "row %u: tolerance %g for %g with %u decimals", i, tol, r->optimal, r->decimals);
}

static qn_status run(const uint8_t *data, size_t size, const qn_allocator *a, uint32_t *rows) {
    qn_scen *s = (qn_scen *)1;
    qn_error e;
    qn_status st = qn_scen_load_mem((const char *)data, size, a, &s, &e);
    *rows = 0;
    FZ_CHECK((st == QN_OK) == (s != NULL), "scen %p with %s", (void *)s, qn_status_name(st));
    if (st != QN_OK) {
        fz_check_error(st, &e);
        fz_check_position(data, size, &e);
        return st;
    }
    uint32_t n = qn_scen_row_count(s);
    for (uint32_t i = 0; i < n; i++) {
        const qn_scen_row *r = qn_scen_row_at(s, i);
        FZ_CHECK(r != NULL, "row %u of %u missing", i, n);
        check_row(r, i);
    }
    FZ_CHECK(qn_scen_row_at(s, n) == NULL && qn_scen_row_at(s, QN_NONE) == NULL,
             "row past the end");
    FZ_CHECK(qn_scen_tolerance(NULL) == 0.0, "tolerance of NULL");
    *rows = n;
    qn_scen_destroy(s);
    return st;
}

/* Field by field: the struct has padding. */
static bool same_row(const qn_scen_row *a, const qn_scen_row *b) {
    return a->bucket == b->bucket && a->map_width == b->map_width &&
           a->map_height == b->map_height && a->start_x == b->start_x && a->start_y == b->start_y &&
           a->goal_x == b->goal_x && a->goal_y == b->goal_y &&
           memcmp(&a->optimal, &b->optimal, sizeof a->optimal) == 0 && a->decimals == b->decimals;
}

/* Line breaks written CR LF instead of LF read the same: same status, same
** error position, same rows. */
static void check_crlf(const uint8_t *data, size_t size) {
    size_t n2;
    char *text2 = fz_crlf(data, size, &n2);
    if (!text2) return;
    qn_scen *s1 = NULL, *s2 = NULL;
    qn_error e1, e2;
    qn_status st1 = qn_scen_load_mem((const char *)data, size, NULL, &s1, &e1);
    qn_status st2 = qn_scen_load_mem(text2, n2, NULL, &s2, &e2);
    FZ_CHECK(st1 == st2, "LF: %s, CR LF: %s", qn_status_name(st1), qn_status_name(st2));
    if (st1 != QN_OK) {
        FZ_CHECK(e1.line == e2.line && e1.column == e2.column,
                 "LF error at %u:%u, CR LF at %u:%u (%s / %s)", e1.line, e1.column, e2.line,
                 e2.column, e1.message, e2.message);
    } else {
        FZ_CHECK(qn_scen_row_count(s1) == qn_scen_row_count(s2), "row counts differ");
        for (uint32_t i = 0; i < qn_scen_row_count(s1); i++)
            FZ_CHECK(same_row(qn_scen_row_at(s1, i), qn_scen_row_at(s2, i)),
                     "row %u differs with CR LF", i);
    }
    qn_scen_destroy(s1);
    qn_scen_destroy(s2);
    free(text2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    uint32_t rows1, rows2;
    qn_status first = run(data, size, &a, &rows1);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked", (long long)fa.live);
    check_crlf(data, size);
    uint64_t n = fz_hash(data, size) % (fa.calls + 1);
    a = failalloc_init(&fa, n);
    qn_status second = run(data, size, &a, &rows2);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked failing at call %llu", (long long)fa.live,
             (unsigned long long)n);
    FZ_CHECK(second == QN_E_NOMEM || (second == first && rows1 == rows2),
             "%s with %u rows, then %s with %u", qn_status_name(first), rows1,
             qn_status_name(second), rows2);
    FZ_CHECK(fa.failures == 0 || second == QN_E_NOMEM || second == first,
             "failing allocation gave %s", qn_status_name(second));
    return 0;
}
