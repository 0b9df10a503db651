/*
** cmd_render.c: `quadnav render`: an SVG picture of one goal's field in one
** mode: walls, quads or cells shaded by cost to the goal, portals, flow
** arrows and the trails of simulated units.
**
** Size. The picture must stay small and quick to open for a 1024x1024 map,
** and there is no image library, so every repeated element is merged: one
** <path> per colour bucket (cells as horizontal runs of equal bucket, a few
** bytes each; quads with H/V commands when axis-aligned), one <path> for all
** portals and one for all arrows. Arrows are thinned to about 4000, trails
** to 200 units of at most 400 points, grids above 1024 cells a side are
** shaded in square blocks, and quad outlines and portals are left out when
** quads are too small to see.
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "tool.h"

static const char render_usage[] =
    "usage: quadnav render LEVEL|MAP --goal X,Y|NAME [--mode quad|grid8|gridvec]\n"
    "                      [--units N] [--seed S] [--radius R] [--step D] -o FILE.svg\n"
    "Writes an SVG of the field for one goal: walls (dark background), quads\n"
    "(quad mode, outlined) or cells (grid modes) shaded by cost to the goal\n"
    "(light near the goal, dark blue far, grey unreachable), portals (quad mode,\n"
    "thin red lines), flow arrows, unit trails and the goal (red dot).\n"
    "  --goal      required for a map; a level defaults to its first goal\n"
    "  --mode      quad (default), grid8 (8-direction flow) or gridvec (vector flow)\n"
    "  --units N   units simulated from random reachable starts (default 100,\n"
    "              at most 1000000; trails of the first 200 are drawn)\n"
    "Defaults: seed 1, step 0.2, radius 0.25 (as in every command; at most 0.45 on\nmaps). -o - writes the SVG on stdout.\n"
    "Thinned to stay readable and small (a few MB for 1024x1024): about 4000 flow\n"
    "arrows (every k-th quad, or cells on a k x k lattice), trails of the first\n"
    "200 units with at most 400 points each, and grids wider or taller than 1024\n"
    "cells shaded in blocks of cells. Quad outlines and portals are left out when\n"
    "quads average under 10 pixels across.\n";

enum { MODE_QUAD, MODE_GRID8, MODE_GRIDVEC };

#define MAX_ARROWS 4000u
#define MAX_TRAILS 200u
#define MAX_TRAIL_POINTS 400u
#define SHADE_SIDE 1024u /* largest grid side shaded cell by cell */
#define BUCKETS 24       /* cost colour buckets */
#define PIXELS 1200.0    /* longest side of the picture */

/* ---- arguments ------------------------------------------------------------ */

typedef struct rnd_args {
    const char *path, *goal, *out;
    int mode;
    uint64_t units, seed;
    float radius, step;
} rnd_args;

static int parse_mode(const char *s, int *mode) {
    static const char *const names[] = {"quad", "grid8", "gridvec"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) return *mode = i, 0;
    return qn_cli_error("--mode %s: not quad, grid8 or gridvec", s), 2;
}

enum { R_GOAL, R_MODE, R_UNITS, R_SEED, R_RADIUS, R_STEP, R_OUTPUT };
static const qn_cli_option render_options[] = {
    [R_GOAL] = {"goal", 0, true},     [R_MODE] = {"mode", 0, true},
    [R_UNITS] = {"units", 0, true},   [R_SEED] = {"seed", 0, true},
    [R_RADIUS] = {"radius", 0, true}, [R_STEP] = {"step", 0, true},
    [R_OUTPUT] = {"output", 'o', true},
};
static const qn_cli_spec render_spec =
    QN_CLI_SPEC("render", render_usage, render_options, 1, 1, "LEVEL|MAP");

/* Returns 0, 2 on a usage error (reported), -1 after --help. */
static int parse_args(int argc, char **argv, rnd_args *a) {
    memset(a, 0, sizeof *a);
    a->units = 100;
    a->seed = 1;
    a->radius = QN_CLI_DEFAULT_RADIUS;
    a->step = 0.2f;
    qn_cli_args o;
    int rc = qn_cli_parse(&render_spec, argc, argv, &o);
    if (rc) return rc;
    const char *const *v = o.value;
    a->path = o.pos[0];
    a->goal = v[R_GOAL];
    a->out = v[R_OUTPUT];
    if (!a->out) return qn_cli_error("render: no output file (-o FILE.svg)"), 2;
    if (v[R_MODE] && (rc = parse_mode(v[R_MODE], &a->mode))) return rc;
    if (v[R_UNITS] && (!qn_cli_parse_u64(v[R_UNITS], QN_CLI_MAX_UNITS, &a->units) || !a->units))
        return qn_cli_error("--units %s: not a count from 1 to %u", v[R_UNITS], QN_CLI_MAX_UNITS), 2;
    if (v[R_SEED] && !qn_cli_parse_u64(v[R_SEED], UINT64_MAX, &a->seed))
        return qn_cli_error("--seed %s: not a whole number", v[R_SEED]), 2;
    if (v[R_RADIUS] && !qn_cli_parse_float(v[R_RADIUS], 0.0f, 1e4f, &a->radius))
        return qn_cli_error("--radius %s: not a number in [0, 10000]", v[R_RADIUS]), 2;
    if (v[R_STEP] && !qn_cli_parse_float(v[R_STEP], 1e-4f, 1e4f, &a->step))
        return qn_cli_error("--step %s: not a number in [0.0001, 10000]", v[R_STEP]), 2;
    return 0;
}

/* ---- trails ------------------------------------------------------------------ */

typedef struct trail {
    qn_vec2 *p;
    uint32_t n, cap;
} trail;

typedef struct trails {
    trail *t;
    uint8_t *was_active;
    uint32_t n;
    bool oom;
} trails;

#define TRAIL_EVERY 3u /* steps between recorded points */

static void trail_push(trails *tr, uint32_t i, qn_vec2 p) {
    trail *t = &tr->t[i];
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 64;
        qn_vec2 *q = realloc(t->p, cap * sizeof *q);
        if (!q) {
            tr->oom = true;
            return;
        }
        t->p = q;
        t->cap = cap;
    }
    t->p[t->n++] = p;
}

/* Records every few steps, and the last position of a unit that stopped. */
static void on_step(void *ud, uint32_t step, const qn_vec2 *pos, const uint8_t *active,
                    uint32_t n) {
    trails *tr = ud;
    for (uint32_t i = 0; i < tr->n && i < n; i++) {
        if (!tr->was_active[i]) continue;
        if (!active[i] || (step + 1) % TRAIL_EVERY == 0) trail_push(tr, i, pos[i]);
        tr->was_active[i] = active[i];
    }
}

static void trails_free(trails *tr) {
    for (uint32_t i = 0; tr->t && i < tr->n; i++)
        free(tr->t[i].p);
    free(tr->t);
    free(tr->was_active);
    memset(tr, 0, sizeof *tr);
}

/* ---- the scene ---------------------------------------------------------------- */

typedef struct scene {
    const rnd_args *a;
    qn_terrain t;
    qn_vec2 goal;
    float radius;
    qn_field *quad;
    qn_grid_field *grid;
    qn_sim_world w;
    qn_sim_quad_ctx qctx;
    qn_sim_grid_ctx *gctx;
    qn_sim_result res;
    trails tr;
} scene;

static void scene_free(scene *s) {
    trails_free(&s->tr);
    qn_field_destroy(s->quad);
    qn_grid_field_destroy(s->grid);
    free(s->gctx);
    qn_terrain_free(&s->t);
}

static int scene_goal(scene *s) { return qn_cli_goal(s->t.level, s->a->goal, &s->goal); }

static bool build_field(scene *s) {
    qn_error e;
    qn_status st;
    if (s->a->mode == MODE_QUAD) {
        qn_field_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.radius = s->radius;
        st = qn_field_create(s->t.mesh, &s->goal, 1, &fo, NULL, &s->quad, &e);
        /* the arrows follow the quads' exits, made on first use */
        if (st == QN_OK) st = qn_field_exits(s->quad, &e);
        if (st == QN_OK) qn_sim_world_quad(&s->w, &s->qctx, s->quad, s->goal);
    } else {
        uint32_t x, y;
        if (qn_grid_locate(s->t.grid, s->goal, &x, &y) != QN_OK) {
            qn_cli_error("goal %g,%g is outside the level's grid", (double)s->goal.x,
                         (double)s->goal.y);
            return false;
        }
        uint32_t cell = y * qn_grid_width(s->t.grid) + x;
        st = qn_grid_field_create(s->t.grid, &cell, 1, NULL, NULL, &s->grid, &e);
        qn_flow_kind k = s->a->mode == MODE_GRID8 ? QN_FLOW_DIR8 : QN_FLOW_VECTOR;
        if (st == QN_OK) qn_sim_world_grid(&s->w, s->gctx, s->grid, k, s->goal);
    }
    if (st != QN_OK)
        qn_cli_error("goal %g,%g: %s: %s", (double)s->goal.x, (double)s->goal.y, qn_status_name(st),
                     e.message);
    return st == QN_OK;
}

/* Simulates the units, recording the trails of the first MAX_TRAILS. */
static bool simulate(scene *s) {
    uint32_t n = (uint32_t)s->a->units, kept = n < MAX_TRAILS ? n : MAX_TRAILS;
    qn_vec2 *starts = calloc(n, sizeof *starts);
    s->tr.t = calloc(kept, sizeof *s->tr.t);
    s->tr.was_active = malloc(kept);
    if (!starts || !s->tr.t || !s->tr.was_active) return free(starts), false;
    s->tr.n = kept;
    memset(s->tr.was_active, 1, kept);
    uint64_t rng = s->a->seed;
    for (uint32_t i = 0; i < n; i++) {
        double u1 = qn_rand_unit(&rng), u2 = qn_rand_unit(&rng), u3 = qn_rand_unit(&rng);
        if (!s->w.random_start(s->w.ctx, u1, u2, u3, &starts[i])) starts[i] = s->goal;
        if (i < kept) trail_push(&s->tr, i, starts[i]);
    }
    qn_sim_opts o = {0};
    o.units = n;
    o.starts = starts;
    o.start_count = n;
    o.step = s->a->step;
    o.on_step = on_step;
    o.on_step_ud = &s->tr;
    qn_status st = qn_sim_run(&s->w, &o, &s->res);
    free(starts);
    return st == QN_OK && !s->tr.oom;
}

/* 0, 1 (failure) or 2 (usage), reported. */
static int scene_build(scene *s, const rnd_args *a) {
    memset(s, 0, sizeof *s);
    s->a = a;
    bool quad = a->mode == MODE_QUAD;
    if (!qn_terrain_load(a->path, quad, !quad, &s->t)) return 1;
    int rc = scene_goal(s);
    if (rc) return rc;
    s->radius = qn_terrain_radius(&s->t, a->radius);
    if (!quad && !(s->gctx = calloc(1, sizeof *s->gctx))) return qn_cli_error("out of memory");
    if (!build_field(s)) return 1;
    if (!simulate(s)) return qn_cli_error("simulation: out of memory");
    return 0;
}

/* ---- SVG output ----------------------------------------------------------------- */

typedef struct svg {
    FILE *f;
    qn_rect box; /* world extent drawn */
    double px;   /* world units per pixel */
    int decimals;
} svg;

/* A number with at most `decimals` digits after the point, no trailing zeros. */
static void num(const svg *o, double v) {
    char b[64];
    int n = snprintf(b, sizeof b, "%.*f", o->decimals, v);
    if (n <= 0 || n >= (int)sizeof b) return;
    if (strchr(b, '.')) {
        while (b[n - 1] == '0')
            b[--n] = '\0';
        if (b[n - 1] == '.') b[--n] = '\0';
    }
    if (!strcmp(b, "-0")) strcpy(b, "0");
    fputs(b, o->f);
}

static void pt(const svg *o, qn_vec2 p) {
    num(o, (double)p.x);
    fputc(' ', o->f);
    num(o, (double)p.y);
}

static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        const char *esc = *s == '&'    ? "&amp;"
                          : *s == '<'  ? "&lt;"
                          : *s == '>'  ? "&gt;"
                          : *s == '"'  ? "&quot;"
                          : *s == '\'' ? "&apos;"
                                       : NULL;
        if (esc)
            fputs(esc, f);
        else if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
            fputc(*s, f);
        else
            fputc('?', f); /* control characters are not allowed in XML 1.0 */
    }
}

/* Colour of bucket b of BUCKETS: light yellow near the goal to dark blue. */
static void bucket_colour(int b, char out[8]) {
    static const unsigned char ramp[5][3] = {
        {255, 255, 204}, {161, 218, 180}, {65, 182, 196}, {44, 127, 184}, {37, 52, 148}};
    double t = (double)b / (BUCKETS - 1) * 4.0;
    int i = t >= 4.0 ? 3 : (int)t;
    double f = t - i;
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = (int)lround(ramp[i][k] + f * (ramp[i + 1][k] - ramp[i][k]));
    snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void stroke_class(const svg *o, const char *name, const char *colour, double width_px,
                         const char *extra) {
    fprintf(o->f, ".%s{fill:none;stroke:%s;stroke-width:", name, colour);
    num(o, width_px * o->px);
    fprintf(o->f, ";stroke-linejoin:round;stroke-linecap:round%s}\n", extra);
}

static void write_style(const svg *o) {
    fputs("<style>\n.w{fill:#3a3a3a}\n.un{fill:#b4b4b4}\n.bl{fill:#5e5e5e}\n"
          ".cell{shape-rendering:crispEdges}\n",
          o->f);
    for (int b = 0; b < BUCKETS; b++) {
        char c[8];
        bucket_colour(b, c);
        fprintf(o->f, ".c%d{fill:%s}\n", b, c);
    }
    fputs(".q{stroke:#505050;stroke-width:", o->f);
    num(o, 0.5 * o->px);
    fputs("}\n", o->f);
    stroke_class(o, "pt", "#d62728", 1.0, ";stroke-opacity:0.8");
    stroke_class(o, "ar", "#111111", 0.9, ";stroke-opacity:0.75");
    stroke_class(o, "tr", "#ff7f0e", 1.2, ";stroke-opacity:0.7");
    fputs(".g{fill:#e31a1c;stroke:#ffffff;stroke-width:", o->f);
    num(o, 1.5 * o->px);
    fputs("}\n</style>\n", o->f);
}

static const char *const mode_names[] = {"quad", "grid8", "gridvec"};

static void write_head(const svg *o, const scene *s) {
    double w = (double)(o->box.max.x - o->box.min.x), h = (double)(o->box.max.y - o->box.min.y);
    double side = fmax(w, h);
    fprintf(o->f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"");
    pt(o, o->box.min);
    fputc(' ', o->f);
    num(o, w);
    fputc(' ', o->f);
    num(o, h);
    fprintf(o->f, "\" width=\"%.0f\" height=\"%.0f\">\n<title>quadnav render: ", PIXELS * w / side,
            PIXELS * h / side);
    xml_text(o->f, s->a->path);
    fprintf(o->f, " (%s mode, goal %g,%g)</title>\n<desc>", mode_names[s->a->mode],
            (double)s->goal.x, (double)s->goal.y);
    fprintf(o->f,
            "%u of %u units arrived; %llu wall contacts; %u stuck; stretch mean %.4f, "
            "p95 %.4f</desc>\n",
            s->res.arrived, s->res.units, (unsigned long long)s->res.wall_contacts, s->res.stuck,
            s->res.stretch_mean, s->res.stretch_p95);
    write_style(o);
    fputs("<rect class=\"w\" x=\"", o->f);
    num(o, (double)o->box.min.x);
    fputs("\" y=\"", o->f);
    num(o, (double)o->box.min.y);
    fputs("\" width=\"", o->f);
    num(o, w);
    fputs("\" height=\"", o->f);
    num(o, h);
    fputs("\"/>\n", o->f);
}

/* Bucket of a cost: 0..BUCKETS-1, BUCKETS when unreachable. */
static int bucket_of(double cost, double max_cost) {
    if (!isfinite(cost)) return BUCKETS;
    int b = (int)(cost / max_cost * BUCKETS);
    return b < 0 ? 0 : (b >= BUCKETS ? BUCKETS - 1 : b);
}

static const char *bucket_class(int b, char buf[8]) {
    if (b == BUCKETS) return "un";
    if (b == BUCKETS + 1) return "bl";
    snprintf(buf, 8, "c%d", b);
    return buf;
}

/* Path commands: a move to p, and a line from a to b (H or V when it is
** axis-aligned, which is shorter). */
static void move_to(const svg *o, qn_vec2 p) {
    fputc('M', o->f);
    pt(o, p);
}

static void line_to(const svg *o, qn_vec2 a, qn_vec2 b) {
    if (a.y == b.y) {
        fputc('H', o->f);
        num(o, (double)b.x);
    } else if (a.x == b.x) {
        fputc('V', o->f);
        num(o, (double)b.y);
    } else {
        fputc('L', o->f);
        pt(o, b);
    }
}

/* ---- quad mode ---- */

static void quad_outline(const svg *o, const qn_vec2 k[4]) {
    move_to(o, k[0]);
    for (int i = 1; i < 4; i++)
        line_to(o, k[i - 1], k[i]);
    fputc('Z', o->f);
}

static int quad_bucket(const scene *s, uint32_t q, double max_cost) {
    if (qn_mesh_quad_blocked(s->t.mesh, q)) return BUCKETS + 1;
    return bucket_of((double)qn_field_quad_cost(s->quad, q), max_cost);
}

/* Outlines and portals only help when quads are big enough to see: with
** quads under about 10 pixels across on average (long thin strips on large
** maps) they would cover the shading, so they are left out. */
static bool quads_visible(const svg *o, const scene *s) {
    const qn_mesh *m = s->t.mesh;
    uint32_t n = qn_mesh_quad_count(m);
    double area = 0.0;
    for (uint32_t q = 0; q < n; q++)
        area += (double)qn_mesh_quad_area(m, q);
    return n > 0 && area / n >= 100.0 * o->px * o->px;
}

static void draw_quads(const svg *o, const scene *s, bool outlines) {
    const qn_mesh *m = s->t.mesh;
    uint32_t n = qn_mesh_quad_count(m);
    double max_cost = 0.0;
    for (uint32_t q = 0; q < n; q++) {
        double c = (double)qn_field_quad_cost(s->quad, q);
        if (isfinite(c) && c > max_cost) max_cost = c;
    }
    if (max_cost <= 0.0) max_cost = 1.0;
    for (int b = 0; b <= BUCKETS + 1; b++) {
        bool open = false;
        char buf[8];
        for (uint32_t q = 0; q < n; q++) {
            if (quad_bucket(s, q, max_cost) != b) continue;
            if (!open)
                fprintf(o->f, "<path class=\"%s%s\" d=\"", bucket_class(b, buf),
                        outlines ? " q" : " cell");
            open = true;
            qn_vec2 k[4];
            qn_mesh_quad_corners(m, q, k);
            quad_outline(o, k);
        }
        if (open) fputs("\"/>\n", o->f);
    }
}

static void draw_portals(const svg *o, const scene *s) {
    uint32_t n = qn_mesh_portal_count(s->t.mesh);
    if (n == 0) return;
    fputs("<path class=\"pt\" d=\"", o->f);
    for (uint32_t i = 0; i < n; i++) {
        qn_portal p;
        if (qn_mesh_portal(s->t.mesh, i, &p) != QN_OK) continue;
        move_to(o, p.p0);
        line_to(o, p.p0, p.p1);
    }
    fputs("\"/>\n", o->f);
}

/* ---- grid modes ---- */

/* Per shading block: its bucket, 255 for all walls. Blocks are b x b cells. */
static uint8_t *grid_buckets(const scene *s, uint32_t b, uint32_t *bw, uint32_t *bh) {
    const qn_grid *g = s->t.grid;
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    *bw = (w + b - 1) / b;
    *bh = (h + b - 1) / b;
    uint8_t *out = malloc((size_t)*bw * *bh);
    if (!out) return NULL;
    memset(out, 255, (size_t)*bw * *bh);
    double max_cost = 0.0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            double c = qn_grid_field_cost(s->grid, x, y);
            if (isfinite(c) && c > max_cost) max_cost = c;
        }
    if (max_cost <= 0.0) max_cost = 1.0;
    /* A block takes the bucket of its first passable cell in row-major order. */
    for (uint32_t y = h; y-- > 0;)
        for (uint32_t x = w; x-- > 0;)
            if (qn_grid_cost(g, x, y) != QN_CELL_WALL)
                out[(size_t)(y / b) * *bw + x / b] =
                    (uint8_t)bucket_of(qn_grid_field_cost(s->grid, x, y), max_cost);
    return out;
}

/* A w x h rectangle at (x, y) as a closed subpath. */
static void cell_run(const svg *o, double x, double y, double w, double h) {
    fputc('M', o->f);
    num(o, x);
    fputc(' ', o->f);
    num(o, y);
    fputc('h', o->f);
    num(o, w);
    fputc('v', o->f);
    num(o, h);
    fputs("h-", o->f);
    num(o, w);
    fputc('z', o->f);
}

/* One <path> per bucket: each row's runs of that bucket as rectangles. */
static void draw_cells(const svg *o, const scene *s) {
    const qn_grid *g = s->t.grid;
    uint32_t side = qn_grid_width(g) > qn_grid_height(g) ? qn_grid_width(g) : qn_grid_height(g);
    uint32_t blk = (side + SHADE_SIDE - 1) / SHADE_SIDE, bw, bh;
    uint8_t *bk = grid_buckets(s, blk, &bw, &bh);
    if (!bk) return;
    double cs = (double)qn_grid_cell_size(g) * blk;
    qn_vec2 org = qn_grid_origin(g);
    for (int b = 0; b <= BUCKETS; b++) {
        bool open = false;
        char buf[8];
        for (uint32_t y = 0; y < bh; y++)
            for (uint32_t x = 0; x < bw;) {
                uint32_t e = x;
                while (e < bw && bk[(size_t)y * bw + e] == b)
                    e++;
                if (e == x) {
                    x++;
                    continue;
                }
                if (!open) fprintf(o->f, "<path class=\"%s cell\" d=\"", bucket_class(b, buf));
                open = true;
                cell_run(o, (double)org.x + x * cs, (double)org.y + y * cs, (e - x) * cs, cs);
                x = e;
            }
        if (open) fputs("\"/>\n", o->f);
    }
    free(bk);
}

/* ---- arrows, trails, goal ---- */

/* An arrow of length len centred on c, pointing along unit vector d. */
static void arrow(const svg *o, qn_vec2 c, qn_vec2 d, double len) {
    double hx = (double)d.x * len / 2, hy = (double)d.y * len / 2, hl = 0.35 * len;
    qn_vec2 tail = {(float)((double)c.x - hx), (float)((double)c.y - hy)};
    qn_vec2 tip = {(float)((double)c.x + hx), (float)((double)c.y + hy)};
    move_to(o, tail);
    line_to(o, tail, tip);
    for (int side = -1; side <= 1; side += 2) {
        double a = side * 0.45, ca = cos(a), sa = sin(a);
        double bx = -((double)d.x * ca - (double)d.y * sa),
               by = -((double)d.x * sa + (double)d.y * ca);
        qn_vec2 h = {(float)((double)tip.x + bx * hl), (float)((double)tip.y + by * hl)};
        move_to(o, h);
        line_to(o, h, tip);
    }
}

static void quad_arrows(const svg *o, const scene *s) {
    const qn_mesh *m = s->t.mesh;
    uint32_t n = qn_mesh_quad_count(m), eligible = 0, seen = 0;
    for (uint32_t q = 0; q < n; q++)
        eligible += qn_field_quad_exit(s->quad, q) != QN_NONE;
    uint32_t every = eligible > MAX_ARROWS ? (eligible + MAX_ARROWS - 1) / MAX_ARROWS : 1;
    for (uint32_t q = 0; q < n; q++) {
        if (qn_field_quad_exit(s->quad, q) == QN_NONE || seen++ % every) continue;
        qn_vec2 k[4], dir;
        qn_mesh_quad_corners(m, q, k);
        qn_vec2 c = {(k[0].x + k[1].x + k[2].x + k[3].x) / 4,
                     (k[0].y + k[1].y + k[2].y + k[3].y) / 4};
        uint32_t hint = q;
        if (qn_field_sample(s->quad, c, &hint, &dir) != QN_OK) continue;
        double len = 0.6 * sqrt((double)qn_mesh_quad_area(m, q));
        arrow(o, c, dir, fmax(6.0 * o->px, fmin(len, 40.0 * o->px)));
    }
}

static void grid_arrows(const svg *o, const scene *s) {
    const qn_grid *g = s->t.grid;
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    uint32_t k = (uint32_t)ceil(sqrt((double)s->gctx->reachable / MAX_ARROWS));
    if (k < 1) k = 1;
    qn_flow_kind kind = s->a->mode == MODE_GRID8 ? QN_FLOW_DIR8 : QN_FLOW_VECTOR;
    double len = 0.7 * k * (double)qn_grid_cell_size(g);
    for (uint32_t y = k / 2; y < h; y += k)
        for (uint32_t x = k / 2; x < w; x += k) {
            qn_vec2 c = qn_sim_grid_point(g, x, y, 0.5, 0.5), dir;
            if (qn_grid_field_sample(s->grid, kind, c, NULL, &dir) == QN_OK) arrow(o, c, dir, len);
        }
}

static void draw_trails(const svg *o, const scene *s) {
    for (uint32_t i = 0; i < s->tr.n; i++) {
        const trail *t = &s->tr.t[i];
        if (t->n < 2) continue;
        uint32_t every = (t->n + MAX_TRAIL_POINTS - 1) / MAX_TRAIL_POINTS;
        fputs("<polyline class=\"tr\" points=\"", o->f);
        for (uint32_t j = 0; j < t->n; j++) {
            if (j % every && j + 1 != t->n) continue;
            if (j) fputc(' ', o->f);
            num(o, (double)t->p[j].x);
            fputc(',', o->f);
            num(o, (double)t->p[j].y);
        }
        fputs("\"/>\n", o->f);
    }
}

static void draw_goal(const svg *o, const scene *s) {
    fputs("<circle class=\"g\" cx=\"", o->f);
    num(o, (double)s->goal.x);
    fputs("\" cy=\"", o->f);
    num(o, (double)s->goal.y);
    fputs("\" r=\"", o->f);
    num(o, 6.0 * o->px);
    fputs("\"><title>goal</title></circle>\n", o->f);
}

/* The world extent drawn, with a small margin. */
static qn_rect extent(const scene *s) {
    qn_rect r;
    if (s->a->mode == MODE_QUAD)
        r = qn_mesh_bounds(s->t.mesh);
    else {
        const qn_grid *g = s->t.grid;
        float cs = qn_grid_cell_size(g);
        r.min = qn_grid_origin(g);
        r.max.x = r.min.x + cs * (float)qn_grid_width(g);
        r.max.y = r.min.y + cs * (float)qn_grid_height(g);
    }
    float m = 0.01f * fmaxf(r.max.x - r.min.x, r.max.y - r.min.y);
    r.min.x -= m, r.min.y -= m, r.max.x += m, r.max.y += m;
    return r;
}

/* 0, or 1 (also when the output is the input), reported. */
static int write_svg(const scene *s) {
    svg o = {0};
    qn_cli_output out;
    const qn_cli_input *in = &s->t.in;
    o.box = extent(s);
    double side = fmax((double)(o.box.max.x - o.box.min.x), (double)(o.box.max.y - o.box.min.y));
    o.px = side / PIXELS;
    o.decimals = o.px < 0.001 ? 5 : (o.px < 0.01 ? 4 : (o.px < 0.1 ? 3 : 2));
    int rc = qn_cli_output_open(&out, s->a->out, &in, 1);
    if (rc) return rc;
    o.f = out.f;
    write_head(&o, s);
    if (s->a->mode == MODE_QUAD) {
        bool visible = quads_visible(&o, s);
        draw_quads(&o, s, visible);
        if (visible) draw_portals(&o, s);
    } else {
        draw_cells(&o, s);
    }
    fputs("<path class=\"ar\" d=\"", o.f);
    s->a->mode == MODE_QUAD ? quad_arrows(&o, s) : grid_arrows(&o, s);
    fputs("\"/>\n", o.f);
    draw_trails(&o, s);
    draw_goal(&o, s);
    fputs("</svg>\n", o.f);
    return qn_cli_output_commit(&out);
}

int qn_tool_render(int argc, char **argv) {
    if (qn_tool_wants_crowd(argc, argv)) return qn_tool_crowd(argc, argv);
    rnd_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    scene s;
    rc = scene_build(&s, &a);
    if (!rc) rc = write_svg(&s);
    scene_free(&s);
    return rc;
}
