/*
** path.c: point-to-point paths and line of sight.
**
** A path query runs A* over the same graph as an instance (field.c): nodes
** are portals, plus one node for the goal point. The start point reaches
** each open portal of its quad for the distance to the portal's mid point
** times the quad's cost; inside a quad, portal to portal costs the distance
** between mid points times the quad's cost; a portal of the goal quad
** reaches the goal node for its distance to the goal point times that
** quad's cost. The heuristic is the straight distance to the goal times the
** lowest quad cost, which is consistent, so a node is settled once.
**
** The corridor of portals the search found is then string-pulled with the
** funnel algorithm. Each portal end point is a circle of the agent's
** radius (a hair's width for a point agent) that the path keeps on one
** side: the funnel compares the directions of tangent lines instead of
** rays, and the final polyline goes around each corner it bends at with a
** few segments just outside that circle. So the crossing of every portal
** stays `radius` away from its end points, as the sampler's inset does, and
** corners are not cut closer than the radius either.
**
** All scratch lives in the qn_pathfinder and is reset per query by a
** generation stamp, so a query touches only the nodes it explores.
*/
#include "internal.h"

#include <float.h>

#define CLOSED (QN_NONE - 1u)
#define SIDE_BIT 0x80000000u
#define PI_F 3.14159265358979f

/* A funnel vertex: a circle of radius r around k that the path keeps on its
** left (side +1) or right (side -1), or a plain point (side 0, r 0). */
typedef struct fvert {
    qn_vec2 k;
    float r;
    float side;
} fvert;

struct qn_pathfinder {
    qn_allocator alloc;
    const qn_mesh *mesh;
    uint32_t np;   /* portals; node np is the goal point */
    float hscale;  /* lowest quad cost: the heuristic's distance factor */
    uint64_t hversion; /* mesh version hscale was taken at */
    uint32_t gen;  /* generation of the current query */
    uint32_t heap_n;
    float *g, *f;
    uint32_t *parent, *pos, *stamp, *heap;
    uint8_t *via;       /* side of the portal's quad it was reached through */
    uint32_t *corridor; /* portal | SIDE_BIT when entered from its q[1] */
    fvert *verts;       /* the funnel's output: np + 2 */
    void *block;
    size_t block_bytes;
    size_t bytes;
};

/* ---- create / destroy ---------------------------------------------------- */

/* Bytes of scratch for np portals, or 0 on overflow. */
static size_t scratch_bytes(uint32_t np) {
    size_t nodes = (size_t)np + 1, v = (size_t)np + 2;
    size_t per_node = 2 * sizeof(float) + 4 * sizeof(uint32_t) + 1;
    if (nodes > SIZE_MAX / 64) return 0;
    return v * sizeof(fvert) + nodes * per_node + (size_t)np * sizeof(uint32_t);
}

static void carve(qn_pathfinder *pf) {
    size_t nodes = (size_t)pf->np + 1;
    pf->verts = pf->block;
    pf->g = (float *)(pf->verts + pf->np + 2);
    pf->f = pf->g + nodes;
    pf->parent = (uint32_t *)(pf->f + nodes);
    pf->pos = pf->parent + nodes;
    pf->stamp = pf->pos + nodes;
    pf->heap = pf->stamp + nodes;
    pf->corridor = pf->heap + nodes;
    pf->via = (uint8_t *)(pf->corridor + pf->np);
    memset(pf->stamp, 0, nodes * sizeof(uint32_t));
}

static float lowest_cost(const qn_mesh *m) {
    float lo = QN_MAX_QUAD_COST;
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (m->cost[q] < lo) lo = m->cost[q];
    return lo;
}

qn_status qn_pathfinder_create(const qn_mesh *mesh, const qn_allocator *alloc,
                               qn_pathfinder **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!mesh || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    size_t n = scratch_bytes(mesh->portal_count);
    if (n == 0)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "%u portals: scratch size overflows",
                        mesh->portal_count);
    qn_allocator a = qn__allocator(alloc);
    qn_pathfinder *pf = qn__calloc(&a, 1, sizeof *pf);
    if (!pf) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (pathfinder)");
    pf->block = qn__alloc(&a, n);
    if (!pf->block) {
        qn__free(&a, pf, sizeof *pf);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (pathfinder scratch, %zu bytes)",
                        n);
    }
    pf->alloc = a;
    pf->mesh = mesh;
    pf->np = mesh->portal_count;
    pf->block_bytes = n;
    pf->bytes = sizeof *pf + n;
    pf->hscale = lowest_cost(mesh);
    pf->hversion = mesh->version;
    carve(pf);
    *out = pf;
    return QN_OK;
}

void qn_pathfinder_destroy(qn_pathfinder *pf) {
    if (!pf) return;
    qn_allocator a = pf->alloc;
    qn__free(&a, pf->block, pf->block_bytes);
    qn__free(&a, pf, sizeof *pf);
}

size_t qn_pathfinder_bytes(const qn_pathfinder *pf) { return pf ? pf->bytes : 0; }

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

static inline uint8_t side_in(const qn_mesh *m, uint32_t e, uint32_t q) {
    return m->portals[e].q[0] == q ? 0 : 1;
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

static void new_generation(qn_pathfinder *pf) {
    pf->heap_n = 0;
    if (++pf->gen == 0) { /* wrapped: forget every stamp */
        memset(pf->stamp, 0, ((size_t)pf->np + 1) * sizeof(uint32_t));
        pf->gen = 1;
    }
}

/* A* from Q->from to Q->to; on success *cost is the goal node's cost. */
static qn_status search(query *Q, float *cost) {
    qn_pathfinder *pf = Q->pf;
    const qn_mesh *m = Q->m;
    uint32_t goal = pf->np;
    new_generation(pf);
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

qn_status qn_path_find(qn_pathfinder *pf, qn_vec2 from, qn_vec2 to, float radius,
                       qn_vec2 *waypoints, uint32_t cap, uint32_t *count, float *cost) {
    if (count) *count = 0;
    if (cost) *cost = 0.0f;
    qn_status st = check_find_args(pf, from, to, radius, waypoints, cap, count);
    if (st != QN_OK) return st;
    query Q = {pf, pf->mesh, from, to, QN_NONE, QN_NONE, radius};
    if (pf->hversion != Q.m->version) { /* costs may have changed: rescan */
        pf->hscale = lowest_cost(Q.m);
        pf->hversion = Q.m->version;
    }
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
        st = search(&Q, &c);
        if (st != QN_OK) return st;
        uint32_t n = build_corridor(pf);
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
