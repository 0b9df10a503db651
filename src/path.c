/*
** path.c: point-to-point paths and line of sight.
**
** Cost. A path query runs A* over the same graph as an instance (field.c):
** nodes are portals, plus one node for the goal point. The start point
** reaches each open portal of its quad for the distance to the portal's mid
** point times the quad's cost; inside a quad, portal to portal costs the
** distance between mid points times the quad's cost; a portal of the goal
** quad reaches the goal node for its distance to the goal point times that
** quad's cost. The heuristic is the straight distance to the goal times the
** lowest quad cost, which is consistent, so a node is settled once.
**
** Corridor. Mid points are a coarse stand-in for where a path crosses a
** long portal, so the corridor of that search can go round the wrong side
** of a wall. When every open quad costs the same, the corridor comes from an
** exact any-angle search instead: its states are a root (the start, or a
** corner the path bends at) and an interval of a portal visible from it;
** expanding one projects the interval across the next quad, onto the parts
** of its boundary seen from the root, and, behind a corner at an end of the
** interval, onto the parts seen only from that corner (a new root). The
** heuristic is the length of the shortest line from the root through the
** interval to the goal, so the first goal state taken from the open list
** ends a shortest path. With differing costs the cost search's corridor is
** used.
**
** Waypoints. The corridor is string-pulled with the funnel algorithm. Each
** portal end point is a circle of the agent's radius (a hair's width for a
** point agent) that the path keeps on one side: the funnel compares the
** directions of tangent lines instead of rays, and the polyline goes round
** each corner it bends at with a few segments just outside that circle. So
** the crossing of every portal stays `radius` away from its end points, as
** the sampler's inset does, and corners are not cut closer than the radius.
**
** All scratch lives in the qn_pathfinder and is reset per query by
** generation stamps, so a query touches only what it explores. Only the
** any-angle search's node pool grows, and keeps its size between queries.
*/
#include "internal.h"

#include <float.h>
#include <stdlib.h>

#define CLOSED (QN_NONE - 1u)
#define SIDE_BIT 0x80000000u
#define PI_F 3.14159265358979f
#define START_ROOT (QN_NONE - 1u) /* root id of the start point */

/* A funnel vertex: a circle of radius r around k that the path keeps on its
** left (side +1) or right (side -1), or a plain point (side 0, r 0). */
typedef struct fvert {
    qn_vec2 k;
    float r;
    float side;
} fvert;

/* An any-angle search state: root r sees the interval from R (right) to L
** (left) of sub-edge `sub` of quad `quad`, which it is about to enter. A
** goal state has quad QN_NONE. */
typedef struct anode {
    qn_vec2 r, L, R;
    float g, f;
    uint32_t parent, quad, sub, rvid;
} anode;

struct qn_pathfinder {
    qn_allocator alloc;
    const qn_mesh *mesh;
    uint32_t np, nq;   /* portals (node np is the goal point) and quads */
    float hscale;      /* lowest open quad cost: the heuristic's factor */
    bool uniform;      /* every open quad costs the same */
    uint64_t hversion; /* mesh version hscale and uniform were taken at */
    uint32_t gen;      /* generation of the current query */
    uint32_t heap_n;
    /* cost search, one slot per portal plus the goal */
    float *g, *f;
    uint32_t *parent, *pos, *stamp, *heap;
    uint8_t *via;       /* side of the portal's quad it was reached through */
    uint32_t *corridor; /* portal | SIDE_BIT when entered from its q[1] */
    fvert *verts;       /* the funnel's output: np + 2 */
    /* Each quad's boundary as a cycle of vertices (corners and portal end
    ** points); sub-edge j runs from vertex j to j + 1 and is a portal or a
    ** wall (QN_NONE). Equal points share a vertex id. */
    uint32_t *bstart; /* nq + 1 */
    qn_vec2 *bv;
    uint32_t *bportal, *bvid;
    uint32_t *psub; /* 2 per portal: its sub-edge in q[0] and in q[1] */
    uint32_t nb;    /* boundary vertices */
    float *vbest;   /* per vertex id: best cost as a root this query */
    uint32_t *vstamp;
    uint32_t *qstamp, *qvid; /* per quad: entered from root qvid on its edge */
    float *qg;               /* ... at that cost */
    void *block;
    size_t block_bytes;
    /* the any-angle search's node pool and open list (they grow) */
    anode *nodes;
    uint32_t *aheap;
    uint32_t ncap, hcap, nn, an, nmax;
};

/* ---- create / destroy ---------------------------------------------------- */

/* Places every fixed array in one block (base NULL: only measures it). */
static uint64_t layout(qn_pathfinder *pf, char *base, uint32_t nbmax) {
    uint64_t off = 0, nodes = (uint64_t)pf->np + 1;
#define TAKE(field, count)                                                  \
    do {                                                                    \
        if (base) pf->field = (void *)(base + off);                         \
        off += (uint64_t)(count) * sizeof *pf->field;                       \
    } while (0)
    TAKE(verts, (uint64_t)pf->np + 2);
    TAKE(bv, nbmax);
    TAKE(g, nodes);
    TAKE(f, nodes);
    TAKE(vbest, nbmax);
    TAKE(qg, pf->nq);
    TAKE(parent, nodes);
    TAKE(pos, nodes);
    TAKE(stamp, nodes);
    TAKE(heap, nodes);
    TAKE(corridor, pf->np);
    TAKE(bstart, (uint64_t)pf->nq + 1);
    TAKE(bportal, nbmax);
    TAKE(bvid, nbmax);
    TAKE(psub, 2 * (uint64_t)pf->np);
    TAKE(vstamp, nbmax);
    TAKE(qstamp, pf->nq);
    TAKE(qvid, pf->nq);
    TAKE(via, nodes);
#undef TAKE
    return off;
}

static inline uint8_t side_in(const qn_mesh *m, uint32_t e, uint32_t q) {
    return m->portals[e].q[0] == q ? 0 : 1;
}

/* A portal's extent along a quad edge, from the edge's first corner. */
typedef struct spos {
    float lo, hi;
    uint32_t e;
    qn_vec2 plo, phi;
} spos;

static int cmp_spos(const void *a, const void *b) {
    float x = ((const spos *)a)->lo, y = ((const spos *)b)->lo;
    return (x > y) - (x < y);
}

static void push_bv(qn_pathfinder *pf, qn_vec2 p) {
    pf->bv[pf->nb] = p;
    pf->bportal[pf->nb++] = QN_NONE;
}

/* The portals of quad q on its edge i, sorted along it, into tmp. */
static uint32_t edge_portals(const qn_mesh *m, uint32_t q, int i, qn_vec2 c0, qn_vec2 u,
                             spos *tmp) {
    uint32_t cnt = 0;
    for (uint32_t j = m->qp_start[q]; j < m->qp_start[q + 1]; j++) {
        uint32_t e = m->qp_list[j];
        const qn__portal *p = &m->portals[e];
        if (p->edge[side_in(m, e, q)] != i) continue;
        float s0 = qn__dot(qn__sub(p->p0, c0), u), s1 = qn__dot(qn__sub(p->p1, c0), u);
        spos a = {s0, s1, e, p->p0, p->p1}, b = {s1, s0, e, p->p1, p->p0};
        tmp[cnt++] = s0 <= s1 ? a : b;
    }
    if (cnt > 1) qsort(tmp, cnt, sizeof *tmp, cmp_spos);
    return cnt;
}

/* Quad q's boundary: each edge's first corner, then the end points of the
** portals along it; a portal reaching the next corner ends there. */
static void build_boundary(qn_pathfinder *pf, uint32_t q, spos *tmp) {
    const qn_mesh *m = pf->mesh;
    const qn_vec2 *k = &m->corners[4 * (size_t)q];
    float tol = 4.0f * m->eps;
    uint32_t base = pf->nb;
    for (int i = 0; i < 4; i++) {
        qn_vec2 c0 = k[i], d = qn__sub(k[(i + 1) & 3], c0);
        float len = qn__len(d), cur = 0.0f;
        uint32_t cnt = edge_portals(m, q, i, c0, qn__scale(d, 1.0f / len), tmp);
        push_bv(pf, c0);
        for (uint32_t j = 0; j < cnt; j++) {
            if (tmp[j].lo > cur + tol) push_bv(pf, tmp[j].plo);
            pf->bportal[pf->nb - 1] = tmp[j].e;
            pf->psub[2 * tmp[j].e + side_in(m, tmp[j].e, q)] = pf->nb - 1 - base;
            cur = tmp[j].hi;
            if (cur < len - tol) push_bv(pf, tmp[j].phi);
        }
    }
}

typedef struct vkey {
    float x, y;
    uint32_t i;
} vkey;

static int cmp_vkey(const void *a, const void *b) {
    const vkey *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

/* Boundaries of every quad and vertex ids; temporary memory from the
** pathfinder's allocator. */
static qn_status build_boundaries(qn_pathfinder *pf, qn_error *err) {
    const qn_mesh *m = pf->mesh;
    uint32_t maxk = 1;
    for (uint32_t q = 0; q < pf->nq; q++)
        if (m->qp_start[q + 1] - m->qp_start[q] > maxk) maxk = m->qp_start[q + 1] - m->qp_start[q];
    size_t tbytes = (size_t)maxk * sizeof(spos), kbytes = (size_t)(4 * (size_t)pf->nq + 4 * (size_t)pf->np) * sizeof(vkey);
    spos *tmp = qn__alloc(&pf->alloc, tbytes);
    vkey *keys = qn__alloc(&pf->alloc, kbytes);
    qn_status st = QN_OK;
    if (!tmp || !keys) st = qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quad boundaries)");
    for (uint32_t q = 0; st == QN_OK && q < pf->nq; q++) {
        pf->bstart[q] = pf->nb;
        build_boundary(pf, q, tmp);
    }
    if (st == QN_OK) {
        pf->bstart[pf->nq] = pf->nb;
        for (uint32_t i = 0; i < pf->nb; i++) keys[i] = (vkey){pf->bv[i].x, pf->bv[i].y, i};
        if (pf->nb > 1) qsort(keys, pf->nb, sizeof *keys, cmp_vkey);
        for (uint32_t i = 0, id = 0; i < pf->nb; i++) {
            if (i > 0 && cmp_vkey(&keys[i - 1], &keys[i]) != 0) id++;
            pf->bvid[keys[i].i] = id;
        }
    }
    qn__free(&pf->alloc, tmp, tbytes);
    qn__free(&pf->alloc, keys, kbytes);
    return st;
}

/* The node pool starts small and doubles up to nmax states per query. */
static qn_status grow_nodes(qn_pathfinder *pf) {
    if (pf->ncap >= pf->nmax) return QN_E_LIMIT;
    uint32_t want = pf->ncap ? (pf->ncap > pf->nmax / 2 ? pf->nmax : 2 * pf->ncap) : 256;
    if (pf->ncap < want) {
        anode *n = qn__realloc(&pf->alloc, pf->nodes, (size_t)pf->ncap * sizeof(anode),
                               (size_t)want * sizeof(anode));
        if (!n) return QN_E_NOMEM;
        pf->nodes = n;
        pf->ncap = want;
    }
    if (pf->hcap < want) {
        uint32_t *h = qn__realloc(&pf->alloc, pf->aheap, (size_t)pf->hcap * sizeof(uint32_t),
                                  (size_t)want * sizeof(uint32_t));
        if (!h) return QN_E_NOMEM;
        pf->aheap = h;
        pf->hcap = want;
    }
    return QN_OK;
}

/* Lowest open quad cost, and whether all open quads cost the same. */
static void scan_costs(qn_pathfinder *pf) {
    const qn_mesh *m = pf->mesh;
    float lo = QN_MAX_QUAD_COST, hi = 1.0f;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        if (m->blocked[q]) continue;
        lo = fminf(lo, m->cost[q]);
        hi = fmaxf(hi, m->cost[q]);
    }
    pf->hscale = lo;
    pf->uniform = hi <= lo;
    pf->hversion = m->version;
}

void qn_pathfinder_destroy(qn_pathfinder *pf) {
    if (!pf) return;
    qn_allocator a = pf->alloc;
    qn__free(&a, pf->block, pf->block_bytes);
    qn__free(&a, pf->nodes, (size_t)pf->ncap * sizeof(anode));
    qn__free(&a, pf->aheap, (size_t)pf->hcap * sizeof(uint32_t));
    qn__free(&a, pf, sizeof *pf);
}

static qn_status alloc_block(qn_pathfinder *pf, qn_error *err) {
    uint32_t nbmax_ = 0;
    uint64_t nbmax = 4 * (uint64_t)pf->nq + 4 * (uint64_t)pf->np;
    if (nbmax >= UINT32_MAX / 2)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "mesh too large for a pathfinder");
    nbmax_ = (uint32_t)nbmax;
    uint64_t n = layout(pf, NULL, nbmax_);
    if (n > SIZE_MAX / 2)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "pathfinder scratch of %.0f bytes", (double)n);
    pf->block = qn__alloc(&pf->alloc, (size_t)n);
    if (!pf->block)
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (pathfinder scratch, %.0f bytes)",
                        (double)n);
    pf->block_bytes = (size_t)n;
    layout(pf, pf->block, nbmax_);
    memset(pf->stamp, 0, ((size_t)pf->np + 1) * sizeof(uint32_t));
    memset(pf->vstamp, 0, (size_t)nbmax_ * sizeof(uint32_t));
    memset(pf->qstamp, 0, (size_t)pf->nq * sizeof(uint32_t));
    return QN_OK;
}

qn_status qn_pathfinder_create(const qn_mesh *mesh, const qn_allocator *alloc,
                               qn_pathfinder **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!mesh || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    qn_allocator a = qn__allocator(alloc);
    qn_pathfinder *pf = qn__calloc(&a, 1, sizeof *pf);
    if (!pf) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (pathfinder)");
    pf->alloc = a;
    pf->mesh = mesh;
    pf->np = mesh->portal_count;
    pf->nq = mesh->quad_count;
    /* A safety bound on search states; real queries stay far below it. */
    uint64_t nmax = 64 * ((uint64_t)pf->np + pf->nq) + 4096;
    pf->nmax = nmax > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)nmax;
    qn_status st = alloc_block(pf, err);
    if (st == QN_OK) st = build_boundaries(pf, err);
    if (st == QN_OK && grow_nodes(pf) != QN_OK)
        st = qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (pathfinder nodes)");
    if (st != QN_OK) {
        qn_pathfinder_destroy(pf);
        return st;
    }
    scan_costs(pf);
    *out = pf;
    return QN_OK;
}

size_t qn_pathfinder_bytes(const qn_pathfinder *pf) {
    if (!pf) return 0;
    return sizeof *pf + pf->block_bytes + (size_t)pf->ncap * sizeof(anode) +
           (size_t)pf->hcap * sizeof(uint32_t);
}

/* ---- the open list: a 4-ary heap on f, ties to the larger g ---------------- */

static inline bool before(const qn_pathfinder *pf, uint32_t a, uint32_t b) {
    return pf->f[a] < pf->f[b] || (pf->f[a] == pf->f[b] && pf->g[a] > pf->g[b]);
}

static void heap_up(qn_pathfinder *pf, uint32_t i) {
    uint32_t v = pf->heap[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 4, pv = pf->heap[parent];
        if (!before(pf, v, pv)) break;
        pf->heap[i] = pv;
        pf->pos[pv] = i;
        i = parent;
    }
    pf->heap[i] = v;
    pf->pos[v] = i;
}

static void heap_down(qn_pathfinder *pf, uint32_t i) {
    uint32_t v = pf->heap[i], n = pf->heap_n;
    for (;;) {
        uint32_t first = 4 * i + 1;
        if (first >= n) break;
        uint32_t last = first + 4 < n ? first + 4 : n, c = first;
        for (uint32_t k = first + 1; k < last; k++)
            if (before(pf, pf->heap[k], pf->heap[c])) c = k;
        if (!before(pf, pf->heap[c], v)) break;
        pf->heap[i] = pf->heap[c];
        pf->pos[pf->heap[i]] = i;
        i = c;
    }
    pf->heap[i] = v;
    pf->pos[v] = i;
}

static uint32_t pop_min(qn_pathfinder *pf) {
    uint32_t top = pf->heap[0];
    pf->pos[top] = CLOSED;
    if (--pf->heap_n > 0) {
        pf->heap[0] = pf->heap[pf->heap_n];
        heap_down(pf, 0);
    }
    return top;
}

/* ---- the search ------------------------------------------------------------- */

typedef struct query {
    qn_pathfinder *pf;
    const qn_mesh *m;
    qn_vec2 from, to;
    uint32_t qs, qg;
    float radius;
} query;

/* Lowers node v's cost to gv (reached from `par` through v's side `via`). */
static void improve(query *Q, uint32_t v, float gv, uint32_t par, uint8_t via) {
    qn_pathfinder *pf = Q->pf;
    if (pf->stamp[v] != pf->gen) {
        pf->stamp[v] = pf->gen;
        pf->pos[v] = QN_NONE;
        pf->g[v] = INFINITY;
    }
    if (pf->pos[v] == CLOSED || gv >= pf->g[v]) return;
    float h = v < pf->np ? pf->hscale * qn__len(qn__sub(Q->m->portals[v].mid, Q->to)) : 0.0f;
    pf->g[v] = gv;
    pf->f[v] = gv + h;
    pf->parent[v] = par;
    pf->via[v] = via;
    if (pf->pos[v] == QN_NONE) {
        pf->heap[pf->heap_n] = v;
        pf->pos[v] = pf->heap_n++;
    }
    heap_up(pf, pf->pos[v]);
}

/* From portal u (cost gu), every open portal of quad q = u's side `side`. */
static void relax_through(query *Q, uint32_t q, int side, uint32_t u, float gu) {
    const qn_mesh *m = Q->m;
    uint32_t base = m->qp_start[q], k = m->qp_start[q + 1] - base;
    const float *row = &m->qdist[m->qd_start[q] + (size_t)m->portals[u].local[side] * k];
    float w = m->cost[q];
    for (uint32_t j = 0; j < k; j++) {
        uint32_t v = m->qp_list[base + j];
        if (v == u || !qn__portal_open(m, v, Q->radius)) continue;
        improve(Q, v, gu + w * row[j], u, side_in(m, v, q));
    }
}

/* Starts a query: every stamp older than the new generation reads as unset. */
static void new_generation(qn_pathfinder *pf) {
    pf->heap_n = 0;
    pf->nn = pf->an = 0;
    if (++pf->gen == 0) { /* wrapped: forget every stamp */
        memset(pf->stamp, 0, ((size_t)pf->np + 1) * sizeof(uint32_t));
        memset(pf->vstamp, 0, (size_t)pf->nb * sizeof(uint32_t));
        memset(pf->qstamp, 0, (size_t)pf->nq * sizeof(uint32_t));
        pf->gen = 1;
    }
}

/* A* from Q->from to Q->to; on success *cost is the goal node's cost. */
static qn_status search(query *Q, float *cost) {
    qn_pathfinder *pf = Q->pf;
    const qn_mesh *m = Q->m;
    uint32_t goal = pf->np;
    float ws = m->cost[Q->qs], wg = m->cost[Q->qg];
    for (uint32_t i = m->qp_start[Q->qs]; i < m->qp_start[Q->qs + 1]; i++) {
        uint32_t v = m->qp_list[i];
        if (qn__portal_open(m, v, Q->radius))
            improve(Q, v, ws * qn__len(qn__sub(m->portals[v].mid, Q->from)), QN_NONE,
                    side_in(m, v, Q->qs));
    }
    while (pf->heap_n > 0) {
        uint32_t u = pop_min(pf);
        float gu = pf->g[u];
        if (u == goal) {
            *cost = gu;
            return QN_OK;
        }
        for (int side = 0; side < 2; side++) {
            uint32_t q = m->portals[u].q[side];
            if (q == Q->qg)
                improve(Q, goal, gu + wg * qn__len(qn__sub(m->portals[u].mid, Q->to)), u,
                        (uint8_t)side);
            /* Back through the quad u was reached through cannot help: inside
            ** one convex quad the straight line is shortest. */
            if (side != pf->via[u]) relax_through(Q, q, side, u, gu);
        }
    }
    return QN_E_UNREACHABLE;
}

/* Portals from the start quad to the goal quad, in order; returns the count. */
static uint32_t build_corridor(qn_pathfinder *pf) {
    uint32_t n = 0;
    for (uint32_t v = pf->parent[pf->np]; v != QN_NONE; v = pf->parent[v])
        pf->corridor[n++] = v | (pf->via[v] ? SIDE_BIT : 0u);
    for (uint32_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
        uint32_t t = pf->corridor[i];
        pf->corridor[i] = pf->corridor[j];
        pf->corridor[j] = t;
    }
    return n;
}

/* ---- the any-angle corridor search ------------------------------------------- */

typedef struct asearch {
    query *Q;
    float tol;
    qn_status st;
} asearch;

static inline bool abefore(const qn_pathfinder *pf, uint32_t a, uint32_t b) {
    const anode *x = &pf->nodes[a], *y = &pf->nodes[b];
    return x->f < y->f || (x->f == y->f && x->g > y->g);
}

static void apush(asearch *S, const anode *n) {
    qn_pathfinder *pf = S->Q->pf;
    if (S->st != QN_OK) return;
    if (pf->nn == pf->ncap || pf->nn == pf->hcap) {
        S->st = grow_nodes(pf);
        if (S->st != QN_OK) return;
    }
    uint32_t v = pf->nn++, i = pf->an++;
    pf->nodes[v] = *n;
    while (i > 0 && abefore(pf, v, pf->aheap[(i - 1) / 2])) {
        pf->aheap[i] = pf->aheap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    pf->aheap[i] = v;
}

static uint32_t apop(qn_pathfinder *pf) {
    uint32_t top = pf->aheap[0], v = pf->aheap[--pf->an], i = 0, n = pf->an;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && abefore(pf, pf->aheap[c + 1], pf->aheap[c])) c++;
        if (!abefore(pf, pf->aheap[c], v)) break;
        pf->aheap[i] = pf->aheap[c];
        i = c;
    }
    if (n > 0) pf->aheap[i] = v;
    return top;
}

static float point_segment_dist(qn_vec2 p, qn_vec2 a, qn_vec2 b);

/* Length of the shortest line from root r through the interval R-L to t
** (t mirrored first when on r's side of the interval's line, since the line
** must cross it). r on the interval sees everywhere. */
static float through_interval(qn_vec2 r, qn_vec2 L, qn_vec2 R, qn_vec2 t, bool on) {
    if (on) return qn__len(qn__sub(t, r));
    qn_vec2 d = qn__sub(L, R);
    float dl = qn__len(d), sr = qn__cross(d, qn__sub(r, R)), st = qn__cross(d, qn__sub(t, R));
    if (dl > 0.0f && sr * st > 0.0f) t = qn__sub(t, qn__scale(qn__v2(-d.y, d.x), 2.0f * st / (dl * dl)));
    if (qn__cross(qn__sub(R, r), qn__sub(t, r)) < 0.0f)
        return qn__len(qn__sub(R, r)) + qn__len(qn__sub(t, R));
    if (qn__cross(qn__sub(t, r), qn__sub(L, r)) < 0.0f)
        return qn__len(qn__sub(L, r)) + qn__len(qn__sub(t, L));
    return qn__len(qn__sub(t, r));
}

/* May vertex id v become a root at cost gv? Only if no cheaper or equal
** path to it has been a root this query (root-level pruning). */
static bool root_better(const qn_pathfinder *pf, uint32_t v, float gv) {
    return pf->vstamp[v] != pf->gen || gv < pf->vbest[v] * (1.0f - 1e-6f);
}

static void root_record(qn_pathfinder *pf, uint32_t v, float gv) {
    pf->vstamp[v] = pf->gen;
    pf->vbest[v] = gv;
}

/* A sub-edge of the quad being expanded: end points, their vertex ids, the
** portal. */
typedef struct sub_edge {
    qn_vec2 a, b;
    uint32_t va, vb, e;
} sub_edge;

/* A state for root rt (id rv, cost g) seeing the part [t0, t1] of sub-edge
** se of quad `from`. A root on the interval sees all of the next quad; such
** a quad is entered once per root. An interval in line with the root but
** beyond it is reached along that line (grazing the boundary): its nearer
** end, a vertex, becomes the root. Returns whether pushed. */
static bool add_piece(asearch *S, uint32_t parent, qn_vec2 rt, uint32_t rv, float g,
                      const sub_edge *se, float t0, float t1, uint32_t from) {
    qn_pathfinder *pf = S->Q->pf;
    const qn_mesh *m = S->Q->m;
    qn_vec2 ab = qn__sub(se->b, se->a);
    qn_vec2 x0 = qn__add(se->a, qn__scale(ab, t0)), x1 = qn__add(se->a, qn__scale(ab, t1));
    float len = qn__len(qn__sub(x1, x0));
    if (!(len > S->tol)) return false;
    uint32_t nq = qn__portal_other(m, se->e, from);
    bool on = fabsf(qn__cross(qn__sub(x1, x0), qn__sub(rt, x0))) <= S->tol * len;
    if (on && point_segment_dist(rt, x0, x1) > S->tol) {
        bool near0 = qn__dot(qn__sub(x0, rt), qn__sub(x0, rt)) <= qn__dot(qn__sub(x1, rt), qn__sub(x1, rt));
        float tn = near0 ? t0 : t1;
        if (tn != 0.0f && tn != 1.0f) return false; /* no corner to turn at */
        qn_vec2 xn = near0 ? x0 : x1;
        g += qn__len(qn__sub(xn, rt));
        rv = tn == 0.0f ? se->va : se->vb;
        if (!root_better(pf, rv, g)) return false;
        root_record(pf, rv, g);
        rt = xn;
    }
    if (on) {
        if (pf->qstamp[nq] == pf->gen && pf->qvid[nq] == rv && g >= pf->qg[nq]) return false;
        pf->qstamp[nq] = pf->gen;
        pf->qvid[nq] = rv;
        pf->qg[nq] = g;
    }
    float h = through_interval(rt, x1, x0, S->Q->to, on);
    anode n = {rt, x1, x0, g, g + h, parent, nq, pf->psub[2 * se->e + side_in(m, se->e, nq)], rv};
    apush(S, &n);
    return true;
}

/* Parameters in [0, 1] where fa + (fb - fa) t >= 0; false when none. */
static bool clip_nonneg(float fa, float fb, float *t0, float *t1) {
    if (fa >= 0.0f && fb >= 0.0f) return true;
    if (fa < 0.0f && fb < 0.0f) return false;
    float t = fa / (fa - fb);
    if (fa >= 0.0f) *t1 = fminf(*t1, t);
    else *t0 = fmaxf(*t0, t);
    return *t0 < *t1;
}

/* A corner at an end of the interval, where the path may bend to reach what
** the root cannot see. */
typedef struct bend {
    bool on;
    qn_vec2 at;
    uint32_t vid;
    float g;
    uint32_t pushed;
} bend;

static bend bend_at(const asearch *S, const anode *n, qn_vec2 end, uint32_t bi, bool on) {
    const qn_pathfinder *pf = S->Q->pf;
    bend b = {false, end, pf->bvid[bi], n->g + qn__len(qn__sub(end, n->r)), 0};
    qn_vec2 d = qn__sub(end, pf->bv[bi]);
    b.on = !on && qn__dot(d, d) <= S->tol * S->tol && root_better(pf, b.vid, b.g);
    if (b.on) b.at = pf->bv[bi];
    return b;
}

/* Successors of node ni through sub-edge se of its quad. */
static void through_sub_edge(asearch *S, uint32_t ni, const anode *n, bool on, bend *br,
                             bend *bl, const sub_edge *se) {
    if (on) {
        add_piece(S, ni, n->r, n->rvid, n->g, se, 0.0f, 1.0f, n->quad);
        return;
    }
    qn_vec2 rr = qn__sub(n->R, n->r), rl = qn__sub(n->L, n->r);
    qn_vec2 ra = qn__sub(se->a, n->r), rb = qn__sub(se->b, n->r);
    float fra = qn__cross(rr, ra), frb = qn__cross(rr, rb);
    float fla = qn__cross(ra, rl), flb = qn__cross(rb, rl);
    float t0 = 0.0f, t1 = 1.0f;
    if (clip_nonneg(fra, frb, &t0, &t1) && clip_nonneg(fla, flb, &t0, &t1))
        add_piece(S, ni, n->r, n->rvid, n->g, se, t0, t1, n->quad);
    t0 = 0.0f, t1 = 1.0f;
    if (br->on && clip_nonneg(-fra, -frb, &t0, &t1))
        br->pushed += add_piece(S, ni, br->at, br->vid, br->g, se, t0, t1, n->quad);
    t0 = 0.0f, t1 = 1.0f;
    if (bl->on && clip_nonneg(-fla, -flb, &t0, &t1))
        bl->pushed += add_piece(S, ni, bl->at, bl->vid, bl->g, se, t0, t1, n->quad);
}

static sub_edge sub_edge_at(const qn_pathfinder *pf, uint32_t base, uint32_t k, uint32_t s) {
    uint32_t i = base + s, j = base + (s + 1) % k;
    sub_edge se = {pf->bv[i], pf->bv[j], pf->bvid[i], pf->bvid[j], pf->bportal[i]};
    return se;
}

static void expand(asearch *S, uint32_t ni) {
    qn_pathfinder *pf = S->Q->pf;
    const qn_mesh *m = S->Q->m;
    anode n = pf->nodes[ni]; /* a copy: pushing may move the pool */
    bool on = point_segment_dist(n.r, n.R, n.L) <= S->tol;
    if (n.quad == S->Q->qg) {
        float gt = n.g + through_interval(n.r, n.L, n.R, S->Q->to, on);
        anode goal = {n.r, n.L, n.R, gt, gt, ni, QN_NONE, 0, n.rvid};
        apush(S, &goal);
        return;
    }
    uint32_t base = pf->bstart[n.quad], k = pf->bstart[n.quad + 1] - base, j = n.sub;
    bend br = bend_at(S, &n, n.R, base + (j + 1) % k, on);
    bend bl = bend_at(S, &n, n.L, base + j, on);
    for (uint32_t step = 1; step < k; step++) {
        sub_edge se = sub_edge_at(pf, base, k, (j + step) % k);
        if (se.e == QN_NONE || !qn__portal_open(m, se.e, S->Q->radius)) continue;
        through_sub_edge(S, ni, &n, on, &br, &bl, &se);
    }
    if (br.pushed) root_record(pf, br.vid, br.g);
    if (bl.pushed) root_record(pf, bl.vid, bl.g);
}

/* Seeds: the start sees all of its quad. */
static void seed_start(asearch *S) {
    qn_pathfinder *pf = S->Q->pf;
    uint32_t q = S->Q->qs, base = pf->bstart[q], k = pf->bstart[q + 1] - base;
    for (uint32_t s = 0; s < k; s++) {
        sub_edge se = sub_edge_at(pf, base, k, s);
        if (se.e == QN_NONE || !qn__portal_open(S->Q->m, se.e, S->Q->radius)) continue;
        add_piece(S, QN_NONE, S->Q->from, START_ROOT, 0.0f, &se, 0.0f, 1.0f, q);
    }
}

/* The portals a goal state's chain crosses, into pf->corridor. */
static bool any_corridor(qn_pathfinder *pf, uint32_t goal, uint32_t *count) {
    uint32_t n = 0;
    for (uint32_t v = pf->nodes[goal].parent; v != QN_NONE; v = pf->nodes[v].parent) {
        const anode *a = &pf->nodes[v];
        uint32_t e = pf->bportal[pf->bstart[a->quad] + a->sub];
        if (n == pf->np) return false;
        pf->corridor[n++] = e | (pf->mesh->portals[e].q[0] == a->quad ? SIDE_BIT : 0u);
    }
    for (uint32_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
        uint32_t t = pf->corridor[i];
        pf->corridor[i] = pf->corridor[j];
        pf->corridor[j] = t;
    }
    *count = n;
    return true;
}

/* Shortest any-angle corridor. QN_OK, QN_E_UNREACHABLE, QN_E_NOMEM, or
** QN_E_LIMIT when the state bound is hit (the caller falls back). */
static qn_status any_angle(query *Q, uint32_t *count) {
    qn_pathfinder *pf = Q->pf;
    asearch S = {Q, 4.0f * Q->m->eps, QN_OK};
    pf->nn = pf->an = 0;
    seed_start(&S);
    while (S.st == QN_OK && pf->an > 0) {
        uint32_t ni = apop(pf);
        const anode *n = &pf->nodes[ni];
        if (n->quad == QN_NONE) return any_corridor(pf, ni, count) ? QN_OK : QN_E_LIMIT;
        if (n->rvid != START_ROOT && pf->vstamp[n->rvid] == pf->gen &&
            n->g > pf->vbest[n->rvid] * (1.0f + 1e-6f))
            continue; /* its root was reached more cheaply since */
        expand(&S, ni);
    }
    return S.st != QN_OK ? S.st : QN_E_UNREACHABLE;
}

/* ---- the funnel over circles --------------------------------------------------- */

static fvert point_vert(qn_vec2 p) {
    fvert v = {p, 0.0f, 0.0f};
    return v;
}

static bool same_vert(const fvert *a, const fvert *b) {
    return a->side == b->side && a->k.x == b->k.x && a->k.y == b->k.y;
}

/* Radius of the circles at portal ends: the agent's, or for a point agent a
** few times the mesh tolerance, so no segment runs exactly through a wall's
** end point (where float noise could put it outside). Smaller than the
** sampler's inset: here it adds to the length of every bend. */
static float corner_radius(const qn_mesh *m, float radius) {
    float tiny = 4.0f * m->eps;
    return radius > tiny ? radius : tiny;
}

/* End points of corridor portal i (1-based; i = n + 1 is the goal) as seen
** when crossing it: left and right of the direction of travel. Crossing from
** q[0] (on the left of p0->p1) to q[1], p1 is on the left. */
static void portal_verts(const query *Q, uint32_t n, uint32_t i, float rc, fvert *l, fvert *r) {
    if (i > n) {
        *l = *r = point_vert(Q->to);
        return;
    }
    uint32_t c = Q->pf->corridor[i - 1];
    const qn__portal *p = &Q->m->portals[c & ~SIDE_BIT];
    bool from_q1 = (c & SIDE_BIT) != 0;
    float rad = rc < 0.5f * p->width ? rc : 0.5f * p->width;
    l->k = from_q1 ? p->p0 : p->p1;
    r->k = from_q1 ? p->p1 : p->p0;
    l->r = r->r = rad;
    l->side = 1.0f;
    r->side = -1.0f;
}

static inline qn_vec2 left_normal(qn_vec2 d) { return qn__v2(-d.y, d.x); }

/* Direction of the line leaving circle a and reaching circle b with each on
** its own side. False when a and b share a centre. When the circles are too
** close for such a line (a pinch narrower than the agent), the limiting
** direction (perpendicular to the centres) is used. */
static bool tangent(const fvert *a, const fvert *b, qn_vec2 *d) {
    qn_vec2 D = qn__sub(b->k, a->k);
    float dd = qn__dot(D, D);
    if (!(dd > 0.0f)) return false;
    float c = b->side * b->r - a->side * a->r, l2 = dd - c * c;
    if (l2 < 0.0f) {
        c = copysignf(sqrtf(dd), c);
        l2 = 0.0f;
    }
    float l = sqrtf(l2);
    qn_vec2 t = qn__sub(qn__scale(D, l), qn__scale(left_normal(D), c));
    float len = qn__len(t);
    if (!(len > 0.0f)) return false;
    *d = qn__scale(t, 1.0f / len);
    return true;
}

/* Sign of the turn from the tangent toward a to the tangent toward b, both
** leaving apex: > 0 when b is to the left of a. 0 when either is undefined. */
static float turn(const fvert *apex, const fvert *a, const fvert *b) {
    qn_vec2 da, db;
    if (same_vert(apex, a) || same_vert(apex, b)) return 0.0f;
    if (!tangent(apex, a, &da) || !tangent(apex, b, &db)) return 0.0f;
    return qn__cross(da, db);
}

typedef struct funnel {
    fvert apex, left, right;
    uint32_t apex_i, left_i, right_i;
    uint32_t n; /* vertices written to out */
} funnel;

static void push_apex(funnel *fn, fvert *out, const fvert *v, uint32_t idx) {
    if (!same_vert(&out[fn->n - 1], v)) out[fn->n++] = *v;
    fn->apex = fn->left = fn->right = *v;
    fn->apex_i = fn->left_i = fn->right_i = idx;
}

/* One step of the simple funnel on the right side; true when the apex moved
** (the scan restarts after it). A side still at the apex has no ray: a new
** vertex on the other side is not checked against it. A new vertex at the
** apex itself (portals fanning around the apex corner) keeps that side at
** the apex. */
static bool step_right(funnel *fn, fvert *out, const fvert *r, uint32_t i) {
    bool at_r = same_vert(&fn->apex, &fn->right), at_l = same_vert(&fn->apex, &fn->left);
    if (!same_vert(&fn->apex, r)) {
        if (!at_r && turn(&fn->apex, &fn->right, r) < 0.0f) return false; /* wider */
        if (!at_l && turn(&fn->apex, &fn->left, r) >= 0.0f) {
            fvert l = fn->left; /* crosses the left side: bend there */
            push_apex(fn, out, &l, fn->left_i);
            return true;
        }
    }
    fn->right = *r;
    fn->right_i = i;
    return false;
}

static bool step_left(funnel *fn, fvert *out, const fvert *l, uint32_t i) {
    bool at_r = same_vert(&fn->apex, &fn->right), at_l = same_vert(&fn->apex, &fn->left);
    if (!same_vert(&fn->apex, l)) {
        if (!at_l && turn(&fn->apex, &fn->left, l) > 0.0f) return false;
        if (!at_r && turn(&fn->apex, &fn->right, l) <= 0.0f) {
            fvert r = fn->right;
            push_apex(fn, out, &r, fn->right_i);
            return true;
        }
    }
    fn->left = *l;
    fn->left_i = i;
    return false;
}

/* The string-pulled vertex chain for a corridor of n portals: from, the
** corners it bends around, to. Returns the number of vertices. */
static uint32_t run_funnel(const query *Q, uint32_t n, float rc) {
    fvert *out = Q->pf->verts;
    funnel fn;
    out[0] = point_vert(Q->from);
    fn.n = 1;
    fn.apex = fn.left = fn.right = out[0];
    fn.apex_i = fn.left_i = fn.right_i = 0;
    for (uint32_t i = 1; i <= n + 1; i++) {
        fvert l, r;
        portal_verts(Q, n, i, rc, &l, &r);
        /* Seen at a grazing angle, a portal's two circles can overlap in
        ** direction (no straight line passes between them): the path must
        ** first bend round the nearer one. Taking the nearer end first lets
        ** the usual crossing rule choose it. */
        qn_vec2 dl = qn__sub(l.k, fn.apex.k), dr = qn__sub(r.k, fn.apex.k);
        bool moved = qn__dot(dl, dl) < qn__dot(dr, dr)
                         ? step_left(&fn, out, &l, i) || step_right(&fn, out, &r, i)
                         : step_right(&fn, out, &r, i) || step_left(&fn, out, &l, i);
        if (moved) i = fn.apex_i;
    }
    fvert end = point_vert(Q->to);
    if (!same_vert(&out[fn.n - 1], &end)) out[fn.n++] = end;
    return fn.n;
}

/* ---- from the vertex chain to waypoints ------------------------------------------ */

typedef struct emitter {
    qn_vec2 *pts;
    uint32_t cap, count;
    qn_vec2 last;
} emitter;

static void emit(emitter *em, qn_vec2 p) {
    if (em->count > 0 && p.x == em->last.x && p.y == em->last.y) return;
    if (em->count < em->cap) em->pts[em->count] = p;
    em->count++;
    em->last = p;
}

static qn_vec2 rotate(qn_vec2 v, float a) {
    float c = cosf(a), s = sinf(a);
    return qn__v2(v.x * c - v.y * s, v.x * s + v.y * c);
}

/* The bend around vertex v, coming in along d_in and leaving along d_out:
** points of the polygon circumscribed about v's circle, each piece turning
** at most max_step, so every segment stays at least v->r from the corner. A
** turn of more than 3/2 pi the wrong way round is float noise or a pinch:
** then the single tangent point is used. */
static void emit_bend(emitter *em, const fvert *v, qn_vec2 d_in, qn_vec2 d_out, float max_step) {
    qn_vec2 m_in = qn__scale(left_normal(d_in), -v->side);
    float a = atan2f(v->side * qn__cross(d_in, d_out), qn__dot(d_in, d_out));
    if (a < 0.0f) a += 2.0f * PI_F;
    if (a > 1.5f * PI_F) a = 0.0f;
    uint32_t pieces = (uint32_t)ceilf(a / max_step);
    if (pieces == 0) pieces = 1;
    float half = a / (2.0f * (float)pieces), dist = v->r / cosf(half);
    for (uint32_t i = 0; i < pieces; i++) {
        float phi = v->side * (float)(2 * i + 1) * half;
        emit(em, qn__add(v->k, qn__scale(rotate(m_in, phi), dist)));
    }
}

/* A start or end point closer to its neighbouring corner than the radius
** shrinks that corner's circle to pass through it, rather than stepping
** back first. */
static void shrink_at_ends(fvert *v, uint32_t n) {
    if (n < 3) return;
    float d0 = qn__len(qn__sub(v[1].k, v[0].k)), d1 = qn__len(qn__sub(v[n - 2].k, v[n - 1].k));
    if (d0 < v[1].r) v[1].r = d0;
    if (d1 < v[n - 2].r) v[n - 2].r = d1;
}

static void emit_chain(emitter *em, fvert *v, uint32_t n, float max_step) {
    shrink_at_ends(v, n);
    emit(em, v[0].k);
    qn_vec2 d_in = qn__v2(1.0f, 0.0f);
    bool have_in = n > 1 && tangent(&v[0], &v[1], &d_in);
    for (uint32_t j = 1; j + 1 < n; j++) {
        qn_vec2 d_out = d_in;
        bool have_out = tangent(&v[j], &v[j + 1], &d_out);
        if (!have_in) d_in = d_out;
        if (!have_out) d_out = d_in;
        emit_bend(em, &v[j], d_in, d_out, max_step);
        d_in = d_out;
        have_in = have_out || have_in;
    }
    emit(em, v[n - 1].k);
}

/* ---- qn_path_find --------------------------------------------------------------- */

static qn_status check_find_args(const qn_pathfinder *pf, qn_vec2 from, qn_vec2 to, float radius,
                                 const qn_vec2 *waypoints, uint32_t cap, const uint32_t *count) {
    if (!pf || !count || (cap > 0 && !waypoints)) return QN_E_INVALID_ARG;
    if (!qn__finite2(from) || !qn__finite2(to)) return QN_E_INVALID_ARG;
    if (!isfinite(radius) || radius < 0.0f) return QN_E_INVALID_ARG;
    return QN_OK;
}

/* Locates both ends: QN_E_OUTSIDE or QN_E_BLOCKED, else QN_OK. The same
** point location as qn_field_create and qn_field_cost_at, so costs agree. */
static qn_status place_ends(query *Q) {
    const qn_mesh *m = Q->m;
    Q->qs = qn__locate(m, Q->from, QN_NONE);
    Q->qg = qn__locate(m, Q->to, QN_NONE);
    if (Q->qs == QN_NONE || Q->qg == QN_NONE) return QN_E_OUTSIDE;
    if (m->blocked[Q->qs] || m->blocked[Q->qg]) return QN_E_BLOCKED;
    return QN_OK;
}

/* The corridor for the waypoints: any-angle on uniform costs, else (or when
** the any-angle search gives up) the cost search's. *c gets the model cost
** when asked for or needed. */
static qn_status find_corridor(query *Q, float *cost, uint32_t *n) {
    qn_pathfinder *pf = Q->pf;
    bool model = cost != NULL || !pf->uniform;
    float c = 0.0f;
    qn_status st = model ? search(Q, &c) : QN_OK;
    if (cost) *cost = c;
    if (st != QN_OK) return st;
    if (pf->uniform) {
        st = any_angle(Q, n);
        if (st == QN_OK || st == QN_E_NOMEM) return st;
        if (!model) { /* fall back to the cost search's corridor */
            st = search(Q, &c);
            if (st != QN_OK) return st;
        }
    }
    *n = build_corridor(pf);
    return QN_OK;
}

qn_status qn_path_find(qn_pathfinder *pf, qn_vec2 from, qn_vec2 to, float radius,
                       qn_vec2 *waypoints, uint32_t cap, uint32_t *count, float *cost) {
    if (count) *count = 0;
    if (cost) *cost = 0.0f;
    qn_status st = check_find_args(pf, from, to, radius, waypoints, cap, count);
    if (st != QN_OK) return st;
    query Q = {pf, pf->mesh, from, to, QN_NONE, QN_NONE, radius};
    st = place_ends(&Q);
    if (st != QN_OK) return st;
    const qn_mesh *m = Q.m;
    emitter em = {waypoints, cap, 0, {0.0f, 0.0f}};
    float c = 0.0f;
    if (Q.qs == Q.qg) {
        c = m->cost[Q.qs] * qn__len(qn__sub(to, from));
        em.count = 2;
        if (cap > 0) waypoints[0] = from;
        if (cap > 1) waypoints[1] = to;
    } else {
        /* Islands join quads over every portal between unblocked quads; a
        ** radius only closes more portals. */
        if (m->island[Q.qs] != m->island[Q.qg]) return QN_E_UNREACHABLE;
        if (pf->hversion != m->version) scan_costs(pf);
        new_generation(pf);
        uint32_t n = 0;
        st = find_corridor(&Q, cost ? &c : NULL, &n);
        if (st != QN_OK) return st;
        uint32_t nv = run_funnel(&Q, n, corner_radius(m, radius));
        emit_chain(&em, pf->verts, nv, radius > 0.0f ? PI_F / 8.0f : PI_F / 2.0f);
    }
    *count = em.count;
    if (cost) *cost = c;
    return em.count > cap ? QN_E_BUFFER_TOO_SMALL : QN_OK;
}

double qn_path_length(const qn_vec2 *pts, uint32_t n) {
    double sum = 0.0;
    for (uint32_t i = 1; pts && i < n; i++)
        sum += hypot((double)pts[i].x - (double)pts[i - 1].x,
                     (double)pts[i].y - (double)pts[i - 1].y);
    return sum;
}

/* ---- line of sight: the walk through quads --------------------------------------- */

/* Where the segment a + t*d leaves quad q: the smallest t at which it goes
** out through an edge (with the mesh tolerance). FLT_MAX when never. */
static float exit_param(const qn_mesh *m, uint32_t q, qn_vec2 a, qn_vec2 d) {
    const qn__planes *pl = &m->planes[q];
    float best = FLT_MAX;
    for (int i = 0; i < 4; i++) {
        float nd = pl->nx[i] * d.x + pl->ny[i] * d.y;
        if (nd >= 0.0f) continue;
        float t = (pl->c[i] - m->eps - (pl->nx[i] * a.x + pl->ny[i] * a.y)) / nd;
        if (t < best) best = t;
    }
    return best;
}

static qn_vec2 closest_on_segment(qn_vec2 p, qn_vec2 a, qn_vec2 b) {
    qn_vec2 ab = qn__sub(b, a);
    float l2 = qn__dot(ab, ab);
    float t = l2 > 0.0f ? qn__dot(qn__sub(p, a), ab) / l2 : 0.0f;
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return qn__add(a, qn__scale(ab, t));
}

static size_t bucket_index(const qn_mesh *m, float x, float y, uint32_t *cx, uint32_t *cy) {
    float fx = (x - m->grid_origin.x) * m->grid_inv_cell;
    float fy = (y - m->grid_origin.y) * m->grid_inv_cell;
    *cx = fx > 0.0f ? (fx >= (float)m->grid_w ? m->grid_w - 1 : (uint32_t)fx) : 0;
    *cy = fy > 0.0f ? (fy >= (float)m->grid_h ? m->grid_h - 1 : (uint32_t)fy) : 0;
    return (size_t)*cy * m->grid_w + *cx;
}

/* The quad to start the walk in: of the unblocked quads holding a (the hint
** among them), the one the segment stays in longest, so a start on a shared
** edge or corner goes the way the segment points. A blocked quad holding a
** when no unblocked one does; QN_NONE when a is outside. */
static uint32_t start_quad(const qn_mesh *m, qn_vec2 a, qn_vec2 d, uint32_t hint) {
    uint32_t any = qn__locate(m, a, hint);
    if (any == QN_NONE) return QN_NONE;
    uint32_t best = QN_NONE, cx, cy;
    float best_t = -FLT_MAX;
    size_t cell = bucket_index(m, a.x, a.y, &cx, &cy);
    for (uint32_t i = m->cell_start[cell]; i <= m->cell_start[cell + 1]; i++) {
        uint32_t q = i < m->cell_start[cell + 1] ? m->cell_list[i] : hint;
        if (q >= m->quad_count || m->blocked[q] || !qn__quad_contains(m, q, a)) continue;
        float t = exit_param(m, q, a, d);
        if (t > best_t) best_t = t, best = q;
    }
    return best == QN_NONE ? any : best;
}

/* The quad beyond q at exit point x (segment parameter t) through a portal
** open for the radius, chosen to carry the segment furthest. QN_NONE when
** no such quad takes it beyond t. */
static uint32_t next_quad(const qn_mesh *m, uint32_t q, qn_vec2 x, float t, qn_vec2 a, qn_vec2 d,
                          float radius) {
    float tol = 4.0f * m->eps, best_t = t;
    uint32_t best = QN_NONE;
    for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
        uint32_t e = m->qp_list[k];
        if (!qn__portal_open(m, e, radius)) continue;
        qn_vec2 c = qn__sub(x, closest_on_segment(x, m->portals[e].p0, m->portals[e].p1));
        if (qn__dot(c, c) > tol * tol) continue;
        uint32_t o = qn__portal_other(m, e, q);
        float to = exit_param(m, o, a, d);
        if (to > best_t) best_t = to, best = o;
    }
    return best;
}

/* Does a-b stay in unblocked quads, crossing open portals? t only grows,
** so the walk ends; the step bound guards against degenerate geometry. */
static bool walk_inside(const qn_mesh *m, uint32_t q, qn_vec2 a, qn_vec2 b, float radius) {
    qn_vec2 d = qn__sub(b, a);
    for (uint32_t steps = 0; steps <= 2 * m->quad_count + 2; steps++) {
        float t = exit_param(m, q, a, d);
        if (t >= 1.0f) return true;
        qn_vec2 x = qn__add(a, qn__scale(d, t < 0.0f ? 0.0f : t));
        q = next_quad(m, q, x, t, a, d, radius);
        if (q == QN_NONE) return false;
    }
    return false;
}

/* ---- line of sight: clearance from walls ----------------------------------------------- */

/* Parameter s in [0, 1] of the point of segment p0-p1 closest to segment
** a-b, and that distance. */
static float closest_param(qn_vec2 p0, qn_vec2 p1, qn_vec2 a, qn_vec2 b, float *dist) {
    qn_vec2 e = qn__sub(p1, p0), d = qn__sub(b, a), r = qn__sub(p0, a);
    float ee = qn__dot(e, e), dd = qn__dot(d, d), ed = qn__dot(e, d);
    float re = qn__dot(r, e), rd = qn__dot(r, d), s = 0.0f, t = 0.0f;
    float den = ee * dd - ed * ed;
    if (ee > 0.0f && den > 1e-12f * ee * dd) s = (ed * rd - re * dd) / den;
    else if (ee > 0.0f) s = -re / ee;
    s = s < 0.0f ? 0.0f : (s > 1.0f ? 1.0f : s);
    qn_vec2 ps = qn__add(p0, qn__scale(e, s));
    qn_vec2 c = closest_on_segment(ps, a, b);
    /* Re-project once from the other side: exact for the clamped cases. */
    if (ee > 0.0f) {
        t = qn__dot(qn__sub(c, p0), e) / ee;
        s = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
        ps = qn__add(p0, qn__scale(e, s));
        c = closest_on_segment(ps, a, b);
    }
    *dist = qn__len(qn__sub(ps, c));
    return s;
}

static float point_segment_dist(qn_vec2 p, qn_vec2 a, qn_vec2 b) {
    return qn__len(qn__sub(p, closest_on_segment(p, a, b)));
}

/* Along edge `edge` of quad q (length len, from c0 in direction u), widens
** [*lo, *hi] to the run of open portals covering it. False when no open
** portal touches the starting point (it is wall). */
static bool covered_run(const qn_mesh *m, uint32_t q, int edge, qn_vec2 c0, qn_vec2 u,
                        float radius, float *lo, float *hi) {
    float tol = 4.0f * m->eps;
    bool covered = false;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
            uint32_t e = m->qp_list[k];
            const qn__portal *p = &m->portals[e];
            if (p->edge[side_in(m, e, q)] != edge || !qn__portal_open(m, e, radius)) continue;
            float s0 = qn__dot(qn__sub(p->p0, c0), u), s1 = qn__dot(qn__sub(p->p1, c0), u);
            float a = s0 < s1 ? s0 : s1, b = s0 < s1 ? s1 : s0;
            if (a - tol > *hi || b + tol < *lo) continue;
            covered = true;
            if (a < *lo) *lo = a, changed = true;
            if (b > *hi) *hi = b, changed = true;
        }
    }
    return covered;
}

/* Is some wall point of edge `edge` of quad q closer than thr to a-b? The
** distance along the edge is convex, so the nearest wall point is the
** nearest point overall unless a run of open portals covers it; then it is
** one of that run's two ends. */
static bool edge_wall_near(const qn_mesh *m, uint32_t q, int edge, qn_vec2 a, qn_vec2 b,
                           float radius, float thr) {
    const qn_vec2 *k = &m->corners[4 * (size_t)q];
    qn_vec2 c0 = k[edge], c1 = k[(edge + 1) & 3];
    float dist, len = qn__len(qn__sub(c1, c0)), tol = 4.0f * m->eps;
    float s = closest_param(c0, c1, a, b, &dist) * len;
    if (dist >= thr) return false;
    qn_vec2 u = qn__scale(qn__sub(c1, c0), 1.0f / len);
    float lo = s, hi = s;
    if (!covered_run(m, q, edge, c0, u, radius, &lo, &hi)) return true;
    if (lo > tol && point_segment_dist(qn__add(c0, qn__scale(u, lo)), a, b) < thr) return true;
    return hi < len - tol && point_segment_dist(qn__add(c0, qn__scale(u, hi)), a, b) < thr;
}

static bool quad_wall_near(const qn_mesh *m, uint32_t q, qn_vec2 a, qn_vec2 b, float radius,
                           float thr) {
    const qn_vec2 *k = &m->corners[4 * (size_t)q];
    float x0 = fminf(fminf(k[0].x, k[1].x), fminf(k[2].x, k[3].x));
    float x1 = fmaxf(fmaxf(k[0].x, k[1].x), fmaxf(k[2].x, k[3].x));
    float y0 = fminf(fminf(k[0].y, k[1].y), fminf(k[2].y, k[3].y));
    float y1 = fmaxf(fmaxf(k[0].y, k[1].y), fmaxf(k[2].y, k[3].y));
    if (fminf(a.x, b.x) - thr > x1 || fmaxf(a.x, b.x) + thr < x0 ||
        fminf(a.y, b.y) - thr > y1 || fmaxf(a.y, b.y) + thr < y0)
        return false;
    for (int e = 0; e < 4; e++)
        if (edge_wall_near(m, q, e, a, b, radius, thr)) return true;
    return false;
}

/* Every wall point within thr of a-b lies in the box of an unblocked quad
** listed in the bucket holding that point, so the buckets around each
** piece of the segment (one bucket long) cover all candidates. */
static bool clear_of_walls(const qn_mesh *m, qn_vec2 a, qn_vec2 b, float radius) {
    float thr = radius - m->eps, pad = radius + 2.0f * m->eps;
    qn_vec2 d = qn__sub(b, a);
    uint32_t pieces = (uint32_t)fminf(ceilf(qn__len(d) / m->grid_cell), 1e6f);
    if (pieces == 0) pieces = 1;
    for (uint32_t i = 0; i < pieces; i++) {
        qn_vec2 p0 = qn__add(a, qn__scale(d, (float)i / (float)pieces));
        qn_vec2 p1 = i + 1 == pieces ? b : qn__add(a, qn__scale(d, (float)(i + 1) / (float)pieces));
        uint32_t x0, y0, x1, y1;
        bucket_index(m, fminf(p0.x, p1.x) - pad, fminf(p0.y, p1.y) - pad, &x0, &y0);
        bucket_index(m, fmaxf(p0.x, p1.x) + pad, fmaxf(p0.y, p1.y) + pad, &x1, &y1);
        for (uint32_t y = y0; y <= y1; y++)
            for (uint32_t x = x0; x <= x1; x++) {
                size_t cell = (size_t)y * m->grid_w + x;
                for (uint32_t j = m->cell_start[cell]; j < m->cell_start[cell + 1]; j++) {
                    uint32_t q = m->cell_list[j];
                    if (!m->blocked[q] && quad_wall_near(m, q, a, b, radius, thr)) return false;
                }
            }
    }
    return true;
}

qn_status qn_mesh_line_of_sight(const qn_mesh *mesh, qn_vec2 a, qn_vec2 b, float radius,
                                uint32_t hint, bool *visible) {
    if (visible) *visible = false;
    if (!mesh || !visible || !qn__finite2(a) || !qn__finite2(b) || !isfinite(radius) ||
        radius < 0.0f)
        return QN_E_INVALID_ARG;
    uint32_t q = start_quad(mesh, a, qn__sub(b, a), hint);
    if (q == QN_NONE) return QN_E_OUTSIDE;
    if (mesh->blocked[q] || !walk_inside(mesh, q, a, b, radius)) return QN_OK;
    *visible = radius <= 0.0f || clear_of_walls(mesh, a, b, radius);
    return QN_OK;
}
