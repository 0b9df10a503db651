/*
** cmd_import.c: `quadnav import-map FILE.map -o LEVEL.json [--json]`.
** Loads a MovingAI map, cuts its passable cells into rectangles
** (qn_mesh_from_grid) and writes a level of format 1 holding those
** rectangles as quads and the map itself as the level's grid, so quad mode
** and grid mode run on the same level. No links are written: the loader
** computes the adjacency, T-junctions included.
*/
#define _POSIX_C_SOURCE 200809L
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
    "  height, cells, quads, ratio, portals, decompose_ms (and ms, the same),\n"
    "  output).\n"
    "  -o LEVEL.json   the level to write (required; --output=LEVEL.json too).\n"
    "                  Written whole to a temporary file beside it, then renamed\n"
    "                  over it: a failed write leaves any old file untouched.\n"
    "                  Refused when it is the map itself. '-' writes the level\n"
    "                  on stdout (the summary then goes to stderr).\n";

typedef struct import_args {
    const char *map, *out;
    int json;
} import_args;

enum { I_OUTPUT, I_JSON };
static const qn_cli_option import_options[] = {
    [I_OUTPUT] = {"output", 'o', true},
    [I_JSON] = {"json", 0, false},
};
static const qn_cli_spec import_spec =
    QN_CLI_SPEC("import-map", import_usage, import_options, 1, 1, "FILE.map");

/* Parses argv; 0 to go on, -1 after --help, 2 on a usage error (reported). */
static int parse_args(int argc, char **argv, import_args *a) {
    memset(a, 0, sizeof *a);
    qn_cli_args o;
    int rc = qn_cli_parse(&import_spec, argc, argv, &o);
    if (rc) return rc;
    a->map = o.pos[0];
    a->out = o.value[I_OUTPUT];
    a->json = o.value[I_JSON] != NULL;
    if (!a->out) return qn_cli_error("import-map: no output given: -o LEVEL.json (try --help)"), 2;
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

/* The level text in memory (so that its size is known before anything is
** written); NULL after reporting. */
static char *level_text(const char *path, const char *name, const qn_grid *g, const qn_mesh *m,
                        size_t *size) {
    char *text = NULL;
    FILE *f = open_memstream(&text, size);
    if (!f) return qn_cli_error("import-map: %s: out of memory", path), NULL;
    int bad = qn_tool_write_grid_level(f, name, g, m);
    bad |= fclose(f) != 0;
    if (bad) {
        free(text);
        return qn_cli_error("import-map: %s: out of memory", path), NULL;
    }
    if (*size > QN_MAX_FILE_BYTES) {
        free(text);
        return qn_cli_error("import-map: %s: the level would be larger than the %u bytes a "
                            "level may have",
                            path, QN_MAX_FILE_BYTES),
               NULL;
    }
    return text;
}

/* Writes the level to path (see cliio.c: a complete file or none); 0, or
** 1 (also when path is the map itself) after reporting. */
static int write_level_file(const char *path, const qn_cli_input *map, const char *name,
                            const qn_grid *g, const qn_mesh *m) {
    size_t size = 0;
    qn_cli_output out;
    int rc = qn_cli_output_open(&out, path, &map, 1);
    if (rc) return rc;
    char *text = level_text(path, name, g, m, &size);
    if (!text) return qn_cli_output_abort(&out), 1;
    fwrite(text, 1, size, out.f);
    free(text);
    return qn_cli_output_commit(&out);
}

static int print_summary(const import_args *a, const qn_grid *g, const qn_mesh *m, double ms) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    const uint8_t *costs = qn_grid_costs(g);
    uint64_t cells = 0;
    for (size_t i = 0; i < (size_t)w * h; i++) cells += costs[i] != QN_CELL_WALL;
    uint32_t quads = qn_mesh_quad_count(m), portals = qn_mesh_portal_count(m);
    double ratio = (double)cells / (double)quads;
    FILE *f = strcmp(a->out, "-") ? stdout : stderr; /* the level itself may be on stdout */
    if (a->json) {
        cJSON *o = cJSON_CreateObject();
        qn_json_put_str(o, "map", a->map);
        qn_json_put_uint(o, "width", w);
        qn_json_put_uint(o, "height", h);
        qn_json_put_uint(o, "cells", cells);
        qn_json_put_uint(o, "quads", quads);
        qn_json_put_num(o, "ratio", ratio);
        qn_json_put_uint(o, "portals", portals);
        qn_json_put_num(o, "ms", ms);
        qn_json_put_num(o, "decompose_ms", ms);
        qn_json_put_str(o, "output", a->out);
        if (f == stdout) return qn_json_emit(o);
        char *text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        if (text) fprintf(f, "%s\n", text);
        free(text);
        return 0;
    }
    fprintf(f, "map      %s (%ux%u)\nlevel    %s\ncells    %llu passable\n", a->map, w, h, a->out,
            (unsigned long long)cells);
    fprintf(f, "quads    %u (%.1f cells per quad)\nportals  %u\ntime     %.2f ms\n", quads, ratio,
            portals, ms);
    return 0;
}

static int report(const char *path, qn_status st, const qn_error *e) {
    /* Messages about the file may start with its path: not twice. */
    const char *msg = e->message;
    size_t n = strlen(path);
    if (!strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2)) msg += n + 2;
    if (e->line)
        return qn_cli_error("import-map: %s:%u:%u: %s: %s", path, e->line, e->column,
                            qn_status_name(st), msg);
    return qn_cli_error("import-map: %s: %s: %s", path, qn_status_name(st), msg);
}

/* Reads the map once and decomposes it; 0, or 1 after reporting. */
static int load_and_cut(qn_cli_input *in, const char *path, qn_grid **g, qn_mesh **m, double *ms) {
    qn_error e;
    if (qn_cli_read(path, in)) return 1;
    if (qn_level_sniff(in->data, in->len) != QN_LEVEL_MAP)
        return qn_cli_error("import-map: %s: QN_E_MAP_SYNTAX: not a MovingAI map (it does not "
                            "start with \"type\", \"height\" or \"width\")",
                            path);
    size_t len = in->len;
    const char *text = qn_cli_skip_bom(in->data, &len);
    qn_status st = qn_map_load_mem(text, len, NULL, g, &e);
    free(in->data);
    in->data = NULL;
    if (st != QN_OK) return report(path, st, &e);
    qn_cli_progress_state pg = {0};
    qn_cli_progress(&pg, "import-map: cutting the map into rectangles", 0, 1);
    double t0 = qn_tool_now();
    st = qn_mesh_from_grid(*g, NULL, m, &e);
    *ms = (qn_tool_now() - t0) * 1e3;
    qn_cli_progress_end(&pg);
    if (st != QN_OK) return report(path, st, &e);
    return 0;
}

int qn_tool_import_map(int argc, char **argv) {
    import_args a;
    qn_cli_input in = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    qn_grid *g = NULL;
    qn_mesh *m = NULL;
    double ms = 0.0;
    char name[QN_MAX_NAME + 1];
    level_name(a.map, name);
    rc = load_and_cut(&in, a.map, &g, &m, &ms);
    if (!rc) rc = write_level_file(a.out, &in, name, g, m);
    if (!rc) rc = print_summary(&a, g, m, ms);
    qn_cli_input_free(&in);
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
    return rc;
}
