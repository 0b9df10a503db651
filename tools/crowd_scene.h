/*
** crowd_scene.h: crowd scenarios for the tool, the benchmarks and the tests
** (not part of the library): generated levels with groups of units and
** their goals, a runner that steps the crowd and measures it.
*/
#ifndef QN_CROWD_SCENE_H
#define QN_CROWD_SCENE_H

#include "quadnav.h"

#define QN_SCENE_MAX_GROUPS 4u
#define QN_SCENE_MAX_FOLLOWERS 63u

typedef struct qn_crowd_scene {
    char name[32];
    qn_level *level;  /* when built on a level file (owned) */
    qn_mesh *own_mesh; /* when generated (owned) */
    const qn_mesh *mesh;
    qn_field *fields[QN_SCENE_MAX_GROUPS];
    qn_vec2 goals[QN_SCENE_MAX_GROUPS];
    uint32_t groups;
    qn_crowd *crowd;
    float radius, dt, speed;
    uint32_t units, budget; /* budget: steps allowed for every unit to arrive */
    /* formation scenario: leader id and followers' ids (else leader QN_NONE) */
    uint32_t leader, followers[QN_SCENE_MAX_FOLLOWERS], nfollow;
    qn_vec2 slots[QN_SCENE_MAX_FOLLOWERS];
} qn_crowd_scene;

typedef struct qn_crowd_metrics {
    uint32_t units, arrived, stuck, steps;
    uint64_t overlap_pairs, wall_contacts;
    double max_overlap;       /* deepest overlap / sum of radii, over all steps */
    double step_us_per_1000;  /* mean time of qn_crowd_step* per 1,000 units (see qn_crowd_scene_clock) */
    double step_us_mean;
    /* formation only (else negative), until the leader enters its arrival
    ** region: mean slot error in radii over steps on open ground (every slot
    ** in plain view of the leader) outside re-forming; and the longest time
    ** (s) the group took to re-form (mean error back under one radius) from
    ** its first open step after a stretch where the slots did not fit. */
    double slot_error_mean, reform_s_max;
} qn_crowd_metrics;

/* Names of the built-in scenarios, NULL-terminated. */
extern const char *const qn_crowd_scene_names[];

/* Builds a built-in scenario (units 0: its default count). Returns 0, or
** non-zero after printing the problem. */
int qn_crowd_scene_build(qn_crowd_scene *s, const char *name, uint32_t units, uint64_t seed,
                         const qn_crowd_opts *opts);
/* A crowd of `units` random non-overlapping units on a level, all bound for
** `goal` (a region sized for them). Returns 0, or non-zero after printing
** the problem (for instance when the level cannot hold that many). */
int qn_crowd_scene_level(qn_crowd_scene *s, const char *path, const char *goal, uint32_t units,
                         uint64_t seed, float radius);
/* The same on a mesh the caller keeps alive (the viewer's session), bound
** for the point goal; the same placement as qn_crowd_scene_level. Call on a
** zeroed scene. */
int qn_crowd_scene_mesh(qn_crowd_scene *s, const qn_mesh *mesh, qn_vec2 goal, uint32_t units,
                        uint64_t seed, float radius);
void qn_crowd_scene_free(qn_crowd_scene *s);

/* Optional per-step callback (for trails). */
typedef void (*qn_crowd_scene_cb)(void *ud, const qn_crowd_scene *s, uint32_t step);

/* Steps until every unit has arrived or max_steps (0: the budget) steps
** have run, measuring as it goes. Returns 0, or non-zero on a library error. */
int qn_crowd_scene_run(qn_crowd_scene *s, uint32_t threads, uint32_t max_steps,
                       qn_crowd_metrics *m, qn_crowd_scene_cb cb, void *ud);

/* qn_crowd_scene_run one step at a time (the viewer): metrics_init, then
** step (0 after a measured step, 1 when every unit had arrived and no step
** was taken, -1 on a library error, printed; busy sums step time), then
** finish (arrived, stuck, wall contacts, step times). */
void qn_crowd_scene_metrics_init(const qn_crowd_scene *s, qn_crowd_metrics *m);
int qn_crowd_scene_step(qn_crowd_scene *s, uint32_t threads, qn_crowd_metrics *m, double *busy);
void qn_crowd_scene_finish(const qn_crowd_scene *s, qn_crowd_metrics *m, double busy);

/* The clock steps are timed with: CPU time of the calling thread for one
** thread (robust on a shared machine), wall time for more. Seconds. */
double qn_crowd_scene_clock(uint32_t threads);

/* Overlapping pairs now: count of pairs deeper than 10 % of the sum of radii
** and the deepest overlap as a share of the sum of radii. */
void qn_crowd_scene_overlaps(const qn_crowd_scene *s, uint64_t *pairs, double *deepest);

#endif
