/*
** fuzz_bake.c: the baked mesh and level reader (.qnm).
**
** The input is a baked file. For half the inputs (a bit of their hash) the
** checksums are first recomputed, so mutations reach the structural checks
** behind them instead of stopping at "checksum mismatch". Invariants: a
** load either fails with an error (never a crash, a leak or a half-built
** result) or gives a mesh that saves back to exactly the bytes it came from
** (after resealing) and whose queries agree with brute force when the
** checksum was the file's own (after resealing: they only must not crash,
** as the format trusts a valid checksum); the level
** loader (by content) agrees with the mesh loader on success. Then the same
** with an allocator that fails at call N: no leak, the first status or
** QN_E_NOMEM.
*/
#include "fuzz_checks.h"

/* Queries on a mesh whose content is not trusted: any answer, no crash. */
static void poke_queries(const qn_mesh *m, const qn_vec2 *pts, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        uint32_t q;
        qn_vec2 c;
        (void)qn_mesh_locate(m, pts[i], QN_NONE, &q);
        (void)qn_mesh_nearest(m, pts[i], i & 1, &q, &c);
        if (i > 0) (void)qn_mesh_segment_inside(m, pts[i - 1], pts[i], QN_NONE, NULL);
    }
}

static qn_status run(const uint8_t *data, size_t size, const qn_allocator *a, bool failing,
                     bool resealed) {
    qn_mesh *m = (qn_mesh *)1;
    qn_error e;
    qn_status st = qn_mesh_load_mem(data, size, a, &m, &e);
    FZ_CHECK((st == QN_OK) == (m != NULL), "mesh %p with %s", (void *)m, qn_status_name(st));
    if (st != QN_OK) {
        fz_check_error(st, &e);
        return st;
    }
    size_t n = 0;
    FZ_CHECK(qn_mesh_save_mem(m, NULL, 0, &n, NULL) == QN_E_BUFFER_TOO_SMALL, "size query");
    uint8_t *again = malloc(n ? n : 1);
    FZ_CHECK(again && qn_mesh_save_mem(m, again, n, &n, NULL) == QN_OK, "save");
    /* A level file holds more than the mesh: compare the mesh part only. */
    FZ_CHECK(n <= size && memcmp(again + 64, data + 64, n - 64) == 0,
             "saved mesh differs from the loaded bytes");
    free(again);
    if (!failing) {
        qn_vec2 pts[FZ_MAX_POINTS];
        uint32_t np = fz_points(m, fz_hash(data, size), pts, FZ_MAX_POINTS);
        /* Resealed bytes can hold any bucket lists and segments: only an
        ** original file (its checksum intact) promises right answers. */
        if (resealed) poke_queries(m, pts, np);
        else fz_check_mesh_queries(m, pts, np);
        qn_level *lv = NULL;
        qn_status sl = qn_level_load_any_mem(data, size, a, &lv, &e);
        FZ_CHECK(sl == QN_OK || sl == QN_E_CORRUPT || sl == QN_E_NOMEM, "level load %s: %s",
                 qn_status_name(sl), e.message);
        if (sl == QN_OK)
            FZ_CHECK(qn_mesh_quad_count(qn_level_mesh(lv)) == qn_mesh_quad_count(m) &&
                         qn_mesh_portal_count(qn_level_mesh(lv)) == qn_mesh_portal_count(m),
                     "level and mesh loads differ");
        qn_level_destroy(lv);
    }
    qn_mesh_destroy(m);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    bool resealed = fz_hash(data, size) & 1;
    if (resealed) qn__qnm_reseal(copy, size);
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    qn_status first = run(copy, size, &a, false, resealed);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked", (long long)fa.live);
    uint64_t n = fz_hash(data, size) % (fa.calls + 1);
    a = failalloc_init(&fa, n);
    qn_status second = run(copy, size, &a, true, resealed);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked failing at call %llu", (long long)fa.live,
             (unsigned long long)n);
    FZ_CHECK(second == first || second == QN_E_NOMEM, "%s, then %s", qn_status_name(first),
             qn_status_name(second));
    free(copy);
    return 0;
}
