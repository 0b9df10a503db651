/*
** quadnav.c: the command-line tool. Each subcommand parses its own options;
** exit status 0 on success, 1 on failure (one line on stderr), 2 on bad usage.
** With --json a command prints exactly one JSON object on stdout.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "sim.h"
#include "tool.h"

/* ---- option parsing -------------------------------------------------- */

/* A scripted change for `sim`: at step `step`, block, unblock or set the
** cost of quad `quad`. */
typedef enum change_kind { CHANGE_BLOCK, CHANGE_UNBLOCK, CHANGE_COST } change_kind;
typedef struct change {
    change_kind kind;
    uint32_t quad, step;
    float cost;
} change;

#define MAX_CHANGES 64

typedef struct opts {
    const char *positional[2];
    int npos;
    const char *goal, *units, *seed, *radius, *step, *threads, *mode;
    bool json, help, spawns;
    change changes[MAX_CHANGES];
    int nchanges;
} opts;

/* Parses "Q@S" (block, unblock) or "Q=C@S" (cost) into a change. */
static bool parse_change(const char *flag, const char *v, change *c) {
    char *end;
    unsigned long q = strtoul(v, &end, 10), st;
    c->kind = !strcmp(flag, "--block") ? CHANGE_BLOCK
              : !strcmp(flag, "--unblock") ? CHANGE_UNBLOCK : CHANGE_COST;
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
    st = strtoul(ss, &end, 10);
    if (end == ss || *end || st > UINT32_MAX) return false;
    c->quad = (uint32_t)q;
    c->step = (uint32_t)st;
    return true;
}

static bool is_change_flag(const char *a) {
    return !strcmp(a, "--block") || !strcmp(a, "--unblock") || !strcmp(a, "--cost");
}

/* Parses argv[1..] (argv[0] is the subcommand). Returns false on an unknown
** option or a missing value, after printing the problem. */
static bool parse_opts(int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (!strcmp(a, "--json")) o->json = true;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) o->help = true;
        else if (!strcmp(a, "--spawns")) o->spawns = true;
        else if (!strcmp(a, "--goal")) slot = &o->goal;
        else if (!strcmp(a, "--units")) slot = &o->units;
        else if (!strcmp(a, "--seed")) slot = &o->seed;
        else if (!strcmp(a, "--radius")) slot = &o->radius;
        else if (!strcmp(a, "--step")) slot = &o->step;
        else if (!strcmp(a, "--threads")) slot = &o->threads;
        else if (!strcmp(a, "--mode")) slot = &o->mode;
        else if (is_change_flag(a)) {
            if (i + 1 >= argc || o->nchanges == MAX_CHANGES ||
                !parse_change(a, argv[i + 1], &o->changes[o->nchanges])) {
                qn_cli_error("%s: %s takes %s (at most %d changes)", argv[0], a,
                             !strcmp(a, "--cost") ? "QUAD=COST@STEP" : "QUAD@STEP", MAX_CHANGES);
                return false;
            }
            o->nchanges++;
            i++;
        } else if (a[0] == '-' && a[1] == '-') {
            qn_cli_error("%s: unknown option %s (see quadnav %s --help)", argv[0], a, argv[0]);
            return false;
        } else if (o->npos < 2) o->positional[o->npos++] = a;
        else {
            qn_cli_error("%s: unexpected argument %s", argv[0], a);
            return false;
        }
        if (slot) {
            if (i + 1 >= argc) {
                qn_cli_error("%s: %s needs a value", argv[0], a);
                return false;
            }
            *slot = argv[++i];
        }
    }
    return true;
}

/* ---- info -------------------------------------------------------------- */

static const char *const info_usage =
    "usage: quadnav info LEVEL [--json]\n"
    "Loads and validates a level; prints counts, bounds, portals and islands.\n"
    "Exit status 1 when the level is invalid (the error names the element).\n";

static void info_invalid_json(const char *path) {
    qn_level *level = NULL;
    qn_error e;
    qn_status st = qn_level_load_any_file(path, NULL, &level, &e);
    printf("{\"level\":");
    qn_json_str(stdout, path);
    printf(",\"valid\":false,\"status\":");
    qn_json_str(stdout, qn_status_name(st));
    printf(",\"path\":");
    qn_json_str(stdout, e.path);
    printf(",\"line\":%u,\"column\":%u,\"message\":", e.line, e.column);
    qn_json_str(stdout, e.message);
    printf("}\n");
    qn_level_destroy(level);
}

typedef struct level_stats {
    uint32_t quads, portals, islands, blocked, goals, spawns;
    double area;
    qn_rect bounds;
} level_stats;

static level_stats stats_of(const qn_level *level) {
    const qn_mesh *m = qn_level_mesh(level);
    level_stats s = {0};
    s.quads = qn_mesh_quad_count(m);
    s.portals = qn_mesh_portal_count(m);
    s.islands = qn_mesh_island_count(m);
    s.goals = qn_level_goal_count(level);
    s.spawns = qn_level_spawn_count(level);
    s.bounds = qn_mesh_bounds(m);
    for (uint32_t q = 0; q < s.quads; q++) {
        if (qn_mesh_quad_blocked(m, q)) s.blocked++;
        else s.area += (double)qn_mesh_quad_area(m, q);
    }
    return s;
}

static void info_print(const char *path, const qn_level *level, bool json) {
    level_stats s = stats_of(level);
    const qn_grid *g = qn_level_grid(level);
    if (json) {
        printf("{\"level\":");
        qn_json_str(stdout, path);
        printf(",\"name\":");
        qn_json_str(stdout, qn_level_name(level));
        printf(",\"valid\":true,\"quads\":%u,\"portals\":%u,\"islands\":%u,\"blocked\":%u,"
               "\"goals\":%u,\"spawns\":%u,\"area\":",
               s.quads, s.portals, s.islands, s.blocked, s.goals, s.spawns);
        qn_json_num(stdout, s.area);
        printf(",\"bounds\":[%g,%g,%g,%g],\"mesh_bytes\":%zu", (double)s.bounds.min.x,
               (double)s.bounds.min.y, (double)s.bounds.max.x, (double)s.bounds.max.y,
               qn_mesh_bytes(qn_level_mesh(level)));
        if (g) printf(",\"grid\":[%u,%u]", qn_grid_width(g), qn_grid_height(g));
        printf("}\n");
        return;
    }
    printf("level    %s (%s)\n", path, qn_level_name(level));
    printf("valid    yes\n");
    printf("quads    %u (%u blocked)\n", s.quads, s.blocked);
    printf("portals  %u\n", s.portals);
    printf("islands  %u\n", s.islands);
    printf("area     %.2f (open quads)\n", s.area);
    printf("bounds   [%g, %g] - [%g, %g]\n", (double)s.bounds.min.x, (double)s.bounds.min.y,
           (double)s.bounds.max.x, (double)s.bounds.max.y);
    printf("goals    %u\n", s.goals);
    for (uint32_t i = 0; i < s.goals; i++) {
        const char *name;
        qn_vec2 at;
        qn_level_goal(level, i, &name, &at);
        printf("  %-12s %g,%g\n", name, (double)at.x, (double)at.y);
    }
    printf("spawns   %u\n", s.spawns);
    if (g) printf("grid     %u x %u cells\n", qn_grid_width(g), qn_grid_height(g));
    printf("memory   %zu bytes (mesh)\n", qn_mesh_bytes(qn_level_mesh(level)));
}

static int cmd_info(int argc, char **argv) {
    opts o;
    if (!parse_opts(argc, argv, &o)) return 2;
    if (o.help) return fputs(info_usage, stdout), 0;
    if (o.npos != 1) return fputs(info_usage, stderr), 2;
    qn_level *level = NULL;
    if (o.json) {
        if (qn_level_load_any_file(o.positional[0], NULL, &level, NULL) != QN_OK) {
            info_invalid_json(o.positional[0]);
            return 1;
        }
    } else if (!(level = qn_cli_load_level(o.positional[0]))) {
        return 1;
    }
    info_print(o.positional[0], level, o.json);
    qn_level_destroy(level);
    return 0;
}

/* ---- shared: level + field ---------------------------------------------- */

typedef struct setup {
    qn_level *level;
    qn_field *field;
    qn_vec2 goal;
    float radius;
    double build_us;
} setup;

static void setup_free(setup *s) {
    qn_field_destroy(s->field);
    qn_level_destroy(s->level);
}

/* Loads the level and builds the field for --goal and --radius (default
** `radius`). */
static bool setup_field(const opts *o, float radius, setup *s) {
    memset(s, 0, sizeof *s);
    s->radius = radius;
    if (o->radius && !qn_cli_parse_float(o->radius, 0.0f, 1e4f, &s->radius)) {
        qn_cli_error("--radius %s: not a number in [0, 10000]", o->radius);
        return false;
    }
    if (!(s->level = qn_cli_load_level(o->positional[0]))) return false;
    if (!qn_cli_goal(s->level, o->goal, &s->goal)) return false;
    qn_field_opts fo = {.radius = s->radius, .repairable = o->nchanges > 0};
    qn_error e;
    double t0 = qn_tool_now();
    qn_status st = qn_field_create(qn_level_mesh(s->level), &s->goal, 1, &fo, NULL, &s->field, &e);
    s->build_us = (qn_tool_now() - t0) * 1e6;
    if (st != QN_OK) {
        qn_cli_error("goal %g,%g: %s: %s", (double)s->goal.x, (double)s->goal.y,
                     qn_status_name(st), e.message);
        return false;
    }
    return true;
}

/* ---- field ------------------------------------------------------------------ */

static const char *const field_usage =
    "usage: quadnav field LEVEL [--goal X,Y|NAME] [--radius R] [--json]\n"
    "Builds the instance for the goal (default: the level's first goal) and prints\n"
    "each quad's cost to the goal and the next quad on its way (-1: none).\n";

static int cmd_field(int argc, char **argv) {
    opts o;
    if (!parse_opts(argc, argv, &o)) return 2;
    if (o.help) return fputs(field_usage, stdout), 0;
    if (o.npos != 1) return fputs(field_usage, stderr), 2;
    setup s;
    if (!setup_field(&o, 0.0f, &s)) return setup_free(&s), 1;
    const qn_mesh *m = qn_level_mesh(s.level);
    uint32_t n = qn_mesh_quad_count(m), reachable = 0;
    for (uint32_t q = 0; q < n; q++) reachable += isfinite(qn_field_quad_cost(s.field, q));
    if (o.json) {
        printf("{\"goal\":[%g,%g],\"radius\":%g,\"quads\":%u,\"reachable\":%u,\"bytes\":%zu,"
               "\"build_us\":",
               (double)s.goal.x, (double)s.goal.y, (double)s.radius, n, reachable,
               qn_field_bytes(s.field));
        qn_json_num(stdout, s.build_us);
        printf(",\"field\":[");
        for (uint32_t q = 0; q < n; q++) {
            uint32_t next = qn_field_quad_next(s.field, q);
            printf("%s{\"quad\":%u,\"cost\":", q ? "," : "", q);
            qn_json_num(stdout, (double)qn_field_quad_cost(s.field, q));
            printf(",\"next\":%lld}", next == QN_NONE ? -1LL : (long long)next);
        }
        printf("]}\n");
    } else {
        printf("# goal %g,%g  radius %g  %u of %u quads reachable\n", (double)s.goal.x,
               (double)s.goal.y, (double)s.radius, reachable, n);
        printf("%-8s %-12s %s\n", "quad", "cost", "next");
        for (uint32_t q = 0; q < n; q++) {
            uint32_t next = qn_field_quad_next(s.field, q);
            printf("%-8u %-12.4f %lld\n", q, (double)qn_field_quad_cost(s.field, q),
                   next == QN_NONE ? -1LL : (long long)next);
        }
    }
    setup_free(&s);
    return 0;
}

/* ---- sample -------------------------------------------------------------------- */

static const char *const sample_usage =
    "usage: quadnav sample LEVEL [--goal X,Y|NAME] [--radius R]\n"
    "Reads 'x y' lines on stdin and writes 'dx dy status' lines, where status is\n"
    "ok, at_goal, outside, blocked, unreachable or invalid (a malformed line).\n";

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

static int cmd_sample(int argc, char **argv) {
    opts o;
    if (!parse_opts(argc, argv, &o)) return 2;
    if (o.help) return fputs(sample_usage, stdout), 0;
    if (o.npos != 1) return fputs(sample_usage, stderr), 2;
    setup s;
    if (!setup_field(&o, 0.0f, &s)) return setup_free(&s), 1;
    char line[512];
    uint32_t hint = QN_NONE;
    while (fgets(line, sizeof line, stdin)) {
        double x, y;
        char extra;
        qn_vec2 dir = {0, 0};
        qn_status st = QN_E_INVALID_ARG;
        if (sscanf(line, "%lf %lf %c", &x, &y, &extra) == 2 && isfinite(x) && isfinite(y))
            st = qn_field_sample(s.field, (qn_vec2){(float)x, (float)y}, &hint, &dir);
        printf("%.6f %.6f %s\n", (double)dir.x, (double)dir.y, sample_word(st));
    }
    setup_free(&s);
    return 0;
}

/* ---- sim / demo -------------------------------------------------------------------- */

static const char *const sim_usage =
    "usage: quadnav sim LEVEL [--goal X,Y|NAME] [--units N] [--seed S] [--radius R]\n"
    "                   [--step D] [--spawns] [--threads N] [--mode M] [--json]\n"
    "                   [--block Q@S] [--unblock Q@S] [--cost Q=C@S] ...\n"
    "Defaults: 1000 units, seed 1, radius 0.25, step 0.2, 1 thread.\n"
    "Scripted changes happen before step S; the field is repaired, units re-route,\n"
    "and units standing on a quad as it is blocked walk out of it.\n"
    "Units start at random reachable positions (with --spawns: at the level's spawn\n"
    "points) and step D (default 0.2) along sampled directions. Reports arrivals,\n"
    "wall contacts (moves that would leave traversable space), stuck units and the\n"
    "stretch: distance walked / cost to goal at the start (mean and 95th percentile).\n"
    "LEVEL may be a MovingAI .map (its quads: the rectangle decomposition; --goal X,Y\n"
    "needed). --mode quad|grid8|gridvec: the quad field (default), or the grid field\n"
    "with 8-direction or vector flow (a level without a grid is rasterised at cell\n"
    "size 1); maps and grid modes go through the viewer's session code\n"
    "(tools/session.c) and take no scripted changes or --spawns.\n";

/* Units have bodies: the sim's default agent radius. */
#define QN_SIM_DEFAULT_RADIUS 0.25f

typedef struct sim_args {
    uint64_t units, seed, threads;
    float step;
} sim_args;

static bool sim_parse(const opts *o, sim_args *a) {
    a->units = 1000;
    a->seed = 1;
    a->step = 0.2f;
    if (o->units && !qn_cli_parse_u64(o->units, 10000000, &a->units))
        return qn_cli_error("--units %s: not a count up to 10000000", o->units), false;
    if (a->units == 0) return qn_cli_error("--units must be at least 1"), false;
    if (o->seed && !qn_cli_parse_u64(o->seed, UINT64_MAX, &a->seed))
        return qn_cli_error("--seed %s: not a whole number", o->seed), false;
    if (o->step && !qn_cli_parse_float(o->step, 1e-4f, 1e4f, &a->step))
        return qn_cli_error("--step %s: not a number in [0.0001, 10000]", o->step), false;
    a->threads = 1;
    if (o->threads && (!qn_cli_parse_u64(o->threads, QN_SIM_MAX_THREADS, &a->threads) ||
                       a->threads == 0))
        return qn_cli_error("--threads %s: not a count from 1 to %u", o->threads,
                            QN_SIM_MAX_THREADS),
               false;
    return true;
}

/* Scripted changes, applied before the step they name. */
typedef struct script {
    const opts *o;
    qn_mesh *mesh;
    qn_field *field;
    uint32_t applied;
    bool failed;
} script;

static void apply_changes(void *ud, uint32_t step) {
    script *sc = ud;
    bool any = false;
    for (int i = 0; i < sc->o->nchanges; i++) {
        const change *c = &sc->o->changes[i];
        if (c->step != step) continue;
        qn_status st = c->kind == CHANGE_COST ? qn_mesh_set_quad_cost(sc->mesh, c->quad, c->cost)
                                              : qn_mesh_set_quad_blocked(sc->mesh, c->quad,
                                                                         c->kind == CHANGE_BLOCK);
        sc->failed |= st != QN_OK;
        sc->applied++;
        any = true;
    }
    if (any) sc->failed |= qn_field_update(sc->field, NULL) != QN_OK;
}

static bool check_changes(const opts *o, const qn_mesh *m) {
    for (int i = 0; i < o->nchanges; i++)
        if (o->changes[i].quad >= qn_mesh_quad_count(m))
            return qn_cli_error("change %d: quad %u does not exist (%u quads)", i + 1,
                                o->changes[i].quad, qn_mesh_quad_count(m)),
                   false;
    return true;
}

static void sim_print(const char *path, const setup *s, const qn_sim_result *r, bool json,
                      const qn_sim_opts *so, uint32_t changes) {
    double ns = r->samples ? r->sample_seconds * 1e9 / (double)r->samples : 0.0;
    if (json) {
        printf("{\"level\":");
        qn_json_str(stdout, path);
        printf(",\"goal\":[%g,%g],\"radius\":%g,\"units\":%u,\"arrived\":%u,\"wall_contacts\":%llu,"
               "\"stuck\":%u,\"stretch_mean\":",
               (double)s->goal.x, (double)s->goal.y, (double)s->radius, r->units, r->arrived,
               (unsigned long long)r->wall_contacts, r->stuck);
        qn_json_num(stdout, r->stretch_mean);
        printf(",\"stretch_p95\":");
        qn_json_num(stdout, r->stretch_p95);
        printf(",\"steps\":%u,\"samples\":%llu,\"sample_ns\":", r->steps,
               (unsigned long long)r->samples);
        qn_json_num(stdout, ns);
        printf(",\"build_us\":");
        qn_json_num(stdout, s->build_us);
        printf(",\"threads\":%u,\"changes\":%u,\"escapes\":%llu}\n", so->threads, changes,
               (unsigned long long)r->escapes);
        return;
    }
    printf("level          %s\n", path);
    printf("goal           %g,%g (radius %g)\n", (double)s->goal.x, (double)s->goal.y,
           (double)s->radius);
    printf("units          %u\n", r->units);
    printf("arrived        %u (%.1f %%)\n", r->arrived, 100.0 * r->arrived / r->units);
    printf("wall_contacts  %llu\n", (unsigned long long)r->wall_contacts);
    printf("stuck          %u\n", r->stuck);
    printf("stretch_mean   %.4f\n", r->stretch_mean);
    printf("stretch_p95    %.4f\n", r->stretch_p95);
    printf("steps          %u (longest unit)\n", r->steps);
    printf("sampling       %.1f ns per sample (%llu samples)\n", ns,
           (unsigned long long)r->samples);
    printf("instance       %.1f us to build\n", s->build_us);
    printf("threads        %u\n", so->threads);
    if (changes) printf("changes        %u applied, %llu escape steps\n", changes,
                        (unsigned long long)r->escapes);
}

/* Spawn points of the level, for --spawns; NULL (and *n = 0) when none. */
static qn_vec2 *level_spawns(const qn_level *level, uint32_t *n) {
    *n = qn_level_spawn_count(level);
    if (*n == 0) return NULL;
    qn_vec2 *p = calloc(*n, sizeof *p);
    for (uint32_t i = 0; p && i < *n; i++) {
        const char *name;
        qn_level_spawn(level, i, &name, &p[i]);
    }
    return p;
}

/* The whole file at path, NUL-terminated (NULL after printing an error). */
static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = 0;
        *len = (size_t)n;
    } else {
        free(buf), buf = NULL;
        qn_cli_error("%s: cannot read", path);
    }
    if (f) fclose(f);
    return buf;
}

/* The goal of a session run: --goal X,Y or a goal name, else a level's first
** goal; a map needs X,Y. */
static bool session_goal(const opts *o, const qn_session *ses, qn_vec2 *goal) {
    if (qn_session_level(ses)) return qn_cli_goal(qn_session_level(ses), o->goal, goal);
    if (o->goal && qn_cli_parse_vec(o->goal, goal)) return true;
    return qn_cli_error("a map needs --goal X,Y"), false;
}

/* `sim` on a map or in a grid mode: through the session the viewer uses. */
static int run_sim_session(const opts *o, const sim_args *a, qn_sim_mode mode, char *text,
                           size_t len) {
    qn_session *ses = NULL;
    qn_error e;
    setup s = {0};
    s.radius = QN_SIM_DEFAULT_RADIUS;
    qn_status st = qn_session_create(text, len, &ses, &e);
    free(text);
    if (st != QN_OK)
        return qn_cli_error("%s: %s: %s", o->positional[0], qn_status_name(st), e.message);
    bool ok = false;
    if (o->nchanges || o->spawns)
        qn_cli_error("sim: a map or a grid mode takes no --block, --unblock, --cost or --spawns");
    else if (o->radius && !qn_cli_parse_float(o->radius, 0.0f, 1e4f, &s.radius))
        qn_cli_error("--radius %s: not a number in [0, 10000]", o->radius);
    else
        ok = session_goal(o, ses, &s.goal);
    if (!ok) return qn_session_destroy(ses), 1;
    st = qn_session_set_goal(ses, mode, s.goal, s.radius, &s.build_us, &e);
    if (st != QN_OK) {
        qn_session_destroy(ses);
        return qn_cli_error("goal %g,%g: %s: %s", (double)s.goal.x, (double)s.goal.y,
                            qn_status_name(st), e.message);
    }
    if (!qn_session_level(ses)) s.radius = fminf(s.radius, 0.45f);
    qn_sim_opts so = {.units = (uint32_t)a->units, .seed = a->seed, .step = a->step,
                      .threads = (uint32_t)a->threads};
    qn_sim_result r;
    st = qn_session_start(ses, &so);
    while (st == QN_OK && qn_session_step(ses))
        continue;
    if (st == QN_OK) st = qn_sim_state_result(qn_session_run(ses), &r);
    qn_session_destroy(ses);
    if (st != QN_OK)
        return qn_cli_error("sim: %s (no reachable start position?)", qn_status_name(st));
    sim_print(o->positional[0], &s, &r, o->json, &so, 0);
    return 0;
}

static int run_sim(const opts *o) {
    sim_args a;
    if (!sim_parse(o, &a)) return 2;
    qn_sim_mode mode = QN_MODE_QUAD;
    if (o->mode && !qn_sim_mode_parse(o->mode, &mode))
        return qn_cli_error("--mode %s: not quad, grid8 or gridvec", o->mode), 2;
    size_t len = 0;
    char *text = read_text(o->positional[0], &len);
    if (!text) return 1;
    if (mode != QN_MODE_QUAD || strncmp(text + strspn(text, " \t\r\n"), "type", 4) == 0)
        return run_sim_session(o, &a, mode, text, len);
    free(text);
    setup s;
    if (!setup_field(o, QN_SIM_DEFAULT_RADIUS, &s)) return setup_free(&s), 1;
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, s.field, s.goal);
    qn_sim_opts so = {0};
    so.units = (uint32_t)a.units;
    so.seed = a.seed;
    so.step = a.step;
    so.threads = (uint32_t)a.threads;
    script sc = {o, qn_level_mesh_mut(s.level), s.field, 0, false};
    if (!check_changes(o, sc.mesh)) return setup_free(&s), 1;
    if (o->nchanges) {
        so.before_step = apply_changes;
        so.before_step_ud = &sc;
    }
    qn_vec2 *spawns = NULL;
    if (o->spawns) {
        spawns = level_spawns(s.level, &so.start_count);
        if (!spawns) {
            setup_free(&s);
            return qn_cli_error("--spawns: the level has no spawn points");
        }
        so.starts = spawns;
    }
    qn_sim_result r;
    qn_status st = qn_sim_run(&w, &so, &r);
    free(spawns);
    if (st != QN_OK) {
        setup_free(&s);
        return qn_cli_error("sim: %s (no reachable start position?)", qn_status_name(st));
    }
    if (sc.failed) {
        setup_free(&s);
        return qn_cli_error("sim: a scripted change could not be applied");
    }
    sim_print(o->positional[0], &s, &r, o->json, &so, sc.applied);
    setup_free(&s);
    return 0;
}

static int cmd_sim(int argc, char **argv) {
    opts o;
    if (!parse_opts(argc, argv, &o)) return 2;
    if (o.help) return fputs(sim_usage, stdout), 0;
    if (o.npos != 1) return fputs(sim_usage, stderr), 2;
    return run_sim(&o);
}

static const char *const demo_usage =
    "usage: quadnav demo [--units N] [--seed S] [--json] | demo --web\n"
    "The bundled town level: 1000 units (by default) run to the plaza; prints the\n"
    "sim summary (see quadnav sim --help). --web prints how to build and open the\n"
    "browser viewer instead.\n";

static const char *const demo_web =
    "The browser viewer (the library compiled to WebAssembly), from the source tree:\n"
    "  bash tools/web.sh build    # installs emscripten if missing; writes build/web/\n"
    "  bash tools/web.sh serve    # then open http://127.0.0.1:8321/\n"
    "URL parameters: level=URL or map=URL, goal=X,Y, units=N, seed=S,\n"
    "mode=quad|grid8|gridvec, side=MODE, frames=N, auto=1 (see README.md).\n";

static int cmd_demo(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--web")) return fputs(demo_web, stdout), 0;
    opts o;
    if (!parse_opts(argc, argv, &o)) return 2;
    if (o.help) return fputs(demo_usage, stdout), 0;
    if (o.npos != 0) return fputs(demo_usage, stderr), 2;
    static char path[4096];
    snprintf(path, sizeof path, "%s/levels/town.json", qn_cli_data_dir());
    o.positional[0] = path;
    o.npos = 1;

    return run_sim(&o);
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

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr), 2;
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return usage(stdout), 0;
    if (!strcmp(argv[1], "--version")) return printf("quadnav %s\n", qn_version_string()), 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    qn_cli_error("unknown command '%s' (quadnav --help lists them)", argv[1]);
    return 2;
}
