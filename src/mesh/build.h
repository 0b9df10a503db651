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
    float *tol; /* per quad: its local tolerance (a few ulps of its coordinates) */
    qn__cand *cands;
    uint32_t ncand, capcand;
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
/* With m->portals' quads, edges and end points set: the rest of each portal
** (mid point, width, direction) and the per-quad lists. */
qn_status qn__mesh_portal_lists(qn_mesh *m, qn_error *err);
size_t qn__mesh_array_bytes(const qn_mesh *m);

#endif /* QN_MESH_BUILD_H */
