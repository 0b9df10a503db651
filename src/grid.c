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

#define WALL QN_CELL_WALL
#define RING 512u /* bucket ring size, a power of two > 360 */
#define RING_MASK (RING - 1u)
#define SQRT2 1.41421356237309504880
#define DINF ((double)INFINITY)

/* The search's inner functions must be inlined into its loop: called, they
** spill registers on every cell. */
#if defined(__GNUC__) || defined(__clang__)
#define QN__INLINE inline __attribute__((always_inline))
#else
#define QN__INLINE inline
#endif

struct qn_grid {
    qn_allocator alloc;
    uint32_t width, height;
    float cell_size;
    qn_vec2 origin;
    uint8_t *costs;  /* width * height, row-major */
    uint16_t *info;  /* padded: cost | corner bits << 8, walls on the ring */
    size_t padded_n;
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

qn_status qn_grid_create(const qn_grid_desc *desc, const qn_allocator *alloc, qn_grid **out,
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
    g->info = g->costs ? qn__alloc(&a, g->padded_n * sizeof(uint16_t)) : NULL;
    if (!g->info) {
        qn_grid_destroy(g);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory for a %ux%u grid",
                        desc->width, desc->height);
    }
    memcpy(g->costs, desc->costs, n);
    fill_padded(g);
    *out = g;
    return QN_OK;
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
        if (s->dist[pi] == 0.0) continue; /* goal listed twice */
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
    f->dist = qn__alloc(&f->alloc, f->grid->padded_n * sizeof(double));
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
    bool flow = !o.no_flow && !o.stop_enabled;
    bool ok = alloc_field_arrays(f, flow);
    if (ok) {
        init_dist(grid, f->dist);
        ok = integrate(f, goal_cells, goal_count,
                       o.stop_enabled ? padded_index(grid, o.stop_cell) : QN_NONE);
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
    size_t n = sizeof *field + field->grid->padded_n * sizeof(double);
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

/* ---- sampling ------------------------------------------------------------------ */

/* Direction of cell (x, y) for a unit that is neither at the goal nor stuck:
** the gradient when asked and not flat, else the 8-direction flow. */
static qn_vec2 flow_at(const qn_grid_field *f, qn_flow_kind kind, uint32_t x, uint32_t y) {
    if (kind == QN_FLOW_VECTOR) {
        qn_vec2 v = qn_grid_field_vec(f, x, y);
        if (v.x != 0.0f || v.y != 0.0f) return v;
    }
    return qn_dir_vector(qn_grid_field_dir(f, x, y));
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
    *dir = flow_at(field, kind, x, y);
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
