/*
** cmd_crowd.c: the crowd forms of `quadnav sim --crowd`, `quadnav demo
** --crowd` and `quadnav render --crowd`, and the crowd figures of `quadnav
** bench`. The commands reach here through one hook each (qn_tool_wants_crowd).
*/
#include <math.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "crowd_scene.h"
#include "tool.h"

static const char crowd_usage[] =
    "usage: quadnav sim --crowd (LEVEL [--goal X,Y|NAME] | --scenario NAME)\n"
    "                   [--units N] [--seed S] [--radius R] [--threads N] [--steps N] [--json]\n"
    "       quadnav demo --crowd [--units N] [--seed S] [--threads N] [--json]\n"
    "       quadnav render --crowd (LEVEL [--goal G] | --scenario NAME) [...] -o FILE.svg\n"
    "Units with bodies (the qn_crowd layer): each follows its group's instance,\n"
    "avoids the others (ORCA) and the walls, and arrives in a goal region sized\n"
    "for its group, where units pack without stacking. On a LEVEL, N units\n"
    "(default 1000, radius 0.25, max speed 1.5, step 0.1 s) start at random places\n"
    "the goal can be reached from, clear of walls and of one another (or the\n"
    "command says the level cannot hold them) and run to --goal (default: the\n"
    "level's first goal). The region holds their discs at a packing of 0.25 in\n"
    "ground the goal's field reaches (qn_field_region_radius: along a maze's\n"
    "corridors it reaches far); the budget is 8000 steps, or 4 x the farthest\n"
    "unit's cost to the goal over a step at full speed, plus 400, when more.\n"
    "Scenarios (generated; step budget in steps of the scenario's dt):\n"
    "  doorway      1000 units through a door 4 radii wide (budget 30000 x 0.1 s)\n"
    "  counterflow  2 x 500 units swap 40 x 40 rooms through a corridor 60 long\n"
    "               and 6 wide (budget 8000 x 0.1 s)\n"
    "  crossroads   4 x 250 units cross a plus of arms 12 wide and 60 long to the\n"
    "               squares at the opposite ends (6000 x 0.1 s)\n"
    "  formation    a leader on its qn_path_find path and 11 followers in a wedge,\n"
    "               town level, upper street into the plaza (1500 x 0.1 s)\n"
    "  circle1000   1000 units of radius 0.5, 3.2 radii apart on a ring, swap to the\n"
    "               antipodes (speed 2, step 0.25 s; budget: twice the crossing\n"
    "               time plus 400 steps)\n"
    "  circle10000  the same with 10000 units\n"
    "Reports: arrived (stopped in the goal region or at its rim), stuck (not arrived within\n"
    "the budget), wall_contacts (moves that had to slide along a wall),\n"
    "overlap_pairs (pairs deeper into each other than 10 % of the sum of radii,\n"
    "summed over steps), overlap_rate (overlap_pairs / (units x steps)),\n"
    "max_overlap (deepest, as a share of the sum of radii), steps, and\n"
    "step_us_per_1000 (CPU time of qn_crowd_step per 1,000 units on one thread;\n"
    "wall time with --threads above 1). The formation adds, until the leader\n"
    "enters its arrival region: slot_error_mean (radii, on open ground, once\n"
    "formed) and reform_s_max (longest time in seconds from reaching open ground\n"
    "after a squeeze until the mean slot error is under one radius again).\n"
    "--steps caps the steps (default: the budget).\n";

typedef struct crowd_args {
    const char *path, *goal, *scenario, *out;
    uint64_t units, seed, threads, steps;
    float radius;
    bool json;
} crowd_args;

bool qn_tool_wants_crowd(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--crowd")) return true;
    return false;
}

/* One table for the three crowd forms (--crowd itself is one of them). */
enum {
    CR_CROWD, CR_GOAL, CR_SCENARIO, CR_OUTPUT, CR_UNITS, CR_SEED, CR_THREADS, CR_STEPS,
    CR_RADIUS, CR_JSON
};
static const qn_cli_option crowd_options[] = {
    [CR_CROWD] = {"crowd", 0, false},     [CR_GOAL] = {"goal", 0, true},
    [CR_SCENARIO] = {"scenario", 0, true}, [CR_OUTPUT] = {"output", 'o', true},
    [CR_UNITS] = {"units", 0, true},      [CR_SEED] = {"seed", 0, true},
    [CR_THREADS] = {"threads", 0, true},  [CR_STEPS] = {"steps", 0, true},
    [CR_RADIUS] = {"radius", 0, true},    [CR_JSON] = {"json", 0, false},
};

static int bad_value(const char *flag, const char *v) {
    qn_cli_error("--%s %s: bad value (see quadnav sim --crowd --help)", flag, v);
    return 2;
}

/* 0, -1 after --help, 2 on a usage error (reported). */
static int parse_args(int argc, char **argv, crowd_args *a) {
    memset(a, 0, sizeof *a);
    a->seed = 1;
    a->threads = 1;
    a->radius = QN_CLI_DEFAULT_RADIUS;
    qn_cli_spec spec = QN_CLI_SPEC(argv[0], crowd_usage, crowd_options, 0, 1, "LEVEL");
    qn_cli_args o;
    int rc = qn_cli_parse(&spec, argc, argv, &o);
    if (rc) return rc;
    const char *const *v = o.value;
    a->path = o.npos ? o.pos[0] : NULL;
    a->goal = v[CR_GOAL];
    a->scenario = v[CR_SCENARIO];
    a->out = v[CR_OUTPUT];
    a->json = v[CR_JSON] != NULL;
    if (v[CR_UNITS] && (!qn_cli_parse_u64(v[CR_UNITS], QN_CROWD_MAX_UNITS, &a->units) || !a->units))
        return bad_value("units", v[CR_UNITS]);
    if (v[CR_SEED] && !qn_cli_parse_u64(v[CR_SEED], UINT64_MAX, &a->seed))
        return bad_value("seed", v[CR_SEED]);
    if (v[CR_THREADS] && (!qn_cli_parse_u64(v[CR_THREADS], 64, &a->threads) || !a->threads))
        return bad_value("threads", v[CR_THREADS]);
    if (v[CR_STEPS] && !qn_cli_parse_u64(v[CR_STEPS], 10000000, &a->steps))
        return bad_value("steps", v[CR_STEPS]);
    if (v[CR_RADIUS] && !qn_cli_parse_float(v[CR_RADIUS], 0.01f, 100.0f, &a->radius))
        return bad_value("radius", v[CR_RADIUS]);
    return 0;
}

static int build(const crowd_args *a, qn_crowd_scene *s) {
    if (a->scenario) return qn_crowd_scene_build(s, a->scenario, (uint32_t)a->units, a->seed, NULL);
    return qn_crowd_scene_level(s, a->path, a->goal, a->units ? (uint32_t)a->units : 1000, a->seed,
                                a->radius);
}

static int print_metrics(const crowd_args *a, const qn_crowd_scene *s,
                          const qn_crowd_metrics *m) {
    double rate = m->units && m->steps ? (double)m->overlap_pairs / ((double)m->units * m->steps) : 0.0;
    if (a->json) {
        cJSON *o = cJSON_CreateObject();
        if (a->path) qn_json_put_str(o, "level", a->path);
        else qn_json_put(o, "level", cJSON_CreateNull());
        qn_json_put_str(o, "scenario", s->name);
        qn_json_put_uint(o, "units", m->units);
        qn_json_put_uint(o, "arrived", m->arrived);
        qn_json_put_uint(o, "stuck", m->stuck);
        qn_json_put_uint(o, "wall_contacts", m->wall_contacts);
        qn_json_put_uint(o, "overlap_pairs", m->overlap_pairs);
        qn_json_put_num(o, "overlap_rate", rate);
        qn_json_put_num(o, "max_overlap", m->max_overlap);
        qn_json_put_uint(o, "steps", m->steps);
        qn_json_put_uint(o, "step_budget", s->budget);
        qn_json_put_float(o, "dt", s->dt);
        qn_json_put_float(o, "radius", s->radius);
        qn_json_put_num(o, "step_us_per_1000", m->step_us_per_1000);
        qn_json_put_num(o, "step_us_mean", m->step_us_mean);
        qn_json_put_uint(o, "threads", a->threads);
        if (s->leader != QN_NONE) {
            qn_json_put_num(o, "slot_error_mean", m->slot_error_mean);
            qn_json_put_num(o, "reform_s_max", m->reform_s_max);
        }
        return qn_json_emit(o);
    }
    printf("scenario          %s%s%s\n", s->name, a->path ? " " : "", a->path ? a->path : "");
    printf("units             %u (radius %g, step %g s)\n", m->units, (double)s->radius,
           (double)s->dt);
    printf("arrived           %u (%.1f %%)\n", m->arrived, m->units ? 100.0 * m->arrived / m->units : 0.0);
    printf("stuck             %u\n", m->stuck);
    printf("wall_contacts     %llu\n", (unsigned long long)m->wall_contacts);
    printf("overlap_pairs     %llu (%.5f per unit-step)\n", (unsigned long long)m->overlap_pairs, rate);
    printf("max_overlap       %.4f of the sum of radii\n", m->max_overlap);
    printf("steps             %u (budget %u)\n", m->steps, s->budget);
    printf("step_us_per_1000  %.1f (%.1f us per step, %u thread%s)\n", m->step_us_per_1000,
           m->step_us_mean, (unsigned)a->threads, a->threads > 1 ? "s" : "");
    if (s->leader != QN_NONE)
        printf("slot_error_mean   %.3f radii on open ground\nreform_s_max      %.2f s\n",
               m->slot_error_mean, m->reform_s_max);
    return fflush(stdout) == 0 ? 0 : qn_cli_error("stdout: write error");
}

/* ---- render ----------------------------------------------------------------- */

#define TRAIL_UNITS 300u
#define TRAIL_POINTS 400u

typedef struct trails {
    uint32_t n, every, len[TRAIL_UNITS];
    qn_vec2 *pts; /* TRAIL_UNITS x TRAIL_POINTS */
} trails;

static void on_step(void *ud, const qn_crowd_scene *s, uint32_t step) {
    trails *t = ud;
    if (step % t->every) return;
    uint32_t bound = qn_crowd_id_bound(s->crowd);
    uint32_t stride = bound > TRAIL_UNITS ? bound / TRAIL_UNITS : 1;
    for (uint32_t k = 0; k < TRAIL_UNITS && k * stride < bound; k++) {
        qn_crowd_unit u;
        if (t->len[k] >= TRAIL_POINTS || qn_crowd_get(s->crowd, k * stride, &u) != QN_OK) continue;
        t->pts[k * TRAIL_POINTS + t->len[k]++] = u.position;
    }
}

static void svg_quads(FILE *f, const qn_mesh *m) {
    fprintf(f, "<path class=\"q\" d=\"");
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        qn_vec2 k[4];
        qn_mesh_quad_corners(m, q, k);
        fprintf(f, "M%.2f %.2fL%.2f %.2fL%.2f %.2fL%.2f %.2fZ", (double)k[0].x, (double)k[0].y,
                (double)k[1].x, (double)k[1].y, (double)k[2].x, (double)k[2].y, (double)k[3].x,
                (double)k[3].y);
    }
    fprintf(f, "\"/>\n");
}

static int write_svg(const crowd_args *a, const qn_crowd_scene *s, const trails *t,
                     const qn_cli_input *in) {
    qn_cli_output out;
    int rc = qn_cli_output_open(&out, a->out, &in, in ? 1 : 0);
    if (rc) return rc;
    FILE *f = out.f;
    qn_rect b = qn_mesh_bounds(s->mesh);
    double w = (double)(b.max.x - b.min.x), h = (double)(b.max.y - b.min.y);
    double px = 1200.0 / (w > h ? w : h);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"%.2f %.2f %.2f %.2f\">\n<style>.q{fill:#e8e4d8;stroke:#b8b0a0;"
               "stroke-width:%.3f}.t{fill:none;stroke-width:%.3f;stroke-opacity:.5}"
               ".u{stroke:#222;stroke-width:%.3f}</style>\n<rect x=\"%.2f\" y=\"%.2f\" "
               "width=\"%.2f\" height=\"%.2f\" fill=\"#333\"/>\n",
            w * px, h * px, (double)b.min.x, (double)b.min.y, w, h, 1.0 / px, 1.0 / px,
            0.5 / px, (double)b.min.x, (double)b.min.y, w, h);
    svg_quads(f, s->mesh);
    static const char *const colours[4] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
    for (uint32_t k = 0; k < TRAIL_UNITS; k++) {
        if (t->len[k] < 2) continue;
        qn_crowd_unit u;
        uint32_t bound = qn_crowd_id_bound(s->crowd);
        uint32_t stride = bound > TRAIL_UNITS ? bound / TRAIL_UNITS : 1;
        qn_crowd_get(s->crowd, k * stride, &u);
        fprintf(f, "<path class=\"t\" stroke=\"%s\" d=\"", colours[u.group % 4]);
        for (uint32_t i = 0; i < t->len[k]; i++)
            fprintf(f, "%c%.2f %.2f", i ? 'L' : 'M', (double)t->pts[k * TRAIL_POINTS + i].x,
                    (double)t->pts[k * TRAIL_POINTS + i].y);
        fprintf(f, "\"/>\n");
    }
    uint32_t bound = qn_crowd_id_bound(s->crowd);
    for (uint32_t id = 0; id < bound && id < 20000; id++) {
        qn_crowd_unit u;
        if (qn_crowd_get(s->crowd, id, &u) != QN_OK) continue;
        fprintf(f, "<circle class=\"u\" cx=\"%.3f\" cy=\"%.3f\" r=\"%.3f\" fill=\"%s\"/>\n",
                (double)u.position.x, (double)u.position.y, (double)u.radius,
                colours[u.group % 4]);
    }
    fprintf(f, "</svg>\n");
    return qn_cli_output_commit(&out);
}

static int render(const crowd_args *a, qn_crowd_scene *s) {
    trails t;
    memset(&t, 0, sizeof t);
    t.every = s->budget / TRAIL_POINTS + 1;
    t.pts = calloc((size_t)TRAIL_UNITS * TRAIL_POINTS, sizeof *t.pts);
    if (!t.pts) return qn_cli_error("render: out of memory");
    qn_crowd_metrics m;
    int rc = qn_crowd_scene_run(s, (uint32_t)a->threads, (uint32_t)a->steps, &m, on_step, &t);
    qn_cli_input in;
    memset(&in, 0, sizeof in);
    struct stat st;
    if (a->path && stat(a->path, &st) == 0) { /* the level, never overwritten */
        in.path = a->path;
        in.has_id = true;
        in.dev = (uint64_t)st.st_dev;
        in.ino = (uint64_t)st.st_ino;
    }
    if (rc == 0) rc = write_svg(a, s, &t, in.has_id ? &in : NULL);
    free(t.pts);
    return rc;
}

int qn_tool_crowd(int argc, char **argv) {
    crowd_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    bool demo = !strcmp(argv[0], "demo"), draw = !strcmp(argv[0], "render");
    static char town[4096];
    if (demo && !a.path && !a.scenario) {
        snprintf(town, sizeof town, "%s/levels/town.json", qn_cli_data_dir());
        a.path = town;
    }
    if (!a.path == !a.scenario)
        return qn_cli_error("%s --crowd: give a LEVEL or --scenario NAME (not both)", argv[0]), 2;
    if (draw && !a.out) return qn_cli_error("render --crowd: -o FILE.svg is required"), 2;
    qn_crowd_scene s;
    if ((rc = build(&a, &s))) return qn_crowd_scene_free(&s), rc;
    if (draw) rc = render(&a, &s);
    else {
        qn_crowd_metrics m;
        rc = qn_crowd_scene_run(&s, (uint32_t)a.threads, (uint32_t)a.steps, &m, NULL, NULL);
        if (rc == 0) rc = print_metrics(&a, &s, &m);
    }
    qn_crowd_scene_free(&s);
    return rc;
}
