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
    /* Optional: the same, and how far the unit may go along dir before its
    ** way turns; a step then ends there (qn_field_sample_ahead). */
    qn_status (*sample_ahead)(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir, float *ahead);
    /* Does the straight move a -> b stay in traversable space? When not, *hit
    ** is where it leaves. */
    bool (*move_ok)(void *ctx, qn_vec2 a, qn_vec2 b, uint32_t hint, qn_vec2 *hit);
    /* Reference length for stretch from p (INFINITY when unreachable). */
    double (*reference)(void *ctx, qn_vec2 p);
    /* A uniformly random reachable position, from a uniform u1, u2, u3 in [0,1). */
    bool (*random_start)(void *ctx, double u1, double u2, double u3, qn_vec2 *p);
    /* Optional: where a unit whose ground was blocked under it heads (the
    ** nearest point from which the goal can be reached). */
    bool (*way_out)(void *ctx, qn_vec2 p, qn_vec2 *target);
    qn_vec2 goal;
} qn_sim_world;

#define QN_SIM_MAX_THREADS 64u

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
    /* Optional: called before every step, with no unit moving: the place for
    ** scripted changes to the world (block a quad, repair the field). */
    void (*before_step)(void *ud, uint32_t step);
    void *before_step_ud;
    /* Threads that step units (0 or 1: the calling thread only). Units do
    ** not interact, so the outcome is the same for any thread count. */
    uint32_t threads;
    /* Steps a unit may take: each unit stops (counted stuck and
    ** out_of_steps) after 4 x its reference / step + 200 steps, and after
    ** max_steps when that is smaller (0: no further limit). */
    uint32_t max_steps;
    /* Each step's samples are timed as one batch (one clock read before
    ** and after). Time the batches of one step in this many (0 or 1:
    ** every step), for hosts whose clock is slow to read (a browser's);
    ** sample_seconds is scaled up to all samples. No effect on the run. */
    uint32_t clock_every;
} qn_sim_opts;

typedef struct qn_sim_result {
    uint32_t units, arrived, stuck;
    uint32_t out_of_steps; /* of the stuck units: stopped by their step budget */
    uint64_t wall_contacts;
    uint64_t samples;
    double sample_seconds; /* time spent inside the sampler */
    double stretch_mean, stretch_p95;
    uint32_t steps;        /* steps the longest unit took */
    uint64_t escapes;      /* steps taken out of blocked ground */
    uint64_t sample_timed; /* samples whose time was measured (clock_every) */
    double walked;         /* distance walked by all units, arrived or not */
} qn_sim_result;

/* Runs the simulation; returns QN_OK, QN_E_NOMEM or QN_E_INVALID_ARG (for
** instance when no reachable start exists). */
qn_status qn_sim_run(const qn_sim_world *w, const qn_sim_opts *opts, qn_sim_result *out);

/* The same run one step at a time (for a viewer that draws between steps):
** qn_sim_begin places the units exactly as qn_sim_run does, each
** qn_sim_tick steps every active unit once (before_step and on_step are not
** called; threads as in the options), and qn_sim_tick returns false, doing
** nothing, once no unit is active. qn_sim_state_result summarises the run so
** far with the figures qn_sim_run reports (units still walking count as
** stuck). The world may change between ticks (a repaired field). Returns
** QN_OK, QN_E_NOMEM or QN_E_INVALID_ARG as qn_sim_run. */
typedef struct qn_sim_state qn_sim_state;
qn_status qn_sim_begin(const qn_sim_world *w, const qn_sim_opts *opts, qn_sim_state **out);
bool qn_sim_tick(qn_sim_state *s);
qn_status qn_sim_state_result(const qn_sim_state *s, qn_sim_result *out);
/* Copies the positions (x, y pairs) and states (QN_SIM_UNIT_*) of every unit
** into caller arrays of 2 * units floats and units bytes (either may be
** NULL); returns the number of units. */
enum { QN_SIM_UNIT_ACTIVE = 1, QN_SIM_UNIT_ARRIVED = 2, QN_SIM_UNIT_LOST = 3 };
uint32_t qn_sim_state_units(const qn_sim_state *s, float *xy, uint8_t *state);
void qn_sim_end(qn_sim_state *s);

/* Quad-mode world over a built field whose goal is `goal`. The context must
** outlive the world; no allocation. */
typedef struct qn_sim_quad_ctx {
    const qn_field *field;
    const qn_mesh *mesh;
    double total_area; /* of the reachable quads, filled by qn_sim_world_quad */
} qn_sim_quad_ctx;

void qn_sim_world_quad(qn_sim_world *w, qn_sim_quad_ctx *ctx, const qn_field *field, qn_vec2 goal);

/* The same over a hierarchical destination (qn_hfield) on `mesh`, the
** hier's mesh: samples through qn_hfield_sample_ahead, moves checked on the
** mesh, the reference is qn_hfield_cost_at (the hierarchy's cost: its local
** fields build as they are asked for). Random starts: area-weighted over
** the open quads of the goal's island, drawn again (up to 64 times, from a
** generator seeded by the draw) while the destination cannot reach them
** (a pinch narrower than its radius). A unit on blocked ground heads for
** the nearest open quad. The context must outlive the world. */
typedef struct qn_sim_hier_ctx {
    const qn_hfield *field;
    const qn_mesh *mesh;
    uint32_t island;   /* of the goal's quad (QN_NONE: outside the mesh) */
    double total_area; /* of the open quads of that island */
} qn_sim_hier_ctx;

void qn_sim_world_hier(qn_sim_world *w, qn_sim_hier_ctx *ctx, const qn_hfield *field,
                       const qn_mesh *mesh, qn_vec2 goal);

/* Quad q's centre: the mean of its corners. */
qn_vec2 qn_sim_quad_centre(const qn_mesh *m, uint32_t q);

/* splitmix64: a small deterministic generator for the tools. */
uint64_t qn_rand_next(uint64_t *state);
double qn_rand_unit(uint64_t *state); /* uniform in [0, 1) */

/* ---- grid mode (sim_grid.c) ---------------------------------------------- */

/* Does the straight move a -> b stay in passable cells of the grid? The cells
** the segment crosses are walked exactly, each point belonging to the cell
** qn_grid_locate gives it (cell (x, y) is half-open), so a move along a wall's
** face on the passable side is fine. Passing from one cell to a diagonal
** neighbour (through a grid vertex, or into a cell touched only at its
** corner) also needs both orthogonal neighbours passable: no corner is ever
** cut, as in the octile integration field. Points outside the grid are walls.
** When the move leaves passable space, *hit (if not NULL) is the last point
** before it does, inside the last passable cell; a itself when a is in a wall
** or outside (the move is then refused). */
bool qn_sim_grid_move_ok(const qn_grid *grid, qn_vec2 a, qn_vec2 b, qn_vec2 *hit);

/* Grid-mode world: samples `field` with the chosen flow kind, checks moves
** with qn_sim_grid_move_ok, takes the integration value of the start cell
** (the octile optimum) as the reference, and draws starts uniformly from the
** reachable cells (finite integration value), uniformly inside the cell. The
** row table makes a draw O(log height + width) without allocating; it makes
** the context large (64 KiB), so keep it off small stacks. The context must
** outlive the world. */
typedef struct qn_sim_grid_ctx {
    const qn_grid_field *field;
    const qn_grid *grid;
    qn_flow_kind kind;
    uint32_t reachable;                        /* reachable cells */
    uint32_t row_first[QN_MAX_GRID_SIDE + 1u]; /* reachable cells in rows < y */
} qn_sim_grid_ctx;

void qn_sim_world_grid(qn_sim_world *w, qn_sim_grid_ctx *ctx, const qn_grid_field *field,
                       qn_flow_kind kind, qn_vec2 goal);

/* Grid tiles (qn_grid_tfield, vector flow) as a world: samples, moves
** checked on the grid, the reference the tile field's value at the start
** cell; no random starts (random_start NULL: give the units their starts). */
typedef struct qn_sim_tiles_ctx {
    const qn_grid_tfield *field;
    const qn_grid *grid;
} qn_sim_tiles_ctx;

void qn_sim_world_tiles(qn_sim_world *w, qn_sim_tiles_ctx *ctx, const qn_grid_tfield *field,
                        const qn_grid *grid, qn_vec2 goal);

/* World point at fraction (u, v) in [0, 1) of cell (x, y), guaranteed to lie
** in that cell as qn_grid_locate sees it (float rounding is pulled back). */
qn_vec2 qn_sim_grid_point(const qn_grid *grid, uint32_t x, uint32_t y, double u, double v);

#endif
