/*
** sim.h: the quality harness. Units step along sampled directions toward a
** goal; the run counts arrivals, wall contacts and stuck units, and measures
** stretch (distance walked / cost to goal at the start). Used by the command
** line tool, the benchmarks and the tests; not part of the library.
*/
#ifndef QN_SIM_H
#define QN_SIM_H

#include "quadnav.h"

/* A world the units walk in: a sampler plus the geometry checks the harness
** needs. Quad mode fills it with qn_sim_world_quad; grid mode has its own. */
typedef struct qn_sim_world {
    void *ctx;
    /* Direction for a unit at p; hint in/out as in qn_field_sample. */
    qn_status (*sample)(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir);
    /* Does the straight move a -> b stay in traversable space? When not, *hit
    ** is where it leaves. */
    bool (*move_ok)(void *ctx, qn_vec2 a, qn_vec2 b, uint32_t hint, qn_vec2 *hit);
    /* Reference length for stretch from p (INFINITY when unreachable). */
    double (*reference)(void *ctx, qn_vec2 p);
    /* A uniformly random reachable position, from a uniform u1, u2, u3 in [0,1). */
    bool (*random_start)(void *ctx, double u1, double u2, double u3, qn_vec2 *p);
    qn_vec2 goal;
} qn_sim_world;

typedef struct qn_sim_opts {
    uint32_t units;        /* 0: 1000 */
    uint64_t seed;
    float step;            /* distance moved per step; 0: 0.2 */
    float arrive;          /* arrival distance from the goal; 0: the step */
    const qn_vec2 *starts; /* optional fixed starts (cycled), else random */
    uint32_t start_count;
    /* Optional: called after every step with all positions (for trails). */
    void (*on_step)(void *ud, uint32_t step, const qn_vec2 *pos, const uint8_t *active,
                    uint32_t n);
    void *on_step_ud;
} qn_sim_opts;

typedef struct qn_sim_result {
    uint32_t units, arrived, stuck;
    uint64_t wall_contacts;
    uint64_t samples;
    double sample_seconds; /* time spent inside the sampler */
    double stretch_mean, stretch_p95;
    uint32_t steps;        /* steps the longest unit took */
} qn_sim_result;

/* Runs the simulation; returns QN_OK, QN_E_NOMEM or QN_E_INVALID_ARG (for
** instance when no reachable start exists). */
qn_status qn_sim_run(const qn_sim_world *w, const qn_sim_opts *opts, qn_sim_result *out);

/* Quad-mode world over a built field whose goal is `goal`. The context must
** outlive the world; no allocation. */
typedef struct qn_sim_quad_ctx {
    const qn_field *field;
    const qn_mesh *mesh;
    double total_area; /* of the reachable quads, filled by qn_sim_world_quad */
} qn_sim_quad_ctx;

void qn_sim_world_quad(qn_sim_world *w, qn_sim_quad_ctx *ctx, const qn_field *field, qn_vec2 goal);

/* splitmix64: a small deterministic generator for the tools. */
uint64_t qn_rand_next(uint64_t *state);
double qn_rand_unit(uint64_t *state); /* uniform in [0, 1) */

#endif
