/* test_movingai.c: MovingAI .map and .map.scen readers, and the scenario
** oracle (every row of the bundled maps must match its optimal length). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "failalloc.h"
#include "internal.h"
#include "tool.h"

static const char *env_dir(const char *name, const char *fallback) {
    const char *d = getenv(name);
    return d && *d ? d : fallback;
}

static void path_in(char *out, size_t cap, const char *env, const char *fallback,
                    const char *rel) {
    assert_true(snprintf(out, cap, "%s/%s", env_dir(env, fallback), rel) < (int)cap);
}

static qn_grid *load_map_text(const char *text, qn_status want) {
    qn_grid *g = (qn_grid *)1;
    qn_error e;
    assert_int_equal(qn_map_load_mem(text, strlen(text), NULL, &g, &e), want);
    if (want != QN_OK) assert_null(g);
    return g;
}

/* ---- the scenario oracle ------------------------------------------------ */

/* Checks every row of one bundled scenario: a field at the goal, stopped at
** the start, must give the optimal length within the file's precision. */
static void check_scenario(const char *name) {
    char map_path[512], scen_path[512];
    char rel[128];
    snprintf(rel, sizeof rel, "maps/%s.map", name);
    path_in(map_path, sizeof map_path, "QN_DATA_DIR", "data", rel);
    snprintf(rel, sizeof rel, "maps/%s.map.scen", name);
    path_in(scen_path, sizeof scen_path, "QN_DATA_DIR", "data", rel);
    qn_grid *g;
    qn_scen *s;
    qn_error e;
    assert_int_equal(qn_map_load_file(map_path, NULL, &g, &e), QN_OK);
    assert_int_equal(qn_scen_load_file(scen_path, NULL, &s, &e), QN_OK);
    uint32_t n = qn_scen_row_count(s), failed = 0;
    assert_true(n >= 100);
    for (uint32_t i = 0; i < n; i++) {
        const qn_scen_row *r = qn_scen_row_at(s, i);
        assert_int_equal(r->map_width, qn_grid_width(g));
        assert_int_equal(r->map_height, qn_grid_height(g));
        uint32_t goal = r->goal_y * r->map_width + r->goal_x;
        qn_grid_field_opts o = {QN_CONNECT_8, true, r->start_y * r->map_width + r->start_x, true};
        qn_grid_field *f;
        assert_int_equal(qn_grid_field_create(g, &goal, 1, &o, NULL, &f, &e), QN_OK);
        double v = qn_grid_field_cost(f, r->start_x, r->start_y);
        if (!(fabs(v - r->optimal) <= qn_scen_tolerance(r))) {
            if (failed++ < 5)
                print_error("%s row %u: expected %.8g, got %.8g\n", name, i + 1, r->optimal, v);
        }
        qn_grid_field_destroy(f);
    }
    assert_int_equal(failed, 0);
    assert_null(qn_scen_row_at(s, n));
    qn_scen_destroy(s);
    qn_grid_destroy(g);
}

static void test_oracle_arena(void **state) {
    (void)state;
    check_scenario("arena");
}
static void test_oracle_lak303d(void **state) {
    (void)state;
    check_scenario("lak303d");
}
static void test_oracle_berlin(void **state) {
    (void)state;
    check_scenario("Berlin_0_256");
}

/* ---- map parsing ------------------------------------------------------------ */

static void test_map_line_endings(void **state) {
    (void)state;
    static const char *const variants[] = {
        "type octile\nheight 2\nwidth 3\nmap\n.@.\nT..\n",
        "type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.@.\r\nT..\r\n",
        "type octile\nheight 2\nwidth 3\nmap\n.@.\nT..",
        "type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.@.\r\nT..",
        "type octile\nwidth 3\nheight 2\nmap\n.@.\nT..\n\n\n",
    };
    static const uint8_t want[6] = {1, 255, 1, 255, 1, 1};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        qn_grid *g = load_map_text(variants[i], QN_OK);
        assert_int_equal(qn_grid_width(g), 3);
        assert_int_equal(qn_grid_height(g), 2);
        assert_memory_equal(qn_grid_costs(g), want, 6);
        assert_true(qn_grid_cell_size(g) == 1.0f);
        qn_grid_destroy(g);
    }
}

static void test_map_terrain(void **state) {
    (void)state;
    qn_grid *g = load_map_text("type octile\nheight 1\nwidth 7\nmap\n.GS@OTW\n", QN_OK);
    static const uint8_t want[7] = {1, 1, 1, 255, 255, 255, 255};
    assert_memory_equal(qn_grid_costs(g), want, 7);
    qn_grid_destroy(g);
    qn_error e;
    qn_grid *bad;
    const char *text = "type octile\nheight 1\nwidth 3\nmap\n.g.\n";
    assert_int_equal(qn_map_load_mem(text, strlen(text), NULL, &bad, &e), QN_E_MAP_SYNTAX);
    assert_int_equal(e.line, 5);
    assert_int_equal(e.column, 2);
    assert_non_null(strstr(e.message, "'g'"));
}

/* The bundled Berlin map uses CRLF and has no final newline. */
static void test_map_bundled_crlf(void **state) {
    (void)state;
    char path[512];
    path_in(path, sizeof path, "QN_DATA_DIR", "data", "maps/Berlin_0_256.map");
    qn_grid *g;
    qn_error e;
    assert_int_equal(qn_map_load_file(path, NULL, &g, &e), QN_OK);
    assert_int_equal(qn_grid_width(g), 256);
    assert_int_equal(qn_grid_height(g), 256);
    const uint8_t *c = qn_grid_costs(g);
    size_t walls = 0;
    for (size_t i = 0; i < 256u * 256u; i++) {
        assert_true(c[i] == 1 || c[i] == 255);
        walls += c[i] == 255;
    }
    assert_true(walls > 0 && walls < 256u * 256u);
    qn_grid_destroy(g);
}

static void test_map_absurd_size_allocates_nothing(void **state) {
    (void)state;
    const char *text = "type octile\nheight 16384\nwidth 16384\nmap\n";
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    qn_grid *g;
    qn_error e;
    assert_int_equal(qn_map_load_mem(text, strlen(text), &a, &g, &e), QN_E_LIMIT);
    assert_int_equal(fa.calls, 0);
    assert_null(g);
}

static void test_map_missing_file(void **state) {
    (void)state;
    qn_grid *g = (qn_grid *)1;
    qn_error e;
    assert_int_equal(qn_map_load_file("/nonexistent/qn/x.map", NULL, &g, &e), QN_E_IO);
    assert_null(g);
    assert_non_null(strstr(e.message, "/nonexistent/qn/x.map"));
    assert_int_equal(qn_map_load_mem(NULL, 5, NULL, &g, &e), QN_E_INVALID_ARG);
}

/* ---- scenario parsing --------------------------------------------------------- */

static void test_scen_rows(void **state) {
    (void)state;
    const char *text = "version 1\n"
                       "0\tmaps/dao/arena.map\t49\t49\t1\t11\t1\t12\t1\n"
                       "3\tmaps/dao/arena.map\t49\t49\t1\t13\t4\t12\t3.41421\n"
                       "7 Berlin_0_256.map 256 256 10 20 30 40 28.28427125\r\n"
                       "\n\n";
    qn_scen *s;
    qn_error e;
    assert_int_equal(qn_scen_load_mem(text, strlen(text), NULL, &s, &e), QN_OK);
    assert_int_equal(qn_scen_row_count(s), 3);
    const qn_scen_row *r = qn_scen_row_at(s, 1);
    assert_int_equal(r->bucket, 3);
    assert_int_equal(r->map_width, 49);
    assert_int_equal(r->start_x, 1);
    assert_int_equal(r->start_y, 13);
    assert_int_equal(r->goal_x, 4);
    assert_int_equal(r->goal_y, 12);
    assert_true(r->optimal == 3.41421);
    assert_int_equal(r->decimals, 5);
    assert_int_equal(qn_scen_row_at(s, 0)->decimals, 0);
    assert_true(qn_scen_row_at(s, 0)->optimal == 1.0);
    assert_int_equal(qn_scen_row_at(s, 2)->decimals, 8);
    assert_true(qn_scen_row_at(s, 2)->optimal == 28.28427125);
    assert_null(qn_scen_row_at(s, 3));
    assert_null(qn_scen_row_at(NULL, 0));
    assert_int_equal(qn_scen_row_count(NULL), 0);
    qn_scen_destroy(s);
    qn_scen_destroy(NULL);
}

static void test_scen_versions(void **state) {
    (void)state;
    static const char *const ok[] = {"version 1\n", "version 1.0\n", "", "\n\n",
                                     "version 1.0\r\n0 m 4 4 0 0 1 1 1.41421"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        qn_scen *s;
        qn_error e;
        assert_int_equal(qn_scen_load_mem(ok[i], strlen(ok[i]), NULL, &s, &e), QN_OK);
        assert_int_equal(qn_scen_row_count(s), i == 4 ? 1 : 0);
        qn_scen_destroy(s);
    }
    qn_scen *s = (qn_scen *)1;
    qn_error e;
    assert_int_equal(qn_scen_load_mem("version 3\n", 10, NULL, &s, &e), QN_E_FORMAT_VERSION);
    assert_null(s);
    assert_int_equal(e.line, 1);
}

static void test_scen_tolerance(void **state) {
    (void)state;
    qn_scen_row r;
    memset(&r, 0, sizeof r);
    r.optimal = 2.0;
    r.decimals = 0;
    assert_true(fabs(qn_scen_tolerance(&r) - 1.01) < 1e-12);
    r.optimal = 3.41421;
    r.decimals = 5;
    assert_true(fabs(qn_scen_tolerance(&r) - 3.41421e-5) < 1e-15); /* relative wins */
    r.optimal = 0.5;
    assert_true(fabs(qn_scen_tolerance(&r) - 1.01e-5) < 1e-15); /* printed digits win */
    r.optimal = 28.28427125;
    r.decimals = 8;
    assert_true(fabs(qn_scen_tolerance(&r) - 1e-5 * 28.28427125) < 1e-15);
    r.optimal = 0.01;
    assert_true(fabs(qn_scen_tolerance(&r) - 1e-6) < 1e-15);
    assert_true(qn_scen_tolerance(NULL) == 0.0);
}

/* ---- the malformed-input corpus ----------------------------------------------- */

typedef struct corpus_entry {
    char file[128];
    char code[40];
    unsigned line, column;
} corpus_entry;

/* Reads expected.txt; returns the number of entries. */
static size_t read_index(const char *dir, corpus_entry *out, size_t cap) {
    char path[600];
    assert_true(snprintf(path, sizeof path, "%s/expected.txt", dir) < (int)sizeof path);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        assert_true(n < cap);
        corpus_entry *c = &out[n++];
        assert_int_equal(sscanf(line, "%127s %39s %u %u", c->file, c->code, &c->line, &c->column),
                         4);
    }
    fclose(f);
    return n;
}

static bool is_scen(const char *name) {
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".scen") == 0;
}

static qn_status load_any(const char *path, const qn_allocator *a, qn_error *e) {
    if (is_scen(path)) {
        qn_scen *s = (qn_scen *)1;
        qn_status st = qn_scen_load_file(path, a, &s, e);
        assert_true(st == QN_OK ? s != NULL : s == NULL);
        qn_scen_destroy(s);
        return st;
    }
    qn_grid *g = (qn_grid *)1;
    qn_status st = qn_map_load_file(path, a, &g, e);
    assert_true(st == QN_OK ? g != NULL : g == NULL);
    qn_grid_destroy(g);
    return st;
}

static void test_corpus(void **state) {
    (void)state;
    char dir[512];
    path_in(dir, sizeof dir, "QN_TEST_DATA_DIR", "tests/data", "maps");
    static corpus_entry entries[256];
    size_t n = read_index(dir, entries, 256);
    assert_true(n >= 30);
    for (size_t i = 0; i < n; i++) {
        char path[768];
        assert_true(snprintf(path, sizeof path, "%s/%s", dir, entries[i].file) < (int)sizeof path);
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, UINT64_MAX);
        qn_error e;
        qn_status st = load_any(path, &a, &e);
        if (strcmp(qn_status_name(st), entries[i].code) != 0)
            fail_msg("%s: expected %s, got %s (%s)", entries[i].file, entries[i].code,
                     qn_status_name(st), e.message);
        assert_int_equal(fa.live, 0);
        if (st == QN_OK) continue;
        assert_int_equal(e.code, st);
        if (e.line != entries[i].line || e.column != entries[i].column)
            fail_msg("%s: expected line %u column %u, got %u %u (%s)", entries[i].file,
                     entries[i].line, entries[i].column, e.line, e.column, e.message);
        assert_non_null(strstr(e.message, entries[i].file)); /* names the file */
    }
    /* Every file in the folder must be listed. */
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !strcmp(de->d_name, "expected.txt")) continue;
        bool listed = false;
        for (size_t i = 0; i < n && !listed; i++) listed = !strcmp(entries[i].file, de->d_name);
        if (!listed) fail_msg("%s is not listed in expected.txt", de->d_name);
    }
    closedir(d);
}

/* ---- quadnav scen ------------------------------------------------------------- */

/* Writes text to a new temporary file; the caller unlinks it. */
static void write_temp(char *path, size_t cap, const char *text) {
    assert_true(snprintf(path, cap, "/tmp/qn_test_XXXXXX") < (int)cap);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

static int run_scen(char *scen, char *map, char *limit) {
    static char name[] = "scen", map_opt[] = "--map", limit_opt[] = "--limit";
    char *argv[8];
    int argc = 0;
    argv[argc++] = name;
    argv[argc++] = scen;
    if (map) argv[argc++] = map_opt, argv[argc++] = map;
    if (limit) argv[argc++] = limit_opt, argv[argc++] = limit;
    argv[argc] = NULL;
    fflush(stdout);
    return qn_tool_scen(argc, argv);
}

/* Exit statuses of the scen command: 0 all passed, 1 a row failed or an
** error (size mismatch, missing file), 2 bad usage. */
static void test_tool_scen(void **state) {
    (void)state;
    /* Around the centre wall, corner to corner takes 4 straight steps. */
    char map[64], good[64], bad[64], other[64];
    char one[] = "1", junk[] = "x", missing[] = "/nonexistent/qn.map";
    write_temp(map, sizeof map, "type octile\nheight 3\nwidth 3\nmap\n...\n.@.\n...\n");
    write_temp(good, sizeof good,
               "version 1\n1\tm\t3\t3\t0\t0\t2\t2\t4\n0\tm\t3\t3\t0\t0\t1\t0\t1\n");
    write_temp(bad, sizeof bad,
               "version 1\n0\tm\t3\t3\t0\t0\t1\t0\t1\n1\tm\t3\t3\t0\t0\t2\t2\t3.5\n");
    write_temp(other, sizeof other, "version 1\n0\tm\t4\t3\t0\t0\t1\t0\t1\n");
    assert_int_equal(run_scen(good, map, NULL), 0);
    assert_int_equal(run_scen(bad, map, NULL), 1);
    assert_int_equal(run_scen(bad, map, one), 0); /* only the first, correct row */
    assert_int_equal(run_scen(other, map, NULL), 1); /* 4x3 rows for a 3x3 map */
    assert_int_equal(run_scen(good, missing, NULL), 1);
    assert_int_equal(run_scen(good, NULL, NULL), 1); /* no .scen name: no default map */
    assert_int_equal(run_scen(good, map, junk), 2);
    char name[] = "scen", help_opt[] = "--help";
    char *help[] = {name, help_opt, NULL};
    assert_int_equal(qn_tool_scen(2, help), 0);
    unlink(map), unlink(good), unlink(bad), unlink(other);
}

/* ---- out of memory ------------------------------------------------------------- */

static void test_map_failing_allocator(void **state) {
    (void)state;
    const char *text = "type octile\nheight 3\nwidth 4\nmap\n....\n.@T.\n....\n";
    bool succeeded = false;
    for (uint64_t k = 0; k < 64 && !succeeded; k++) {
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, k);
        qn_grid *g;
        qn_error e;
        qn_status st = qn_map_load_mem(text, strlen(text), &a, &g, &e);
        if (st == QN_OK) {
            succeeded = true;
            assert_int_equal(qn_grid_cost(g, 2, 1), 255);
            qn_grid_destroy(g);
        } else {
            assert_int_equal(st, QN_E_NOMEM);
            assert_null(g);
        }
        assert_int_equal(fa.live, 0);
    }
    assert_true(succeeded);
}

static void test_scen_failing_allocator(void **state) {
    (void)state;
    /* Enough rows to make the row array grow a few times. */
    static char text[300 * 48];
    int n = snprintf(text, sizeof text, "version 1\n");
    size_t len = n > 0 ? (size_t)n : 0;
    for (int i = 0; i < 300; i++) {
        n = snprintf(text + len, sizeof text - len, "%d\tm.map\t40\t40\t%d\t%d\t1\t2\t%d.5\n",
                     i / 10, i % 40, (i / 40) % 40, i);
        assert_true(n > 0 && (size_t)n < sizeof text - len);
        len += (size_t)n;
    }
    bool succeeded = false;
    for (uint64_t k = 0; k < 64 && !succeeded; k++) {
        failalloc fa;
        qn_allocator a = failalloc_init(&fa, k);
        qn_scen *s;
        qn_error e;
        qn_status st = qn_scen_load_mem(text, len, &a, &s, &e);
        if (st == QN_OK) {
            succeeded = true;
            assert_int_equal(qn_scen_row_count(s), 300);
            assert_true(qn_scen_row_at(s, 299)->optimal == 299.5);
            qn_scen_destroy(s);
        } else {
            assert_int_equal(st, QN_E_NOMEM);
            assert_null(s);
        }
        assert_int_equal(fa.live, 0);
    }
    assert_true(succeeded);
}

static void test_file_failing_allocator(void **state) {
    (void)state;
    char map[512], scen[512];
    path_in(map, sizeof map, "QN_DATA_DIR", "data", "maps/arena.map");
    path_in(scen, sizeof scen, "QN_DATA_DIR", "data", "maps/arena.map.scen");
    for (int which = 0; which < 2; which++) {
        bool succeeded = false;
        for (uint64_t k = 0; k < 64 && !succeeded; k++) {
            failalloc fa;
            qn_allocator a = failalloc_init(&fa, k);
            qn_error e;
            qn_status st = load_any(which ? scen : map, &a, &e);
            succeeded = st == QN_OK;
            if (!succeeded) assert_int_equal(st, QN_E_NOMEM);
            assert_int_equal(fa.live, 0);
        }
        assert_true(succeeded);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_arena),
        cmocka_unit_test(test_oracle_lak303d),
        cmocka_unit_test(test_oracle_berlin),
        cmocka_unit_test(test_map_line_endings),
        cmocka_unit_test(test_map_terrain),
        cmocka_unit_test(test_map_bundled_crlf),
        cmocka_unit_test(test_map_absurd_size_allocates_nothing),
        cmocka_unit_test(test_map_missing_file),
        cmocka_unit_test(test_scen_rows),
        cmocka_unit_test(test_scen_versions),
        cmocka_unit_test(test_scen_tolerance),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_tool_scen),
        cmocka_unit_test(test_map_failing_allocator),
        cmocka_unit_test(test_scen_failing_allocator),
        cmocka_unit_test(test_file_failing_allocator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
