/* test_hostile.c: the library reproducers of issue "Hardening 2": shapes
** that made portal pairing super-linear (loaded, portal counts checked),
** geometry tolerances local to the quad, names with NUL, byte order marks,
** out of memory while parsing JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "failalloc.h"
#include "quadnav.h"
#include "shapes.h"

/* ---- shapes -------------------------------------------------------------- */

static void load_shape(qn_shape_text t) {
    assert_non_null(t.json);
    qn_level *lv = NULL;
    qn_error e;
    qn_status st = qn_level_load_mem(t.json, t.len, NULL, &lv, &e);
    if (st != QN_OK) fail_msg("%s: %s", qn_status_name(st), e.message);
    const qn_mesh *m = qn_level_mesh(lv);
    assert_int_equal(qn_mesh_quad_count(m), t.quads);
    assert_int_equal(qn_mesh_portal_count(m), t.portals);
    assert_int_equal(qn_mesh_island_count(m), 1);
    qn_level_destroy(lv);
    qn_shape_text copy = t;
    qn_shape_free(&copy);
}

static void test_band(void **state) {
    (void)state;
    load_shape(qn_shape_band(1000));
}

static void test_kites(void **state) {
    (void)state;
    load_shape(qn_shape_kites(8000));
}

static void test_long_edge(void **state) {
    (void)state;
    load_shape(qn_shape_long(20000));
    load_shape(qn_shape_long(50000)); /* was "too many portals" */
}

/* ---- tolerances ----------------------------------------------------------- */

static qn_status mesh_of(const qn_vec2 *v, uint32_t nv, const uint32_t *q, uint32_t nq,
                         qn_mesh **m, qn_error *e) {
    qn_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.vertices = v;
    d.vertex_count = nv;
    d.quads = q;
    d.quad_count = nq;
    return qn_mesh_create(&d, NULL, m, e);
}

/* Quad 0 a unit-ish square near the origin, the rest given, plus quad
** 'far' near 1e6 whose coordinates once set the tolerance for all. */
#define FAR_QUAD {1e6f - 1, 1e6f - 1}, {1e6f, 1e6f - 1}, {1e6f, 1e6f}, {1e6f - 1, 1e6f}

static void test_far_quad_small_quad(void **state) {
    (void)state;
    qn_vec2 v[] = {{0, 0}, {0.5f, 0}, {0.5f, 0.5f}, {0, 0.5f}, FAR_QUAD};
    uint32_t q[] = {0, 1, 2, 3, 4, 5, 6, 7};
    qn_mesh *m = NULL;
    qn_error e;
    qn_status st = mesh_of(v, 8, q, 2, &m, &e);
    if (st != QN_OK) fail_msg("%s", e.message); /* was "edge 0 has zero length" */
    assert_int_equal(qn_mesh_portal_count(m), 0);
    qn_mesh_destroy(m);
}

static void test_far_quad_gap(void **state) {
    (void)state;
    /* Two unit squares 0.5 apart: no portal across the gap. */
    qn_vec2 v[] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {1.5f, 0}, {2.5f, 0}, {2.5f, 1}, {1.5f, 1},
                   FAR_QUAD};
    uint32_t q[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    qn_mesh *m = NULL;
    qn_error e;
    assert_int_equal(mesh_of(v, 12, q, 3, &m, &e), QN_OK);
    assert_int_equal(qn_mesh_portal_count(m), 0);
    assert_int_equal(qn_mesh_island_count(m), 3);
    qn_mesh_destroy(m);
}

static void test_far_quad_overlap(void **state) {
    (void)state;
    /* Two 10-unit squares overlapping by 3 units. */
    qn_vec2 v[] = {{0, 0}, {10, 0}, {10, 10}, {0, 10}, {7, 0}, {17, 0}, {17, 10}, {7, 10},
                   FAR_QUAD};
    uint32_t q[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    qn_mesh *m = NULL;
    qn_error e;
    assert_int_equal(mesh_of(v, 12, q, 3, &m, &e), QN_E_OVERLAP);
    assert_non_null(strstr(e.message, "quad 1 overlaps quad 0"));
    assert_null(m);
}

static void test_split_vertex_a_hair_inside(void **state) {
    (void)state;
    /* Triangle (100,100) (103,101) (100,110) with its lower edge split at
    ** (101, 100.333...), which float rounding puts a hair inside; below it
    ** a quad whose top edge is the whole lower edge. */
    qn_vec2 v[] = {{100, 100}, {101, 100.33333333f}, {103, 101}, {100, 110}, {100, 99},
                   {103, 99}};
    uint32_t q[] = {0, 1, 2, 3, 4, 5, 2, 0};
    qn_mesh *m = NULL;
    qn_error e;
    qn_status st = mesh_of(v, 6, q, 2, &m, &e);
    if (st != QN_OK) fail_msg("%s: %s", qn_status_name(st), e.message);
    assert_int_equal(qn_mesh_portal_count(m), 1);
    qn_mesh_destroy(m);
    /* Nearly collinear split vertices of every scale still load. */
    for (int s = 0; s < 6; s++) {
        float k = powf(10.0f, (float)s - 2.0f);
        qn_vec2 w[] = {{0, 0}, {k, k / 3.0f}, {3 * k, k}, {0, 10 * k}};
        uint32_t qq[] = {0, 1, 2, 3};
        st = mesh_of(w, 4, qq, 1, &m, &e);
        if (st != QN_OK) fail_msg("scale %g: %s", (double)k, e.message);
        qn_mesh_destroy(m);
    }
    /* A vertex clearly inside still makes the quad non-convex. */
    qn_vec2 c[] = {{0, 0}, {1.5f, 0.2f}, {3, 0}, {0, 3}};
    uint32_t qc[] = {0, 1, 2, 3};
    assert_int_equal(mesh_of(c, 4, qc, 1, &m, &e), QN_E_NONCONVEX_QUAD);
}

/* Crossed quads without shared vertices or collinear edges overlap too. */
static void test_crossed_quads(void **state) {
    (void)state;
    qn_vec2 v[] = {{0, 4}, {10, 4}, {10, 6}, {0, 6}, {4, 0}, {6, 0}, {6, 10}, {4, 10}};
    uint32_t q[] = {0, 1, 2, 3, 4, 5, 6, 7};
    qn_mesh *m = NULL;
    qn_error e;
    assert_int_equal(mesh_of(v, 8, q, 2, &m, &e), QN_E_OVERLAP);
    /* Same-side collinear edges: a square on top of half a rectangle. */
    qn_vec2 w[] = {{0, 0}, {2, 0}, {2, 1}, {0, 1}, {0, 0}, {1, 0}, {1, 1}, {0, 1}};
    assert_int_equal(mesh_of(w, 8, q, 2, &m, &e), QN_E_OVERLAP);
    /* A diamond inside a square, every vertex on the square's boundary. */
    qn_vec2 d[] = {{0, 0}, {2, 0}, {2, 2}, {0, 2}, {1, 0}, {2, 1}, {1, 2}, {0, 1}};
    assert_int_equal(mesh_of(d, 8, q, 2, &m, &e), QN_E_OVERLAP);
}

/* ---- level input hygiene --------------------------------------------------- */

static qn_status load_text(const char *json, size_t len, qn_error *e) {
    qn_level *lv = NULL;
    qn_status st = qn_level_load_mem(json, len, NULL, &lv, e);
    qn_level_destroy(lv);
    return st;
}

static void test_name_with_nul(void **state) {
    (void)state;
    const char *j = "{\"format\": 1, \"quads\": [{\"rect\": [0, 0, 1, 1]}], \"goals\": ["
                    "{\"name\": \"gate\\u0000x\", \"at\": [0.5, 0.5]},"
                    "{\"name\": \"gate\\u0000y\", \"at\": [0.5, 0.5]}]}";
    qn_error e;
    assert_int_equal(load_text(j, strlen(j), &e), QN_E_JSON_SYNTAX);
    assert_non_null(strstr(e.message, "NUL"));
    assert_int_equal(e.line, 1);
    assert_int_equal(e.column, 74); /* the backslash of the first one */
    const char *n = "{\"format\": 1, \"name\": \"a\\u0000\", \"quads\": [{\"rect\": [0, 0, 1, 1]}]}";
    assert_int_equal(load_text(n, strlen(n), &e), QN_E_JSON_SYNTAX);
    assert_non_null(strstr(e.message, "NUL"));
    /* An escaped backslash followed by u0000 is text, not a NUL. */
    const char *ok = "{\"format\": 1, \"name\": \"a\\\\u0000\", \"quads\": [{\"rect\": [0, 0, 1, 1]}]}";
    assert_int_equal(load_text(ok, strlen(ok), &e), QN_OK);
}

static void test_byte_order_marks(void **state) {
    (void)state;
    const char *body = "{\"format\": 1, \"quads\": [{\"rect\": [0, 0, 1, 1]}]}";
    char buf[256];
    qn_error e;
    snprintf(buf, sizeof buf, "\xEF\xBB\xBF%s", body);
    assert_int_equal(load_text(buf, strlen(buf), &e), QN_OK);
    snprintf(buf, sizeof buf, "\xEF\xBB\xBF\xEF\xBB\xBF%s", body);
    assert_int_equal(load_text(buf, strlen(buf), &e), QN_E_JSON_SYNTAX);
    assert_non_null(strstr(e.message, "byte order mark"));
}

static void test_map_with_bom(void **state) {
    (void)state;
    const char *map = "\xEF\xBB\xBFtype octile\nheight 2\nwidth 3\nmap\n...\n.@.\n";
    qn_grid *g = NULL;
    qn_error e;
    qn_status st = qn_map_load_mem(map, strlen(map), NULL, &g, &e);
    if (st != QN_OK) fail_msg("%s", e.message);
    qn_grid_destroy(g);
    const char *two = "\xEF\xBB\xBF\xEF\xBB\xBFtype octile\nheight 1\nwidth 1\nmap\n.\n";
    assert_int_not_equal(qn_map_load_mem(two, strlen(two), NULL, &g, &e), QN_OK);
    assert_non_null(strstr(e.message, "byte order mark"));
}

/* Every allocation failure while parsing the JSON text is QN_E_NOMEM, with a
** message that says so; never a syntax error. */
static void test_json_nomem(void **state) {
    (void)state;
    const char *j = "{\"format\": 1, \"name\": \"n\", \"quads\": [{\"rect\": [0, 0, 1, 1]},"
                    "{\"rect\": [1, 0, 2, 1]}], \"goals\": [{\"name\": \"g\", \"at\": [1, 0.5]}]}";
    bool ok = false;
    for (uint64_t n = 0; n < 10000 && !ok; n++) {
        failalloc fa;
        qn_allocator al = failalloc_init(&fa, n);
        qn_level *lv = NULL;
        qn_error e;
        qn_status st = qn_level_load_mem(j, strlen(j), &al, &lv, &e);
        if (st == QN_OK) {
            ok = true;
            qn_level_destroy(lv);
            continue;
        }
        if (st != QN_E_NOMEM)
            fail_msg("failure %lu: %s: %s", (unsigned long)n, qn_status_name(st), e.message);
        assert_non_null(strstr(e.message, "out of memory"));
        assert_null(lv);
        assert_int_equal(fa.live, 0);
    }
    assert_true(ok);
}

/* The JSON parser's own allocations (cJSON uses malloc): a child process
** under an address-space limit loads a level far too big for it. */
static void test_json_nomem_rlimit(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    skip();
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    skip();
#endif
#endif
    qn_shape_text t = qn_shape_long(400000); /* about 17 MB of JSON */
    assert_non_null(t.json);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl;
        getrlimit(RLIMIT_AS, &rl);
        /* Current size plus 64 MB: the text fits, its tree does not. */
        FILE *f = fopen("/proc/self/statm", "r");
        unsigned long pages = 0;
        if (!f || fscanf(f, "%lu", &pages) != 1) _exit(3);
        fclose(f);
        rl.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (64u << 20);
        if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(4);
        qn_level *lv = NULL;
        qn_error e;
        qn_status st = qn_level_load_mem(t.json, t.len, NULL, &lv, &e);
        qn_shape_free(&t); /* the child's copy too (valgrind checks it) */
        if (st == QN_OK) _exit(5);
        if (st != QN_E_NOMEM || !strstr(e.message, "out of memory")) {
            fprintf(stderr, "%s: %s\n", qn_status_name(st), e.message);
            _exit(6);
        }
        _exit(0);
    }
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
    qn_shape_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_band),
        cmocka_unit_test(test_kites),
        cmocka_unit_test(test_long_edge),
        cmocka_unit_test(test_far_quad_small_quad),
        cmocka_unit_test(test_far_quad_gap),
        cmocka_unit_test(test_far_quad_overlap),
        cmocka_unit_test(test_split_vertex_a_hair_inside),
        cmocka_unit_test(test_crossed_quads),
        cmocka_unit_test(test_name_with_nul),
        cmocka_unit_test(test_byte_order_marks),
        cmocka_unit_test(test_map_with_bom),
        cmocka_unit_test(test_json_nomem),
        cmocka_unit_test(test_json_nomem_rlimit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
