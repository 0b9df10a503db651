/*
** grid.c: grid mode. A byte cost field, an exact integration field built by
** a bucket-queue Dijkstra, the 8-direction and gradient flow fields, and the
** sampler that reads them.
**
** Layout. The search works on padded arrays: a ring of wall cells around
** the grid, so neighbour offsets never need bounds checks. Each padded cell
** keeps its cost byte and, in a second byte, which diagonal moves the corner
** rule allows (one load per cell instead of four neighbours' costs). The
** integration values use the same padded layout (stride width + 2). While
** the field is built, wall cells hold -INFINITY, so a relaxation
** `new < dist[n]` fails on a wall without reading its cost; readers map
** negative values back to INFINITY.
**
** Exactness. Every move costs at least 1 (length >= 1, cost byte >= 1). With
** buckets of width 1 keyed on floor(value), no cell of bucket k can improve
** another cell of bucket k, so when bucket k is reached all its cells are
** final and the order inside it does not matter: the result is the exact
** Dijkstra result, in double precision. The largest single move is
** 254 * sqrt 2 < 360, so every pending entry lies within 360 buckets of the
** current one and a ring of 512 buckets suffices.
*/
#include "internal.h"

#include <stdlib.h>

#define WALL QN_CELL_WALL
#define RING 512u /* bucket ring size, a power of two > 360 */
#define RING_MASK (RING - 1u)
#define SQRT2 1.41421356237309504880
#define DINF ((double)INFINITY)

/* The search's inner functions must be inlined into its loop: called, they
** spill registers on every cell. */
#define QN__INLINE QN__ALWAYS_INLINE

/* A stamped rectangle of cells, x0 <= x < x1, y0 <= y < y1. */
typedef struct cell_rect {
    uint32_t x0, y0, x1, y1;
} cell_rect;

struct qn_grid {
    qn_allocator alloc;
    uint32_t width, height;
    float cell_size;
    qn_vec2 origin;
    uint8_t *costs;  /* width * height, row-major */
    uint16_t *info;  /* padded: cost | corner bits << 8, walls on the ring */
    size_t padded_n;
    /* Dynamic changes: version counts effective stamps; journal[v %
    ** QN_GRID_JOURNAL] is the rectangle (shrunk to the cells that changed)
    ** of stamp number v (1-based). */
    uint64_t version;
    cell_rect journal[QN_GRID_JOURNAL];
};

struct qn_grid_field {
    qn_allocator alloc;
    const qn_grid *grid;
    qn_connectivity connectivity;
    uint32_t stride; /* width + 2 */
    ptrdiff_t off[8]; /* neighbour offsets in QN_DIR_* order */
    double *dist;    /* padded layout; < 0 wall, INFINITY unreachable */
    uint8_t *dir;    /* width * height, or NULL when no flow was built */
    qn_vec2 *vec;    /* width * height, or NULL */
    size_t cells;    /* width * height */
    /* What an update needs to rebuild or repair: the goals as given, the
    ** early-exit cell (QN_NONE: none), and the grid version reflected. */
    uint32_t *goals;
    uint32_t goal_count;
    uint32_t stop; /* padded index, or QN_NONE */
    uint64_t version;
    bool broken; /* an update ran out of memory: every cell reads unreachable */
};

/* Unit vectors in QN_DIR_* order: E, SE, S, SW, W, NW, N, NE (y down). */
#define H_ 0.70710678118654752f
static const qn_vec2 dir_vectors[9] = {{1, 0},   {H_, H_},  {0, 1},  {-H_, H_}, {-1, 0},
                                       {-H_, -H_}, {0, -1}, {H_, -H_}, {0, 0}};

qn_vec2 qn_dir_vector(uint8_t dir) { return dir_vectors[dir < 8 ? dir : 8]; }

/* ---- grid -------------------------------------------------------------- */

/* Checks the description; QN_OK when a grid can be made from it. */
static qn_status check_desc(const qn_grid_desc *d, qn_error *err) {
    if (!d->costs) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "grid costs are NULL");
    if (d->width == 0 || d->height == 0)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "grid is %ux%u; both sides must be >= 1",
                        d->width, d->height);
    if (d->width > QN_MAX_GRID_SIDE || d->height > QN_MAX_GRID_SIDE ||
        (uint64_t)d->width * d->height > QN_MAX_GRID_CELLS)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "grid %ux%u exceeds %u per side or %u cells",
                        d->width, d->height, QN_MAX_GRID_SIDE, QN_MAX_GRID_CELLS);
    if (!isfinite(d->cell_size) || d->cell_size < 0.0f)
        return qn__fail(err, QN_E_BAD_NUMBER, QN_NONE, "cell_size must be finite and >= 0");
    if (!qn__finite2(d->origin) || fabsf(d->origin.x) > QN_MAX_COORD ||
        fabsf(d->origin.y) > QN_MAX_COORD)
        return qn__fail(err, QN_E_BAD_NUMBER, QN_NONE, "origin must be finite, |x|,|y| <= %g",
                        (double)QN_MAX_COORD);
    size_t n = (size_t)d->width * d->height;
    const uint8_t *zero = memchr(d->costs, 0, n);
    if (zero) {
        uint32_t i = (uint32_t)(zero - d->costs);
        return qn__fail(err, QN_E_BAD_NUMBER, i, "cell (%u, %u) has cost 0; costs are 1..255",
                        i % d->width, i / d->width);
    }
    return QN_OK;
}

/* Cost byte of a padded cell. */
static inline uint8_t cost_of(const uint16_t *info, ptrdiff_t i) { return (uint8_t)info[i]; }

/* Which diagonal moves into or out of padded cell i the corner rule allows:
** bit 0 SE, 1 SW, 2 NW, 3 NE, each set when both orthogonal cells between
** the two are passable (the rule is symmetric). Stored beside the cost so
** the search reads one value per cell instead of four neighbours' costs. */
static unsigned corner_bits(const uint16_t *info, size_t i, size_t ps) {
    bool e = cost_of(info, i + 1) != WALL, s = cost_of(info, i + ps) != WALL,
         w = cost_of(info, i - 1) != WALL, n = cost_of(info, i - ps) != WALL;
    return (unsigned)((e && s) | (s && w) << 1 | (w && n) << 2 | (n && e) << 3);
}

/* Fills the padded cell info: the costs inside a one-cell ring of walls,
** then the corner bits of every grid cell. */
static void fill_padded(qn_grid *g) {
    size_t ps = g->width + 2;
    for (size_t i = 0; i < g->padded_n; i++) g->info[i] = WALL;
    for (size_t y = 0; y < g->height; y++)
        for (size_t x = 0; x < g->width; x++)
            g->info[(y + 1) * ps + x + 1] = g->costs[y * g->width + x];
    for (size_t y = 1; y <= g->height; y++)
        for (size_t i = y * ps + 1; i <= y * ps + g->width; i++)
            g->info[i] = (uint16_t)(g->info[i] | corner_bits(g->info, i, ps) << 8);
}

/* The padded cell info of a grid made by qn__grid_create_costs. */
qn_status qn__grid_finish(qn_grid *g, qn_error *err) {
    if (g->info) return QN_OK;
    g->info = qn__alloc(&g->alloc, g->padded_n * sizeof(uint16_t));
    if (!g->info)
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory for a %ux%u grid", g->width,
                        g->height);
    fill_padded(g);
    return QN_OK;
}

qn_status qn__grid_create_costs(const qn_grid_desc *desc, const qn_allocator *alloc, qn_grid **out,
                                qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!desc || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "desc or out is NULL");
    qn_status st = check_desc(desc, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    qn_grid *g = qn__calloc(&a, 1, sizeof *g);
    if (!g) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory for the grid");
    g->alloc = a;
    g->width = desc->width;
    g->height = desc->height;
    g->cell_size = desc->cell_size > 0.0f ? desc->cell_size : 1.0f;
    g->origin = desc->origin;
    size_t n = (size_t)g->width * g->height;
    g->padded_n = (size_t)(g->width + 2) * (g->height + 2);
    g->costs = qn__alloc(&a, n);
    if (!g->costs) {
        qn_grid_destroy(g);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory for a %ux%u grid",
                        desc->width, desc->height);
    }
    memcpy(g->costs, desc->costs, n);
    *out = g;
    return QN_OK;
}

qn_status qn_grid_create(const qn_grid_desc *desc, const qn_allocator *alloc, qn_grid **out,
                         qn_error *err) {
    qn_status st = qn__grid_create_costs(desc, alloc, out, err);
    if (st == QN_OK && (st = qn__grid_finish(*out, err)) != QN_OK) {
        qn_grid_destroy(*out);
        *out = NULL;
    }
    return st;
}

void qn_grid_destroy(qn_grid *grid) {
    if (!grid) return;
    qn_allocator a = grid->alloc;
    qn__free(&a, grid->costs, (size_t)grid->width * grid->height);
    qn__free(&a, grid->info, grid->padded_n * sizeof(uint16_t));
    qn__free(&a, grid, sizeof *grid);
}

uint32_t qn_grid_width(const qn_grid *grid) { return grid ? grid->width : 0; }
uint32_t qn_grid_height(const qn_grid *grid) { return grid ? grid->height : 0; }
float qn_grid_cell_size(const qn_grid *grid) { return grid ? grid->cell_size : 0.0f; }
qn_vec2 qn_grid_origin(const qn_grid *grid) { return grid ? grid->origin : qn__v2(0, 0); }
const uint8_t *qn_grid_costs(const qn_grid *grid) { return grid ? grid->costs : NULL; }

uint8_t qn_grid_cost(const qn_grid *grid, uint32_t x, uint32_t y) {
    if (!grid || x >= grid->width || y >= grid->height) return WALL;
    return grid->costs[(size_t)y * grid->width + x];
}

/* Cell of p, computed in double so large coordinates keep their cell.
** Returns false when p is outside the grid. */
static bool cell_of(const qn_grid *g, qn_vec2 p, uint32_t *x, uint32_t *y) {
    double fx = floor(((double)p.x - (double)g->origin.x) / (double)g->cell_size);
    double fy = floor(((double)p.y - (double)g->origin.y) / (double)g->cell_size);
    if (!(fx >= 0.0 && fx < (double)g->width && fy >= 0.0 && fy < (double)g->height))
        return false;
    *x = (uint32_t)fx;
    *y = (uint32_t)fy;
    return true;
}

qn_status qn_grid_locate(const qn_grid *grid, qn_vec2 p, uint32_t *x, uint32_t *y) {
    if (x) *x = QN_NONE;
    if (y) *y = QN_NONE;
    if (!grid || !x || !y || !qn__finite2(p)) return QN_E_INVALID_ARG;
    return cell_of(grid, p, x, y) ? QN_OK : QN_E_OUTSIDE;
}

/* ---- stamps ---------------------------------------------------------------- */

/* Refreshes the corner bits of the cells of r grown by one cell: a wall
** appearing or going changes which diagonal moves its neighbours have. */
static void refresh_corners(qn_grid *g, cell_rect r) {
    size_t ps = g->width + 2;
    uint32_t xa = r.x0 ? r.x0 - 1 : 0, ya = r.y0 ? r.y0 - 1 : 0;
    uint32_t xb = r.x1 < g->width ? r.x1 + 1 : g->width;
    uint32_t yb = r.y1 < g->height ? r.y1 + 1 : g->height;
    for (uint32_t y = ya; y < yb; y++)
        for (size_t i = (y + 1) * ps + xa + 1; i <= (y + 1) * ps + xb; i++)
            g->info[i] = (uint16_t)(cost_of(g->info, (ptrdiff_t)i) | corner_bits(g->info, i, ps) << 8);
}

qn_status qn_grid_stamp(qn_grid *grid, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                        uint8_t cost) {
    if (!grid || cost == 0 || x0 >= x1 || y0 >= y1 || x1 > grid->width || y1 > grid->height)
        return QN_E_INVALID_ARG;
    size_t ps = grid->width + 2;
    cell_rect ch = {x1, y1, x0, y0}; /* bounds of the cells that change */
    bool walls = false;
    for (uint32_t y = y0; y < y1; y++)
        for (uint32_t x = x0; x < x1; x++) {
            uint8_t *c = &grid->costs[(size_t)y * grid->width + x];
            if (*c == cost) continue;
            walls |= (*c == WALL) != (cost == WALL);
            *c = cost;
            uint16_t *info = &grid->info[(y + 1) * ps + x + 1];
            *info = (uint16_t)((*info & 0xFF00u) | cost);
            ch.x0 = x < ch.x0 ? x : ch.x0;
            ch.y0 = y < ch.y0 ? y : ch.y0;
            ch.x1 = x + 1 > ch.x1 ? x + 1 : ch.x1;
            ch.y1 = y + 1 > ch.y1 ? y + 1 : ch.y1;
        }
    if (ch.x0 >= ch.x1) return QN_OK; /* nothing changed */
    if (walls) refresh_corners(grid, ch);
    grid->version++;
    grid->journal[grid->version % QN_GRID_JOURNAL] = ch;
    return QN_OK;
}

uint64_t qn_grid_version(const qn_grid *grid) { return grid ? grid->version : 0; }

/* ---- bucket queue --------------------------------------------------------- */

typedef struct bucket {
    uint32_t *cells; /* padded indices; stale entries are skipped on pop */
    uint32_t count, cap;
} bucket;

typedef struct queue {
    const qn_allocator *alloc;
    bucket b[RING];
} queue;

static void queue_free(queue *q) {
    for (uint32_t s = 0; s < RING; s++)
        qn__free(q->alloc, q->b[s].cells, (size_t)q->b[s].cap * sizeof(uint32_t));
}

/* Grows a slot's array; false when out of memory (the slot is unchanged). */
static bool bucket_grow(const qn_allocator *a, bucket *b) {
    uint32_t ncap = b->cap ? b->cap * 2 : 256;
    uint32_t *nc = qn__realloc(a, b->cells, (size_t)b->cap * sizeof(uint32_t),
                               (size_t)ncap * sizeof(uint32_t));
    if (!nc) return false;
    b->cells = nc;
    b->cap = ncap;
    return true;
}

/* Adds cell to the bucket of `key` (the floor of its value). */
static QN__INLINE bool queue_push(queue *q, uint64_t key, uint32_t cell) {
    bucket *b = &q->b[key & RING_MASK];
    if (b->count == b->cap && !bucket_grow(q->alloc, b)) return false;
    b->cells[b->count++] = cell;
    return true;
}

/* Slots from slot s to the next one holding entries, circularly; RING when
** all are empty. Pending entries lie within 360 buckets of the current one,
** so on cheap ground this is a step or two. */
static uint32_t queue_gap(const queue *q, uint32_t s) {
    for (uint32_t step = 0; step < RING; step++)
        if (q->b[(s + step) & RING_MASK].count) return step;
    return RING;
}

/* ---- Dijkstra -------------------------------------------------------------- */

/* What one build needs: the queue, the values, the costs, which diagonal
** moves the corner rule allows, and the per-cost move lengths. */
typedef struct search {
    queue q;
    double *dist;
    const uint16_t *info;   /* padded cost and corner bits */
    ptrdiff_t ps;           /* padded stride */
    bool eight;
    double orth[256], diag[256];
} search;

/* Bucket key of a value: its floor. Values stay far below 2^63, and the
** signed conversion is a single instruction where the unsigned one is not. */
static QN__INLINE uint64_t key_of(double d) { return (uint64_t)(int64_t)d; }

/* Lowers dist[n] from `old` to `nd` and queues n, unless it already sits in
** the bucket of nd (old < floor(nd) + 1; never when old is INFINITY). An
** entry left behind in a later bucket becomes stale. */
static QN__INLINE bool lower(queue *q, double *dist, uint32_t n, double old, double nd) {
    uint64_t key = key_of(nd);
    dist[n] = nd;
    if (old < (double)(int64_t)key + 1.0) return true;
    return queue_push(q, key, n);
}

/* Relaxes the neighbours of settled cell u (value d): each neighbour n that
** can move into u gets d + length * cost(u). Walls hold -INFINITY, so the
** comparison alone rejects them. `eight` is a constant in each caller. */
static QN__INLINE bool relax(search *s, uint32_t u, double d, bool eight) {
    double *dist = s->dist;
    const double *p = dist + u;
    ptrdiff_t ps = s->ps;
    unsigned info = s->info[u], c = info & 0xFFu;
    double wo = d + s->orth[c], v;
    uint32_t un = (uint32_t)((ptrdiff_t)u - ps), us = (uint32_t)((ptrdiff_t)u + ps);
    if (wo < (v = p[1]) && !lower(&s->q, dist, u + 1, v, wo)) return false;
    if (wo < (v = p[ps]) && !lower(&s->q, dist, us, v, wo)) return false;
    if (wo < (v = p[-1]) && !lower(&s->q, dist, u - 1, v, wo)) return false;
    if (wo < (v = p[-ps]) && !lower(&s->q, dist, un, v, wo)) return false;
    if (!eight) return true;
    double wd = d + s->diag[c];
    unsigned m = info >> 8;
    if ((m & 1) && wd < (v = p[ps + 1]) && !lower(&s->q, dist, us + 1, v, wd)) return false;
    if ((m & 2) && wd < (v = p[ps - 1]) && !lower(&s->q, dist, us - 1, v, wd)) return false;
    if ((m & 4) && wd < (v = p[-ps - 1]) && !lower(&s->q, dist, un - 1, v, wd)) return false;
    if ((m & 8) && wd < (v = p[-ps + 1]) && !lower(&s->q, dist, un + 1, v, wd)) return false;
    return true;
}

/* After an early exit: cells queued in later buckets hold tentative values;
** they read as unreachable. Cells of the current bucket are already final. */
static void forget_unsettled(search *s, uint64_t k) {
    for (uint32_t slot = 0; slot < RING; slot++) {
        bucket *b = &s->q.b[slot];
        if (slot == (uint32_t)(k & RING_MASK)) continue;
        for (uint32_t i = 0; i < b->count; i++) {
            double d = s->dist[b->cells[i]];
            if (d != DINF && key_of(d) > k) s->dist[b->cells[i]] = DINF;
        }
    }
}

/* Settles the cells of bucket k (slot `slot`). Returns 0 to go on, 1 when
** `stop` was settled, -1 when out of memory. */
static inline int settle(search *s, uint64_t k, uint32_t slot, uint32_t stop, bool eight) {
    /* Moves cost >= 1, so relaxations never land in this slot: its array
    ** and count stay put while the loop runs. */
    const uint32_t *cells = s->q.b[slot].cells;
    uint32_t count = s->q.b[slot].count;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t u = cells[i];
        double d = s->dist[u];
        if (key_of(d) != k) continue; /* stale: lowered to an earlier bucket */
        if (u == stop) return 1;
        if (!relax(s, u, d, eight)) return -1;
    }
    s->q.b[slot].count = 0;
    return 0;
}

/* Runs the bucket queue until it is empty or `stop` (a padded index, or
** QN_NONE) is settled. Returns false when out of memory. */
static bool run(search *s, uint32_t stop) {
    uint64_t k = 0;
    for (;;) {
        uint32_t gap = queue_gap(&s->q, (uint32_t)(k & RING_MASK));
        if (gap == RING) return true;
        k += gap;
        uint32_t slot = (uint32_t)(k & RING_MASK);
        int r = s->eight ? settle(s, k, slot, stop, true) : settle(s, k, slot, stop, false);
        if (r < 0) return false;
        if (r > 0) {
            forget_unsettled(s, k);
            return true;
        }
    }
}

/* ---- field construction ---------------------------------------------------- */

static uint32_t padded_index(const qn_grid *g, uint32_t cell) {
    return (cell / g->width + 1) * (g->width + 2) + cell % g->width + 1;
}

static qn_status check_field_args(const qn_grid *grid, const uint32_t *goals, uint32_t count,
                                  const qn_grid_field_opts *o, qn_error *err) {
    uint32_t n = grid->width * grid->height;
    if (!goals || count == 0 || count > n)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "need 1..%u goal cells, got %u", n,
                        goals ? count : 0);
    if (o->connectivity != QN_CONNECT_8 && o->connectivity != QN_CONNECT_4)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "unknown connectivity %d",
                        (int)o->connectivity);
    if (o->stop_enabled && o->stop_cell >= n)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "stop cell %u out of range (%u cells)",
                        o->stop_cell, n);
    for (uint32_t i = 0; i < count; i++) {
        if (goals[i] >= n)
            return qn__fail(err, QN_E_INVALID_ARG, i, "goal %u: cell %u out of range (%u cells)",
                            i, goals[i], n);
        if (grid->costs[goals[i]] == WALL)
            return qn__fail(err, QN_E_BLOCKED, i, "goal %u: cell (%u, %u) is a wall", i,
                            goals[i] % grid->width, goals[i] / grid->width);
    }
    return QN_OK;
}

static void free_field_arrays(qn_grid_field *f) {
    const qn_grid *g = f->grid;
    qn__free(&f->alloc, f->dist, g->padded_n * sizeof(double));
    qn__free(&f->alloc, f->dir, f->dir ? f->cells : 0);
    qn__free(&f->alloc, f->vec, f->vec ? f->cells * sizeof(qn_vec2) : 0);
    qn__free(&f->alloc, f->goals, (size_t)f->goal_count * sizeof(uint32_t));
}

/* Walls start at -INFINITY (see the top of the file), other cells at INFINITY. */
static void init_dist(const qn_grid *g, double *dist) {
    for (size_t i = 0; i < g->padded_n; i++)
        dist[i] = cost_of(g->info, i) == WALL ? -DINF : DINF;
}

static void init_search(search *s, const qn_grid_field *f) {
    memset(&s->q, 0, sizeof s->q);
    s->q.alloc = &f->alloc;
    s->dist = f->dist;
    s->info = f->grid->info;
    s->ps = (ptrdiff_t)f->stride;
    s->eight = f->connectivity == QN_CONNECT_8;
    for (int c = 0; c < 256; c++) {
        s->orth[c] = (double)c;
        s->diag[c] = (double)c * SQRT2;
    }
}

/* Seeds the goals at 0 and runs Dijkstra. False when out of memory. */
static bool integrate(qn_grid_field *f, const uint32_t *goals, uint32_t count, uint32_t stop) {
    search *s = qn__alloc(&f->alloc, sizeof *s);
    if (!s) return false;
    init_search(s, f);
    bool ok = true;
    for (uint32_t i = 0; i < count && ok; i++) {
        uint32_t pi = padded_index(f->grid, goals[i]);
        /* Listed twice (0), or stamped to a wall since the field was made. */
        if (!(s->dist[pi] > 0.0)) continue;
        s->dist[pi] = 0.0;
        ok = queue_push(&s->q, 0, pi);
    }
    if (ok) ok = run(s, stop);
    queue_free(&s->q);
    qn__free(&f->alloc, s, sizeof *s);
    return ok;
}

/* ---- flow fields ------------------------------------------------------------- */

/* Ties between a straight and a diagonal step (both optimal, equal up to
** rounding) go to the diagonal, which leaves fewer steps: diagonal totals
** are scaled down by one part in 10^12, far below any real difference. */
#define DIAG_BIAS (1.0 - 1e-12)

/* Is v the value of a reachable cell (not a wall, not unreachable)? */
static inline bool usable(double v) { return v >= 0.0 && v != DINF; }

/* Considers the move in direction k (a constant) for best_dir_at: length
** len, allowed when `ok`. Walls (-INFINITY) are skipped; unreachable
** neighbours (INFINITY) never win. */
#define TRY_DIR(k, len, ok)                                                      \
    do {                                                                         \
        double v_ = p[off[k]];                                                   \
        double t_ = v_ + (double)cost_of(info, off[k]) * (len);                  \
        if ((ok) && v_ >= 0.0 && t_ < best) {                                    \
            best = t_;                                                           \
            dir = (k);                                                           \
        }                                                                        \
    } while (0)

/* The 8-direction flow of the cell at p (its value positive and finite)
** with cell info at `info`: the neighbour with the lowest move cost plus
** value, so following the flow walks an optimal path; a diagonal only past
** two passable orthogonal cells. `eight` is a constant in each caller. */
static QN__INLINE uint8_t best_dir_at(const double *p, const uint16_t *info,
                                      const ptrdiff_t off[8], bool eight) {
    double best = DINF;
    uint8_t dir = QN_DIR_NONE;
    TRY_DIR(0, 1.0, true);
    TRY_DIR(2, 1.0, true);
    TRY_DIR(4, 1.0, true);
    TRY_DIR(6, 1.0, true);
    if (eight) {
        /* Diagonals 1, 3, 5, 7 are corner bits 0..3. */
        unsigned corners = *info >> 8;
        best /= DIAG_BIAS;
        TRY_DIR(1, SQRT2, corners & 1u);
        TRY_DIR(3, SQRT2, corners & 2u);
        TRY_DIR(5, SQRT2, corners & 4u);
        TRY_DIR(7, SQRT2, corners & 8u);
    }
    return dir;
}

static uint8_t best_dir(const qn_grid_field *f, uint32_t pi) {
    if (!usable(f->dist[pi]) || f->dist[pi] == 0.0) return QN_DIR_NONE;
    return best_dir_at(f->dist + pi, f->grid->info + pi, f->off,
                       f->connectivity == QN_CONNECT_8);
}

/* Value of a neighbour for the gradient: its own, or the centre's when the
** neighbour is a wall, outside or unreachable. */
static inline double grad_value(double v, double centre) { return usable(v) ? v : centre; }

/* The normalised gradient of the cell at p (value d, positive and finite):
** x = left - right, y = up - down, so it points downhill; zero on flat
** spots. */
static QN__INLINE qn_vec2 gradient_at(const double *p, double d, ptrdiff_t ps) {
    /* The differences are small even where values are large, so float
    ** keeps them, and its square root and division are cheaper. */
    float gx = (float)(grad_value(p[-1], d) - grad_value(p[1], d));
    float gy = (float)(grad_value(p[-ps], d) - grad_value(p[ps], d));
    float len2 = gx * gx + gy * gy;
    if (!(len2 > 0.0f)) return qn__v2(0, 0);
    float inv = 1.0f / sqrtf(len2);
    return qn__v2(gx * inv, gy * inv);
}

/* The gradient of padded cell pi; zero at goals, walls and unreachable cells. */
static qn_vec2 gradient(const qn_grid_field *f, uint32_t pi) {
    double d = f->dist[pi];
    if (!usable(d) || d == 0.0) return qn__v2(0, 0);
    return gradient_at(f->dist + pi, d, f->off[2]);
}

/* Both flows of row y. `eight` is a constant in each caller. */
static QN__INLINE void flow_row(qn_grid_field *f, uint32_t y, bool eight) {
    const qn_grid *g = f->grid;
    size_t pi = (size_t)(y + 1) * f->stride + 1;
    const double *p = f->dist + pi;
    const uint16_t *info = g->info + pi;
    uint8_t *dir = f->dir + (size_t)y * g->width;
    qn_vec2 *vec = f->vec + (size_t)y * g->width;
    for (uint32_t x = 0; x < g->width; x++) {
        double d = p[x];
        if (!usable(d) || d == 0.0) {
            dir[x] = QN_DIR_NONE;
            vec[x] = qn__v2(0, 0);
            continue;
        }
        dir[x] = best_dir_at(p + x, info + x, f->off, eight);
        vec[x] = gradient_at(p + x, d, f->off[2]);
    }
}

static void build_flow(qn_grid_field *f) {
    bool eight = f->connectivity == QN_CONNECT_8;
    for (uint32_t y = 0; y < f->grid->height; y++) {
        if (eight)
            flow_row(f, y, true);
        else
            flow_row(f, y, false);
    }
}

/* Allocates the field's own arrays; false when out of memory. */
static bool alloc_field_arrays(qn_grid_field *f, bool flow) {
    f->goals = qn__alloc(&f->alloc, (size_t)f->goal_count * sizeof(uint32_t));
    f->dist = f->goals ? qn__alloc(&f->alloc, f->grid->padded_n * sizeof(double)) : NULL;
    if (!f->dist || !flow) return f->dist != NULL;
    f->dir = qn__alloc(&f->alloc, f->cells);
    f->vec = f->dir ? qn__alloc(&f->alloc, f->cells * sizeof(qn_vec2)) : NULL;
    return f->vec != NULL;
}

qn_status qn_grid_field_create(const qn_grid *grid, const uint32_t *goal_cells,
                               uint32_t goal_count, const qn_grid_field_opts *opts,
                               const qn_allocator *alloc, qn_grid_field **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!grid || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "grid or out is NULL");
    qn_grid_field_opts o = {QN_CONNECT_8, false, 0, false};
    if (opts) o = *opts;
    qn_status st = check_field_args(grid, goal_cells, goal_count, &o, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    qn_grid_field *f = qn__calloc(&a, 1, sizeof *f);
    if (!f) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory for the grid field");
    f->alloc = a;
    f->grid = grid;
    f->connectivity = o.connectivity;
    f->stride = grid->width + 2;
    ptrdiff_t ps = (ptrdiff_t)f->stride;
    const ptrdiff_t off[8] = {1, ps + 1, ps, ps - 1, -1, -ps - 1, -ps, -ps + 1};
    memcpy(f->off, off, sizeof off);
    f->cells = (size_t)grid->width * grid->height;
    f->goal_count = goal_count;
    f->stop = o.stop_enabled ? padded_index(grid, o.stop_cell) : QN_NONE;
    f->version = grid->version;
    bool flow = !o.no_flow && !o.stop_enabled;
    bool ok = alloc_field_arrays(f, flow);
    if (ok) {
        memcpy(f->goals, goal_cells, (size_t)goal_count * sizeof(uint32_t));
        init_dist(grid, f->dist);
        ok = integrate(f, goal_cells, goal_count, f->stop);
    }
    if (!ok) {
        qn_grid_field_destroy(f);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory building a %ux%u field",
                        grid->width, grid->height);
    }
    if (flow) build_flow(f);
    *out = f;
    return QN_OK;
}

void qn_grid_field_destroy(qn_grid_field *field) {
    if (!field) return;
    qn_allocator a = field->alloc;
    free_field_arrays(field);
    qn__free(&a, field, sizeof *field);
}

const qn_grid *qn_grid_field_grid(const qn_grid_field *field) {
    return field ? field->grid : NULL;
}

size_t qn_grid_field_bytes(const qn_grid_field *field) {
    if (!field) return 0;
    size_t n = sizeof *field + field->grid->padded_n * sizeof(double) +
               (size_t)field->goal_count * sizeof(uint32_t);
    if (field->dir) n += field->cells * (1 + sizeof(qn_vec2));
    return n;
}

/* Padded index of (x, y), or QN_NONE outside. */
static uint32_t field_cell(const qn_grid_field *f, uint32_t x, uint32_t y) {
    if (!f || x >= f->grid->width || y >= f->grid->height) return QN_NONE;
    return (y + 1) * f->stride + x + 1;
}

double qn_grid_field_cost(const qn_grid_field *field, uint32_t x, uint32_t y) {
    uint32_t pi = field_cell(field, x, y);
    if (pi == QN_NONE) return DINF;
    double d = field->dist[pi];
    return d >= 0.0 ? d * (double)field->grid->cell_size : DINF;
}

uint8_t qn_grid_field_dir(const qn_grid_field *field, uint32_t x, uint32_t y) {
    uint32_t pi = field_cell(field, x, y);
    if (pi == QN_NONE) return QN_DIR_NONE;
    return field->dir ? field->dir[(size_t)y * field->grid->width + x] : best_dir(field, pi);
}

qn_vec2 qn_grid_field_vec(const qn_grid_field *field, uint32_t x, uint32_t y) {
    uint32_t pi = field_cell(field, x, y);
    if (pi == QN_NONE) return qn__v2(0, 0);
    return field->vec ? field->vec[(size_t)y * field->grid->width + x] : gradient(field, pi);
}

/* ---- updates ------------------------------------------------------------------- */
/*
** Repair. Values are the unique fixed point of
**     value(goal) = 0,  value(c) = min over moves n -> c of value(n) + w(n, c)
** evaluated in doubles (w = length times the cost of n, from the same tables
** as the build): every move costs at least 1, so a smaller solution would
** need a cell made by a neighbour that is itself too small, down to a goal.
** Any procedure that ends with (a) every value at least the fixed point and
** (b) no move that lowers a value ends on that fixed point, bit for bit. The
** repair gets there in two passes over the bucket ring:
**  1. In increasing order of the old values, starting from the cells around
**     the stamps: a cell no neighbour makes any more (exactly, with the new
**     costs and corner rule) is reset to INFINITY, and the neighbours it may
**     have made are examined in turn. What is left is made by a chain of
**     kept cells down to a goal, so it is at least the fixed point (a).
**  2. The reset cells take the best offer of their neighbours, and with the
**     cells around the stamps (whose moves may have become cheaper or
**     legal) they start a Dijkstra pass that relaxes whatever moved (b).
** Flows are then recomputed around every cell whose value, cost or corner
** bits may have changed.
*/

/* Above the largest single move (254 * sqrt 2): a value exceeds that of the
** neighbour it comes from by less than this. */
#define MAX_MOVE 360.0

/* A cell to start a pass from, with the value it starts at. */
typedef struct seed {
    double v;
    uint32_t cell;
} seed;

typedef struct seed_list {
    seed *a;
    size_t n, cap;
} seed_list;

typedef struct cell_list {
    uint32_t *a;
    size_t n, cap;
} cell_list;

typedef struct repair {
    search s;          /* ring, values, cell info, move weights */
    qn_grid_field *f;
    int step;          /* 1: all 8 directions, 2: orthogonal ones (even QN_DIR_*) */
    size_t pending;    /* entries in the ring, stale ones included */
    seed_list seeds;   /* where the next pass starts */
    cell_list reset;   /* cells reset to INFINITY (or opened from a wall) */
    cell_list touched; /* cells whose value changed: flows around them are redone */
    cell_list flows;   /* grid cells (not padded) whose flows are redone */
} repair;

static bool add_seed(repair *r, double v, uint32_t cell) {
    seed_list *l = &r->seeds;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? 2 * l->cap : 256;
        seed *na = qn__realloc(&r->f->alloc, l->a, l->cap * sizeof *na, ncap * sizeof *na);
        if (!na) return false;
        l->a = na;
        l->cap = ncap;
    }
    l->a[l->n].v = v;
    l->a[l->n++].cell = cell;
    return true;
}

static bool add_cell(repair *r, cell_list *l, uint32_t cell) {
    if (l->n == l->cap) {
        size_t ncap = l->cap ? 2 * l->cap : 256;
        uint32_t *na = qn__realloc(&r->f->alloc, l->a, l->cap * sizeof *na, ncap * sizeof *na);
        if (!na) return false;
        l->a = na;
        l->cap = ncap;
    }
    l->a[l->n++] = cell;
    return true;
}

static bool ring_push(repair *r, double v, uint32_t cell) {
    r->pending++;
    return queue_push(&r->s.q, key_of(v), cell);
}

/* Weight of the move from padded cell u in direction j (odd: diagonal). */
static inline double move_weight(const repair *r, uint32_t u, int j) {
    unsigned c = cost_of(r->s.info, u);
    return (j & 1) ? r->s.diag[c] : r->s.orth[c];
}

/* Does the corner rule allow the diagonal move j (odd) out of, or into,
** padded cell n? (The rule is symmetric.) Orthogonal moves always pass. */
static inline bool move_allowed(const repair *r, uint32_t n, int j) {
    return !(j & 1) || ((r->s.info[n] >> 8) >> (j >> 1) & 1u);
}

static inline uint32_t neighbour(const repair *r, uint32_t n, int j) {
    return (uint32_t)((ptrdiff_t)n + r->f->off[j]);
}

static int cmp_seed(const void *a, const void *b) {
    double x = ((const seed *)a)->v, y = ((const seed *)b)->v;
    return (x > y) - (x < y);
}

typedef bool (*visit_fn)(repair *r, uint32_t cell, uint64_t k);

/* Runs the ring from the seeds, bucket by bucket in increasing order,
** calling visit on each entry. Seeds enter the ring once their bucket is
** within RING of the current one (unfed seeds lie beyond every ring entry);
** entries pushed meanwhile lie within MAX_MOVE of it. Empties the seeds. */
static bool drive(repair *r, visit_fn visit) {
    seed_list *sl = &r->seeds;
    if (sl->n > 1) qsort(sl->a, sl->n, sizeof *sl->a, cmp_seed);
    size_t next = 0;
    uint64_t k = sl->n ? key_of(sl->a[0].v) : 0;
    for (;;) {
        for (; next < sl->n && key_of(sl->a[next].v) < k + RING; next++)
            if (!ring_push(r, sl->a[next].v, sl->a[next].cell)) return false;
        if (r->pending == 0) {
            if (next == sl->n) break;
            k = key_of(sl->a[next].v);
            continue;
        }
        k += queue_gap(&r->s.q, (uint32_t)(k & RING_MASK));
        /* Visits push only into later buckets, never into this slot. */
        bucket *b = &r->s.q.b[k & RING_MASK];
        for (uint32_t i = 0; i < b->count; i++)
            if (!visit(r, b->cells[i], k)) return false;
        r->pending -= b->count;
        b->count = 0;
    }
    sl->n = 0;
    return true;
}

/* Is value d of padded cell n still made, exactly, by some neighbour? */
static bool supported(const repair *r, uint32_t n, double d) {
    for (int j = 0; j < 8; j += r->step) {
        uint32_t u = neighbour(r, n, j);
        double v = r->s.dist[u];
        if (move_allowed(r, n, j) && usable(v) && v + move_weight(r, u, j) == d) return true;
    }
    return false;
}

/* Pass 1 (see above). A cell is examined once all cells of lower buckets
** are decided, and the neighbour that makes it lies in a lower bucket. */
static bool invalidate(repair *r, uint32_t n, uint64_t k) {
    double *dist = r->s.dist, d = dist[n];
    if (!usable(d) || d == 0.0 || key_of(d) != k || supported(r, n, d)) return true;
    dist[n] = DINF;
    if (!add_cell(r, &r->reset, n)) return false;
    for (int j = 0; j < 8; j += r->step) {
        uint32_t m = neighbour(r, n, j);
        double v = dist[m];
        if (usable(v) && key_of(v) > k && v <= d + MAX_MOVE && !ring_push(r, v, m)) return false;
    }
    return true;
}

/* Pass 2: settles cell u at bucket k and relaxes its neighbours. Cells that
** kept their value sit in no bucket, so every lowered cell is queued. */
static bool settle_moved(repair *r, uint32_t u, uint64_t k) {
    double *dist = r->s.dist, d = dist[u];
    if (!usable(d) || key_of(d) != k) return true; /* stale */
    if (!add_cell(r, &r->touched, u)) return false;
    for (int j = 0; j < 8; j += r->step) {
        uint32_t n = neighbour(r, u, j);
        double nd = d + move_weight(r, u, j);
        if (!move_allowed(r, u, j) || !(nd < dist[n])) continue; /* walls: -INFINITY */
        dist[n] = nd;
        if (!ring_push(r, nd, n)) return false;
    }
    return true;
}

/* r grown by `by` cells on every side, within the grid. */
static cell_rect grown(const qn_grid *g, cell_rect r, uint32_t by) {
    cell_rect o = {r.x0 > by ? r.x0 - by : 0, r.y0 > by ? r.y0 - by : 0,
                   r.x1 + by < g->width ? r.x1 + by : g->width,
                   r.y1 + by < g->height ? r.y1 + by : g->height};
    return o;
}

/* Walls follow the grid: a cell stamped to a wall holds -INFINITY; one
** opened from a wall holds INFINITY until pass 2 reaches it. */
static bool apply_walls(repair *r, cell_rect rc) {
    double *dist = r->s.dist;
    for (uint32_t y = rc.y0; y < rc.y1; y++)
        for (uint32_t i = (y + 1) * r->f->stride + rc.x0 + 1; i <= (y + 1) * r->f->stride + rc.x1;
             i++) {
            bool wall = cost_of(r->s.info, i) == WALL;
            if (wall && dist[i] != -DINF) {
                dist[i] = -DINF;
                if (!add_cell(r, &r->touched, i)) return false;
            } else if (!wall && dist[i] < 0.0) {
                dist[i] = DINF;
                if (!add_cell(r, &r->reset, i)) return false;
            }
        }
    return true;
}

/* Every reachable cell of rc as a seed at its current value. */
static bool seed_region(repair *r, cell_rect rc) {
    for (uint32_t y = rc.y0; y < rc.y1; y++)
        for (uint32_t i = (y + 1) * r->f->stride + rc.x0 + 1; i <= (y + 1) * r->f->stride + rc.x1;
             i++)
            if (usable(r->s.dist[i]) && !add_seed(r, r->s.dist[i], i)) return false;
    return true;
}

/* Goal cells open again (they were walls) go back to 0. */
static bool reopen_goals(repair *r) {
    const qn_grid_field *f = r->f;
    for (uint32_t i = 0; i < f->goal_count; i++) {
        uint32_t pi = padded_index(f->grid, f->goals[i]);
        if (cost_of(r->s.info, pi) == WALL || r->s.dist[pi] == 0.0) continue;
        r->s.dist[pi] = 0.0;
        if (!add_seed(r, 0.0, pi)) return false;
    }
    return true;
}

/* Each reset cell takes the best offer of its neighbours. */
static bool seed_reset(repair *r) {
    double *dist = r->s.dist;
    for (size_t i = 0; i < r->reset.n; i++) {
        uint32_t n = r->reset.a[i];
        double best = dist[n];
        for (int j = 0; j < 8; j += r->step) {
            uint32_t u = neighbour(r, n, j);
            double v = dist[u];
            if (move_allowed(r, n, j) && usable(v) && v + move_weight(r, u, j) < best)
                best = v + move_weight(r, u, j);
        }
        if (best < dist[n]) {
            dist[n] = best;
            if (!add_seed(r, best, n)) return false;
        }
    }
    return true;
}

/* Both flows of grid cell (x, y), as build_flow computes them. */
static void flow_cell(qn_grid_field *f, uint32_t x, uint32_t y) {
    size_t pi = (size_t)(y + 1) * f->stride + x + 1, i = (size_t)y * f->grid->width + x;
    double d = f->dist[pi];
    if (!usable(d) || d == 0.0) {
        f->dir[i] = QN_DIR_NONE;
        f->vec[i] = qn__v2(0, 0);
        return;
    }
    f->dir[i] = best_dir_at(f->dist + pi, f->grid->info + pi, f->off,
                            f->connectivity == QN_CONNECT_8);
    f->vec[i] = gradient_at(f->dist + pi, d, f->off[2]);
}

/* A dir value no flow has: marks a cell listed for new flows. */
#define FLOW_PENDING 0xFFu

/* Lists the cells of padded cell pi's 3x3 block (within the grid) for new
** flows, each once: a listed cell's dir holds FLOW_PENDING until redone. */
static bool list_around(repair *r, uint32_t pi) {
    qn_grid_field *f = r->f;
    uint32_t x = pi % f->stride - 1, y = pi / f->stride - 1;
    cell_rect one = {x, y, x + 1, y + 1}, b = grown(f->grid, one, 1);
    for (uint32_t yy = b.y0; yy < b.y1; yy++)
        for (uint32_t i = yy * f->grid->width + b.x0; i < yy * f->grid->width + b.x1; i++) {
            if (f->dir[i] == FLOW_PENDING) continue;
            f->dir[i] = FLOW_PENDING;
            if (!add_cell(r, &r->flows, i)) return false;
        }
    return true;
}

/* A cell's flows read its neighbours' values and costs and its own corner
** bits, so they are redone around every cell whose value changed (reset,
** walled or settled in pass 2). That covers the stamps too: every reachable
** cell within one of a stamp starts pass 2 and is settled, and a cell that
** is not reachable has no flow either way. */
static bool redo_flows(repair *r) {
    for (size_t i = 0; i < r->reset.n; i++)
        if (!list_around(r, r->reset.a[i])) return false;
    for (size_t i = 0; i < r->touched.n; i++)
        if (!list_around(r, r->touched.a[i])) return false;
    uint32_t w = r->f->grid->width;
    for (size_t i = 0; i < r->flows.n; i++) flow_cell(r->f, r->flows.a[i] % w, r->flows.a[i] / w);
    return true;
}

static bool repair_run(repair *r, const cell_rect *rects, uint32_t nr) {
    const qn_grid *g = r->f->grid;
    bool ok = true;
    for (uint32_t i = 0; i < nr && ok; i++) ok = apply_walls(r, rects[i]);
    for (uint32_t i = 0; i < nr && ok; i++) ok = seed_region(r, grown(g, rects[i], 1));
    ok = ok && drive(r, invalidate) && reopen_goals(r) && seed_reset(r);
    for (uint32_t i = 0; i < nr && ok; i++) ok = seed_region(r, grown(g, rects[i], 1));
    ok = ok && drive(r, settle_moved);
    return ok && (!r->f->dir || redo_flows(r));
}

static bool repair_field(qn_grid_field *f, const cell_rect *rects, uint32_t nr) {
    repair *r = qn__calloc(&f->alloc, 1, sizeof *r);
    if (!r) return false;
    init_search(&r->s, f);
    r->f = f;
    r->step = f->connectivity == QN_CONNECT_8 ? 1 : 2;
    bool ok = repair_run(r, rects, nr);
    queue_free(&r->s.q);
    qn__free(&f->alloc, r->seeds.a, r->seeds.cap * sizeof(seed));
    qn__free(&f->alloc, r->reset.a, r->reset.cap * sizeof(uint32_t));
    qn__free(&f->alloc, r->touched.a, r->touched.cap * sizeof(uint32_t));
    qn__free(&f->alloc, r->flows.a, r->flows.cap * sizeof(uint32_t));
    qn__free(&f->alloc, r, sizeof *r);
    return ok;
}

/* The stamps f has not seen, into rects; false when a rebuild is the better
** (or only) way: the journal lost some, they cover over a quarter of the
** grid, or the field stops early. */
static bool pending_rects(const qn_grid_field *f, cell_rect *rects, uint32_t *nr) {
    const qn_grid *g = f->grid;
    *nr = 0;
    if (f->broken || f->stop != QN_NONE || g->version - f->version > QN_GRID_JOURNAL) return false;
    size_t area = 0;
    for (uint64_t v = f->version + 1; v <= g->version; v++) {
        cell_rect rc = g->journal[v % QN_GRID_JOURNAL];
        rects[(*nr)++] = rc;
        area += (size_t)(rc.x1 - rc.x0) * (rc.y1 - rc.y0);
    }
    return area <= f->cells / 4;
}

/* A fresh build in place; false when out of memory. */
static bool rebuild(qn_grid_field *f) {
    init_dist(f->grid, f->dist);
    if (!integrate(f, f->goals, f->goal_count, f->stop)) return false;
    if (f->dir) build_flow(f);
    return true;
}

/* After a failed update: every cell unreachable, no directions. */
static void wipe(qn_grid_field *f) {
    init_dist(f->grid, f->dist);
    if (!f->dir) return;
    memset(f->dir, QN_DIR_NONE, f->cells);
    memset(f->vec, 0, f->cells * sizeof(qn_vec2));
}

qn_status qn_grid_field_update(qn_grid_field *field, qn_error *err) {
    qn__error_clear(err);
    if (!field) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL grid field");
    if (qn_grid_field_is_current(field)) return QN_OK;
    cell_rect rects[QN_GRID_JOURNAL];
    uint32_t nr;
    bool ok = pending_rects(field, rects, &nr) ? repair_field(field, rects, nr) : rebuild(field);
    if (!ok) {
        wipe(field);
        field->broken = true;
        return qn__fail(err, QN_E_NOMEM, QN_NONE,
                        "out of memory updating a %ux%u field; every cell reads unreachable",
                        field->grid->width, field->grid->height);
    }
    field->broken = false;
    field->version = field->grid->version;
    return QN_OK;
}

bool qn_grid_field_is_current(const qn_grid_field *field) {
    return field && !field->broken && field->version == field->grid->version;
}

/* ---- sampling ------------------------------------------------------------------ */

/* Is cell (x, y) inside the grid and not a wall? */
static bool open_cell(const qn_grid *g, int64_t x, int64_t y) {
    return x >= 0 && y >= 0 && x < (int64_t)g->width && y < (int64_t)g->height &&
           g->costs[(size_t)y * g->width + (size_t)x] != WALL;
}

/* Crossings of a vertical and a horizontal grid line closer than this (in
** cells along the move) count as a pass through the vertex between them;
** more where a position's float rounding is more (dir_ok). */
#define VERTEX_EPS 1e-4

/* Does the straight move from (px, py) by (dx, dy), in cells (|dx|, |dy| <=
** 1, starting in an open cell), stay in open cells, going from a cell to a
** diagonal neighbour only through an open orthogonal one, and past both of
** them when it passes (nearly) through their common vertex? The same rule
** as the octile field's corner rule. */
static bool move_clear(const qn_grid *g, double px, double py, double dx, double dy, double vtol) {
    int64_t cx = (int64_t)floor(px), cy = (int64_t)floor(py);
    int64_t nx = (int64_t)floor(px + dx), ny = (int64_t)floor(py + dy);
    if (nx == cx || ny == cy) return open_cell(g, nx, ny);
    if (!open_cell(g, nx, ny)) return false;
    double tx = ((double)(dx > 0.0 ? cx + 1 : cx) - px) / dx;
    double ty = ((double)(dy > 0.0 ? cy + 1 : cy) - py) / dy;
    if (fabs(tx - ty) < vtol) return open_cell(g, nx, cy) && open_cell(g, cx, ny);
    return tx < ty ? open_cell(g, nx, cy) : open_cell(g, cx, ny);
}

/* Value of cell (x, y) (inside the grid, or on its padding) in field f. */
static double value_at(const qn_grid_field *f, int64_t x, int64_t y) {
    return f->dist[(size_t)(y + 1) * f->stride + (size_t)(x + 1)];
}

/* Is every cell a clear move (in cells, as for move_clear) enters reachable
** and lower than d, the value of the cell it starts in? That is the cell
** beside, or on a move through a corner the cells on the way as well. */
static bool move_descends(const qn_grid_field *f, double px, double py, double dx, double dy,
                          double d, double vtol) {
    int64_t cx = (int64_t)floor(px), cy = (int64_t)floor(py);
    int64_t nx = (int64_t)floor(px + dx), ny = (int64_t)floor(py + dy);
    if (nx == cx && ny == cy) return true;
    double n = value_at(f, nx, ny);
    if (!(usable(n) && n < d)) return false;
    if (nx == cx || ny == cy) return true;
    double tx = ((double)(dx > 0.0 ? cx + 1 : cx) - px) / dx;
    double ty = ((double)(dy > 0.0 ? cy + 1 : cy) - py) / dy;
    double a = value_at(f, nx, cy), b = value_at(f, cx, ny);
    bool a_ok = usable(a) && a < d, b_ok = usable(b) && b < d;
    if (fabs(tx - ty) < vtol) return a_ok && b_ok;
    return tx < ty ? a_ok : b_ok;
}

/* Is a move of QN_GRID_SAFE_STEP cells along unit vector v from world
** point p, in cell (x, y), clear (see move_clear) and downhill (see
** move_descends), and is the cell the ray along v leaves (x, y) into lower
** (past two open cells through a corner; qn__grid_exit_cell)? */
static bool dir_ok(const qn_grid_field *f, qn_vec2 p, qn_vec2 v, uint32_t x, uint32_t y) {
    const qn_grid *g = f->grid;
    double px = ((double)p.x - (double)g->origin.x) / (double)g->cell_size;
    double py = ((double)p.y - (double)g->origin.y) / (double)g->cell_size;
    double r = (double)QN_GRID_SAFE_STEP, dx = r * (double)v.x, dy = r * (double)v.y;
    double d = value_at(f, x, y);
    /* A unit's position is a float: where it is far from the origin its
    ** next one rounds by more than VERTEX_EPS, and a move this test saw
    ** pass beside a vertex can end up through it (wall contacts in the sim
    ** 20,000 units out). Near vertices by two of those roundings count as
    ** through them. */
    double far = fmax(fabs((double)p.x), fabs((double)p.y));
    double vtol = fmax(VERTEX_EPS, 2.0 * (double)FLT_EPSILON * far / (double)g->cell_size);
    int64_t ex, ey;
    bool corner = qn__grid_exit_cell(px, py, v.x, v.y, x, y, &ex, &ey);
    double n = value_at(f, ex, ey);
    if (!(usable(n) && n < d)) return false;
    if (corner && !(open_cell(g, ex, y) && open_cell(g, x, ey))) return false;
    return move_clear(g, px, py, dx, dy, vtol) && move_descends(f, px, py, dx, dy, d, vtol);
}

/* The gradient of cell (x, y) for a unit at p, made safe: as it is when a
** move of QN_GRID_SAFE_STEP along it is clear and enters only cells of
** lower value, else the 8-direction flow, which is always clear (the cells
** it may enter within one cell are open by the corner rule). Sliding along
** the wall instead (the vector's clear axis component) was tried: on the
** MovingAI maps it changed no unit's walk, because when the flow is
** diagonal its three cells are open and a vector in the same quadrant is
** already clear. Without the downhill rule, central differences beside
** walls can point into a cell of equal value whose own gradient points
** back, and a unit shuttles between the two forever (two units on
** random512-10-0 did, and about one 16x16 grid in twenty with a quarter of
** its cells walls has such a pair). */
static qn_vec2 vector_at(const qn_grid_field *f, qn_vec2 p, uint32_t x, uint32_t y) {
    qn_vec2 v = qn_grid_field_vec(f, x, y);
    if ((v.x != 0.0f || v.y != 0.0f) && dir_ok(f, p, v, x, y)) return v;
    return qn_dir_vector(qn_grid_field_dir(f, x, y)); /* also on flat spots */
}

qn_status qn_grid_field_sample(const qn_grid_field *field, qn_flow_kind kind, qn_vec2 p,
                               uint32_t *cell_io, qn_vec2 *dir) {
    /* The cell is found in O(1) from p, so the hint in *cell_io is not needed. */
    if (cell_io) *cell_io = QN_NONE;
    if (dir) *dir = qn__v2(0, 0);
    if (!field || !dir || !qn__finite2(p) || (kind != QN_FLOW_DIR8 && kind != QN_FLOW_VECTOR))
        return QN_E_INVALID_ARG;
    const qn_grid *g = field->grid;
    uint32_t x, y;
    if (!cell_of(g, p, &x, &y)) return QN_E_OUTSIDE;
    if (cell_io) *cell_io = y * g->width + x;
    double d = field->dist[(y + 1) * field->stride + x + 1];
    if (d < 0.0) return QN_E_BLOCKED;
    if (d == DINF) return QN_E_UNREACHABLE;
    if (d == 0.0) return QN_AT_GOAL;
    *dir = kind == QN_FLOW_VECTOR ? vector_at(field, p, x, y)
                                  : qn_dir_vector(qn_grid_field_dir(field, x, y));
    return QN_OK;
}

qn_status qn_grid_field_sample_batch(const qn_grid_field *field, qn_flow_kind kind,
                                     const qn_vec2 *positions, qn_vec2 *dirs, uint8_t *status,
                                     uint32_t *cells, size_t count) {
    if (!field || !positions || !dirs) return QN_E_INVALID_ARG;
    for (size_t i = 0; i < count; i++) {
        uint32_t c = QN_NONE;
        qn_status st = qn_grid_field_sample(field, kind, positions[i], &c, &dirs[i]);
        if (status) status[i] = (uint8_t)st;
        if (cells) cells[i] = c;
    }
    return QN_OK;
}
