/*
** cmd_bench.c: `quadnav bench`. Instance build and sampling speed, each
** printed beside a baseline measured in the same run:
**  - instance: the naive algorithm of the flow-field articles (a FIFO open
**    list with a linear "already in the list" scan) over the same portal graph
**    and costs, written here only, and checked to give the same costs;
**  - sampling: the same sampler with naive point location (a scan of every
**    quad), as an embedder without a spatial index would write it.
** Figures are medians over repeated batches; the machine is shared, so read
** the ratios rather than single absolute numbers.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shapes.h"
#include "sim.h"
#include "tool.h"

/* ---- the generated 650-quad level ----------------------------------------- */

enum { GEN_COLS = 27, GEN_ROWS = 26, GEN_HOLES = 52 };

/* A grid of rectangles with uneven column widths and row heights, 52 cells
** left out as walls: 650 quads. Deterministic. */
static qn_mesh *gen_level(void) {
    static qn_vec2 verts[4 * GEN_COLS * GEN_ROWS];
    static uint32_t quads[4 * GEN_COLS * GEN_ROWS];
    static float costs[GEN_COLS * GEN_ROWS];
    float xs[GEN_COLS + 1], ys[GEN_ROWS + 1];
    uint64_t rng = 650;
    xs[0] = ys[0] = 0;
    for (int i = 1; i <= GEN_COLS; i++) xs[i] = xs[i - 1] + 1.0f + (float)(qn_rand_next(&rng) % 4);
    for (int i = 1; i <= GEN_ROWS; i++) ys[i] = ys[i - 1] + 1.0f + (float)(qn_rand_next(&rng) % 4);
    bool hole[GEN_COLS * GEN_ROWS] = {false};
    for (int h = 0; h < GEN_HOLES;) {
        uint32_t c = (uint32_t)(qn_rand_next(&rng) % (GEN_COLS * GEN_ROWS));
        if (c != 0 && !hole[c]) hole[c] = true, h++;
    }
    uint32_t n = 0;
    for (int r = 0; r < GEN_ROWS; r++)
        for (int c = 0; c < GEN_COLS; c++) {
            if (hole[r * GEN_COLS + c]) continue;
            uint32_t v = 4 * n;
            verts[v] = (qn_vec2){xs[c], ys[r]};
            verts[v + 1] = (qn_vec2){xs[c + 1], ys[r]};
            verts[v + 2] = (qn_vec2){xs[c + 1], ys[r + 1]};
            verts[v + 3] = (qn_vec2){xs[c], ys[r + 1]};
            for (uint32_t k = 0; k < 4; k++) quads[v + k] = v + k;
            costs[n] = (qn_rand_next(&rng) % 10) == 0 ? 3.0f : 1.0f;
            n++;
        }
    qn_mesh_desc d = {0};
    d.vertices = verts;
    d.vertex_count = 4 * n;
    d.quads = quads;
    d.quad_count = n;
    d.costs = costs;
    qn_mesh *m = NULL;
    qn_error e;
    if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) qn_cli_error("bench level: %s", e.message);
    return m;
}

/* ---- the naive baseline ------------------------------------------------------- */

typedef struct graph {
    uint32_t np, nq;
    qn_portal *portals;
    qn_vec2 *mid;
    uint32_t *qstart, *qlist; /* portals of each quad */
} graph;

static void graph_free(graph *g) {
    free(g->portals), free(g->mid), free(g->qstart), free(g->qlist);
}

static bool graph_build(const qn_mesh *m, graph *g) {
    memset(g, 0, sizeof *g);
    g->np = qn_mesh_portal_count(m);
    g->nq = qn_mesh_quad_count(m);
    g->portals = calloc(g->np + 1, sizeof *g->portals);
    g->mid = calloc(g->np + 1, sizeof *g->mid);
    g->qstart = calloc(g->nq + 1, sizeof *g->qstart);
    g->qlist = calloc(2 * (size_t)g->np + 1, sizeof *g->qlist);
    if (!g->portals || !g->mid || !g->qstart || !g->qlist) return false;
    for (uint32_t i = 0; i < g->np; i++) {
        qn_mesh_portal(m, i, &g->portals[i]);
        g->mid[i] = (qn_vec2){(g->portals[i].p0.x + g->portals[i].p1.x) * 0.5f,
                              (g->portals[i].p0.y + g->portals[i].p1.y) * 0.5f};
    }
    for (uint32_t q = 0; q < g->nq; q++) {
        uint32_t count;
        qn_mesh_quad_portals(m, q, &g->qlist[g->qstart[q]], g->np * 2 - g->qstart[q], &count);
        g->qstart[q + 1] = g->qstart[q] + count;
    }
    return true;
}

static float pdist(qn_vec2 a, qn_vec2 b) { return hypotf(a.x - b.x, a.y - b.y); }

static bool in_open_list(const uint32_t *ring, uint32_t cap, uint32_t head, uint32_t tail,
                         uint32_t v) {
    for (uint32_t i = head; i != tail; i = (i + 1) % cap)
        if (ring[i] == v) return true;
    return false;
}

/* The articles' algorithm: FIFO open list, linear membership scan, a node
** re-queued whenever its cost drops. Writes per-quad costs. */
static void naive_field(const qn_mesh *m, const graph *g, qn_vec2 goal, uint32_t goal_quad,
                        float *g_cost, uint32_t *ring, float *quad_cost) {
    uint32_t cap = g->np + 1, head = 0, tail = 0;
    for (uint32_t i = 0; i < g->np; i++) g_cost[i] = INFINITY;
    for (uint32_t k = g->qstart[goal_quad]; k < g->qstart[goal_quad + 1]; k++) {
        uint32_t v = g->qlist[k];
        g_cost[v] = qn_mesh_quad_cost(m, goal_quad) * pdist(g->mid[v], goal);
        ring[tail] = v, tail = (tail + 1) % cap;
    }
    while (head != tail) {
        uint32_t u = ring[head];
        head = (head + 1) % cap;
        const uint32_t sides[2] = {g->portals[u].a, g->portals[u].b};
        for (int s = 0; s < 2; s++)
            for (uint32_t k = g->qstart[sides[s]]; k < g->qstart[sides[s] + 1]; k++) {
                uint32_t v = g->qlist[k];
                float alt = g_cost[u] + qn_mesh_quad_cost(m, sides[s]) * pdist(g->mid[u], g->mid[v]);
                if (alt >= g_cost[v]) continue;
                g_cost[v] = alt;
                if (!in_open_list(ring, cap, head, tail, v)) ring[tail] = v, tail = (tail + 1) % cap;
            }
    }
    for (uint32_t q = 0; q < g->nq; q++) {
        quad_cost[q] = q == goal_quad ? 0.0f : INFINITY;
        if (q == goal_quad) continue;
        for (uint32_t k = g->qstart[q]; k < g->qstart[q + 1]; k++)
            quad_cost[q] = fminf(quad_cost[q], g_cost[g->qlist[k]]);
    }
}

/* ---- timing helpers -------------------------------------------------------------- */

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

/* Median over `batches` of the mean microseconds of one field build. */
static double time_builds(const qn_mesh *m, qn_vec2 goal, const qn_field_opts *o, int batches,
                          int per_batch) {
    double t[64];
    if (batches > 64) batches = 64;
    for (int b = 0; b < batches; b++) {
        double t0 = qn_tool_now();
        for (int i = 0; i < per_batch; i++) {
            qn_field *f = NULL;
            qn_field_create(m, &goal, 1, o, NULL, &f, NULL);
            qn_field_destroy(f);
        }
        t[b] = (qn_tool_now() - t0) * 1e6 / per_batch;
    }
    return median(t, batches);
}

/* ---- figures ------------------------------------------------------------------------ */

static bool bench_instance(qn_bench_report *r, const qn_mesh *m, qn_vec2 goal, bool quick) {
    graph g;
    uint32_t gq;
    if (qn_mesh_locate(m, goal, QN_NONE, &gq) != QN_OK || !graph_build(m, &g)) return false;
    float *gc = malloc((g.np + 1) * sizeof *gc), *qc = malloc(g.nq * sizeof *qc);
    uint32_t *ring = malloc((g.np + 1) * sizeof *ring);
    /* The naive algorithm runs the plain graph over portal mid points: check
    ** it against our build of that same model. */
    qn_field_opts mid = {.midpoint_costs = true};
    qn_field *f = NULL;
    bool ok = gc && qc && ring && qn_field_create(m, &goal, 1, &mid, NULL, &f, NULL) == QN_OK;
    if (ok) {
        naive_field(m, &g, goal, gq, gc, ring, qc);
        for (uint32_t q = 0; q < g.nq && ok; q++) {
            float a = qn_field_quad_cost(f, q), b = qc[q];
            if (isfinite(a) != isfinite(b) || (isfinite(a) && fabsf(a - b) > 1e-3f * fmaxf(1, a)))
                ok = !qn_cli_error("bench: naive and heap fields differ at quad %u (%g vs %g)",
                                   q, (double)b, (double)a);
        }
    }
    if (ok) {
        double ours = time_builds(m, goal, NULL, quick ? 5 : 41, quick ? 20 : 200);
        double ours_mid = time_builds(m, goal, &mid, quick ? 5 : 41, quick ? 20 : 200);
        double naive[16];
        int nb = quick ? 3 : 15;
        for (int b = 0; b < nb; b++) {
            double t0 = qn_tool_now();
            naive_field(m, &g, goal, gq, gc, ring, qc);
            naive[b] = (qn_tool_now() - t0) * 1e6;
        }
        qn_bench_add(r, "instance_us_650", ours, "us", "instance build, 650 quads");
        qn_bench_add(r, "instance_us_650_midpoint", ours_mid, "us",
                     "  same, mid-point cost model (the naive one's model)");
        qn_bench_add(r, "naive_instance_us_650", median(naive, nb), "us",
                     "  baseline: FIFO open list + linear scan");
        qn_bench_add(r, "instance_bytes_650", (double)qn_field_bytes(f), "bytes",
                     "  memory per instance, 650 quads");
    }
    qn_field_destroy(f);
    free(gc), free(qc), free(ring);
    graph_free(&g);
    return ok;
}

/* Point location by scanning every quad: the baseline for sampling. */
static uint32_t scan_locate(const qn_mesh *m, const qn_vec2 *corners, qn_vec2 p) {
    uint32_t n = qn_mesh_quad_count(m);
    for (uint32_t q = 0; q < n; q++) {
        const qn_vec2 *c = &corners[4 * q];
        bool in = true;
        for (int i = 0; i < 4 && in; i++) {
            qn_vec2 a = c[i], b = c[(i + 1) & 3];
            in = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x) >= 0.0f;
        }
        if (in) return q;
    }
    return QN_NONE;
}

typedef struct sample_set {
    qn_vec2 *pos, *dirs;
    uint32_t *hints;
    uint8_t *st;
    uint32_t n;
} sample_set;

static double time_batches(const qn_field *f, sample_set *s, int reps, bool hints) {
    double t[32];
    if (reps > 32) reps = 32;
    for (int k = 0; k < reps; k++) {
        if (!hints)
            for (uint32_t i = 0; i < s->n; i++) s->hints[i] = QN_NONE;
        double t0 = qn_tool_now();
        qn_field_sample_batch(f, s->pos, s->dirs, s->st, s->hints, s->n);
        t[k] = (qn_tool_now() - t0) * 1e9 / s->n;
    }
    return median(t, reps);
}

static double time_scan_batches(const qn_field *f, const qn_vec2 *corners, sample_set *s,
                                int reps) {
    double t[32];
    const qn_mesh *m = qn_field_mesh(f);
    if (reps > 32) reps = 32;
    for (int k = 0; k < reps; k++) {
        double t0 = qn_tool_now();
        for (uint32_t i = 0; i < s->n; i++) {
            uint32_t q = scan_locate(m, corners, s->pos[i]);
            s->st[i] = (uint8_t)qn_field_sample(f, s->pos[i], &q, &s->dirs[i]);
        }
        t[k] = (qn_tool_now() - t0) * 1e9 / s->n;
    }
    return median(t, reps);
}

static bool bench_sampling(qn_bench_report *r, const qn_mesh *m, qn_vec2 goal, uint32_t n,
                           bool quick) {
    qn_field *f = NULL;
    if (qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL) != QN_OK) return false;
    sample_set s = {calloc(n, sizeof(qn_vec2)), calloc(n, sizeof(qn_vec2)),
                    calloc(n, sizeof(uint32_t)), calloc(n, 1), n};
    uint32_t nq = qn_mesh_quad_count(m);
    qn_vec2 *corners = calloc(4 * (size_t)nq, sizeof *corners);
    bool ok = s.pos && s.dirs && s.hints && s.st && corners;
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, f, goal);
    uint64_t rng = 42 + n;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = w.random_start(&ctx, qn_rand_unit(&rng), qn_rand_unit(&rng), qn_rand_unit(&rng),
                            &s.pos[i]);
    for (uint32_t q = 0; ok && q < nq; q++) qn_mesh_quad_corners(m, q, &corners[4 * q]);
    if (ok) {
        int reps = quick ? 3 : (n <= 1000 ? 31 : 11);
        char key[64], label[96];
        double cold = time_batches(f, &s, reps, false);
        qn_field_sample_batch(f, s.pos, s.dirs, s.st, s.hints, n); /* fill the hints */
        double warm = time_batches(f, &s, reps, true);
        double scan = time_scan_batches(f, corners, &s, quick ? 1 : (n <= 1000 ? 11 : 3));
        snprintf(key, sizeof key, "sample_ns_per_unit_%u", n);
        snprintf(label, sizeof label, "sampling, %u units, default sampler (discrete: weighted level)", n);
        qn_bench_add(r, key, warm, "ns", label);
        snprintf(key, sizeof key, "sample_ns_per_unit_%u_nohint", n);
        qn_bench_add(r, key, cold, "ns", "  same, no hints (point location each time)");
        snprintf(key, sizeof key, "scan_sample_ns_per_unit_%u", n);
        qn_bench_add(r, key, scan, "ns", "  baseline: point location by scanning all quads");
        /* The article's two-portal edge projection, same units and hints. */
        qn_field_opts two = {.lookahead = 2};
        qn_field *f2 = NULL;
        if (qn_field_create(m, &goal, 1, &two, NULL, &f2, NULL) == QN_OK) {
            snprintf(key, sizeof key, "sample_ns_per_unit_%u_edgeproj", n);
            qn_bench_add(r, key, time_batches(f2, &s, reps, true), "ns",
                         "  same, two-portal edge projection (lookahead 2)");
            qn_field_destroy(f2);
        }
    }
    free(s.pos), free(s.dirs), free(s.hints), free(s.st), free(corners);
    qn_field_destroy(f);
    return ok;
}

static void bench_levels(qn_bench_report *r, bool quick) {
    static const char *const names[] = {"town", "maze", "field"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096], key[64], label[96];
        snprintf(path, sizeof path, "%s/levels/%s.json", qn_cli_data_dir(), names[i]);
        qn_vec2 goal;
        const char *gname;
        qn_level *level = qn_cli_load_level(path);
        if (!level || qn_level_goal(level, 0, &gname, &goal) != QN_OK) {
            qn_cli_error("bench: cannot load %s; skipped", path);
            qn_level_destroy(level);
            continue;
        }
        const qn_mesh *m = qn_level_mesh(level);
        snprintf(key, sizeof key, "instance_us_%s", names[i]);
        snprintf(label, sizeof label, "instance build, %s (%u quads)", names[i],
                 qn_mesh_quad_count(m));
        qn_bench_add(r, key, time_builds(m, goal, NULL, quick ? 3 : 21, quick ? 10 : 100), "us",
                     label);
        qn_level_destroy(level);
    }
}

/* ---- level loading on hostile shapes (issue "Hardening 2") ---------------- */

/* Milliseconds to load one generated level (best of `reps`); -1 on failure. */
static double time_shape_load(qn_shape_text t, int reps) {
    double best = -1;
    for (int i = 0; t.json && i < reps; i++) {
        qn_level *lv = NULL;
        double t0 = qn_tool_now();
        qn_status st = qn_level_load_mem(t.json, t.len, NULL, &lv, NULL);
        double ms = (qn_tool_now() - t0) * 1e3;
        bool right = st == QN_OK && qn_mesh_portal_count(qn_level_mesh(lv)) == t.portals;
        qn_level_destroy(lv);
        if (!right) return -1;
        if (best < 0 || ms < best) best = ms;
    }
    qn_shape_free(&t);
    return best;
}

/* load_ms_* keys; the baseline is a grid of squares with as many quads as
** the largest shape. */
static bool bench_shapes(qn_bench_report *r, bool quick) {
    int reps = quick ? 1 : 3;
    struct {
        const char *key, *label;
        double ms;
    } rows[] = {
        {"load_ms_squares_50176", "level load, 224x224 squares (baseline)",
         time_shape_load(qn_shape_squares(224), reps)},
        {"load_ms_band_1000", "level load, diagonal band, 1,000 quads",
         time_shape_load(qn_shape_band(1000), reps)},
        {"load_ms_kites_8000", "level load, 8,000 kites round a vertex",
         time_shape_load(qn_shape_kites(8000), reps)},
        {"load_ms_long_20000", "level load, long quad + 20,000 on one edge",
         time_shape_load(qn_shape_long(20000), reps)},
        {"load_ms_long_50000", "level load, long quad + 50,000 on one edge",
         time_shape_load(qn_shape_long(50000), reps)},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (rows[i].ms < 0) return false;
        qn_bench_add(r, rows[i].key, rows[i].ms, "ms", rows[i].label);
    }
    return true;
}

/* ---- output ------------------------------------------------------------------------ */

static int print_report(const qn_bench_report *r, bool json) {
    if (json) {
        cJSON *o = cJSON_CreateObject();
        for (int i = 0; i < r->count; i++) qn_json_put_num(o, r->items[i].key, r->items[i].value);
        return qn_json_emit(o);
    }
    for (int i = 0; i < r->count; i++)
        printf("%-56s %12.3f %-5s  %s\n", r->items[i].label, r->items[i].value, r->items[i].unit,
               r->items[i].key);
    return 0;
}

static const char bench_usage[] =
    "usage: quadnav bench [--json] [--quick] [--no-grid] [--no-live] [--no-crowd]\n"
    "       quadnav bench --map FILE.map [--json]\n"
    "Instance build time on a generated 650-quad level and each bundled level,\n"
    "sampling time per unit for 1,000 and 100,000 units, and grid integration\n"
    "fields, repair after a change, the destination cache and threads, each\n"
    "beside a baseline measured in the same run. --quick runs few\n"
    "repetitions (a smoke test, not a measurement). Each key names its unit\n"
    "(_ms, _us, _ns; bytes, counts and ratios otherwise). A progress line goes\n"
    "to stderr when it is a terminal.\n"
    "With --map, only the big-world figures on that MovingAI map: import_ms,\n"
    "quads, mesh_bytes_per_quad, level_load_ms, bake_load_ms,\n"
    "mesh_cache_ms, mesh_cache_mb and mesh_cache_build_peak_mb (the mesh's\n"
    "caches for its first exact search: their build's time, and MB kept and\n"
    "at the build's peak, above the mesh; full_instance_ms includes that\n"
    "build, on a mesh loaded afresh),\n"
    "level_json_mb, level_load_peak_mb and bake_load_peak_mb (the peak\n"
    "memory of `quadnav info` on the level JSON and on the baked mesh, run as\n"
    "child processes), full_instance_ms, full_instance_bytes, grid_field_ms,\n"
    "grid_field_bytes, the grid tiles' and hierarchical instances' figures,\n"
    "peak_rss_mb (the whole run) and peak_rss_mb_after_<part> (the run's\n"
    "peak after each part). Make a 4096x4096 map with\n"
    "tools/tile_map.py MAP 8 OUT.map.\n";

enum { B_JSON, B_QUICK, B_NO_GRID, B_NO_LIVE, B_NO_CROWD, B_MAP };
static const qn_cli_option bench_options[] = {
    [B_JSON] = {"json", 0, false},
    [B_QUICK] = {"quick", 0, false},
    [B_NO_GRID] = {"no-grid", 0, false},
    [B_NO_LIVE] = {"no-live", 0, false},
    [B_NO_CROWD] = {"no-crowd", 0, false},
    [B_MAP] = {"map", 0, true},
};
static const qn_cli_spec bench_spec = QN_CLI_SPEC("bench", bench_usage, bench_options, 0, 0, "");

int qn_tool_bench(int argc, char **argv) {
    qn_cli_args o;
    int rc = qn_cli_parse(&bench_spec, argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    bool json = o.value[B_JSON], quick = o.value[B_QUICK];
    bool grid = !o.value[B_NO_GRID], live = !o.value[B_NO_LIVE], crowd = !o.value[B_NO_CROWD];
    qn_cli_progress_state pg = {0};
    static qn_bench_report r;
    r.count = 0;
    if (o.value[B_MAP]) {
        rc = qn_tool_bench_map(&r, o.value[B_MAP]);
        return rc ? rc : print_report(&r, json);
    }
    qn_mesh *m = gen_level();
    if (!m) return 1;
    qn_rect b = qn_mesh_bounds(m);
    qn_vec2 goal = {b.min.x + 0.5f, b.min.y + 0.5f}; /* cell 0 is never a hole */
    qn_cli_progress(&pg, "bench: parts done", 0, 6);
    bool ok = bench_instance(&r, m, goal, quick);
    ok = ok && bench_sampling(&r, m, goal, 1000, quick);
    ok = ok && bench_sampling(&r, m, goal, 100000, quick);
    qn_mesh_destroy(m);
    if (!ok) return qn_cli_progress_end(&pg), qn_cli_error("bench failed");
    bench_levels(&r, quick);
    qn_cli_progress(&pg, "bench: parts done", 1, 6);
    if (qn_tool_bench_exact(&r, quick) != 0) rc = qn_cli_error("bench: exact part failed");
    if (!rc && !bench_shapes(&r, quick))
        rc = qn_cli_error("bench: a generated level failed to load");
    qn_cli_progress(&pg, "bench: parts done", 2, 6);
    if (!rc && grid && qn_tool_bench_grid(&r, quick) != 0)
        rc = qn_cli_error("bench: grid part failed");
    qn_cli_progress(&pg, "bench: parts done", 3, 6);
    if (!rc && live && qn_tool_bench_live(&r, quick) != 0)
        rc = qn_cli_error("bench: live part failed");
    qn_cli_progress(&pg, "bench: parts done", 4, 6);
    if (!rc && live && qn_tool_bench_path(&r, quick) != 0)
        rc = qn_cli_error("bench: path part failed");
    qn_cli_progress(&pg, "bench: parts done", 5, 6);
    if (!rc && crowd && qn_tool_bench_crowd(&r, quick) != 0)
        rc = qn_cli_error("bench: crowd part failed");
    qn_cli_progress_end(&pg);
    return rc ? rc : print_report(&r, json);
}
