/*
** test_determinism.c: the same input gives bit-identical results every
** time: meshes, quad fields (every cost model), batch sampling against the
** threaded sampler at 1..4 threads, and grid fields whatever the order in
** which their goal cells are listed.
**
** Two builds are made with different allocators: one hands out memory
** filled with 0x00 bytes, the other with 0xA5 bytes, at different
** addresses. A result that depended on uninitialised memory or on where a
** block landed would differ between them.
*/
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quadnav.h"
#include "testmesh.h"

/* ---- allocators and helpers ------------------------------------------------ */

typedef struct poison {
    unsigned char fill;
    size_t pad; /* extra bytes asked of the C library, to move blocks around */
} poison;

/* Fills every new byte (fresh blocks and the grown tail of a realloc). */
static void *poison_fn(void *ud, void *ptr, size_t old_size, size_t new_size) {
    const poison *p = ud;
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    unsigned char *q = realloc(ptr, new_size + p->pad);
    if (q && new_size > old_size) memset(q + old_size, p->fill, new_size - old_size);
    return q;
}

static poison poison_zero = {0x00, 0};
static poison poison_a5 = {0xA5, 24};

static qn_allocator alloc_of(poison *p) {
    qn_allocator a = {poison_fn, p};
    return a;
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t double_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static void data_file(char *buf, size_t cap, const char *sub) {
    const char *d = getenv("QN_DATA_DIR");
    int n = snprintf(buf, cap, "%s/%s", d && *d ? d : "data", sub);
    assert_true(n > 0 && (size_t)n < cap);
}

static qn_level *load_level(const char *name, poison *p) {
    char path[1024];
    data_file(path, sizeof path, name);
    qn_allocator a = alloc_of(p);
    qn_level *lv = NULL;
    qn_error e;
    if (qn_level_load_file(path, &a, &lv, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    return lv;
}

/* Mixed-size rectangles with T-junctions and holes, some quads costlier. */
static qn_mesh *guillotine_mesh(tm_mesh *t, poison *p) {
    /* The first seed that cuts the area into at least 150 rectangles. */
    for (uint64_t seed = 1; seed < 1000; seed++) {
        memset(t, 0, sizeof *t);
        uint64_t s = seed;
        tm_guillotine(t, &s, 0, 0, 64, 48, 10, 400);
        if (t->n >= 150) break;
    }
    assert_true(t->n >= 150);
    for (uint32_t i = 0; i < t->n; i += 7) t->costs[i] = 1.0f + (float)(i % 5);
    qn_mesh_desc d = tm_desc(t);
    qn_allocator a = alloc_of(p);
    qn_mesh *m = NULL;
    qn_error e;
    if (qn_mesh_create(&d, &a, &m, &e) != QN_OK) fail_msg("mesh: %s", e.message);
    return m;
}

/* ---- meshes ----------------------------------------------------------------- */

static void assert_same_mesh(const qn_mesh *a, const qn_mesh *b) {
    assert_int_equal(qn_mesh_quad_count(a), qn_mesh_quad_count(b));
    assert_int_equal(qn_mesh_portal_count(a), qn_mesh_portal_count(b));
    assert_int_equal(qn_mesh_island_count(a), qn_mesh_island_count(b));
    for (uint32_t i = 0; i < qn_mesh_portal_count(a); i++) {
        qn_portal pa, pb;
        assert_int_equal(qn_mesh_portal(a, i, &pa), QN_OK);
        assert_int_equal(qn_mesh_portal(b, i, &pb), QN_OK);
        if (memcmp(&pa, &pb, sizeof pa) != 0) fail_msg("portal %u differs", i);
    }
    for (uint32_t q = 0; q < qn_mesh_quad_count(a); q++)
        assert_int_equal(qn_mesh_island(a, q), qn_mesh_island(b, q));
}

static void test_mesh_twice(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *a = guillotine_mesh(&t, &poison_zero);
    qn_mesh *b = guillotine_mesh(&t, &poison_a5);
    assert_true(qn_mesh_portal_count(a) > qn_mesh_quad_count(a) / 2);
    assert_same_mesh(a, b);
    qn_mesh_destroy(a);
    qn_mesh_destroy(b);
    qn_level *la = load_level("levels/town.json", &poison_zero);
    qn_level *lb = load_level("levels/town.json", &poison_a5);
    assert_same_mesh(qn_level_mesh(la), qn_level_mesh(lb));
    qn_level_destroy(la);
    qn_level_destroy(lb);
}

/* ---- quad fields ------------------------------------------------------------ */

static qn_field *build(const qn_mesh *m, const qn_vec2 *goals, uint32_t n,
                       const qn_field_opts *o, poison *p) {
    qn_allocator a = alloc_of(p);
    qn_field *f = NULL;
    qn_error e;
    if (qn_field_create(m, goals, n, o, &a, &f, &e) != QN_OK) fail_msg("field: %s", e.message);
    return f;
}

/* Every quad's cost (bit for bit), exit and next quad agree. */
static void assert_same_field(const qn_field *a, const qn_field *b, const char *what) {
    uint32_t n = qn_mesh_quad_count(qn_field_mesh(a)), reachable = 0;
    for (uint32_t q = 0; q < n; q++) {
        float ca = qn_field_quad_cost(a, q), cb = qn_field_quad_cost(b, q);
        if (float_bits(ca) != float_bits(cb))
            fail_msg("%s: quad %u cost %.9g vs %.9g", what, q, (double)ca, (double)cb);
        if (qn_field_quad_exit(a, q) != qn_field_quad_exit(b, q))
            fail_msg("%s: quad %u exit %u vs %u", what, q, qn_field_quad_exit(a, q),
                     qn_field_quad_exit(b, q));
        assert_int_equal(qn_field_quad_next(a, q), qn_field_quad_next(b, q));
        reachable += ca < (float)1e30;
    }
    /* The comparison means something only if the field reaches far. */
    assert_true(reachable > n / 2);
}

/* Every option combination that changes how a field is built. */
static const qn_field_opts field_variants[] = {
    {0.0f, 0, false, false, false}, {0.25f, 0, false, false, false},
    {0.0f, 0, true, false, false},  {0.25f, 0, true, false, false},
    {0.0f, 0, false, true, false},  {0.25f, 2, false, true, false},
    {0.25f, 0, true, true, false},  {0.25f, 0, false, false, true},
};
#define N_VARIANTS (sizeof field_variants / sizeof field_variants[0])

static void fields_twice(const qn_mesh *m, const qn_vec2 *goals, uint32_t ngoals,
                         const char *name) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        char what[128];
        snprintf(what, sizeof what, "%s variant %zu", name, v);
        qn_field *a = build(m, goals, ngoals, &field_variants[v], &poison_zero);
        /* Another field built in between changes the heap's state. */
        qn_field *other = build(m, goals + ngoals - 1, 1, &field_variants[0], &poison_a5);
        qn_field *b = build(m, goals, ngoals, &field_variants[v], &poison_a5);
        assert_same_field(a, b, what);
        qn_field_destroy(other);
        qn_field_destroy(a);
        qn_field_destroy(b);
    }
}

static void test_quad_fields_twice(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = guillotine_mesh(&t, &poison_zero);
    qn_rect r = qn_mesh_bounds(m);
    /* Goals at quad centres, so each is inside the mesh. */
    qn_vec2 g[3];
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t q = (i * 97u) % t.n;
        qn_vec2 c[4];
        assert_int_equal(qn_mesh_quad_corners(m, q, c), QN_OK);
        g[i] = (qn_vec2){(c[0].x + c[2].x) * 0.5f, (c[0].y + c[2].y) * 0.5f};
    }
    assert_true(r.max.x > r.min.x);
    fields_twice(m, g, 1, "guillotine, 1 goal");
    fields_twice(m, g, 3, "guillotine, 3 goals");
    qn_mesh_destroy(m);

    qn_level *lv = load_level("levels/town.json", &poison_zero);
    qn_vec2 goal;
    const char *name;
    assert_int_equal(qn_level_goal(lv, 0, &name, &goal), QN_OK);
    fields_twice(qn_level_mesh(lv), &goal, 1, "town");
    qn_level_destroy(lv);
}

/* The same changes applied to two copies of a level leave equal fields. */
static void test_updates_twice(void **state) {
    (void)state;
    qn_level *lv[2] = {load_level("levels/town.json", &poison_zero),
                       load_level("levels/town.json", &poison_a5)};
    qn_field *f[2][2];
    qn_vec2 goal;
    const char *name;
    assert_int_equal(qn_level_goal(lv[0], 0, &name, &goal), QN_OK);
    for (int k = 0; k < 2; k++) {
        qn_field_opts o = {.radius = 0.25f, .repairable = true};
        f[k][0] = build(qn_level_mesh(lv[k]), &goal, 1, &o, k ? &poison_a5 : &poison_zero);
        o.repairable = false;
        f[k][1] = build(qn_level_mesh(lv[k]), &goal, 1, &o, k ? &poison_a5 : &poison_zero);
    }
    uint32_t n = qn_mesh_quad_count(qn_level_mesh(lv[0]));
    for (uint32_t round = 0; round < 6; round++) {
        for (int k = 0; k < 2; k++) {
            qn_mesh *m = qn_level_mesh_mut(lv[k]);
            uint32_t q = (round * 13u + 5u) % n;
            assert_int_equal(qn_mesh_set_quad_cost(m, q, 1.0f + (float)round), QN_OK);
            if (round % 2 == 0) assert_int_equal(qn_mesh_set_quad_blocked(m, (q * 7u) % n, round % 4 == 0), QN_OK);
            for (int j = 0; j < 2; j++) assert_int_equal(qn_field_update(f[k][j], NULL), QN_OK);
        }
        for (int j = 0; j < 2; j++) {
            uint32_t na = 0;
            for (uint32_t q = 0; q < n; q++) {
                float ca = qn_field_quad_cost(f[0][j], q), cb = qn_field_quad_cost(f[1][j], q);
                if (float_bits(ca) != float_bits(cb))
                    fail_msg("round %u field %d quad %u: %.9g vs %.9g", round, j, q, (double)ca,
                             (double)cb);
                assert_int_equal(qn_field_quad_exit(f[0][j], q), qn_field_quad_exit(f[1][j], q));
                na += ca < (float)1e30;
            }
            assert_true(na > n / 2);
        }
    }
    for (int k = 0; k < 2; k++) {
        qn_field_destroy(f[k][0]);
        qn_field_destroy(f[k][1]);
        qn_level_destroy(lv[k]);
    }
}

/* ---- sampling --------------------------------------------------------------- */

#define N_UNITS 100000u

typedef struct samples {
    qn_vec2 dirs[N_UNITS];
    uint8_t status[N_UNITS];
    uint32_t quads[N_UNITS];
} samples;

static void assert_same_samples(const samples *a, const samples *b, const char *what) {
    for (uint32_t i = 0; i < N_UNITS; i++) {
        if (float_bits(a->dirs[i].x) != float_bits(b->dirs[i].x) ||
            float_bits(a->dirs[i].y) != float_bits(b->dirs[i].y) || a->status[i] != b->status[i] ||
            a->quads[i] != b->quads[i])
            fail_msg("%s: unit %u: (%.9g, %.9g) status %u quad %u vs (%.9g, %.9g) status %u "
                     "quad %u",
                     what, i, (double)a->dirs[i].x, (double)a->dirs[i].y, a->status[i],
                     a->quads[i], (double)b->dirs[i].x, (double)b->dirs[i].y, b->status[i],
                     b->quads[i]);
    }
}

static void clear_samples(samples *s) {
    memset(s->dirs, 0x5A, sizeof s->dirs);
    memset(s->status, 0xEE, sizeof s->status);
    for (uint32_t i = 0; i < N_UNITS; i++) s->quads[i] = QN_NONE;
}

static void sample_all(const qn_field *f, const qn_vec2 *pos, const char *name) {
    static samples ref, got;
    clear_samples(&ref);
    assert_int_equal(qn_field_sample_batch(f, pos, ref.dirs, ref.status, ref.quads, N_UNITS), QN_OK);
    /* Every outcome should occur, or the comparison covers little. */
    uint32_t seen[256] = {0};
    for (uint32_t i = 0; i < N_UNITS; i++) seen[ref.status[i]]++;
    assert_true(seen[QN_OK] > N_UNITS / 4);
    assert_true(seen[QN_E_OUTSIDE] > 0);
    for (uint32_t th = 1; th <= 4; th++) {
        char what[128];
        snprintf(what, sizeof what, "%s, %u threads", name, th);
        clear_samples(&got);
        assert_int_equal(qn_field_sample_parallel(f, pos, got.dirs, got.status, got.quads,
                                                  N_UNITS, th),
                         QN_OK);
        assert_same_samples(&ref, &got, what);
    }
    /* Batches over arbitrary sub-ranges, as a job system would cut them. */
    clear_samples(&got);
    for (size_t at = 0, len = 1; at < N_UNITS; at += len, len = len * 3 + 1) {
        size_t n = at + len > N_UNITS ? N_UNITS - at : len;
        assert_int_equal(qn_field_sample_batch(f, pos + at, got.dirs + at, got.status + at,
                                               got.quads + at, n),
                         QN_OK);
    }
    assert_same_samples(&ref, &got, name);
}

static void test_sampling_threads(void **state) {
    (void)state;
    qn_level *lv = load_level("levels/town.json", &poison_zero);
    const qn_mesh *m = qn_level_mesh(lv);
    qn_rect r = qn_mesh_bounds(m);
    qn_vec2 *pos = malloc(N_UNITS * sizeof *pos);
    assert_non_null(pos);
    /* A margin outside the bounds gives QN_E_OUTSIDE units too. */
    uint64_t s = 99;
    float w = r.max.x - r.min.x, h = r.max.y - r.min.y;
    for (uint32_t i = 0; i < N_UNITS; i++) {
        float u = (float)tm_rand(&s) / 4294967296.0f, v = (float)tm_rand(&s) / 4294967296.0f;
        pos[i] = (qn_vec2){r.min.x - 0.05f * w + 1.1f * w * u, r.min.y - 0.05f * h + 1.1f * h * v};
    }
    qn_vec2 goal;
    const char *name;
    assert_int_equal(qn_level_goal(lv, 0, &name, &goal), QN_OK);
    const qn_field_opts o[3] = {{0.25f, 2, false, false, false},
                                {0.25f, 0, false, false, false},
                                {0.0f, 8, true, true, false}};
    for (int k = 0; k < 3; k++) {
        qn_field *f = build(m, &goal, 1, &o[k], &poison_zero);
        char what[64];
        snprintf(what, sizeof what, "town, options %d", k);
        sample_all(f, pos, what);
        qn_field_destroy(f);
    }
    free(pos);
    qn_level_destroy(lv);
}

/* ---- grid fields ------------------------------------------------------------ */

static qn_grid *load_map(const char *name, poison *p) {
    char path[1024];
    data_file(path, sizeof path, name);
    qn_allocator a = alloc_of(p);
    qn_grid *g = NULL;
    qn_error e;
    if (qn_map_load_file(path, &a, &g, &e) != QN_OK) fail_msg("%s: %s", path, e.message);
    return g;
}

static qn_grid_field *grid_build(const qn_grid *g, const uint32_t *goals, uint32_t n,
                                 qn_connectivity c, poison *p) {
    qn_allocator a = alloc_of(p);
    qn_grid_field_opts o = {.connectivity = c};
    qn_grid_field *f = NULL;
    qn_error e;
    if (qn_grid_field_create(g, goals, n, &o, &a, &f, &e) != QN_OK)
        fail_msg("grid field: %s", e.message);
    return f;
}

static void assert_same_grid_field(const qn_grid_field *a, const qn_grid_field *b,
                                   const char *what) {
    const qn_grid *g = qn_grid_field_grid(a);
    uint32_t reachable = 0, moving = 0;
    for (uint32_t y = 0; y < qn_grid_height(g); y++)
        for (uint32_t x = 0; x < qn_grid_width(g); x++) {
            double ca = qn_grid_field_cost(a, x, y), cb = qn_grid_field_cost(b, x, y);
            if (double_bits(ca) != double_bits(cb))
                fail_msg("%s: cell %u,%u cost %.17g vs %.17g", what, x, y, ca, cb);
            uint8_t da = qn_grid_field_dir(a, x, y), db = qn_grid_field_dir(b, x, y);
            if (da != db) fail_msg("%s: cell %u,%u dir %u vs %u", what, x, y, da, db);
            qn_vec2 va = qn_grid_field_vec(a, x, y), vb = qn_grid_field_vec(b, x, y);
            if (float_bits(va.x) != float_bits(vb.x) || float_bits(va.y) != float_bits(vb.y))
                fail_msg("%s: cell %u,%u vec (%.9g, %.9g) vs (%.9g, %.9g)", what, x, y,
                         (double)va.x, (double)va.y, (double)vb.x, (double)vb.y);
            reachable += ca < 1e300;
            moving += da != QN_DIR_NONE;
        }
    assert_true(reachable > 1000);
    assert_true(moving > 1000);
}

/* Passable cells spread over the map, some of them adjacent (equal-cost
** ties between goals are common then). */
static uint32_t pick_goals(const qn_grid *g, uint32_t *goals, uint32_t cap) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g), n = 0;
    uint64_t s = 7;
    for (uint32_t tries = 0; n < cap && tries < 100000; tries++) {
        uint32_t x = tm_rand(&s) % w, y = tm_rand(&s) % h;
        if (qn_grid_cost(g, x, y) == QN_CELL_WALL) continue;
        goals[n++] = y * w + x;
        if (n < cap && x + 1 < w && qn_grid_cost(g, x + 1, y) != QN_CELL_WALL) goals[n++] = y * w + x + 1;
    }
    return n;
}

/* Goal order does not matter: the distances are the same whichever goal is
** settled first, and each cell's flow is computed from its neighbours'
** final distances alone, ties going by direction (orthogonal E, S, W, N
** first to last, then a diagonal that ties with them wins, SE, SW, NW, NE
** in that order), never by which goal reached a cell first. */
static void test_grid_goal_order(void **state) {
    (void)state;
    qn_grid *ga = load_map("maps/lak303d.map", &poison_zero);
    qn_grid *gb = load_map("maps/lak303d.map", &poison_a5);
    uint32_t goals[24], rev[24], rot[24];
    uint32_t n = pick_goals(ga, goals, 24);
    assert_true(n >= 12);
    for (uint32_t i = 0; i < n; i++) {
        rev[i] = goals[n - 1 - i];
        rot[i] = goals[(i + 5) % n];
    }
    for (int c = 0; c < 2; c++) {
        qn_connectivity conn = c ? QN_CONNECT_4 : QN_CONNECT_8;
        char what[96];
        qn_grid_field *a = grid_build(ga, goals, n, conn, &poison_zero);
        qn_grid_field *b = grid_build(gb, goals, n, conn, &poison_a5);
        snprintf(what, sizeof what, "%s, same order", c ? "4-conn" : "8-conn");
        assert_same_grid_field(a, b, what);
        qn_grid_field_destroy(b);
        b = grid_build(gb, rev, n, conn, &poison_a5);
        snprintf(what, sizeof what, "%s, reversed goals", c ? "4-conn" : "8-conn");
        assert_same_grid_field(a, b, what);
        qn_grid_field_destroy(b);
        b = grid_build(ga, rot, n, conn, &poison_zero);
        snprintf(what, sizeof what, "%s, rotated goals", c ? "4-conn" : "8-conn");
        assert_same_grid_field(a, b, what);
        qn_grid_field_destroy(b);
        qn_grid_field_destroy(a);
    }
    qn_grid_destroy(ga);
    qn_grid_destroy(gb);
}

/* A mesh made from the same grid twice is the same mesh, quad for quad. */
static void test_mesh_from_grid_twice(void **state) {
    (void)state;
    qn_grid *g = load_map("maps/lak303d.map", &poison_zero);
    qn_allocator a0 = alloc_of(&poison_zero), a1 = alloc_of(&poison_a5);
    qn_mesh *ma = NULL, *mb = NULL;
    assert_int_equal(qn_mesh_from_grid(g, &a0, &ma, NULL), QN_OK);
    assert_int_equal(qn_mesh_from_grid(g, &a1, &mb, NULL), QN_OK);
    assert_same_mesh(ma, mb);
    for (uint32_t q = 0; q < qn_mesh_quad_count(ma); q++) {
        qn_vec2 ca[4], cb[4];
        assert_int_equal(qn_mesh_quad_corners(ma, q, ca), QN_OK);
        assert_int_equal(qn_mesh_quad_corners(mb, q, cb), QN_OK);
        assert_memory_equal(ca, cb, sizeof ca);
    }
    qn_mesh_destroy(ma);
    qn_mesh_destroy(mb);
    qn_grid_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mesh_twice),
        cmocka_unit_test(test_quad_fields_twice),
        cmocka_unit_test(test_updates_twice),
        cmocka_unit_test(test_sampling_threads),
        cmocka_unit_test(test_grid_goal_order),
        cmocka_unit_test(test_mesh_from_grid_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
