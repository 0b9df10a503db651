/* test_level.c: the level JSON loader: happy paths, the bad-input corpus,
** error locations, limits and out-of-memory. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>

#include "failalloc.h"
#include "internal.h"

/* ---- helpers ------------------------------------------------------------ */

static const char *test_data_dir(void) {
    const char *d = getenv("QN_TEST_DATA_DIR");
    return d ? d : "tests/data";
}

/* snprintf that must not truncate. */
static void fmt(char *buf, size_t cap, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void fmt(char *buf, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < cap);
}

static void data_path(char *buf, size_t cap, const char *sub, const char *name) {
    fmt(buf, cap, "%s/%s/%s", test_data_dir(), sub, name);
}

/* Reads a whole test file into a malloc'd buffer (not NUL-terminated on
** purpose when exact is true: exactly *len bytes are allocated). */
static char *slurp(const char *path, size_t *len, bool exact) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *buf = malloc((size_t)n + (exact ? 0 : 1) + (n == 0));
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    if (!exact) buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

static qn_status load_str(const char *json, qn_level **out, qn_error *err) {
    return qn_level_load_mem(json, strlen(json), NULL, out, err);
}

static void assert_corners(const qn_mesh *m, uint32_t q, const float want[8]) {
    qn_vec2 c[4];
    assert_int_equal(qn_mesh_quad_corners(m, q, c), QN_OK);
    for (int k = 0; k < 4; k++) {
        assert_float_equal(c[k].x, want[2 * k], 0);
        assert_float_equal(c[k].y, want[2 * k + 1], 0);
    }
}

/* ---- happy paths ---------------------------------------------------------- */

static void check_mixed_mesh(const qn_mesh *m) {
    assert_int_equal(qn_mesh_quad_count(m), 5);
    const float q0[8] = {0, 0, 4, 0, 4, 4, 0, 4};
    const float q1[8] = {4, 0, 8, 0, 8, 4, 4, 4}; /* rect: (x0,y0) (x1,y0) (x1,y1) (x0,y1) */
    const float q4[8] = {0, 4, 4, 4, 3, 6, 1, 6};
    assert_corners(m, 0, q0);
    assert_corners(m, 1, q1);
    assert_corners(m, 4, q4);
    assert_float_equal(qn_mesh_quad_cost(m, 0), 1.0f, 0);
    assert_float_equal(qn_mesh_quad_cost(m, 1), 2.5f, 0);
    assert_float_equal(qn_mesh_quad_cost(m, 2), 3.0f, 0);
    assert_false(qn_mesh_quad_blocked(m, 2));
    assert_true(qn_mesh_quad_blocked(m, 3));
    assert_false(qn_mesh_quad_blocked(m, 4));
    /* 0-1 (x = 4), 1-2 and 1-3 (x = 8, a T-junction), 2-3 (y = 2), 0-4 (y = 4). */
    assert_int_equal(qn_mesh_portal_count(m), 5);
    /* Quads 0, 1, 2 and 4 connect; the blocked quad 3 is in no island. */
    assert_int_equal(qn_mesh_island_count(m), 1);
    assert_int_equal(qn_mesh_island(m, 3), QN_NONE);
}

static void check_mixed_points(const qn_level *lv) {
    const char *name;
    qn_vec2 at;
    assert_string_equal(qn_level_name(lv), "mixed");
    assert_int_equal(qn_level_goal_count(lv), 2);
    assert_int_equal(qn_level_goal(lv, 1, &name, &at), QN_OK);
    assert_string_equal(name, "exit");
    assert_float_equal(at.x, 9.0f, 0);
    assert_float_equal(at.y, 1.0f, 0);
    assert_int_equal(qn_level_find_goal(lv, "plaza"), 0);
    assert_int_equal(qn_level_find_goal(lv, "exit"), 1);
    assert_int_equal(qn_level_find_goal(lv, "north"), QN_NONE); /* a spawn, not a goal */
    assert_int_equal(qn_level_goal(lv, 2, &name, &at), QN_E_INVALID_ARG);
    assert_null(name);
    assert_int_equal(qn_level_spawn_count(lv), 3);
    /* Spawns outside the level are kept: the tools report them. */
    assert_int_equal(qn_level_spawn(lv, 2, &name, &at), QN_OK);
    assert_string_equal(name, "far");
    assert_float_equal(at.x, 50.0f, 0);
    assert_int_equal(qn_level_spawn(lv, 1, &name, &at), QN_OK);
    assert_string_equal(name, "east");
    assert_float_equal(at.x, 7.5f, 0);
    assert_float_equal(at.y, 3.5f, 0);
}

static void check_mixed_grid(const qn_grid *g) {
    assert_non_null(g);
    assert_int_equal(qn_grid_width(g), 6);
    assert_int_equal(qn_grid_height(g), 4);
    assert_float_equal(qn_grid_cell_size(g), 0.5f, 0);
    assert_float_equal(qn_grid_origin(g).x, -1.0f, 0);
    assert_float_equal(qn_grid_origin(g).y, 2.0f, 0);
    static const char *const rows[4] = {"..@@..", ".G..S.", "WWW...", "..T.O."};
    for (uint32_t y = 0; y < 4; y++) {
        for (uint32_t x = 0; x < 6; x++) {
            uint8_t want = strchr("@OTW", rows[y][x]) ? QN_CELL_WALL : QN_CELL_NORMAL;
            if (y == 0 && x < 2) want = 5;    /* costs[0] paints over the rows */
            if (y == 3 && x >= 4) want = 200; /* costs[1], over an 'O' wall too */
            assert_int_equal(qn_grid_cost(g, x, y), want);
        }
    }
}

static void test_load_mixed_file(void **state) {
    (void)state;
    char path[512];
    data_path(path, sizeof path, "good", "mixed.json");
    qn_level *lv = (qn_level *)1;
    qn_error err;
    qn_status st = qn_level_load_file(path, NULL, &lv, &err);
    if (st != QN_OK) print_error("%s: %s\n", qn_status_name(st), err.message);
    assert_int_equal(st, QN_OK);
    assert_int_equal(err.code, QN_OK);
    check_mixed_mesh(qn_level_mesh(lv));
    check_mixed_points(lv);
    check_mixed_grid(qn_level_grid(lv));
    qn_level_destroy(lv);
}

/* Quad "id"s are kept: found by name, read back by index, unique. */
static void test_quad_ids(void **state) {
    (void)state;
    qn_level *lv;
    qn_error err;
    const char *json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1], \"id\": \"yard\"},"
                       " {\"rect\": [1,0,2,1]}, {\"rect\": [2,0,3,1], \"id\": \"gate\"},"
                       " {\"rect\": [3,0,4,1], \"id\": \"a\"}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_OK);
    assert_int_equal(qn_level_find_quad(lv, "gate"), 2);
    assert_int_equal(qn_level_find_quad(lv, "yard"), 0);
    assert_int_equal(qn_level_find_quad(lv, "a"), 3);
    assert_int_equal(qn_level_find_quad(lv, "gat"), QN_NONE);
    assert_int_equal(qn_level_find_quad(lv, "gates"), QN_NONE);
    assert_int_equal(qn_level_find_quad(lv, ""), QN_NONE);
    assert_int_equal(qn_level_find_quad(lv, NULL), QN_NONE);
    assert_int_equal(qn_level_find_quad(NULL, "gate"), QN_NONE);
    assert_string_equal(qn_level_quad_id(lv, 0), "yard");
    assert_null(qn_level_quad_id(lv, 1));
    assert_string_equal(qn_level_quad_id(lv, 2), "gate");
    assert_null(qn_level_quad_id(lv, 4));
    assert_null(qn_level_quad_id(lv, QN_NONE));
    assert_null(qn_level_quad_id(NULL, 0));
    /* Blocking "gate" by name, the way a game would. */
    assert_int_equal(qn_mesh_set_quad_blocked(qn_level_mesh_mut(lv), qn_level_find_quad(lv, "gate"),
                                              true), QN_OK);
    assert_true(qn_mesh_quad_blocked(qn_level_mesh(lv), 2));
    qn_level_destroy(lv);

    /* No ids at all: nothing is found. */
    assert_int_equal(load_str("{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1]}]}", &lv, &err),
                     QN_OK);
    assert_int_equal(qn_level_find_quad(lv, "yard"), QN_NONE);
    assert_null(qn_level_quad_id(lv, 0));
    qn_level_destroy(lv);

    /* Every id of a bundled level comes back to its own quad. */
    char path[512];
    fmt(path, sizeof path, "%s/levels/town.json", getenv("QN_DATA_DIR") ? getenv("QN_DATA_DIR") : "data");
    assert_int_equal(qn_level_load_file(path, NULL, &lv, &err), QN_OK);
    uint32_t named = 0;
    for (uint32_t q = 0; q < qn_mesh_quad_count(qn_level_mesh(lv)); q++) {
        const char *id = qn_level_quad_id(lv, q);
        if (!id) continue;
        named++;
        assert_int_equal(qn_level_find_quad(lv, id), q);
    }
    assert_int_equal(named, qn_mesh_quad_count(qn_level_mesh(lv)));
    assert_int_equal(qn_level_find_quad(lv, "north-road-3"), 27);
    qn_level_destroy(lv);
}

/* A repeated id, an empty one and one too long are errors naming the quad. */
static void test_quad_id_errors(void **state) {
    (void)state;
    qn_level *lv;
    qn_error err;
    const char *dup = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1], \"id\": \"x\"},"
                      " {\"rect\": [1,0,2,1], \"id\": \"y\"}, {\"rect\": [2,0,3,1], \"id\": \"x\"},"
                      " {\"rect\": [3,0,4,1], \"id\": \"y\"}]}";
    assert_int_equal(load_str(dup, &lv, &err), QN_E_DUPLICATE_NAME);
    assert_null(lv);
    assert_string_equal(err.path, "quads[2].id");
    assert_int_equal(err.index, 2);
    assert_string_equal(err.message, "quads[2].id: \"x\" is already the id of quads[0]");

    assert_int_equal(load_str("{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1], \"id\": \"\"}]}",
                              &lv, &err), QN_E_JSON_TYPE);
    assert_string_equal(err.path, "quads[0].id");
    char json[256], id[QN_MAX_NAME + 2];
    memset(id, 'a', sizeof id - 1);
    id[sizeof id - 1] = '\0';
    fmt(json, sizeof json, "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1], \"id\": \"%s\"}]}", id);
    assert_int_equal(load_str(json, &lv, &err), QN_E_LIMIT);
    assert_string_equal(err.path, "quads[0].id");
    id[QN_MAX_NAME] = '\0'; /* exactly the limit */
    fmt(json, sizeof json, "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1], \"id\": \"%s\"}]}", id);
    assert_int_equal(load_str(json, &lv, &err), QN_OK);
    assert_int_equal(qn_level_find_quad(lv, id), 0);
    qn_level_destroy(lv);
}

static void test_load_links(void **state) {
    (void)state;
    char path[512];
    data_path(path, sizeof path, "good", "links.json");
    qn_level *lv;
    assert_int_equal(qn_level_load_file(path, NULL, &lv, NULL), QN_OK);
    const qn_mesh *m = qn_level_mesh(lv);
    assert_int_equal(qn_mesh_quad_count(m), 3);
    /* Only the listed pair is connected: quads 1 and 2 touch, but a thin wall
    ** separates them. */
    assert_int_equal(qn_mesh_portal_count(m), 1);
    qn_portal p;
    assert_int_equal(qn_mesh_portal(m, 0, &p), QN_OK);
    assert_int_equal(p.a, 0);
    assert_int_equal(p.b, 1);
    assert_int_equal(qn_mesh_island_count(m), 2);
    assert_null(qn_level_grid(lv));
    assert_int_equal(qn_level_spawn_count(lv), 0);
    qn_level_destroy(lv);
}

/* Without "links" the adjacency is computed: the same three quads chain. */
static void test_computed_links(void **state) {
    (void)state;
    qn_level *lv;
    const char *json = "{\"format\": 1, \"quads\": [{\"rect\": [0, 0, 1, 1]},"
                       "{\"rect\": [1, 0, 2, 1]}, {\"rect\": [2, 0, 3, 1]}]}";
    assert_int_equal(load_str(json, &lv, NULL), QN_OK);
    assert_int_equal(qn_mesh_portal_count(qn_level_mesh(lv)), 2);
    assert_int_equal(qn_mesh_island_count(qn_level_mesh(lv)), 1);
    assert_string_equal(qn_level_name(lv), "");
    assert_int_equal(qn_level_goal_count(lv), 0);
    qn_level_destroy(lv);
}

/* An exact-size buffer with no NUL after it, and one with garbage after len. */
static void test_load_unterminated(void **state) {
    (void)state;
    char path[512];
    data_path(path, sizeof path, "good", "mixed.json");
    size_t len;
    char *buf = slurp(path, &len, true);
    qn_level *lv;
    assert_int_equal(qn_level_load_mem(buf, len, NULL, &lv, NULL), QN_OK);
    assert_int_equal(qn_level_goal_count(lv), 2);
    qn_level_destroy(lv);
    free(buf);

    const char *padded = "{\"format\": 1, \"quads\": [{\"rect\": [0, 0, 1, 1]}]}garbage{";
    size_t json_len = (size_t)(strstr(padded, "garbage") - padded);
    assert_int_equal(qn_level_load_mem(padded, json_len, NULL, &lv, NULL), QN_OK);
    assert_int_equal(qn_mesh_quad_count(qn_level_mesh(lv)), 1);
    qn_level_destroy(lv);
    qn_error err;
    assert_int_equal(qn_level_load_mem(padded, strlen(padded), NULL, &lv, &err), QN_E_JSON_SYNTAX);
    assert_null(lv);
    assert_non_null(strstr(err.message, "unexpected text after the JSON value"));
}

static void test_bom_and_crlf(void **state) {
    (void)state;
    qn_level *lv;
    qn_error err;
    const char *json =
        "\xEF\xBB\xBF{\r\n\"format\": 1,\r\n\"quads\": [{\"rect\": [0, 0, 1, 1]}]\r\n}\r\n";
    assert_int_equal(load_str(json, &lv, &err), QN_OK);
    qn_level_destroy(lv);
    /* Line and column count from after the byte-order mark. */
    const char *bad = "\xEF\xBB\xBF{\r\n\"format\": 1,\r\n\"quads\": [}\r\n";
    assert_int_equal(load_str(bad, &lv, &err), QN_E_JSON_SYNTAX);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 11);
}

/* ---- the bad-input corpus ------------------------------------------------ */

typedef struct expect_row {
    char file[128];
    char code[64];
    char substring[256];
} expect_row;

/* Parses EXPECTED.tsv: file<TAB>QN_E_NAME<TAB>substring; '#' lines skipped. */
static size_t read_expected(const char *dir, expect_row *rows, size_t cap) {
    char path[512], line[600];
    fmt(path, sizeof path, "%s/EXPECTED.tsv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        assert_non_null(t2);
        assert_true(n < cap);
        *t1 = *t2 = '\0';
        fmt(rows[n].file, sizeof rows[n].file, "%s", line);
        fmt(rows[n].code, sizeof rows[n].code, "%s", t1 + 1);
        fmt(rows[n].substring, sizeof rows[n].substring, "%s", t2 + 1);
        n++;
    }
    fclose(f);
    return n;
}

/* Loads one corpus file with a counting allocator; returns failures (0/1). */
static int check_bad_file(const char *dir, const expect_row *row) {
    char path[512];
    fmt(path, sizeof path, "%s/%s", dir, row->file);
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    qn_level *lv = (qn_level *)1;
    qn_error err;
    qn_status st = qn_level_load_file(path, &a, &lv, &err);
    int bad = 0;
    if (strcmp(qn_status_name(st), row->code) != 0 || err.code != st) {
        print_error("%s: got %s, expected %s (%s)\n", row->file, qn_status_name(st), row->code,
                    err.message);
        bad = 1;
    } else if (!strstr(err.message, row->substring)) {
        print_error("%s: message \"%s\" lacks \"%s\"\n", row->file, err.message, row->substring);
        bad = 1;
    } else if (err.path[0] && strncmp(err.message, err.path, strlen(err.path)) != 0) {
        print_error("%s: message \"%s\" does not start with its path %s\n", row->file, err.message,
                    err.path);
        bad = 1;
    }
    if (lv != NULL || fa.live != 0) {
        print_error("%s: level %p, %lld bytes live\n", row->file, (void *)lv, (long long)fa.live);
        bad = 1;
    }
    return bad;
}

static bool listed(const expect_row *rows, size_t n, const char *file) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].file, file) == 0) return true;
    return false;
}

static void test_bad_corpus(void **state) {
    (void)state;
    char dir[512];
    fmt(dir, sizeof dir, "%s/bad", test_data_dir());
    static expect_row rows[256];
    size_t n = read_expected(dir, rows, 256);
    assert_true(n >= 60);
    int failures = 0;
    for (size_t i = 0; i < n; i++)
        failures += check_bad_file(dir, &rows[i]);
    /* Every .json file in the folder must be listed. */
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t seen = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        seen++;
        if (!listed(rows, n, e->d_name)) {
            print_error("%s is not listed in EXPECTED.tsv\n", e->d_name);
            failures++;
        }
    }
    closedir(d);
    assert_int_equal(seen, n); /* and every listed file exists (once) */
    assert_int_equal(failures, 0);
}

/* Every proper prefix of a valid level (up to its closing brace) is cut
** short, wherever the cut falls: in a key, a string escape, a number, a
** literal, between tokens. */
static void test_every_prefix_truncated(void **state) {
    (void)state;
    char path[512];
    data_path(path, sizeof path, "good", "mixed.json");
    size_t len;
    char *buf = slurp(path, &len, true);
    size_t end = len;
    while (end > 0 && buf[end - 1] != '}')
        end--;
    assert_true(end > 100);
    for (size_t n = 0; n < end; n++) {
        qn_level *lv = (qn_level *)1;
        qn_error err;
        qn_status st = qn_level_load_mem(buf, n, NULL, &lv, &err);
        if (st != QN_E_TRUNCATED) print_error("prefix of %zu bytes: %s\n", n, err.message);
        assert_int_equal(st, QN_E_TRUNCATED);
        assert_null(lv);
    }
    free(buf);
}

/* Each byte replaced by a few troublesome ones: any status, never a crash,
** always a message, never a leak. */
static void test_mutations(void **state) {
    (void)state;
    char path[512];
    data_path(path, sizeof path, "good", "mixed.json");
    size_t len;
    char *buf = slurp(path, &len, true);
    static const char subst[] = {'}', '"', '9', '-', '\\', '\0'};
    size_t errors = 0;
    for (size_t i = 0; i < len; i++) {
        char keep = buf[i];
        for (size_t k = 0; k < sizeof subst; k++) {
            buf[i] = subst[k];
            failalloc fa;
            qn_allocator a = failalloc_init(&fa, UINT64_MAX);
            qn_level *lv;
            qn_error err;
            qn_status st = qn_level_load_mem(buf, len, &a, &lv, &err);
            if (st == QN_OK) {
                qn_level_destroy(lv);
            } else {
                errors++;
                assert_null(lv);
                assert_true(err.message[0] != '\0');
            }
            assert_int_equal(fa.live, 0);
        }
        buf[i] = keep;
    }
    assert_true(errors > len); /* most mutations break the level */
    free(buf);
}

/* ---- error details ----------------------------------------------------- */

static void test_error_fields(void **state) {
    (void)state;
    qn_level *lv;
    qn_error err;
    const char *json = "{\"format\": 1, \"vertices\": [[0,0],[1,0],[1,1],[0,1]],\n"
                       " \"quads\": [{\"v\": [0,1,2,3]}, {\"v\": [0,1,40,3]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_INDEX_RANGE);
    assert_null(lv);
    assert_int_equal(err.code, QN_E_INDEX_RANGE);
    assert_string_equal(err.path, "quads[1].v[2]");
    assert_int_equal(err.index, 1);
    assert_string_equal(err.message, "quads[1].v[2]: vertex index 40 out of range (4 vertices)");

    json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1]}],\n\"grid\": {\"width\": 2, "
           "\"height\": 3, \"rows\": [\"..\", \"..\", \".#\"]}}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_MAP_SYNTAX);
    assert_string_equal(err.path, "grid.rows[2]");
    assert_int_equal(err.index, 2);
    assert_non_null(strstr(err.message, "cell 1 is '#'"));
}

static void test_syntax_positions(void **state) {
    (void)state;
    qn_level *lv;
    qn_error err;
    assert_int_equal(load_str("{\n  \"format\": 1,\n  \"quads\": [}\n", &lv, &err),
                     QN_E_JSON_SYNTAX);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 13);
    assert_string_equal(err.path, "");
    assert_int_equal(err.index, QN_NONE);
    /* Cut after a complete value: the error is where the input stops. */
    assert_int_equal(
        load_str("{\"format\": 1,\n\"quads\": [{\"rect\": [0, 0, 1, 1]}  \n", &lv, &err),
        QN_E_TRUNCATED);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 33);
    /* A last byte that is wrong is a syntax error, not a cut. */
    assert_int_equal(load_str("{\"format\": 1]", &lv, &err), QN_E_JSON_SYNTAX);
    assert_int_equal(err.column, 13);
    /* Cut inside a number, a literal, a string with an escape. */
    assert_int_equal(load_str("{\"format\": -", &lv, &err), QN_E_TRUNCATED);
    assert_int_equal(load_str("{\"format\": 1, \"x\": nul", &lv, &err), QN_E_TRUNCATED);
    assert_int_equal(load_str("{\"format\": 1, \"x\": \"a\\\"b", &lv, &err), QN_E_TRUNCATED);
    /* A closed string with a bad escape is not a cut. */
    assert_int_equal(load_str("{\"format\": 1, \"x\": \"a\\qb\"}", &lv, &err), QN_E_JSON_SYNTAX);
    assert_int_equal(qn_level_load_mem("", 0, NULL, &lv, &err), QN_E_TRUNCATED);
    assert_int_equal(qn_level_load_mem(NULL, 0, NULL, &lv, &err), QN_E_TRUNCATED);
    /* A NUL inside the buffer ends nothing: what follows is still read. */
    const char nul[] = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1]}]}\0{}";
    assert_int_equal(qn_level_load_mem(nul, sizeof nul - 1, NULL, &lv, &err), QN_E_JSON_SYNTAX);
}

/* The in-place reader: escapes in keys, names and rows decode as cJSON
** decoded them; text only cJSON reads (a leading zero, a raw control
** character in a string) loads through it, with the same values and the
** same errors; a lone UTF-16 surrogate is a syntax error at its escape. */
static void test_read_in_place(void **state) {
    (void)state;
    qn_level *lv;
    qn_error err;
    /* "r\u0065ct" is "rect"; "\u00e9" is 2 bytes of UTF-8; the pair is 4. */
    const char *json = "{\"form\\u0061t\": 1, \"name\": \"caf\\u00e9 \\ud83d\\ude00\\t\","
                       " \"quads\": [{\"r\\u0065ct\": [0, -0.0, 1e0, 1]}],"
                       " \"grid\": {\"width\": 2, \"height\": 1, \"rows\": [\"\\u002e@\"]}}";
    assert_int_equal(load_str(json, &lv, &err), QN_OK);
    assert_string_equal(qn_level_name(lv), "caf\xc3\xa9 \xf0\x9f\x98\x80\t");
    assert_int_equal(qn_mesh_quad_count(qn_level_mesh(lv)), 1);
    assert_int_equal(qn_grid_costs(qn_level_grid(lv))[1], QN_CELL_WALL);
    qn_level_destroy(lv);
    /* Keys of 15, 16 and more bytes, plain and escaped, are no member read. */
    json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1], \"abcdefghijklmno\": 1,"
           " \"abcdefghijklmnop\": 2, \"rect\\u0000\": 3, \"abcdefghijklmnopqrstuvwxyz\\u0041\": 4}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_JSON_SYNTAX); /* the \u0000 */
    json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1], \"abcdefghijklmno\": 1,"
           " \"abcdefghijklmnop\": 2, \"abcdefghijklmnopqrstuvwxyz\\u0041\": 4}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_OK);
    qn_level_destroy(lv);
    json = "{\"format\": 1, \"quads\": [{\"rect[0, 0, 1, 1]\": [0,0,1,1]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_MISSING_FIELD);
    assert_string_equal(err.path, "quads[0]");
    /* Duplicate keys: the first one counts, as with cJSON. */
    json = "{\"format\": 1, \"format\": 2, \"quads\": [{\"rect\": [0,0,1,1]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_OK);
    qn_level_destroy(lv);
    /* A name over the limit is measured after decoding. */
    json = "{\"format\": 1, \"name\": \"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
           "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
           "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\","
           " \"quads\": [{\"rect\": [0,0,1,1]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_LIMIT);
    assert_string_equal(err.path, "name");
    assert_non_null(strstr(err.message, "66 bytes"));
    /* Lenient text: "01" and a raw tab in a string, read by cJSON and
    ** then in place; errors still name the element. */
    json = "{\"format\": 01, \"name\": \"a\tb\", \"quads\": [{\"rect\": [0,0,1,1]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_OK);
    assert_string_equal(qn_level_name(lv), "a\tb");
    qn_level_destroy(lv);
    json = "{\"format\": 01, \"quads\": [{\"rect\": [0,0,1,1e999]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_BAD_NUMBER);
    assert_string_equal(err.path, "quads[0].rect[3]");
    assert_non_null(strstr(err.message, "infinity"));
    json = "{\"format\": 01, \"quads\": [{\"rect\": [0,0,1,\"x\"]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_JSON_TYPE);
    assert_string_equal(err.message, "quads[0].rect[3]: expected a number, got a string");
    /* Strict text: the same errors. */
    json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,-1e999]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_BAD_NUMBER);
    assert_string_equal(err.path, "quads[0].rect[3]");
    json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_JSON_TYPE);
    assert_string_equal(err.message,
                        "quads[0].rect: expected a rect [x0, y0, x1, y1], got an array of 3");
    json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1]}], \"grid\": {\"width\": 2, "
           "\"height\": 1, \"rows\": [\"...\"]}}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_MISMATCH);
    assert_string_equal(err.message, "grid.rows[0]: row has 3 cells but the width is 2");
    /* A long number (more than cJSON's 63 characters) reads as its value. */
    json = "{\"format\": 1.000000000000000000000000000000000000000000000000000000000000000000001,"
           " \"quads\": [{\"rect\": [0,0,1,1]}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_OK);
    qn_level_destroy(lv);
    /* Lone surrogates: high without its low half, low alone, high + non-low. */
    const char *bad[] = {"{\"format\": 1, \"name\": \"x\\ud800\", \"quads\": []}",
                         "{\"format\": 1, \"name\": \"\\udc00\", \"quads\": []}",
                         "{\"format\": 1, \"name\": \"\\ud800\\u0041\", \"quads\": []}"};
    uint32_t col[] = {25, 24, 24};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(load_str(bad[i], &lv, &err), QN_E_JSON_SYNTAX);
        assert_int_equal(err.line, 1);
        assert_int_equal(err.column, col[i]);
        assert_non_null(strstr(err.message, "surrogate"));
    }
}

/* Mesh errors get the JSON path of the quad (and its id) or link. */
static void test_mesh_error_paths(void **state) {
    (void)state;
    qn_level *lv;
    qn_error err;
    const char *json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,2,2]}, {\"rect\": [5,5,6,6]},"
                       "{\"rect\": [1,1,3,3], \"id\": \"market\"}]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_OVERLAP);
    assert_string_equal(err.path, "quads[2]");
    assert_int_equal(err.index, 2);
    const char *want = "quads[2]: (id \"market\") ";
    assert_int_equal(strncmp(err.message, want, strlen(want)), 0);
    json = "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1]}, {\"rect\": [1,0,2,1]},"
           "{\"rect\": [5,0,6,1]}], \"links\": [[0, 1], [1, 2]]}";
    assert_int_equal(load_str(json, &lv, &err), QN_E_LINK_NO_EDGE);
    assert_string_equal(err.path, "links[1]");
    assert_int_equal(err.index, 1);
}

/* ---- limits -------------------------------------------------------------- */

/* A level with `goals` named goals, built in memory. */
static char *goals_level(uint32_t goals, size_t *len) {
    size_t cap = 128 + (size_t)goals * 48;
    char *s = malloc(cap);
    assert_non_null(s);
    size_t n = (size_t)snprintf(s, cap,
                                "{\"format\": 1, \"quads\": [{\"rect\": [0,0,1,1]}], \"goals\": [");
    for (uint32_t i = 0; i < goals; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s{\"name\": \"g%u\", \"at\": [0.5, 0.5]}",
                              i ? "," : "", i);
    n += (size_t)snprintf(s + n, cap - n, "]}");
    assert_true(n < cap);
    *len = n;
    return s;
}

static void test_goal_limit(void **state) {
    (void)state;
    size_t len;
    char *s = goals_level(QN_MAX_GOALS, &len);
    qn_level *lv;
    qn_error err;
    assert_int_equal(qn_level_load_mem(s, len, NULL, &lv, &err), QN_OK);
    assert_int_equal(qn_level_goal_count(lv), QN_MAX_GOALS);
    assert_int_equal(qn_level_find_goal(lv, "g4095"), 4095);
    qn_level_destroy(lv);
    free(s);

    s = goals_level(QN_MAX_GOALS + 1, &len);
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    assert_int_equal(qn_level_load_mem(s, len, &a, &lv, &err), QN_E_LIMIT);
    assert_null(lv);
    assert_string_equal(err.path, "goals");
    assert_non_null(strstr(err.message, "more than 4096 goals"));
    assert_int_equal(fa.live, 0);
    free(s);
}

/* ---- out of memory --------------------------------------------------------- */

static void oom_loop(const char *json, size_t len, const char *file) {
    uint64_t n = 0;
    for (;; n++) {
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, n);
        qn_level *lv = (qn_level *)1;
        qn_error err;
        qn_status st = file ? qn_level_load_file(file, &a, &lv, &err)
                            : qn_level_load_mem(json, len, &a, &lv, &err);
        if (st == QN_OK) {
            assert_int_equal(fa.failures, 0);
            assert_non_null(qn_level_grid(lv));
            qn_level_destroy(lv);
            assert_int_equal(fa.live, 0);
            break;
        }
        if (st != QN_E_NOMEM) print_error("fail at %llu: %s\n", (unsigned long long)n, err.message);
        assert_int_equal(st, QN_E_NOMEM);
        assert_null(lv);
        assert_int_equal(fa.live, 0);
        assert_true(n < 10000);
    }
    assert_true(n >= 5); /* the loop did exercise several allocations */
}

static void test_oom(void **state) {
    (void)state;
    char path[512];
    data_path(path, sizeof path, "good", "mixed.json");
    size_t len;
    char *buf = slurp(path, &len, true);
    oom_loop(buf, len, NULL);
    oom_loop(NULL, 0, path);
    free(buf);
}

/* ---- arguments ------------------------------------------------------------ */

static void test_null_args(void **state) {
    (void)state;
    qn_level *lv = (qn_level *)1;
    qn_error err;
    assert_int_equal(qn_level_load_mem(NULL, 4, NULL, &lv, &err), QN_E_INVALID_ARG);
    assert_null(lv);
    assert_int_equal(qn_level_load_mem("{}", 2, NULL, NULL, &err), QN_E_INVALID_ARG);
    assert_int_equal(qn_level_load_file(NULL, NULL, &lv, &err), QN_E_INVALID_ARG);
    assert_int_equal(qn_level_load_file("/nonexistent/qn/level.json", NULL, &lv, &err), QN_E_IO);
    assert_null(lv);
    qn_level_destroy(NULL);
    assert_null(qn_level_mesh(NULL));
    assert_null(qn_level_grid(NULL));
    assert_string_equal(qn_level_name(NULL), "");
    assert_int_equal(qn_level_goal_count(NULL), 0);
    assert_int_equal(qn_level_spawn_count(NULL), 0);
    assert_int_equal(qn_level_find_goal(NULL, "x"), QN_NONE);
    const char *name = "x";
    qn_vec2 at = {3, 3};
    assert_int_equal(qn_level_goal(NULL, 0, &name, &at), QN_E_INVALID_ARG);
    assert_null(name);
    assert_float_equal(at.x, 0.0f, 0);
    assert_int_equal(qn_level_spawn(NULL, 0, NULL, NULL), QN_E_INVALID_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_mixed_file),
        cmocka_unit_test(test_quad_ids),
        cmocka_unit_test(test_quad_id_errors),
        cmocka_unit_test(test_load_links),
        cmocka_unit_test(test_computed_links),
        cmocka_unit_test(test_load_unterminated),
        cmocka_unit_test(test_bom_and_crlf),
        cmocka_unit_test(test_bad_corpus),
        cmocka_unit_test(test_error_fields),
        cmocka_unit_test(test_syntax_positions),
        cmocka_unit_test(test_read_in_place),
        cmocka_unit_test(test_mesh_error_paths),
        cmocka_unit_test(test_goal_limit),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_null_args),
        cmocka_unit_test(test_every_prefix_truncated),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
