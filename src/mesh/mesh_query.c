/*
** mesh_query.c: read-only questions about a built mesh: accessors, point
** location, nearest quad, and whether a segment stays in traversable space.
** Everything here is const and safe to call from many threads at once.
*/
#include "internal.h"

#include <float.h>

uint32_t qn_mesh_quad_count(const qn_mesh *mesh) { return mesh ? mesh->quad_count : 0; }
uint32_t qn_mesh_portal_count(const qn_mesh *mesh) { return mesh ? mesh->portal_count : 0; }
uint32_t qn_mesh_island_count(const qn_mesh *mesh) { return mesh ? mesh->island_count : 0; }
size_t qn_mesh_bytes(const qn_mesh *mesh) {
    if (!mesh) return 0;
    const qn__boundary *b = atomic_load(&mesh->bnd);
    size_t segs = atomic_load(&mesh->segs) ? (size_t)mesh->portal_count * sizeof(qn__pgeo) : 0;
    return mesh->bytes + (b ? sizeof *b + b->bytes + b->cbytes : 0) + segs;
}

const qn__pgeo *qn__mesh_segments(const qn_mesh *m) {
    if (m->pgeo) return m->pgeo;
    qn__pgeo *t = atomic_load(&m->segs);
    if (t) return t;
    size_t bytes = ((size_t)m->portal_count + 1) * sizeof(qn__pgeo);
    t = qn__alloc(&m->alloc, bytes);
    if (!t) return NULL;
    for (uint32_t e = 0; e < m->portal_count; e++) {
        qn__portal p = qn__portal_at(m, e);
        t[e] = (qn__pgeo){p.p0, p.p1, p.width};
    }
    /* The mesh is shared read-only; the table is a cache it owns. */
    qn__pgeo *none = NULL, *_Atomic *slot = (qn__pgeo *_Atomic *)(uintptr_t)&m->segs;
    if (atomic_compare_exchange_strong(slot, &none, t)) return t;
    qn__free(&m->alloc, t, bytes); /* another thread's copy won */
    return none;
}

qn_rect qn_mesh_bounds(const qn_mesh *mesh) {
    qn_rect none = {{0, 0}, {0, 0}};
    return mesh ? mesh->bounds : none;
}

uint32_t qn_mesh_island(const qn_mesh *mesh, uint32_t quad) {
    if (!mesh || quad >= mesh->quad_count) return QN_NONE;
    return mesh->island[quad];
}

qn_status qn_mesh_quad_corners(const qn_mesh *mesh, uint32_t quad, qn_vec2 out[4]) {
    if (!mesh || !out || quad >= mesh->quad_count) return QN_E_INVALID_ARG;
    qn_vec2 k[4];
    memcpy(out, qn__corners(mesh, quad, k), 4 * sizeof(qn_vec2));
    return QN_OK;
}

float qn_mesh_quad_cost(const qn_mesh *mesh, uint32_t quad) {
    if (!mesh || quad >= mesh->quad_count) return NAN;
    return qn__quad_cost(mesh, quad);
}

bool qn_mesh_quad_blocked(const qn_mesh *mesh, uint32_t quad) {
    if (!mesh || quad >= mesh->quad_count) return true;
    return mesh->blocked[quad] != 0;
}

float qn_mesh_quad_area(const qn_mesh *mesh, uint32_t quad) {
    if (!mesh || quad >= mesh->quad_count) return NAN;
    if (mesh->rects) {
        /* The loop below on a rectangle's corners, term by term. */
        qn_rect r = mesh->rects[quad];
        double x0 = (double)r.min.x, y0 = (double)r.min.y;
        double x1 = (double)r.max.x, y1 = (double)r.max.y;
        double a2 = 0.0;
        a2 += x0 * y0 - x1 * y0;
        a2 += x1 * y1 - x1 * y0;
        a2 += x1 * y1 - x0 * y1;
        a2 += x0 * y0 - x0 * y1;
        return (float)(0.5 * a2);
    }
    qn_vec2 c_at[4];
    const qn_vec2 *c = qn__corners(mesh, quad, c_at);
    double a2 = 0.0; /* shoelace, in double: the same value the build checked */
    for (int i = 0; i < 4; i++)
        a2 += (double)c[i].x * (double)c[(i + 1) & 3].y - (double)c[(i + 1) & 3].x * (double)c[i].y;
    return (float)(0.5 * a2);
}

qn_status qn_mesh_portal(const qn_mesh *mesh, uint32_t portal, qn_portal *out) {
    if (!mesh || !out || portal >= mesh->portal_count) return QN_E_INVALID_ARG;
    const qn__portal p_at = qn__portal_at(mesh, portal), *p = &p_at;
    out->a = p->q[0];
    out->b = p->q[1];
    out->p0 = p->p0;
    out->p1 = p->p1;
    return QN_OK;
}

qn_status qn_mesh_quad_portals(const qn_mesh *mesh, uint32_t quad, uint32_t *portals,
                               uint32_t cap, uint32_t *count) {
    if (count) *count = 0;
    if (!mesh || !count || quad >= mesh->quad_count || (cap && !portals)) return QN_E_INVALID_ARG;
    uint32_t s = mesh->qp_start[quad], n = mesh->qp_start[quad + 1] - s;
    *count = n;
    uint32_t w = n < cap ? n : cap;
    for (uint32_t i = 0; i < w; i++) portals[i] = mesh->qp_list[s + i];
    return n > cap ? QN_E_BUFFER_TOO_SMALL : QN_OK;
}

/* ---- point location --------------------------------------------------- */

/* Bucket of the grid holding p (clamped to the grid). */
static size_t bucket_of(const qn_mesh *m, qn_vec2 p, uint32_t *cx, uint32_t *cy) {
    float fx = (p.x - m->grid_origin.x) * m->grid_inv_cell;
    float fy = (p.y - m->grid_origin.y) * m->grid_inv_cell;
    uint32_t x = fx > 0.0f ? (fx >= (float)m->grid_w ? m->grid_w - 1 : (uint32_t)fx) : 0;
    uint32_t y = fy > 0.0f ? (fy >= (float)m->grid_h ? m->grid_h - 1 : (uint32_t)fy) : 0;
    if (cx) *cx = x;
    if (cy) *cy = y;
    return (size_t)y * m->grid_w + x;
}

/*
** Locate without argument checks. Buckets list quads in increasing order and
** every quad containing p is listed in p's bucket, so the first hit is the
** lowest index: the documented tie-break for points on shared edges.
*/
uint32_t qn__locate(const qn_mesh *m, qn_vec2 p, uint32_t hint) {
    if (hint < m->quad_count && qn__quad_contains(m, hint, p)) return hint;
    /* No early test against the mesh bounds: the tolerant inside test reaches
    ** past them at sharp corners. Points beyond the grid fall in its border
    ** buckets, whose quads' boxes include that reach. */
    size_t cell = bucket_of(m, p, NULL, NULL);
    for (uint32_t i = m->cell_start[cell]; i < m->cell_start[cell + 1]; i++) {
        uint32_t q = qn__bucket_quad(m, cell, i);
        if (qn__quad_contains(m, q, p)) return q;
    }
    return QN_NONE;
}

uint32_t qn__locate_other(const qn_mesh *m, qn_vec2 p, uint32_t not_q, qn__quad_filter ok,
                          const void *ctx) {
    size_t cell = bucket_of(m, p, NULL, NULL);
    for (uint32_t i = m->cell_start[cell]; i < m->cell_start[cell + 1]; i++) {
        uint32_t q = qn__bucket_quad(m, cell, i);
        if (q != not_q && qn__quad_contains(m, q, p) && ok(ctx, q)) return q;
    }
    return QN_NONE;
}

qn_status qn_mesh_locate(const qn_mesh *mesh, qn_vec2 p, uint32_t hint, uint32_t *quad) {
    if (quad) *quad = QN_NONE;
    if (!mesh || !quad || !qn__finite2(p)) return QN_E_INVALID_ARG;
    *quad = qn__locate(mesh, p, hint);
    return *quad == QN_NONE ? QN_E_OUTSIDE : QN_OK;
}

/* ---- nearest quad ------------------------------------------------------ */

/* Closest point of quad q to p, and the squared distance. */
static float quad_closest(const qn_mesh *m, uint32_t q, qn_vec2 p, qn_vec2 *c) {
    if (qn__quad_contains(m, q, p)) {
        *c = p;
        return 0.0f;
    }
    qn_vec2 k_at[4];
    const qn_vec2 *k = qn__corners(m, q, k_at);
    float best = FLT_MAX;
    for (int i = 0; i < 4; i++) {
        qn_vec2 x = qn__closest_on_segment(p, k[i], k[(i + 1) & 3]);
        qn_vec2 d = qn__sub(p, x);
        float d2 = qn__dot(d, d);
        if (d2 < best) {
            best = d2;
            *c = x;
        }
    }
    return best;
}

typedef struct nearest_state {
    uint32_t quad;
    float d2;
    qn_vec2 at;
} nearest_state;

static void scan_bucket(const qn_mesh *m, size_t cell, qn_vec2 p, qn__quad_filter keep,
                        const void *ctx, nearest_state *ns) {
    for (uint32_t i = m->cell_start[cell]; i < m->cell_start[cell + 1]; i++) {
        uint32_t q = qn__bucket_quad(m, cell, i);
        if (keep && !keep(ctx, q)) continue;
        qn_vec2 c = p;
        float d2 = quad_closest(m, q, p, &c);
        if (d2 < ns->d2 || (d2 == ns->d2 && q < ns->quad)) {
            ns->d2 = d2;
            ns->quad = q;
            ns->at = c;
        }
    }
}

/* Rings of buckets around p's (clamped) bucket. A bucket r rings away is at
** least (r - 1) cells from p's projection on the grid, hence from p. */
uint32_t qn__nearest(const qn_mesh *m, qn_vec2 p, qn__quad_filter keep, const void *ctx,
                     qn_vec2 *closest) {
    uint32_t cx, cy;
    bucket_of(m, p, &cx, &cy);
    nearest_state ns = {QN_NONE, FLT_MAX, p};
    uint32_t rmax = (m->grid_w > m->grid_h ? m->grid_w : m->grid_h);
    for (uint32_t r = 0; r <= rmax; r++) {
        int64_t x0 = (int64_t)cx - r, x1 = (int64_t)cx + r, y0 = (int64_t)cy - r,
                y1 = (int64_t)cy + r;
        for (int64_t y = y0; y <= y1; y++) {
            if (y < 0 || y >= (int64_t)m->grid_h) continue;
            bool edge_row = (y == y0 || y == y1);
            for (int64_t x = x0; x <= x1; x += edge_row ? 1 : (x1 - x0 > 0 ? x1 - x0 : 1)) {
                if (x < 0 || x >= (int64_t)m->grid_w) continue;
                scan_bucket(m, (size_t)y * m->grid_w + (size_t)x, p, keep, ctx, &ns);
            }
        }
        float reach = (float)r * m->grid_cell;
        if (ns.quad != QN_NONE && ns.d2 <= reach * reach) break;
    }
    if (closest) *closest = ns.at;
    return ns.quad;
}

static bool keep_open(const void *ctx, uint32_t q) {
    return !((const qn_mesh *)ctx)->blocked[q];
}

qn_status qn_mesh_nearest(const qn_mesh *mesh, qn_vec2 p, bool skip_blocked, uint32_t *quad,
                          qn_vec2 *closest) {
    if (quad) *quad = QN_NONE;
    if (!mesh || !quad || !qn__finite2(p)) return QN_E_INVALID_ARG;
    qn_vec2 at = p;
    *quad = qn__nearest(mesh, p, skip_blocked ? keep_open : NULL, mesh, &at);
    if (*quad == QN_NONE) return QN_E_NOT_FOUND;
    if (closest) *closest = at;
    return QN_OK;
}

/* ---- segment inside ---------------------------------------------------- */

/* Where the segment a + t*d leaves quad q: the smallest t at which it goes
** out through an edge (with the mesh tolerance). FLT_MAX when never. */
static float exit_param(const qn_mesh *m, uint32_t q, qn_vec2 a, qn_vec2 d) {
    if (!m->planes) {
        /* A rectangle: its planes' terms (qn__rect_planes: normals of 0
        ** and +-1), the same roundings, the signs taken out. */
        qn_rect r = m->rects[q];
        float best = FLT_MAX, t;
        if (d.y < 0.0f && (t = ((r.min.y - m->eps) - a.y) / d.y) < best) best = t;
        if (d.x > 0.0f && (t = ((r.max.x + m->eps) - a.x) / d.x) < best) best = t;
        if (d.y > 0.0f && (t = ((r.max.y + m->eps) - a.y) / d.y) < best) best = t;
        if (d.x < 0.0f && (t = ((r.min.x - m->eps) - a.x) / d.x) < best) best = t;
        return best;
    }
    qn__planes tmp;
    const qn__planes *pl = qn__quad_planes(m, q, &tmp);
    float best = FLT_MAX;
    for (int i = 0; i < 4; i++) {
        float nd = pl->nx[i] * d.x + pl->ny[i] * d.y;
        if (nd >= 0.0f) continue; /* moving inward or along the edge */
        float t = (pl->c[i] - m->eps - (pl->nx[i] * a.x + pl->ny[i] * a.y)) / nd;
        if (t < best) best = t;
    }
    return best;
}

/* Of the open quads holding a (hint first), the one the segment leaves
** last: where many quads meet at a point the walk starts in the right one. */
static uint32_t start_quad(const qn_mesh *m, qn_vec2 a, qn_vec2 d, uint32_t hint) {
    uint32_t best = QN_NONE;
    float best_t = -FLT_MAX;
    size_t cell = bucket_of(m, a, NULL, NULL);
    for (uint32_t i = m->cell_start[cell]; i <= m->cell_start[cell + 1]; i++) {
        uint32_t q = i < m->cell_start[cell + 1] ? qn__bucket_quad(m, cell, i) : hint;
        if (q >= m->quad_count || m->blocked[q] || !qn__quad_contains(m, q, a)) continue;
        float t = exit_param(m, q, a, d);
        if (t > best_t) best_t = t, best = q;
    }
    return best;
}

/* The quad beyond q at exit point x (segment parameter t) through a portal
** open for the radius that takes the segment furthest; QN_NONE when none
** takes it beyond t. Choosing by how far the segment goes, not by the
** nearest portal, keeps a walk through a point where many quads meet from
** wandering into one the segment does not cross. When no neighbour takes
** it further, x is near a point where quads meet (a quad's tolerant region
** reaches past its corners), and the segment goes on into a quad across
** that point, not beside it: the quads round x are searched through open
** portals within the tolerance of x, up to 8 of them. At a level 40,000
** units out, the tolerance (0.15) made units passing that near such a
** point wall contacts in `quadnav sim`, and the segment "left" the mesh. */
#define QN__AROUND 8
static uint32_t next_quad(const qn_mesh *m, uint32_t q, qn_vec2 x, float t, qn_vec2 a, qn_vec2 d,
                          float radius) {
    float tol = 4.0f * m->eps, best_t = t;
    uint32_t best = QN_NONE, seen[QN__AROUND], ns = 1;
    seen[0] = q;
    for (uint32_t head = 0; head < ns && (head == 0 || best == QN_NONE); head++) {
        uint32_t cq = seen[head];
        for (uint32_t k = m->qp_start[cq]; k < m->qp_start[cq + 1]; k++) {
            uint32_t e = m->qp_list[k];
            if (!qn__portal_open(m, e, radius)) continue;
            const qn__portal pe = qn__portal_at(m, e);
            qn_vec2 c = qn__sub(x, qn__closest_on_segment(x, pe.p0, pe.p1));
            if (qn__dot(c, c) > tol * tol) continue;
            uint32_t o = qn__portal_other(m, e, cq), i = 0;
            while (i < ns && seen[i] != o)
                i++;
            if (i < ns) continue;
            if (ns < QN__AROUND) seen[ns++] = o;
            if (!qn__quad_contains(m, o, x)) continue; /* the walk must go on from x */
            float to = exit_param(m, o, a, d);
            if (to > best_t) best_t = to, best = o;
        }
    }
    return best;
}

qn_status qn__segment_walk(const qn_mesh *m, qn_vec2 a, qn_vec2 b, float radius, uint32_t hint,
                           qn_vec2 *hit) {
    if (hit) *hit = a;
    uint32_t any = qn__locate(m, a, hint);
    if (any == QN_NONE) return QN_E_OUTSIDE;
    qn_vec2 d = qn__sub(b, a);
    uint32_t q = start_quad(m, a, d, hint);
    if (q == QN_NONE) return QN_E_BLOCKED; /* only blocked quads hold a */
    /* t only grows, so the walk ends; the bound guards degenerate geometry. */
    for (uint32_t steps = 0; steps <= 2 * m->quad_count + 2; steps++) {
        float t = exit_param(m, q, a, d);
        if (t >= 1.0f) {
            /* Rounding can put b a hair outside the quad the exit test
            ** keeps it in (b on the edge of the tolerant region): then the
            ** walk goes on from b itself. */
            if (qn__quad_contains(m, q, b)) return QN_OK;
            t = 1.0f;
        }
        qn_vec2 x = t >= 1.0f ? b : qn__add(a, qn__scale(d, t < 0.0f ? 0.0f : t));
        q = next_quad(m, q, x, t, a, d, radius);
        if (q == QN_NONE) {
            if (hit) *hit = x;
            return QN_E_BLOCKED;
        }
    }
    return QN_E_BLOCKED;
}

qn_status qn_mesh_segment_inside(const qn_mesh *mesh, qn_vec2 a, qn_vec2 b, uint32_t hint,
                                 qn_vec2 *hit) {
    if (hit) *hit = a;
    if (!mesh || !qn__finite2(a) || !qn__finite2(b)) return QN_E_INVALID_ARG;
    uint32_t q = qn__locate(mesh, a, hint);
    if (q == QN_NONE) return QN_E_OUTSIDE;
    if (mesh->blocked[q]) return QN_E_BLOCKED; /* where a is located, as documented */
    return qn__segment_walk(mesh, a, b, 0.0f, q, hit);
}

/* ---- dynamic changes ----------------------------------------------------- */

static void record_change(qn_mesh *m, uint32_t quad) {
    m->version++;
    m->journal[m->version % QN__JOURNAL] = quad;
}

uint64_t qn_mesh_version(const qn_mesh *mesh) { return mesh ? mesh->version : 0; }

qn_status qn_mesh_set_quad_cost(qn_mesh *mesh, uint32_t quad, float cost) {
    if (!mesh || quad >= mesh->quad_count || !isfinite(cost) || cost < 1.0f ||
        cost > QN_MAX_QUAD_COST)
        return QN_E_INVALID_ARG;
    if (qn__quad_cost(mesh, quad) == cost) return QN_OK;
    if (!mesh->cost) { /* the first cost other than 1 */
        size_t n = mesh->quad_count;
        mesh->cost = qn__alloc(&mesh->alloc, n * sizeof(float));
        if (!mesh->cost) return QN_E_NOMEM;
        for (size_t q = 0; q < n; q++) mesh->cost[q] = 1.0f;
        mesh->bytes += n * sizeof(float);
    }
    mesh->cost[quad] = cost;
    record_change(mesh, quad);
    return QN_OK;
}

qn_status qn_mesh_set_quad_blocked(qn_mesh *mesh, uint32_t quad, bool blocked) {
    return qn_mesh_set_quads_blocked(mesh, &quad, 1, blocked);
}

qn_status qn_mesh_set_quads_blocked(qn_mesh *mesh, const uint32_t *quads, size_t count,
                                    bool blocked) {
    if (!mesh || (count && !quads)) return QN_E_INVALID_ARG;
    for (size_t i = 0; i < count; i++) /* all checked before any changes */
        if (quads[i] >= mesh->quad_count) return QN_E_INVALID_ARG;
    bool changed = false;
    for (size_t i = 0; i < count; i++) {
        uint32_t q = quads[i];
        if ((mesh->blocked[q] != 0) == blocked) continue;
        mesh->blocked[q] = blocked ? 1 : 0;
        record_change(mesh, q);
        changed = true;
    }
    if (changed) qn__mesh_islands(mesh);
    return QN_OK;
}
