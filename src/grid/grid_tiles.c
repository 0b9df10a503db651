/*
** grid_tiles.c: hierarchical grid instances (flow-field tiles) for big
** maps: a destination answers the units that ask without a field over the
** whole grid.
**
** Per grid (qn_grid_tiles): the grid is cut into square sectors of S cells.
** Along each border between two sectors, a run of rows (or columns) whose
** cells are open on both sides is an entrance, cut into segments of at most
** SEG cells; each segment gives a pair of nodes, one cell either side at its
** middle. Per sector, the cost between each pair of its nodes inside the
** sector (a Dijkstra over its cells, with grid mode's moves: into a cell of
** cost c, c for a side step and c * sqrt 2 for a diagonal past two open
** cells).
**
** Per destination (qn_grid_tfield): a Dijkstra over the nodes from the
** goal's sector gives each node its cost to the goal through node cells.
** A sector's field is built the first time a unit asks in it: a Dijkstra
** over its cells seeded from the cells just outside it, across the
** segments of its nodes, each with the cost of the node across plus the
** walk along the segment to it (and from the goal when it is inside). Its
** 8-direction flow, gradient and values are kept and published with an
** atomic compare-and-swap, so many threads may sample one field: a thread
** that loses the race frees its copy. Memory grows with the sectors units
** visit.
**
** The one priority queue (core/heap.h) serves all three searches.
*/
#include "internal.h"
#include "core/nsearch.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#define SEG 8u /* cells per node segment along a border */
#define WALL 255u
#define SQRT2F 1.41421356f

/* A node: a cell beside a sector border, the segment of the border it
** stands for, and the node across. */
typedef struct tnode {
    uint32_t x, y;  /* its cell */
    uint32_t sec;   /* its sector */
    uint32_t part;  /* the node across the border */
    uint32_t lo, hi; /* the segment: along-border coordinates, inclusive */
    uint8_t side;   /* the border of its sector: 0 +x, 1 +y, 2 -x, 3 -y */
    uint8_t cost;   /* its cell's cost (the grid's, as of the build) */
} tnode;

struct qn_grid_tiles {
    qn_allocator alloc;
    const qn_grid *grid;
    uint64_t version;
    uint32_t w, h, S, sx, sy, nsec, nn;
    tnode *node;
    uint32_t *sstart; /* per sector: its nodes are node[sstart[s] .. sstart[s + 1]) */
    uint32_t *mstart; /* per sector: where its k * k costs start in dm */
    float *dm;        /* dm[mstart[s] + a * k + b]: node a to node b inside s */
    uint32_t *comp;   /* per node: its part of the node graph (the least node in it) */
    size_t bytes;
};

/* A sector's field: per cell of the sector (row-major, S x S, clipped at
** the grid's edge) its value, 8-direction flow and gradient. */
typedef struct tsector {
    uint32_t x0, y0, lw, lh;
    float *val;
    uint8_t *dir;
    qn_vec2 *vec;
    size_t bytes;
} tsector;

/* The search over the nodes runs from the goal only as far as sectors are
** asked for: A* aimed at the sector being built (octile distance to its
** rectangle, a consistent bound as every move costs at least its length),
** re-aimed at each new one (the open nodes' keys are redone and the heap
** rebuilt). A node taken out has its exact cost whatever the aim, so what
** one sector's build settled stays right for the next. Guarded by the
** search's lock (several threads may build sectors at once); a settled node's cost never
** changes again, so sector builds read them unlocked. */
struct qn_grid_tfield {
    qn_allocator alloc;
    const qn_grid_tiles *t;
    uint32_t goal;   /* goal cell */
    /* the node search (src/core/nsearch.h): per node its cost to the goal
    ** so far and heap position; the heap (keys in it) */
    qn__nsearch ns;
    float *d;
    uint32_t *pos;
    qn__hent *heap;
    float weight;    /* the bound's weight (1: exact costs; see qn_grid_tfield_opts) */
    _Atomic(tsector *) *sec;
    /* The goal block: the goal's sector and the (up to) eight round it,
    ** (core/nsearch.h's qn__sblock), share one field over all their cells,
    ** seeded at the goal and across the block's outer entrances. Within
    ** it values are the grid's own unless the way leaves the block: a cell
    ** a diagonal step from the goal across a sector's edge got 13.66
    ** (Boston_0_512, sectors of 32) from the entrance's node, not 1.41.
    ** Built when a unit first asks there (block). */
    qn__sblock bk;
    _Atomic(tsector *) block;
    _Atomic size_t bytes;
    uint32_t gcomp; /* the goal's part of the node graph; QN_NONE: it reaches no node */
};

/* Is sector s in f's goal block? */
static bool in_block(const qn_grid_tfield *f, uint32_t s) {
    return qn__sblock_has(&f->bk, s, f->t->sx);
}

/* The sectors field s covers, into out (at most 9), and how many: s
** alone, or with s QN_NONE the goal block's, row by row. */
static uint32_t field_sectors(const qn_grid_tfield *f, uint32_t s, uint32_t out[9]) {
    return qn__sblock_sectors(&f->bk, s, f->t->sx, out);
}

/* ---- a Dijkstra over a rectangle of cells ------------------------------------ */

/* The search domain: cells [x0, x1) x [y0, y1) are searched; a seed may
** also lie one cell outside (the ring), from where values flow in. Local
** index over the rectangle grown by one cell: (y - y0 + 1) * lw + x - x0 + 1. */
typedef struct local {
    const uint8_t *cost;
    uint32_t w, h;
    uint32_t x0, y0, x1, y1, lw, lh;
    float *val;     /* lw * lh, INFINITY: not reached */
    uint32_t *pos;
    qn__hent *heap;
    qn__heap q;
    uint8_t *open;  /* lw * lh: the cell is in the grid and not a wall */
    uint8_t *want;  /* NULL, or cells to stop after (all settled) */
    uint32_t wanted;
} local;

static uint32_t lidx(const local *L, int64_t x, int64_t y) {
    return (uint32_t)((y - (int64_t)L->y0 + 1) * L->lw + (x - (int64_t)L->x0 + 1));
}

/* Is (x, y), inside the domain or on its ring, an open cell of the grid? */
static bool open_cell(const local *L, int64_t x, int64_t y) { return L->open[lidx(L, x, y)] != 0; }

/* Room for a domain of up to S x S cells (a sector), or 3S x 3S (a goal
** block). */
static bool local_alloc(const qn_allocator *a, local *L, uint32_t S) {
    size_t n = (size_t)(S + 2) * (S + 2);
    L->val = qn__alloc(a, n * sizeof(float));
    L->pos = qn__alloc(a, n * sizeof(uint32_t));
    L->heap = qn__alloc(a, n * sizeof(qn__hent));
    L->open = qn__alloc(a, n);
    return L->val && L->pos && L->heap && L->open;
}

static void local_free(const qn_allocator *a, local *L, uint32_t S) {
    size_t n = (size_t)(S + 2) * (S + 2);
    qn__free(a, L->val, n * sizeof(float));
    qn__free(a, L->pos, n * sizeof(uint32_t));
    qn__free(a, L->heap, n * sizeof(qn__hent));
    qn__free(a, L->open, n);
}

/* Clears the values for a new search over the same domain. */
static void local_reset(local *L) {
    for (uint32_t i = 0; i < L->lw * L->lh; i++) L->val[i] = INFINITY, L->pos[i] = QN_NONE;
    L->q = (qn__heap){L->heap, 0, L->pos};
    L->want = NULL;
}

/* Sets the domain, the cells of sectors sx0..sx1 by sy0..sy1 (clipped to
** the grid), and its open cells, and clears the values. */
static void local_begin_sectors(local *L, const qn_grid_tiles *t, uint32_t sx0, uint32_t sy0,
                                uint32_t sx1, uint32_t sy1) {
    L->cost = qn_grid_costs(t->grid);
    L->w = t->w, L->h = t->h;
    L->x0 = sx0 * t->S, L->y0 = sy0 * t->S;
    L->x1 = (sx1 + 1) * t->S < t->w ? (sx1 + 1) * t->S : t->w;
    L->y1 = (sy1 + 1) * t->S < t->h ? (sy1 + 1) * t->S : t->h;
    L->lw = L->x1 - L->x0 + 2, L->lh = L->y1 - L->y0 + 2;
    for (uint32_t ly = 0; ly < L->lh; ly++) {
        int64_t y = (int64_t)L->y0 - 1 + ly;
        for (uint32_t lx = 0; lx < L->lw; lx++) {
            int64_t x = (int64_t)L->x0 - 1 + lx;
            L->open[ly * L->lw + lx] = x >= 0 && y >= 0 && x < L->w && y < L->h &&
                                       L->cost[(size_t)y * L->w + (size_t)x] != WALL;
        }
    }
    local_reset(L);
}

/* The same for sector s. */
static void local_begin(local *L, const qn_grid_tiles *t, uint32_t s) {
    local_begin_sectors(L, t, s % t->sx, s / t->sx, s % t->sx, s / t->sx);
}

/* Seeds cell (x, y) (inside, or on the ring) at value v. */
static void local_seed(local *L, int64_t x, int64_t y, float v) {
    uint32_t i = lidx(L, x, y);
    if (!(v < L->val[i])) return;
    L->val[i] = v;
    if (L->pos[i] == QN_NONE) qn__heap_push(&L->q, i, v);
    else qn__heap_lowered(&L->q, i, v);
}

static const int DX[8] = {1, 1, 0, -1, -1, -1, 0, 1}, DY[8] = {0, 1, 1, 1, 0, -1, -1, -1};

/* May a unit step from (x, y) in direction k (0..7, as QN_DIR_*)? Both
** cells open, and a diagonal passes two open cells. */
static bool step_ok(const local *L, int64_t x, int64_t y, int k) {
    if (!open_cell(L, x + DX[k], y + DY[k])) return false;
    return !(k & 1) || (open_cell(L, x + DX[k], y) && open_cell(L, x, y + DY[k]));
}

/* Dijkstra toward the seeds: a cell that steps into cell u gets
** val(u) + length * cost(u). Only cells inside the domain are relaxed. */
static void local_run(local *L) {
    while (L->q.n > 0) {
        uint32_t u = qn__heap_pop(&L->q);
        L->pos[u] = QN_NONE - 1; /* settled */
        if (L->want && L->want[u] && --L->wanted == 0) return;
        int64_t ux = (int64_t)(u % L->lw) + L->x0 - 1, uy = (int64_t)(u / L->lw) + L->y0 - 1;
        float cu = (float)L->cost[(size_t)uy * L->w + (size_t)ux], vu = L->val[u];
        for (int k = 0; k < 8; k++) {
            int64_t nx = ux - DX[k], ny = uy - DY[k]; /* n steps along k into u */
            if (nx < L->x0 || ny < L->y0 || nx >= L->x1 || ny >= L->y1) continue;
            if (!open_cell(L, nx, ny) || !step_ok(L, nx, ny, k)) continue;
            uint32_t n = lidx(L, nx, ny);
            if (L->pos[n] == QN_NONE - 1) continue;
            float v = vu + ((k & 1) ? SQRT2F : 1.0f) * cu;
            if (v < L->val[n]) {
                L->val[n] = v;
                if (L->pos[n] == QN_NONE) qn__heap_push(&L->q, n, v);
                else qn__heap_lowered(&L->q, n, v);
            }
        }
    }
}

/* ---- the sector graph -------------------------------------------------------------- */

typedef struct nodes {
    tnode *a;
    uint32_t n, cap;
} nodes;

static bool node_add(const qn_allocator *al, nodes *ns, tnode v) {
    if (ns->n == ns->cap) {
        uint32_t cap = ns->cap ? 2 * ns->cap : 1024;
        tnode *p = qn__realloc(al, ns->a, (size_t)ns->cap * sizeof(tnode), (size_t)cap * sizeof(tnode));
        if (!p) return false;
        ns->a = p, ns->cap = cap;
    }
    ns->a[ns->n++] = v;
    return true;
}

static uint32_t sector_of(const qn_grid_tiles *t, uint32_t cell) {
    uint32_t x = cell % t->w, y = cell / t->w;
    return (y / t->S) * t->sx + x / t->S;
}

/* The entrances across the border between cells (x, y) and (x + dx, y + dy)
** for the border's run of cells along (ax, ay), count cells long. */
static bool border_nodes(qn_grid_tiles *t, nodes *ns, uint32_t x, uint32_t y, int dx, int dy,
                         int ax, int ay, uint32_t count) {
    const uint8_t *c = qn_grid_costs(t->grid);
    uint8_t side = dx > 0 ? 0 : 1; /* the near cell's side: +x or +y */
    uint32_t run = 0;
    for (uint32_t i = 0; i <= count; i++) {
        bool ok = false;
        if (i < count) {
            uint32_t px = x + (uint32_t)ax * i, py = y + (uint32_t)ay * i;
            ok = c[py * t->w + px] != WALL && c[(py + (uint32_t)dy) * t->w + px + (uint32_t)dx] != WALL;
        }
        if (ok) {
            run++;
            continue;
        }
        /* The run [i - run, i) ends: segments of at most SEG cells. */
        for (uint32_t s0 = i - run; s0 < i; s0 += SEG) {
            uint32_t s1 = s0 + SEG < i ? s0 + SEG : i, m = (s0 + s1 - 1) / 2;
            uint32_t px = x + (uint32_t)ax * m, py = y + (uint32_t)ay * m;
            uint32_t along0 = ax ? x + s0 : y + s0, along1 = ax ? x + s1 - 1 : y + s1 - 1;
            uint32_t qx = px + (uint32_t)dx, qy = py + (uint32_t)dy;
            uint32_t ca = py * t->w + px, cb = qy * t->w + qx;
            tnode a = {px, py, sector_of(t, ca), ns->n + 1, along0, along1, side, c[ca]};
            tnode b = {qx, qy, sector_of(t, cb), ns->n, along0, along1, (uint8_t)(side + 2), c[cb]};
            if (!node_add(&t->alloc, ns, a) || !node_add(&t->alloc, ns, b)) return false;
        }
        run = 0;
    }
    return true;
}

/* Groups the nodes by sector (counting sort; partners renumbered). */
static bool group_nodes(qn_grid_tiles *t, nodes *ns) {
    t->nn = ns->n;
    t->sstart = qn__calloc(&t->alloc, (size_t)t->nsec + 1, sizeof(uint32_t));
    t->node = qn__alloc(&t->alloc, ((size_t)ns->n + 1) * sizeof(tnode));
    uint32_t *where = qn__alloc(&t->alloc, ((size_t)ns->n + 1) * sizeof(uint32_t));
    uint32_t *fill = qn__alloc(&t->alloc, ((size_t)t->nsec + 1) * sizeof(uint32_t));
    bool ok = t->sstart && t->node && where && fill;
    if (ok) {
        for (uint32_t i = 0; i < ns->n; i++) t->sstart[ns->a[i].sec + 1]++;
        for (uint32_t s = 0; s < t->nsec; s++) t->sstart[s + 1] += t->sstart[s];
        memcpy(fill, t->sstart, ((size_t)t->nsec + 1) * sizeof(uint32_t));
        for (uint32_t i = 0; i < ns->n; i++) where[i] = fill[ns->a[i].sec]++;
        for (uint32_t i = 0; i < ns->n; i++) {
            tnode v = ns->a[i];
            v.part = where[v.part];
            t->node[where[i]] = v;
        }
    }
    qn__free(&t->alloc, where, ((size_t)ns->n + 1) * sizeof(uint32_t));
    qn__free(&t->alloc, fill, ((size_t)t->nsec + 1) * sizeof(uint32_t));
    return ok;
}

/* Per sector, the cost from each of its nodes to each other inside it:
** dm[mstart[s] + b * k + a] is node a to node b (a run, so that the search
** from the goal reads the costs into one node in a row). Sectors are split
** over jobs, each with its own scratch. */
typedef struct cost_jobs {
    qn_grid_tiles *t;
    uint32_t jobs;
    _Atomic bool failed;
} cost_jobs;

static void cost_job(void *data, uint32_t job) {
    cost_jobs *cj = data;
    qn_grid_tiles *t = cj->t;
    local L = {0};
    if (!local_alloc(&t->alloc, &L, t->S)) {
        atomic_store(&cj->failed, true);
        if (L.val || L.pos || L.heap || L.open) local_free(&t->alloc, &L, t->S);
        return;
    }
    size_t n = (size_t)(t->S + 2) * (t->S + 2);
    uint8_t *want = qn__calloc(&t->alloc, n, 1);
    if (!want) {
        atomic_store(&cj->failed, true);
        local_free(&t->alloc, &L, t->S);
        return;
    }
    for (uint32_t s = job; s < t->nsec; s += cj->jobs) {
        uint32_t a0 = t->sstart[s], k = t->sstart[s + 1] - a0;
        if (k) local_begin(&L, t, s);
        for (uint32_t b = 0; b < k; b++) {
            local_reset(&L);
            /* Only the node cells' costs are wanted: stop once all are
            ** settled (a node cell counts once however many nodes share it). */
            L.want = want, L.wanted = 0;
            for (uint32_t a = 0; a < k; a++) {
                uint32_t i = lidx(&L, t->node[a0 + a].x, t->node[a0 + a].y);
                L.wanted += want[i] == 0;
                want[i] = 1;
            }
            local_seed(&L, t->node[a0 + b].x, t->node[a0 + b].y, 0.0f);
            local_run(&L);
            for (uint32_t a = 0; a < k; a++)
                want[lidx(&L, t->node[a0 + a].x, t->node[a0 + a].y)] = 0;
            L.want = NULL;
            float *row = &t->dm[t->mstart[s] + b * k];
            for (uint32_t a = 0; a < k; a++)
                row[a] = L.val[lidx(&L, t->node[a0 + a].x, t->node[a0 + a].y)];
        }
    }
    qn__free(&t->alloc, want, n);
    local_free(&t->alloc, &L, t->S);
}

static bool sector_costs(qn_grid_tiles *t) {
    uint64_t total = 0;
    t->mstart = qn__alloc(&t->alloc, ((size_t)t->nsec + 1) * sizeof(uint32_t));
    if (!t->mstart) return false;
    for (uint32_t s = 0; s < t->nsec; s++) {
        uint64_t k = t->sstart[s + 1] - t->sstart[s];
        t->mstart[s] = (uint32_t)total;
        total += k * k;
        if (total > UINT32_MAX) return false;
    }
    t->mstart[t->nsec] = (uint32_t)total;
    t->dm = qn__alloc(&t->alloc, ((size_t)total + 1) * sizeof(float));
    if (!t->dm) return false;
    cost_jobs cj = {t, qn__jobs_for(t->nsec, 8), false};
    qn__run_jobs(NULL, cj.jobs, cost_job, &cj); /* every job runs, on threads or not */
    return !atomic_load(&cj.failed);
}

/* The parts of the node graph: nodes joined by a finite cost inside a
** sector, and each node with the one across its border, into t->comp
** (union-find, each part named by its least node); false when out of
** memory. Finite costs inside a sector join whole classes (a walk one way
** is a walk back), so each node is joined to the first it reaches. */
static uint32_t comp_root(uint32_t *c, uint32_t i) {
    while (c[i] != i)
        i = c[i] = c[c[i]];
    return i;
}
static void comp_join(uint32_t *c, uint32_t a, uint32_t b) {
    a = comp_root(c, a), b = comp_root(c, b);
    if (a < b)
        c[b] = a;
    else
        c[a] = b;
}
static bool node_comps(qn_grid_tiles *t) {
    uint32_t *c = t->comp = qn__alloc(&t->alloc, ((size_t)t->nn + 1) * sizeof(uint32_t));
    if (!c) return false;
    for (uint32_t i = 0; i < t->nn; i++)
        c[i] = i;
    for (uint32_t s = 0; s < t->nsec; s++) {
        uint32_t a0 = t->sstart[s], k = t->sstart[s + 1] - a0;
        for (uint32_t b = 0; b < k; b++) {
            const float *row = &t->dm[t->mstart[s] + b * k];
            for (uint32_t a = 0; a < b; a++)
                if (row[a] < INFINITY) {
                    comp_join(c, a0 + a, a0 + b);
                    break;
                }
        }
    }
    for (uint32_t j = 0; j < t->nn; j++)
        comp_join(c, j, t->node[j].part);
    for (uint32_t j = 0; j < t->nn; j++)
        c[j] = comp_root(c, j);
    return true;
}

static void tiles_clear(qn_grid_tiles *t) {
    qn__free(&t->alloc, t->comp, ((size_t)t->nn + 1) * sizeof(uint32_t));
    qn__free(&t->alloc, t->node, ((size_t)t->nn + 1) * sizeof(tnode));
    qn__free(&t->alloc, t->sstart, ((size_t)t->nsec + 1) * sizeof(uint32_t));
    if (t->mstart) qn__free(&t->alloc, t->dm, ((size_t)t->mstart[t->nsec] + 1) * sizeof(float));
    qn__free(&t->alloc, t->mstart, ((size_t)t->nsec + 1) * sizeof(uint32_t));
    t->node = NULL, t->sstart = t->mstart = t->comp = NULL, t->dm = NULL, t->nn = 0;
}

static qn_status tiles_build(qn_grid_tiles *t, qn_error *err) {
    tiles_clear(t);
    nodes ns = {0};
    bool ok = true;
    for (uint32_t sy = 0; ok && sy < t->sy; sy++)
        for (uint32_t sx = 0; ok && sx < t->sx; sx++) {
            uint32_t x0 = sx * t->S, y0 = sy * t->S;
            uint32_t x1 = x0 + t->S < t->w ? x0 + t->S : t->w, y1 = y0 + t->S < t->h ? y0 + t->S : t->h;
            if (x1 < t->w) ok = border_nodes(t, &ns, x1 - 1, y0, 1, 0, 0, 1, y1 - y0);
            if (ok && y1 < t->h) ok = border_nodes(t, &ns, x0, y1 - 1, 0, 1, 1, 0, x1 - x0);
        }
    ok = ok && group_nodes(t, &ns) && sector_costs(t) && node_comps(t);
    qn__free(&t->alloc, ns.a, (size_t)ns.cap * sizeof(tnode));
    if (!ok) {
        tiles_clear(t);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (grid tiles)");
    }
    t->version = qn_grid_version(t->grid);
    t->bytes = sizeof *t + ((size_t)t->nn + 1) * sizeof(tnode) +
               2 * ((size_t)t->nsec + 1) * sizeof(uint32_t) +
               ((size_t)t->nn + 1) * sizeof(uint32_t) +
               ((size_t)t->mstart[t->nsec] + 1) * sizeof(float);
    return QN_OK;
}

qn_status qn_grid_tiles_create(const qn_grid *grid, uint32_t sector_cells,
                               const qn_allocator *alloc, qn_grid_tiles **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!grid || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL grid or out");
    if (sector_cells == 0) sector_cells = QN_GRID_TILE_DEFAULT;
    if (sector_cells < 4 || sector_cells > 256)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE,
                        "sector size %u cells: must be 4..256 (0: the default, %u)", sector_cells,
                        (unsigned)QN_GRID_TILE_DEFAULT);
    qn_allocator a = qn__allocator(alloc);
    qn_grid_tiles *t = qn__calloc(&a, 1, sizeof *t);
    if (!t) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (grid tiles)");
    t->alloc = a;
    t->grid = grid;
    t->w = qn_grid_width(grid), t->h = qn_grid_height(grid), t->S = sector_cells;
    t->sx = (t->w + t->S - 1) / t->S, t->sy = (t->h + t->S - 1) / t->S;
    t->nsec = t->sx * t->sy;
    qn_status st = tiles_build(t, err);
    if (st != QN_OK) {
        qn__free(&a, t, sizeof *t);
        return st;
    }
    *out = t;
    return QN_OK;
}

void qn_grid_tiles_destroy(qn_grid_tiles *tiles) {
    if (!tiles) return;
    qn_allocator a = tiles->alloc;
    tiles_clear(tiles);
    qn__free(&a, tiles, sizeof *tiles);
}

qn_status qn_grid_tiles_update(qn_grid_tiles *tiles, qn_error *err) {
    qn__error_clear(err);
    if (!tiles) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL tiles");
    if (tiles->version == qn_grid_version(tiles->grid)) return QN_OK;
    return tiles_build(tiles, err);
}

size_t qn_grid_tiles_bytes(const qn_grid_tiles *tiles) { return tiles ? tiles->bytes : 0; }
uint32_t qn_grid_tiles_sector_count(const qn_grid_tiles *tiles) { return tiles ? tiles->nsec : 0; }
uint32_t qn_grid_tiles_node_count(const qn_grid_tiles *tiles) { return tiles ? tiles->nn : 0; }

/* ---- a destination ---------------------------------------------------------------- */

/* The sector the search aims at, as the rectangle of its cells (inclusive). */
typedef struct aim_box {
    const tnode *node; /* the tiles' nodes */
    float weight;      /* the field's bound weight */
    int64_t x0, y0, x1, y1;
} aim_box;

static aim_box aim_at(const qn_grid_tfield *f, uint32_t s) {
    const qn_grid_tiles *t = f->t;
    int64_t x0 = (int64_t)(s % t->sx) * t->S, y0 = (int64_t)(s / t->sx) * t->S;
    return (aim_box){t->node, f->weight, x0, y0, x0 + t->S - 1, y0 + t->S - 1};
}

/* The bound from node n to the aimed sector: the octile distance from its
** cell to the sector's rectangle (every move costs at least its length).
** ctx is the aim_box (the sector is in it; what the bound reads is copied
** there, so the search's loop reads no field or tiles for it). */
static float bound_to(const void *ctx, uint32_t n, uint32_t s) {
    (void)s;
    const aim_box *a = ctx;
    const tnode *nd = &a->node[n];
    int64_t x = nd->x, y = nd->y;
    int64_t dx = x < a->x0 ? a->x0 - x : (x > a->x1 ? x - a->x1 : 0);
    int64_t dy = y < a->y0 ? a->y0 - y : (y > a->y1 ? y - a->y1 : 0);
    int64_t lo = dx < dy ? dx : dy, hi = dx < dy ? dy : dx;
    return a->weight * ((float)hi + (SQRT2F - 1.0f) * (float)lo);
}

/* Node j's row of its sector's matrix: the costs into j from each node of
** the sector. */
static const float *node_row(const qn_grid_tiles *t, uint32_t j) {
    uint32_t js = t->node[j].sec, a0 = t->sstart[js];
    return &t->dm[t->mstart[js] + (j - a0) * (t->sstart[js + 1] - a0)];
}

/* Settles the nodes across sector s's entrances (their costs are what its
** field is seeded from) that the goal can reach. Caller holds the lock.
** A node in another part of the node graph than the goal's is never
** reached: waiting for one settled every node there was (on a random map
** 35 % blocked, 4096 cells wide: 59 ms for the first samples of 1,000
** units, the whole graph each time). */
static void settle_for(qn_grid_tfield *f, uint32_t s) {
    const qn_grid_tiles *t = f->t;
    qn__nsearch *ns = &f->ns;
    aim_box box = aim_at(f, s);
    qn__nsearch_aim(ns, s, bound_to, &box);
    for (uint32_t i = t->sstart[s]; i < t->sstart[s + 1]; i++) {
        uint32_t want = t->node[i].part, j;
        if (t->comp[want] != f->gcomp) continue;
        while (!qn__nsearch_settled(ns, want) && (j = qn__nsearch_next(ns)) != QN__NS_NONE) {
            /* Into node j from the node across (a step into j's cell) and
            ** from the other nodes of j's sector. */
            float dj = f->d[j];
            uint32_t p = t->node[j].part;
            float vp = dj + (float)t->node[j].cost;
            uint32_t js = t->node[j].sec, a0 = t->sstart[js], k = t->sstart[js + 1] - a0;
            const float *row = node_row(t, j);
            /* The next node out is likely the heap's top now: its row of
            ** the matrix (a cache miss, mostly) is fetched meanwhile. */
            if (ns->q.n) QN__PREFETCH(node_row(t, ns->q.a[0].id));
            if (vp < f->d[p]) qn__nsearch_offer(ns, p, vp, bound_to(&box, p, s));
            /* The sector's nodes in groups of four: a mask, without
            ** branching, of those whose cost this lowers (few, and hard
            ** to predict), then offers to them (the offer skips settled
            ** nodes). An offer lowers only its own node's cost, which the
            ** mask has already read. */
            const float *dn = f->d + a0;
            uint32_t m0 = 0;
#if QN__HAVE_SSE2
            __m128 vdj = _mm_set1_ps(dj);
            for (; m0 + 4 <= k; m0 += 4) {
                __m128 v = _mm_add_ps(_mm_loadu_ps(row + m0), vdj);
                unsigned bits = (unsigned)_mm_movemask_ps(_mm_cmplt_ps(v, _mm_loadu_ps(dn + m0)));
                for (; bits; bits &= bits - 1u) {
                    uint32_t m = m0 + qn__ctz32(bits);
                    qn__nsearch_offer(ns, a0 + m, row[m] + dj, bound_to(&box, a0 + m, s));
                }
            }
#endif
            for (; m0 < k; m0 += 4) {
                uint32_t bits = 0, end = k - m0 < 4 ? k - m0 : 4;
                for (uint32_t m = 0; m < end; m++)
                    bits |= (uint32_t)(row[m0 + m] + dj < dn[m0 + m]) << m;
                for (uint32_t m = m0; bits; bits >>= 1, m++)
                    if (bits & 1u)
                        qn__nsearch_offer(ns, a0 + m, row[m] + dj, bound_to(&box, a0 + m, s));
            }
        }
    }
}

qn_status qn_grid_tfield_create(const qn_grid_tiles *tiles, uint32_t goal_cell,
                                const qn_grid_tfield_opts *opts, const qn_allocator *alloc,
                                qn_grid_tfield **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!tiles || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL tiles or out");
    float weight = opts && opts->search_weight != 0.0f ? opts->search_weight : 1.0f;
    if (!(weight >= 1.0f && weight <= 4.0f))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "search weight %g: must be 1..4 (0: 1)",
                        (double)weight);
    const qn_grid_tiles *t = tiles;
    if (t->version != qn_grid_version(t->grid))
        return qn__fail(err, QN_E_MISMATCH, QN_NONE, "the grid changed: qn_grid_tiles_update first");
    if (goal_cell >= t->w * t->h)
        return qn__fail(err, QN_E_INVALID_ARG, goal_cell, "goal cell %u outside the %ux%u grid",
                        goal_cell, t->w, t->h);
    if (qn_grid_costs(t->grid)[goal_cell] == WALL)
        return qn__fail(err, QN_E_BLOCKED, goal_cell, "goal cell (%u, %u) is a wall",
                        goal_cell % t->w, goal_cell / t->w);
    qn_allocator a = qn__allocator(alloc);
    qn_grid_tfield *f = qn__calloc(&a, 1, sizeof *f);
    /* Its allocator and tiles first: a failure below destroys it with them. */
    if (f) f->alloc = a, f->t = t;
    local L = {0};
    size_t nn = (size_t)t->nn + 1;
    bool ok = f && local_alloc(&a, &L, t->S);
    if (ok) {
        f->goal = goal_cell, f->weight = weight;
        f->bk = qn__sblock_around(sector_of(t, goal_cell), t->sx, t->sy);
        atomic_init(&f->block, NULL);
        f->d = qn__alloc(&a, nn * sizeof(float));
        f->pos = qn__alloc(&a, nn * sizeof(uint32_t));
        f->heap = qn__alloc(&a, nn * sizeof(qn__hent));
        f->sec = qn__calloc(&a, t->nsec, sizeof *f->sec);
        ok = f->d && f->pos && f->heap && f->sec;
    }
    if (ok && !qn__nsearch_lock_init(&f->ns)) ok = false;
    if (ok) {
        size_t per_node = sizeof(float) + sizeof(uint32_t) + sizeof(qn__hent);
        atomic_init(&f->bytes, sizeof *f + nn * per_node + (size_t)t->nsec * sizeof *f->sec);
        /* The goal's sector: from the goal to its nodes, the search's start. */
        uint32_t gs = sector_of(t, goal_cell);
        local_begin(&L, t, gs);
        local_seed(&L, goal_cell % t->w, goal_cell / t->w, 0.0f);
        local_run(&L);
        qn__nsearch_start(&f->ns, f->d, f->pos, f->heap, t->nn, gs);
        f->gcomp = QN_NONE;
        for (uint32_t i = t->sstart[gs]; i < t->sstart[gs + 1]; i++)
            if (qn__nsearch_offer(&f->ns, i, L.val[lidx(&L, t->node[i].x, t->node[i].y)], 0.0f))
                f->gcomp = t->comp[i];
    }
    if (L.val || L.pos || L.heap || L.open) local_free(&a, &L, t->S);
    if (!ok) {
        qn_grid_tfield_destroy(f);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (tile field)");
    }
    *out = f;
    return QN_OK;
}

static void sector_free(const qn_allocator *a, tsector *s) {
    if (!s) return;
    size_t n = (size_t)s->lw * s->lh;
    qn__free(a, s->val, n * sizeof(float));
    qn__free(a, s->dir, n);
    qn__free(a, s->vec, n * sizeof(qn_vec2));
    qn__free(a, s, sizeof *s);
}

void qn_grid_tfield_destroy(qn_grid_tfield *field) {
    if (!field) return;
    qn_allocator a = field->alloc;
    const qn_grid_tiles *t = field->t;
    size_t nn = t ? (size_t)t->nn + 1 : 0;
    if (field->sec) {
        for (uint32_t s = 0; s < t->nsec; s++) sector_free(&a, atomic_load(&field->sec[s]));
    }
    sector_free(&a, atomic_load(&field->block));
    qn__nsearch_lock_free(&field->ns);
    qn__free(&a, field->sec, (size_t)t->nsec * sizeof *field->sec);
    qn__free(&a, field->d, nn * sizeof(float));
    qn__free(&a, field->pos, nn * sizeof(uint32_t));
    qn__free(&a, field->heap, nn * sizeof(qn__hent));
    qn__free(&a, field, sizeof *field);
}

uint32_t qn_grid_tfield_nodes_settled(const qn_grid_tfield *field) {
    if (!field) return 0;
    qn_grid_tfield *mf = (qn_grid_tfield *)(uintptr_t)field; /* its search state is its own */
    return qn__nsearch_settled_count(&mf->ns);
}

size_t qn_grid_tfield_bytes(const qn_grid_tfield *field) {
    return field ? atomic_load(&((qn_grid_tfield *)(uintptr_t)field)->bytes) : 0;
}

/* Seeds the ring cells across node i's segment (node i in the sector being
** built, its partner across at cost d): each at d plus the walk along the
** segment, on the far side, to the partner's cell. */
static void seed_segment(local *L, const qn_grid_tiles *t, const tnode *ni, float d) {
    const tnode *np = &t->node[ni->part];
    int64_t px = np->x, py = np->y;
    bool along_y = (ni->side & 1) == 0; /* an x border: the segment runs along y */
    int64_t m = along_y ? py : px;
    const uint8_t *cost = qn_grid_costs(t->grid);
    for (int64_t a = ni->lo; a <= ni->hi; a++) {
        float walk = 0.0f;
        int64_t step = a < m ? 1 : -1;
        for (int64_t b = a; b != m; b += step)
            walk += (float)cost[(size_t)(along_y ? b + step : py) * t->w + (size_t)(along_y ? px : b + step)];
        local_seed(L, along_y ? px : a, along_y ? a : py, d + walk);
    }
}

/* Builds sector s's field, or with s QN_NONE the goal block's; NULL when
** out of memory. */
static tsector *sector_build(const qn_grid_tfield *f, uint32_t s) {
    const qn_grid_tiles *t = f->t;
    local L = {0};
    uint32_t span = s == QN_NONE ? 3 * t->S : t->S;
    tsector *sc = qn__calloc(&f->alloc, 1, sizeof *sc);
    if (!sc || !local_alloc(&f->alloc, &L, span)) {
        qn__free(&f->alloc, sc, sizeof *sc);
        if (L.val || L.pos || L.heap || L.open) local_free(&f->alloc, &L, span);
        return NULL;
    }
    uint32_t sec[9] = {0}, ns = field_sectors(f, s, sec);
    local_begin_sectors(&L, t, sec[0] % t->sx, sec[0] / t->sx, sec[ns - 1] % t->sx,
                        sec[ns - 1] / t->sx);
    sc->x0 = L.x0, sc->y0 = L.y0, sc->lw = L.x1 - L.x0, sc->lh = L.y1 - L.y0;
    if (s == QN_NONE || sector_of(t, f->goal) == s)
        local_seed(&L, f->goal % t->w, f->goal / t->w, 0.0f);
    /* across the entrances of the domain's edge (a block's inner ones are
    ** inside it) */
    for (uint32_t m = 0; m < ns; m++)
        for (uint32_t i = t->sstart[sec[m]]; i < t->sstart[sec[m] + 1]; i++) {
            uint32_t ps = t->node[t->node[i].part].sec;
            if (qn__sblock_covers(&f->bk, s, ps, t->sx)) continue;
            float d = f->d[t->node[i].part];
            if (d < INFINITY) seed_segment(&L, t, &t->node[i], d);
        }
    local_run(&L);
    size_t n = (size_t)sc->lw * sc->lh;
    sc->val = qn__alloc(&f->alloc, n * sizeof(float));
    sc->dir = qn__alloc(&f->alloc, n);
    sc->vec = qn__alloc(&f->alloc, n * sizeof(qn_vec2));
    if (!sc->val || !sc->dir || !sc->vec) {
        local_free(&f->alloc, &L, span);
        sector_free(&f->alloc, sc);
        return NULL;
    }
    for (uint32_t y = L.y0; y < L.y1; y++)
        for (uint32_t x = L.x0; x < L.x1; x++) {
            size_t o = (size_t)(y - L.y0) * sc->lw + (x - L.x0);
            float v = L.val[lidx(&L, x, y)];
            sc->val[o] = open_cell(&L, x, y) ? v : -INFINITY;
            sc->dir[o] = QN_DIR_NONE;
            sc->vec[o] = qn__v2(0.0f, 0.0f);
            if (!(v < INFINITY) || v == 0.0f) continue;
            /* The step with the least move plus value (a diagonal a hair
            ** dearer, as grid fields prefer straight steps on ties). */
            float best = INFINITY;
            for (int k = 0; k < 8; k++) {
                if (!step_ok(&L, x, y, k)) continue;
                int64_t nx = (int64_t)x + DX[k], ny = (int64_t)y + DY[k];
                if (nx < (int64_t)L.x0 - 1 || ny < (int64_t)L.y0 - 1 || nx > L.x1 || ny > L.y1) continue;
                float vn = L.val[lidx(&L, nx, ny)];
                float cu = (float)L.cost[(size_t)ny * L.w + (size_t)nx];
                float tv = vn + ((k & 1) ? SQRT2F * 1.000001f : 1.0f) * cu;
                if (tv < best) best = tv, sc->dir[o] = (uint8_t)k;
            }
            /* The gradient (left minus right, up minus down), where it
            ** goes downhill. */
            float c = v, gx, gy;
            float l = L.val[lidx(&L, x - 1, y)];
            float r = L.val[lidx(&L, x + 1, y)], u = L.val[lidx(&L, x, y - 1)], dn = L.val[lidx(&L, x, y + 1)];
            l = l >= 0.0f && l < INFINITY ? l : c, r = r >= 0.0f && r < INFINITY ? r : c;
            u = u >= 0.0f && u < INFINITY ? u : c, dn = dn >= 0.0f && dn < INFINITY ? dn : c;
            gx = l - r, gy = u - dn;
            float len = sqrtf(gx * gx + gy * gy);
            if (len > 0.0f) sc->vec[o] = qn__v2(gx / len, gy / len);
        }
    sc->bytes = sizeof *sc + n * (sizeof(float) + 1 + sizeof(qn_vec2));
    local_free(&f->alloc, &L, span);
    return sc;
}

static void settle_step(void *f, uint32_t s) { settle_for(f, s); }

/* The node search as far as sector s needs, under the search's lock. */
static void settle_locked(const qn_grid_tfield *f, uint32_t s) {
    qn_grid_tfield *mf = (qn_grid_tfield *)(uintptr_t)f; /* its search state is its own */
    (void)qn__nsearch_locked(&mf->ns, settle_step, mf, s, true);
}

/* Where sector s's field is published: its own slot, or the goal block's. */
static _Atomic(tsector *) *sector_slot(const qn_grid_tfield *f, uint32_t s) {
    qn_grid_tfield *mf = (qn_grid_tfield *)(uintptr_t)f; /* the cache is the field's own */
    return in_block(f, s) ? &mf->block : &mf->sec[s];
}

/* Sector s's field (the goal block's for a sector in it), built on first
** use; NULL when out of memory. */
static const tsector *sector_get(const qn_grid_tfield *f, uint32_t s) {
    qn_grid_tfield *mf = (qn_grid_tfield *)(uintptr_t)f; /* the cache is the field's own */
    _Atomic(tsector *) *slot = sector_slot(f, s);
    tsector *sc = atomic_load_explicit(slot, memory_order_acquire);
    if (sc) return sc;
    uint32_t fs = in_block(f, s) ? QN_NONE : s, sec[9], ns = field_sectors(f, fs, sec);
    for (uint32_t i = 0; i < ns; i++)
        settle_locked(f, sec[i]); /* the entrances of them all */
    tsector *mine = sector_build(f, fs);
    if (!mine) return NULL;
    tsector *none = NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &none, mine, memory_order_acq_rel,
                                                memory_order_acquire)) {
        atomic_fetch_add(&mf->bytes, mine->bytes);
        return mine;
    }
    sector_free(&f->alloc, mine); /* another thread's copy won */
    return none;
}


qn_status qn_grid_tfield_prepare(const qn_grid_tfield *field, const qn_vec2 *positions,
                                 size_t count) {
    if (!field || (count && !positions)) return QN_E_INVALID_ARG;
    const qn_grid_tiles *t = field->t;
    if (t->version != qn_grid_version(t->grid)) return QN_E_MISMATCH;
    /* A batch's new sectors nearest the goal first: the search toward a
    ** far one then passes through nodes a near one settled. */
    uint32_t sec[256];
    float dist[256];
    int64_t gx = field->goal % t->w, gy = field->goal / t->w;
    for (size_t done = 0; done < count;) {
        size_t part = count - done < 4096 ? count - done : 4096;
        uint32_t ns = 0;
        for (size_t i = done; i < done + part && ns < 256; i++) {
            uint32_t x, y;
            if (qn_grid_locate(t->grid, positions[i], &x, &y) != QN_OK) continue;
            uint32_t s = sector_of(t, y * t->w + x);
            if (atomic_load_explicit(sector_slot(field, s), memory_order_acquire)) continue;
            bool seen = false;
            for (uint32_t k = ns; k-- > 0 && !seen;) seen = sec[k] == s;
            if (seen) continue;
            int64_t dx = (int64_t)x - gx, dy = (int64_t)y - gy;
            float d = (float)(dx * dx + dy * dy);
            uint32_t k = ns++;
            for (; k > 0 && dist[k - 1] > d; k--) sec[k] = sec[k - 1], dist[k] = dist[k - 1];
            sec[k] = s, dist[k] = d;
        }
        for (uint32_t i = 0; i < ns; i++)
            if (!sector_get(field, sec[i])) return QN_E_NOMEM;
        if (ns < 256) done += part;
    }
    return QN_OK;
}

/* Value of cell (x, y) in sector field sc; -1 (a wall, or unknown) outside
** the sector. */
static float sector_value(const tsector *sc, int64_t x, int64_t y) {
    if (x < (int64_t)sc->x0 || y < (int64_t)sc->y0 || x >= (int64_t)sc->x0 + sc->lw ||
        y >= (int64_t)sc->y0 + sc->lh)
        return -1.0f;
    return sc->val[(size_t)(y - sc->y0) * sc->lw + (size_t)(x - sc->x0)];
}

/* Does the ray from p along unit g leave cell (x, y), of value v, into a
** cell of sector field sc that is open and lower than v, and, through the
** cell's corner, past two open cells (qn__grid_exit_cell)? */
static bool exit_lower(const qn_grid_tiles *t, const tsector *sc, qn_vec2 p, qn_vec2 g, uint32_t x,
                       uint32_t y, float v) {
    qn_vec2 o = qn_grid_origin(t->grid);
    double cs = (double)qn_grid_cell_size(t->grid);
    int64_t ex, ey;
    double px = ((double)p.x - (double)o.x) / cs, py = ((double)p.y - (double)o.y) / cs;
    bool corner = qn__grid_exit_cell(px, py, g.x, g.y, x, y, &ex, &ey);
    float n = sector_value(sc, ex, ey);
    if (!(n >= 0.0f && n < v)) return false;
    return !corner || (sector_value(sc, ex, y) >= 0.0f && sector_value(sc, x, ey) >= 0.0f);
}

qn_status qn_grid_tfield_sample(const qn_grid_tfield *field, qn_flow_kind kind, qn_vec2 p,
                                uint32_t *cell_io, qn_vec2 *dir) {
    if (cell_io) *cell_io = QN_NONE;
    if (dir) *dir = qn__v2(0.0f, 0.0f);
    if (!field || !dir || !qn__finite2(p) || (kind != QN_FLOW_DIR8 && kind != QN_FLOW_VECTOR))
        return QN_E_INVALID_ARG;
    const qn_grid_tiles *t = field->t;
    if (t->version != qn_grid_version(t->grid)) return QN_E_MISMATCH;
    uint32_t x, y;
    if (qn_grid_locate(t->grid, p, &x, &y) != QN_OK) return QN_E_OUTSIDE;
    uint32_t cell = y * t->w + x;
    if (cell_io) *cell_io = cell;
    const tsector *sc = sector_get(field, sector_of(t, cell));
    if (!sc) return QN_E_NOMEM;
    size_t o = (size_t)(y - sc->y0) * sc->lw + (x - sc->x0);
    float v = sc->val[o];
    if (v < 0.0f) return QN_E_BLOCKED;
    if (!(v < INFINITY)) return QN_E_UNREACHABLE;
    if (v == 0.0f) return QN_AT_GOAL;
    qn_vec2 d8 = qn_dir_vector(sc->dir[o]);
    *dir = d8;
    if (kind == QN_FLOW_DIR8) return QN_OK;
    /* The gradient, unless the cell its ray leaves this one into is outside
    ** the sector, a wall or no lower (through a corner: or either cell
    ** beside it a wall), or a safe step along it leaves the sector, enters
    ** a wall or a cell no lower, or cuts a corner: then the 8-direction
    ** flow. The first test is the same for every point of the cell on one
    ** ray: a gradient beside the sector's edge (worked out with the cells
    ** outside it taken as level) can point out of the sector, and a unit
    ** that took it from the cell's middle and the flow nearer the edge
    ** went back and forth for ever. */
    qn_vec2 g = sc->vec[o];
    if (g.x == 0.0f && g.y == 0.0f) return QN_OK;
    if (!exit_lower(t, sc, p, g, x, y, v)) return QN_OK;
    qn_vec2 q = qn__add(p, qn__scale(g, QN_GRID_SAFE_STEP * qn_grid_cell_size(t->grid)));
    uint32_t qx, qy;
    if (qn_grid_locate(t->grid, q, &qx, &qy) != QN_OK) return QN_OK;
    if (qx != x || qy != y) { /* (outside the sector, sector_value is -1) */
        float vq = sector_value(sc, qx, qy);
        if (!(vq >= 0.0f && vq < v)) return QN_OK;
        bool diagonal = qx != x && qy != y;
        if (diagonal && (sector_value(sc, qx, y) < 0.0f || sector_value(sc, x, qy) < 0.0f))
            return QN_OK;
    }
    *dir = g;
    return QN_OK;
}

double qn_grid_tfield_cost(const qn_grid_tfield *field, uint32_t x, uint32_t y) {
    if (!field) return (double)NAN;
    const qn_grid_tiles *t = field->t;
    if (x >= t->w || y >= t->h || t->version != qn_grid_version(t->grid)) return (double)NAN;
    const tsector *sc = sector_get(field, sector_of(t, y * t->w + x));
    if (!sc) return (double)NAN;
    float v = sc->val[(size_t)(y - sc->y0) * sc->lw + (x - sc->x0)];
    return v < 0.0f ? -(double)INFINITY : (double)v;
}

qn_status qn_grid_tfield_sample_batch(const qn_grid_tfield *field, qn_flow_kind kind,
                                      const qn_vec2 *positions, qn_vec2 *dirs, uint8_t *status,
                                      uint32_t *cells, size_t count) {
    if (!field || !positions || !dirs) return QN_E_INVALID_ARG;
    /* The batch's new sectors first, nearest the goal first; a sector that
    ** cannot be built then reports QN_E_NOMEM below. */
    (void)qn_grid_tfield_prepare(field, positions, count);
    for (size_t i = 0; i < count; i++) {
        uint32_t c = QN_NONE;
        qn_status st = qn_grid_tfield_sample(field, kind, positions[i], &c, &dirs[i]);
        if (status) status[i] = (uint8_t)st;
        if (cells) cells[i] = c;
    }
    return QN_OK;
}
