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

/* Parses argv; returns 0 to go on, 2 on a usage error (the tool's exit
** status for bad usage), -1 after --help. */
static int parse_args(int argc, char **argv, scen_args *a) {
    memset(a, 0, sizeof *a);
    a->limit = UINT32_MAX;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(scen_usage, stdout);
            return -1;
        } else if ((!strcmp(s, "--map") || !strcmp(s, "--limit")) && i + 1 == argc) {
            qn_cli_error("scen: %s needs a value", s);
            return 2;
        } else if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--map") && i + 1 < argc) {
            a->map = argv[++i];
        } else if (!strcmp(s, "--limit") && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (errno || *end || argv[i][0] == '-' || v > UINT32_MAX) {
                qn_cli_error("scen: bad --limit \"%s\"", argv[i]);
                return 2;
            }
            a->limit = (uint32_t)v;
        } else if (s[0] == '-' || a->scen) {
            qn_cli_error("scen: unexpected argument \"%s\" (try --help)", s);
            return 2;
        } else {
            a->scen = s;
        }
    }
    if (!a->scen) {
        qn_cli_error("scen: no scenario file given (try --help)");
        return 2;
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

/* Prints the per-bucket summary; `res` is sorted by bucket. */
static void print_buckets(const scen_result *res, uint32_t n, int json) {
    int first = 1;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i, passed = 0;
        double max_err = 0.0;
        for (; j < n && res[j].bucket == res[i].bucket; j++) {
            passed += (uint32_t)res[j].passed;
            if (res[j].error > max_err || res[j].error != res[j].error) max_err = res[j].error;
        }
        if (json) {
            printf("%s{\"bucket\": %u, \"rows\": %u, \"passed\": %u, \"max_error\": ",
                   first ? "" : ", ", res[i].bucket, j - i, passed);
            qn_json_num(stdout, max_err);
            printf("}");
        } else
            printf("bucket %5u  rows %4u  passed %4u  max error %.3g\n", res[i].bucket, j - i,
                   passed, max_err);
        first = 0;
        i = j;
    }
}

static void print_summary(const scen_args *a, const char *map, scen_result *res, uint32_t n,
                          uint32_t passed, double seconds) {
    double max_err = 0.0;
    for (uint32_t i = 0; i < n; i++)
        if (res[i].error > max_err) max_err = res[i].error;
    qsort(res, n, sizeof *res, cmp_bucket);
    if (a->json) {
        printf("{\"scen\": ");
        qn_json_str(stdout, a->scen);
        printf(", \"map\": ");
        qn_json_str(stdout, map);
        printf(", \"rows\": %u, \"passed\": %u, \"failed\": %u, \"seconds\": %.3f, \"max_error\": ",
               n, passed, n - passed, seconds);
        qn_json_num(stdout, max_err);
        printf(", \"buckets\": [");
        print_buckets(res, n, 1);
        printf("]}\n");
        return;
    }
    printf("scenario  %s\nmap       %s\nrows      %u checked in %.2f s\nmax error %.3g\n", a->scen,
           map, n, seconds, max_err);
    print_buckets(res, n, 0);
    printf("%u passed, %u failed\n", passed, n - passed);
}

/* Checks rows [0, n) and fills res; returns the number that passed, or
** UINT32_MAX after printing an error. */
static uint32_t check_rows(const qn_grid *g, const qn_scen *s, uint32_t n, scen_result *res) {
    uint32_t passed = 0;
    int progress = isatty(STDERR_FILENO);
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
        if (progress && (i % 64 == 0 || i + 1 == n))
            fprintf(stderr, "\rscen: %u/%u rows", i + 1, n);
    }
    if (progress) fprintf(stderr, "\r\033[K");
    return passed;
}

/* Loads the scenario and its map; 0 on success, 1 after printing an error. */
static int load_inputs(const scen_args *a, char *map_path, size_t cap, qn_scen **s, qn_grid **g) {
    qn_error err;
    if (qn_scen_load_file(a->scen, NULL, s, &err) != QN_OK) {
        qn_cli_error("scen: %s", err.message);
        return 1;
    }
    if (a->map) {
        snprintf(map_path, cap, "%s", a->map);
    } else if (!default_map(a->scen, map_path, cap)) {
        qn_cli_error("scen: no map found for %s (use --map)", a->scen);
        return 1;
    }
    if (qn_map_load_file(map_path, NULL, g, &err) != QN_OK) {
        qn_cli_error("scen: %s", err.message);
        return 1;
    }
    return 0;
}

int qn_tool_scen(int argc, char **argv) {
    scen_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    char map_path[4096];
    qn_scen *s = NULL;
    qn_grid *g = NULL;
    scen_result *res = NULL;
    rc = load_inputs(&a, map_path, sizeof map_path, &s, &g);
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
            print_summary(&a, map_path, res, n, passed, qn_tool_now() - t0);
            rc = passed != n;
        }
    }
    free(res);
    qn_grid_destroy(g);
    qn_scen_destroy(s);
    return rc;
}
