/* test_bake.c: baked meshes and levels (.qnm): round trips equal the
** original, every truncation and every flipped bit of a small file is
** rejected cleanly, structural checks behind the checksum, out of memory,
** and loading a level by content (JSON, map, baked). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "internal.h"
#include "quadnav.h"
#include "testmesh.h"

static qn_mesh *guillotine_mesh(uint64_t seed, int side, int max_rects) {
    static tm_mesh t;
    memset(&t, 0, sizeof t);
    uint64_t s = seed;
    tm_guillotine(&t, &s, 0, 0, side, side, 12, max_rects);
    for (uint32_t i = 0; i < t.n; i++) {
        t.costs[i] = 1.0f + (float)(tm_rand(&s) % 4);
        t.blocked[i] = (tm_rand(&s) % 9) == 0;
    }
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    qn_error e;
    if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) fail_msg("mesh: %s", e.message);
    return m;
}

static uint8_t *save(const qn_mesh *m, size_t *n) {
    assert_int_equal(qn_mesh_save_mem(m, NULL, 0, n, NULL), QN_E_BUFFER_TOO_SMALL);
    uint8_t *buf = malloc(*n);
    assert_non_null(buf);
    size_t n2 = 0;
    assert_int_equal(qn_mesh_save_mem(m, buf, *n, &n2, NULL), QN_OK);
    assert_int_equal(n2, *n);
    return buf;
}

/* The same quads, portals, islands and point location (the bucket grid
** may differ: a file keeps the one of the code that wrote it). */
static void assert_same_content(const qn_mesh *a, const qn_mesh *b) {
    assert_int_equal(qn_mesh_quad_count(a), qn_mesh_quad_count(b));
    assert_int_equal(qn_mesh_portal_count(a), qn_mesh_portal_count(b));
    assert_int_equal(qn_mesh_island_count(a), qn_mesh_island_count(b));
    for (uint32_t q = 0; q < qn_mesh_quad_count(a); q++) {
        qn_vec2 ca[4], cb[4];
        qn_mesh_quad_corners(a, q, ca);
        qn_mesh_quad_corners(b, q, cb);
        assert_memory_equal(ca, cb, sizeof ca);
        assert_true(qn_mesh_quad_cost(a, q) == qn_mesh_quad_cost(b, q));
        assert_int_equal(qn_mesh_quad_blocked(a, q), qn_mesh_quad_blocked(b, q));
        assert_int_equal(qn_mesh_island(a, q), qn_mesh_island(b, q));
        assert_true(qn_mesh_quad_area(a, q) == qn_mesh_quad_area(b, q));
    }
    for (uint32_t i = 0; i < qn_mesh_portal_count(a); i++) {
        qn_portal pa, pb;
        qn_mesh_portal(a, i, &pa);
        qn_mesh_portal(b, i, &pb);
        assert_memory_equal(&pa, &pb, sizeof pa);
    }
    qn_rect r = qn_mesh_bounds(a);
    uint64_t s = 7;
    for (int k = 0; k < 500; k++) { /* point location agrees */
        qn_vec2 p = {r.min.x + (r.max.x - r.min.x) * (float)(tm_rand(&s) % 10007) / 10007.0f,
                     r.min.y + (r.max.y - r.min.y) * (float)(tm_rand(&s) % 10009) / 10009.0f};
        uint32_t qa = 0, qb = 1;
        assert_int_equal(qn_mesh_locate(a, p, QN_NONE, &qa), qn_mesh_locate(b, p, QN_NONE, &qb));
        assert_int_equal(qa, qb);
    }
}

/* ... and the same memory. */
static void assert_same_mesh(const qn_mesh *a, const qn_mesh *b) {
    assert_same_content(a, b);
    assert_int_equal(qn_mesh_bytes(a), qn_mesh_bytes(b));
}

static void test_round_trip(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        qn_mesh *m = guillotine_mesh(seed, 64, 400);
        size_t n;
        uint8_t *buf = save(m, &n);
        qn_mesh *m2 = NULL;
        qn_error e;
        qn_status st = qn_mesh_load_mem(buf, n, NULL, &m2, &e);
        if (st != QN_OK) fail_msg("load: %s", e.message);
        assert_same_mesh(m, m2);
        /* Saving the loaded mesh gives the same bytes. */
        size_t n2;
        uint8_t *buf2 = save(m2, &n2);
        assert_int_equal(n, n2);
        assert_memory_equal(buf, buf2, n);
        free(buf2);
        free(buf);
        qn_mesh_destroy(m2);
        qn_mesh_destroy(m);
    }
}

/* A version 1 file (the same layout, the one-state body checksum) still
** loads, to the same mesh; its body read as version 2 does not; and a real
** one, written by the version 1 code, loads. */
static void test_version_1(void **state) {
    (void)state;
    qn_mesh *m = guillotine_mesh(2, 64, 400);
    size_t n;
    uint8_t *buf = save(m, &n);
    assert_int_equal(buf[8], 2);
    uint64_t sum2;
    memcpy(&sum2, buf + 48, 8);
    buf[8] = 1;
    qn__qnm_reseal(buf, n);
    uint64_t sum1;
    memcpy(&sum1, buf + 48, 8);
    assert_true(sum1 != sum2);
    qn_mesh *m2 = NULL;
    qn_error e;
    qn_status st = qn_mesh_load_mem(buf, n, NULL, &m2, &e);
    if (st != QN_OK) fail_msg("load: %s", e.message);
    assert_same_mesh(m, m2);
    qn_mesh_destroy(m2);
    memcpy(buf + 48, &sum2, 8); /* version 1 with version 2's body sum */
    qn__qnm_reseal_header(buf);
    m2 = (qn_mesh *)1;
    assert_int_equal(qn_mesh_load_mem(buf, n, NULL, &m2, &e), QN_E_CORRUPT);
    assert_null(m2);
    free(buf);
    qn_mesh_destroy(m);
    /* A file the version 1 code wrote (`quadnav bake` of the bundled town
    ** level, before version 2) loads to the mesh of the level's JSON (with
    ** the finer bucket grid of that code). */
    const char *tdir = getenv("QN_TEST_DATA_DIR"), *ddir = getenv("QN_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/good/town_v1.qnm", tdir ? tdir : "tests/data");
    qn_level *old = NULL, *ref = NULL;
    if (qn_level_load_any_file(path, NULL, &old, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    snprintf(path, sizeof path, "%s/levels/town.json", ddir ? ddir : "data");
    if (qn_level_load_file(path, NULL, &ref, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    assert_same_content(qn_level_mesh(ref), qn_level_mesh(old));
    qn_level_destroy(old);
    qn_level_destroy(ref);
}

/* Every truncation is QN_E_TRUNCATED; every flipped bit QN_E_CORRUPT. */
static void test_every_byte(void **state) {
    (void)state;
    qn_mesh *m = guillotine_mesh(3, 6, 6);
    size_t n;
    uint8_t *buf = save(m, &n);
    assert_true(n < 2000);
    for (size_t len = 0; len < n; len++) {
        qn_mesh *out = (qn_mesh *)1;
        qn_error e;
        qn_status st = qn_mesh_load_mem(buf, len, NULL, &out, &e);
        if (st != QN_E_TRUNCATED) fail_msg("length %zu: %s: %s", len, qn_status_name(st), e.message);
        assert_null(out);
        assert_non_null(strstr(e.message, "ends"));
    }
    for (size_t i = 0; i < n; i++)
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            qn_mesh *out = (qn_mesh *)1;
            qn_error e;
            qn_status st = qn_mesh_load_mem(buf, n, NULL, &out, &e);
            if (st != QN_E_CORRUPT)
                fail_msg("byte %zu bit %d: %s: %s", i, bit, qn_status_name(st), e.message);
            assert_null(out);
            buf[i] ^= (uint8_t)(1u << bit);
        }
    free(buf);
    qn_mesh_destroy(m);
}

/* Behind a valid checksum: bad indices and numbers are still caught. */
static void test_checked_behind_checksum(void **state) {
    (void)state;
    qn_mesh *m = guillotine_mesh(4, 6, 6);
    size_t n;
    uint8_t *buf = save(m, &n);
    uint32_t nq = qn_mesh_quad_count(m), np = qn_mesh_portal_count(m);
    assert_true(np > 0);
    struct {
        size_t at;
        uint8_t v[4];
        qn_status want;
    } cases[] = {
        {64 + 36 * (size_t)nq, {2, 0, 0, 0}, QN_E_CORRUPT},            /* blocked = 2 */
        {64 + 32 * (size_t)nq, {0, 0, 0, 0}, QN_E_CORRUPT},            /* cost 0 */
        {64 + 0, {0, 0, 0xC0, 0x7F}, QN_E_CORRUPT},                     /* corner NaN */
        {64 + 37 * (size_t)nq + 4, {0xFF, 0xFF, 0, 0}, QN_E_CORRUPT},   /* portal b */
        {64 + 37 * (size_t)nq + 8, {7, 0, 0, 0}, QN_E_CORRUPT},         /* portal edge */
        {64 + 8, {0}, QN_E_DEGENERATE_QUAD}, /* corner 1 x = corner 0 x (set below) */
        {8, {3, 0, 0, 0}, QN_E_FORMAT_VERSION},                         /* version 3 */
        {16, {0xFF, 0xFF, 0xFF, 0x7F}, QN_E_CORRUPT},                   /* quad count */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint8_t *copy = malloc(n);
        memcpy(copy, buf, n);
        memcpy(copy + cases[k].at, cases[k].want == QN_E_DEGENERATE_QUAD ? buf + 64 : cases[k].v,
               4);
        qn__qnm_reseal(copy, n);
        qn_mesh *out = (qn_mesh *)1;
        qn_error e;
        qn_status st = qn_mesh_load_mem(copy, n, NULL, &out, &e);
        if (st != cases[k].want)
            fail_msg("case %zu: %s: %s", k, qn_status_name(st), e.message);
        assert_null(out);
        free(copy);
    }
    free(buf);
    qn_mesh_destroy(m);
}

static void test_load_nomem(void **state) {
    (void)state;
    qn_mesh *m = guillotine_mesh(7, 64, 400);
    /* Every array of the mesh is allocated: a mesh with portals and blocked
    ** quads (a single quad would skip the portal table and lists). */
    assert_true(qn_mesh_portal_count(m) > 50);
    size_t n;
    uint8_t *buf = save(m, &n);
    bool ok = false;
    for (uint64_t k = 0; k < 1000 && !ok; k++) {
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, k);
        qn_mesh *out = NULL;
        qn_error e;
        qn_status st = qn_mesh_load_mem(buf, n, &a, &out, &e);
        if (st == QN_OK) ok = true, qn_mesh_destroy(out);
        else assert_int_equal(st, QN_E_NOMEM);
        assert_int_equal(fa.live, 0);
    }
    assert_true(ok);
    free(buf);
    qn_mesh_destroy(m);
}

static const char level_json[] =
    "{\"format\": 1, \"name\": \"baked\", \"quads\": [{\"rect\": [0, 0, 2, 2]},"
    "{\"rect\": [2, 0, 4, 1]}, {\"rect\": [2, 1, 4, 2], \"cost\": 3}],"
    "\"goals\": [{\"name\": \"east\", \"at\": [3.5, 0.5]}, {\"name\": \"west\", \"at\": [0.5, 1]}],"
    "\"spawns\": [{\"name\": \"s\", \"at\": [1, 1]}],"
    "\"grid\": {\"width\": 4, \"height\": 2, \"cell_size\": 1, \"rows\": [\"....\", \"..@.\"]}}";

static void test_level_round_trip(void **state) {
    (void)state;
    qn_level *lv = NULL;
    qn_error e;
    qn_status st = qn_level_load_mem(level_json, strlen(level_json), NULL, &lv, &e);
    if (st != QN_OK) fail_msg("%s", e.message);
    size_t n = 0;
    assert_int_equal(qn_level_save_mem(lv, NULL, 0, &n, NULL), QN_E_BUFFER_TOO_SMALL);
    uint8_t *buf = malloc(n);
    assert_int_equal(qn_level_save_mem(lv, buf, n, &n, NULL), QN_OK);
    assert_int_equal(qn_level_sniff(buf, n), QN_LEVEL_BAKED);
    qn_level *lv2 = NULL;
    st = qn_level_load_any_mem(buf, n, NULL, &lv2, &e);
    if (st != QN_OK) fail_msg("%s", e.message);
    assert_same_mesh(qn_level_mesh(lv), qn_level_mesh(lv2));
    assert_string_equal(qn_level_name(lv2), "baked");
    assert_int_equal(qn_level_goal_count(lv2), 2);
    assert_int_equal(qn_level_spawn_count(lv2), 1);
    const char *name;
    qn_vec2 at;
    assert_int_equal(qn_level_goal(lv2, 1, &name, &at), QN_OK);
    assert_string_equal(name, "west");
    assert_true(at.x == 0.5f && at.y == 1.0f);
    const qn_grid *g1 = qn_level_grid(lv), *g2 = qn_level_grid(lv2);
    assert_non_null(g2);
    assert_int_equal(qn_grid_width(g1), qn_grid_width(g2));
    assert_memory_equal(qn_grid_costs(g1), qn_grid_costs(g2), 8);
    /* The mesh loader reads the mesh of a level file too. */
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_load_mem(buf, n, NULL, &m, NULL), QN_OK);
    qn_mesh_destroy(m);
    /* Truncated in the level section: still clean. */
    for (size_t len = n - 40; len < n; len++) {
        qn_level *out = (qn_level *)1;
        assert_int_equal(qn_level_load_any_mem(buf, len, NULL, &out, &e), QN_E_TRUNCATED);
        assert_null(out);
    }
    free(buf);
    qn_level_destroy(lv2);
    qn_level_destroy(lv);
}

static void test_load_any(void **state) {
    (void)state;
    qn_level *lv = NULL;
    qn_error e;
    const char *map = "\xEF\xBB\xBFtype octile\nheight 2\nwidth 3\nmap\n...\n.@.\n";
    assert_int_equal(qn_level_sniff(map, strlen(map)), QN_LEVEL_MAP);
    assert_int_equal(qn_level_load_any_mem(map, strlen(map), NULL, &lv, &e), QN_OK);
    assert_int_equal(qn_grid_width(qn_level_grid(lv)), 3);
    assert_true(qn_mesh_quad_count(qn_level_mesh(lv)) >= 2);
    qn_level_destroy(lv);
    assert_int_equal(qn_level_sniff(level_json, strlen(level_json)), QN_LEVEL_JSON);
    assert_int_equal(qn_level_load_any_mem(level_json, strlen(level_json), NULL, &lv, &e), QN_OK);
    assert_string_equal(qn_level_name(lv), "baked");
    qn_level_destroy(lv);
    const char *junk = "QNMESH\r\nnot really";
    assert_int_equal(qn_level_load_any_mem(junk, strlen(junk), NULL, &lv, &e), QN_E_TRUNCATED);
    assert_null(lv);
    assert_int_equal(qn_level_load_any_mem("{", 1, NULL, &lv, &e), QN_E_TRUNCATED);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_every_byte),
        cmocka_unit_test(test_version_1),
        cmocka_unit_test(test_checked_behind_checksum),
        cmocka_unit_test(test_load_nomem),
        cmocka_unit_test(test_level_round_trip),
        cmocka_unit_test(test_load_any),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
