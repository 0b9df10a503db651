/*
** quadnav.c: the command-line tool. Each subcommand has a table of the
** options it takes (qn_cli_parse); exit status 0 on success, 1 on failure
** (one line on stderr: a file that cannot be read, parsed or written, a
** goal outside the level, ...), 2 on bad usage (an unknown option, a
** missing or extra argument, a value of the wrong form).
** With --json a command prints exactly one JSON object on stdout.
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "sim.h"
#include "tool.h"

/* ---- option tables ------------------------------------------------------ */

/* Rows shared by several commands' tables. */
#define OPT_JSON {"json", 0, false}
#define OPT_GOAL {"goal", 0, true}
#define OPT_RADIUS {"radius", 0, true}

/* ---- info -------------------------------------------------------------- */

static const char info_usage[] =
    "usage: quadnav info LEVEL|MAP [--json]\n"
    "Loads and validates a level (or a MovingAI map, seen as its rectangle\n"
    "decomposition); prints counts, bounds, portals and islands, and checks that\n"
    "every goal and spawn point lies in an open quad. Exit status 1 when the\n"
    "level is invalid (the error names the element; with --json, one object with\n"
    "valid false, status, path, line, column and message).\n";

enum { INFO_JSON };
static const qn_cli_option info_options[] = {[INFO_JSON] = OPT_JSON};
static const qn_cli_spec info_spec =
    QN_CLI_SPEC("info", info_usage, info_options, 1, 1, "LEVEL|MAP");

typedef struct level_stats {
    uint32_t quads, portals, islands, blocked, goals, spawns;
    double area;
    qn_rect bounds;
} level_stats;

static level_stats stats_of(const qn_terrain *t) {
    const qn_mesh *m = t->mesh;
    level_stats s = {0};
    s.quads = qn_mesh_quad_count(m);
    s.portals = qn_mesh_portal_count(m);
    s.islands = qn_mesh_island_count(m);
    s.goals = t->level ? qn_level_goal_count(t->level) : 0;
    s.spawns = t->level ? qn_level_spawn_count(t->level) : 0;
    s.bounds = qn_mesh_bounds(m);
    for (uint32_t q = 0; q < s.quads; q++) {
        if (qn_mesh_quad_blocked(m, q)) s.blocked++;
        else s.area += (double)qn_mesh_quad_area(m, q);
    }
    return s;
}

/* Does point p (goals[i] or spawns[i]) lie in an open quad? Fills e when not. */
static bool point_open(const qn_mesh *m, const char *list, uint32_t i, const char *name,
                       qn_vec2 p, qn_error *e) {
    uint32_t q;
    memset(e, 0, sizeof *e);
    snprintf(e->path, sizeof e->path, "%s[%u]", list, i);
    e->index = i;
    if (qn_mesh_locate(m, p, QN_NONE, &q) != QN_OK) e->code = QN_E_OUTSIDE;
    else if (qn_mesh_quad_blocked(m, q)) e->code = QN_E_BLOCKED;
    else return true;
    if (e->code == QN_E_OUTSIDE)
        snprintf(e->message, sizeof e->message, "%s: \"%s\" at %g,%g lies outside every quad",
                 e->path, name, (double)p.x, (double)p.y);
    else
        snprintf(e->message, sizeof e->message, "%s: \"%s\" at %g,%g lies in blocked quad %u",
                 e->path, name, (double)p.x, (double)p.y, q);
    return false;
}

/* Every goal and spawn of the level in an open quad? Fills e when not. */
static bool points_open(const qn_level *level, qn_error *e) {
    const qn_mesh *m = qn_level_mesh(level);
    const char *name;
    qn_vec2 p;
    for (uint32_t i = 0; i < qn_level_goal_count(level); i++)
        if (qn_level_goal(level, i, &name, &p) == QN_OK && !point_open(m, "goals", i, name, p, e))
            return false;
    for (uint32_t i = 0; i < qn_level_spawn_count(level); i++)
        if (qn_level_spawn(level, i, &name, &p) == QN_OK && !point_open(m, "spawns", i, name, p, e))
            return false;
    return true;
}

static int info_invalid_json(const char *path, const qn_error *e) {
    cJSON *o = cJSON_CreateObject();
    qn_json_put_str(o, "level", path);
    qn_json_put_bool(o, "valid", false);
    qn_json_put_str(o, "status", qn_status_name(e->code));
    qn_json_put_str(o, "path", e->path);
    qn_json_put_uint(o, "line", e->line);
    qn_json_put_uint(o, "column", e->column);
    qn_json_put_str(o, "message", e->message);
    qn_json_emit(o);
    return 1;
}

static int info_json(const char *path, const qn_terrain *t) {
    level_stats s = stats_of(t);
    cJSON *o = cJSON_CreateObject();
    qn_json_put_str(o, "level", path);
    qn_json_put_str(o, "kind", t->is_map ? "map" : "level");
    qn_json_put_str(o, "name", t->level ? qn_level_name(t->level) : "");
    qn_json_put_bool(o, "valid", true);
    qn_json_put_uint(o, "quads", s.quads);
    qn_json_put_uint(o, "portals", s.portals);
    qn_json_put_uint(o, "islands", s.islands);
    qn_json_put_uint(o, "blocked", s.blocked);
    qn_json_put_uint(o, "goals", s.goals);
    qn_json_put_uint(o, "spawns", s.spawns);
    qn_json_put_num(o, "area", s.area);
    cJSON *b = cJSON_CreateArray();
    qn_json_push(b, qn_json_float(s.bounds.min.x));
    qn_json_push(b, qn_json_float(s.bounds.min.y));
    qn_json_push(b, qn_json_float(s.bounds.max.x));
    qn_json_push(b, qn_json_float(s.bounds.max.y));
    qn_json_put(o, "bounds", b);
    qn_json_put_uint(o, "mesh_bytes", qn_mesh_bytes(t->mesh));
    qn_json_put_num(o, "peak_rss_mb", qn_tool_peak_rss_mb()); /* null where unknown */
    if (t->grid) {
        cJSON *g = cJSON_CreateArray();
        qn_json_push(g, qn_json_uint(qn_grid_width(t->grid)));
        qn_json_push(g, qn_json_uint(qn_grid_height(t->grid)));
        qn_json_put(o, "grid", g);
    }
    return qn_json_emit(o);
}

static void info_text_points(const qn_level *level, bool spawns) {
    uint32_t n = spawns ? qn_level_spawn_count(level) : qn_level_goal_count(level);
    for (uint32_t i = 0; i < n; i++) {
        const char *name;
        qn_vec2 at;
        if (spawns) qn_level_spawn(level, i, &name, &at);
        else qn_level_goal(level, i, &name, &at);
        printf("  %-12s %g,%g\n", name, (double)at.x, (double)at.y);
    }
}

static int info_text(const char *path, const qn_terrain *t) {
    level_stats s = stats_of(t);
    printf("level    %s (%s)\n", path,
           t->is_map ? "MovingAI map, rectangle decomposition" : qn_level_name(t->level));
    printf("valid    yes\n");
    printf("quads    %u (%u blocked)\n", s.quads, s.blocked);
    printf("portals  %u\n", s.portals);
    printf("islands  %u\n", s.islands);
    printf("area     %.2f (open quads)\n", s.area);
    printf("bounds   [%g, %g] - [%g, %g]\n", (double)s.bounds.min.x, (double)s.bounds.min.y,
           (double)s.bounds.max.x, (double)s.bounds.max.y);
    printf("goals    %u\n", s.goals);
    if (t->level) info_text_points(t->level, false);
    printf("spawns   %u\n", s.spawns);
    if (t->grid) printf("grid     %u x %u cells\n", qn_grid_width(t->grid), qn_grid_height(t->grid));
    printf("memory   %zu bytes (mesh)\n", qn_mesh_bytes(t->mesh));
    return 0;
}

static int cmd_info(int argc, char **argv) {
    qn_cli_args a;
    int rc = qn_cli_parse(&info_spec, argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    bool json = a.value[INFO_JSON] != NULL;
    const char *path = a.pos[0];
    qn_terrain t;
    qn_error e;
    if (!qn_terrain_load(path, true, false, &t)) {
        if (json && t.load_status != QN_OK) info_invalid_json(path, &t.load_error);
        return qn_terrain_free(&t), 1;
    }
    if (t.level && !points_open(t.level, &e)) {
        qn_cli_error("%s: %s: %s", path, qn_status_name(e.code), e.message);
        if (json) info_invalid_json(path, &e);
        return qn_terrain_free(&t), 1;
    }
    rc = json ? info_json(path, &t) : info_text(path, &t);
    qn_terrain_free(&t);
    return rc;
}

/* ---- shared: terrain + field ---------------------------------------------- */

typedef struct setup {
    qn_terrain t;
    qn_field *field;
    qn_vec2 goal;
    float radius;
    double build_us;
} setup;

static void setup_free(setup *s) {
    qn_field_destroy(s->field);
    qn_terrain_free(&s->t);
}

/* Reads --radius (default QN_CLI_DEFAULT_RADIUS). 0, or 2 (reported). */
static int parse_radius(const char *arg, float *radius) {
    *radius = QN_CLI_DEFAULT_RADIUS;
    if (arg && !qn_cli_parse_float(arg, 0.0f, 1e4f, radius))
        return qn_cli_error("--radius %s: not a number in [0, 10000]", arg), 2;
    return 0;
}

/* Loads the level or map (from `in` when it is already read, else from
** path) and builds the field for the goal and radius. 0, 1 (failure) or 2
** (usage), reported. */
static int setup_field(const char *path, qn_cli_input *in, const char *goal, float radius,
                       bool repairable, setup *s) {
    memset(s, 0, sizeof *s);
    s->radius = radius;
    bool ok = in ? qn_terrain_from_input(in, false, &s->t) : qn_terrain_load(path, true, false, &s->t);
    if (!ok) return 1;
    int rc = qn_cli_goal(s->t.level, goal, &s->goal);
    if (rc) return rc;
    qn_field_opts fo = {.radius = s->radius, .repairable = repairable};
    qn_error e;
    double t0 = qn_tool_now();
    qn_status st = qn_field_create(s->t.mesh, &s->goal, 1, &fo, NULL, &s->field, &e);
    s->build_us = (qn_tool_now() - t0) * 1e6;
    if (st != QN_OK)
        return qn_cli_error("goal %g,%g: %s: %s", (double)s->goal.x, (double)s->goal.y,
                            qn_status_name(st), e.message);
    return 0;
}

/* ---- field ------------------------------------------------------------------ */

static const char field_usage[] =
    "usage: quadnav field LEVEL|MAP [--goal X,Y|NAME] [--radius R] [--json]\n"
    "Builds the instance for the goal (default: the level's first goal; a map needs\n"
    "--goal) and agent radius R (default 0.25, as in every command) and prints\n"
    "each quad's cost to the goal and the next quad on its way (-1: none; with\n"
    "--json, null for an unreachable quad's cost and next).\n";

enum { FIELD_GOAL, FIELD_RADIUS, FIELD_JSON };
static const qn_cli_option field_options[] = {
    [FIELD_GOAL] = OPT_GOAL, [FIELD_RADIUS] = OPT_RADIUS, [FIELD_JSON] = OPT_JSON};
static const qn_cli_spec field_spec =
    QN_CLI_SPEC("field", field_usage, field_options, 1, 1, "LEVEL|MAP");

static int field_json(const setup *s, uint32_t reachable) {
    uint32_t n = qn_mesh_quad_count(s->t.mesh);
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    qn_json_put_vec(o, "goal", s->goal);
    qn_json_put_float(o, "radius", s->radius);
    qn_json_put_uint(o, "quads", n);
    qn_json_put_uint(o, "reachable", reachable);
    qn_json_put_uint(o, "bytes", qn_field_bytes(s->field));
    qn_json_put_num(o, "build_us", s->build_us);
    for (uint32_t q = 0; q < n; q++) {
        uint32_t next = qn_field_quad_next(s->field, q);
        cJSON *e = cJSON_CreateObject();
        qn_json_put_uint(e, "quad", q);
        qn_json_put_float(e, "cost", qn_field_quad_cost(s->field, q));
        qn_json_put(e, "next", next == QN_NONE ? cJSON_CreateNull() : qn_json_uint(next));
        qn_json_push(arr, e);
    }
    qn_json_put(o, "field", arr);
    return qn_json_emit(o);
}

static void field_text(const setup *s, uint32_t reachable) {
    uint32_t n = qn_mesh_quad_count(s->t.mesh);
    printf("# goal %g,%g  radius %g  %u of %u quads reachable\n", (double)s->goal.x,
           (double)s->goal.y, (double)s->radius, reachable, n);
    printf("%-8s %-12s %s\n", "quad", "cost", "next");
    for (uint32_t q = 0; q < n; q++) {
        uint32_t next = qn_field_quad_next(s->field, q);
        printf("%-8u %-12.4f %lld\n", q, (double)qn_field_quad_cost(s->field, q),
               next == QN_NONE ? -1LL : (long long)next);
    }
}

static int cmd_field(int argc, char **argv) {
    qn_cli_args a;
    int rc = qn_cli_parse(&field_spec, argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    float radius;
    if ((rc = parse_radius(a.value[FIELD_RADIUS], &radius))) return rc;
    setup s;
    rc = setup_field(a.pos[0], NULL, a.value[FIELD_GOAL], radius, false, &s);
    if (rc) return setup_free(&s), rc;
    uint32_t n = qn_mesh_quad_count(s.t.mesh), reachable = 0;
    for (uint32_t q = 0; q < n; q++) reachable += isfinite(qn_field_quad_cost(s.field, q));
    if (a.value[FIELD_JSON]) rc = field_json(&s, reachable);
    else field_text(&s, reachable);
    setup_free(&s);
    return rc;
}

/* ---- sample -------------------------------------------------------------------- */

static const char sample_usage[] =
    "usage: quadnav sample LEVEL|MAP [--goal X,Y|NAME] [--radius R] [--json]\n"
    "Reads 'x y' lines on stdin (of any length) and writes one 'dx dy status' line\n"
    "for each, where status is ok, at_goal, outside, blocked, unreachable or invalid\n"
    "(a malformed line). With --json, one object: goal, radius, lines and\n"
    "samples, a list of {line, x, y, dx, dy, status} (x, y null when invalid).\n"
    "Default radius 0.25.\n";

enum { SAMPLE_GOAL, SAMPLE_RADIUS, SAMPLE_JSON };
static const qn_cli_option sample_options[] = {
    [SAMPLE_GOAL] = OPT_GOAL, [SAMPLE_RADIUS] = OPT_RADIUS, [SAMPLE_JSON] = OPT_JSON};
static const qn_cli_spec sample_spec =
    QN_CLI_SPEC("sample", sample_usage, sample_options, 1, 1, "LEVEL|MAP");

static const char *sample_word(qn_status st) {
    switch (st) {
    case QN_OK: return "ok";
    case QN_AT_GOAL: return "at_goal";
    case QN_E_OUTSIDE: return "outside";
    case QN_E_BLOCKED: return "blocked";
    case QN_E_UNREACHABLE: return "unreachable";
    default: return "invalid";
    }
}

/* Parses "x y" (white space around and between; nothing else). */
static bool parse_point_line(const char *line, double *x, double *y) {
    char *end;
    *x = strtod(line, &end);
    if (end == line) return false;
    const char *ys = end;
    *y = strtod(ys, &end);
    if (end == ys) return false;
    while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
    return *end == '\0' && isfinite(*x) && isfinite(*y) && fabs(*x) <= (double)QN_MAX_COORD &&
           fabs(*y) <= (double)QN_MAX_COORD;
}

static cJSON *sample_item(uint64_t line, bool valid, double x, double y, qn_vec2 dir,
                          qn_status st) {
    cJSON *e = cJSON_CreateObject();
    qn_json_put_uint(e, "line", line);
    qn_json_put(e, "x", valid ? qn_json_number(x) : cJSON_CreateNull());
    qn_json_put(e, "y", valid ? qn_json_number(y) : cJSON_CreateNull());
    qn_json_put_float(e, "dx", dir.x);
    qn_json_put_float(e, "dy", dir.y);
    qn_json_put_str(e, "status", sample_word(st));
    return e;
}

/* One line in, one result out (text line or JSON item). */
static void sample_lines(const setup *s, cJSON *arr, uint64_t *count) {
    char *line = NULL;
    size_t cap = 0;
    uint32_t hint = QN_NONE;
    while (getline(&line, &cap, stdin) != -1) {
        double x = 0, y = 0;
        qn_vec2 dir = {0, 0};
        qn_status st = QN_E_INVALID_ARG;
        bool valid = parse_point_line(line, &x, &y);
        if (valid) st = qn_field_sample(s->field, (qn_vec2){(float)x, (float)y}, &hint, &dir);
        ++*count;
        if (arr) qn_json_push(arr, sample_item(*count, valid, x, y, dir, st));
        else printf("%.6f %.6f %s\n", (double)dir.x, (double)dir.y, sample_word(st));
    }
    free(line);
}

static int cmd_sample(int argc, char **argv) {
    qn_cli_args a;
    int rc = qn_cli_parse(&sample_spec, argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    float radius;
    if ((rc = parse_radius(a.value[SAMPLE_RADIUS], &radius))) return rc;
    setup s;
    rc = setup_field(a.pos[0], NULL, a.value[SAMPLE_GOAL], radius, false, &s);
    if (rc) return setup_free(&s), rc;
    uint64_t count = 0;
    if (!a.value[SAMPLE_JSON]) {
        sample_lines(&s, NULL, &count);
    } else {
        cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();
        qn_json_put_vec(o, "goal", s.goal);
        qn_json_put_float(o, "radius", s.radius);
        sample_lines(&s, arr, &count);
        qn_json_put_uint(o, "lines", count);
        qn_json_put(o, "samples", arr);
        rc = qn_json_emit(o);
    }
    if (ferror(stdin)) rc = qn_cli_error("stdin: read error");
    setup_free(&s);
    return rc;
}

/* ---- sim / demo -------------------------------------------------------------------- */

static const char sim_usage[] =
    "usage: quadnav sim LEVEL|MAP [--goal X,Y|NAME] [--units N] [--seed S] [--radius R]\n"
    "                   [--step D] [--spawns] [--threads N] [--max-steps N] [--mode M]\n"
    "                   [--json]\n"
    "                   [--block Q@S] [--unblock Q@S] [--cost Q=C@S] ...\n"
    "Defaults: 1000 units (at most 1000000), seed 1, radius 0.25, step 0.2, 1 thread.\n"
    "Scripted changes happen before step S; the field is repaired, units re-route,\n"
    "and units standing on a quad as it is blocked walk out of it.\n"
    "Units start at random reachable positions (with --spawns: at the level's spawn\n"
    "points) and step D along sampled directions. Reports arrivals, wall contacts\n"
    "(moves that would leave traversable space), stuck units (out_of_steps of them\n"
    "stopped by the step budget) and the stretch: distance walked / cost to goal at\n"
    "the start (mean and 95th percentile).\n"
    "Step budget: a unit stops after 4 x its cost to goal / D + 200 steps, and\n"
    "after --max-steps N when smaller. The default N scales with the level and\n"
    "the step: 4 x L / D + 200, L being the sum over open quads of diameter x\n"
    "cost (no path costs more), so a unit that is merely far is never cut short.\n"
    "LEVEL may be a MovingAI map (recognised by content; its quads: the rectangle\n"
    "decomposition; --goal X,Y needed). --mode quad|grid8|gridvec: the quad field\n"
    "(default), or the grid field with 8-direction or vector flow (a level without\n"
    "a grid is rasterised at cell size 1); maps and grid modes go through the\n"
    "viewer's session code (tools/session.c) and take no scripted changes or\n"
    "--spawns. --mode hier: the quads through a hierarchical instance (qn_hier,\n"
    "qn_hfield; every open quad must cost 1), levels and maps, scripted blocking\n"
    "and unblocking included (the hier and the destination are updated); stretch\n"
    "is against the hierarchical cost at the start; the JSON adds hier_build_ms,\n"
    "hier_sectors, sectors_built and bytes (the destination's, at the end).\n";

enum {
    SIM_GOAL, SIM_UNITS, SIM_SEED, SIM_RADIUS, SIM_STEP, SIM_SPAWNS, SIM_THREADS,
    SIM_MAX_STEPS, SIM_BLOCK, SIM_UNBLOCK, SIM_COST, SIM_MODE, SIM_JSON,
    SIM_WEB /* demo only: the last entry, left out of sim's table */
};
static const qn_cli_option sim_options[] = {
    [SIM_GOAL] = OPT_GOAL,
    [SIM_UNITS] = {"units", 0, true},
    [SIM_SEED] = {"seed", 0, true},
    [SIM_RADIUS] = OPT_RADIUS,
    [SIM_STEP] = {"step", 0, true},
    [SIM_SPAWNS] = {"spawns", 0, false},
    [SIM_THREADS] = {"threads", 0, true},
    [SIM_MAX_STEPS] = {"max-steps", 0, true},
    [SIM_BLOCK] = {"block", 0, true},
    [SIM_UNBLOCK] = {"unblock", 0, true},
    [SIM_COST] = {"cost", 0, true},
    [SIM_MODE] = {"mode", 0, true},
    [SIM_JSON] = OPT_JSON,
    [SIM_WEB] = {"web", 0, false},
};
static const qn_cli_spec sim_spec = {"sim", sim_usage, sim_options, SIM_WEB, 1, 1, "LEVEL|MAP"};

static const char demo_usage[] =
    "usage: quadnav demo [sim options, no LEVEL] | demo --web\n"
    "The bundled town level: 1000 units (by default) run to the plaza; prints the\n"
    "sim summary (see quadnav sim --help for the options and output). --web\n"
    "prints how to build and open the browser viewer instead.\n";
static const qn_cli_spec demo_spec = QN_CLI_SPEC("demo", demo_usage, sim_options, 0, 0, "");

static const char demo_web[] =
    "The browser viewer (the library compiled to WebAssembly), from the source tree:\n"
    "  bash tools/web.sh build    # installs emscripten if missing; writes build/web/\n"
    "  bash tools/web.sh serve    # then open http://127.0.0.1:8321/\n"
    "URL parameters: level=URL or map=URL, goal=X,Y, units=N, seed=S,\n"
    "mode=quad|grid8|gridvec, side=MODE, frames=N, auto=1 (see README.md).\n";

/* A scripted change for `sim`: at step `step`, block, unblock or set the
** cost of quad `quad`. */
typedef enum change_kind { CHANGE_BLOCK, CHANGE_UNBLOCK, CHANGE_COST } change_kind;
typedef struct change {
    change_kind kind;
    uint32_t quad, step;
    float cost;
} change;

#define MAX_CHANGES 64

typedef struct sim_args {
    const char *path, *goal;
    qn_sim_mode mode;
    bool hier;                                /* --mode hier (mode stays QN_MODE_QUAD) */
    uint64_t units, seed, threads, max_steps; /* max_steps 0: the default */
    float step, radius;
    bool spawns, json;
    change changes[MAX_CHANGES];
    int nchanges;
} sim_args;

/* Parses "Q@S" (block, unblock) or "Q=C@S" (cost) into a change. */
static bool parse_change(change_kind kind, const char *v, change *c) {
    char *end;
    if (*v < '0' || *v > '9') return false;
    unsigned long q = strtoul(v, &end, 10), st;
    c->kind = kind;
    c->cost = 0;
    if (end == v || q > UINT32_MAX) return false;
    if (c->kind == CHANGE_COST) {
        if (*end != '=') return false;
        const char *cs = end + 1;
        double cost = strtod(cs, &end);
        if (end == cs || !(cost >= 1.0 && cost <= (double)QN_MAX_QUAD_COST)) return false;
        c->cost = (float)cost;
    }
    if (*end != '@') return false;
    const char *ss = end + 1;
    if (*ss < '0' || *ss > '9') return false;
    st = strtoul(ss, &end, 10);
    if (end == ss || *end || st > UINT32_MAX) return false;
    c->quad = (uint32_t)q;
    c->step = (uint32_t)st;
    return true;
}

/* The scripted changes, in the order given. 0, or 2 (reported). */
static int sim_changes(const qn_cli_args *o, sim_args *a) {
    for (int i = 0; i < o->nseen; i++) {
        int id = o->seen[i].id;
        if (id != SIM_BLOCK && id != SIM_UNBLOCK && id != SIM_COST) continue;
        change_kind k = id == SIM_BLOCK ? CHANGE_BLOCK : id == SIM_UNBLOCK ? CHANGE_UNBLOCK
                                                                          : CHANGE_COST;
        if (a->nchanges == MAX_CHANGES || !parse_change(k, o->seen[i].value, &a->changes[a->nchanges]))
            return qn_cli_error("--%s %s: not %s (at most %d changes)", sim_options[id].name,
                                o->seen[i].value, k == CHANGE_COST ? "QUAD=COST@STEP" : "QUAD@STEP",
                                MAX_CHANGES),
                   2;
        a->nchanges++;
    }
    return 0;
}

static int sim_parse(const qn_cli_args *o, sim_args *a) {
    memset(a, 0, sizeof *a);
    a->units = 1000;
    a->seed = 1;
    a->step = 0.2f;
    a->threads = 1;
    a->goal = o->value[SIM_GOAL];
    a->spawns = o->value[SIM_SPAWNS] != NULL;
    a->json = o->value[SIM_JSON] != NULL;
    const char *v;
    if ((v = o->value[SIM_UNITS]) && (!qn_cli_parse_u64(v, QN_CLI_MAX_UNITS, &a->units) || !a->units))
        return qn_cli_error("--units %s: not a count from 1 to %u", v, QN_CLI_MAX_UNITS), 2;
    if ((v = o->value[SIM_SEED]) && !qn_cli_parse_u64(v, UINT64_MAX, &a->seed))
        return qn_cli_error("--seed %s: not a whole number", v), 2;
    if ((v = o->value[SIM_STEP]) && !qn_cli_parse_float(v, 1e-4f, 1e4f, &a->step))
        return qn_cli_error("--step %s: not a number in [0.0001, 10000]", v), 2;
    if ((v = o->value[SIM_THREADS]) &&
        (!qn_cli_parse_u64(v, QN_SIM_MAX_THREADS, &a->threads) || a->threads == 0))
        return qn_cli_error("--threads %s: not a count from 1 to %u", v, QN_SIM_MAX_THREADS), 2;
    if ((v = o->value[SIM_MAX_STEPS]) &&
        (!qn_cli_parse_u64(v, UINT32_MAX, &a->max_steps) || a->max_steps == 0))
        return qn_cli_error("--max-steps %s: not a count from 1 to %u", v, UINT32_MAX), 2;
    a->hier = (v = o->value[SIM_MODE]) && !strcmp(v, "hier");
    if (v && !a->hier && (!qn_sim_mode_parse(v, &a->mode) || a->mode == QN_MODE_CROWD))
        return qn_cli_error("--mode %s: not quad, grid8, gridvec or hier (units with bodies: "
                            "--crowd)",
                            v),
               2;
    int rc = parse_radius(o->value[SIM_RADIUS], &a->radius);
    return rc ? rc : sim_changes(o, a);
}

/* The default step budget: 4 x (sum over open quads of diameter x cost) /
** step + 200, at most UINT32_MAX. */
static uint32_t default_max_steps(const qn_mesh *m, float step) {
    double l = 0.0;
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        if (qn_mesh_quad_blocked(m, q)) continue;
        qn_vec2 c[4];
        qn_mesh_quad_corners(m, q, c);
        double d = 0.0;
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++)
                d = fmax(d, hypot((double)c[i].x - (double)c[j].x, (double)c[i].y - (double)c[j].y));
        l += d * (double)qn_mesh_quad_cost(m, q);
    }
    return (uint32_t)fmin((double)UINT32_MAX, 4.0 * l / (double)step + 200.0);
}

/* Scripted changes, applied before the step they name; then the field, or
** the hier and its destination (--mode hier), are brought up to date. */
typedef struct script {
    const sim_args *a;
    qn_mesh *mesh;
    qn_field *field;
    qn_hier *hier;
    qn_hfield *hfield;
    uint32_t applied;
    bool failed;
} script;

static void apply_changes(void *ud, uint32_t step) {
    script *sc = ud;
    bool any = false;
    for (int i = 0; i < sc->a->nchanges; i++) {
        const change *c = &sc->a->changes[i];
        if (c->step != step) continue;
        qn_status st = c->kind == CHANGE_COST ? qn_mesh_set_quad_cost(sc->mesh, c->quad, c->cost)
                                              : qn_mesh_set_quad_blocked(sc->mesh, c->quad,
                                                                         c->kind == CHANGE_BLOCK);
        sc->failed |= st != QN_OK;
        sc->applied++;
        any = true;
    }
    if (!any) return;
    if (sc->field) sc->failed |= qn_field_update(sc->field, NULL) != QN_OK;
    if (sc->hier) {
        qn_status st = qn_hier_update(sc->hier, NULL);
        /* a blocked goal leaves the destination answering unreachable */
        if (st == QN_OK) st = qn_hfield_update(sc->hfield, NULL);
        sc->failed |= st != QN_OK && st != QN_E_BLOCKED;
    }
}

/* A change naming a quad the level lacks: a failure (1). */
static int check_changes(const sim_args *a, const qn_mesh *m) {
    for (int i = 0; i < a->nchanges; i++)
        if (a->changes[i].quad >= qn_mesh_quad_count(m))
            return qn_cli_error("change %d: quad %u does not exist (%u quads)", i + 1,
                                a->changes[i].quad, qn_mesh_quad_count(m));
    return 0;
}

/* What `sim --mode hier` adds to the report. */
typedef struct hier_report {
    double build_ms;
    uint32_t sectors, built;
    size_t bytes;
} hier_report;

static int sim_json(const sim_args *a, const setup *s, const qn_sim_result *r,
                    const qn_sim_opts *so, uint32_t changes, const hier_report *hr) {
    double ns = r->samples ? r->sample_seconds * 1e9 / (double)r->samples : (double)NAN;
    cJSON *o = cJSON_CreateObject();
    if (hr) {
        qn_json_put_str(o, "mode", "hier");
        qn_json_put_num(o, "hier_build_ms", hr->build_ms);
        qn_json_put_uint(o, "hier_sectors", hr->sectors);
        qn_json_put_uint(o, "sectors_built", hr->built);
        qn_json_put_uint(o, "bytes", hr->bytes);
    }
    qn_json_put_str(o, "level", a->path);
    qn_json_put_vec(o, "goal", s->goal);
    qn_json_put_float(o, "radius", s->radius);
    qn_json_put_uint(o, "units", r->units);
    qn_json_put_uint(o, "arrived", r->arrived);
    qn_json_put_uint(o, "wall_contacts", r->wall_contacts);
    qn_json_put_uint(o, "stuck", r->stuck);
    qn_json_put_uint(o, "out_of_steps", r->out_of_steps);
    qn_json_put_num(o, "stretch_mean", r->arrived ? r->stretch_mean : (double)NAN);
    qn_json_put_num(o, "stretch_p95", r->arrived ? r->stretch_p95 : (double)NAN);
    qn_json_put_uint(o, "steps", r->steps);
    qn_json_put_uint(o, "max_steps", so->max_steps);
    qn_json_put_float(o, "step", so->step);
    qn_json_put_uint(o, "samples", r->samples);
    qn_json_put_num(o, "sample_ns", ns);
    qn_json_put_num(o, "build_us", s->build_us);
    qn_json_put_uint(o, "threads", so->threads);
    qn_json_put_uint(o, "changes", changes);
    qn_json_put_uint(o, "escapes", r->escapes);
    return qn_json_emit(o);
}

static void sim_text(const sim_args *a, const setup *s, const qn_sim_result *r,
                     const qn_sim_opts *so, uint32_t changes, const hier_report *hr) {
    double ns = r->samples ? r->sample_seconds * 1e9 / (double)r->samples : 0.0;
    printf("level          %s\n", a->path);
    printf("goal           %g,%g (radius %g)\n", (double)s->goal.x, (double)s->goal.y,
           (double)s->radius);
    printf("units          %u\n", r->units);
    printf("arrived        %u (%.1f %%)\n", r->arrived, 100.0 * r->arrived / r->units);
    printf("wall_contacts  %llu\n", (unsigned long long)r->wall_contacts);
    printf("stuck          %u (%u out of steps)\n", r->stuck, r->out_of_steps);
    printf("stretch_mean   %.4f\n", r->stretch_mean);
    printf("stretch_p95    %.4f\n", r->stretch_p95);
    printf("steps          %u (longest unit; budget %u)\n", r->steps, so->max_steps);
    printf("sampling       %.1f ns per sample (%llu samples)\n", ns,
           (unsigned long long)r->samples);
    printf("instance       %.1f us to build\n", s->build_us);
    printf("threads        %u\n", so->threads);
    if (changes) printf("changes        %u applied, %llu escape steps\n", changes,
                        (unsigned long long)r->escapes);
    if (hr)
        printf("hierarchical   %u sectors (graph %.1f ms); %u local fields built, %zu bytes\n",
               hr->sectors, hr->build_ms, hr->built, hr->bytes);
}

/* Spawn points of the level, for --spawns; NULL (and *n = 0) when none. */
static qn_vec2 *level_spawns(const qn_level *level, uint32_t *n) {
    *n = level ? qn_level_spawn_count(level) : 0;
    if (*n == 0) return NULL;
    qn_vec2 *p = calloc(*n, sizeof *p);
    for (uint32_t i = 0; p && i < *n; i++) {
        const char *name;
        qn_level_spawn(level, i, &name, &p[i]);
    }
    return p;
}

/* The run's options from the arguments (the default step budget from m). */
static qn_sim_opts sim_opts(const sim_args *a, const qn_mesh *m) {
    qn_sim_opts so = {.units = (uint32_t)a->units,
                      .seed = a->seed,
                      .step = a->step,
                      .threads = (uint32_t)a->threads};
    so.max_steps = a->max_steps ? (uint32_t)a->max_steps : default_max_steps(m, a->step);
    return so;
}

/* Runs the units in world w (spawns as asked) and reports; with hr (--mode
** hier), its figures from sc's destination after the run. */
static int sim_finish(const sim_args *a, setup *s, qn_sim_opts *so, script *sc,
                      const qn_sim_world *w, hier_report *hr) {
    qn_vec2 *spawns = NULL;
    if (a->spawns) {
        spawns = level_spawns(s->t.level, &so->start_count);
        if (!spawns) return qn_cli_error("--spawns: the level has no spawn points"), 2;
        so->starts = spawns;
    }
    qn_sim_result r;
    qn_status st = qn_sim_run(w, so, &r);
    free(spawns);
    if (st != QN_OK) return qn_cli_error("sim: %s (no reachable start position?)", qn_status_name(st));
    if (sc->failed) return qn_cli_error("sim: a scripted change could not be applied");
    if (hr) {
        hr->sectors = qn_hier_sector_count(sc->hier);
        hr->built = qn_hfield_sectors_built(sc->hfield);
        hr->bytes = qn_hfield_bytes(sc->hfield);
    }
    if (a->json) return sim_json(a, s, &r, so, sc->applied, hr);
    sim_text(a, s, &r, so, sc->applied, hr);
    return 0;
}

/* The goal and the instance of a session run. 0, 1 or 2 (reported). */
static int session_setup(const sim_args *a, qn_session *ses, setup *s) {
    int rc = qn_cli_goal(qn_session_level(ses), a->goal, &s->goal);
    if (rc) return rc;
    qn_error e;
    qn_status st = qn_session_set_goal(ses, a->mode, s->goal, s->radius, &s->build_us, &e);
    if (st != QN_OK)
        return qn_cli_error("goal %g,%g: %s: %s", (double)s->goal.x, (double)s->goal.y,
                            qn_status_name(st), e.message);
    if (!qn_session_level(ses) && s->radius > QN_CLI_MAP_RADIUS) {
        fprintf(stderr, "quadnav: note: --radius %g is above %g on a map (corridors may be one "
                "cell wide): using %g\n", (double)s->radius, (double)QN_CLI_MAP_RADIUS,
                (double)QN_CLI_MAP_RADIUS);
        s->radius = QN_CLI_MAP_RADIUS;
    }
    return 0;
}

/* `sim` on a map or in a grid mode: through the session the viewer uses,
** so that both step units with the same code. */
static int run_sim_session(const sim_args *a, const qn_cli_input *in) {
    if (a->nchanges || a->spawns)
        return qn_cli_error("sim: a map or a grid mode takes no --block, --unblock, --cost or "
                            "--spawns"),
               2;
    qn_session *ses = NULL;
    qn_error e;
    qn_status st = qn_session_create(in->data, in->len, &ses, &e);
    if (st != QN_OK) return qn_cli_error("%s: %s: %s", a->path, qn_status_name(st), e.message);
    setup s;
    memset(&s, 0, sizeof s);
    s.radius = a->radius;
    int rc = session_setup(a, ses, &s);
    if (rc) return qn_session_destroy(ses), rc;
    qn_sim_opts so = sim_opts(a, qn_session_mesh(ses));
    qn_sim_result r;
    st = qn_session_start(ses, &so);
    while (st == QN_OK && qn_session_step(ses))
        continue;
    if (st == QN_OK) st = qn_sim_state_result(qn_session_run(ses), &r);
    qn_session_destroy(ses);
    if (st != QN_OK)
        return qn_cli_error("sim: %s (no reachable start position?)", qn_status_name(st));
    if (a->json) return sim_json(a, &s, &r, &so, 0, NULL);
    sim_text(a, &s, &r, &so, 0, NULL);
    return 0;
}

/* `sim --mode hier`: a hierarchical instance over the level's or map's
** quads; scripted changes update the hier and the destination. */
static int run_sim_hier(const sim_args *a, qn_cli_input *in) {
    setup s;
    memset(&s, 0, sizeof s);
    if (!qn_terrain_from_input(in, false, &s.t)) return setup_free(&s), 1;
    int rc = qn_cli_goal(s.t.level, a->goal, &s.goal);
    if (rc) return setup_free(&s), rc;
    s.radius = qn_terrain_radius(&s.t, a->radius);
    qn_mesh *mesh = qn_terrain_mesh_mut(&s.t);
    if ((rc = check_changes(a, mesh))) return setup_free(&s), rc;
    qn_error e;
    qn_hier *h = NULL;
    qn_hfield *f = NULL;
    hier_report hr = {0};
    double t0 = qn_tool_now();
    qn_status st = qn_hier_create(mesh, NULL, NULL, &h, &e);
    hr.build_ms = (qn_tool_now() - t0) * 1e3;
    if (st == QN_OK) {
        t0 = qn_tool_now();
        st = qn_hfield_create(h, s.goal, s.radius, NULL, &f, &e);
        s.build_us = (qn_tool_now() - t0) * 1e6;
    }
    if (st != QN_OK) {
        qn_hier_destroy(h);
        setup_free(&s);
        return qn_cli_error("sim --mode hier: goal %g,%g: %s: %s", (double)s.goal.x,
                            (double)s.goal.y, qn_status_name(st), e.message);
    }
    qn_sim_opts so = sim_opts(a, mesh);
    script sc = {a, mesh, NULL, h, f, 0, false};
    if (a->nchanges) so.before_step = apply_changes, so.before_step_ud = &sc;
    qn_sim_world w;
    qn_sim_hier_ctx ctx;
    qn_sim_world_hier(&w, &ctx, f, mesh, s.goal);
    rc = sim_finish(a, &s, &so, &sc, &w, &hr);
    qn_hfield_destroy(f);
    qn_hier_destroy(h);
    setup_free(&s);
    return rc;
}

static int run_sim(const sim_args *a) {
    qn_cli_input in;
    if (qn_cli_read(a->path, &in)) return 1;
    if (a->hier) {
        int rc = run_sim_hier(a, &in);
        qn_cli_input_free(&in);
        return rc;
    }
    if (a->mode != QN_MODE_QUAD || qn_level_sniff(in.data, in.len) == QN_LEVEL_MAP) {
        int rc = run_sim_session(a, &in);
        qn_cli_input_free(&in);
        return rc;
    }
    setup s;
    int rc = setup_field(a->path, &in, a->goal, a->radius, a->nchanges > 0, &s);
    if (rc) return setup_free(&s), rc;
    qn_sim_opts so = sim_opts(a, s.t.mesh);
    script sc = {a, qn_terrain_mesh_mut(&s.t), s.field, NULL, NULL, 0, false};
    if ((rc = check_changes(a, sc.mesh))) return setup_free(&s), rc;
    if (a->nchanges) so.before_step = apply_changes, so.before_step_ud = &sc;
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, s.field, s.goal);
    rc = sim_finish(a, &s, &so, &sc, &w, NULL);
    setup_free(&s);
    return rc;
}

static int cmd_sim(int argc, char **argv) {
    if (qn_tool_wants_crowd(argc, argv)) return qn_tool_crowd(argc, argv);
    qn_cli_args o;
    sim_args a;
    int rc = qn_cli_parse(&sim_spec, argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = sim_parse(&o, &a))) return rc;
    a.path = o.pos[0];
    return run_sim(&a);
}

static int cmd_demo(int argc, char **argv) {
    if (qn_tool_wants_crowd(argc, argv)) return qn_tool_crowd(argc, argv);
    qn_cli_args o;
    sim_args a;
    int rc = qn_cli_parse(&demo_spec, argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    if (o.value[SIM_WEB]) {
        if (o.nseen > 1) return qn_cli_error("demo: --web takes no other option"), 2;
        return fputs(demo_web, stdout), 0;
    }
    if ((rc = sim_parse(&o, &a))) return rc;
    static char path[4096];
    snprintf(path, sizeof path, "%s/levels/town.json", qn_cli_data_dir());
    a.path = path;
    return run_sim(&a);
}

/* ---- dispatch ------------------------------------------------------------------------ */

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", cmd_info, "validate a level; counts, bounds, portals, islands"},
    {"field", cmd_field, "per-quad cost to a goal and next quad"},
    {"sample", cmd_sample, "directions for 'x y' lines read on stdin"},
    {"sim", cmd_sim, "units walk to a goal; arrival, wall contacts, stretch"},
    {"demo", cmd_demo, "the bundled town level with 1000 units"},
    {"bench", qn_tool_bench, "instance build and sampling speed beside baselines"},
    {"scen", qn_tool_scen, "check grid fields against a MovingAI scenario file"},
    {"import-map", qn_tool_import_map, "MovingAI map to a quad level (keeps the grid)"},
    {"compare", qn_tool_compare, "quad vs grid modes on the same starts and goals"},
    {"render", qn_tool_render, "SVG of a field: costs, portals, flow, unit trails"},
    {"path", qn_tool_path, "one unit's own path: A* plus string pulling"},
    {"bake", qn_tool_bake, "a level as a baked binary file (.qnm), fast to load"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: quadnav COMMAND [ARGS] (quadnav COMMAND --help for each)\n"
               "quadnav %s: crowd navigation over convex quads and grids\n\n",
            qn_version_string());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

/* A command's output on stdout counts only once it is written: a full
** disk or a closed pipe turns success into failure, with the reason. */
static int finish(int rc) {
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        qn_cli_error("stdout: write error: %s", strerror(errno ? errno : EIO));
        return rc ? rc : 1;
    }
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr), 2;
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return usage(stdout), 0;
    if (!strcmp(argv[1], "--version")) return printf("quadnav %s\n", qn_version_string()), 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return finish(commands[i].run(argc - 1, argv + 1));
    qn_cli_error("unknown command '%s' (quadnav --help lists them)", argv[1]);
    return 2;
}
