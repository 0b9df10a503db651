/*
** brute.h: a brute-force oracle for the tests. Bellman-Ford over the portal
** graph of the mid-point cost model, using only the public API: g[P] is the
** cost from portal P's mid point to the nearest goal, INFINITY when none can
** be reached. The field (with midpoint_costs) and the pathfinder must agree.
*/
#ifndef QN_TEST_BRUTE_H
#define QN_TEST_BRUTE_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "quadnav.h"

static inline double bf_dist(qn_vec2 a, qn_vec2 b) {
    return hypot((double)a.x - (double)b.x, (double)a.y - (double)b.y);
}

static inline qn_vec2 bf_mid(const qn_portal *p) {
    return (qn_vec2){(p->p0.x + p->p1.x) / 2, (p->p0.y + p->p1.y) / 2};
}

/* Open to an agent of this radius: both sides unblocked and wide enough. */
static inline bool bf_portal_open(const qn_mesh *m, const qn_portal *p, float radius) {
    return !qn_mesh_quad_blocked(m, p->a) && !qn_mesh_quad_blocked(m, p->b) &&
           (float)bf_dist(p->p0, p->p1) + 1e-5f >= 2 * radius;
}

/* Fills g (one per portal) for the goal points; returns false if a goal is
** outside the mesh. */
static inline bool bf_portal_costs(const qn_mesh *m, const qn_vec2 *goals, uint32_t ng,
                                   float radius, double *g) {
    uint32_t np = qn_mesh_portal_count(m);
    qn_portal *ps = calloc(np + 1, sizeof *ps);
    if (!ps) return false;
    for (uint32_t i = 0; i < np; i++) {
        qn_mesh_portal(m, i, &ps[i]);
        g[i] = (double)INFINITY;
    }
    for (uint32_t k = 0; k < ng; k++) {
        uint32_t gq;
        if (qn_mesh_locate(m, goals[k], QN_NONE, &gq) != QN_OK) return free(ps), false;
        for (uint32_t i = 0; i < np; i++)
            if ((ps[i].a == gq || ps[i].b == gq) && bf_portal_open(m, &ps[i], radius))
                g[i] = fmin(g[i], (double)qn_mesh_quad_cost(m, gq) * bf_dist(bf_mid(&ps[i]), goals[k]));
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t u = 0; u < np; u++) {
            if (!isfinite(g[u])) continue;
            for (uint32_t v = 0; v < np; v++) {
                if (v == u || !bf_portal_open(m, &ps[v], radius)) continue;
                const uint32_t sides[2] = {ps[u].a, ps[u].b};
                for (int k = 0; k < 2; k++) {
                    uint32_t q = sides[k];
                    if (ps[v].a != q && ps[v].b != q) continue;
                    double alt = g[u] + (double)qn_mesh_quad_cost(m, q) *
                                            bf_dist(bf_mid(&ps[u]), bf_mid(&ps[v]));
                    if (alt < g[v] - 1e-9) g[v] = alt, changed = true;
                }
            }
        }
    }
    free(ps);
    return true;
}

#endif
