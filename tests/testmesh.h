/*
** testmesh.h: mesh fixtures for the tests: rectangle lists turned into mesh
** descriptions, and random guillotine subdivisions (rich in T-junctions).
*/
#ifndef QN_TEST_TESTMESH_H
#define QN_TEST_TESTMESH_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quadnav.h"

#define TM_MAX_RECTS 512

typedef struct tm_mesh {
    qn_vec2 verts[4 * TM_MAX_RECTS];
    uint32_t quads[4 * TM_MAX_RECTS];
    float costs[TM_MAX_RECTS];
    uint8_t blocked[TM_MAX_RECTS];
    uint32_t n;
} tm_mesh;

static inline void tm_add_rect(tm_mesh *t, float x0, float y0, float x1, float y1) {
    uint32_t v = 4 * t->n;
    t->verts[v + 0] = (qn_vec2){x0, y0};
    t->verts[v + 1] = (qn_vec2){x1, y0};
    t->verts[v + 2] = (qn_vec2){x1, y1};
    t->verts[v + 3] = (qn_vec2){x0, y1};
    for (uint32_t k = 0; k < 4; k++) t->quads[v + k] = v + k;
    t->costs[t->n] = 1.0f;
    t->blocked[t->n] = 0;
    t->n++;
}

/* Point p turned by th (degrees) round the origin, then moved by (dx, dy). */
static inline qn_vec2 tm_far_point(qn_vec2 p, double th, double dx, double dy) {
    double a = th * 3.14159265358979323846 / 180.0, c = cos(a), s = sin(a);
    double x = (double)p.x, y = (double)p.y;
    return (qn_vec2){(float)(x * c - y * s + dx), (float)(x * s + y * c + dy)};
}

/* A copy of mesh m (its quads, corners apart) with every point turned and
** moved as tm_far_point does; NULL when it cannot be built (err says why). */
static inline qn_mesh *tm_far_mesh(const qn_mesh *m, double th, double dx, double dy,
                                   qn_error *err) {
    uint32_t nq = qn_mesh_quad_count(m);
    qn_vec2 *v = malloc(4 * (size_t)nq * sizeof *v);
    uint32_t *idx = malloc(4 * (size_t)nq * sizeof *idx);
    qn_mesh *far = NULL;
    if (v && idx) {
        for (uint32_t q = 0; q < nq; q++) {
            qn_vec2 c[4];
            qn_mesh_quad_corners(m, q, c);
            for (uint32_t j = 0; j < 4; j++) {
                v[4 * q + j] = tm_far_point(c[j], th, dx, dy);
                idx[4 * q + j] = 4 * q + j;
            }
        }
        qn_mesh_desc d;
        memset(&d, 0, sizeof d);
        d.vertices = v, d.vertex_count = 4 * nq, d.quads = idx, d.quad_count = nq;
        qn_mesh_create(&d, NULL, &far, err);
    }
    free(v);
    free(idx);
    return far;
}

static inline qn_mesh_desc tm_desc(const tm_mesh *t) {
    qn_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.vertices = t->verts;
    d.vertex_count = 4 * t->n;
    d.quads = t->quads;
    d.quad_count = t->n;
    d.costs = t->costs;
    d.blocked = t->blocked;
    return d;
}

static inline uint32_t tm_rand(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* The grid of w x h unit cells of costs c (freed here) and its quads.
** False, with nothing left allocated, when no cell is open; aborts if the
** grid cannot be made (never, in the tests). */
static inline bool tm_grid_of(uint8_t *c, uint32_t w, uint32_t h, qn_grid **g, qn_mesh **m) {
    qn_grid_desc d = {w, h, c, 1.0f, {0.0f, 0.0f}};
    *g = NULL;
    *m = NULL;
    if (qn_grid_create(&d, NULL, g, NULL) != QN_OK) abort();
    free(c);
    if (qn_mesh_from_grid(*g, NULL, m, NULL) == QN_OK) return true;
    qn_grid_destroy(*g);
    *g = NULL;
    return false;
}

/* A random grid of w x h unit cells (each 16 to 15 + span), one cell in 3
** to 10 a wall, imported to quads (tm_grid_of). */
static inline bool tm_random_grid(uint64_t *s, uint32_t span, qn_grid **g, qn_mesh **m,
                                  uint32_t *w, uint32_t *h) {
    *w = 16 + tm_rand(s) % span;
    *h = 16 + tm_rand(s) % span;
    uint32_t one = 3 + tm_rand(s) % 8;
    uint8_t *c = malloc((size_t)*w * *h);
    if (!c) abort();
    for (uint32_t k = 0; k < *w * *h; k++) c[k] = tm_rand(s) % one == 0 ? QN_CELL_WALL : 1;
    return tm_grid_of(c, *w, *h, g, m);
}

/* The centre of a random cell of a w x h grid that mesh m has open (its
** quad in *q). */
static inline qn_vec2 tm_open_cell(uint64_t *s, const qn_mesh *m, uint32_t w, uint32_t h,
                                   uint32_t *q) {
    qn_vec2 p;
    do {
        p = (qn_vec2){(float)(tm_rand(s) % w) + 0.5f, (float)(tm_rand(s) % h) + 0.5f};
    } while (qn_mesh_locate(m, p, QN_NONE, q) != QN_OK);
    return p;
}

/* Splits [x0,x1)x[y0,y1) (integer coordinates) recursively at random
** integer cuts; leaves become rectangles. Some leaves are dropped (holes). */
static inline void tm_guillotine(tm_mesh *t, uint64_t *s, int x0, int y0, int x1, int y1,
                                 int depth, int max_rects) {
    int w = x1 - x0, h = y1 - y0;
    bool can_x = w >= 2, can_y = h >= 2;
    bool split = depth > 0 && (can_x || can_y) && (int)t->n < max_rects - 1 &&
                 (tm_rand(s) % 8) != 0;
    if (!split) {
        if ((tm_rand(s) % 10) != 0 || t->n == 0) tm_add_rect(t, (float)x0, (float)y0, (float)x1, (float)y1);
        return;
    }
    bool vertical = can_x && (!can_y || tm_rand(s) % 2);
    if (vertical) {
        int c = x0 + 1 + (int)(tm_rand(s) % (uint32_t)(w - 1));
        tm_guillotine(t, s, x0, y0, c, y1, depth - 1, max_rects);
        tm_guillotine(t, s, c, y0, x1, y1, depth - 1, max_rects);
    } else {
        int c = y0 + 1 + (int)(tm_rand(s) % (uint32_t)(h - 1));
        tm_guillotine(t, s, x0, y0, x1, c, depth - 1, max_rects);
        tm_guillotine(t, s, x0, c, x1, y1, depth - 1, max_rects);
    }
}

#endif
