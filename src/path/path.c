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
** Waypoints. The corridor is string-pulled with the funnel algorithm over
** inset portal ends: an end that a wall touches is moved `radius` along the
** portal (a hair's width for a point agent, and in open space), as the
** sampler's inset does. A bend at a convex wall corner is then drawn round a
** circle of that radius: tangent lines between consecutive bends, the arc
** as a few segments just outside the circle, touch points kept where the
** corner itself is the nearest wall. A convex corner of the corridor's
** quads that a straight stretch still passes closer than the radius (the
** stretch crosses its portal at a slant) is made a bend too.
**
** All scratch lives in the qn_pathfinder and is reset per query by
** generation stamps, so a query touches only what it explores. Only the
** any-angle search's node pool grows, and keeps its size between queries.
*/
#include "internal.h"
#include "core/heap.h"

#include <float.h>
#include <stdlib.h>

#define CLOSED (QN_NONE - 1u)
#define SIDE_BIT 0x80000000u
#define PI_F 3.14159265358979f

/* A funnel vertex: a circle of radius r around corner k that the path keeps
** on its left (side +1) or right (side -1), or a plain point (side 0, r 0);
** p is k moved r along its portal (the inset end the funnel aims at), idx
** its place in the corridor (0: the start, n + 1: the goal). */
typedef struct fvert {
    qn_vec2 k, p;
    float r;
    float side;
    uint32_t idx;
    uint32_t vid; /* the corner's vertex id, QN_NONE for a plain point */
} fvert;

struct qn_pathfinder {
    qn_allocator alloc;
    const qn_mesh *mesh;
    uint32_t np, nq;   /* portals (node np is the goal point) and quads */
    float hscale;      /* lowest open quad cost: the heuristic's factor */
    bool uniform;      /* every open quad costs the same */
    uint64_t hversion; /* mesh version hscale and uniform were taken at */
    uint32_t gen;      /* generation of the current query */
    qn__heap open; /* the cost search's open nodes (src/core/heap.h) */
    /* cost search, one slot per portal plus the goal */
    float *g, *h; /* h: the node's bound to the goal, taken once a query */
    uint32_t *parent, *pos, *stamp;
    qn__hent *heap; /* keyed by g + h */
    uint8_t *via;       /* side of the portal's quad it was reached through */
    uint32_t *corridor; /* portal | SIDE_BIT when entered from its q[1] */
    fvert *verts;       /* the funnel's output: 2 * np + 4 */
    /* Each quad's boundary as a cycle of vertices (corners and portal end
    ** points); sub-edge j runs from vertex j to j + 1 and is a portal or a
    ** wall (QN_NONE). Equal points share a vertex id. The mesh's own cycles
    ** (qn__mesh_boundary), read only: the mesh outlives the pathfinder. */
    const uint32_t *bstart; /* nq + 1 */
    const qn_vec2 *bv;
    const uint32_t *bportal, *bvid;
    const uint32_t *psub; /* 2 per portal: its sub-edge in q[0] and in q[1] */
    /* Per vertex id: does a wall without portal touch it, and (CSR) the
    ** boundary vertices at that point, whose quads' angles there and whose
    ** sub-edges tell whether it is a corner a path can bend round. */
    uint8_t *vwall;
    uint32_t *vpstart, *vplist;
    /* vertex_kind's answers (0: not asked yet) for the mesh version and
    ** radius in cver and crad. */
    uint8_t *vcorner;
    /* per quad: its boundary vertices that are such corners (quad_corners) */
    uint32_t *qcorners;
    uint64_t cver;
    float crad;
    uint32_t *bquad; /* per boundary vertex: its quad */
    float *bangle;   /* per boundary vertex: the quad's interior angle there */
    uint32_t nb;     /* boundary vertices */
    uint32_t *cstamp, *cpos; /* per quad: place in the corridor being cut */
    uint32_t *qseen, qgen;   /* per quad: last corner scan (qgen) that looked at it */
    void *block;
    size_t block_bytes;
    /* the any-angle search: the shared interval engine, and the chain of
    ** portals (and the quads they enter) of its answer */
    qn__isearch *is;
    const qn__pgeo *geo; /* the portals' segments (qn__mesh_segments) */
    uint32_t *chain_p, *chain_q;
    /* landmark lower bounds (landmark.c), built once the queries have done
    ** about as much search as building them takes; lwork counts that
    ** search (states), lfail notes a build that could not be made */
    qn__landmarks *lm;
    uint64_t lwork;
    bool lfail;
    /* the current query's: whether it uses them, which (the ones bounding
    ** the start's distance best), and their distances to the goal */
    bool lon;
    uint32_t nsel, sel[QN__MAX_LANDMARKS];
    float tlo[QN__MAX_LANDMARKS], thi[QN__MAX_LANDMARKS];
    bool pon; /* ... and the mid-point graph costs to the goal, tc */
    float tc[QN__MAX_LANDMARKS];
};

/* Landmarks per pathfinder: more cut the search further, each costs one
** exact instance to build and 4 bytes per boundary vertex. */
#define LANDMARKS 12u
/* ... of which a query uses the few that bound its start best: two of the
** bound's groups of four (interval.c), so the second group's lanes are not
** spent on padding. */
#define ACTIVE_LANDMARKS 8u

/* ---- create / destroy ---------------------------------------------------- */

/* Places every fixed array in one block (base NULL: only measures it). */
static uint64_t layout(qn_pathfinder *pf, char *base, uint32_t nbmax) {
    uint64_t off = 0, nodes = (uint64_t)pf->np + 1;
#define TAKE(field, count)                                                  \
    do {                                                                    \
        if (base) pf->field = (void *)(base + off);                         \
        off += (uint64_t)(count) * sizeof *pf->field;                       \
    } while (0)
    TAKE(verts, 2 * (uint64_t)pf->np + 4);
    TAKE(g, nodes);
    TAKE(h, nodes);
    TAKE(chain_p, (uint64_t)pf->np + 1);
    TAKE(chain_q, (uint64_t)pf->np + 1);
    TAKE(parent, nodes);
    TAKE(pos, nodes);
    TAKE(stamp, nodes);
    TAKE(heap, nodes);
    TAKE(corridor, pf->np);
    TAKE(vpstart, nbmax + 1);
    TAKE(vplist, nbmax);
    TAKE(bquad, nbmax);
    TAKE(bangle, nbmax);
    TAKE(cstamp, pf->nq);
    TAKE(cpos, pf->nq);
    TAKE(qseen, pf->nq);
    TAKE(qcorners, pf->nq); /* the 4-byte arrays before the byte ones */
    TAKE(via, nodes);
    TAKE(vwall, nbmax);
    TAKE(vcorner, nbmax);
#undef TAKE
    return off;
}

static inline uint8_t side_in(const qn_mesh *m, uint32_t e, uint32_t q) {
    return m->pq[e].q[0] == q ? 0 : 1;
}

/* Per boundary vertex: its quad and the quad's interior angle there (pi
** on a straight edge). */
static void vertex_angles(qn_pathfinder *pf, const qn__boundary *mb) {
    for (uint32_t q = 0; q < pf->nq; q++) {
        uint32_t base = pf->bstart[q], k = pf->bstart[q + 1] - base;
        for (uint32_t s = 0; s < k; s++) {
            pf->bquad[base + s] = q;
            pf->bangle[base + s] = qn__boundary_angle(mb, base, k, s);
        }
    }
}

/* For each vertex id: whether a wall sub-edge (no portal) ends there, and
** the boundary vertices at that point (CSR over vertex ids, all < nb). */
static void vertex_incidence(qn_pathfinder *pf, const qn__boundary *mb) {
    vertex_angles(pf, mb);
    memset(pf->vwall, 0, pf->nb);
    memset(pf->vpstart, 0, ((size_t)pf->nb + 1) * sizeof(uint32_t));
    for (uint32_t q = 0; q < pf->nq; q++) {
        uint32_t base = pf->bstart[q], k = pf->bstart[q + 1] - base;
        for (uint32_t s = 0; s < k; s++) {
            if (pf->bportal[base + s] == QN_NONE)
                pf->vwall[pf->bvid[base + s]] = pf->vwall[pf->bvid[base + (s + 1) % k]] = 1;
            pf->vpstart[pf->bvid[base + s] + 1]++;
        }
    }
    for (uint32_t v = 0; v < pf->nb; v++) pf->vpstart[v + 1] += pf->vpstart[v];
    for (uint32_t i = 0; i < pf->nb; i++) pf->vplist[pf->vpstart[pf->bvid[i]]++] = i;
    /* Filling advanced each start to the next one's: shift back. */
    for (uint32_t v = pf->nb; v > 0; v--) pf->vpstart[v] = pf->vpstart[v - 1];
    pf->vpstart[0] = 0;
}

/* Does some wall, or portal closed for this radius, end at vertex id v?
** Sets *open to the angle the open quads round it fill. */
static bool touches_wall(const qn_pathfinder *pf, uint32_t v, float radius, float *open_angle) {
    const qn_mesh *m = pf->mesh;
    bool wall = pf->vwall[v] != 0;
    float open = 0.0f;
    for (uint32_t i = pf->vpstart[v]; i < pf->vpstart[v + 1]; i++) {
        uint32_t b = pf->vplist[i], q = pf->bquad[b];
        uint32_t k = pf->bstart[q + 1] - pf->bstart[q], s = b - pf->bstart[q];
        uint32_t prev = pf->bportal[pf->bstart[q] + (s + k - 1) % k], next = pf->bportal[b];
        if (m->blocked[q]) continue;
        open += pf->bangle[b];
        wall = wall || (prev != QN_NONE && !qn__portal_open(m, prev, radius)) ||
               (next != QN_NONE && !qn__portal_open(m, next, radius));
    }
    *open_angle = open;
    return wall;
}

/* Can a shortest path bend at vertex id v? Only round an obstacle's convex
** corner: a wall touches it and the open quads round it fill more than a
** half turn (a wall's tip: a full turn). A point on a straight wall or in
** open space is no corner. */
#define KIND_KNOWN 1u
#define KIND_WALL 2u   /* a wall (or closed portal) ends there */
#define KIND_CORNER 4u /* ... and it is a convex corner */

/* What vertex id v is for this radius (KIND_* bits), cached per mesh
** version and radius: the cache is the pathfinder's, one thread's. */
static unsigned vertex_kind(const qn_pathfinder *pf, uint32_t v, float radius) {
    if (pf->vcorner[v]) return pf->vcorner[v];
    float open;
    bool wall = touches_wall(pf, v, radius, &open);
    unsigned kind = KIND_KNOWN | (wall ? KIND_WALL : 0u) |
                    (wall && open > QN__CORNER_OPEN ? KIND_CORNER : 0u);
    pf->vcorner[v] = (uint8_t)kind;
    return kind;
}

static bool is_corner(const qn_pathfinder *pf, uint32_t v, float radius) {
    return (vertex_kind(pf, v, radius) & KIND_CORNER) != 0;
}

/* Quad q's boundary vertices that are corners (vertex t: bit t), with
** QCORNERS_KNOWN; cached beside vertex_kind's answers. Only cycles of up to
** QCORNERS_MAX vertices have bits: a longer one gets them all, and
** corners_of asks vertex by vertex. So QCORNERS_KNOWN alone means no
** corner. */
#define QCORNERS_KNOWN 0x80000000u
#define QCORNERS_MAX 31u
static uint32_t quad_corners(const qn_pathfinder *pf, uint32_t q, float radius) {
    uint32_t bits = pf->qcorners[q];
    if (bits) return bits;
    uint32_t base = pf->bstart[q], k = pf->bstart[q + 1] - base;
    bits = k <= QCORNERS_MAX ? QCORNERS_KNOWN : ~0u;
    for (uint32_t t = 0; t < k && k <= QCORNERS_MAX; t++)
        if (is_corner(pf, pf->bvid[base + t], radius)) bits |= 1u << t;
    pf->qcorners[q] = bits;
    return bits;
}

/* Forgets cached corners when the mesh changed, or the radius changed
** which portals are open (a corner depends only on those). */
static void corner_cache_for(qn_pathfinder *pf, float radius) {
    if (pf->cver == pf->mesh->version && qn__isearch_same_portals(pf->is, pf->crad, radius)) {
        pf->crad = radius;
        return;
    }
    memset(pf->vcorner, 0, pf->nb);
    memset(pf->qcorners, 0, (size_t)pf->nq * sizeof *pf->qcorners);
    pf->cver = pf->mesh->version;
    pf->crad = radius;
}

/* The mesh's boundary cycles (built on first use, shared with every field
** and pathfinder of the mesh), read where they are. */
static qn_status use_boundaries(qn_pathfinder *pf, const qn__boundary **out, qn_error *err) {
    const qn__boundary *mb = qn__mesh_boundary(pf->mesh, err);
    *out = mb;
    if (!mb) return QN_E_NOMEM;
    pf->nb = mb->nb;
    pf->bstart = mb->bstart;
    pf->bv = mb->bv;
    pf->bportal = mb->bportal;
    pf->bvid = mb->bvid;
    pf->psub = mb->psub;
    return QN_OK;
}

/* Lowest open quad cost, and whether all open quads cost the same. */
static void scan_costs(qn_pathfinder *pf) {
    const qn_mesh *m = pf->mesh;
    float lo = QN_MAX_QUAD_COST, hi = 1.0f;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        if (m->blocked[q]) continue;
        lo = fminf(lo, qn__quad_cost(m, q));
        hi = fmaxf(hi, qn__quad_cost(m, q));
    }
    pf->hscale = lo;
    pf->uniform = hi <= lo;
    pf->hversion = m->version;
}

void qn_pathfinder_destroy(qn_pathfinder *pf) {
    if (!pf) return;
    qn_allocator a = pf->alloc;
    qn__free(&a, pf->block, pf->block_bytes);
    qn__isearch_destroy(pf->is);
    qn__landmarks_destroy(pf->lm);
    qn__free(&a, pf, sizeof *pf);
}

/* The fixed arrays, sized for the mesh's boundary vertices (pf->nb). */
static qn_status alloc_block(qn_pathfinder *pf, qn_error *err) {
    if (pf->nb >= UINT32_MAX / 2)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "mesh too large for a pathfinder");
    uint64_t n = layout(pf, NULL, pf->nb);
    if (n > SIZE_MAX / 2)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "pathfinder scratch of %.0f bytes", (double)n);
    pf->block = qn__alloc(&pf->alloc, (size_t)n);
    if (!pf->block)
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (pathfinder scratch, %.0f bytes)",
                        (double)n);
    pf->block_bytes = (size_t)n;
    layout(pf, pf->block, pf->nb);
    memset(pf->stamp, 0, ((size_t)pf->np + 1) * sizeof(uint32_t));
    memset(pf->cstamp, 0, (size_t)pf->nq * sizeof(uint32_t));
    memset(pf->qseen, 0, (size_t)pf->nq * sizeof(uint32_t));
    pf->qgen = 0;
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
    const qn__boundary *mb;
    qn_status st = use_boundaries(pf, &mb, err);
    if (st == QN_OK) st = alloc_block(pf, err);
    if (st == QN_OK) vertex_incidence(pf, mb);
    if (st == QN_OK &&
        qn__isearch_create(mesh, &a, nmax > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)nmax,
                           &pf->is) != QN_OK)
        st = qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (pathfinder search)");
    if (st != QN_OK) {
        qn_pathfinder_destroy(pf);
        return st;
    }
    pf->geo = qn__mesh_segments(mesh); /* built by the engine's creation */
    scan_costs(pf);
    pf->cver = UINT64_MAX; /* no corner cached yet */
    *out = pf;
    return QN_OK;
}

bool qn__pathfinder_has_landmarks(const qn_pathfinder *pf) { return pf && pf->lm; }

size_t qn_pathfinder_bytes(const qn_pathfinder *pf) {
    if (!pf) return 0;
    return sizeof *pf + pf->block_bytes + qn__isearch_bytes(pf->is) + qn__landmarks_bytes(pf->lm);
}

/* ---- the open list ----------------------------------------------------------- */

static uint32_t pop_min(qn_pathfinder *pf) {
    uint32_t top = qn__heap_pop(&pf->open);
    pf->pos[top] = CLOSED;
    return top;
}

/* ---- the search ------------------------------------------------------------- */

typedef struct query {
    qn_pathfinder *pf;
    const qn_mesh *m;
    qn_vec2 from, to;
    uint32_t qs, qg;
    /* The corridor's first and last quads: qs and qg, but for the any-angle
    ** corridor of an end within the tolerance of a shared edge (ends_quad). */
    uint32_t cs, cg;
    float radius;
} query;

/* A lower bound on the length of a path from portal v's mid point to the
** goal: the straight distance, or the landmarks' bound when larger (the
** portal is a sub-edge of its quads, and its mid point lies within half
** its width of either end). */
static float portal_bound(const qn_pathfinder *pf, const query *Q, uint32_t v) {
    const qn__pgeo *p = &pf->geo[v];
    float h = qn__len(qn__sub(qn__pgeo_mid(p), Q->to));
    if (!pf->lon) return h;
    const qn__landmarks *L = pf->lm;
    uint32_t q = Q->m->pq[v].q[0], i0 = pf->bstart[q] + pf->psub[2 * v];
    uint32_t i1 = i0 + 1 == pf->bstart[q + 1] ? pf->bstart[q] : i0 + 1;
    const float *v0 = L->d + (size_t)i0 * L->k, *v1 = L->d + (size_t)i1 * L->k;
    float half = 0.5f * qn__len(qn__sub(pf->bv[i1], pf->bv[i0])), best = 0.0f;
    for (uint32_t j = 0; j < pf->nsel; j++) {
        float d0 = v0[pf->sel[j]], d1 = v1[pf->sel[j]];
        if (!(d0 < INFINITY && d1 < INFINITY)) continue;
        float lo = (d0 > d1 ? d0 : d1) - half, hi = (d0 < d1 ? d0 : d1) + half;
        float hj = pf->tlo[j] - hi > lo - pf->thi[j] ? pf->tlo[j] - hi : lo - pf->thi[j];
        best = hj > best ? hj : best;
    }
    best -= L->slack;
    return best > h ? best : h;
}

/* A lower bound on portal v's cost to the goal: the straight one times the
** lowest quad cost, or the landmarks' over the mid-point graph. */
static float cost_bound(const qn_pathfinder *pf, const query *Q, uint32_t v) {
    float h = pf->hscale * portal_bound(pf, Q, v);
    if (!pf->pon) return h;
    const qn__landmarks *L = pf->lm;
    const float *d = L->pd + (size_t)v * L->k;
    float best = 0.0f;
    for (uint32_t j = 0; j < L->k; j++) {
        if (!(d[j] < INFINITY && pf->tc[j] < INFINITY)) continue;
        float x = d[j] > pf->tc[j] ? d[j] - pf->tc[j] : pf->tc[j] - d[j];
        best = x > best ? x : best;
    }
    best -= L->pslack;
    return best > h ? best : h;
}

/* Lowers node v's cost to gv (reached from `par` through v's side `via`). */
static void improve(query *Q, uint32_t v, float gv, uint32_t par, uint8_t via) {
    qn_pathfinder *pf = Q->pf;
    if (pf->stamp[v] != pf->gen) {
        pf->stamp[v] = pf->gen;
        pf->pos[v] = QN_NONE;
        pf->g[v] = INFINITY;
        pf->h[v] = v < pf->np ? cost_bound(pf, Q, v) : 0.0f;
    }
    /* A closed node reopens when reached more cheaply: the landmarks'
    ** bound is admissible but not consistent. */
    if (gv >= pf->g[v]) return;
    pf->g[v] = gv;
    pf->parent[v] = par;
    pf->via[v] = via;
    if (pf->pos[v] == QN_NONE || pf->pos[v] == CLOSED) qn__heap_push(&pf->open, v, gv + pf->h[v]);
    else qn__heap_lowered(&pf->open, v, gv + pf->h[v]);
}

/* From portal u (cost gu), every open portal of quad q = u's side `side`. */
static void relax_through(query *Q, uint32_t q, int side, uint32_t u, float gu) {
    const qn_mesh *m = Q->m;
    uint32_t base = m->qp_start[q], k = m->qp_start[q + 1] - base;
    float w = qn__quad_cost(m, q);
    qn_vec2 mu = qn__pgeo_mid(&Q->pf->geo[u]);
    (void)side;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t v = m->qp_list[base + j];
        if (v == u || !qn__portal_open(m, v, Q->radius)) continue;
        improve(Q, v, gu + w * qn__len(qn__sub(mu, qn__pgeo_mid(&Q->pf->geo[v]))), u,
                side_in(m, v, q));
    }
}

/* Starts a query: every stamp older than the new generation reads as unset. */
static void new_generation(qn_pathfinder *pf) {
    pf->open = (qn__heap){pf->heap, 0, pf->pos};
    if (++pf->gen == 0) { /* wrapped: forget every stamp */
        memset(pf->stamp, 0, ((size_t)pf->np + 1) * sizeof(uint32_t));
        memset(pf->cstamp, 0, (size_t)pf->nq * sizeof(uint32_t));
        pf->gen = 1;
    }
}

/* A* from Q->from to Q->to; on success *cost is the goal node's cost. */
static qn_status search(query *Q, float *cost) {
    qn_pathfinder *pf = Q->pf;
    const qn_mesh *m = Q->m;
    uint32_t goal = pf->np;
    float ws = qn__quad_cost(m, Q->qs), wg = qn__quad_cost(m, Q->qg);
    for (uint32_t i = m->qp_start[Q->qs]; i < m->qp_start[Q->qs + 1]; i++) {
        uint32_t v = m->qp_list[i];
        if (qn__portal_open(m, v, Q->radius))
            improve(Q, v, ws * qn__len(qn__sub(qn__pgeo_mid(&Q->pf->geo[v]), Q->from)), QN_NONE,
                    side_in(m, v, Q->qs));
    }
    while (pf->open.n > 0) {
        uint32_t u = pop_min(pf);
        float gu = pf->g[u];
        if (u == goal) {
            *cost = gu;
            return QN_OK;
        }
        for (int side = 0; side < 2; side++) {
            uint32_t q = m->pq[u].q[side];
            if (q == Q->qg)
                improve(Q, goal, gu + wg * qn__len(qn__sub(qn__pgeo_mid(&Q->pf->geo[u]), Q->to)),
                        u, (uint8_t)side);
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

/* ---- the any-angle corridor (the interval engine, interval.c) ---------------- */

/* Appends portal c (with its side bit) entering quad q to the corridor of
** length *n, cutting any loop: a quad entered twice means the stretch
** between is a turn round a shared corner (at no length), and inside the
** convex quad the path can go straight anyway. */
static void corridor_step(qn_pathfinder *pf, uint32_t c, uint32_t q, uint32_t *n) {
    if (pf->cstamp[q] == pf->gen) {
        uint32_t keep = pf->cpos[q];
        for (uint32_t i = keep; i < *n; i++) {
            const qn__pq *p = &pf->mesh->pq[pf->corridor[i] & ~SIDE_BIT];
            pf->cstamp[p->q[(pf->corridor[i] & SIDE_BIT) ? 0 : 1]] = 0;
        }
        *n = keep;
        pf->cstamp[q] = pf->gen;
        return;
    }
    pf->corridor[(*n)++] = c;
    pf->cstamp[q] = pf->gen;
    pf->cpos[q] = *n;
}

/* The quad the any-angle corridor starts (or ends) in for point p, located
** in q: q when it holds p without the mesh tolerance, else an open portal
** neighbour (for the radius) that does, else q. A point within the
** tolerance of a shared edge is located in the lower-numbered quad (as
** fields locate it, so that the cost search's costs agree with theirs); a
** corridor starting there would lead through a portal behind the point,
** and the string pulled path back to that portal first (20,000 units out,
** where the tolerance is 0.02: a path 0.9 up and back). */
static uint32_t ends_quad(const qn_mesh *m, uint32_t q, qn_vec2 p, float radius) {
    if (qn__quad_holds(m, q, p, 0.0f)) return q;
    for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
        uint32_t e = m->qp_list[k], r = qn__portal_other(m, e, q);
        if (qn__portal_open(m, e, radius) && qn__quad_holds(m, r, p, 0.0f)) return r;
    }
    return q;
}

/* Shortest any-angle corridor, from the shared interval engine: the portals
** its shortest path crosses, loops cut. QN_OK, QN_E_UNREACHABLE, QN_E_NOMEM,
** or QN_E_LIMIT when the state bound is hit (the caller falls back). */
static qn_status any_angle(query *Q, uint32_t *count) {
    qn_pathfinder *pf = Q->pf;
    float len;
    const qn_mesh *m = Q->m;
    uint32_t qs = ends_quad(m, Q->qs, Q->from, Q->radius);
    uint32_t qt = ends_quad(m, Q->qg, Q->to, Q->radius);
    if (pf->lon)
        qn__isearch_bounds(pf->is, pf->lm->d, pf->lm->k, pf->sel, pf->nsel, pf->tlo, pf->thi,
                           pf->lm->slack);
    else qn__isearch_bounds(pf->is, NULL, 0, NULL, 0, NULL, NULL, 0.0f);
    qn_status st = qn__isearch_path(pf->is, Q->from, qs, Q->to, qt, Q->radius, &len);
    pf->lwork += qn__isearch_states(pf->is);
    if (st != QN_OK) return st;
    Q->cs = qs, Q->cg = qt;
    uint32_t len_chain = qn__isearch_chain(pf->is, pf->chain_p, pf->chain_q, pf->np + 1);
    if (len_chain == UINT32_MAX) return QN_E_LIMIT;
    uint32_t n = 0;
    pf->cstamp[qs] = pf->gen;
    pf->cpos[qs] = 0;
    for (uint32_t i = 0; i < len_chain; i++) {
        uint32_t e = pf->chain_p[i], q = pf->chain_q[i];
        corridor_step(pf, e | (pf->mesh->pq[e].q[0] == q ? SIDE_BIT : 0u), q, &n);
    }
    *count = n;
    return QN_OK;
}

/* ---- the funnel ------------------------------------------------------------------- */

static fvert point_vert(qn_vec2 p, uint32_t idx) {
    fvert v = {p, p, 0.0f, 0.0f, idx, QN_NONE};
    return v;
}

/* Radius of the circles at obstacle corners: the agent's, or for a point
** agent the engine's tolerance (qn__tol_inner: a few float steps), so no
** segment runs exactly through a wall's end point (where float noise could
** put it outside). Smaller than the sampler's inset: here it adds to the
** length of every bend. */
static float corner_radius(const qn_mesh *m, float radius) {
    float tiny = qn__tol_inner(m);
    return radius > tiny ? radius : tiny;
}

/* Vertex id of end point p0 (end 0) or p1 of portal e. In q[0]'s boundary
** the portal's sub-edge runs from p0 to p1. */
static uint32_t end_vid(const qn_pathfinder *pf, uint32_t e, int end) {
    uint32_t q = pf->mesh->pq[e].q[0], base = pf->bstart[q], k = pf->bstart[q + 1] - base;
    return pf->bvid[base + (pf->psub[2 * e] + (uint32_t)end) % k];
}

/* End `end` of portal e, on `side` of the path. The funnel aims at its
** inset point: rc along the portal where a wall touches the end, a hair's
** width in open space. The path rounds a convex obstacle corner on a circle
** of that radius; elsewhere (a point on a straight wall, or in open space)
** the inset point itself is the vertex, since a circle there would let a
** tangent come closer to the wall than the radius. */
static fvert end_vert(const query *Q, uint32_t e, int end, float side, float rc, uint32_t idx) {
    const qn__pgeo *p = &Q->pf->geo[e];
    uint32_t vid = end_vid(Q->pf, e, end);
    unsigned kind = vertex_kind(Q->pf, vid, Q->radius);
    float r = (kind & KIND_WALL) ? rc : qn__tol_inner(Q->m);
    r = r < 0.5f * p->width ? r : 0.5f * p->width;
    fvert v;
    v.k = end ? p->p1 : p->p0;
    qn_vec2 dir = qn__pgeo_dir(p);
    v.p = qn__add(v.k, qn__scale(dir, end ? -r : r));
    v.r = r;
    v.side = side;
    v.idx = idx;
    v.vid = vid;
    if (!(kind & KIND_CORNER)) {
        v.k = v.p;
        v.r = 0.0f;
        v.vid = QN_NONE;
    }
    return v;
}

/* Corridor portal i (1-based; i = n + 1 is the goal) as seen when crossing
** it: crossing from q[0] (on the left of p0->p1) to q[1], p1 is on the left. */
static void portal_verts(const query *Q, uint32_t n, uint32_t i, float rc, fvert *l, fvert *r) {
    if (i > n) {
        *l = *r = point_vert(Q->to, i);
        return;
    }
    uint32_t c = Q->pf->corridor[i - 1], e = c & ~SIDE_BIT;
    int left_end = (c & SIDE_BIT) ? 0 : 1;
    *l = end_vert(Q, e, left_end, 1.0f, rc, i);
    *r = end_vert(Q, e, 1 - left_end, -1.0f, rc, i);
}

/* > 0 when c is left of the line a->b. */
static float tri(qn_vec2 a, qn_vec2 b, qn_vec2 c) {
    return qn__cross(qn__sub(b, a), qn__sub(c, a));
}

static bool veq(qn_vec2 a, qn_vec2 b) { return a.x == b.x && a.y == b.y; }

typedef struct funnel {
    fvert apex, left, right;
    uint32_t n; /* vertices written to out */
} funnel;

static void push_apex(funnel *fn, fvert *out, fvert v) {
    if (!veq(out[fn->n - 1].p, v.p)) out[fn->n++] = v;
    fn->apex = fn->left = fn->right = v;
}

/* One portal of the simple funnel over inset end points; true when the
** apex moved (the scan restarts after it). */
static bool funnel_step(funnel *fn, fvert *out, const fvert *l, const fvert *r) {
    qn_vec2 a = fn->apex.p;
    if (tri(a, fn->right.p, r->p) >= 0.0f) {
        if (veq(a, fn->right.p) || tri(a, fn->left.p, r->p) < 0.0f) {
            fn->right = *r;
        } else {
            push_apex(fn, out, fn->left);
            return true;
        }
    }
    if (tri(a, fn->left.p, l->p) <= 0.0f) {
        if (veq(a, fn->left.p) || tri(a, fn->right.p, l->p) > 0.0f) {
            fn->left = *l;
        } else {
            push_apex(fn, out, fn->right);
            return true;
        }
    }
    return false;
}

/* Portals whose ends run_funnel keeps worked out: a scan restarts at the
** apex, most often a few portals back, and then reads them again. */
#define FUNNEL_KEEP 64u

/* The string-pulled vertex chain through a corridor of n portals: from,
** the corners it bends at, to. Returns the number of vertices. */
static uint32_t run_funnel(const query *Q, uint32_t n, float rc) {
    fvert *out = Q->pf->verts;
    funnel fn;
    struct {
        uint32_t i;
        fvert l, r;
    } kept[FUNNEL_KEEP];
    for (uint32_t k = 0; k < FUNNEL_KEEP; k++) kept[k].i = 0; /* portal 0 is never asked */
    out[0] = point_vert(Q->from, 0);
    fn.n = 1;
    fn.apex = fn.left = fn.right = out[0];
    for (uint32_t i = 1; i <= n + 1; i++) {
        uint32_t k = i % FUNNEL_KEEP;
        if (kept[k].i != i) {
            portal_verts(Q, n, i, rc, &kept[k].l, &kept[k].r);
            kept[k].i = i;
        }
        if (funnel_step(&fn, out, &kept[k].l, &kept[k].r)) i = fn.apex.idx;
    }
    out[fn.n++] = point_vert(Q->to, n + 1);
    return fn.n;
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

/* Where a path along direction d touches vertex v's circle. */
static qn_vec2 touch(const fvert *v, qn_vec2 d) {
    return qn__sub(v->k, qn__scale(left_normal(d), v->side * v->r));
}

/* Corridor quad i: the one entered by portal i (the start quad for 0). */
static uint32_t corridor_quad(const query *Q, uint32_t n, uint32_t i) {
    if (i == 0) return Q->cs;
    if (i > n) return Q->cg;
    uint32_t c = Q->pf->corridor[i - 1];
    return Q->m->pq[c & ~SIDE_BIT].q[(c & SIDE_BIT) ? 0 : 1];
}

/* Bucket of the mesh grid holding (x, y), clamped to the grid. */
static size_t bucket_index(const qn_mesh *m, float x, float y, uint32_t *cx, uint32_t *cy) {
    float fx = (x - m->grid_origin.x) * m->grid_inv_cell;
    float fy = (y - m->grid_origin.y) * m->grid_inv_cell;
    *cx = fx > 0.0f ? (fx >= (float)m->grid_w ? m->grid_w - 1 : (uint32_t)fx) : 0;
    *cy = fy > 0.0f ? (fy >= (float)m->grid_h ? m->grid_h - 1 : (uint32_t)fy) : 0;
    return (size_t)*cy * m->grid_w + *cx;
}

typedef struct near_corner {
    const query *Q;
    uint32_t n; /* corridor portals */
    const fvert *a, *b;
    qn_vec2 pa, pb;
    float rc, worst;
    fvert found;
    /* Corners this near the start (goal) are left alone: rc when that end
    ** is clear of walls, 2 rc when not (no clearance to keep there). */
    float keep_from, keep_to;
} near_corner;

/* Sub-edge of corridor quad q that portal i (1..n) lies on. */
static uint32_t portal_sub(const query *Q, uint32_t i, uint32_t q) {
    uint32_t e = Q->pf->corridor[i - 1] & ~SIDE_BIT;
    return Q->pf->psub[2 * e + side_in(Q->m, e, q)];
}

/* Side of the path the boundary vertex t of corridor quad i (between
** portals i and i + 1) is on. Going through the quad, its boundary from the
** entry's right end round to the exit's right end is on the right, the
** rest on the left. In the start (goal) quad only the ends of the exit
** (entry) are fixed so. */
/* The side of corner c of the start quad (start true) or the goal quad for
** the stretch being checked. When the stretch runs from the start (to the
** goal), the path in that quad runs straight between the end point and
** where the stretch's line meets the exit (entry) portal, kept on the
** portal: rounding the bend at the stretch's far end can carry its line
** out of the quad's side before the portal, to the wrong side of a corner
** there. Otherwise the stretch's own line decides. */
static float end_side(const near_corner *nc, bool start, qn_vec2 c) {
    const query *Q = nc->Q;
    qn_vec2 a = nc->pa, b = nc->pb;
    bool end = start ? veq(nc->a->p, Q->from) : veq(nc->b->p, Q->to);
    /* So is a stretch from a bend inside the start quad (to one inside the
    ** goal quad: at an end of the exit (entry) portal, or a corner made a
    ** bend there) that crosses the portal's line between its two ends: its
    ** line too can pass a corner of that quad on the wrong side. */
    bool bend = qn__quad_contains(Q->m, start ? Q->cs : Q->cg, start ? a : b);
    if (end || bend) {
        const qn__pgeo *g = &Q->pf->geo[Q->pf->corridor[start ? 0 : nc->n - 1] & ~SIDE_BIT];
        qn_vec2 d = qn__sub(b, a), w = qn__sub(g->p1, g->p0);
        float den = qn__cross(w, d);
        if (fabsf(den) > 1e-12f * qn__dot(w, w) * qn__dot(d, d)) {
            float u = qn__cross(qn__sub(a, g->p0), d) / den;
            qn_vec2 x = qn__add(g->p0, qn__scale(w, u < 0.0f ? 0.0f : (u > 1.0f ? 1.0f : u)));
            qn_vec2 cross_at = qn__add(g->p0, qn__scale(w, u)); /* unclamped */
            float t = qn__dot(qn__sub(cross_at, a), d);
            if (end || (t > 0.0f && t < qn__dot(d, d))) {
                if (start) b = x;
                else a = x;
            }
        }
    }
    return tri(a, b, c) >= 0.0f ? 1.0f : -1.0f;
}

static float chain_side(const near_corner *nc, uint32_t i, uint32_t q, uint32_t t, uint32_t k) {
    const query *Q = nc->Q;
    qn_vec2 c = Q->pf->bv[Q->pf->bstart[q] + t];
    if (nc->n == 0) return tri(nc->pa, nc->pb, c) >= 0.0f ? 1.0f : -1.0f;
    if (i == 0 || i == nc->n) {
        uint32_t j = i == 0 ? portal_sub(Q, 1, q) : portal_sub(Q, nc->n, q);
        if (t == j) return i == 0 ? -1.0f : 1.0f;
        if (t == (j + 1) % k) return i == 0 ? 1.0f : -1.0f;
        /* Inside the convex start (goal) quad the path runs straight to the
        ** exit (from the entry): it is on the right side of every other
        ** corner of that quad already. */
        return end_side(nc, i == 0, c);
    }
    uint32_t in = portal_sub(Q, i, q), out = portal_sub(Q, i + 1, q);
    uint32_t from = (in + 1) % k;
    return (t + k - from) % k <= (out + k - from) % k ? -1.0f : 1.0f;
}

/* The side of the path corner c (vertex id v) goes on. If a corridor quad
** (marked in cstamp/cpos) has it, that quad's boundary says; else it lies
** beyond an open portal the path does not cross, on the side it is seen. */
static float corner_side(const near_corner *nc, uint32_t v, qn_vec2 c) {
    const qn_pathfinder *pf = nc->Q->pf;
    for (uint32_t i = pf->vpstart[v]; i < pf->vpstart[v + 1]; i++) {
        uint32_t b = pf->vplist[i], q = pf->bquad[b];
        if (pf->cstamp[q] == pf->gen)
            return chain_side(nc, pf->cpos[q], q, b - pf->bstart[q], pf->bstart[q + 1] - pf->bstart[q]);
    }
    return tri(nc->pa, nc->pb, c) >= 0.0f ? 1.0f : -1.0f;
}

/* Looks at the convex obstacle corners on quad q's boundary (bits: its
** quad_corners) as circles of radius rc. */
static void corners_of(near_corner *nc, uint32_t q, uint32_t bits) {
    const qn_pathfinder *pf = nc->Q->pf;
    uint32_t base = pf->bstart[q], k = pf->bstart[q + 1] - base;
    float tol = fminf(4.0f * nc->Q->m->eps, 0.25f * nc->rc);
    qn_vec2 ab = qn__sub(nc->pb, nc->pa);
    float ab2 = qn__dot(ab, ab), len = sqrtf(ab2);
    qn_vec2 u = len > 0.0f ? qn__scale(ab, 1.0f / len) : qn__v2(0.0f, 0.0f);
    float far2 = 4.0f * nc->rc * nc->rc, radius = nc->Q->radius;
    /* A short cycle's corners are its mask's bits, taken lowest first; a
    ** long one's are asked vertex by vertex. */
    bool masked = k <= QCORNERS_MAX;
    uint32_t rest = masked ? bits & ~QCORNERS_KNOWN : 0;
    for (uint32_t t = 0;; t++) {
        if (masked) {
            if (!rest) break;
            t = qn__ctz32(rest);
            rest &= rest - 1u;
        } else if (t >= k) {
            break;
        } else if (!is_corner(pf, pf->bvid[base + t], radius)) {
            continue;
        }
        qn_vec2 c = pf->bv[base + t];
        /* Most corners lie farther than 2 rc: squared, without a root or
        ** a division (along the stretch's unit direction). */
        qn_vec2 ac = qn__sub(c, nc->pa);
        float s = qn__dot(ac, u);
        s = s < 0.0f ? 0.0f : (s > len ? len : s);
        qn_vec2 away = qn__sub(ac, qn__scale(u, s));
        if (qn__dot(away, away) > 1.0001f * far2) continue;
        if (veq(c, nc->a->k) || veq(c, nc->b->k)) continue;
        float dist = qn__point_segment_dist(c, nc->pa, nc->pb);
        /* Rounding moves a stretch at most about rc off the funnel's line,
        ** so a corner passed on its wrong side is this near too. */
        if (dist >= 2.0f * nc->rc) continue;
        /* Within the radius of the start or goal no path clears it. */
        if (qn__len(qn__sub(c, nc->Q->from)) < nc->keep_from ||
            qn__len(qn__sub(c, nc->Q->to)) < nc->keep_to)
            continue;
        float side = corner_side(nc, pf->bvid[base + t], c), depth = nc->rc - tol - dist;
        float along = ab2 > 0.0f ? qn__dot(qn__sub(c, nc->pa), ab) / ab2 : 0.0f;
        float off = len > 0.0f ? tri(nc->pa, nc->pb, c) / len : 0.0f;
        if (along > 0.0f && along < 1.0f && side * off < 0.0f)
            depth = nc->rc + fabsf(off); /* the stretch runs through the obstacle */
        if (depth <= nc->worst) continue;
        nc->worst = depth;
        nc->found.k = nc->found.p = c;
        nc->found.r = nc->rc;
        nc->found.side = side;
        nc->found.idx = nc->a->idx;
        nc->found.vid = pf->bvid[base + t];
    }
}

/* fminf/fmaxf without their NAN rules, which keep compilers from inlining
** them in this hot test (corners and stretches are finite). */
static inline float min_f(float a, float b) { return a < b ? a : b; }
static inline float max_f(float a, float b) { return a > b ? a : b; }

/* Does segment a-b pass within pad of quad q's box (the box grown by pad
** meets it)? Boxes first; then whether the segment's line leaves all four
** corners of the grown box on one side. */
static bool near_box(const qn_mesh *m, uint32_t q, qn_vec2 a, qn_vec2 b, float pad) {
    qn_vec2 k_at[4];
    const qn_vec2 *k = qn__corners(m, q, k_at);
    float x0 = min_f(min_f(k[0].x, k[1].x), min_f(k[2].x, k[3].x)) - pad;
    float x1 = max_f(max_f(k[0].x, k[1].x), max_f(k[2].x, k[3].x)) + pad;
    float y0 = min_f(min_f(k[0].y, k[1].y), min_f(k[2].y, k[3].y)) - pad;
    float y1 = max_f(max_f(k[0].y, k[1].y), max_f(k[2].y, k[3].y)) + pad;
    if (min_f(a.x, b.x) > x1 || max_f(a.x, b.x) < x0 || min_f(a.y, b.y) > y1 ||
        max_f(a.y, b.y) < y0)
        return false;
    qn_vec2 d = qn__sub(b, a);
    float s0 = d.x * (y0 - a.y) - d.y * (x0 - a.x), s1 = d.x * (y0 - a.y) - d.y * (x1 - a.x);
    float s2 = d.x * (y1 - a.y) - d.y * (x0 - a.x), s3 = d.x * (y1 - a.y) - d.y * (x1 - a.x);
    return !((s0 > 0.0f && s1 > 0.0f && s2 > 0.0f && s3 > 0.0f) ||
             (s0 < 0.0f && s1 < 0.0f && s2 < 0.0f && s3 < 0.0f));
}

/* Calls visit for every unblocked quad listed in the mesh buckets within
** pad of each bucket-long piece of the segment a-b (a quad listed in
** several such buckets is visited more than once; the segment itself is
** the visitor's to know); stops, returning false, as soon as visit does.
** Any point within pad of the segment lies in a bucket so visited. */
typedef bool (*quad_visit)(void *ctx, uint32_t q);

static bool each_quad_near(const qn_mesh *m, qn_vec2 a, qn_vec2 b, float pad, quad_visit visit,
                           void *ctx) {
    qn_vec2 d = qn__sub(b, a);
    uint32_t pieces = (uint32_t)fminf(ceilf(qn__len(d) / m->grid_cell), 1e6f);
    if (pieces == 0) pieces = 1;
    uint32_t px0 = 0, px1 = 0, py0 = 0, py1 = 0; /* the previous piece's buckets */
    for (uint32_t i = 0; i < pieces; i++) {
        qn_vec2 p0 = qn__add(a, qn__scale(d, (float)i / (float)pieces));
        qn_vec2 p1 = i + 1 == pieces ? b : qn__add(a, qn__scale(d, (float)(i + 1) / (float)pieces));
        uint32_t x0, y0, x1, y1;
        bucket_index(m, fminf(p0.x, p1.x) - pad, fminf(p0.y, p1.y) - pad, &x0, &y0);
        bucket_index(m, fmaxf(p0.x, p1.x) + pad, fmaxf(p0.y, p1.y) + pad, &x1, &y1);
        for (uint32_t y = y0; y <= y1; y++)
            for (uint32_t x = x0; x <= x1; x++) {
                /* Consecutive pieces share buckets: each is visited once. */
                if (i > 0 && x >= px0 && x <= px1 && y >= py0 && y <= py1) continue;
                size_t cell = (size_t)y * m->grid_w + x;
                for (uint32_t j = m->cell_start[cell]; j < m->cell_start[cell + 1]; j++) {
                    uint32_t q = qn__bucket_quad(m, cell, j);
                    if (!m->blocked[q] && !visit(ctx, q)) return false;
                }
            }
        px0 = x0, px1 = x1, py0 = y0, py1 = y1;
    }
    return true;
}

typedef struct corner_scan {
    near_corner *nc;
    float pad;
    uint32_t *seen, gen; /* a quad listed in several buckets is looked at once */
} corner_scan;

static bool visit_corners(void *ctx, uint32_t q) {
    corner_scan *cs = ctx;
    if (cs->seen[q] == cs->gen) return true;
    cs->seen[q] = cs->gen;
    /* A quad without corners has nothing to look at (most of them). */
    uint32_t bits = quad_corners(cs->nc->Q->pf, q, cs->nc->Q->radius);
    if (bits == QCORNERS_KNOWN) return true;
    /* corners_of looks at corners within 2 rc of the stretch. */
    if (near_box(cs->nc->Q->m, q, cs->nc->pa, cs->nc->pb, 2.0f * cs->nc->rc + cs->pad))
        corners_of(cs->nc, q, bits);
    return true;
}

static qn_vec2 clamp_to_free(const qn_pathfinder *pf, const fvert *v, float radius, qn_vec2 m);

/* Where the stretch along d leaves or reaches vertex v as the waypoints
** draw it (emit_bend): the touch point, or, when a wall ending at the
** corner moves it (clamp_to_free), the point it is moved to (by a hair at
** most for a point agent, whose scan looks at corners on the stretch). */
static qn_vec2 drawn_touch(const query *Q, const fvert *v, qn_vec2 d) {
    qn_vec2 m0 = qn__scale(left_normal(d), -v->side);
    if (v->vid == QN_NONE || !(Q->radius > 0.0f)) return touch(v, d);
    qn_vec2 m = clamp_to_free(Q->pf, v, Q->radius, m0);
    return veq(m, m0) ? touch(v, d) : qn__add(v->k, qn__scale(m, v->r));
}

/* The obstacle corner that the tangent from a to b passes deepest inside
** its circle, or false. Every corner within rc of the stretch lies in the
** box of a quad listed in the mesh bucket holding it, so the buckets round
** each bucket-long piece of the stretch cover them all. */
static bool worst_corner(const query *Q, uint32_t n, float rc, const fvert *a, const fvert *b,
                         fvert *out, bool from_clear, bool to_clear) {
    const qn_mesh *m = Q->m;
    qn_vec2 d;
    if (!tangent(a, b, &d)) return false;
    /* The stretch as drawn: a touch point moved off the tangent turns it,
    ** and the turned line can pass a corner in between too near (one that
    ** the tangent itself just touches, in a row of corners in line). */
    near_corner nc = {Q, n, a, b, drawn_touch(Q, a, d), drawn_touch(Q, b, d), rc, 0.0f, *a,
                      from_clear ? rc : 2.0f * rc, to_clear ? rc : 2.0f * rc};
    qn_pathfinder *pf = Q->pf;
    if (++pf->qgen == 0) { /* wrapped: forget every mark */
        memset(pf->qseen, 0, (size_t)pf->nq * sizeof(uint32_t));
        pf->qgen = 1;
    }
    corner_scan cs = {&nc, rc + 2.0f * m->eps, pf->qseen, pf->qgen};
    if (Q->radius == 0.0f) {
        /* A point agent's circles are a few tolerances wide: only corners
        ** on the stretch itself count, and it runs inside the corridor's
        ** quads from a's portal to b's, whose boundary cycles hold every
        ** vertex on their sides (those of neighbours at T-junctions too). */
        uint32_t lo = a->idx > 0 ? a->idx - 1 : 0, hi = b->idx < n + 1 ? b->idx : n + 1;
        for (uint32_t i = lo; i <= hi; i++) visit_corners(&cs, corridor_quad(Q, n, i));
    } else {
        each_quad_near(m, nc.pa, nc.pb, cs.pad, visit_corners, &cs);
    }
    *out = nc.found;
    return nc.worst > 0.0f;
}

/* Marks the corridor's quads with their place in it (cstamp/cpos). */
static void mark_corridor(const query *Q, uint32_t n) {
    qn_pathfinder *pf = Q->pf;
    for (uint32_t i = 0; i <= n; i++) {
        uint32_t q = corridor_quad(Q, n, i);
        pf->cstamp[q] = pf->gen;
        pf->cpos[q] = i;
    }
}

static void shrink_at_ends(fvert *v, uint32_t n);
static bool clear_of_walls(const qn_mesh *m, qn_vec2 a, qn_vec2 b, float radius);

/* The funnel decides bends from inset points, which keep every portal
** crossing `radius` from the corners; a straight stretch crossing a portal
** at a slant can still pass a corner closer than that, and so can the
** tangent between two rounded bends on either side of a row of corners in
** line. Such a corner is made a bend too, until every stretch clears every
** corner it passes. */
static uint32_t clear_corners(const query *Q, uint32_t n, float rc, uint32_t m) {
    fvert *v = Q->pf->verts;
    mark_corridor(Q, n);
    shrink_at_ends(v, m);
    /* An end within the radius of a wall has no clearance to keep: bending
    ** round corners near it would only pull the path into the obstacle. */
    bool from_clear = clear_of_walls(Q->m, Q->from, Q->from, Q->radius);
    bool to_clear = clear_of_walls(Q->m, Q->to, Q->to, Q->radius);
    uint32_t cap = 2 * Q->pf->np + 4;
    for (uint32_t j = 0; j + 1 < m && m < cap;) {
        fvert c;
        if (!worst_corner(Q, n, rc, &v[j], &v[j + 1], &c, from_clear, to_clear)) {
            j++;
            continue;
        }
        memmove(&v[j + 2], &v[j + 1], (m - j - 1) * sizeof *v);
        v[j + 1] = c;
        m++;
    }
    return m;
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

/* Where on vertex v's circle a path may touch it: only where the corner is
** the nearest obstacle point. Direction m (unit, from the corner) pointing
** along a wall that ends there is turned square to that wall, so the touch
** point keeps the radius from the wall too. */
static qn_vec2 clamp_to_free(const qn_pathfinder *pf, const fvert *v, float radius, qn_vec2 m) {
    if (v->vid == QN_NONE) return m;
    const qn_mesh *mesh = pf->mesh;
    for (uint32_t i = pf->vpstart[v->vid]; i < pf->vpstart[v->vid + 1]; i++) {
        uint32_t b = pf->vplist[i], q = pf->bquad[b], base = pf->bstart[q];
        uint32_t k = pf->bstart[q + 1] - base, s = b - base, sp = (s + k - 1) % k;
        if (mesh->blocked[q]) continue;
        uint32_t ends[2] = {base + (s + 1) % k, base + sp}, subs[2] = {b, base + sp};
        for (int t = 0; t < 2; t++) {
            uint32_t e = pf->bportal[subs[t]];
            if (e != QN_NONE && qn__portal_open(mesh, e, radius)) continue;
            qn_vec2 w = qn__sub(pf->bv[ends[t]], pf->bv[b]);
            float len = qn__len(w), along;
            if (!(len > 0.0f) || (along = qn__dot(m, w) / len) <= 0.0f) continue;
            qn_vec2 perp = qn__sub(m, qn__scale(w, along / len));
            float pl = qn__len(perp);
            if (pl > 0.0f) m = qn__scale(perp, 1.0f / pl);
        }
    }
    return m;
}

/* The bend round vertex v, coming in along d_in and leaving along d_out:
** points of the polygon circumscribed about v's circle, each piece turning
** at most pi/8 (pi/2 round a hair's-width circle), so every segment stays
** at least v->r from the corner. Touch points are first kept where the
** corner is the nearest obstacle (clamp_to_free); one moved that way is a
** point of the path itself. A turn of more than 3/2 pi the wrong way round
** is float noise or a pinch: then the path goes straight between the two
** touch points. */
static void emit_bend(emitter *em, const query *Q, const fvert *v, qn_vec2 d_in, qn_vec2 d_out,
                      float tiny) {
    float max_step = v->r <= tiny ? PI_F / 2.0f : PI_F / 8.0f;
    qn_vec2 m_in0 = qn__scale(left_normal(d_in), -v->side), m_out0 = qn__scale(left_normal(d_out), -v->side);
    qn_vec2 m_in = clamp_to_free(Q->pf, v, Q->radius, m_in0);
    qn_vec2 m_out = clamp_to_free(Q->pf, v, Q->radius, m_out0);
    float a = atan2f(v->side * qn__cross(m_in, m_out), qn__dot(m_in, m_out));
    if (a < 0.0f) a += 2.0f * PI_F;
    if (!veq(m_in, m_in0) || a > 1.5f * PI_F) emit(em, qn__add(v->k, qn__scale(m_in, v->r)));
    if (a > 1.5f * PI_F) {
        emit(em, qn__add(v->k, qn__scale(m_out, v->r)));
        return;
    }
    uint32_t pieces = (uint32_t)ceilf(a / max_step);
    if (pieces == 0) pieces = 1;
    float half = a / (2.0f * (float)pieces), dist = v->r / cosf(half);
    for (uint32_t i = 0; i < pieces; i++) {
        float phi = v->side * (float)(2 * i + 1) * half;
        emit(em, qn__add(v->k, qn__scale(rotate(m_in, phi), dist)));
    }
    if (!veq(m_out, m_out0)) emit(em, qn__add(v->k, qn__scale(m_out, v->r)));
}

/* A start or goal closer to its neighbouring corner than the radius leaves
** no room to round that corner: the path bends at the corner's inset point
** instead, where the funnel aimed. */
static void shrink_at_ends(fvert *v, uint32_t n) {
    if (n < 3) return;
    for (int end = 0; end < 2; end++) {
        fvert *c = &v[end ? n - 2 : 1];
        qn_vec2 p = v[end ? n - 1 : 0].k;
        if (c->vid != QN_NONE && qn__len(qn__sub(c->k, p)) < c->r) {
            c->k = c->p;
            c->r = 0.0f;
            c->vid = QN_NONE;
        }
    }
}

/* The polyline: from, each bend's arc, to; straight tangents between. */
static void emit_chain(emitter *em, const query *Q, fvert *v, uint32_t n, float tiny) {
    shrink_at_ends(v, n);
    emit(em, v[0].k);
    qn_vec2 d_in = qn__v2(1.0f, 0.0f);
    bool have_in = n > 1 && tangent(&v[0], &v[1], &d_in);
    for (uint32_t j = 1; j + 1 < n; j++) {
        qn_vec2 d_out = d_in;
        bool have_out = tangent(&v[j], &v[j + 1], &d_out);
        if (!have_in) d_in = d_out;
        if (!have_out) d_out = d_in;
        emit_bend(em, Q, &v[j], d_in, d_out, tiny);
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

/* Is quad q open and in island ctx->island? */
typedef struct island_of {
    const qn_mesh *m;
    uint32_t island;
} island_of;

static bool in_island(const void *ctx, uint32_t q) {
    const island_of *w = ctx;
    return !w->m->blocked[q] && w->m->island[q] == w->island;
}

/* End p, located in q: another open quad holding p (within the mesh's
** tolerance) in the island of quad `other`, when q is not in it and there
** is one; else q. */
static uint32_t in_island_of(const qn_mesh *m, qn_vec2 p, uint32_t q, uint32_t other) {
    if (m->island[q] == m->island[other]) return q;
    island_of w = {m, m->island[other]};
    uint32_t r = qn__locate_other(m, p, q, in_island, &w);
    return r != QN_NONE ? r : q;
}

/* Locates both ends: QN_E_OUTSIDE or QN_E_BLOCKED, else QN_OK. The same
** point location as qn_field_create and qn_field_cost_at, so costs agree:
** an end within the tolerance of a fence (two quads that touch with no
** portal between), located on a side the other end cannot be reached
** from, stands on the other side when that one can (as a field's point
** does: qn__field_quad_of); the start is moved first. */
static qn_status place_ends(query *Q) {
    const qn_mesh *m = Q->m;
    Q->qs = qn__locate(m, Q->from, QN_NONE);
    Q->qg = qn__locate(m, Q->to, QN_NONE);
    if (Q->qs == QN_NONE || Q->qg == QN_NONE) return QN_E_OUTSIDE;
    if (m->blocked[Q->qs] || m->blocked[Q->qg]) return QN_E_BLOCKED;
    Q->qs = in_island_of(m, Q->from, Q->qs, Q->qg);
    Q->qg = in_island_of(m, Q->to, Q->qg, Q->qs);
    Q->cs = Q->qs, Q->cg = Q->qg;
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
    Q->cs = Q->qs, Q->cg = Q->qg;
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

/* The landmarks that bound the distance from start to goal best (ALT's
** active landmarks: the rest would seldom bound better along the way). */
static void pick_landmarks(qn_pathfinder *pf, const query *Q) {
    const qn__landmarks *L = pf->lm;
    float slo[QN__MAX_LANDMARKS], shi[QN__MAX_LANDMARKS], tlo[QN__MAX_LANDMARKS],
        thi[QN__MAX_LANDMARKS], score[QN__MAX_LANDMARKS];
    qn__landmarks_at(L, Q->m, Q->qs, Q->from, slo, shi);
    qn__landmarks_at(L, Q->m, Q->qg, Q->to, tlo, thi);
    pf->nsel = 0;
    for (uint32_t j = 0; j < L->k; j++) {
        score[j] = fmaxf(tlo[j] - shi[j], slo[j] - thi[j]);
        if (!(score[j] > 0.0f)) continue; /* no bound (or unknown) */
        uint32_t i = pf->nsel < ACTIVE_LANDMARKS ? pf->nsel++ : ACTIVE_LANDMARKS;
        for (; i > 0 && score[pf->sel[i - 1]] < score[j]; i--)
            if (i < ACTIVE_LANDMARKS) pf->sel[i] = pf->sel[i - 1];
        if (i < ACTIVE_LANDMARKS) pf->sel[i] = j;
    }
    for (uint32_t j = 0; j < pf->nsel; j++) pf->tlo[j] = tlo[pf->sel[j]], pf->thi[j] = thi[pf->sel[j]];
}

/* Turns the landmark bounds on for this query when they are built and
** still hold; builds them once the queries have searched about as many
** states as the build will (a full search per landmark, a few states per
** quad each), and never again after a failed build. */
static void use_landmarks(query *Q) {
    qn_pathfinder *pf = Q->pf;
    const qn_mesh *m = Q->m;
    pf->lon = pf->pon = false;
    if (pf->lm && !qn__landmarks_current(pf->lm, m)) {
        qn__landmarks_destroy(pf->lm);
        pf->lm = NULL;
        pf->lwork = 0;
    }
    if (!pf->lm && !pf->lfail && pf->uniform &&
        pf->lwork >= 2 * (uint64_t)(LANDMARKS + 1) * (m->quad_count + m->portal_count)) {
        if (qn__landmarks_build(m, &pf->alloc, LANDMARKS, &pf->lm) != QN_OK) pf->lfail = true;
    }
    pf->pon = false;
    if (!pf->lm) return;
    pick_landmarks(pf, Q);
    pf->lon = pf->nsel > 0;
    /* The mid-point graph's costs hold while the quads cost as at build. */
    if (pf->uniform && pf->hscale == pf->lm->cost0) {
        qn__landmarks_goal_costs(pf->lm, m, Q->qg, Q->to, pf->tc);
        pf->pon = true;
    }
}

qn_status qn_path_find(qn_pathfinder *pf, qn_vec2 from, qn_vec2 to, float radius,
                       qn_vec2 *waypoints, uint32_t cap, uint32_t *count, float *cost) {
    if (count) *count = 0;
    if (cost) *cost = 0.0f;
    qn_status st = check_find_args(pf, from, to, radius, waypoints, cap, count);
    if (st != QN_OK) return st;
    query Q = {pf, pf->mesh, from, to, QN_NONE, QN_NONE, QN_NONE, QN_NONE, radius};
    st = place_ends(&Q);
    if (st != QN_OK) return st;
    const qn_mesh *m = Q.m;
    /* Islands join quads over every portal between unblocked quads; a
    ** radius only closes more portals. */
    if (m->island[Q.qs] != m->island[Q.qg]) return QN_E_UNREACHABLE;
    if (pf->hversion != m->version) scan_costs(pf);
    corner_cache_for(pf, radius);
    new_generation(pf);
    use_landmarks(&Q);
    uint32_t n = 0;
    float c = qn__quad_cost(m, Q.qs) * qn__len(qn__sub(to, from));
    if (Q.qs != Q.qg) {
        st = find_corridor(&Q, cost ? &c : NULL, &n);
        if (st != QN_OK) return st;
    }
    float rc = corner_radius(m, radius);
    uint32_t nv = clear_corners(&Q, n, rc, run_funnel(&Q, n, rc));
    emitter em = {waypoints, cap, 0, {0.0f, 0.0f}};
    emit_chain(&em, &Q, pf->verts, nv, 4.0f * m->eps);
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
    qn_vec2 c = qn__closest_on_segment(ps, a, b);
    /* Re-project once from the other side: exact for the clamped cases. */
    if (ee > 0.0f) {
        t = qn__dot(qn__sub(c, p0), e) / ee;
        s = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
        ps = qn__add(p0, qn__scale(e, s));
        c = qn__closest_on_segment(ps, a, b);
    }
    *dist = qn__len(qn__sub(ps, c));
    return s;
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
            const qn__portal p_at = qn__portal_at(m, e), *p = &p_at;
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
    qn_vec2 k_at[4];
    const qn_vec2 *k = qn__corners(m, q, k_at);
    qn_vec2 c0 = k[edge], c1 = k[(edge + 1) & 3];
    float dist, len = qn__len(qn__sub(c1, c0)), tol = 4.0f * m->eps;
    float s = closest_param(c0, c1, a, b, &dist) * len;
    if (dist >= thr) return false;
    qn_vec2 u = qn__scale(qn__sub(c1, c0), 1.0f / len);
    float lo = s, hi = s;
    if (!covered_run(m, q, edge, c0, u, radius, &lo, &hi)) return true;
    if (lo > tol && qn__point_segment_dist(qn__add(c0, qn__scale(u, lo)), a, b) < thr) return true;
    return hi < len - tol && qn__point_segment_dist(qn__add(c0, qn__scale(u, hi)), a, b) < thr;
}

static bool quad_wall_near(const qn_mesh *m, uint32_t q, qn_vec2 a, qn_vec2 b, float radius,
                           float thr) {
    qn_vec2 k_at[4];
    const qn_vec2 *k = qn__corners(m, q, k_at);
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
typedef struct wall_scan {
    const qn_mesh *m;
    qn_vec2 a, b;
    float radius, thr;
} wall_scan;

static bool visit_walls(void *ctx, uint32_t q) {
    const wall_scan *ws = ctx;
    return !quad_wall_near(ws->m, q, ws->a, ws->b, ws->radius, ws->thr);
}

static bool clear_of_walls(const qn_mesh *m, qn_vec2 a, qn_vec2 b, float radius) {
    wall_scan ws = {m, a, b, radius, radius - m->eps};
    return each_quad_near(m, a, b, radius + 2.0f * m->eps, visit_walls, &ws);
}

qn_status qn_mesh_line_of_sight(const qn_mesh *mesh, qn_vec2 a, qn_vec2 b, float radius,
                                uint32_t hint, bool *visible) {
    if (visible) *visible = false;
    if (!mesh || !visible || !qn__finite2(a) || !qn__finite2(b) || !isfinite(radius) ||
        radius < 0.0f)
        return QN_E_INVALID_ARG;
    qn_status st = qn__segment_walk(mesh, a, b, radius, hint, NULL);
    if (st == QN_E_OUTSIDE) return st;
    if (st != QN_OK) return QN_OK; /* not visible */
    *visible = radius <= 0.0f || clear_of_walls(mesh, a, b, radius);
    return QN_OK;
}
