/*
** build.h: what mesh.c and pair.c share while a mesh is being built.
** Private to src/mesh/.
*/
#ifndef QN_MESH_BUILD_H
#define QN_MESH_BUILD_H

#include "internal.h"

typedef struct qn__builder {
    const qn_mesh_desc *desc;
    qn_mesh *m;
    qn_error *err;
    float *tol; /* per quad: its local tolerance (a few ulps of its coordinates);
                ** NULL when nothing pairs edges (a baked load) */
    qn__cand *cands;
    uint32_t ncand, capcand;
    void (*release)(void *ud); /* called once the quads are copied, or NULL */
    void *release_ud;
} qn__builder;

/* Local tolerance of geometry whose largest |coordinate| is maxabs. */
static inline double qn__tol_at(double maxabs) {
    return 8.0 * 1.1920928955078125e-07 * (maxabs > 1.0 ? maxabs : 1.0);
}

/* Finds every shared edge segment (portal candidate, one per quad pair, the
** longest) and rejects overlapping quads. Needs corners, planes, tol and the
** exact-membership bucket grid; cands come out sorted by (a, b). */
qn_status qn__mesh_pairs(qn__builder *bd);

/* Pieces of qn_mesh_create that loading a baked mesh reuses (mesh.c). */
qn_status qn__mesh_alloc_quads(qn_mesh *m, qn_error *err); /* corners .. island */
/* From m->corners: eps, per-quad tol, shape checks, planes, area, bounds. */
qn_status qn__mesh_shapes(qn__builder *bd);
/* Portal table and per-quad lists from bd->cands (sorted by (a, b)). */
qn_status qn__mesh_portals(qn__builder *bd);
/* m->portal_count = count and its arrays (pq, pedge, pgeo), unset. */
qn_status qn__mesh_portal_alloc(qn_mesh *m, uint32_t count, qn_error *err);
/* With the portals' quads, edges and end points set: each portal's width
** and the per-quad lists. */
qn_status qn__mesh_portal_lists(qn_mesh *m, qn_error *err);
/* The per-quad lists, from widths already set and qp_start (quad_count + 1,
** zeroed) holding each quad q's portal count at q + 1. */
qn_status qn__mesh_portal_fill(qn_mesh *m, qn_error *err);
/* One more portal (e) in each of its quads' lists. */
static inline void qn__portal_tally(qn_mesh *m, uint32_t e) {
    m->qp_start[m->pq[e].q[0] + 1]++;
    m->qp_start[m->pq[e].q[1] + 1]++;
}
/* The end of a build: costs of 1 go, bucket lists shrink to 16 bits where
** they can, and a mesh of rectangles lets its corners go, and its portals'
** edges and segments when its rectangles give them (qn__portal_at).
** QN_E_NOMEM (the mesh whole, to be destroyed) when it cannot. */
qn_status qn__mesh_lean(qn_mesh *m, qn_error *err);
size_t qn__mesh_array_bytes(const qn_mesh *m);

/* Islands by union-find in m->island (the forest, then the ids; roots are
** the lowest index of their set): begin, join the quads of every portal
** (blocked ones stay apart), end. qn__mesh_islands does all three; loading a
** baked mesh joins while it reads the portals. */
static inline uint32_t qn__uf_find(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}
static inline void qn__islands_begin(qn_mesh *m) {
    for (uint32_t q = 0; q < m->quad_count; q++) m->island[q] = q;
}
static inline void qn__islands_join(qn_mesh *m, uint32_t a, uint32_t b) {
    if (m->blocked[a] || m->blocked[b]) return;
    a = qn__uf_find(m->island, a);
    b = qn__uf_find(m->island, b);
    if (a != b) m->island[a > b ? a : b] = a < b ? a : b;
}
void qn__islands_end(qn_mesh *m);

#endif /* QN_MESH_BUILD_H */
