/*
** crowd_internal.h: the crowd module's private declarations, shared by the
** files of src/crowd/ only. (Kept apart from src/internal.h because nothing
** outside the crowd needs them; they build on internal.h.)
*/
#ifndef QN_CROWD_INTERNAL_H
#define QN_CROWD_INTERNAL_H

#include "internal.h"

/* Per-unit flag bits. */
#define QN__CU_ARRIVED 1u
#define QN__CU_WALL 2u    /* the last move slid along a wall */
#define QN__CU_STEPPED 4u /* stepped in the current step (range bookkeeping) */
#define QN__CU_RESOLVED 8u /* overlaps resolved in the current step */

/* A wall: a piece of a quad edge no open portal covers. */
typedef struct qn__wall {
    qn_vec2 a, b;
} qn__wall;

/* The walls of a mesh in a uniform grid of buckets over its bounds. */
typedef struct qn__walls {
    qn__wall *seg;
    uint32_t count, seg_cap;
    qn_vec2 origin;
    float cell, inv_cell;
    uint32_t w, h;
    uint32_t *start; /* w*h + 1 */
    uint32_t *list;
    uint32_t list_len;
    uint64_t version; /* mesh version they were taken at */
} qn__walls;

/* A unit's own path (qn_crowd_set_path). */
typedef struct qn__cpath {
    qn_vec2 *pts;
    uint32_t n;
} qn__cpath;

/* One ORCA constraint: velocities v with cross(d, v - p) >= 0 are allowed. */
typedef struct qn__line {
    qn_vec2 p, d;
} qn__line;

/* Per-unit arrays, all indexed by dense position (0..count-1); the table in
** crowd.c grows and moves them together. "n" arrays are a step's results. */
typedef struct qn__cunits {
    uint32_t *id;
    qn_vec2 *pos, *vel, *des, *heading, *goal, *slot;
    float *rad, *vmax, *amax, *goal_r;
    const qn_field **field;
    uint32_t *group, *quad, *leader, *path_next;
    uint32_t *nfollow; /* how many units follow this one */
    uint8_t *flags;
    qn__cpath *path;
    qn_vec2 *npos, *nvel, *ndes;
    uint32_t *nquad, *npath_next;
    qn_vec2 *fpos;   /* final positions, after overlaps are resolved */
    uint32_t *fquad;
    uint8_t *nnb;    /* neighbours found in the step (their dense indices in nbr) */
    uint16_t *wait, *nwait; /* steps slow against arrived units (arrival) */
    uint8_t *nflags;
    uint8_t *nres;  /* resolve passes done in the current step */
    uint32_t *hkey; /* grid cell of each unit in the current step */
} qn__cunits;

struct qn_crowd {
    qn_allocator alloc;
    const qn_mesh *mesh;
    uint32_t max_nb;
    uint32_t passes; /* resolve passes a step */
    float tau, tau_wall, nb_extra; /* nb_extra 0: automatic */
    uint32_t count, cap;
    qn__cunits u;
    /* ids: dense_of[id] is the unit's dense position or QN_NONE; free ids
    ** are kept on a stack. */
    uint32_t *dense_of, *free_ids;
    uint32_t id_cap, id_bound, free_count;
    qn__walls walls;
    /* step state */
    bool in_step;
    float dt;
    float max_rad, max_vmax, nb_range; /* over all units, at begin */
    /* the step's grid of units: gw x gh cells of hcell from gorigin */
    float hcell, hinv;
    qn_vec2 gorigin;
    uint32_t gw, gh;
    uint32_t *hstart;  /* gw*gh + 1: units of cell k are hunits[hstart[k]..hstart[k+1]) */
    uint32_t *hunits;  /* dense indices in cell order */
    qn_vec2 *hpos;     /* their positions, in the same order */
    uint32_t hcap, gcap; /* capacity of hunits/hpos, and of hstart (cells) */
    uint32_t *nbr;     /* max_nb per unit */
    size_t nbr_cap;    /* units it has room for */
    uint64_t steps, wall_contacts;
};

/* ---- walls (crowd_walls.c) ---- */
qn_status qn__walls_build(qn__walls *w, const qn_mesh *m, const qn_allocator *a);
void qn__walls_free(qn__walls *w, const qn_allocator *a);
/* Up to cap walls within `range` of p as ORCA lines for a unit of radius r
** moving at most vmax (tau: wall horizon, dt: the step); returns how many. */
uint32_t qn__walls_lines(const qn__walls *w, qn_vec2 p, float r, float range, float tau,
                         float dt, qn__line *out, uint32_t cap);
/* Moves from p by d inside the mesh, sliding along walls; *quad is p's
** quad on entry and the end's on return. Returns true when it had to slide. */
bool qn__walls_move(const qn__walls *w, const qn_mesh *m, qn_vec2 *p, qn_vec2 d,
                    uint32_t *quad);

/* ---- avoidance (crowd_orca.c) ---- */
/* ORCA line for unit a against b; a takes `share` of the avoidance (b the
** rest; 0.5 is the reciprocal split). */
qn__line qn__orca_line(qn_vec2 pa, qn_vec2 va, float ra, qn_vec2 pb, qn_vec2 vb, float rb,
                       float inv_tau, float inv_dt, bool a_first, float share);
/* The velocity nearest `pref` within speed vmax satisfying lines[0..n)
** (the first `hard` of them strictly when possible). */
qn_vec2 qn__orca_solve(const qn__line *lines, uint32_t n, uint32_t hard, float vmax,
                       qn_vec2 pref);

/* ---- step (crowd_step.c) ---- */
void qn__crowd_step_free(qn_crowd *c);

#endif
