/*
** qn_web.c: the functions the WebAssembly viewer calls (tools/web/app.js),
** over a session (tools/session.h). Flat arguments and caller-owned arrays
** so that JavaScript needs no knowledge of C structs. Errors are written as
** text into a caller buffer of QNW_ERR_BYTES bytes: "STATUS|path|line|column|message".
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

#define QNW_ERR_BYTES 512

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#define QNW_EXPORT EMSCRIPTEN_KEEPALIVE
#else
#define QNW_EXPORT
#endif

/* Writes a status and the loader's message into buf (if not NULL). */
static void put_error(char *buf, qn_status st, const qn_error *e) {
    if (!buf) return;
    snprintf(buf, QNW_ERR_BYTES, "%s|%s|%u|%u|%s", qn_status_name(st), e ? e->path : "",
             e ? e->line : 0u, e ? e->column : 0u, e ? e->message : "");
}

/* A session from level JSON or map text; NULL on failure (err explains). */
QNW_EXPORT qn_session *qnw_load(const char *text, uint32_t len, char *err) {
    qn_session *s = NULL;
    qn_error e;
    memset(&e, 0, sizeof e);
    qn_status st = qn_session_create(text, len, &s, &e);
    if (st != QN_OK) put_error(err, st, &e);
    return s;
}

QNW_EXPORT void qnw_free(qn_session *s) { qn_session_destroy(s); }
QNW_EXPORT int qnw_is_map(const qn_session *s) { return qn_session_is_map(s); }

/* The level loader alone (the editor's check): 0 when valid, else the status
** with err filled. */
QNW_EXPORT int qnw_validate(const char *text, uint32_t len, char *err) {
    qn_level *level = NULL;
    qn_error e;
    memset(&e, 0, sizeof e);
    qn_status st = qn_level_load_mem(text, len, NULL, &level, &e);
    if (st != QN_OK)
        put_error(err, st, &e);
    else if (err)
        snprintf(err, QNW_ERR_BYTES, "OK|||0|0|%u quads, %u portals, %u islands",
                 qn_mesh_quad_count(qn_level_mesh(level)),
                 qn_mesh_portal_count(qn_level_mesh(level)),
                 qn_mesh_island_count(qn_level_mesh(level)));
    qn_level_destroy(level);
    return (int)st;
}

/* ---- geometry ---------------------------------------------------------- */

QNW_EXPORT uint32_t qnw_quad_count(const qn_session *s) {
    return qn_mesh_quad_count(qn_session_mesh(s));
}
QNW_EXPORT uint32_t qnw_portal_count(const qn_session *s) {
    return qn_mesh_portal_count(qn_session_mesh(s));
}

/* Corners (8 floats), cost and blocked flag of every quad. */
QNW_EXPORT void qnw_quads(const qn_session *s, float *xy, float *cost, uint8_t *blocked) {
    const qn_mesh *m = qn_session_mesh(s);
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        qn_vec2 k[4];
        qn_mesh_quad_corners(m, q, k);
        for (int i = 0; i < 4; i++) {
            xy[8 * q + 2 * i] = k[i].x;
            xy[8 * q + 2 * i + 1] = k[i].y;
        }
        cost[q] = qn_mesh_quad_cost(m, q);
        blocked[q] = qn_mesh_quad_blocked(m, q);
    }
}

/* End points (4 floats) of every portal. */
QNW_EXPORT void qnw_portals(const qn_session *s, float *xy) {
    const qn_mesh *m = qn_session_mesh(s);
    for (uint32_t i = 0; i < qn_mesh_portal_count(m); i++) {
        qn_portal p;
        qn_mesh_portal(m, i, &p);
        xy[4 * i] = p.p0.x, xy[4 * i + 1] = p.p0.y, xy[4 * i + 2] = p.p1.x, xy[4 * i + 3] = p.p1.y;
    }
}

/* Quad at (x, y), or -1. */
QNW_EXPORT int32_t qnw_locate(const qn_session *s, float x, float y) {
    uint32_t q;
    qn_vec2 p = {x, y};
    return qn_mesh_locate(qn_session_mesh(s), p, QN_NONE, &q) == QN_OK ? (int32_t)q : -1;
}

/* Grid shape: out[0..4] = width, height, cell size, origin x, origin y; 0
** when the grid cannot be had (err explains). */
QNW_EXPORT int qnw_grid_info(qn_session *s, float *out, char *err) {
    qn_error e;
    memset(&e, 0, sizeof e);
    const qn_grid *g = qn_session_grid(s, &e);
    if (!g) return put_error(err, e.code, &e), 0;
    out[0] = (float)qn_grid_width(g), out[1] = (float)qn_grid_height(g);
    out[2] = qn_grid_cell_size(g);
    out[3] = qn_grid_origin(g).x, out[4] = qn_grid_origin(g).y;
    return 1;
}

/* The grid's cost bytes (row-major), read in place. */
QNW_EXPORT const uint8_t *qnw_grid_costs(qn_session *s) {
    const qn_grid *g = qn_session_grid(s, NULL);
    return g ? qn_grid_costs(g) : NULL;
}

/* Named goals and spawns of a level: count, and one at a time. */
QNW_EXPORT uint32_t qnw_goal_count(const qn_session *s) {
    return qn_session_level(s) ? qn_level_goal_count(qn_session_level(s)) : 0;
}

QNW_EXPORT const char *qnw_goal(const qn_session *s, uint32_t i, float *at) {
    const char *name = "";
    qn_vec2 p = {0, 0};
    if (qn_session_level(s)) qn_level_goal(qn_session_level(s), i, &name, &p);
    at[0] = p.x, at[1] = p.y;
    return name;
}

/* ---- instance ------------------------------------------------------------ */

/* Builds the instance (mode 0 quad, 1 grid8, 2 gridvec, 3 crowd); returns the build
** time in microseconds, or -1 (err explains). */
QNW_EXPORT double qnw_set_goal(qn_session *s, int mode, float x, float y, float radius, char *err) {
    qn_error e;
    memset(&e, 0, sizeof e);
    double us = 0;
    qn_vec2 goal = {x, y};
    qn_status st = qn_session_set_goal(s, (qn_sim_mode)mode, goal, radius, &us, &e);
    if (st != QN_OK) return put_error(err, st, &e), -1.0;
    return us;
}

/* Quad mode: cost to goal (INFINITY unreachable) and the exit portal's
** mid point (NAN when none) of every quad. */
QNW_EXPORT void qnw_quad_field(const qn_session *s, float *cost, float *exit_xy) {
    const qn_field *f = qn_session_field(s);
    const qn_mesh *m = qn_session_mesh(s);
    for (uint32_t q = 0; f && q < qn_mesh_quad_count(m); q++) {
        cost[q] = qn_field_quad_cost(f, q);
        qn_portal p;
        uint32_t x = qn_field_quad_exit(f, q);
        bool ok = x != QN_NONE && qn_mesh_portal(m, x, &p) == QN_OK;
        exit_xy[2 * q] = ok ? 0.5f * (p.p0.x + p.p1.x) : NAN;
        exit_xy[2 * q + 1] = ok ? 0.5f * (p.p0.y + p.p1.y) : NAN;
    }
}

/* Grid modes: integration value and flow vector (8-direction or gradient,
** as the mode samples) of every cell. */
QNW_EXPORT void qnw_grid_field(const qn_session *s, int mode, float *cost, float *vxy) {
    const qn_grid_field *f = qn_session_grid_field(s);
    if (!f) return;
    const qn_grid *g = qn_grid_field_grid(f);
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t i = y * w + x;
            cost[i] = (float)qn_grid_field_cost(f, x, y);
            qn_vec2 v = mode == QN_MODE_GRID8 ? qn_dir_vector(qn_grid_field_dir(f, x, y))
                                              : qn_grid_field_vec(f, x, y);
            vxy[2 * i] = v.x, vxy[2 * i + 1] = v.y;
        }
}

/* ---- the run -------------------------------------------------------------- */

/* Places units (seed as two 32-bit halves); 0 or a status. clock_every:
** time the samples of one step in that many (a browser's clock is slow to
** read and coarse; see qn_sim_opts). */
QNW_EXPORT int qnw_start(qn_session *s, uint32_t units, uint32_t seed_lo, uint32_t seed_hi,
                         float step, uint32_t clock_every) {
    qn_sim_opts o;
    memset(&o, 0, sizeof o);
    o.units = units;
    o.seed = (uint64_t)seed_hi << 32 | seed_lo;
    o.step = step;
    o.clock_every = clock_every;
    return (int)qn_session_start(s, &o);
}

/* Up to n steps; returns how many were taken (fewer once every unit is done). */
QNW_EXPORT uint32_t qnw_step(qn_session *s, uint32_t n) {
    uint32_t k = 0;
    while (k < n && qn_session_step(s))
        k++;
    return k;
}

QNW_EXPORT uint32_t qnw_units(const qn_session *s, float *xy, uint8_t *state) {
    qn_sim_state *r = qn_session_run((qn_session *)s);
    return r ? qn_sim_state_units(r, xy, state) : 0;
}

/* Figures of the run so far: units, arrived, stuck, wall contacts, samples,
** sample seconds, stretch mean, stretch p95, steps, escapes (10 doubles). */
QNW_EXPORT int qnw_result(qn_session *s, double *out) {
    qn_sim_state *r = qn_session_run(s);
    qn_sim_result res;
    if (!r || qn_sim_state_result(r, &res) != QN_OK) return 0;
    double v[10] = {
        res.units,           res.arrived,        res.stuck,        (double)res.wall_contacts,
        (double)res.samples, res.sample_seconds, res.stretch_mean, res.stretch_p95,
        res.steps,           (double)res.escapes};
    memcpy(out, v, sizeof v);
    return 1;
}

/* Crowd mode: positions (x, y), radii and states (1 walking, 2 arrived) of
** the crowd's units in id order, into arrays of n; returns the count written. */
QNW_EXPORT uint32_t qnw_crowd_units(const qn_session *s, float *xy, float *radius, uint8_t *state,
                                    uint32_t n) {
    const qn_crowd_scene *c = qn_session_crowd(s);
    uint32_t k = 0, bound = c ? qn_crowd_id_bound(c->crowd) : 0;
    for (uint32_t id = 0; id < bound && k < n; id++) {
        qn_crowd_unit u;
        if (qn_crowd_get(c->crowd, id, &u) != QN_OK) continue;
        xy[2 * k] = u.position.x, xy[2 * k + 1] = u.position.y;
        radius[k] = u.radius;
        state[k++] = u.arrived ? 2 : 1;
    }
    return k;
}

/* Crowd mode's figures so far, as `quadnav sim --crowd` measures them:
** units, arrived, stuck, wall contacts, overlap pairs, max overlap, steps,
** step us mean (8 doubles); 0 when no crowd run. */
QNW_EXPORT int qnw_crowd_result(const qn_session *s, double *out) {
    qn_crowd_metrics m;
    if (!qn_session_crowd_metrics(s, &m)) return 0;
    double v[8] = {m.units, m.arrived, m.stuck, (double)m.wall_contacts,
                   (double)m.overlap_pairs, m.max_overlap, m.steps, m.step_us_mean};
    memcpy(out, v, sizeof v);
    return 1;
}

/* ---- changes ------------------------------------------------------------- */

/* Block or unblock a quad (quad mode); repair time in us, or -1. */
QNW_EXPORT double qnw_block_quad(qn_session *s, uint32_t q, int blocked, char *err) {
    qn_error e;
    memset(&e, 0, sizeof e);
    double us = 0;
    qn_status st = qn_session_block_quad(s, q, blocked != 0, &us, &e);
    if (st != QN_OK) return put_error(err, st, &e), -1.0;
    return us;
}

/* Stamp a cell rectangle (grid modes); repair time in us, or -1. */
QNW_EXPORT double qnw_stamp(qn_session *s, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                            uint32_t cost, char *err) {
    qn_error e;
    memset(&e, 0, sizeof e);
    double us = 0;
    qn_status st = qn_session_stamp(s, x0, y0, x1, y1, (uint8_t)cost, &us, &e);
    if (st != QN_OK) return put_error(err, st, &e), -1.0;
    return us;
}

QNW_EXPORT const char *qnw_version(void) { return qn_version_string(); }
