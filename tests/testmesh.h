/*
** testmesh.h: mesh fixtures for the tests: rectangle lists turned into mesh
** descriptions, and random guillotine subdivisions (rich in T-junctions).
*/
#ifndef QN_TEST_TESTMESH_H
#define QN_TEST_TESTMESH_H

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
