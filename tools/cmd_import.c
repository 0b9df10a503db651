/*
** cmd_import.c: `quadnav import-map FILE.map -o LEVEL.json [--json]`.
** Loads a MovingAI map, cuts its passable cells into rectangles
** (qn_mesh_from_grid) and writes a level of format 1 holding those
** rectangles as quads and the map itself as the level's grid, so quad mode
** and grid mode run on the same level. No links are written: the loader
** computes the adjacency, T-junctions included.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* Writes the level JSON for grid g and its decomposition m (from
** qn_mesh_from_grid) to f. Returns 0, or non-zero when writing failed.
** Declared here rather than in tool.h because only this file and its test
** use it. */
int qn_tool_write_grid_level(FILE *f, const char *name, const qn_grid *g, const qn_mesh *m);

static const char import_usage[] =
    "usage: quadnav import-map FILE.map -o LEVEL.json [--json]\n"
    "  Cuts the map's passable cells into rectangles of one cost each and\n"
    "  writes a level (format 1, see data/README.md): the rectangles as quads\n"
    "  (adjacency is computed when the level loads) and the map as the\n"
    "  level's grid, so quad mode and grid mode run on the same level.\n"
    "  Cell (x, y) of the map is the square [x, x+1) x [y, y+1).\n"
    "  Prints passable cells, quads, cells per quad, portals and the time the\n"
    "  decomposition took (with --json, one JSON object with keys map, width,\n"
    "  height, cells, quads, ratio, portals, ms).\n"
    "  -o LEVEL.json   the level to write (required)\n";

typedef struct import_args {
    const char *map, *out;
    int json;
} import_args;

/* Parses argv; 0 to go on, 1 after --help, 2 on a usage error (reported). */
static int parse_args(int argc, char **argv, import_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(import_usage, stdout);
            return 1;
        } else if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "-o") || !strcmp(s, "--output")) {
            if (i + 1 >= argc || a->out) {
                qn_cli_error("import-map: %s needs one file name (try --help)", s);
                return 2;
            }
            a->out = argv[++i];
        } else if ((s[0] == '-' && s[1]) || a->map) {
            qn_cli_error("import-map: unexpected argument '%s' (try --help)", s);
            return 2;
        } else {
            a->map = s;
        }
    }
    if (!a->map || !a->out) {
        qn_cli_error("import-map: %s (try --help)",
                     !a->map ? "no map file given" : "no output given: -o LEVEL.json");
        return 2;
    }
    return 0;
}

/* The level's name: the map file's base name without ".map", cut to
** QN_MAX_NAME bytes (not inside a UTF-8 sequence); "map" when empty. */
static void level_name(const char *path, char out[QN_MAX_NAME + 1]) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 4 && !strcmp(base + n - 4, ".map")) n -= 4;
    if (n > QN_MAX_NAME) {
        n = QN_MAX_NAME;
        while (n > 0 && ((unsigned char)base[n] & 0xC0) == 0x80) n--;
    }
    memcpy(out, base, n);
    out[n] = '\0';
    if (n == 0) strcpy(out, "map");
}

/* ---- the level writer -------------------------------------------------- */

/* A quad of the decomposition in cell units: corners 0 and 2 mapped back
** through the grid's origin and cell size (exact for the values a grid
** holds; rounding absorbs the float step). */
static void quad_cells(const qn_grid *g, const qn_mesh *m, uint32_t q, long r[4]) {
    qn_vec2 c[4], o = qn_grid_origin(g);
    double cs = (double)qn_grid_cell_size(g);
    qn_mesh_quad_corners(m, q, c);
    r[0] = lround(((double)c[0].x - (double)o.x) / cs);
    r[1] = lround(((double)c[0].y - (double)o.y) / cs);
    r[2] = lround(((double)c[2].x - (double)o.x) / cs);
    r[3] = lround(((double)c[2].y - (double)o.y) / cs);
}

static void write_quads(FILE *f, const qn_mesh *m) {
    uint32_t n = qn_mesh_quad_count(m);
    fputs("  \"quads\": [\n", f);
    for (uint32_t q = 0; q < n; q++) {
        qn_vec2 c[4];
        qn_mesh_quad_corners(m, q, c);
        fputs("    {\"rect\": [", f);
        qn_json_num(f, (double)c[0].x);
        fputs(", ", f);
        qn_json_num(f, (double)c[0].y);
        fputs(", ", f);
        qn_json_num(f, (double)c[2].x);
        fputs(", ", f);
        qn_json_num(f, (double)c[2].y);
        fputc(']', f);
        float cost = qn_mesh_quad_cost(m, q);
        if (cost != 1.0f) {
            fputs(", \"cost\": ", f);
            qn_json_num(f, (double)cost);
        }
        fputs(q + 1 < n ? "},\n" : "}\n", f);
    }
    fputs("  ],\n", f);
}

static void write_rows(FILE *f, const qn_grid *g) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    const uint8_t *costs = qn_grid_costs(g);
    fputs("    \"rows\": [\n", f);
    for (uint32_t y = 0; y < h; y++) {
        fputs("      \"", f);
        for (uint32_t x = 0; x < w; x++)
            fputc(costs[(size_t)y * w + x] == QN_CELL_WALL ? '@' : '.', f);
        fputs(y + 1 < h ? "\",\n" : "\"\n", f);
    }
    fputs("    ]", f);
}

/* Cells of cost 2..254: the decomposition's quads of such a cost are
** already rectangles of one cost, so they are the coalesced entries. */
static void write_costs(FILE *f, const qn_grid *g, const qn_mesh *m) {
    uint32_t n = qn_mesh_quad_count(m);
    int first = 1;
    for (uint32_t q = 0; q < n; q++) {
        float cost = qn_mesh_quad_cost(m, q);
        if (cost == 1.0f) continue;
        long r[4];
        quad_cells(g, m, q, r);
        fprintf(f, "%s      {\"rect\": [%ld, %ld, %ld, %ld], \"cost\": %.0f}",
                first ? ",\n    \"costs\": [\n" : ",\n", r[0], r[1], r[2], r[3], (double)cost);
        first = 0;
    }
    if (!first) fputs("\n    ]", f);
}

static void write_grid(FILE *f, const qn_grid *g, const qn_mesh *m) {
    qn_vec2 o = qn_grid_origin(g);
    float cs = qn_grid_cell_size(g);
    fprintf(f, "  \"grid\": {\n    \"width\": %u, \"height\": %u", qn_grid_width(g),
            qn_grid_height(g));
    if (cs != 1.0f) {
        fputs(", \"cell_size\": ", f);
        qn_json_num(f, (double)cs);
    }
    if (o.x != 0.0f || o.y != 0.0f) {
        fputs(", \"origin\": [", f);
        qn_json_num(f, (double)o.x);
        fputs(", ", f);
        qn_json_num(f, (double)o.y);
        fputc(']', f);
    }
    fputs(",\n", f);
    write_rows(f, g);
    write_costs(f, g, m);
    fputs("\n  }\n", f);
}

int qn_tool_write_grid_level(FILE *f, const char *name, const qn_grid *g, const qn_mesh *m) {
    fputs("{\n  \"format\": 1,\n  \"name\": ", f);
    qn_json_str(f, name);
    fputs(",\n", f);
    write_quads(f, m);
    write_grid(f, g, m);
    fputs("}\n", f);
    return ferror(f) != 0;
}

/* ---- the command ------------------------------------------------------- */

/* Writes the level to path; 0, or 1 after reporting (a partial file is
** removed). */
static int write_level_file(const char *path, const char *name, const qn_grid *g,
                            const qn_mesh *m) {
    FILE *f = fopen(path, "wb");
    if (!f) return qn_cli_error("import-map: %s: cannot open for writing", path);
    int bad = qn_tool_write_grid_level(f, name, g, m);
    long size = bad ? -1 : ftell(f);
    bad |= fclose(f) != 0;
    if (!bad && (size < 0 || (unsigned long)size > QN_MAX_FILE_BYTES)) {
        remove(path);
        return qn_cli_error("import-map: %s: the level would be larger than the %u bytes a "
                            "level may have",
                            path, QN_MAX_FILE_BYTES);
    }
    if (bad) {
        remove(path);
        return qn_cli_error("import-map: %s: write error", path);
    }
    return 0;
}

static void print_summary(const import_args *a, const qn_grid *g, const qn_mesh *m,
                          double ms) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    const uint8_t *costs = qn_grid_costs(g);
    uint64_t cells = 0;
    for (size_t i = 0; i < (size_t)w * h; i++) cells += costs[i] != QN_CELL_WALL;
    uint32_t quads = qn_mesh_quad_count(m), portals = qn_mesh_portal_count(m);
    double ratio = (double)cells / (double)quads;
    if (a->json) {
        fputs("{\"map\": ", stdout);
        qn_json_str(stdout, a->map);
        printf(", \"width\": %u, \"height\": %u, \"cells\": %llu, \"quads\": %u, \"ratio\": ", w,
               h, (unsigned long long)cells, quads);
        qn_json_num(stdout, ratio);
        printf(", \"portals\": %u, \"ms\": ", portals);
        qn_json_num(stdout, ms);
        fputs(", \"output\": ", stdout);
        qn_json_str(stdout, a->out);
        fputs("}\n", stdout);
        return;
    }
    printf("map      %s (%ux%u)\nlevel    %s\ncells    %llu passable\n", a->map, w, h, a->out,
           (unsigned long long)cells);
    printf("quads    %u (%.1f cells per quad)\nportals  %u\ntime     %.2f ms\n", quads, ratio,
           portals, ms);
}

/* Loads the map and decomposes it; 0, or 1 after reporting. */
static int load_and_cut(const char *path, qn_grid **g, qn_mesh **m, double *ms) {
    qn_error e;
    if (qn_map_load_file(path, NULL, g, &e) != QN_OK) {
        /* Messages about the file may start with its path: not twice. */
        const char *msg = e.message;
        size_t n = strlen(path);
        if (!strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2)) msg += n + 2;
        return qn_cli_error("import-map: %s: %s: %s", path, qn_status_name(e.code), msg);
    }
    double t0 = qn_tool_now();
    qn_status st = qn_mesh_from_grid(*g, NULL, m, &e);
    *ms = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK)
        return qn_cli_error("import-map: %s: %s: %s", path, qn_status_name(st), e.message);
    return 0;
}

int qn_tool_import_map(int argc, char **argv) {
    import_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc == 1 ? 0 : 2;
    qn_grid *g = NULL;
    qn_mesh *m = NULL;
    double ms = 0.0;
    char name[QN_MAX_NAME + 1];
    level_name(a.map, name);
    rc = load_and_cut(a.map, &g, &m, &ms);
    if (!rc) rc = write_level_file(a.out, name, g, m);
    if (!rc) print_summary(&a, g, m, ms);
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
    return rc;
}
