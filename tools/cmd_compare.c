/*
** cmd_compare.c: `quadnav compare`: quad mode, grid mode with 8-direction
** flow and grid mode with vector flow, run on the same starts and goals in
** one process. Also the loader shared with `quadnav render` that turns a
** level or a MovingAI map into both a mesh and a grid.
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "tool.h"

static const char compare_usage[] =
    "usage: quadnav compare LEVEL|MAP [--scen FILE] [--units N] [--seed S] [--radius R]\n"
    "                       [--step D] [--goal X,Y|NAME] [--lookahead N]\n"
    "                       [--midpoint-costs] [--hier] [--tiles] [--json [--per-unit]]\n"
    "Runs the same units in three modes: quad (the level's quads, or the map's\n"
    "rectangle decomposition), grid8 (grid, 8-direction flow) and gridvec (grid,\n"
    "vector flow). A level without a grid is rasterised at cell size 1.\n"
    "  --scen FILE  units from a MovingAI scenario: up to N rows spread evenly over\n"
    "               the file, start cell centre to goal cell centre; stretch is\n"
    "               distance walked / the row's optimal length\n"
    "  otherwise    one goal (--goal, the level's first goal, or for a map or a\n"
    "               level without goals a seeded random cell reachable from most\n"
    "               of the grid) and N random starts reachable in every mode;\n"
    "               stretch is distance walked / the octile grid optimum from\n"
    "               the start cell\n"
    "Defaults: 1000 units, seed 1, step 0.2, quad radius 0.25 (on maps and levels\n"
    "with a grid at most 0.45, as corridors may be one cell wide). --lookahead and\n"
    "--midpoint-costs set the quad field's options of those names (quadnav.h).\n"
    "One instance is built per distinct goal and mode. Per mode: mean instance\n"
    "build time (build_us), bytes per instance, sampling time per sample\n"
    "(sample_ns), arrived, units, wall contacts (moves that would leave\n"
    "traversable space), stuck units, stretch mean and 95th percentile, and\n"
    "exact stretch mean and 95th percentile: distance walked / the exact\n"
    "any-angle shortest length from start to goal (qn_path_find at radius 0 on\n"
    "the quads; only when every quad costs the same, else null). Also, for all\n"
    "modes, the clearance stretch (mean and p95): the length of qn_path_find's\n"
    "path at the quad radius, which keeps that clearance from walls and rounds\n"
    "corners on arcs, over the exact radius-0 length: about what a body of that\n"
    "radius walks (quad-mode units may pass a corner up to half the radius\n"
    "nearer, and then walk a little less). A markdown table, or with --json one\n"
    "object with keys quad, grid8, gridvec (and clearance_stretch_mean/_p95).\n"
    "  --per-unit   with --json, each mode also lists per_unit: one object per\n"
    "               unit {\"start\":[x,y],\"goal\":[x,y],\"walked\":L,\"arrived\":B}\n"
    "               in map coordinates (a cell's centre is x+0.5, y+0.5), in the\n"
    "               order of the units (scenario rows in file order)\n"
    "  --hier       a fourth mode, hier: the quads through a hierarchical instance\n"
    "               (qn_hier: one sector graph for the run, then a destination\n"
    "               per goal, qn_hfield); only on meshes whose quads all cost 1.\n"
    "               Its build_us is the destination's start; the sectors' local\n"
    "               fields are built by the first samples in them, so their time\n"
    "               is in its sample_ns, and bytes are the destination's once its\n"
    "               units have walked. The JSON also gets hier_graph_ms and\n"
    "               hier_graph_bytes (the sector graph, once per mesh)\n"
    "  --tiles      a mode tiles: the grid through grid tiles (qn_grid_tiles of\n"
    "               the default sector size, once per run; a qn_grid_tfield per\n"
    "               goal; vector flow), timed and counted as hier is; the JSON\n"
    "               also gets tiles_graph_ms and tiles_graph_bytes\n";

/* ---- arguments -------------------------------------------------------------- */

typedef struct cmp_args {
    const char *path, *scen, *goal;
    uint64_t units, seed;
    float radius, step;
    uint32_t lookahead; /* 0: the library default */
    bool json, midpoint, per_unit, hier, tiles;
} cmp_args;

enum {
    C_SCEN,
    C_UNITS,
    C_SEED,
    C_RADIUS,
    C_STEP,
    C_GOAL,
    C_LOOKAHEAD,
    C_MIDPOINT,
    C_PER_UNIT,
    C_HIER,
    C_TILES,
    C_JSON
};
static const qn_cli_option compare_options[] = {
    [C_SCEN] = {"scen", 0, true},           [C_UNITS] = {"units", 0, true},
    [C_SEED] = {"seed", 0, true},           [C_RADIUS] = {"radius", 0, true},
    [C_STEP] = {"step", 0, true},           [C_GOAL] = {"goal", 0, true},
    [C_LOOKAHEAD] = {"lookahead", 0, true}, [C_MIDPOINT] = {"midpoint-costs", 0, false},
    [C_PER_UNIT] = {"per-unit", 0, false},  [C_HIER] = {"hier", 0, false},
    [C_TILES] = {"tiles", 0, false},        [C_JSON] = {"json", 0, false},
};
static const qn_cli_spec compare_spec =
    QN_CLI_SPEC("compare", compare_usage, compare_options, 1, 1, "LEVEL|MAP");

/* Returns 0 to go on, 2 on a usage error (printed), -1 after --help. */
static int parse_args(int argc, char **argv, cmp_args *a) {
    memset(a, 0, sizeof *a);
    a->units = 1000;
    a->seed = 1;
    a->radius = QN_CLI_DEFAULT_RADIUS;
    a->step = 0.2f;
    qn_cli_args o;
    int rc = qn_cli_parse(&compare_spec, argc, argv, &o);
    if (rc) return rc;
    a->path = o.pos[0];
    a->scen = o.value[C_SCEN];
    a->goal = o.value[C_GOAL];
    a->json = o.value[C_JSON] != NULL;
    a->midpoint = o.value[C_MIDPOINT] != NULL;
    a->per_unit = o.value[C_PER_UNIT] != NULL;
    a->hier = o.value[C_HIER] != NULL;
    a->tiles = o.value[C_TILES] != NULL;
    if (a->per_unit && !a->json) return qn_cli_error("compare: --per-unit needs --json"), 2;
    const char *v;
    if ((v = o.value[C_UNITS]) && (!qn_cli_parse_u64(v, QN_CLI_MAX_UNITS, &a->units) || !a->units))
        return qn_cli_error("--units %s: not a count from 1 to %u", v, QN_CLI_MAX_UNITS), 2;
    if ((v = o.value[C_SEED]) && !qn_cli_parse_u64(v, UINT64_MAX, &a->seed))
        return qn_cli_error("--seed %s: not a whole number", v), 2;
    if ((v = o.value[C_RADIUS]) && !qn_cli_parse_float(v, 0.0f, 1e4f, &a->radius))
        return qn_cli_error("--radius %s: not a number in [0, 10000]", v), 2;
    if ((v = o.value[C_STEP]) && !qn_cli_parse_float(v, 1e-4f, 1e4f, &a->step))
        return qn_cli_error("--step %s: not a number in [0.0001, 10000]", v), 2;
    uint64_t la = 0;
    if ((v = o.value[C_LOOKAHEAD]) && (!qn_cli_parse_u64(v, QN_MAX_LOOKAHEAD, &la) || !la))
        return qn_cli_error("--lookahead %s: not a count from 1 to %u", v, QN_MAX_LOOKAHEAD), 2;
    a->lookahead = (uint32_t)la;
    return 0;
}

/* ---- units ----------------------------------------------------------------- */

typedef struct cmp_unit {
    qn_vec2 start, goal;
    double ref;   /* the length stretch is measured against */
    double exact; /* exact any-angle shortest length, NAN when unknown */
    double clear; /* qn_path_find's length at the agent radius (clearance kept), NAN when unknown */
    uint32_t order;
} cmp_unit;

/* Centre of cell (x, y) as a world point. */
static qn_vec2 cell_centre(const qn_grid *g, uint32_t x, uint32_t y) {
    return qn_sim_grid_point(g, x, y, 0.5, 0.5);
}

static bool scen_row_unit(const qn_grid *g, const qn_scen_row *r, uint32_t i, cmp_unit *u) {
    if (r->map_width != qn_grid_width(g) || r->map_height != qn_grid_height(g)) {
        qn_cli_error("scenario row %u is for a %ux%u map, the grid is %ux%u", i + 1, r->map_width,
                     r->map_height, qn_grid_width(g), qn_grid_height(g));
        return false;
    }
    if (qn_grid_cost(g, r->start_x, r->start_y) == QN_CELL_WALL ||
        qn_grid_cost(g, r->goal_x, r->goal_y) == QN_CELL_WALL) {
        qn_cli_error("scenario row %u: start (%u, %u) or goal (%u, %u) is a wall cell", i + 1,
                     r->start_x, r->start_y, r->goal_x, r->goal_y);
        return false;
    }
    u->start = cell_centre(g, r->start_x, r->start_y);
    u->goal = cell_centre(g, r->goal_x, r->goal_y);
    u->ref = r->optimal * (double)qn_grid_cell_size(g);
    return true;
}

/* Up to n rows spread evenly over the file (all buckets, short and long). */
static cmp_unit *scen_units(const char *path, const qn_grid *g, uint64_t n, uint32_t *count) {
    qn_scen *s = NULL;
    qn_error e;
    qn_cli_input in;
    if (qn_cli_read(path, &in)) return NULL;
    qn_status st = qn_scen_load_mem(in.data, in.len, NULL, &s, &e);
    qn_cli_input_free(&in);
    if (st != QN_OK) {
        if (e.line) qn_cli_error("%s:%u:%u: %s: %s", path, e.line, e.column, qn_status_name(st), e.message);
        else qn_cli_error("%s: scenario: %s: %s", path, qn_status_name(st), e.message);
        return NULL;
    }
    uint32_t rows = qn_scen_row_count(s), m = n < rows ? (uint32_t)n : rows;
    cmp_unit *u = m ? calloc(m, sizeof *u) : NULL;
    if (!u) qn_cli_error("%s: %s", path, m ? "out of memory" : "no scenario rows");
    for (uint32_t i = 0; u && i < m; i++) {
        uint32_t r = (uint32_t)((uint64_t)i * rows / m);
        if (!scen_row_unit(g, qn_scen_row_at(s, r), r, &u[i])) free(u), u = NULL;
    }
    qn_scen_destroy(s);
    *count = u ? m : 0;
    return u;
}

/* Reachable cells of an integration-only field at cell `goal`. */
static uint32_t reach_count(const qn_grid *g, uint32_t goal) {
    qn_grid_field_opts o = {0};
    o.no_flow = true;
    qn_grid_field *f = NULL;
    if (qn_grid_field_create(g, &goal, 1, &o, NULL, &f, NULL) != QN_OK) return 0;
    uint32_t n = 0, w = qn_grid_width(g), h = qn_grid_height(g);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            n += isfinite(qn_grid_field_cost(f, x, y));
    qn_grid_field_destroy(f);
    return n;
}

/* A seeded random passable cell from which at least half the passable cells
** are reachable (the best of 16 draws otherwise), as the goal for a map. */
static bool map_goal(const qn_grid *g, uint64_t seed, qn_vec2 *goal) {
    uint32_t w = qn_grid_width(g), cells = w * qn_grid_height(g), open = 0, best = 0;
    for (uint32_t i = 0; i < cells; i++)
        open += qn_grid_costs(g)[i] != QN_CELL_WALL;
    if (open == 0) return qn_cli_error("the map has no passable cell"), false;
    uint64_t rng = seed ^ 0x60a1ull;
    for (int tries = 0; tries < 16 && 2 * (uint64_t)best < open; tries++) {
        uint32_t c;
        do
            c = (uint32_t)(qn_rand_unit(&rng) * cells);
        while (c >= cells || qn_grid_costs(g)[c] == QN_CELL_WALL);
        uint32_t n = reach_count(g, c);
        if (n <= best) continue;
        best = n;
        *goal = cell_centre(g, c % w, c / w);
    }
    return true;
}

/* The goal of a run without a scenario: --goal, else the level's first goal,
** else (a map, or a level without goals) a chosen cell. */
static int pick_goal(const qn_terrain *t, const cmp_args *a, qn_vec2 *goal) {
    if (a->goal || (t->level && qn_level_goal_count(t->level) > 0))
        return qn_cli_goal(t->level, a->goal, goal);
    return map_goal(t->grid, a->seed, goal) ? 0 : 1;
}

/* ---- instances ---------------------------------------------------------------- */

/* MODE_HIER runs only with --hier, MODE_TILES only with --tiles. */
enum { MODE_QUAD, MODE_GRID8, MODE_GRIDVEC, MODE_HIER, MODE_TILES, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = {"quad", "grid8", "gridvec", "hier", "tiles"};

/* The terrain and what every instance of the run shares: the hier (the
** sector graph) and the grid tiles, built once when asked for. */
typedef struct cmp_world {
    const qn_terrain *t;
    qn_hier *hier;
    qn_grid_tiles *tiles;
    double hier_ms, tiles_ms;
    bool on[MODE_COUNT]; /* the modes this run runs */
} cmp_world;

/* How many modes the run runs. */
static uint32_t mode_count(const cmp_world *cw) {
    uint32_t n = 0;
    for (int m = 0; m < MODE_COUNT; m++)
        n += cw->on[m];
    return n;
}

/* One built instance and the world over it. */
typedef struct instance {
    qn_field *quad;
    qn_grid_field *grid;
    qn_hfield *hfield;
    qn_grid_tfield *tfield;
    qn_sim_world w;
    qn_sim_quad_ctx qctx;
    qn_sim_hier_ctx hctx;
    qn_sim_tiles_ctx tctx;
    qn_sim_grid_ctx *gctx; /* large; allocated once by the caller */
} instance;

static void instance_free(instance *in) {
    qn_field_destroy(in->quad);
    qn_grid_field_destroy(in->grid);
    qn_hfield_destroy(in->hfield);
    qn_grid_tfield_destroy(in->tfield);
    in->quad = NULL;
    in->grid = NULL;
    in->hfield = NULL;
    in->tfield = NULL;
}

/* Builds mode's instance at goal; *seconds gets the build time alone. */
static bool instance_build(int mode, const cmp_world *cw, qn_vec2 goal, const qn_field_opts *qo,
                           instance *in, double *seconds) {
    const qn_terrain *t = cw->t;
    qn_error e;
    qn_status st;
    if (mode == MODE_HIER) {
        double t0 = qn_tool_now();
        st = qn_hfield_create(cw->hier, goal, qo->radius, NULL, &in->hfield, &e);
        *seconds = qn_tool_now() - t0;
        if (st == QN_OK) qn_sim_world_hier(&in->w, &in->hctx, in->hfield, t->mesh, goal);
    } else if (mode == MODE_TILES) {
        uint32_t x = 0, y = 0;
        if (qn_grid_locate(t->grid, goal, &x, &y) != QN_OK) {
            qn_cli_error("goal %g,%g is outside the level's grid", (double)goal.x, (double)goal.y);
            return false;
        }
        double t0 = qn_tool_now();
        st = qn_grid_tfield_create(cw->tiles, y * qn_grid_width(t->grid) + x, NULL, NULL,
                                   &in->tfield, &e);
        *seconds = qn_tool_now() - t0;
        if (st == QN_OK) qn_sim_world_tiles(&in->w, &in->tctx, in->tfield, t->grid, goal);
    } else if (mode == MODE_QUAD) {
        qn_field_opts fo = *qo;
        double t0 = qn_tool_now();
        st = qn_field_create(t->mesh, &goal, 1, &fo, NULL, &in->quad, &e);
        *seconds = qn_tool_now() - t0;
        if (st == QN_OK) qn_sim_world_quad(&in->w, &in->qctx, in->quad, goal);
    } else {
        uint32_t x, y, cell;
        if (qn_grid_locate(t->grid, goal, &x, &y) != QN_OK) {
            qn_cli_error("goal %g,%g is outside the level's grid", (double)goal.x, (double)goal.y);
            return false;
        }
        cell = y * qn_grid_width(t->grid) + x;
        double t0 = qn_tool_now();
        st = qn_grid_field_create(t->grid, &cell, 1, NULL, NULL, &in->grid, &e);
        *seconds = qn_tool_now() - t0;
        qn_flow_kind k = mode == MODE_GRID8 ? QN_FLOW_DIR8 : QN_FLOW_VECTOR;
        if (st == QN_OK) qn_sim_world_grid(&in->w, in->gctx, in->grid, k, goal);
    }
    if (st != QN_OK)
        qn_cli_error("goal %g,%g: %s mode: %s: %s", (double)goal.x, (double)goal.y,
                     mode_names[mode], qn_status_name(st), e.message);
    return st == QN_OK;
}

static size_t instance_bytes(const instance *in) {
    if (in->hfield) return qn_hfield_bytes(in->hfield);
    if (in->tfield) return qn_grid_tfield_bytes(in->tfield);
    return in->quad ? qn_field_bytes(in->quad) : qn_grid_field_bytes(in->grid);
}

/* ---- random starts ------------------------------------------------------------- */

/* n starts drawn uniformly over the reachable grid cells (seeded), kept when
** quad mode reaches them as well; the reference is the start cell's octile
** optimum. */
static cmp_unit *random_units(const cmp_world *cw, qn_vec2 goal, const qn_field_opts *qo,
                              const cmp_args *a, qn_sim_grid_ctx *gctx) {
    instance q = {0}, g = {0};
    g.gctx = gctx;
    double s;
    cmp_unit *u = calloc((size_t)a->units, sizeof *u);
    if (!u || !instance_build(MODE_QUAD, cw, goal, qo, &q, &s) ||
        !instance_build(MODE_GRID8, cw, goal, qo, &g, &s)) {
        if (!u) qn_cli_error("out of memory for %llu units", (unsigned long long)a->units);
        return instance_free(&q), instance_free(&g), free(u), NULL;
    }
    uint64_t rng = a->seed, tries = 0, n = 0;
    for (; n < a->units && tries < 100 * a->units + 1000; tries++) {
        double u1 = qn_rand_unit(&rng), u2 = qn_rand_unit(&rng), u3 = qn_rand_unit(&rng);
        qn_vec2 p;
        if (!g.w.random_start(g.w.ctx, u1, u2, u3, &p)) break;
        if (!isfinite(qn_field_cost_at(q.quad, p, QN_NONE))) continue;
        u[n].start = p;
        u[n].goal = goal;
        u[n].ref = g.w.reference(g.w.ctx, p);
        n++;
    }
    instance_free(&q);
    instance_free(&g);
    if (n < a->units) {
        qn_cli_error("goal %g,%g: found only %llu starts reachable in every mode", (double)goal.x,
                     (double)goal.y, (unsigned long long)n);
        return free(u), NULL;
    }
    return u;
}

/* ---- the runs ---------------------------------------------------------------------- */

/* One unit's walk in one mode. */
typedef struct unit_rec {
    double walked;
    bool arrived;
} unit_rec;

/* What one mode gathered over all its instances and units. */
typedef struct mode_acc {
    double build_s, bytes, sample_s;
    uint32_t builds, units, arrived, stuck;
    uint64_t samples, contacts;
    double *stretch; /* one per arrived unit */
    unit_rec *rec;   /* one per unit, by its order */
} mode_acc;

/* A world whose reference is fixed: the unit's scenario or grid optimum, the
** same in every mode, rather than each mode's own cost at the start. */
typedef struct fixed_ref {
    const qn_sim_world *base;
    double ref;
} fixed_ref;

static qn_status fr_sample(void *c, qn_vec2 p, uint32_t *hint, qn_vec2 *dir) {
    const qn_sim_world *b = ((const fixed_ref *)c)->base;
    return b->sample(b->ctx, p, hint, dir);
}

static qn_status fr_sample_ahead(void *c, qn_vec2 p, uint32_t *hint, qn_vec2 *dir, float *ahead) {
    const qn_sim_world *b = ((const fixed_ref *)c)->base;
    return b->sample_ahead(b->ctx, p, hint, dir, ahead);
}

static bool fr_move_ok(void *c, qn_vec2 a, qn_vec2 b, uint32_t hint, qn_vec2 *hit) {
    const qn_sim_world *w = ((const fixed_ref *)c)->base;
    return w->move_ok(w->ctx, a, b, hint, hit);
}

static double fr_reference(void *c, qn_vec2 p) {
    (void)p;
    return ((const fixed_ref *)c)->ref;
}

static bool fr_random_start(void *c, double u1, double u2, double u3, qn_vec2 *p) {
    const qn_sim_world *w = ((const fixed_ref *)c)->base;
    return w->random_start(w->ctx, u1, u2, u3, p);
}

static bool fr_way_out(void *c, qn_vec2 p, qn_vec2 *target) {
    const qn_sim_world *w = ((const fixed_ref *)c)->base;
    return w->way_out(w->ctx, p, target);
}

/* The base world seen through a fixed reference: every callback forwarded. */
static qn_sim_world fixed_world(fixed_ref *fr) {
    qn_sim_world w;
    memset(&w, 0, sizeof w);
    w.ctx = fr;
    w.sample = fr_sample;
    w.sample_ahead = fr->base->sample_ahead ? fr_sample_ahead : NULL;
    w.move_ok = fr_move_ok;
    w.reference = fr_reference;
    w.random_start = fr_random_start;
    w.way_out = fr->base->way_out ? fr_way_out : NULL;
    w.goal = fr->base->goal;
    return w;
}

/* Units do not interact in the harness, so one run per unit is the same
** simulation, and it yields each unit's own stretch (the harness reports
** only the aggregate of a run). */
static bool run_unit(const instance *in, const cmp_unit *u, float step, mode_acc *m) {
    fixed_ref fr = {&in->w, u->ref};
    qn_sim_world w = fixed_world(&fr);
    qn_sim_opts o = {0};
    o.units = 1;
    o.starts = &u->start;
    o.start_count = 1;
    o.step = step;
    qn_sim_result r;
    if (qn_sim_run(&w, &o, &r) != QN_OK) return qn_cli_error("simulation: out of memory"), false;
    m->units++;
    m->stuck += r.stuck;
    m->contacts += r.wall_contacts;
    m->samples += r.samples;
    m->sample_s += r.sample_seconds;
    m->rec[u->order].walked = r.walked;
    m->rec[u->order].arrived = r.arrived != 0;
    if (r.arrived) m->stretch[m->arrived++] = r.stretch_mean;
    return true;
}

/* Runs done so far, for the progress line. */
typedef struct progress {
    qn_cli_progress_state st;
    uint64_t done, total;
} progress;

/* Units [0, n) share one goal: one instance per mode, then every unit. */
static bool run_group(const cmp_world *cw, const cmp_unit *u, uint32_t n, const qn_field_opts *qo,
                      float step, qn_sim_grid_ctx *gctx, mode_acc *acc, progress *pg) {
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        if (!cw->on[mode]) continue;
        instance in = {0};
        in.gctx = gctx;
        double s;
        if (!instance_build(mode, cw, u[0].goal, qo, &in, &s)) return false;
        acc[mode].build_s += s;
        acc[mode].builds++;
        bool ok = true;
        for (uint32_t i = 0; ok && i < n; i++) {
            ok = run_unit(&in, &u[i], step, &acc[mode]);
            qn_cli_progress(&pg->st, "compare: unit runs", ++pg->done, pg->total);
        }
        /* after the walk: a hierarchical destination's bytes grow as its
        ** units sample (the others' do not change) */
        acc[mode].bytes += (double)instance_bytes(&in);
        instance_free(&in);
        if (!ok) return false;
    }
    return true;
}

static int cmp_goal(const void *x, const void *y) {
    const cmp_unit *a = x, *b = y;
    if (a->goal.x != b->goal.x) return a->goal.x < b->goal.x ? -1 : 1;
    if (a->goal.y != b->goal.y) return a->goal.y < b->goal.y ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

static int cmp_order(const void *x, const void *y) {
    const cmp_unit *a = x, *b = y;
    return (a->order > b->order) - (a->order < b->order);
}

static bool same_goal(const cmp_unit *a, const cmp_unit *b) {
    return a->goal.x == b->goal.x && a->goal.y == b->goal.y;
}

/* Runs every unit in every mode, grouped by goal; *goals gets their number.
** The units are left in their input order. */
static bool run_all(const cmp_world *cw, cmp_unit *u, uint32_t n, const qn_field_opts *qo,
                    float step, mode_acc *acc, uint32_t *goals) {
    qn_sim_grid_ctx *gctx = calloc(1, sizeof *gctx);
    bool ok = gctx != NULL;
    for (int m = 0; ok && m < MODE_COUNT; m++)
        ok = !cw->on[m] || ((acc[m].stretch = calloc(n, sizeof(double))) &&
                            (acc[m].rec = calloc(n, sizeof(unit_rec))));
    if (!ok) qn_cli_error("out of memory for %u units", n);
    for (uint32_t i = 0; i < n; i++)
        u[i].order = i;
    qsort(u, n, sizeof *u, cmp_goal);
    *goals = 0;
    progress pg = {{0}, 0, (uint64_t)n * mode_count(cw)};
    for (uint32_t i = 0, j; ok && i < n; i = j) {
        for (j = i + 1; j < n && same_goal(&u[i], &u[j]); j++) {
        }
        ok = run_group(cw, u + i, j - i, qo, step, gctx, acc, &pg);
        ++*goals;
    }
    qn_cli_progress_end(&pg.st);
    qsort(u, n, sizeof *u, cmp_order);
    free(gctx);
    return ok;
}

/* ---- exact lengths, exact stretch, per-unit records ----------------------------------- */

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : (a > b);
}

/* Does every quad cost the same? qn_path_find is exact any-angle only then. */
static bool uniform_costs(const qn_mesh *m) {
    uint32_t n = qn_mesh_quad_count(m);
    for (uint32_t q = 1; q < n; q++)
        if (qn_mesh_quad_cost(m, q) != qn_mesh_quad_cost(m, 0)) return false;
    return n > 0;
}

/* The length of qn_path_find's path a -> b at radius r: at radius 0 the
** exact any-angle shortest length; NAN when there is no path. *buf
** (capacity *cap) grows as needed; false when out of memory. */
static bool path_length(qn_pathfinder *pf, qn_vec2 a, qn_vec2 b, float r, qn_vec2 **buf,
                        uint32_t *cap, double *len) {
    uint32_t n = 0;
    qn_status st = qn_path_find(pf, a, b, r, *buf, *cap, &n, NULL);
    if (st == QN_E_BUFFER_TOO_SMALL) {
        qn_vec2 *p = realloc(*buf, (size_t)n * sizeof *p);
        if (!p) return false;
        *buf = p;
        *cap = n;
        st = qn_path_find(pf, a, b, r, *buf, *cap, &n, NULL);
    }
    if (st == QN_E_NOMEM) return false;
    *len = st == QN_OK ? qn_path_length(*buf, n) : (double)NAN;
    return true;
}

/* Sets every unit's exact length and its length at radius r (all NAN on a
** mesh of mixed costs). */
static bool exact_lengths(const qn_mesh *m, cmp_unit *u, uint32_t n, float r) {
    for (uint32_t i = 0; i < n; i++)
        u[i].exact = u[i].clear = (double)NAN;
    if (!uniform_costs(m)) return true;
    qn_pathfinder *pf = NULL;
    qn_error e;
    qn_status st = qn_pathfinder_create(m, NULL, &pf, &e);
    if (st != QN_OK) return qn_cli_error("pathfinder: %s: %s", qn_status_name(st), e.message), false;
    qn_vec2 *buf = NULL;
    uint32_t cap = 0;
    bool ok = true;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = path_length(pf, u[i].start, u[i].goal, 0.0f, &buf, &cap, &u[i].exact) &&
             path_length(pf, u[i].start, u[i].goal, r, &buf, &cap, &u[i].clear);
    if (!ok) qn_cli_error("exact lengths: out of memory");
    free(buf);
    qn_pathfinder_destroy(pf);
    return ok;
}

typedef struct exact_stats {
    double mean, p95; /* NAN when no arrived unit has an exact length */
} exact_stats;

/* Mean and 95th percentile of v[0..k) (sum: their sum); NAN for k = 0.
** Sorts v. */
static exact_stats mean_p95(double *v, uint32_t k, double sum) {
    exact_stats s = {(double)NAN, (double)NAN};
    if (k == 0) return s;
    qsort(v, k, sizeof *v, cmp_double);
    uint32_t p = (uint32_t)ceil(0.95 * k);
    s.mean = sum / k;
    s.p95 = v[p > 0 ? p - 1 : 0];
    return s;
}

/* Walked / exact length over the mode's arrived units with a known exact
** length (1 for a unit starting on its goal), as summarise() does stretch. */
static exact_stats exact_stretch(const mode_acc *m, const cmp_unit *u, uint32_t n) {
    exact_stats s = {(double)NAN, (double)NAN};
    double *v = calloc(n ? n : 1, sizeof *v), sum = 0.0;
    uint32_t k = 0;
    for (uint32_t i = 0; v && i < n; i++) {
        if (!m->rec[i].arrived || !(u[i].exact >= 0.0)) continue;
        v[k] = u[i].exact > 0.0 ? m->rec[i].walked / u[i].exact : 1.0;
        sum += v[k++];
    }
    s = mean_p95(v, k, sum);
    free(v);
    return s;
}

/* The stretch a body of the agent's radius cannot avoid: qn_path_find's
** path at that radius (it keeps the clearance, round corners on arcs) over
** the exact radius-0 length, over every unit with both lengths. */
static exact_stats clearance_stretch(const cmp_unit *u, uint32_t n) {
    exact_stats s = {(double)NAN, (double)NAN};
    double *v = calloc(n ? n : 1, sizeof *v), sum = 0.0;
    uint32_t k = 0;
    for (uint32_t i = 0; v && i < n; i++) {
        if (!(u[i].exact >= 0.0) || !(u[i].clear >= 0.0)) continue;
        v[k] = u[i].exact > 0.0 ? u[i].clear / u[i].exact : 1.0;
        sum += v[k++];
    }
    s = mean_p95(v, k, sum);
    free(v);
    return s;
}

/* ---- output -------------------------------------------------------------------------- */

typedef struct mode_summary {
    double build_us, bytes, sample_ns, stretch_mean, stretch_p95;
} mode_summary;

/* Mean and 95th percentile as the harness computes them (NAN with no arrival). */
static mode_summary summarise(mode_acc *m) {
    mode_summary s = {0};
    s.build_us = m->builds ? m->build_s * 1e6 / m->builds : (double)NAN;
    s.bytes = m->builds ? m->bytes / m->builds : (double)NAN;
    s.sample_ns = m->samples ? m->sample_s * 1e9 / (double)m->samples : (double)NAN;
    s.stretch_mean = s.stretch_p95 = (double)NAN;
    if (m->arrived == 0) return s;
    double sum = 0.0;
    for (uint32_t i = 0; i < m->arrived; i++)
        sum += m->stretch[i];
    s.stretch_mean = sum / m->arrived;
    qsort(m->stretch, m->arrived, sizeof(double), cmp_double);
    uint32_t k = (uint32_t)ceil(0.95 * m->arrived);
    s.stretch_p95 = m->stretch[k > 0 ? k - 1 : 0];
    return s;
}

typedef struct run_info {
    const cmp_args *a;
    const cmp_world *cw; /* its terrain, cw->t */
    uint32_t units, goals;
    float radius;
    const cmp_unit *u; /* in input order */
} run_info;

/* per_unit: [{"start":[x,y],"goal":[x,y],"walked":L,"arrived":B},...] */
static cJSON *json_per_unit(const mode_acc *m, const cmp_unit *u, uint32_t n) {
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        qn_json_put_vec(e, "start", u[i].start);
        qn_json_put_vec(e, "goal", u[i].goal);
        qn_json_put_num(e, "walked", m->rec[i].walked);
        qn_json_put_bool(e, "arrived", m->rec[i].arrived);
        qn_json_push(arr, e);
    }
    return arr;
}

static cJSON *json_mode(const run_info *ri, const mode_acc *m, const mode_summary *s) {
    cJSON *o = cJSON_CreateObject();
    qn_json_put_num(o, "build_us", s->build_us);
    qn_json_put_num(o, "bytes", round(s->bytes));
    qn_json_put_num(o, "sample_ns", s->sample_ns);
    qn_json_put_uint(o, "arrived", m->arrived);
    qn_json_put_uint(o, "units", m->units);
    qn_json_put_uint(o, "wall_contacts", m->contacts);
    qn_json_put_uint(o, "stuck", m->stuck);
    qn_json_put_num(o, "stretch_mean", s->stretch_mean);
    qn_json_put_num(o, "stretch_p95", s->stretch_p95);
    exact_stats x = exact_stretch(m, ri->u, ri->units);
    qn_json_put_num(o, "exact_stretch_mean", x.mean);
    qn_json_put_num(o, "exact_stretch_p95", x.p95);
    if (ri->a->per_unit) qn_json_put(o, "per_unit", json_per_unit(m, ri->u, ri->units));
    return o;
}

static int print_json(const run_info *ri, mode_acc *acc) {
    const qn_grid *g = ri->cw->t->grid;
    cJSON *o = cJSON_CreateObject();
    qn_json_put_str(o, "level", ri->a->path);
    qn_json_put_str(o, "scen", ri->a->scen);
    qn_json_put_uint(o, "units", ri->units);
    qn_json_put_uint(o, "goals", ri->goals);
    qn_json_put_uint(o, "seed", ri->a->seed);
    qn_json_put_float(o, "radius", ri->radius);
    qn_json_put_float(o, "step", ri->a->step);
    qn_json_put_uint(o, "quads", qn_mesh_quad_count(ri->cw->t->mesh));
    cJSON *size = cJSON_CreateArray();
    qn_json_push(size, qn_json_uint(qn_grid_width(g)));
    qn_json_push(size, qn_json_uint(qn_grid_height(g)));
    qn_json_put(o, "grid", size);
    qn_json_put_float(o, "cell_size", qn_grid_cell_size(g));
    exact_stats c = clearance_stretch(ri->u, ri->units);
    qn_json_put_num(o, "clearance_stretch_mean", c.mean);
    qn_json_put_num(o, "clearance_stretch_p95", c.p95);
    for (int m = 0; m < MODE_COUNT; m++) {
        if (!ri->cw->on[m]) continue;
        mode_summary s = summarise(&acc[m]);
        qn_json_put(o, mode_names[m], json_mode(ri, &acc[m], &s));
    }
    if (ri->cw->tiles) {
        qn_json_put_num(o, "tiles_graph_ms", ri->cw->tiles_ms);
        qn_json_put_num(o, "tiles_graph_bytes", (double)qn_grid_tiles_bytes(ri->cw->tiles));
    }
    if (ri->cw->hier) {
        qn_json_put_num(o, "hier_graph_ms", ri->cw->hier_ms);
        qn_json_put_num(o, "hier_graph_bytes", (double)qn_hier_bytes(ri->cw->hier));
    }
    return qn_json_emit(o);
}

static void print_table(const run_info *ri, mode_acc *acc) {
    const qn_grid *g = ri->cw->t->grid;
    printf("compare %s: %u units, %u goal%s, %s; %u quads, %ux%u grid; quad radius %g, "
           "step %g\n\n",
           ri->a->path, ri->units, ri->goals, ri->goals == 1 ? "" : "s",
           ri->a->scen ? "scenario rows" : "random starts", qn_mesh_quad_count(ri->cw->t->mesh),
           qn_grid_width(g), qn_grid_height(g), (double)ri->radius, (double)ri->a->step);
    printf("| mode | build_us | bytes | sample_ns | arrived | units | wall_contacts | stuck | "
           "stretch_mean | stretch_p95 | exact_stretch_mean | exact_stretch_p95 |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int m = 0; m < MODE_COUNT; m++) {
        if (!ri->cw->on[m]) continue;
        mode_summary s = summarise(&acc[m]);
        exact_stats x = exact_stretch(&acc[m], ri->u, ri->units);
        printf("| %s | %.1f | %.0f | %.1f | %u | %u | %llu | %u | %.4f | %.4f | %.4f | %.4f |\n",
               mode_names[m], s.build_us, s.bytes, s.sample_ns, acc[m].arrived, acc[m].units,
               (unsigned long long)acc[m].contacts, acc[m].stuck, s.stretch_mean, s.stretch_p95,
               x.mean, x.p95);
    }
    if (ri->cw->hier)
        printf("\nhier: sector graph built in %.1f ms, %.0f bytes (once per mesh)\n",
               ri->cw->hier_ms, (double)qn_hier_bytes(ri->cw->hier));
    if (ri->cw->tiles)
        printf("\ntiles: built in %.1f ms, %.0f bytes (once per grid)\n", ri->cw->tiles_ms,
               (double)qn_grid_tiles_bytes(ri->cw->tiles));
    exact_stats c = clearance_stretch(ri->u, ri->units);
    printf("\nclearance stretch (qn_path_find at radius %g / exact at radius 0): mean %.4f, "
           "p95 %.4f\n", (double)ri->radius, c.mean, c.p95);
}

/* ---- the command ------------------------------------------------------------------------ */

/* The units to run; NULL after reporting, *rc 2 for a usage error. */
static cmp_unit *make_units(const cmp_args *a, const cmp_world *cw, const qn_field_opts *qo,
                            uint32_t *n, int *rc) {
    const qn_terrain *t = cw->t;
    if (a->scen) return scen_units(a->scen, t->grid, a->units, n);
    qn_vec2 goal;
    if ((*rc = pick_goal(t, a, &goal))) return NULL;
    qn_sim_grid_ctx *gctx = calloc(1, sizeof *gctx);
    cmp_unit *u = gctx ? random_units(cw, goal, qo, a, gctx) : NULL;
    if (!gctx) qn_cli_error("out of memory");
    free(gctx);
    *n = u ? (uint32_t)a->units : 0;
    return u;
}

int qn_tool_compare(int argc, char **argv) {
    cmp_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    qn_terrain t;
    mode_acc acc[MODE_COUNT] = {{0}};
    cmp_world cw = {&t, NULL, NULL, 0.0, 0.0, {true, true, true, a.hier, a.tiles}};
    run_info ri = {&a, &cw, 0, 0, 0.0f, NULL};
    qn_field_opts qo = {0};
    cmp_unit *u = NULL;
    rc = 1;
    bool loaded = qn_terrain_load(a.path, true, true, &t);
    if (loaded && a.hier) {
        qn_error e;
        double t0 = qn_tool_now();
        qn_status st = qn_hier_create(t.mesh, NULL, NULL, &cw.hier, &e);
        cw.hier_ms = (qn_tool_now() - t0) * 1e3;
        if (st != QN_OK) {
            qn_cli_error("compare --hier: %s: %s", qn_status_name(st), e.message);
            loaded = false;
        }
    }
    if (loaded && a.tiles) {
        qn_error e;
        double t0 = qn_tool_now();
        qn_status st = qn_grid_tiles_create(t.grid, 0, NULL, &cw.tiles, &e);
        cw.tiles_ms = (qn_tool_now() - t0) * 1e3;
        if (st != QN_OK) {
            qn_cli_error("compare --tiles: %s: %s", qn_status_name(st), e.message);
            loaded = false;
        }
    }
    if (loaded) {
        ri.radius = qn_terrain_radius(&t, a.radius);
        qo.radius = ri.radius;
        qo.lookahead = a.lookahead;
        qo.midpoint_costs = a.midpoint;
        u = make_units(&a, &cw, &qo, &ri.units, &rc);
        if (rc != 2) rc = 1;
    }
    ri.u = u;
    if (u && run_all(&cw, u, ri.units, &qo, a.step, acc, &ri.goals) &&
        exact_lengths(t.mesh, u, ri.units, ri.radius)) {
        rc = 0;
        if (a.json) rc = print_json(&ri, acc);
        else print_table(&ri, acc);
    }
    for (int m = 0; m < MODE_COUNT; m++)
        free(acc[m].stretch), free(acc[m].rec);
    free(u);
    qn_hier_destroy(cw.hier);
    qn_grid_tiles_destroy(cw.tiles);
    qn_terrain_free(&t);
    return rc;
}
