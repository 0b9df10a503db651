/*
** landmark.c: lower bounds on geodesic distance for individual paths
** (ALT: A*, landmarks and the triangle inequality).
**
** A few landmark points, spread far apart over the mesh, each with the exact
** distance from it to every boundary vertex of every quad (read off an
** exact instance built at the landmark: one one-to-all search each). For
** points x and t, d(x, t) >= |d(L, t) - d(L, x)| for every landmark L: on a
** maze-like map that bound is far tighter than the straight distance, and
** the any-angle search (interval.c) and the cost search (path.c) take the
** larger of the two, exploring a fraction of the quads they did.
**
** Between vertices the distance from L changes no faster than the length
** moved, so its values at a segment's ends bound it along the segment; a
** point in a convex quad is bounded the same way from the quad's corners.
**
** The cost search of a path (path.c) measures another metric: the graph
** over portal mid points. For it each landmark also keeps its cost to every
** portal in that graph (a discrete instance with mid-point costs), and the
** same triangle inequality bounds a portal's cost to the goal: tight, and
** consistent, where the straight distance can be far off.
**
** Validity. The distances are taken on the mesh as it is when the
** landmarks are built (radius 0). Blocking a quad or closing portals for a
** radius only lengthens shortest paths, and a bound from shorter distances
** stays a lower bound (d_old(L, t) <= d_old(L, x) + d_new(x, t)); unblocking
** a quad that was blocked at build can shorten them, and drops the
** landmarks until the next build. Quad costs do not enter: the distances
** are lengths.
*/
#include "internal.h"

#include <stdlib.h>

/* Distances of landmark j from the vertices of one quad's cycle, read off
** the exact instance f (in length units). NAN where none serves a vertex. */
static void read_quad(const qn__landmarks *L, const qn_field *f, uint32_t q, uint32_t j) {
    const qn__boundary *b = L->b;
    float c = qn__quad_cost(f->mesh, q);
    for (uint32_t i = b->bstart[q]; i < b->bstart[q + 1]; i++) {
        float d = NAN;
        if (!f->mesh->blocked[q] && qn__field_reaches(f, q) &&
            !qn__spm_root(f, q, b->bv[i], &d, NULL, NULL))
            d = NAN;
        L->d[(size_t)i * L->k + j] = c > 0.0f && d < INFINITY ? d / c : NAN;
    }
}

/* Landmark j's costs to every portal over the mid-point graph. */
static qn_status read_portals(qn__landmarks *L, const qn_mesh *m, const qn_allocator *a, qn_vec2 at,
                              uint32_t j) {
    qn_field_opts o = {.midpoint_costs = true, .discrete = true};
    qn_field *f = NULL;
    qn_status st = qn_field_create(m, &at, 1, &o, a, &f, NULL);
    if (st != QN_OK) return st;
    for (uint32_t e = 0; e < m->portal_count; e++) L->pd[(size_t)e * L->k + j] = f->pg[e];
    qn_field_destroy(f);
    return QN_OK;
}

/* Builds the exact instance at `at` and reads landmark j's distances; the
** boundary vertex farthest from every landmark so far in *far. */
static qn_status add_landmark(qn__landmarks *L, const qn_mesh *m, const qn_allocator *a,
                              qn_vec2 at, uint32_t j, uint32_t *far) {
    qn_field *f = NULL;
    qn_status st = read_portals(L, m, a, at, j);
    if (st == QN_OK) st = qn_field_create(m, &at, 1, NULL, a, &f, NULL);
    if (st != QN_OK) return st;
    if (!f->spm) {
        qn_field_destroy(f);
        return QN_E_INVALID_ARG; /* not a uniform-cost mesh: no exact instance */
    }
    for (uint32_t q = 0; q < m->quad_count; q++) read_quad(L, f, q, j);
    qn_field_destroy(f);
    L->at[j] = at;
    float best = -1.0f;
    for (uint32_t i = 0; i < L->b->nb; i++) {
        float near = INFINITY;
        for (uint32_t k = 0; k <= j; k++) near = fminf(near, L->d[(size_t)i * L->k + k]);
        if (near < INFINITY && near > best) best = near, *far = i;
        if (L->d[(size_t)i * L->k + j] > L->dmax) L->dmax = L->d[(size_t)i * L->k + j];
    }
    return QN_OK;
}

/* The quad whose cycle holds boundary vertex i. */
static uint32_t quad_of(const qn__boundary *b, uint32_t quads, uint32_t i) {
    uint32_t lo = 0, hi = quads;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->bstart[mid] <= i) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The open quad of the island with the most quads (QN_NONE: none). */
static uint32_t start_quad(const qn_mesh *m, const qn_allocator *a) {
    uint32_t *count = qn__calloc(a, (size_t)m->island_count + 1, sizeof *count), best = QN_NONE;
    if (!count) return QN_NONE;
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (m->island[q] < m->island_count) count[m->island[q]]++;
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (m->island[q] < m->island_count &&
            (best == QN_NONE || count[m->island[q]] > count[m->island[best]]))
            best = q;
    qn__free(a, count, ((size_t)m->island_count + 1) * sizeof *count);
    return best;
}

void qn__landmarks_destroy(qn__landmarks *L) {
    if (!L) return;
    qn_allocator a = L->alloc;
    qn__free(&a, L->d, (size_t)L->b->nb * L->k * sizeof(float));
    qn__free(&a, L->pd, (size_t)L->np * L->k * sizeof(float));
    qn__free(&a, L->blocked, L->nq);
    qn__free(&a, L, sizeof *L);
}

qn_status qn__landmarks_build(const qn_mesh *m, const qn_allocator *a, uint32_t k,
                              qn__landmarks **out) {
    *out = NULL;
    const qn__boundary *b = qn__mesh_boundary(m, NULL);
    uint32_t q0 = start_quad(m, a);
    if (!b) return QN_E_NOMEM;
    if (q0 == QN_NONE || k == 0) return QN_E_INVALID_ARG;
    qn__landmarks *L = qn__calloc(a, 1, sizeof *L);
    if (!L) return QN_E_NOMEM;
    L->alloc = *a;
    L->b = b;
    L->k = k < QN__MAX_LANDMARKS ? k : QN__MAX_LANDMARKS;
    L->nq = m->quad_count;
    L->np = m->portal_count;
    L->d = qn__alloc(a, (size_t)b->nb * L->k * sizeof(float));
    L->pd = qn__alloc(a, (size_t)L->np * L->k * sizeof(float));
    L->blocked = qn__alloc(a, L->nq);
    if (!L->d || !L->pd || !L->blocked) {
        qn__landmarks_destroy(L);
        return QN_E_NOMEM;
    }
    memcpy(L->blocked, m->blocked, L->nq);
    L->cost0 = qn__quad_cost(m, q0);
    L->version = m->version;
    /* Farthest-point placement: the first from the middle of the largest
    ** island, each next at the vertex farthest from those placed. */
    uint32_t far = QN_NONE;
    qn_status st = add_landmark(L, m, a, qn__quad_centre(m, q0), 0, &far);
    for (uint32_t j = 0; j < L->k && st == QN_OK && far != QN_NONE; j++) {
        qn_vec2 at = qn__quad_centre(m, quad_of(b, m->quad_count, far));
        far = QN_NONE;
        st = add_landmark(L, m, a, at, j, &far);
    }
    if (st != QN_OK) {
        qn__landmarks_destroy(L);
        return st;
    }
    /* Float sums along a path and the reading at a vertex: a bound is
    ** lowered by this much so that it never exceeds the true distance. */
    L->slack = 1e-4f * L->dmax + 16.0f * m->eps;
    float pmax = 0.0f;
    for (size_t i = 0; i < (size_t)L->np * L->k; i++)
        if (L->pd[i] < INFINITY && L->pd[i] > pmax) pmax = L->pd[i];
    L->pslack = 1e-4f * pmax;
    *out = L;
    return QN_OK;
}

bool qn__landmarks_current(qn__landmarks *L, const qn_mesh *m) {
    if (!L || L->nq != m->quad_count) return false;
    if (L->version == m->version) return true;
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (L->blocked[q] && !m->blocked[q]) return false; /* a shortcut may have opened */
    L->version = m->version;
    return true;
}

void qn__landmarks_at(const qn__landmarks *L, const qn_mesh *m, uint32_t q, qn_vec2 p, float *lo,
                      float *hi) {
    const qn__boundary *b = L->b;
    (void)m;
    for (uint32_t j = 0; j < L->k; j++) lo[j] = -INFINITY, hi[j] = INFINITY;
    for (uint32_t i = b->bstart[q]; i < b->bstart[q + 1]; i++) {
        float r = qn__len(qn__sub(p, b->bv[i]));
        const float *d = L->d + (size_t)i * L->k;
        for (uint32_t j = 0; j < L->k; j++) {
            if (!(d[j] < INFINITY)) continue;
            lo[j] = fmaxf(lo[j], d[j] - r);
            hi[j] = fminf(hi[j], d[j] + r);
        }
    }
}

void qn__landmarks_goal_costs(const qn__landmarks *L, const qn_mesh *m, uint32_t q, qn_vec2 p,
                              float *out) {
    for (uint32_t j = 0; j < L->k; j++) out[j] = INFINITY;
    for (uint32_t i = m->qp_start[q]; i < m->qp_start[q + 1]; i++) {
        uint32_t e = m->qp_list[i];
        float c = qn__quad_cost(m, q) * qn__len(qn__sub(qn__portal_mid_at(m, e), p));
        const float *d = L->pd + (size_t)e * L->k;
        for (uint32_t j = 0; j < L->k; j++)
            if (d[j] + c < out[j]) out[j] = d[j] + c;
    }
}

size_t qn__landmarks_bytes(const qn__landmarks *L) {
    return L ? sizeof *L + ((size_t)L->b->nb + L->np) * L->k * sizeof(float) + L->nq : 0;
}
