/*
** test_oom.c: out of memory in every public constructor and builder that
** takes a qn_allocator. Each is run with allocation 0 refused, then 1, 2,
** ... until it succeeds, in two ways: every allocation from the refused one
** on fails (as when memory is exhausted), or only that one fails (so error
** paths that allocate again are taken too). Every failure must return
** QN_E_NOMEM, say so in err, leave *out NULL and leak nothing; the success
** at the end must not have had any allocation refused, and its destroy must
** free everything.
*/
#define _POSIX_C_SOURCE 200809L
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

/* ---- the loop ------------------------------------------------------------ */

/* Refuses only allocation number fail_at; the others go through. */
static void *oneshot_fn(void *ud, void *ptr, size_t old_size, size_t new_size) {
    failalloc *fa = ud;
    if (new_size != 0 && fa->calls == fa->fail_at) {
        fa->calls++;
        fa->failures++;
        return NULL;
    }
    uint64_t at = fa->fail_at;
    fa->fail_at = UINT64_MAX;
    void *p = failalloc_fn(ud, ptr, old_size, new_size);
    fa->fail_at = at;
    return p;
}

typedef enum mode { STICKY, ONESHOT } mode;

static qn_allocator make_alloc(failalloc *fa, uint64_t fail_at, mode m) {
    qn_allocator a = failalloc_init(fa, fail_at);
    if (m == ONESHOT) a.fn = oneshot_fn;
    return a;
}

/* A constructor under test: builds into *out with allocator a. */
typedef qn_status (*build_fn)(const void *ctx, const qn_allocator *a, void **out, qn_error *e);
typedef void (*destroy_fn)(void *obj);

#define MAX_STEPS 200000u

/* Runs build with allocation 0, 1, 2, ... refused until it succeeds;
** returns the number of allocations the successful build made. */
static uint64_t oom_loop(const char *name, build_fn build, const void *ctx, destroy_fn destroy) {
    uint64_t total = 0;
    for (int m = STICKY; m <= ONESHOT; m++) {
        for (uint64_t n = 0;; n++) {
            if (n > MAX_STEPS) fail_msg("%s: no success after %u refusals", name, MAX_STEPS);
            failalloc fa;
            qn_allocator a = make_alloc(&fa, n, (mode)m);
            void *out = (void *)&fa; /* must be set to NULL */
            qn_error e;
            memset(&e, 0, sizeof e);
            qn_status st = build(ctx, &a, &out, &e);
            if (st == QN_OK) {
                if (fa.failures != 0)
                    fail_msg("%s: succeeded although allocation %llu was refused", name,
                             (unsigned long long)n);
                assert_non_null(out);
                destroy(out);
                if (fa.live != 0)
                    fail_msg("%s: %lld bytes left after destroy", name, (long long)fa.live);
                total = n;
                break;
            }
            if (st != QN_E_NOMEM)
                fail_msg("%s (%s): allocation %llu refused gave %s: %s", name,
                         m == STICKY ? "sticky" : "one-shot", (unsigned long long)n,
                         qn_status_name(st), e.message);
            if (out != NULL) fail_msg("%s: *out not NULL after failure %llu", name, (unsigned long long)n);
            if (fa.live != 0)
                fail_msg("%s (%s): allocation %llu refused leaks %lld bytes", name,
                         m == STICKY ? "sticky" : "one-shot", (unsigned long long)n,
                         (long long)fa.live);
            if (e.code != QN_E_NOMEM)
                fail_msg("%s: err->code is %s after allocation %llu was refused", name,
                         qn_status_name(e.code), (unsigned long long)n);
            assert_true(fa.failures >= 1);
        }
    }
    /* Every constructor here allocates; a loop that never failed tested nothing. */
    assert_true(total > 0);
    if (getenv("QN_OOM_VERBOSE"))
        print_message("%s: %llu allocations\n", name, (unsigned long long)total);
    return total;
}

/* ---- fixtures --------------------------------------------------------------- */

static const char *test_data_dir(void) {
    const char *d = getenv("QN_TEST_DATA_DIR");
    return d && *d ? d : "tests/data";
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void good_path(char *buf, size_t cap, const char *name) {
    int n = snprintf(buf, cap, "%s/good/%s", test_data_dir(), name);
    assert_true(n > 0 && (size_t)n < cap);
}

/* A small map: walls, a pillar, ground of every kind the reader knows. */
static const char small_map[] = "type octile\nheight 6\nwidth 8\nmap\n"
                                "........\n"
                                ".@@..G..\n"
                                ".@@.....\n"
                                "....T...\n"
                                "S...T..@\n"
                                "......@@\n";

static const char small_scen[] = "version 1\n"
                                 "0\tsmall.map\t8\t6\t0\t0\t7\t0\t7\n"
                                 "0\tsmall.map\t8\t6\t0\t5\t5\t0\t6.41421356\n"
                                 "1\tsmall.map\t8\t6\t3\t3\t0\t0\t4.24264069\n";

static qn_grid *small_grid(void) {
    qn_grid *g = NULL;
    qn_error e;
    if (qn_map_load_mem(small_map, sizeof small_map - 1, NULL, &g, &e) != QN_OK)
        fail_msg("small map: %s", e.message);
    return g;
}

/* Rectangles with T-junctions and a hole, 20 to 40 of them. */
static void small_rects(tm_mesh *t) {
    for (uint64_t seed = 1;; seed++) {
        memset(t, 0, sizeof *t);
        uint64_t s = seed;
        tm_guillotine(t, &s, 0, 0, 16, 12, 6, 40);
        if (t->n >= 20) break;
    }
    t->costs[3] = 2.5f;
}

static qn_mesh *small_mesh(tm_mesh *t) {
    small_rects(t);
    qn_mesh_desc d = tm_desc(t);
    qn_mesh *m = NULL;
    qn_error e;
    if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) fail_msg("mesh: %s", e.message);
    return m;
}

/* Centre of quad q. */
static qn_vec2 centre(const qn_mesh *m, uint32_t q) {
    qn_vec2 c[4];
    assert_int_equal(qn_mesh_quad_corners(m, q, c), QN_OK);
    return (qn_vec2){(c[0].x + c[1].x + c[2].x + c[3].x) * 0.25f,
                     (c[0].y + c[1].y + c[2].y + c[3].y) * 0.25f};
}

/* ---- meshes, levels, grids, maps ---------------------------------------------- */

static qn_status build_mesh(const void *ctx, const qn_allocator *a, void **out, qn_error *e) {
    return qn_mesh_create(ctx, a, (qn_mesh **)out, e);
}
static void destroy_mesh(void *p) { qn_mesh_destroy(p); }

static void test_mesh_create(void **state) {
    (void)state;
    static tm_mesh t;
    small_rects(&t);
    qn_mesh_desc d = tm_desc(&t);
    oom_loop("qn_mesh_create", build_mesh, &d, destroy_mesh);
    /* Explicit links: the other adjacency path. */
    static tm_mesh row;
    memset(&row, 0, sizeof row);
    for (int i = 0; i < 4; i++) tm_add_rect(&row, (float)i, 0, (float)i + 1, 1);
    qn_link links[2] = {{0, 1}, {2, 3}};
    d = tm_desc(&row);
    d.links = links;
    d.link_count = 2;
    d.has_links = true;
    oom_loop("qn_mesh_create with links", build_mesh, &d, destroy_mesh);
}

/* A mesh whose quads all cost 1 keeps no costs: the first other cost
** allocates them, and when that fails the call says so and changes
** nothing; once it succeeds the mesh counts the 4 bytes a quad. */
static void test_first_cost(void **state) {
    (void)state;
    static tm_mesh row;
    memset(&row, 0, sizeof row);
    for (int i = 0; i < 4; i++) tm_add_rect(&row, (float)i, 0, (float)i + 1, 1);
    qn_mesh_desc d = tm_desc(&row);
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, &a, &m, NULL), QN_OK);
    size_t bytes = qn_mesh_bytes(m);
    uint64_t version = qn_mesh_version(m);
    assert_int_equal(qn_mesh_set_quad_cost(m, 1, 1.0f), QN_OK); /* no change, no allocation */
    fa.fail_at = fa.calls;
    assert_int_equal(qn_mesh_set_quad_cost(m, 1, 3.0f), QN_E_NOMEM);
    assert_true(qn_mesh_quad_cost(m, 1) == 1.0f);
    assert_int_equal(qn_mesh_version(m), version);
    assert_int_equal(qn_mesh_bytes(m), bytes);
    fa.fail_at = UINT64_MAX;
    assert_int_equal(qn_mesh_set_quad_cost(m, 1, 3.0f), QN_OK);
    assert_true(qn_mesh_quad_cost(m, 1) == 3.0f && qn_mesh_quad_cost(m, 2) == 1.0f);
    assert_int_equal(qn_mesh_bytes(m), bytes + 4 * sizeof(float));
    assert_int_equal(qn_mesh_version(m), version + 1);
    qn_mesh_destroy(m);
    assert_int_equal(fa.live, 0);
}

typedef struct text {
    const char *s;
    size_t n;
} text;

static qn_status build_level_mem(const void *ctx, const qn_allocator *a, void **out,
                                 qn_error *e) {
    const text *t = ctx;
    return qn_level_load_mem(t->s, t->n, a, (qn_level **)out, e);
}
static qn_status build_level_file(const void *ctx, const qn_allocator *a, void **out,
                                  qn_error *e) {
    return qn_level_load_file(ctx, a, (qn_level **)out, e);
}
static void destroy_level(void *p) { qn_level_destroy(p); }

static void test_level_load(void **state) {
    (void)state;
    /* mixed: goals, spawns, costs, blocked quads and a grid; links: links. */
    const char *names[] = {"mixed.json", "links.json"};
    for (size_t i = 0; i < 2; i++) {
        char path[1024];
        good_path(path, sizeof path, names[i]);
        text t;
        char *buf = slurp(path, &t.n);
        t.s = buf;
        oom_loop("qn_level_load_mem", build_level_mem, &t, destroy_level);
        free(buf);
        oom_loop("qn_level_load_file", build_level_file, path, destroy_level);
    }
}

static qn_status build_grid(const void *ctx, const qn_allocator *a, void **out, qn_error *e) {
    return qn_grid_create(ctx, a, (qn_grid **)out, e);
}
static void destroy_grid(void *p) { qn_grid_destroy(p); }

static void test_grid_create(void **state) {
    (void)state;
    uint8_t costs[12 * 9];
    for (size_t i = 0; i < sizeof costs; i++) costs[i] = (uint8_t)(i % 7 == 3 ? 255 : 1 + i % 3);
    qn_grid_desc d = {12, 9, costs, 0.5f, {-3, 2}};
    oom_loop("qn_grid_create", build_grid, &d, destroy_grid);
}

static qn_status build_map(const void *ctx, const qn_allocator *a, void **out, qn_error *e) {
    const text *t = ctx;
    return qn_map_load_mem(t->s, t->n, a, (qn_grid **)out, e);
}

static qn_status build_scen(const void *ctx, const qn_allocator *a, void **out, qn_error *e) {
    const text *t = ctx;
    return qn_scen_load_mem(t->s, t->n, a, (qn_scen **)out, e);
}
static void destroy_scen(void *p) { qn_scen_destroy(p); }

static void test_movingai_load(void **state) {
    (void)state;
    text m = {small_map, sizeof small_map - 1}, s = {small_scen, sizeof small_scen - 1};
    oom_loop("qn_map_load_mem", build_map, &m, destroy_grid);
    oom_loop("qn_scen_load_mem", build_scen, &s, destroy_scen);
}

static qn_status build_mesh_from_grid(const void *ctx, const qn_allocator *a, void **out,
                                      qn_error *e) {
    return qn_mesh_from_grid(ctx, a, (qn_mesh **)out, e);
}

typedef struct raster {
    const qn_mesh *mesh;
    float cell;
} raster;

static qn_status build_grid_from_mesh(const void *ctx, const qn_allocator *a, void **out,
                                      qn_error *e) {
    const raster *r = ctx;
    return qn_grid_from_mesh(r->mesh, r->cell, a, (qn_grid **)out, e);
}

static void test_grid_mesh_conversions(void **state) {
    (void)state;
    qn_grid *g = small_grid();
    oom_loop("qn_mesh_from_grid", build_mesh_from_grid, g, destroy_mesh);
    qn_grid_destroy(g);
    static tm_mesh t;
    qn_mesh *m = small_mesh(&t);
    raster r = {m, 0.5f};
    oom_loop("qn_grid_from_mesh", build_grid_from_mesh, &r, destroy_grid);
    qn_mesh_destroy(m);
}

/* ---- fields ---------------------------------------------------------------------- */

typedef struct field_args {
    const qn_mesh *mesh;
    const qn_vec2 *goals;
    uint32_t n;
    qn_field_opts opts;
} field_args;

static qn_status build_field(const void *ctx, const qn_allocator *a, void **out, qn_error *e) {
    const field_args *f = ctx;
    return qn_field_create(f->mesh, f->goals, f->n, &f->opts, a, (qn_field **)out, e);
}
static void destroy_field(void *p) { qn_field_destroy(p); }

static void test_field_create(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = small_mesh(&t);
    qn_vec2 goals[2] = {centre(m, 0), centre(m, t.n - 1)};
    const qn_field_opts variants[] = {
        {0.0f, 0, false, false, false}, {0.25f, 4, true, false, false},
        {0.25f, 0, false, true, false}};
    for (size_t v = 0; v < 3; v++)
        for (uint32_t n = 1; n <= 2; n++) {
            field_args f = {m, goals, n, variants[v]};
            oom_loop(variants[v].repairable ? "qn_field_create (repairable)" : "qn_field_create",
                     build_field, &f, destroy_field);
        }
    qn_mesh_destroy(m);
}

/* A call made with allocation n (counted from its start) refused: true
** when it succeeded (then nothing was refused), counted in *successes;
** else it must have said QN_E_NOMEM, in its status and in err, counted in
** *failures. */
static bool call_done(const char *name, const failalloc *fa, uint64_t n, qn_status st,
                      const qn_error *e, uint64_t *successes, uint64_t *failures) {
    if (st == QN_OK) {
        assert_int_equal(fa->failures, 0);
        (*successes)++;
        return true;
    }
    if (st != QN_E_NOMEM || e->code != QN_E_NOMEM)
        fail_msg("%s: allocation %llu refused gave %s (err %s)", name, (unsigned long long)n,
                 qn_status_name(st), qn_status_name(e->code));
    (*failures)++;
    return false;
}

/* The field equals a fresh build on its mesh's current state. */
static void assert_fresh(const qn_field *f, const qn_mesh *m, qn_vec2 goal, qn_field_opts o) {
    qn_field *ref = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, &o, NULL, &ref, NULL), QN_OK);
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        float a = qn_field_quad_cost(f, q), b = qn_field_quad_cost(ref, q);
        if (!(a == b || fabsf(a - b) <= 1e-4f * fmaxf(1.0f, b)))
            fail_msg("quad %u: cost %g after update, %g rebuilt", q, (double)a, (double)b);
        assert_int_equal(qn_field_quad_exit(f, q), qn_field_quad_exit(ref, q));
    }
    qn_field_destroy(ref);
}

/* qn_field_update with allocation n (counted from the update) refused:
** QN_E_NOMEM, no leak, and a retry brings the field up to date. */
static void update_loop(bool repairable, mode md) {
    static tm_mesh t;
    uint64_t successes = 0, failures = 0;
    for (uint64_t n = 0; n <= MAX_STEPS; n++) {
        qn_mesh *m = small_mesh(&t);
        qn_vec2 goal = centre(m, 0);
        qn_field_opts o = {.radius = 0.1f, .repairable = repairable};
        failalloc fa;
        qn_allocator a = make_alloc(&fa, UINT64_MAX, md);
        qn_field *f = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, &o, &a, &f, NULL), QN_OK);
        assert_int_equal(qn_mesh_set_quad_cost(m, 2, 4.0f), QN_OK);
        assert_int_equal(qn_mesh_set_quad_blocked(m, t.n / 2, true), QN_OK);
        fa.fail_at = fa.calls + n;
        qn_error e;
        memset(&e, 0, sizeof e);
        qn_status st = qn_field_update(f, &e);
        bool done = call_done("qn_field_update", &fa, n, st, &e, &successes, &failures);
        if (!done) {
            fa.fail_at = UINT64_MAX;
            assert_int_equal(qn_field_update(f, NULL), QN_OK);
        }
        assert_true(qn_field_is_current(f));
        assert_fresh(f, m, goal, o);
        qn_field_destroy(f);
        if (fa.live != 0) fail_msg("qn_field_update: %lld bytes leaked", (long long)fa.live);
        qn_mesh_destroy(m);
        if (done) break;
    }
    assert_int_equal(successes, 1);
    /* A rebuild in place or a repair allocates its scratch; if it did not,
    ** the loop above refused nothing. */
    assert_true(failures > 0);
}

static void test_field_update(void **state) {
    (void)state;
    update_loop(false, STICKY);
    update_loop(false, ONESHOT);
    update_loop(true, STICKY);
    update_loop(true, ONESHOT);
}

/* An exact field's exits, made on first use (qn_field_exits) with
** allocation n refused: QN_E_NOMEM and nothing kept, then a retry makes the
** same exits as a field that never ran short. */
static void exits_loop(mode md) {
    static tm_mesh t;
    uint64_t successes = 0, failures = 0;
    for (uint64_t n = 0; n <= MAX_STEPS; n++) {
        qn_mesh *m = small_mesh(&t);
        assert_int_equal(qn_mesh_set_quad_cost(m, 3, 1.0f), QN_OK); /* every quad 1: exact */
        qn_vec2 goal = centre(m, 0);
        failalloc fa;
        qn_allocator a = make_alloc(&fa, UINT64_MAX, md);
        qn_field *f = NULL, *ref = NULL;
        assert_int_equal(qn_field_create(m, &goal, 1, NULL, &a, &f, NULL), QN_OK);
        assert_int_equal(qn_field_create(m, &goal, 1, NULL, NULL, &ref, NULL), QN_OK);
        int64_t live = fa.live;
        size_t bytes = qn_field_bytes(f);
        fa.fail_at = fa.calls + n;
        qn_error e;
        memset(&e, 0, sizeof e);
        qn_status st = qn_field_exits(f, &e);
        bool done = call_done("qn_field_exits", &fa, n, st, &e, &successes, &failures);
        if (!done) {
            if (fa.live != live)
                fail_msg("qn_field_exits: %lld bytes kept after failing",
                         (long long)(fa.live - live));
            assert_int_equal(qn_field_bytes(f), bytes);
            fa.fail_at = UINT64_MAX;
            assert_int_equal(qn_field_exits(f, NULL), QN_OK);
        }
        assert_true(qn_field_bytes(f) > bytes);
        uint32_t leaving = 0;
        for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
            assert_int_equal(qn_field_quad_exit(f, q), qn_field_quad_exit(ref, q));
            leaving += qn_field_quad_exit(f, q) != QN_NONE;
        }
        assert_true(leaving > 0);
        qn_field_destroy(f);
        qn_field_destroy(ref);
        if (fa.live != 0) fail_msg("qn_field_exits: %lld bytes leaked", (long long)fa.live);
        qn_mesh_destroy(m);
        if (done) break;
    }
    assert_int_equal(successes, 1);
    assert_true(failures > 0);
}

static void test_field_exits(void **state) {
    (void)state;
    exits_loop(STICKY);
    exits_loop(ONESHOT);
    assert_int_equal(qn_field_exits(NULL, NULL), QN_E_INVALID_ARG);
}

typedef struct grid_field_args {
    const qn_grid *grid;
    const uint32_t *goals;
    uint32_t n;
    qn_grid_field_opts opts;
} grid_field_args;

static qn_status build_grid_field(const void *ctx, const qn_allocator *a, void **out,
                                  qn_error *e) {
    const grid_field_args *g = ctx;
    return qn_grid_field_create(g->grid, g->goals, g->n, &g->opts, a, (qn_grid_field **)out, e);
}
static void destroy_grid_field(void *p) { qn_grid_field_destroy(p); }

static void test_grid_field_create(void **state) {
    (void)state;
    qn_grid *g = small_grid();
    uint32_t goals[2] = {5 * 8 + 0, 0 * 8 + 7};
    qn_grid_field_opts variants[4];
    memset(variants, 0, sizeof variants);
    variants[1].connectivity = QN_CONNECT_4;
    variants[2].no_flow = true;
    variants[3].stop_enabled = true;
    variants[3].stop_cell = 3 * 8 + 3;
    for (size_t v = 0; v < 4; v++)
        for (uint32_t n = 1; n <= 2; n++) {
            grid_field_args f = {g, goals, n, variants[v]};
            oom_loop("qn_grid_field_create", build_grid_field, &f, destroy_grid_field);
        }
    qn_grid_destroy(g);
}

/* ---- the destination cache ---------------------------------------------------------- */

typedef struct cache_args {
    const qn_mesh *mesh;
    qn_cache_opts opts;
} cache_args;

static qn_status build_cache(const void *ctx, const qn_allocator *a, void **out, qn_error *e) {
    const cache_args *c = ctx;
    return qn_cache_create(c->mesh, &c->opts, a, (qn_cache **)out, e);
}
static void destroy_cache(void *p) { qn_cache_destroy(p); }

static void test_cache_create(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = small_mesh(&t);
    cache_args c[2] = {{m, {0, false}}, {m, {1u << 20, true}}};
    for (int i = 0; i < 2; i++) oom_loop("qn_cache_create", build_cache, &c[i], destroy_cache);
    qn_mesh_destroy(m);
}

/* qn_cache_acquire and qn_cache_update with allocation n refused. */
static void cache_loop(bool repairable, mode md, bool in_update) {
    static tm_mesh t;
    uint64_t failures = 0;
    for (uint64_t n = 0; n <= MAX_STEPS; n++) {
        qn_mesh *m = small_mesh(&t);
        qn_vec2 g0 = centre(m, 0), g1 = centre(m, t.n - 1);
        failalloc fa;
        qn_allocator a = make_alloc(&fa, UINT64_MAX, md);
        qn_cache_opts o = {0, repairable};
        qn_cache *c = NULL;
        assert_int_equal(qn_cache_create(m, &o, &a, &c, NULL), QN_OK);
        const qn_field *f = NULL;
        assert_int_equal(qn_cache_acquire(c, g0, 0.1f, &f, NULL), QN_OK);
        qn_cache_release(c, f);
        if (in_update) {
            assert_int_equal(qn_cache_acquire(c, g1, 0.1f, &f, NULL), QN_OK);
            qn_cache_release(c, f);
            assert_int_equal(qn_mesh_set_quad_blocked(m, t.n / 2, true), QN_OK);
            assert_int_equal(qn_mesh_set_quad_cost(m, 2, 3.0f), QN_OK);
        }
        fa.fail_at = fa.calls + n;
        qn_error e;
        memset(&e, 0, sizeof e);
        f = (const qn_field *)&fa;
        qn_status st = in_update ? qn_cache_update(c, &e) : qn_cache_acquire(c, g1, 0.1f, &f, &e);
        bool done = st == QN_OK;
        if (!done) {
            if (st != QN_E_NOMEM)
                fail_msg("qn_cache_%s: allocation %llu refused gave %s",
                         in_update ? "update" : "acquire", (unsigned long long)n,
                         qn_status_name(st));
            if (!in_update && f != NULL) fail_msg("qn_cache_acquire: *out not NULL on failure");
            failures++;
        } else {
            assert_int_equal(fa.failures, 0);
            if (!in_update) qn_cache_release(c, f);
        }
        /* The cache still works, and its fields are up to date. */
        fa.fail_at = UINT64_MAX;
        qn_field_opts fo = {.radius = 0.1f, .repairable = repairable};
        for (int k = 0; k < 2; k++) {
            qn_vec2 g = k ? g1 : g0;
            assert_int_equal(qn_cache_acquire(c, g, 0.1f, &f, NULL), QN_OK);
            assert_true(qn_field_is_current(f));
            assert_fresh(f, m, g, fo);
            qn_cache_release(c, f);
        }
        qn_cache_destroy(c);
        if (fa.live != 0)
            fail_msg("qn_cache_%s: %lld bytes leaked after allocation %llu was refused",
                     in_update ? "update" : "acquire", (long long)fa.live,
                     (unsigned long long)n);
        qn_mesh_destroy(m);
        if (done) break;
    }
    assert_true(failures > 0);
}

static void test_cache_acquire(void **state) {
    (void)state;
    for (int r = 0; r < 2; r++) {
        cache_loop(r, STICKY, false);
        cache_loop(r, ONESHOT, false);
    }
}

static void test_cache_update(void **state) {
    (void)state;
    for (int r = 0; r < 2; r++) {
        cache_loop(r, STICKY, true);
        cache_loop(r, ONESHOT, true);
    }
}

/* ---- pathfinder, and the calls that must never allocate ------------------------------ */

static qn_status build_pathfinder(const void *ctx, const qn_allocator *a, void **out,
                                  qn_error *e) {
    return qn_pathfinder_create(ctx, a, (qn_pathfinder **)out, e);
}
static void destroy_pathfinder(void *p) { qn_pathfinder_destroy(p); }

static void test_pathfinder(void **state) {
    (void)state;
    static tm_mesh t;
    qn_mesh *m = small_mesh(&t);
    oom_loop("qn_pathfinder_create", build_pathfinder, m, destroy_pathfinder);
    /* Queries never allocate: every allocation refused, they still work. */
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    qn_pathfinder *pf = NULL;
    assert_int_equal(qn_pathfinder_create(m, &a, &pf, NULL), QN_OK);
    fa.fail_at = fa.calls;
    uint64_t before = fa.calls;
    qn_vec2 pts[64];
    uint32_t found = 0;
    for (uint32_t q = 1; q < t.n; q++) {
        uint32_t count = 0;
        float cost = 0;
        qn_status st = qn_path_find(pf, centre(m, 0), centre(m, q), 0.0f, pts, 64, &count, &cost);
        assert_true(st == QN_OK || st == QN_E_UNREACHABLE);
        found += st == QN_OK;
    }
    assert_true(found > 0);
    assert_int_equal(fa.calls, before);
    qn_pathfinder_destroy(pf);
    assert_int_equal(fa.live, 0);
    qn_mesh_destroy(m);
}

/* Sampling, costing points and asking how far ahead never allocate, on a
** discrete field (small_mesh has a quad of cost 2.5) and on an exact one
** (every quad 1), options o. */
static void sampling_never_allocates(bool exact, const qn_field_opts *o) {
    static tm_mesh t;
    qn_mesh *m = small_mesh(&t);
    if (exact) assert_int_equal(qn_mesh_set_quad_cost(m, 3, 1.0f), QN_OK); /* every quad 1 */
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    qn_vec2 goal = centre(m, 0);
    qn_field *f = NULL;
    assert_int_equal(qn_field_create(m, &goal, 1, o, &a, &f, NULL), QN_OK);
    qn_vec2 pos[64], dirs[64];
    uint8_t status[64];
    for (uint32_t i = 0; i < 64; i++)
        pos[i] = centre(m, i % t.n);
    fa.fail_at = fa.calls;
    uint64_t before = fa.calls;
    assert_int_equal(qn_field_sample_batch(f, pos, dirs, status, NULL, 64), QN_OK);
    assert_int_equal(qn_field_sample_parallel(f, pos, dirs, status, NULL, 64, 3), QN_OK);
    float total = 0.0f;
    for (uint32_t i = 0; i < 64; i++) {
        qn_vec2 d;
        float ahead = 0.0f;
        uint32_t hint = QN_NONE;
        qn_field_sample_ahead(f, pos[i], &hint, &d, &ahead);
        float c = qn_field_cost_at(f, pos[i], hint);
        total += isfinite(c) ? c : 0.0f;
    }
    assert_int_equal(fa.calls, before);
    assert_true(total > 0.0f);
    uint32_t moving = 0;
    for (uint32_t i = 0; i < 64; i++)
        moving += status[i] == QN_OK;
    assert_true(moving > 0);
    qn_field_destroy(f);
    assert_int_equal(fa.live, 0);
    qn_mesh_destroy(m);
}

static void test_sampling_never_allocates(void **state) {
    (void)state;
    sampling_never_allocates(false, NULL);
    qn_field_opts point = {.radius = 0.0f}, body = {.radius = 0.25f};
    sampling_never_allocates(true, &point);
    sampling_never_allocates(true, &body);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mesh_create),
        cmocka_unit_test(test_first_cost),
        cmocka_unit_test(test_level_load),
        cmocka_unit_test(test_grid_create),
        cmocka_unit_test(test_movingai_load),
        cmocka_unit_test(test_grid_mesh_conversions),
        cmocka_unit_test(test_field_create),
        cmocka_unit_test(test_field_update),
        cmocka_unit_test(test_field_exits),
        cmocka_unit_test(test_grid_field_create),
        cmocka_unit_test(test_cache_create),
        cmocka_unit_test(test_cache_acquire),
        cmocka_unit_test(test_cache_update),
        cmocka_unit_test(test_pathfinder),
        cmocka_unit_test(test_sampling_never_allocates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
