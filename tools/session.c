/*
** session.c: a terrain, an instance and a run stepped from outside (see
** session.h).
*/
#include "session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

struct qn_session {
    qn_level *level;   /* a level, or NULL for a map */
    qn_grid *own_grid; /* a map's grid, or a level rasterised for grid modes */
    qn_mesh *own_mesh; /* a map's rectangle decomposition */
    qn_sim_mode mode;
    qn_field *field;
    qn_grid_field *grid_field;
    qn_sim_world world;
    qn_sim_quad_ctx qctx;
    qn_sim_grid_ctx *gctx; /* large: allocated on first use */
    qn_sim_state *run;
    qn_vec2 goal;
    float radius;
    qn_crowd_scene *crowd; /* crowd mode's run, else NULL */
    qn_crowd_metrics cm;
    double crowd_busy;
};

static const char *const mode_names[] = {"quad", "grid8", "gridvec", "crowd"};
#define MODE_COUNT 4

bool qn_sim_mode_parse(const char *name, qn_sim_mode *out) {
    for (int i = 0; i < MODE_COUNT; i++)
        if (name && !strcmp(name, mode_names[i])) return *out = (qn_sim_mode)i, true;
    return false;
}

const char *qn_sim_mode_name(qn_sim_mode mode) {
    return (unsigned)mode < MODE_COUNT ? mode_names[mode] : "?";
}

static void set_error(qn_error *err, qn_status st, const char *msg) {
    if (!err) return;
    memset(err, 0, sizeof *err);
    err->code = st;
    strncpy(err->message, msg, sizeof err->message - 1);
}

/* Maps start with "type" (after blanks); levels with '{'. */
static bool looks_like_map(const char *text, size_t len) {
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    return len - i >= 4 && memcmp(text + i, "type", 4) == 0;
}

static qn_status load_map(qn_session *s, const char *text, size_t len, qn_error *err) {
    qn_status st = qn_map_load_mem(text, len, NULL, &s->own_grid, err);
    if (st == QN_OK) st = qn_mesh_from_grid(s->own_grid, NULL, &s->own_mesh, err);
    return st;
}

qn_status qn_session_create(const char *text, size_t len, qn_session **out, qn_error *err) {
    *out = NULL;
    if (!text) return set_error(err, QN_E_INVALID_ARG, "no text"), QN_E_INVALID_ARG;
    qn_session *s = calloc(1, sizeof *s);
    if (!s) return set_error(err, QN_E_NOMEM, "out of memory"), QN_E_NOMEM;
    qn_status st = looks_like_map(text, len) ? load_map(s, text, len, err)
                                             : qn_level_load_mem(text, len, NULL, &s->level, err);
    if (st != QN_OK) return qn_session_destroy(s), st;
    *out = s;
    return QN_OK;
}

static void drop_crowd(qn_session *s) {
    if (s->crowd) qn_crowd_scene_free(s->crowd);
    free(s->crowd);
    s->crowd = NULL;
}

static void drop_instance(qn_session *s) {
    drop_crowd(s);
    qn_sim_end(s->run);
    qn_field_destroy(s->field);
    qn_grid_field_destroy(s->grid_field);
    s->run = NULL;
    s->field = NULL;
    s->grid_field = NULL;
}

void qn_session_destroy(qn_session *s) {
    if (!s) return;
    drop_instance(s);
    free(s->gctx);
    qn_mesh_destroy(s->own_mesh);
    qn_grid_destroy(s->own_grid);
    qn_level_destroy(s->level);
    free(s);
}

bool qn_session_is_map(const qn_session *s) { return s->level == NULL; }
const qn_level *qn_session_level(const qn_session *s) { return s->level; }
const qn_field *qn_session_field(const qn_session *s) { return s->field; }
const qn_grid_field *qn_session_grid_field(const qn_session *s) { return s->grid_field; }
qn_sim_state *qn_session_run(qn_session *s) { return s->run; }

static qn_mesh *mesh_mut(qn_session *s) {
    return s->level ? qn_level_mesh_mut(s->level) : s->own_mesh;
}

const qn_mesh *qn_session_mesh(const qn_session *s) {
    return s->level ? qn_level_mesh(s->level) : s->own_mesh;
}

static qn_grid *grid_mut(qn_session *s) {
    qn_grid *g = s->level ? qn_level_grid_mut(s->level) : NULL;
    return g ? g : s->own_grid;
}

const qn_grid *qn_session_grid(qn_session *s, qn_error *err) {
    qn_grid *g = grid_mut(s);
    if (g) return g;
    if (qn_grid_from_mesh(qn_session_mesh(s), 1.0f, NULL, &s->own_grid, err) != QN_OK) return NULL;
    return s->own_grid;
}

/* The quad instance: the caller's radius, capped on a map, whose corridors
** may be one cell wide (as `quadnav compare` does). */
static qn_status build_quad(qn_session *s, qn_vec2 goal, float radius, qn_error *err) {
    qn_field_opts fo = {.radius = s->level ? radius : fminf(radius, QN_CLI_MAP_RADIUS)};
    qn_status st = qn_field_create(qn_session_mesh(s), &goal, 1, &fo, NULL, &s->field, err);
    if (st == QN_OK) qn_sim_world_quad(&s->world, &s->qctx, s->field, goal);
    return st;
}

static qn_status build_grid(qn_session *s, qn_vec2 goal, qn_error *err) {
    const qn_grid *g = qn_session_grid(s, err);
    if (!g) return err ? err->code : QN_E_NOMEM;
    uint32_t x, y;
    if (qn_grid_locate(g, goal, &x, &y) != QN_OK)
        return set_error(err, QN_E_OUTSIDE, "the goal is outside the grid"), QN_E_OUTSIDE;
    if (!s->gctx && !(s->gctx = malloc(sizeof *s->gctx)))
        return set_error(err, QN_E_NOMEM, "out of memory"), QN_E_NOMEM;
    uint32_t cell = y * qn_grid_width(g) + x;
    qn_status st = qn_grid_field_create(g, &cell, 1, NULL, NULL, &s->grid_field, err);
    qn_flow_kind k = s->mode == QN_MODE_GRID8 ? QN_FLOW_DIR8 : QN_FLOW_VECTOR;
    if (st == QN_OK) qn_sim_world_grid(&s->world, s->gctx, s->grid_field, k, goal);
    return st;
}

qn_status qn_session_set_goal(qn_session *s, qn_sim_mode mode, qn_vec2 goal, float radius,
                              double *build_us, qn_error *err) {
    drop_instance(s);
    s->mode = mode;
    s->goal = goal;
    s->radius = radius;
    double t0 = qn_tool_now();
    bool quad = mode == QN_MODE_QUAD || mode == QN_MODE_CROWD;
    qn_status st = quad ? build_quad(s, goal, radius, err) : build_grid(s, goal, err);
    if (build_us) *build_us = (qn_tool_now() - t0) * 1e6;
    return st;
}

/* The crowd of `quadnav sim --crowd` on the session's mesh and goal. */
static qn_status start_crowd(qn_session *s, const qn_sim_opts *opts) {
    if (!(s->crowd = calloc(1, sizeof *s->crowd))) return QN_E_NOMEM;
    uint32_t units = opts->units ? opts->units : 1000;
    if (qn_crowd_scene_mesh(s->crowd, qn_session_mesh(s), s->goal, units, opts->seed, s->radius))
        return drop_crowd(s), QN_E_LIMIT;
    qn_crowd_scene_metrics_init(s->crowd, &s->cm);
    s->crowd_busy = 0.0;
    return QN_OK;
}

qn_status qn_session_start(qn_session *s, const qn_sim_opts *opts) {
    qn_sim_end(s->run);
    s->run = NULL;
    drop_crowd(s);
    if (!s->field && !s->grid_field) return QN_E_INVALID_ARG;
    if (s->mode == QN_MODE_CROWD) return start_crowd(s, opts);
    qn_sim_opts o = *opts;
    o.on_step = NULL;
    o.before_step = NULL;
    return qn_sim_begin(&s->world, &o, &s->run);
}

bool qn_session_step(qn_session *s) {
    if (s->crowd)
        return s->cm.steps < s->crowd->budget &&
               qn_crowd_scene_step(s->crowd, 1, &s->cm, &s->crowd_busy) == 0;
    return s->run && qn_sim_tick(s->run);
}

const qn_crowd_scene *qn_session_crowd(const qn_session *s) { return s->crowd; }

bool qn_session_crowd_metrics(const qn_session *s, qn_crowd_metrics *out) {
    if (!s->crowd) return false;
    *out = s->cm;
    qn_crowd_scene_finish(s->crowd, out, s->crowd_busy);
    return true;
}

qn_status qn_session_block_quad(qn_session *s, uint32_t quad, bool blocked, double *repair_us,
                                qn_error *err) {
    double t0 = qn_tool_now();
    qn_status st = qn_mesh_set_quad_blocked(mesh_mut(s), quad, blocked);
    if (st != QN_OK) set_error(err, st, "no such quad");
    else if (s->field) st = qn_field_update(s->field, err);
    if (st == QN_OK && s->crowd) /* the crowd's own instance, on the same mesh */
        st = qn_field_update(s->crowd->fields[0], err);
    if (repair_us) *repair_us = (qn_tool_now() - t0) * 1e6;
    return st;
}

qn_status qn_session_stamp(qn_session *s, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                           uint8_t cost, double *repair_us, qn_error *err) {
    if (!qn_session_grid(s, err)) return err ? err->code : QN_E_NOMEM;
    double t0 = qn_tool_now();
    qn_status st = qn_grid_stamp(grid_mut(s), x0, y0, x1, y1, cost);
    if (st != QN_OK) set_error(err, st, "empty rectangle, or one reaching outside the grid");
    else if (s->grid_field) st = qn_grid_field_update(s->grid_field, err);
    if (repair_us) *repair_us = (qn_tool_now() - t0) * 1e6;
    return st;
}
