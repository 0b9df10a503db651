/*
** cmd_scen.c: `quadnav scen FILE.map.scen [--map FILE.map] [--limit N] [--json]`.
** For every scenario row, builds an octile integration field at the goal
** (stopping once the start is settled) and checks the start's value against
** the optimal length printed in the file.
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

static const char scen_usage[] =
    "usage: quadnav scen FILE.map.scen [--map FILE.map] [--limit N] [--json]\n"
    "  Checks every scenario row: the octile integration value at the start\n"
    "  cell of a field built at the goal must equal the optimal length within\n"
    "  the file's printed precision. Prints a summary by bucket and, last,\n"
    "  \"N passed, N failed\" (with --json, one JSON object instead).\n"
    "  --map FILE   the map (default: the scenario name without .scen, in the\n"
    "               same folder or in ../../maps/<family>/ beside it)\n"
    "  --limit N    check only the first N rows\n";

typedef struct scen_args {
    const char *scen, *map;
    uint32_t limit;
    int json;
} scen_args;

/* One checked row, kept for the summary. */
typedef struct scen_result {
    uint32_t bucket;
    int passed;
    double error;
} scen_result;

enum { S_MAP, S_LIMIT, S_JSON };
static const qn_cli_option scen_options[] = {
    [S_MAP] = {"map", 0, true},
    [S_LIMIT] = {"limit", 0, true},
    [S_JSON] = {"json", 0, false},
};
static const qn_cli_spec scen_spec =
    QN_CLI_SPEC("scen", scen_usage, scen_options, 1, 1, "FILE.map.scen");

/* Parses argv; returns 0 to go on, 2 on a usage error (the tool's exit
** status for bad usage), -1 after --help. */
static int parse_args(int argc, char **argv, scen_args *a) {
    memset(a, 0, sizeof *a);
    a->limit = UINT32_MAX;
    qn_cli_args o;
    int rc = qn_cli_parse(&scen_spec, argc, argv, &o);
    if (rc) return rc;
    a->scen = o.pos[0];
    a->map = o.value[S_MAP];
    a->json = o.value[S_JSON] != NULL;
    uint64_t v;
    if (o.value[S_LIMIT]) {
        if (!qn_cli_parse_u64(o.value[S_LIMIT], UINT32_MAX, &v))
            return qn_cli_error("scen: --limit %s: not a count", o.value[S_LIMIT]), 2;
        a->limit = (uint32_t)v;
    }
    return 0;
}

static int file_exists(const char *path) { return access(path, R_OK) == 0; }

/* Finds the default map for a scenario: X.map.scen -> X.map in the same
** folder, else <folder>/../../maps/<family>/X.map where <family> is the
** scenario's folder name (the benchmark's scenarios/<family>/ layout), else
** <folder>/../maps/<family>/X.map. */
static int default_map(const char *scen, char *out, size_t cap) {
    size_t n = strlen(scen);
    if (n < 6 || strcmp(scen + n - 5, ".scen") != 0) return 0;
    const char *slash = strrchr(scen, '/');
    size_t dir_len = slash ? (size_t)(slash - scen) : 0;
    const char *base = slash ? slash + 1 : scen;
    int base_len = (int)(n - 5 - (size_t)(base - scen));
    if (snprintf(out, cap, "%.*s", (int)(n - 5), scen) < (int)cap && file_exists(out)) return 1;
    const char *fam = scen;
    for (const char *p = scen; p < scen + dir_len; p++)
        if (*p == '/') fam = p + 1;
    int fam_len = (int)(scen + dir_len - fam);
    const char *dir = dir_len ? scen : ".";
    int dl = dir_len ? (int)dir_len : 1;
    static const char *const ups[] = {"../..", ".."};
    for (int i = 0; i < 2 && fam_len > 0; i++) {
        if (snprintf(out, cap, "%.*s/%s/maps/%.*s/%.*s", dl, dir, ups[i], fam_len, fam, base_len,
                     base) < (int)cap &&
            file_exists(out))
            return 1;
    }
    return 0;
}

/* The integration value at the row's start for a field at its goal; the
** field stops as soon as the start is settled. NAN on failure. */
static double row_length(const qn_grid *g, const qn_scen_row *r, qn_error *err) {
    uint32_t w = qn_grid_width(g);
    uint32_t goal = r->goal_y * w + r->goal_x;
    qn_grid_field_opts o;
    memset(&o, 0, sizeof o);
    o.connectivity = QN_CONNECT_8;
    o.stop_enabled = true;
    o.stop_cell = r->start_y * w + r->start_x;
    o.no_flow = true;
    qn_grid_field *f;
    if (qn_grid_field_create(g, &goal, 1, &o, NULL, &f, err) != QN_OK) return (double)NAN;
    double v = qn_grid_field_cost(f, r->start_x, r->start_y);
    qn_grid_field_destroy(f);
    return v;
}

static int cmp_bucket(const void *a, const void *b) {
    const scen_result *x = a, *y = b;
    return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

/* The per-bucket summary, as text or into a JSON array; `res` is sorted by
** bucket. */
static void print_buckets(const scen_result *res, uint32_t n, cJSON *arr) {
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i, passed = 0;
        double max_err = 0.0;
        for (; j < n && res[j].bucket == res[i].bucket; j++) {
            passed += (uint32_t)res[j].passed;
            if (res[j].error > max_err || res[j].error != res[j].error) max_err = res[j].error;
        }
        if (arr) {
            cJSON *b = cJSON_CreateObject();
            qn_json_put_uint(b, "bucket", res[i].bucket);
            qn_json_put_uint(b, "rows", j - i);
            qn_json_put_uint(b, "passed", passed);
            qn_json_put_num(b, "max_error", max_err);
            qn_json_push(arr, b);
        } else
            printf("bucket %5u  rows %4u  passed %4u  max error %.3g\n", res[i].bucket, j - i,
                   passed, max_err);
        i = j;
    }
}

static int print_summary(const scen_args *a, const char *map, scen_result *res, uint32_t n,
                         uint32_t passed, double seconds) {
    double max_err = 0.0;
    for (uint32_t i = 0; i < n; i++)
        if (res[i].error > max_err) max_err = res[i].error;
    qsort(res, n, sizeof *res, cmp_bucket);
    if (a->json) {
        cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();
        qn_json_put_str(o, "scen", a->scen);
        qn_json_put_str(o, "map", map);
        qn_json_put_uint(o, "rows", n);
        qn_json_put_uint(o, "passed", passed);
        qn_json_put_uint(o, "failed", n - passed);
        qn_json_put_num(o, "seconds", round(seconds * 1e3) / 1e3);
        qn_json_put_num(o, "time_ms", seconds * 1e3);
        qn_json_put_num(o, "max_error", max_err);
        print_buckets(res, n, arr);
        qn_json_put(o, "buckets", arr);
        return qn_json_emit(o);
    }
    printf("scenario  %s\nmap       %s\nrows      %u checked in %.2f s\nmax error %.3g\n", a->scen,
           map, n, seconds, max_err);
    print_buckets(res, n, NULL);
    printf("%u passed, %u failed\n", passed, n - passed);
    return 0;
}

/* Checks rows [0, n) and fills res; returns the number that passed, or
** UINT32_MAX after printing an error. */
static uint32_t check_rows(const qn_grid *g, const qn_scen *s, uint32_t n, scen_result *res) {
    uint32_t passed = 0;
    qn_cli_progress_state pg = {0};
    for (uint32_t i = 0; i < n; i++) {
        const qn_scen_row *r = qn_scen_row_at(s, i);
        if (r->map_width != qn_grid_width(g) || r->map_height != qn_grid_height(g)) {
            qn_cli_error("scen: row %u is for a %ux%u map, the map is %ux%u", i + 1,
                         r->map_width, r->map_height, qn_grid_width(g), qn_grid_height(g));
            return UINT32_MAX;
        }
        qn_error err;
        double v = row_length(g, r, &err);
        if (v != v) {
            qn_cli_error("scen: row %u: %s", i + 1, err.message);
            return UINT32_MAX;
        }
        res[i].bucket = r->bucket;
        res[i].error = fabs(v - r->optimal);
        res[i].passed = res[i].error <= qn_scen_tolerance(r);
        passed += (uint32_t)res[i].passed;
        if (!res[i].passed && i + 1 - passed <= 10) /* the first few failures */
            fprintf(stderr, "scen: row %u fails: start (%u, %u) goal (%u, %u): expected %.8g, "
                            "got %.8g\n",
                    i + 1, r->start_x, r->start_y, r->goal_x, r->goal_y, r->optimal, v);
        qn_cli_progress(&pg, "scen: rows", i + 1, n);
    }
    qn_cli_progress_end(&pg);
    return passed;
}

/* Loads the scenario and its map (or level with a grid), each read once;
** 0 on success, 1 after printing an error. */
static int load_inputs(const scen_args *a, char *map_path, size_t cap, qn_scen **s,
                       qn_terrain *t) {
    qn_error err;
    qn_cli_input in;
    if (qn_cli_read(a->scen, &in)) return 1;
    qn_status st = qn_scen_load_mem(in.data, in.len, NULL, s, &err);
    qn_cli_input_free(&in);
    if (st != QN_OK) {
        if (err.line)
            qn_cli_error("scen: %s:%u:%u: %s: %s", a->scen, err.line, err.column,
                         qn_status_name(st), err.message);
        else
            qn_cli_error("scen: %s: %s: %s", a->scen, qn_status_name(st), err.message);
        return 1;
    }
    if (a->map) {
        snprintf(map_path, cap, "%s", a->map);
    } else if (!default_map(a->scen, map_path, cap)) {
        qn_cli_error("scen: no map found for %s (use --map)", a->scen);
        return 1;
    }
    return qn_terrain_load(map_path, false, true, t) ? 0 : 1;
}

int qn_tool_scen(int argc, char **argv) {
    scen_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    char map_path[4096];
    qn_scen *s = NULL;
    qn_terrain t;
    memset(&t, 0, sizeof t);
    scen_result *res = NULL;
    rc = load_inputs(&a, map_path, sizeof map_path, &s, &t);
    const qn_grid *g = t.grid;
    uint32_t n = qn_scen_row_count(s);
    if (n > a.limit) n = a.limit;
    if (!rc) {
        res = calloc(n ? n : 1, sizeof *res);
        if (!res) qn_cli_error("scen: out of memory");
        rc = !res;
    }
    if (!rc) {
        double t0 = qn_tool_now();
        uint32_t passed = check_rows(g, s, n, res);
        if (passed == UINT32_MAX) {
            rc = 1;
        } else {
            rc = print_summary(&a, map_path, res, n, passed, qn_tool_now() - t0);
            if (!rc) rc = passed != n;
        }
    }
    free(res);
    qn_terrain_free(&t);
    qn_scen_destroy(s);
    return rc;
}
