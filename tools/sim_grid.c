/*
** sim_grid.c: the grid-mode world of the quality harness (see sim.h): the
** exact segment-against-cells test, the octile reference and uniform starts
** over the reachable cells.
*/
#include <math.h>
#include <string.h>

#include "sim.h"

/* ---- cells ------------------------------------------------------------- */

static bool passable(const qn_grid *g, int64_t x, int64_t y) {
    if (x < 0 || y < 0 || x >= (int64_t)qn_grid_width(g) || y >= (int64_t)qn_grid_height(g))
        return false;
    return qn_grid_cost(g, (uint32_t)x, (uint32_t)y) != QN_CELL_WALL;
}

/* Cell coordinate of world coordinate v along one axis, computed exactly as
** qn_grid_locate does, so both agree on every boundary. */
static double cell_coord(double v, double origin, double cs) { return (v - origin) / cs; }

/* Moves world coordinate v (nearly) into cell k of an axis: clamps to the
** cell's extent, then steps by one float at a time until floor() agrees. */
static float into_cell(double v, int64_t k, double origin, double cs) {
    double lo = origin + (double)k * cs, hi = origin + (double)(k + 1) * cs;
    float f = (float)fmin(fmax(v, lo), hi);
    for (int i = 0; i < 64; i++) {
        double c = floor(cell_coord((double)f, origin, cs));
        if (c > (double)k)
            f = nextafterf(f, -INFINITY);
        else if (c < (double)k)
            f = nextafterf(f, INFINITY);
        else
            break;
    }
    return f;
}

qn_vec2 qn_sim_grid_point(const qn_grid *grid, uint32_t x, uint32_t y, double u, double v) {
    qn_vec2 o = qn_grid_origin(grid);
    double cs = (double)qn_grid_cell_size(grid);
    qn_vec2 p = {into_cell((double)o.x + ((double)x + u) * cs, x, (double)o.x, cs),
                 into_cell((double)o.y + ((double)y + v) * cs, y, (double)o.y, cs)};
    return p;
}

/* ---- the segment walk ---------------------------------------------------- */

/* Grid lines one axis of the segment crosses, in order. The cell index
** changes at line k when moving up (entering cell k) and just after line k
** when moving down (entering cell k - 1): with half-open cells a point on
** line k belongs to cell k, so lines are crossed in (a, b] upward and in
** (b, a] downward. */
typedef struct axis {
    double a, d;  /* start and extent, in cells */
    int64_t k;    /* next line */
    int64_t last; /* last line crossed (inclusive) */
    int s;        /* +1, -1, or 0 when no line is crossed */
} axis;

/* `limit` bounds the lines looked at: beyond it the walk has left the grid
** (a wall) long before, and the clamp keeps huge coordinates in range. */
static void axis_init(axis *x, double a, double b, double limit) {
    x->a = a;
    x->d = b - a;
    x->s = b > a ? 1 : (b < a ? -1 : 0);
    double fa = floor(fmin(fmax(a, -2.0), limit)), fb = floor(fmin(fmax(b, -2.0), limit));
    x->k = x->s > 0 ? (int64_t)fa + 1 : (int64_t)fa;
    x->last = x->s > 0 ? (int64_t)fb : (int64_t)fb + 1;
}

/* Segment parameter of the next line crossed, INFINITY when none is left. */
static double axis_t(const axis *x) {
    if (x->s == 0 || (x->s > 0 ? x->k > x->last : x->k < x->last)) return (double)INFINITY;
    return ((double)x->k - x->a) / x->d;
}

/* The cell entered when the next line is crossed. */
static int64_t axis_enter(const axis *x) { return x->s > 0 ? x->k : x->k - 1; }

/* May a unit pass from cell (cx, cy) to (nx, ny), an orthogonal or diagonal
** neighbour? */
static bool can_enter(const qn_grid *g, int64_t cx, int64_t cy, int64_t nx, int64_t ny) {
    if (!passable(g, nx, ny)) return false;
    if (nx != cx && ny != cy) return passable(g, nx, cy) && passable(g, cx, ny);
    return true;
}

typedef struct walk {
    const qn_grid *g;
    qn_vec2 a, b;
    double ox, oy, cs;
    int64_t cx, cy; /* current cell */
} walk;

/* The last point of the segment still in the current cell, at parameter t. */
static qn_vec2 exit_point(const walk *w, double t) {
    double x = (double)w->a.x + t * ((double)w->b.x - (double)w->a.x);
    double y = (double)w->a.y + t * ((double)w->b.y - (double)w->a.y);
    qn_vec2 p = {into_cell(x, w->cx, w->ox, w->cs), into_cell(y, w->cy, w->oy, w->cs)};
    return p;
}

/* Crossings closer than this (in cells along the segment) count as one pass
** through a grid vertex: both orthogonal neighbours are then checked, which
** errs toward reporting a contact rather than cutting a corner. */
#define VERTEX_TOL 1e-6

/* Steps through the crossings in order; false at the first refused one. */
static bool walk_cells(walk *w, axis *ax, axis *ay, qn_vec2 *hit) {
    double span = fmax(fabs(ax->d), fabs(ay->d));
    for (;;) {
        double tx = axis_t(ax), ty = axis_t(ay);
        if (isinf(tx) && isinf(ty)) return true;
        double t = fmin(tx, ty);
        bool mx = (tx - t) * span <= VERTEX_TOL, my = (ty - t) * span <= VERTEX_TOL;
        int64_t nx = mx ? axis_enter(ax) : w->cx, ny = my ? axis_enter(ay) : w->cy;
        if (!can_enter(w->g, w->cx, w->cy, nx, ny)) {
            if (hit) *hit = exit_point(w, t);
            return false;
        }
        w->cx = nx;
        w->cy = ny;
        if (mx) ax->k += ax->s;
        if (my) ay->k += ay->s;
    }
}

bool qn_sim_grid_move_ok(const qn_grid *grid, qn_vec2 a, qn_vec2 b, qn_vec2 *hit) {
    if (hit) *hit = a;
    if (!grid || !isfinite(a.x) || !isfinite(a.y) || !isfinite(b.x) || !isfinite(b.y)) return false;
    uint32_t x, y;
    if (qn_grid_locate(grid, a, &x, &y) != QN_OK || !passable(grid, x, y)) return false;
    qn_vec2 o = qn_grid_origin(grid);
    walk w = {grid, a, b, (double)o.x, (double)o.y, (double)qn_grid_cell_size(grid), x, y};
    axis ax, ay;
    axis_init(&ax, cell_coord((double)a.x, w.ox, w.cs), cell_coord((double)b.x, w.ox, w.cs),
              (double)qn_grid_width(grid) + 2.0);
    axis_init(&ay, cell_coord((double)a.y, w.oy, w.cs), cell_coord((double)b.y, w.oy, w.cs),
              (double)qn_grid_height(grid) + 2.0);
    return walk_cells(&w, &ax, &ay, hit);
}

/* ---- the world ------------------------------------------------------------ */

static qn_status grid_sample(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir) {
    const qn_sim_grid_ctx *c = ctx;
    return qn_grid_field_sample(c->field, c->kind, p, hint, dir);
}

static bool grid_move_ok(void *ctx, qn_vec2 a, qn_vec2 b, uint32_t hint, qn_vec2 *hit) {
    const qn_sim_grid_ctx *c = ctx;
    (void)hint; /* the walk starts from a's cell, found in O(1) */
    return qn_sim_grid_move_ok(c->grid, a, b, hit);
}

static double grid_reference(void *ctx, qn_vec2 p) {
    const qn_sim_grid_ctx *c = ctx;
    uint32_t x, y;
    if (qn_grid_locate(c->grid, p, &x, &y) != QN_OK) return (double)INFINITY;
    return qn_grid_field_cost(c->field, x, y);
}

static bool reachable(const qn_sim_grid_ctx *c, uint32_t x, uint32_t y) {
    return isfinite(qn_grid_field_cost(c->field, x, y));
}

/* The k-th reachable cell in row-major order: the row by binary search over
** the row table, then a scan of that row. */
static void kth_reachable(const qn_sim_grid_ctx *c, uint32_t k, uint32_t *cx, uint32_t *cy) {
    uint32_t lo = 0, hi = qn_grid_height(c->grid); /* row_first[lo] <= k < row_first[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->row_first[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    uint32_t left = k - c->row_first[lo], w = qn_grid_width(c->grid);
    *cy = lo;
    *cx = 0;
    for (uint32_t x = 0; x < w; x++) {
        if (!reachable(c, x, lo)) continue;
        *cx = x;
        if (left-- == 0) return;
    }
}

static bool grid_random_start(void *ctx, double u1, double u2, double u3, qn_vec2 *p) {
    const qn_sim_grid_ctx *c = ctx;
    if (c->reachable == 0) return false;
    double pick = floor(u1 * (double)c->reachable);
    uint32_t k = pick >= (double)c->reachable ? c->reachable - 1 : (uint32_t)pick;
    uint32_t x, y;
    kth_reachable(c, k, &x, &y);
    *p = qn_sim_grid_point(c->grid, x, y, u2, u3);
    return true;
}

void qn_sim_world_grid(qn_sim_world *w, qn_sim_grid_ctx *ctx, const qn_grid_field *field,
                       qn_flow_kind kind, qn_vec2 goal) {
    ctx->field = field;
    ctx->grid = qn_grid_field_grid(field);
    ctx->kind = kind;
    uint32_t width = qn_grid_width(ctx->grid), height = qn_grid_height(ctx->grid), n = 0;
    for (uint32_t y = 0; y < height; y++) {
        ctx->row_first[y] = n;
        for (uint32_t x = 0; x < width; x++)
            n += reachable(ctx, x, y);
    }
    ctx->row_first[height] = n;
    ctx->reachable = n;
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->sample = grid_sample;
    w->move_ok = grid_move_ok;
    w->reference = grid_reference;
    w->random_start = grid_random_start;
    w->goal = goal;
}

/* ---- grid tiles ---------------------------------------------------------- */

static qn_status tiles_sample(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir) {
    const qn_sim_tiles_ctx *c = ctx;
    return qn_grid_tfield_sample(c->field, QN_FLOW_VECTOR, p, hint, dir);
}

static bool tiles_move_ok(void *ctx, qn_vec2 a, qn_vec2 b, uint32_t hint, qn_vec2 *hit) {
    (void)hint;
    const qn_sim_tiles_ctx *c = ctx;
    return qn_sim_grid_move_ok(c->grid, a, b, hit);
}

static double tiles_reference(void *ctx, qn_vec2 p) {
    const qn_sim_tiles_ctx *c = ctx;
    uint32_t x, y;
    if (qn_grid_locate(c->grid, p, &x, &y) != QN_OK) return (double)INFINITY;
    double v = qn_grid_tfield_cost(c->field, x, y); /* as grid_reference: the field's units */
    return v >= 0.0 ? v : (double)INFINITY;
}

void qn_sim_world_tiles(qn_sim_world *w, qn_sim_tiles_ctx *ctx, const qn_grid_tfield *field,
                        const qn_grid *grid, qn_vec2 goal) {
    ctx->field = field;
    ctx->grid = grid;
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->sample = tiles_sample;
    w->move_ok = tiles_move_ok;
    w->reference = tiles_reference;
    w->goal = goal;
}
