/*
** fuzz_map.c: the MovingAI .map reader, and the two modes run on what it
** reads.
**
** On a map that loads: every cell is ground (1) or wall (255); the grid's
** rectangle decomposition puts each passable cell centre in a quad of the
** cell's cost and no wall centre in any, with the quads' areas adding up to
** the passable cells; mesh queries agree with brute force; an integration
** field from a passable cell satisfies the Bellman conditions; and a quad
** field to the same cell reaches exactly the cells the grid field reaches
** (8-connected moves without corner cutting connect what 4-connected ones
** do, and so do the rectangles' shared edges). On failure, the error's
** line and column lie in the input; CR LF line breaks read like LF. Then
** the same again with an allocator that fails at call N (N from a hash of
** the input): no leak, and every status either the first run's or
** QN_E_NOMEM.
*/
#include "fuzz_checks.h"

/* Above this many cells, skip the per-cell checks. */
#define BIG_GRID (1u << 16)

/* The quad field reaches the cells the grid field reaches. */
static void check_same_reach(const qn_grid *g, const qn_grid_field *gf, const qn_field *f) {
    const qn_mesh *m = qn_field_mesh(f);
    for (uint32_t y = 0; y < qn_grid_height(g); y++)
        for (uint32_t x = 0; x < qn_grid_width(g); x++) {
            if (qn_grid_cost(g, x, y) == QN_CELL_WALL) continue;
            uint32_t q;
            qn_mesh_locate(m, qn__v2((float)x + 0.5f, (float)y + 0.5f), QN_NONE, &q);
            bool grid_reach = isfinite(qn_grid_field_cost(gf, x, y));
            bool quad_reach = isfinite(qn_field_quad_cost(f, q));
            FZ_CHECK(grid_reach == quad_reach, "cell (%u, %u): grid %s, quad %u %s", x, y,
                     grid_reach ? "reaches" : "does not reach", q,
                     quad_reach ? "reaches" : "does not reach");
        }
}

/* Status of each stage; QN_OK (0) also for a stage not reached. */
enum { LOAD, MESH, GRID_FIELD, FIELD, STAGES };
typedef struct outcome {
    qn_status st[STAGES];
} outcome;

static void run_fields(const qn_grid *g, const qn_mesh *m, const qn_allocator *a, uint64_t seed,
                       bool failing, outcome *r) {
    size_t cells = (size_t)qn_grid_width(g) * qn_grid_height(g);
    const uint8_t *costs = qn_grid_costs(g);
    uint32_t goal = QN_NONE;
    for (size_t k = 0; k < cells && goal == QN_NONE; k++)
        if (costs[(k + seed) % cells] != QN_CELL_WALL) goal = (uint32_t)((k + seed) % cells);
    FZ_CHECK(goal != QN_NONE, "a mesh without passable cells");
    qn_grid_field_opts go = {.connectivity = (seed >> 16) & 1 ? QN_CONNECT_4 : QN_CONNECT_8};
    qn_grid_field *gf = NULL;
    r->st[GRID_FIELD] = qn_grid_field_create(g, &goal, 1, &go, a, &gf, NULL);
    FZ_CHECK(r->st[GRID_FIELD] == QN_OK || (failing && r->st[GRID_FIELD] == QN_E_NOMEM),
             "grid field: %s", qn_status_name(r->st[GRID_FIELD]));
    uint32_t w = qn_grid_width(g);
    qn_vec2 at = {(float)(goal % w) + 0.5f, (float)(goal / w) + 0.5f};
    qn_field_opts fo = {.midpoint_costs = (seed >> 17) & 1, .lookahead = (seed >> 18) & 1 ? 2 : 0};
    qn_field *f = NULL;
    r->st[FIELD] = qn_field_create(m, &at, 1, &fo, a, &f, NULL);
    FZ_CHECK(r->st[FIELD] == QN_OK || (failing && r->st[FIELD] == QN_E_NOMEM), "field: %s",
             qn_status_name(r->st[FIELD]));
    if (!failing && cells <= BIG_GRID) {
        fz_check_grid_field(gf, go.connectivity == QN_CONNECT_8);
        fz_check_field_shape(f);
        check_same_reach(g, gf, f);
        qn_vec2 pts[FZ_MAX_POINTS];
        uint32_t np = fz_points(m, seed, pts, FZ_MAX_POINTS);
        fz_check_mesh_queries(m, pts, np);
        fz_check_sampling(f, pts, np);
        for (uint32_t i = 0; i < np; i++) {
            qn_vec2 d;
            uint32_t cell;
            qn_status s =
                qn_grid_field_sample(gf, i % 2 ? QN_FLOW_VECTOR : QN_FLOW_DIR8, pts[i], &cell, &d);
            uint32_t gx, gy;
            qn_status where = qn_grid_locate(g, pts[i], &gx, &gy);
            FZ_CHECK((s == QN_E_OUTSIDE) == (where == QN_E_OUTSIDE), "grid sample %s, locate %s",
                     qn_status_name(s), qn_status_name(where));
            FZ_CHECK(where != QN_OK || cell == gy * w + gx, "sample cell %u, locate (%u, %u)", cell,
                     gx, gy);
            fz_check_dir(s, d);
        }
    }
    qn_field_destroy(f);
    qn_grid_field_destroy(gf);
}

static void run(const uint8_t *data, size_t size, const qn_allocator *a, bool failing, outcome *r) {
    memset(r, 0, sizeof *r);
    qn_grid *g = (qn_grid *)1;
    qn_error e;
    r->st[LOAD] = qn_map_load_mem((const char *)data, size, a, &g, &e);
    FZ_CHECK((r->st[LOAD] == QN_OK) == (g != NULL), "grid %p with %s", (void *)g,
             qn_status_name(r->st[LOAD]));
    if (r->st[LOAD] != QN_OK) {
        fz_check_error(r->st[LOAD], &e);
        fz_check_position(data, size, &e);
        return;
    }
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    FZ_CHECK(w >= 1 && h >= 1 && w <= QN_MAX_GRID_SIDE && h <= QN_MAX_GRID_SIDE &&
                 (size_t)w * h <= QN_MAX_GRID_CELLS && (size_t)w * h <= size,
             "grid %ux%u from %zu bytes", w, h, size);
    bool any_open = false;
    for (size_t i = 0; i < (size_t)w * h; i++) {
        uint8_t c = qn_grid_costs(g)[i];
        FZ_CHECK(c == QN_CELL_NORMAL || c == QN_CELL_WALL, "cell %zu cost %u", i, c);
        any_open = any_open || c == QN_CELL_NORMAL;
    }
    qn_mesh *m = (qn_mesh *)1;
    r->st[MESH] = qn_mesh_from_grid(g, a, &m, &e);
    FZ_CHECK((r->st[MESH] == QN_OK) == (m != NULL), "mesh %p with %s", (void *)m,
             qn_status_name(r->st[MESH]));
    if (!(failing && r->st[MESH] == QN_E_NOMEM))
        FZ_CHECK(r->st[MESH] == (any_open ? QN_OK : QN_E_INVALID_ARG), "mesh from grid: %s (%s)",
                 qn_status_name(r->st[MESH]), e.message);
    if (r->st[MESH] == QN_OK) {
        if (!failing && (size_t)w * h <= BIG_GRID) fz_check_grid_mesh(g, m);
        run_fields(g, m, a, fz_hash(data, size), failing, r);
    }
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
}

/* Line breaks written CR LF instead of LF read the same: same status, same
** error position, same cells. */
static void check_crlf(const uint8_t *data, size_t size) {
    size_t n2;
    char *text2 = fz_crlf(data, size, &n2);
    if (!text2) return;
    qn_grid *g1 = NULL, *g2 = NULL;
    qn_error e1, e2;
    qn_status st1 = qn_map_load_mem((const char *)data, size, NULL, &g1, &e1);
    qn_status st2 = qn_map_load_mem(text2, n2, NULL, &g2, &e2);
    FZ_CHECK(st1 == st2, "LF: %s, CR LF: %s", qn_status_name(st1), qn_status_name(st2));
    if (st1 != QN_OK) {
        FZ_CHECK(e1.line == e2.line && e1.column == e2.column,
                 "LF error at %u:%u, CR LF at %u:%u (%s / %s)", e1.line, e1.column, e2.line,
                 e2.column, e1.message, e2.message);
    } else {
        size_t cells = (size_t)qn_grid_width(g1) * qn_grid_height(g1);
        FZ_CHECK(qn_grid_width(g1) == qn_grid_width(g2) &&
                     qn_grid_height(g1) == qn_grid_height(g2) &&
                     memcmp(qn_grid_costs(g1), qn_grid_costs(g2), cells) == 0,
                 "cells differ with CR LF");
    }
    qn_grid_destroy(g1);
    qn_grid_destroy(g2);
    free(text2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    outcome first, second;
    run(data, size, &a, false, &first);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked", (long long)fa.live);
    check_crlf(data, size);
    uint64_t n = fz_hash(data, size) % (fa.calls + 1);
    a = failalloc_init(&fa, n);
    run(data, size, &a, true, &second);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked failing at call %llu", (long long)fa.live,
             (unsigned long long)n);
    for (int i = 0; i < STAGES; i++) { /* each stage: the same, out of memory, or not reached */
        qn_status s1 = first.st[i], s2 = second.st[i];
        FZ_CHECK(s2 == s1 || s2 == QN_E_NOMEM || (fa.failures && s2 == QN_OK && i > 0),
                 "stage %d: %s, then %s", i, qn_status_name(s1), qn_status_name(s2));
    }
    return 0;
}
