/*
** Internal declarations shared by the modules in src/. Not installed.
** qn__ names are internal but non-static; plain names are static helpers.
*/
#ifndef QN_INTERNAL_H
#define QN_INTERNAL_H

#include "quadnav.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- memory (util.c) ------------------------------------------------ */

/* The allocator a handle keeps: a copy of the caller's, or the C library's. */
qn_allocator qn__allocator(const qn_allocator *alloc);
/* Allocates n bytes (n > 0), NULL on failure. */
void *qn__alloc(const qn_allocator *a, size_t n);
/* Allocates count*size zeroed bytes; NULL on failure or overflow. */
void *qn__calloc(const qn_allocator *a, size_t count, size_t size);
/* Grows or shrinks p from old_n to new_n bytes; NULL on failure (p kept). */
void *qn__realloc(const qn_allocator *a, void *p, size_t old_n, size_t new_n);
/* Frees p, which was allocated with n bytes; p may be NULL. */
void qn__free(const qn_allocator *a, void *p, size_t n);
/* Copies a NUL-terminated string with the allocator; NULL on failure. */
char *qn__strdup(const qn_allocator *a, const char *s);

/* ---- errors (util.c) ------------------------------------------------ */

/* Clears err (if not NULL) to QN_OK and returns QN_OK. */
qn_status qn__error_clear(qn_error *err);
/* Fills err (if not NULL) with code, index, and a printf-style message;
** returns code, so callers can write `return qn__fail(err, ...)`. */
qn_status qn__fail(qn_error *err, qn_status code, uint32_t index, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Sets err->path (if err is not NULL). */
void qn__error_path(qn_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Reads a whole file into memory (NUL-terminated for convenience) with the
** allocator. QN_E_IO when it cannot be opened or read, QN_E_LIMIT above
** QN_MAX_FILE_BYTES. *size gets the byte count (without the NUL); free with
** qn__free(a, buf, size + 1). */
qn_status qn__read_file(const char *path, const qn_allocator *a, char **buf, size_t *size,
                        qn_error *err);

/* ---- geometry helpers ------------------------------------------------ */

static inline qn_vec2 qn__v2(float x, float y) {
    qn_vec2 v = {x, y};
    return v;
}
static inline qn_vec2 qn__sub(qn_vec2 a, qn_vec2 b) { return qn__v2(a.x - b.x, a.y - b.y); }
static inline qn_vec2 qn__add(qn_vec2 a, qn_vec2 b) { return qn__v2(a.x + b.x, a.y + b.y); }
static inline qn_vec2 qn__scale(qn_vec2 a, float s) { return qn__v2(a.x * s, a.y * s); }
static inline float qn__dot(qn_vec2 a, qn_vec2 b) { return a.x * b.x + a.y * b.y; }
static inline float qn__cross(qn_vec2 a, qn_vec2 b) { return a.x * b.y - a.y * b.x; }
static inline float qn__len(qn_vec2 a) { return sqrtf(a.x * a.x + a.y * a.y); }
static inline bool qn__finite2(qn_vec2 a) { return isfinite(a.x) && isfinite(a.y); }

/* ---- mesh internals (mesh.c) ----------------------------------------- */

/* Inward edge planes of a convex quad: inside when nx*x + ny*y >= c for all 4. */
typedef struct qn__planes {
    float nx[4], ny[4], c[4];
} qn__planes;

/* Per portal: the two quads (a < b), the segment, its mid point and width,
** and which edge of a and of b it lies on. */
typedef struct qn__portal {
    uint32_t q[2];
    qn_vec2 p0, p1;
    qn_vec2 mid;
    qn_vec2 u; /* unit vector from p0 to p1 */
    float width;
    uint32_t local[2]; /* position of this portal in each quad's portal list */
    uint8_t edge[2];
} qn__portal;

struct qn_mesh {
    qn_allocator alloc;
    uint32_t quad_count;
    uint32_t portal_count;
    uint32_t island_count;
    float eps; /* geometric tolerance in world units */
    qn_rect bounds;
    qn_vec2 *corners;   /* 4 per quad */
    qn__planes *planes; /* 1 per quad */
    float *cost;        /* 1 per quad */
    uint8_t *blocked;   /* 1 per quad */
    float *area;        /* 1 per quad */
    uint32_t *island;   /* 1 per quad; QN_NONE when blocked */
    qn__portal *portals;
    uint32_t *qp_start; /* quad_count + 1: portals of quad q are qp_list[qp_start[q]..] */
    uint32_t *qp_list;
    /* For each quad, a k*k matrix of distances between its portals' mid
    ** points (k = its portal count), at qdist[qd_start[q]..]. */
    uint32_t *qd_start;
    float *qdist;
    /* Uniform grid of buckets over the bounds: quads whose (slightly grown)
    ** box touches a bucket, in increasing quad order. */
    qn_vec2 grid_origin;
    float grid_inv_cell;
    float grid_cell;
    uint32_t grid_w, grid_h;
    uint32_t *cell_start; /* grid_w*grid_h + 1 */
    uint32_t *cell_list;
    size_t bytes;
    /* Dynamic changes: version counts them; journal[v % QN__JOURNAL] is the
    ** quad changed by change number v (1-based). */
    uint64_t version;
    uint32_t journal[1024];
};

#define QN__JOURNAL 1024u

/* Inclusive point-in-quad test with the mesh tolerance. */
static inline bool qn__quad_contains(const qn_mesh *m, uint32_t q, qn_vec2 p) {
    const qn__planes *pl = &m->planes[q];
    for (int i = 0; i < 4; i++)
        if (pl->nx[i] * p.x + pl->ny[i] * p.y < pl->c[i] - m->eps) return false;
    return true;
}
/* The quad on the other side of portal e from quad q. */
static inline uint32_t qn__portal_other(const qn_mesh *m, uint32_t e, uint32_t q) {
    return m->portals[e].q[0] == q ? m->portals[e].q[1] : m->portals[e].q[0];
}

/* (Re)computes the islands from the blocked flags and portals (mesh.c). */
void qn__mesh_islands(qn_mesh *m);

/* Nearest quad to p among those `keep` accepts (all when NULL), and its
** closest point; QN_NONE when none qualifies (mesh_query.c). */
typedef bool (*qn__quad_filter)(const void *ctx, uint32_t quad);
uint32_t qn__nearest(const qn_mesh *m, qn_vec2 p, qn__quad_filter keep, const void *ctx,
                     qn_vec2 *closest);

/* Locate without argument checks; QN_NONE when outside (mesh_query.c). */
uint32_t qn__locate(const qn_mesh *m, qn_vec2 p, uint32_t hint);

/* ---- field internals (field.c) ----------------------------------------- */

/* Exit values with this bit set mark a goal quad; the low bits index the
** field's goals, sorted by quad. */
#define QN__GOAL_BIT 0x80000000u

/* One quad's entry of an instance: 8 bytes. */
typedef struct qn__slot {
    float cost;
    uint32_t exit;
} qn__slot;

typedef struct qn__goal {
    qn_vec2 at;
    uint32_t quad;
    uint32_t index; /* position in the caller's goal array */
} qn__goal;

/* Per-portal state a repairable field keeps between updates: the portal
** costs, the shortest-path tree over portals (parent, first child, next
** sibling), the side each cost came through, and an idle heap. */
typedef struct qn__tree {
    qn_vec2 *x; /* where the best path crosses each portal */
    float *g;
    uint32_t *pred, *child, *sib;
    uint32_t *heap, *pos;
    uint8_t *via;
} qn__tree;

struct qn_field {
    qn_allocator alloc;
    const qn_mesh *mesh;
    float radius;
    uint32_t lookahead; /* portals the sampler looks through; <= 2: edge projection */
    bool midpoint;      /* portal-to-portal costs between mid points */
    uint32_t goal_count;
    qn__slot *slots;
    float *pg;      /* cost of each portal (the tree's g when repairable) */
    qn__goal *goals;
    qn__tree *tree; /* NULL unless built repairable */
    uint64_t version; /* mesh version the field reflects */
    size_t bytes;
};

/* Is portal e usable for an agent of this radius: both sides open and wide
** enough. */
static inline bool qn__portal_open(const qn_mesh *m, uint32_t e, float radius) {
    const qn__portal *p = &m->portals[e];
    return !m->blocked[p->q[0]] && !m->blocked[p->q[1]] && p->width + m->eps >= 2.0f * radius;
}

/* Nearest goal point to p among the goals of one goal quad, whose first
** (sorted) goal index is `first` (field.c). */
const qn__goal *qn__nearest_goal(const qn_field *f, uint32_t first, qn_vec2 p);

/* ---- grids into rectangles (grid_rects.c, grid_mesh.c) ---------------- */

/* Cut marks per cell of a grid: on the edge above the cell, on its left. */
#define QN__CUT_TOP 1u
#define QN__CUT_LEFT 2u

/* Marks in cut (width*height zeroed bytes) the edges between cells of equal
** cost along which the grid's passable cells split into the fewest
** rectangles of one cost each: every region of equal-cost cells bounded by
** walls, other costs and cuts is then a rectangle. QN_OK or QN_E_NOMEM. */
qn_status qn__grid_cuts(const qn_grid *g, const qn_allocator *a, uint8_t *cut, qn_error *err);

/* Decompositions of qn__mesh_from_grid_with. */
typedef enum qn__decomp {
    QN__DECOMP_FEWEST, /* along qn__grid_cuts: the fewest rectangles (the default) */
    QN__DECOMP_ROWS    /* greedy, row-major: widest run, then grown down */
} qn__decomp;

/* The number of rectangles of decomposition `how` (no mesh is built). */
qn_status qn__grid_rect_count(const qn_grid *grid, qn__decomp how, const qn_allocator *alloc,
                              uint32_t *count, qn_error *err);

/* qn_mesh_from_grid with a chosen decomposition (the tools compare them). */
qn_status qn__mesh_from_grid_with(const qn_grid *grid, qn__decomp how, const qn_allocator *alloc,
                                  qn_mesh **out, qn_error *err);

#endif /* QN_INTERNAL_H */
