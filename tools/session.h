/*
** session.h: one terrain, one goal, one mode and a run of units stepped one
** step at a time. Shared by `quadnav sim` (maps and grid modes) and the
** WebAssembly viewer (tools/web/), so that both place and step units with
** the same code. Not part of the library; no stdio.
*/
#ifndef QN_SESSION_H
#define QN_SESSION_H

#include "crowd_scene.h"
#include "sim.h"

/* QN_MODE_CROWD: units with bodies (qn_crowd, through tools/crowd_scene.c,
** placed and stepped as `quadnav sim --crowd` does) over a quad instance. */
typedef enum qn_sim_mode {
    QN_MODE_QUAD = 0, QN_MODE_GRID8 = 1, QN_MODE_GRIDVEC = 2, QN_MODE_CROWD = 3
} qn_sim_mode;

/* "quad", "grid8", "gridvec", "crowd" -> mode; false for anything else. */
bool qn_sim_mode_parse(const char *name, qn_sim_mode *out);
const char *qn_sim_mode_name(qn_sim_mode mode);

typedef struct qn_session qn_session;

/* Loads a level JSON or a MovingAI map (text starting with "type") from
** memory. A map's quads are its rectangle decomposition; a level without a
** grid is rasterised at cell size 1 when a grid mode asks for it. On failure
** err (if not NULL) holds the loader's message naming the element. */
qn_status qn_session_create(const char *text, size_t len, qn_session **out, qn_error *err);
void qn_session_destroy(qn_session *s);

bool qn_session_is_map(const qn_session *s);
const qn_level *qn_session_level(const qn_session *s); /* NULL for a map */
const qn_mesh *qn_session_mesh(const qn_session *s);
/* The grid (built on first use for a level without one); NULL on failure. */
const qn_grid *qn_session_grid(qn_session *s, qn_error *err);

/* Builds the instance for goal in mode (a quad field of agent radius
** `radius`, at most 0.45 on a map; a grid field at the
** goal's cell). Ends a run in progress. *build_us gets the build time. */
qn_status qn_session_set_goal(qn_session *s, qn_sim_mode mode, qn_vec2 goal, float radius,
                              double *build_us, qn_error *err);
const qn_field *qn_session_field(const qn_session *s);           /* quad mode, else NULL */
const qn_grid_field *qn_session_grid_field(const qn_session *s); /* grid modes, else NULL */

/* Places units (the opts of qn_sim_run; hooks are ignored) over the current
** instance; the run then advances with qn_session_step. In crowd mode only
** units and seed are read: the crowd of qn_crowd_scene_mesh (radius that of
** the goal, step 0.1 s, budget 8000 steps); QN_E_LIMIT when the terrain
** cannot hold that many (the reason printed to stderr). */
qn_status qn_session_start(qn_session *s, const qn_sim_opts *opts);
/* One step of every active unit; false when none is left (or no run). In
** crowd mode, one measured step of the crowd (qn_crowd_scene_step) while a
** unit has not arrived and the budget lasts. */
bool qn_session_step(qn_session *s);
qn_sim_state *qn_session_run(qn_session *s); /* NULL when no run or in crowd mode */
/* Crowd mode: the scene (NULL when no crowd run), and its figures so far as
** qn_crowd_scene_run gives them (false when no crowd run). */
const qn_crowd_scene *qn_session_crowd(const qn_session *s);
bool qn_session_crowd_metrics(const qn_session *s, qn_crowd_metrics *out);

/* Run-time changes to the terrain: block or unblock a quad of the mesh, or
** stamp the grid's cells x0 <= x < x1, y0 <= y < y1 with a cost
** (QN_CELL_WALL blocks). The current instance is repaired when it is of the
** kind changed (a quad field for quads, a grid field for cells); a map's
** mesh and grid are separate copies, so a stamp does not reach quad mode.
** *repair_us gets the time of the change and the repair. QN_E_INVALID_ARG
** for a quad out of range or a rectangle empty or reaching outside. */
qn_status qn_session_block_quad(qn_session *s, uint32_t quad, bool blocked, double *repair_us,
                                qn_error *err);
qn_status qn_session_stamp(qn_session *s, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                           uint8_t cost, double *repair_us, qn_error *err);

#endif
