/*
** decomp_stats.c: quads per map for the two grid-to-quads decompositions,
** measured in one run: the greedy row-major rectangles (the baseline) and
** the fewest rectangles along chords, then crowded ones cut
** (qn_mesh_from_grid's default: see grid_mesh.c).
**
**   decomp_stats [--json] MAP...    (MovingAI .map files)
**
** Per map and decomposition: quads and portals of the mesh, slivers
** (quads one cell thick with passable cells along both long sides), the
** partition's time in ms (before the crowded cut) and the whole mesh
** build's (each the best of three calls). A markdown table, or one JSON
** object per line with --json. Exit status 1 when a map cannot be read.
*/
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tool.h"

typedef struct decomp_row {
    uint32_t quads, portals, slivers;
    double ms, mesh_ms; /* the decomposition alone; the whole mesh */
} decomp_row;

/* Is any cell of [x0, x1) x [y0, y1) passable (cells outside the grid are not)? */
static bool any_open(const qn_grid *g, int64_t x0, int64_t y0, int64_t x1, int64_t y1) {
    for (int64_t y = y0 < 0 ? 0 : y0; y < y1 && y < (int64_t)qn_grid_height(g); y++)
        for (int64_t x = x0 < 0 ? 0 : x0; x < x1 && x < (int64_t)qn_grid_width(g); x++)
            if (qn_grid_cost(g, (uint32_t)x, (uint32_t)y) != QN_CELL_WALL) return true;
    return false;
}

/* Slivers: quads one cell thick with passable cells along both long sides
** (a thicker quad could have taken them; a corridor one cell wide is no
** sliver). Works on cell coordinates of a map (origin 0, cell size 1). */
static uint32_t slivers(const qn_grid *g, const qn_mesh *m) {
    uint32_t n = 0;
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        qn_vec2 c[4];
        qn_mesh_quad_corners(m, q, c);
        int64_t x0 = (int64_t)c[0].x, y0 = (int64_t)c[0].y, x1 = (int64_t)c[2].x,
                y1 = (int64_t)c[2].y;
        bool flat = y1 - y0 == 1 && any_open(g, x0, y0 - 1, x1, y0) && any_open(g, x0, y1, x1, y1 + 1);
        bool tall = x1 - x0 == 1 && any_open(g, x0 - 1, y0, x0, y1) && any_open(g, x1, y0, x1 + 1, y1);
        n += flat || tall;
    }
    return n;
}

static bool failed(const char *path, qn_status st, const qn_error *e) {
    fprintf(stderr, "%s: %s: %s\n", path, qn_status_name(st), e->message);
    return false;
}

/* Decomposes three times, then builds the mesh three times, with
** decomposition `how` (best times); false on failure. */
static bool measure(const char *path, const qn_grid *g, qn__decomp how, decomp_row *r) {
    r->ms = r->mesh_ms = 1e300;
    qn_error e;
    qn_status st;
    for (int i = 0; i < 3; i++) {
        double t0 = qn_tool_now();
        uint32_t rects;
        st = qn__grid_rect_count(g, how, NULL, &rects, &e);
        double ms = (qn_tool_now() - t0) * 1e3;
        if (st != QN_OK) return failed(path, st, &e);
        if (ms < r->ms) r->ms = ms;
    }
    for (int i = 0; i < 3; i++) {
        qn_mesh *m = NULL;
        double t0 = qn_tool_now();
        st = qn__mesh_from_grid_with(g, how, true, NULL, &m, &e);
        double ms = (qn_tool_now() - t0) * 1e3;
        if (st != QN_OK) return failed(path, st, &e);
        if (ms < r->mesh_ms) r->mesh_ms = ms;
        r->quads = qn_mesh_quad_count(m);
        r->portals = qn_mesh_portal_count(m);
        r->slivers = slivers(g, m);
        qn_mesh_destroy(m);
    }
    return true;
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void print_row(const char *path, size_t cells, const decomp_row *a, const decomp_row *b,
                      bool json) {
    double change = 100.0 * ((double)b->quads - (double)a->quads) / (double)a->quads;
    if (json) {
        printf("{\"map\":");
        qn_json_str(stdout, path);
        const decomp_row *r[2] = {a, b};
        printf(",\"cells\":%zu", cells);
        for (int k = 0; k < 2; k++)
            printf(",\"%s\":{\"quads\":%u,\"portals\":%u,\"slivers\":%u,\"ms\":%.3f,"
                   "\"mesh_ms\":%.3f}",
                   k ? "fewest" : "rows", r[k]->quads, r[k]->portals, r[k]->slivers, r[k]->ms,
                   r[k]->mesh_ms);
        printf(",\"quads_change_pct\":%.2f}\n", change);
        return;
    }
    printf("| %s | %zu | %u | %u | %+.1f %% | %.1f | %u | %u | %u | %u | %.2f | %.2f | %.1f | "
           "%.1f |\n",
           base_name(path), cells, a->quads, b->quads, change, (double)cells / b->quads,
           a->portals, b->portals, a->slivers, b->slivers, a->ms, b->ms, a->mesh_ms, b->mesh_ms);
}

int main(int argc, char **argv) {
    bool json = argc > 1 && !strcmp(argv[1], "--json");
    int first = json ? 2 : 1, rc = 0;
    if (first >= argc) {
        fputs("usage: decomp_stats [--json] MAP...\n", stderr);
        return 2;
    }
    if (!json)
        printf("| map | cells | quads rows | quads fewest | change | cells/quad | portals rows | "
               "portals fewest | slivers rows | slivers fewest | ms rows | ms fewest | "
               "mesh ms rows | mesh ms fewest |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = first; i < argc; i++) {
        qn_grid *g = NULL;
        qn_error e;
        qn_status st = qn_map_load_file(argv[i], NULL, &g, &e);
        decomp_row a, b;
        if (st != QN_OK) fprintf(stderr, "%s: %s: %s\n", argv[i], qn_status_name(st), e.message);
        if (st != QN_OK || !measure(argv[i], g, QN__DECOMP_ROWS, &a) ||
            !measure(argv[i], g, QN__DECOMP_FEWEST, &b)) {
            rc = 1;
            qn_grid_destroy(g);
            continue;
        }
        size_t cells = 0, n = (size_t)qn_grid_width(g) * qn_grid_height(g);
        for (size_t k = 0; k < n; k++)
            cells += qn_grid_costs(g)[k] != QN_CELL_WALL;
        print_row(argv[i], cells, &a, &b, json);
        qn_grid_destroy(g);
    }
    return rc;
}
