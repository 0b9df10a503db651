/*
** grid.c: grid mode. A byte cost field, an exact integration field built by
** a bucket-queue Dijkstra, the 8-direction and gradient flow fields, and the
** sampler that reads them.
**
** Layout. The search works on a padded copy of the cost field: a ring of wall
** cells around the grid, so neighbour offsets never need bounds checks. The
** integration values stay in that padded layout (stride width + 2). While the
** field is built, wall cells hold -INFINITY: a relaxation `new < dist[n]`
** then fails on a wall without reading its cost byte, and a diagonal's corner
** test reads the orthogonal neighbours' values it has already loaded. Readers
** map negative values back to INFINITY.
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
    uint8_t *padded; /* (width + 2) * (height + 2), walls on the ring */
    size_t padded_n;
};

struct qn_grid_field {
    qn_allocator alloc;
    const qn_grid *grid;
    qn_connectivity connectivity;
    uint32_t stride; /* width + 2 */
    double *dist;    /* padded layout; < 0 wall, INFINITY unreachable */
    uint8_t *dir;    /* width * height, or NULL when no flow was built */
    qn_vec2 *vec;    /* width * height, or NULL */
    size_t cells;    /* width * height */
};

/* Unit vectors in QN_DIR_* order: E, SE, S, SW, W, NW, N, NE (y down). */
#define H_ 0.70710678118654752f
static const qn_vec2 dir_vectors[9] = {{1, 0},   {H_, H_},  {0, 1},  {-H_, H_}, {-1, 0},
                                       {-H_, -H_}, {0, -1}, {H_, -H_}, {0, 0}};
static const int dir_dx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int dir_dy[8] = {0, 1, 1, 1, 0, -1, -1, -1};

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

/* Fills the padded copy: the costs inside a one-cell ring of walls. */
static void fill_padded(qn_grid *g) {
    uint32_t ps = g->width + 2;
    memset(g->padded, WALL, g->padded_n);
    for (uint32_t y = 0; y < g->height; y++)
        memcpy(g->padded + (size_t)(y + 1) * ps + 1, g->costs + (size_t)y * g->width, g->width);
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
    g->padded = g->costs ? qn__alloc(&a, g->padded_n) : NULL;
    if (!g->padded) {
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
    qn__free(&a, grid->padded, grid->padded_n);
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

/* Buckets are lists of fixed-size chunks from one pool. A settled bucket's
** chunks go straight back to the pool, so the few buckets in use at any
** time keep reusing the same, cache-warm memory, and the allocator sees a
** handful of calls per build instead of one array per bucket. */
#define CHUNK_ENTRIES 1022u /* a chunk is 4 KiB */
#define BLOCK_CHUNKS 8u    /* chunks per allocation */

typedef struct chunk {
    struct chunk *next;
    uint32_t count;
    uint32_t cell[CHUNK_ENTRIES]; /* padded indices */
} chunk;

typedef struct block {
    struct block *next;
    chunk c[BLOCK_CHUNKS];
} block;

typedef struct queue {
    const qn_allocator *alloc;
    chunk *head[RING];            /* newest chunk of each slot; NULL when empty */
    chunk *spare;                 /* the pool's free chunks */
    block *blocks;                /* every allocation, for freeing */
    uint64_t occupied[RING / 64]; /* bit s: slot s has entries */
    size_t pending;               /* entries in all slots */
} queue;

static void queue_free(queue *q) {
    while (q->blocks) {
        block *next = q->blocks->next;
        qn__free(q->alloc, q->blocks, sizeof(block));
        q->blocks = next;
    }
}

/* A chunk from the pool, allocating a block when it is empty; NULL when out
** of memory. */
static chunk *take_chunk(queue *q) {
    if (!q->spare) {
        block *b = qn__alloc(q->alloc, sizeof *b);
        if (!b) return NULL;
        b->next = q->blocks;
        q->blocks = b;
        for (uint32_t i = 0; i < BLOCK_CHUNKS; i++) {
            b->c[i].next = q->spare;
            q->spare = &b->c[i];
        }
    }
    chunk *c = q->spare;
    q->spare = c->next;
    c->count = 0;
    return c;
}

/* Adds cell to the bucket of `key` (the floor of its value). */
static QN__INLINE bool queue_push(queue *q, uint64_t key, uint32_t cell) {
    uint32_t s = (uint32_t)(key & RING_MASK);
    chunk *c = q->head[s];
    if (!c || c->count == CHUNK_ENTRIES) {
        chunk *n = take_chunk(q);
        if (!n) return false;
        n->next = c;
        q->head[s] = c = n;
    }
    c->cell[c->count++] = cell;
    q->occupied[s >> 6] |= (uint64_t)1 << (s & 63);
    q->pending++;
    return true;
}

/* Index of the lowest set bit of m (m != 0). */
static inline int lowest_bit(uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(m);
#else
    int z = 0;
    while (!(m & 1)) m >>= 1, z++;
    return z;
#endif
}

/* Distance (in slots, 0..RING-1) from slot s to the next occupied slot,
** circularly. The caller guarantees one exists (pending > 0). */
static uint32_t queue_gap(const queue *q, uint32_t s) {
    for (uint32_t step = 0; step <= RING; step += 64) {
        uint32_t at = (s + step) & RING_MASK;
        uint64_t w = q->occupied[at >> 6] >> (at & 63);
        if (at & 63) w |= q->occupied[((at >> 6) + 1) % (RING / 64)] << (64 - (at & 63));
        if (w) return step + (uint32_t)lowest_bit(w);
    }
    return 0; /* unreachable while pending > 0 */
}

/* ---- Dijkstra -------------------------------------------------------------- */

/* What one build needs: the field's arrays plus the per-cost move lengths. */
typedef struct search {
    queue q;
    double *dist;
    const uint8_t *cost; /* padded */
    ptrdiff_t ps;        /* padded stride */
    double orth[256], diag[256];
    bool eight;
} search;

/* Bucket key of a value: its floor. Values stay far below 2^63, and the
** signed conversion is a single instruction where the unsigned one is not. */
static inline uint64_t key_of(double d) { return (uint64_t)(int64_t)d; }

/* Lowers dist[n] from `old` to `nd` and queues n, unless it already sits
** in the bucket of nd (old < floor(nd) + 1; never when old is INFINITY). An
** entry left in a later bucket becomes stale. */
static QN__INLINE bool lower(queue *q, double *dist, uint32_t n, double old, double nd) {
    uint64_t key = key_of(nd);
    dist[n] = nd;
    if (old < (double)(key + 1)) return true;
    return queue_push(q, key, n);
}

/* Relaxes the neighbours of settled cell u (value d): each neighbour n that
** can move into u gets d + length * cost(u). `eight` is a constant in each
** caller, so the 4-connected search carries no diagonal code. */
static QN__INLINE bool relax(search *s, uint32_t u, double d, bool eight) {
    double *dist = s->dist;
    const double *p = dist + u;
    ptrdiff_t ps = s->ps;
    uint8_t c = s->cost[u];
    double wo = d + s->orth[c];
    double e = p[1], so = p[ps], w = p[-1], no = p[-ps];
    uint32_t un = (uint32_t)((ptrdiff_t)u - ps), us = (uint32_t)((ptrdiff_t)u + ps);
    if (wo < e && !lower(&s->q, dist, u + 1, e, wo)) return false;
    if (wo < so && !lower(&s->q, dist, us, so, wo)) return false;
    if (wo < w && !lower(&s->q, dist, u - 1, w, wo)) return false;
    if (wo < no && !lower(&s->q, dist, un, no, wo)) return false;
    if (!eight) return true;
    double wd = d + s->diag[c];
    double v;
    /* A diagonal needs both orthogonal cells passable (walls are < 0). On
    ** open ground all four are, and one test covers the four diagonals. */
    bool pe = e >= 0, pso = so >= 0, pw = w >= 0, pno = no >= 0;
    bool open = pe & pso & pw & pno;
    if (wd < (v = p[ps + 1]) && (open || (pe && pso)) && !lower(&s->q, dist, us + 1, v, wd))
        return false;
    if (wd < (v = p[ps - 1]) && (open || (pw && pso)) && !lower(&s->q, dist, us - 1, v, wd))
        return false;
    if (wd < (v = p[-ps - 1]) && (open || (pw && pno)) && !lower(&s->q, dist, un - 1, v, wd))
        return false;
    if (wd < (v = p[-ps + 1]) && (open || (pe && pno)) && !lower(&s->q, dist, un + 1, v, wd))
        return false;
    return true;
}

/* After an early exit: cells queued in later buckets hold tentative values;
** they read as unreachable. Cells of the current bucket are already final. */
static void forget_unsettled(search *s, uint64_t k) {
    for (uint32_t slot = 0; slot < RING; slot++) {
        if (slot == (uint32_t)(k & RING_MASK)) continue;
        for (const chunk *c = s->q.head[slot]; c; c = c->next) {
            for (uint32_t i = 0; i < c->count; i++) {
                double d = s->dist[c->cell[i]];
                if (d != DINF && key_of(d) > k) s->dist[c->cell[i]] = DINF;
            }
        }
    }
}

/* Settles the cells of bucket k (slot `slot`), returning its chunks to the
** pool. Returns 0 to go on, 1 when `stop` was settled, -1 when out of
** memory. Moves cost >= 1, so no relaxation lands in this slot meanwhile. */
static inline int settle(search *s, uint64_t k, uint32_t slot, uint32_t stop, bool eight) {
    chunk *c = s->q.head[slot];
    s->q.head[slot] = NULL;
    s->q.occupied[slot >> 6] &= ~((uint64_t)1 << (slot & 63));
    while (c) {
        for (uint32_t i = 0; i < c->count; i++) {
            uint32_t u = c->cell[i];
            double d = s->dist[u];
            if (key_of(d) != k) continue; /* stale: lowered to an earlier bucket */
            if (u == stop) return 1;
            if (!relax(s, u, d, eight)) return -1;
        }
        chunk *next = c->next;
        s->q.pending -= c->count;
        c->next = s->q.spare;
        s->q.spare = c;
        c = next;
    }
    return 0;
}

/* Runs the bucket queue until it is empty or `stop` (a padded index, or
** QN_NONE) is settled. Returns false when out of memory. */
static bool run(search *s, uint32_t stop) {
    uint64_t k = 0;
    while (s->q.pending > 0) {
        uint32_t slot = (uint32_t)(k & RING_MASK);
        uint32_t gap = queue_gap(&s->q, slot);
        k += gap;
        slot = (slot + gap) & RING_MASK;
        int r = s->eight ? settle(s, k, slot, stop, true) : settle(s, k, slot, stop, false);
        if (r < 0) return false;
        if (r > 0) {
            forget_unsettled(s, k);
            return true;
        }
    }
    return true;
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
        dist[i] = g->padded[i] == WALL ? -DINF : DINF;
}

static void init_search(search *s, const qn_grid_field *f) {
    memset(&s->q, 0, sizeof s->q);
    s->q.alloc = &f->alloc;
    s->dist = f->dist;
    s->cost = f->grid->padded;
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

/* The 8-direction flow of padded cell pi: the neighbour with the lowest
** (move cost + its value), so following the flow walks an optimal path; a
** diagonal is allowed only past two passable orthogonal cells. Near-ties
** prefer the neighbour with the lower value (fewer steps left). */
static uint8_t best_dir(const qn_grid_field *f, uint32_t pi) {
    const double *dist = f->dist;
    double d = dist[pi];
    if (!(d > 0.0) || d == DINF) return QN_DIR_NONE;
    const uint8_t *cost = f->grid->padded;
    ptrdiff_t ps = (ptrdiff_t)f->stride;
    int ndir = f->connectivity == QN_CONNECT_8 ? 8 : 4;
    double best = DINF, best_v = DINF;
    uint8_t dir = QN_DIR_NONE;
    for (int k = 0; k < 8; k += 8 / ndir) {
        uint32_t n = (uint32_t)((ptrdiff_t)pi + dir_dy[k] * ps + dir_dx[k]);
        double v = dist[n];
        if (!(v >= 0.0) || v == DINF) continue;
        if (k & 1) {
            if (cost[(ptrdiff_t)pi + dir_dx[k]] == WALL || cost[(ptrdiff_t)pi + dir_dy[k] * ps] == WALL)
                continue;
        }
        double t = v + (double)cost[n] * ((k & 1) ? SQRT2 : 1.0);
        double tol = 1e-12 * t;
        if (t < best - tol || (t <= best + tol && v < best_v)) {
            best = t;
            best_v = v;
            dir = (uint8_t)k;
        }
    }
    return dir;
}

/* Value of a neighbour for the gradient: its own, or the centre's when the
** neighbour is a wall, outside or unreachable. */
static double grad_value(double v, double centre) {
    return (v >= 0.0 && v != DINF) ? v : centre;
}

/* The normalised gradient of padded cell pi: x = left - right, y = up -
** down, so it points downhill; zero at goals, walls, unreachable cells and
** flat spots. */
static qn_vec2 gradient(const qn_grid_field *f, uint32_t pi) {
    const double *p = f->dist + pi;
    double d = *p;
    if (!(d > 0.0) || d == DINF) return qn__v2(0, 0);
    ptrdiff_t ps = (ptrdiff_t)f->stride;
    double gx = grad_value(p[-1], d) - grad_value(p[1], d);
    double gy = grad_value(p[-ps], d) - grad_value(p[ps], d);
    double len = sqrt(gx * gx + gy * gy);
    if (!(len > 0.0)) return qn__v2(0, 0);
    return qn__v2((float)(gx / len), (float)(gy / len));
}

static void build_flow(qn_grid_field *f) {
    const qn_grid *g = f->grid;
    for (uint32_t y = 0; y < g->height; y++) {
        for (uint32_t x = 0; x < g->width; x++) {
            size_t i = (size_t)y * g->width + x;
            uint32_t pi = (y + 1) * f->stride + x + 1;
            f->dir[i] = best_dir(f, pi);
            f->vec[i] = gradient(f, pi);
        }
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
