/*
** grid_mesh.c: grids to meshes and back. qn_mesh_from_grid cuts a grid's
** passable cells into rectangles of one cost byte each and builds a mesh from
** them; qn_grid_from_mesh samples a mesh at cell centres.
**
** Decomposition. grid_rects.c marks cuts between cells along which the
** passable cells split into the fewest rectangles of one cost each (its
** header tells how). The rectangles are then read off in row-major order:
** the first passable cell not yet covered anchors a new rectangle, as wide
** as the run of uncovered cells of its cost in its row up to a cut, then
** grown down while that whole span stays uncovered, of that cost and
** uncut. Covered cells need no bitmap: every rectangle covers, in each of
** its columns, a run of rows starting at its anchor row, and anchors come
** in row-major order, so in column x the covered cells at or below the
** current row y are exactly rows y .. cover[x]-1. One uint32 per column
** suffices, whatever the grid's height.
**
** Without cuts the same reading is the earlier greedy decomposition
** (QN__DECOMP_ROWS, kept for comparison by tools/decomp_stats.c): on the
** MovingAI maps the fewest are 0 % (arena) to 16 % (8room_000) fewer quads. Taking the largest rectangle at each anchor
** instead was tried: within 1 % of the greedy count.
*/
#include "internal.h"

#include <stdlib.h>

/* Cells [x0, x1) x [y0, y1), all of cost byte `cost`. */
typedef struct cell_rect {
    uint32_t x0, y0, x1, y1;
    uint8_t cost;
} cell_rect;

typedef struct rect_list {
    const qn_allocator *a;
    cell_rect *r;
    uint32_t n, cap;
} rect_list;

static void rect_list_free(rect_list *l) {
    qn__free(l->a, l->r, (size_t)l->cap * sizeof(cell_rect));
    l->r = NULL;
    l->n = l->cap = 0;
}

static qn_status rect_push(rect_list *l, cell_rect r, qn_error *err) {
    if (l->n == l->cap) {
        if (l->n >= QN_MAX_QUADS)
            return qn__fail(err, QN_E_LIMIT, QN_NONE,
                            "the grid's passable cells need more than %u rectangles",
                            QN_MAX_QUADS);
        uint32_t ncap = l->cap ? 2 * l->cap : 64;
        if (ncap > QN_MAX_QUADS) ncap = QN_MAX_QUADS;
        cell_rect *p = qn__realloc(l->a, l->r, (size_t)l->cap * sizeof(cell_rect),
                                   (size_t)ncap * sizeof(cell_rect));
        if (!p) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (%u rectangles)", ncap);
        l->r = p;
        l->cap = ncap;
    }
    l->r[l->n++] = r;
    return QN_OK;
}

/* Uncovered cells of cost c in row y from x0, at most `limit` of them, and
** with cuts (NULL: none) not crossing a cut on a cell's left edge. */
static uint32_t run_right(const uint8_t *row, const uint8_t *cuts, const uint32_t *cover,
                          uint32_t y, uint32_t x0, uint32_t limit, uint8_t c) {
    uint32_t n = 0;
    while (n < limit && row[x0 + n] == c && cover[x0 + n] <= y &&
           !(n > 0 && cuts && (cuts[x0 + n] & QN__CUT_LEFT)))
        n++;
    return n;
}

/* Is there a cut (cuts may be NULL) above any of cells [x0, x0 + n) of a row? */
static bool cut_above(const uint8_t *cuts, uint32_t x0, uint32_t n) {
    for (uint32_t i = 0; cuts && i < n; i++)
        if (cuts[x0 + i] & QN__CUT_TOP) return true;
    return false;
}

/* The rectangle anchored at (x, y): as wide as the run of uncovered cells of
** the anchor's cost, then as tall as that whole span stays so, never
** crossing a cut. */
static cell_rect grow_rect(const qn_grid *g, const uint8_t *cut, const uint32_t *cover,
                           uint32_t x, uint32_t y) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    const uint8_t *costs = qn_grid_costs(g);
    uint8_t c = costs[(size_t)y * w + x];
    const uint8_t *cr = cut ? cut + (size_t)y * w : NULL;
    uint32_t run = run_right(costs + (size_t)y * w, cr, cover, y, x, w - x, c);
    cell_rect r = {x, y, x + run, y + 1, c};
    for (; r.y1 < h; r.y1++) {
        size_t o = (size_t)r.y1 * w;
        cr = cut ? cut + o : NULL;
        if (cut_above(cr, x, run) || run_right(costs + o, cr, cover, r.y1, x, run, c) != run)
            break;
    }
    return r;
}

/* Cuts the passable cells into rectangles, in row-major order of anchors,
** never across a cut (cut may be NULL). */
static qn_status decompose(const qn_grid *g, const uint8_t *cut, rect_list *l, qn_error *err) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    const uint8_t *costs = qn_grid_costs(g);
    uint32_t *cover = qn__calloc(l->a, w, sizeof(uint32_t));
    if (!cover) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (decomposition)");
    qn_status st = QN_OK;
    for (uint32_t y = 0; y < h && st == QN_OK; y++) {
        const uint8_t *row = costs + (size_t)y * w;
        for (uint32_t x = 0; x < w && st == QN_OK;) {
            if (row[x] == QN_CELL_WALL || cover[x] > y) {
                x++;
                continue;
            }
            cell_rect r = grow_rect(g, cut, cover, x, y);
            for (uint32_t k = r.x0; k < r.x1; k++) cover[k] = r.y1;
            st = rect_push(l, r, err);
            x = r.x1;
        }
    }
    qn__free(l->a, cover, (size_t)w * sizeof(uint32_t));
    return st;
}

/* The rectangles of decomposition `how`. */
static qn_status rectangles(const qn_grid *g, qn__decomp how, rect_list *l, qn_error *err) {
    if (how == QN__DECOMP_ROWS) return decompose(g, NULL, l, err);
    size_t n = (size_t)qn_grid_width(g) * qn_grid_height(g);
    uint8_t *cut = qn__calloc(l->a, n, 1);
    if (!cut) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (%zu cut marks)", n);
    qn_status st = qn__grid_cuts(g, l->a, cut, err);
    if (st == QN_OK) st = decompose(g, cut, l, err);
    qn__free(l->a, cut, n);
    return st;
}

/* ---- crowded rectangles ------------------------------------------------ */

/* A rectangle of the fewest can run along a row of obstacles (a corridor
** between rows of trees or pillars) and have dozens of obstacle corners on
** its sides. Each is a root of the exact instance's shortest path map that
** may serve part of the rectangle, and a corner the sampler checks a
** unit's way against, so such a quad costs every sample in it a look at
** each: on a lattice of pillars, a sample took 20 times a grid lookup.
** Rectangles with more than QN__CROWDED obstacle corners on their sides are
** cut across their longer side into pieces with at most that many each
** (the corners at a cut count for both pieces); pieces are at least a cell
** long, so a cell column with more keeps them all. */
#define QN__CROWDED 24u

/* The grid as the corner count reads it. */
typedef struct cellmap {
    const uint8_t *c;
    int64_t w, h;
} cellmap;

/* Is cell (x, y) a wall (outside the grid counts as one)? */
static unsigned wall_cell(const cellmap *g, int64_t x, int64_t y) {
    if (x < 0 || y < 0 || x >= g->w || y >= g->h) return 1;
    return g->c[y * g->w + x] == QN_CELL_WALL;
}

/* Obstacle corners of rectangle r at position k along its longer side
** (vertex column x0 + k, or row y0 + k when it is taller than wide): the
** two on its long sides, and at either end those on the short side. A
** vertex is an obstacle's corner when one of the four cells round it is a
** wall and the other three are open. (One loop, not inlined: the web
** build's size budget.) */
static QN__NOINLINE uint32_t corners_at(const cellmap *g, const cell_rect *r, bool tall,
                                        uint32_t k) {
    uint32_t len = tall ? r->y1 - r->y0 : r->x1 - r->x0, n = 0;
    int64_t a = (int64_t)(tall ? r->y0 : r->x0) + k, b0 = tall ? r->x0 : r->y0,
            b1 = tall ? r->x1 : r->y1;
    bool end = k == 0 || k == len;
    for (int64_t b = b0; b <= b1; b = end || b == b1 ? b + 1 : b1) {
        int64_t x = tall ? b : a, y = tall ? a : b;
        n += wall_cell(g, x - 1, y - 1) + wall_cell(g, x, y - 1) + wall_cell(g, x - 1, y) +
                 wall_cell(g, x, y) ==
             1;
    }
    return n;
}

/* Rectangle r cut as above, its pieces appended to out; *moved when a
** piece starts below r's row (r is taller than wide). */
static qn_status split_crowded(const cellmap *g, cell_rect r, rect_list *out, bool *moved,
                               qn_error *err) {
    bool tall = r.y1 - r.y0 > r.x1 - r.x0;
    uint32_t len = tall ? r.y1 - r.y0 : r.x1 - r.x0, a = 0, acc = corners_at(g, &r, tall, 0);
    qn_status st = QN_OK;
    for (uint32_t k = 1; k <= len + 1 && st == QN_OK; k++) {
        uint32_t add = k <= len ? corners_at(g, &r, tall, k) : 0;
        if (k <= len && !(acc + add > QN__CROWDED && k - 1 > a)) {
            acc += add;
            continue;
        }
        uint32_t b = k <= len ? k - 1 : len; /* a piece [a, b] */
        cell_rect p = r;
        if (tall)
            p.y0 = r.y0 + a, p.y1 = r.y0 + b;
        else
            p.x0 = r.x0 + a, p.x1 = r.x0 + b;
        *moved |= tall && a > 0;
        st = rect_push(out, p, err);
        if (k > len) break; /* that was the last */
        a = b;
        acc = corners_at(g, &r, tall, a) + add;
    }
    return st;
}

static int cmp_rect(const void *x, const void *y) {
    const cell_rect *a = x, *b = y;
    if (a->y0 != b->y0) return a->y0 < b->y0 ? -1 : 1;
    return a->x0 < b->x0 ? -1 : (a->x0 > b->x0 ? 1 : 0);
}

/* l with every rectangle that has too many corners cut (split_crowded),
** the pieces in its place, so quads near each other keep numbers near
** each other; then, when pieces of a tall one start below its row, sorted
** back into row-major order of top-left cells (the order the reading
** gives, which the tests check). */
static qn_status cut_crowded(const qn_grid *grid, rect_list *l, qn_error *err) {
    rect_list out = {l->a, NULL, 0, 0};
    cellmap g = {qn_grid_costs(grid), qn_grid_width(grid), qn_grid_height(grid)};
    qn_status st = QN_OK;
    bool moved = false;
    for (uint32_t i = 0; i < l->n && st == QN_OK; i++) {
        cell_rect r = l->r[i];
        /* no more corners than vertices round it: most need no count */
        uint64_t verts = 2 * ((uint64_t)(r.x1 - r.x0) + (r.y1 - r.y0));
        st = verts <= QN__CROWDED ? rect_push(&out, r, err)
                                  : split_crowded(&g, r, &out, &moved, err);
    }
    rect_list_free(l);
    *l = out;
    if (st == QN_OK && moved) qsort(l->r, l->n, sizeof *l->r, cmp_rect);
    return st;
}

/* World coordinate of grid line i: origin + i * cell size, in double so
** integer cell coordinates stay exact. */
static float grid_line(float origin, float cs, uint32_t i) {
    return (float)((double)origin + (double)i * (double)cs);
}

/* Fills the mesh description's arrays: four corners per rectangle, in the
** order (x0,y0) (x1,y0) (x1,y1) (x0,y1), which has positive signed area.
** Neighbours compute a shared grid line with the same formula, so their
** edges meet exactly. */
static void fill_quads(const qn_grid *g, const rect_list *l, qn_vec2 *v, uint32_t *q, float *c) {
    qn_vec2 o = qn_grid_origin(g);
    float cs = qn_grid_cell_size(g);
    for (size_t i = 0; i < l->n; i++) {
        const cell_rect *r = &l->r[i];
        float x0 = grid_line(o.x, cs, r->x0), x1 = grid_line(o.x, cs, r->x1);
        float y0 = grid_line(o.y, cs, r->y0), y1 = grid_line(o.y, cs, r->y1);
        v[4 * i + 0] = qn__v2(x0, y0);
        v[4 * i + 1] = qn__v2(x1, y0);
        v[4 * i + 2] = qn__v2(x1, y1);
        v[4 * i + 3] = qn__v2(x0, y1);
        for (uint32_t k = 0; k < 4; k++) q[4 * i + k] = (uint32_t)(4 * i + k);
        c[i] = (float)r->cost;
    }
}

/* ---- adjacency straight from the cells ------------------------------------- */

/* With out NULL, counts candidate c in start[c.a + 1]; else stores it at
** cursor start[c.a]. */
static void cand_emit(uint32_t *start, qn__cand *out, qn__cand c) {
    if (out) out[start[c.a]++] = c;
    else start[c.a + 1]++;
}

/* The portals of rectangle i along its right and bottom sides: every run
** of cells beside it held by one other rectangle (label: which rectangle
** holds each cell) is the segment they share. Rectangles of one partition
** cannot overlap, so nothing else is needed. Corners as fill_quads lays
** them out: edge 0 runs +x along y0, 1 +y along x1, 2 -x along y1, 3 -y
** along x0; a candidate's segment runs along its first quad's edge. Each
** goes to cand_emit (counted, or stored). */
static void rect_sides(const qn_grid *g, const rect_list *l, const uint32_t *label, uint32_t i,
                       uint32_t *start, qn__cand *out) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    qn_vec2 o = qn_grid_origin(g);
    float cs = qn_grid_cell_size(g);
    const cell_rect *r = &l->r[i];
    float X1 = grid_line(o.x, cs, r->x1), Y1 = grid_line(o.y, cs, r->y1);
    if (r->x1 < w) /* the right side, x = x1 */
        for (uint32_t y = r->y0; y < r->y1;) {
            uint32_t nb = label[(size_t)y * w + r->x1], y1 = y + 1;
            while (y1 < r->y1 && label[(size_t)y1 * w + r->x1] == nb) y1++;
            if (nb != QN_NONE) {
                qn_vec2 lo = qn__v2(X1, grid_line(o.y, cs, y));
                qn_vec2 hi = qn__v2(X1, grid_line(o.y, cs, y1));
                cand_emit(start, out, i < nb ? (qn__cand){i, nb, 1, 3, lo, hi}
                                             : (qn__cand){nb, i, 3, 1, hi, lo});
            }
            y = y1;
        }
    if (r->y1 < h) /* the bottom side, y = y1 */
        for (uint32_t x = r->x0; x < r->x1;) {
            uint32_t nb = label[(size_t)r->y1 * w + x], x1 = x + 1;
            while (x1 < r->x1 && label[(size_t)r->y1 * w + x1] == nb) x1++;
            if (nb != QN_NONE) {
                qn_vec2 lo = qn__v2(grid_line(o.x, cs, x), Y1);
                qn_vec2 hi = qn__v2(grid_line(o.x, cs, x1), Y1);
                cand_emit(start, out, i < nb ? (qn__cand){i, nb, 2, 0, hi, lo}
                                             : (qn__cand){nb, i, 0, 2, lo, hi});
            }
            x = x1;
        }
}

/* The portals of the rectangles (rect_sides), sorted by (a, b): counted
** per first quad, then stored straight into place (one array of the final
** size, never grown), each quad's few then by b. */
static qn_status rect_cands(const qn_grid *g, const rect_list *l, qn__cand **out, uint32_t *count,
                            qn_error *err) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    size_t cells = (size_t)w * h;
    const uint8_t *costs = qn_grid_costs(g);
    uint32_t *label = qn__alloc(l->a, cells * sizeof(uint32_t));
    uint32_t *start = qn__calloc(l->a, (size_t)l->n + 1, sizeof(uint32_t));
    qn__cand *c = NULL;
    uint32_t n = 0;
    if (label && start) {
        for (size_t i = 0; i < cells; i++)
            if (costs[i] == QN_CELL_WALL) label[i] = QN_NONE; /* the rest is painted */
        for (uint32_t i = 0; i < l->n; i++) {
            const cell_rect *r = &l->r[i];
            for (uint32_t y = r->y0; y < r->y1; y++)
                for (uint32_t x = r->x0; x < r->x1; x++) label[(size_t)y * w + x] = i;
        }
        for (uint32_t i = 0; i < l->n; i++) rect_sides(g, l, label, i, start, NULL);
        for (uint32_t q = 0; q < l->n; q++) start[q + 1] += start[q];
        n = start[l->n];
        c = qn__alloc(l->a, ((size_t)n + 1) * sizeof(qn__cand));
    }
    if (c) {
        for (uint32_t i = 0; i < l->n; i++) rect_sides(g, l, label, i, start, c);
        for (uint32_t i = 1; i < n; i++) {
            qn__cand x = c[i];
            uint32_t j = i;
            for (; j > 0 && c[j - 1].a == x.a && c[j - 1].b > x.b; j--) c[j] = c[j - 1];
            c[j] = x;
        }
    }
    qn__free(l->a, label, cells * sizeof(uint32_t));
    qn__free(l->a, start, ((size_t)l->n + 1) * sizeof(uint32_t));
    if (!c) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    *out = c;
    *count = n;
    return QN_OK;
}

/* The mesh description's arrays, freed as soon as the mesh has copied the
** quads (qn__mesh_create_releasing), so they and the pairing scratch are
** not resident together. */
typedef struct desc_arrays {
    const qn_allocator *a;
    size_t n;
    qn_vec2 *v;
    uint32_t *q;
    float *c;
} desc_arrays;

static void free_desc(void *ud) {
    desc_arrays *x = ud;
    qn__free(x->a, x->v, 4 * x->n * sizeof(qn_vec2));
    qn__free(x->a, x->q, 4 * x->n * sizeof(uint32_t));
    qn__free(x->a, x->c, x->n * sizeof(float));
    x->v = NULL;
    x->q = NULL;
    x->c = NULL;
}

/* Builds the mesh from the rectangles; the description's arrays are
** temporary and use the caller's allocator too. */
static qn_status mesh_from_rects(const qn_grid *g, const rect_list *l, const qn_allocator *alloc,
                                 bool pair_by_cells, qn_mesh **out, qn_error *err) {
    desc_arrays x = {l->a, l->n, NULL, NULL, NULL};
    size_t n = l->n;
    x.v = qn__alloc(x.a, 4 * n * sizeof(qn_vec2));
    x.q = qn__alloc(x.a, 4 * n * sizeof(uint32_t));
    x.c = qn__alloc(x.a, n * sizeof(float));
    qn_status st;
    if (x.v && x.q && x.c) {
        fill_quads(g, l, x.v, x.q, x.c);
        qn_mesh_desc d;
        memset(&d, 0, sizeof d);
        d.vertices = x.v;
        d.vertex_count = (uint32_t)(4 * n);
        d.quads = x.q;
        d.quad_count = (uint32_t)n;
        d.costs = x.c;
        if (pair_by_cells) {
            qn__cand *cands = NULL;
            uint32_t nc = 0;
            st = rect_cands(g, l, &cands, &nc, err);
            /* rect_cands gives an array (never NULL) when it succeeds. */
            if (st == QN_OK)
                st = qn__mesh_create_releasing(&d, cands, nc, free_desc, &x, alloc, out, err);
            if (cands) qn__free(x.a, cands, ((size_t)nc + 1) * sizeof(qn__cand));
        } else {
            st = qn__mesh_create_releasing(&d, NULL, 0, free_desc, &x, alloc, out, err);
        }
    } else {
        st = qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh description, %zu quads)",
                      n);
    }
    free_desc(&x);
    return st;
}

/* Every quad corner must lie within QN_MAX_COORD, as for any mesh; the
** origin already does (qn_grid_create checks it), so check the far corner. */
static qn_status check_extent(const qn_grid *g, qn_error *err) {
    qn_vec2 o = qn_grid_origin(g);
    double cs = (double)qn_grid_cell_size(g);
    double fx = (double)o.x + cs * qn_grid_width(g), fy = (double)o.y + cs * qn_grid_height(g);
    if (fabs(fx) > (double)QN_MAX_COORD || fabs(fy) > (double)QN_MAX_COORD)
        return qn__fail(err, QN_E_BAD_NUMBER, QN_NONE,
                        "grid reaches (%g, %g); quad corners must lie within +-%g", fx, fy,
                        (double)QN_MAX_COORD);
    return QN_OK;
}

qn_status qn__grid_rect_count(const qn_grid *grid, qn__decomp how, const qn_allocator *alloc,
                              uint32_t *count, qn_error *err) {
    qn_allocator a = qn__allocator(alloc);
    rect_list l = {&a, NULL, 0, 0};
    qn_status st = rectangles(grid, how, &l, err);
    *count = l.n;
    rect_list_free(&l);
    return st;
}

qn_status qn_mesh_from_grid(const qn_grid *grid, const qn_allocator *alloc, qn_mesh **out,
                            qn_error *err) {
    return qn__mesh_from_grid_with(grid, QN__DECOMP_FEWEST, true, alloc, out, err);
}

qn_status qn__mesh_from_grid_with(const qn_grid *grid, qn__decomp how, bool pair_by_cells,
                                  const qn_allocator *alloc, qn_mesh **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!grid || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "grid or out is NULL");
    qn_status st = check_extent(grid, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    rect_list l = {&a, NULL, 0, 0};
    st = rectangles(grid, how, &l, err);
    if (st == QN_OK && how == QN__DECOMP_FEWEST) st = cut_crowded(grid, &l, err);
    if (st == QN_OK && l.n == 0)
        st = qn__fail(err, QN_E_INVALID_ARG, QN_NONE,
                      "grid %ux%u has no passable cell (every cost is 255)", qn_grid_width(grid),
                      qn_grid_height(grid));
    if (st == QN_OK) st = mesh_from_rects(grid, &l, &a, pair_by_cells, out, err);
    rect_list_free(&l);
    return st;
}

/* ---- rasterising a mesh ------------------------------------------------ */

/* Cells along one axis: span / cs rounded up. A relative slack of 1e-6
** absorbs float noise (a 10-unit span at cell size 0.1f is 10 cells, not
** 11); any sliver it drops is narrower than half a cell, so no cell centre
** lay in it. Returns 0 above QN_MAX_GRID_SIDE. */
static uint32_t axis_cells(float lo, float hi, float cs) {
    double r = ((double)hi - (double)lo) / (double)cs;
    double n = ceil(r - 1e-6 * fmax(1.0, r));
    if (n < 1.0) n = 1.0;
    return n > (double)QN_MAX_GRID_SIDE ? 0 : (uint32_t)n;
}

/* The lowest-numbered unblocked quad containing p, or QN_NONE. The hint is
** tried first; a point on the border between a blocked and an open quad must
** find the open one, so a blocked hit falls back to the whole bucket (the
** mesh lists every quad whose box touches a bucket, in increasing order). */
static uint32_t open_quad_at(const qn_mesh *m, qn_vec2 p, uint32_t hint) {
    uint32_t q = qn__locate(m, p, hint);
    if (q == QN_NONE || !m->blocked[q]) return q;
    float fx = (p.x - m->grid_origin.x) * m->grid_inv_cell;
    float fy = (p.y - m->grid_origin.y) * m->grid_inv_cell;
    uint32_t bx = fx > 0.0f ? (fx >= (float)m->grid_w ? m->grid_w - 1 : (uint32_t)fx) : 0;
    uint32_t by = fy > 0.0f ? (fy >= (float)m->grid_h ? m->grid_h - 1 : (uint32_t)fy) : 0;
    size_t b = (size_t)by * m->grid_w + bx;
    for (uint32_t i = m->cell_start[b]; i < m->cell_start[b + 1]; i++) {
        uint32_t k = qn__bucket_quad(m, b, i);
        if (!m->blocked[k] && qn__quad_contains(m, k, p)) return k;
    }
    return QN_NONE;
}

/* A quad's cost as a cost byte: rounded, clamped to 1..254. */
static uint8_t cost_byte(float cost) {
    float r = roundf(cost);
    if (!(r >= 1.0f)) return 1;
    return r > 254.0f ? 254 : (uint8_t)r;
}

static void rasterise(const qn_mesh *m, uint32_t w, uint32_t h, float cs, uint8_t *out) {
    qn_vec2 o = m->bounds.min;
    uint32_t hint = QN_NONE;
    for (uint32_t y = 0; y < h; y++) {
        float cy = (float)((double)o.y + ((double)y + 0.5) * (double)cs);
        for (uint32_t x = 0; x < w; x++) {
            float cx = (float)((double)o.x + ((double)x + 0.5) * (double)cs);
            uint32_t q = open_quad_at(m, qn__v2(cx, cy), hint);
            out[(size_t)y * w + x] = q == QN_NONE ? QN_CELL_WALL : cost_byte(qn__quad_cost(m, q));
            if (q != QN_NONE) hint = q;
        }
    }
}

qn_status qn_grid_from_mesh(const qn_mesh *mesh, float cell_size, const qn_allocator *alloc,
                            qn_grid **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!mesh || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "mesh or out is NULL");
    if (!isfinite(cell_size) || !(cell_size > 0.0f))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "cell size %g is not finite and > 0",
                        (double)cell_size);
    qn_rect b = mesh->bounds;
    uint32_t w = axis_cells(b.min.x, b.max.x, cell_size);
    uint32_t h = axis_cells(b.min.y, b.max.y, cell_size);
    if (w == 0 || h == 0 || (uint64_t)w * h > QN_MAX_GRID_CELLS)
        return qn__fail(err, QN_E_LIMIT, QN_NONE,
                        "mesh bounds %g x %g at cell size %g need more than %u cells per side "
                        "or %u cells",
                        (double)(b.max.x - b.min.x), (double)(b.max.y - b.min.y),
                        (double)cell_size, QN_MAX_GRID_SIDE, QN_MAX_GRID_CELLS);
    qn_allocator a = qn__allocator(alloc);
    size_t n = (size_t)w * h;
    uint8_t *costs = qn__alloc(&a, n);
    if (!costs)
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (%ux%u cost bytes)", w, h);
    rasterise(mesh, w, h, cell_size, costs);
    qn_grid_desc d;
    memset(&d, 0, sizeof d);
    d.width = w;
    d.height = h;
    d.costs = costs;
    d.cell_size = cell_size;
    d.origin = b.min;
    qn_status st = qn_grid_create(&d, &a, out, err);
    qn__free(&a, costs, n);
    return st;
}
