/*
** bench_exact.c: `quadnav bench` figures for exact instances (shortest path
** maps), each beside the discrete instance measured in the same run on the
** same level: build time and bytes on a 650-quad level of uniform cost and
** on a generated level of about 100,000 quads, and sampling time per unit
** at 1,000 and 100,000 units.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "tool.h"

/* A grid of cols x rows rectangles of uneven widths and heights, one cell
** in `hole_one_in` left out (at random, never cell 0), every quad costing 1. */
static qn_mesh *uniform_level(int cols, int rows, uint32_t hole_one_in, uint64_t seed) {
    size_t cells = (size_t)cols * (size_t)rows;
    qn_vec2 *verts = malloc(4 * cells * sizeof *verts);
    uint32_t *quads = malloc(4 * cells * sizeof *quads);
    float *xs = malloc(((size_t)cols + 1) * sizeof *xs), *ys = malloc(((size_t)rows + 1) * sizeof *ys);
    qn_mesh *m = NULL;
    if (verts && quads && xs && ys) {
        uint64_t rng = seed;
        xs[0] = ys[0] = 0;
        for (int i = 1; i <= cols; i++) xs[i] = xs[i - 1] + 1.0f + (float)(qn_rand_next(&rng) % 4);
        for (int i = 1; i <= rows; i++) ys[i] = ys[i - 1] + 1.0f + (float)(qn_rand_next(&rng) % 4);
        uint32_t n = 0;
        for (size_t c = 0; c < cells; c++) {
            if (c != 0 && qn_rand_next(&rng) % hole_one_in == 0) continue;
            int x = (int)(c % (size_t)cols), y = (int)(c / (size_t)cols);
            qn_vec2 k[4] = {{xs[x], ys[y]}, {xs[x + 1], ys[y]}, {xs[x + 1], ys[y + 1]}, {xs[x], ys[y + 1]}};
            for (uint32_t i = 0; i < 4; i++) verts[4 * n + i] = k[i], quads[4 * n + i] = 4 * n + i;
            n++;
        }
        qn_mesh_desc d = {0};
        d.vertices = verts;
        d.vertex_count = 4 * n;
        d.quads = quads;
        d.quad_count = n;
        qn_error e;
        if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) qn_cli_error("bench level: %s", e.message);
    }
    free(verts), free(quads), free(xs), free(ys);
    return m;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median over `reps` runs of the microseconds of one field build. */
static double build_us(const qn_mesh *m, qn_vec2 goal, const qn_field_opts *o, int reps,
                       size_t *bytes) {
    double t[64];
    reps = reps > 64 ? 64 : reps;
    for (int k = 0; k < reps; k++) {
        qn_field *f = NULL;
        double t0 = qn_tool_now();
        qn_status st = qn_field_create(m, &goal, 1, o, NULL, &f, NULL);
        t[k] = (qn_tool_now() - t0) * 1e6;
        if (st != QN_OK) return -1.0;
        if (bytes) *bytes = qn_field_bytes(f);
        qn_field_destroy(f);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_d);
    return t[reps / 2];
}

/* A unit of sample_ns, for sorting: its place and quad hint. */
typedef struct placed {
    qn_vec2 p;
    uint32_t hint;
} placed;

/* By quad, then from left to right within the quad. */
static int cmp_placed(const void *a, const void *b) {
    const placed *x = a, *y = b;
    if (x->hint != y->hint) return x->hint < y->hint ? -1 : 1;
    return x->p.x < y->p.x ? -1 : x->p.x > y->p.x;
}

/* Puts the units in spatial order: by quad, then by x (false: out of memory). */
static bool sort_by_quad(qn_vec2 *pos, uint32_t *hints, uint32_t n) {
    placed *u = malloc((size_t)n * sizeof *u);
    if (!u) return false;
    for (uint32_t i = 0; i < n; i++)
        u[i] = (placed){pos[i], hints[i]};
    qsort(u, n, sizeof *u, cmp_placed);
    for (uint32_t i = 0; i < n; i++)
        pos[i] = u[i].p, hints[i] = u[i].hint;
    free(u);
    return true;
}

/* Median over `reps` batches of the nanoseconds per unit of one batch
** sample of n units at random reachable places, quad hints kept; in the
** order drawn, or (sorted) in spatial order, as a game that keeps its
** units sorted by quad would sample them. */
static double sample_ns(const qn_field *f, qn_vec2 goal, uint32_t n, int reps, bool sorted) {
    qn_vec2 *pos = calloc(n, sizeof *pos), *dirs = calloc(n, sizeof *dirs);
    uint32_t *hints = calloc(n, sizeof *hints);
    uint8_t *st = calloc(n, 1);
    double t[32], out = -1.0;
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, f, goal);
    uint64_t rng = 42 + n;
    bool ok = pos && dirs && hints && st;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = w.random_start(&ctx, qn_rand_unit(&rng), qn_rand_unit(&rng), qn_rand_unit(&rng), &pos[i]);
    if (ok) {
        for (uint32_t i = 0; i < n; i++) hints[i] = QN_NONE;
        qn_field_sample_batch(f, pos, dirs, st, hints, n); /* fill the hints */
        ok = !sorted || sort_by_quad(pos, hints, n);
    }
    if (ok) {
        reps = reps > 32 ? 32 : reps;
        for (int k = 0; k < reps; k++) {
            double t0 = qn_tool_now();
            qn_field_sample_batch(f, pos, dirs, st, hints, n);
            t[k] = (qn_tool_now() - t0) * 1e9 / n;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_d);
        out = t[reps / 2];
    }
    free(pos), free(dirs), free(hints), free(st);
    return out;
}

/* Median over `reps` runs of the microseconds of making the 650-quad
** level (its arrays and qn_mesh_create); -1 when it fails. */
static double mesh_us(int reps) {
    double t[64];
    reps = reps > 64 ? 64 : reps;
    for (int k = 0; k < reps; k++) {
        double t0 = qn_tool_now();
        qn_mesh *m = uniform_level(27, 26, 14, 650);
        t[k] = (qn_tool_now() - t0) * 1e6;
        if (!m) return -1.0;
        qn_mesh_destroy(m);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_d);
    return t[reps / 2];
}

static bool bench_650(qn_bench_report *r, bool quick) {
    double made = mesh_us(quick ? 5 : 41);
    if (made >= 0.0)
        qn_bench_add(r, "mesh_create_us_650", made, "us",
                     "making the 650-quad level's mesh (its arrays and qn_mesh_create)");
    qn_mesh *m = uniform_level(27, 26, 14, 650);
    if (!m) return false;
    qn_vec2 goal = qn_sim_quad_centre(m, 0);
    qn_field_opts disc = {.discrete = true};
    size_t eb = 0, db = 0;
    int reps = quick ? 5 : 41;
    double e = build_us(m, goal, NULL, reps, &eb), d = build_us(m, goal, &disc, reps, &db);
    qn_field *fe = NULL, *fd = NULL;
    bool ok = e >= 0 && d >= 0 && qn_field_create(m, &goal, 1, NULL, NULL, &fe, NULL) == QN_OK &&
              qn_field_create(m, &goal, 1, &disc, NULL, &fd, NULL) == QN_OK;
    if (ok) {
        char label[96];
        snprintf(label, sizeof label, "exact instance build, %u quads of uniform cost",
                 qn_mesh_quad_count(m));
        qn_bench_add(r, "exact_instance_us_650", e, "us", label);
        qn_bench_add(r, "discrete_instance_us_650", d, "us", "  baseline: discrete instance, same level");
        qn_bench_add(r, "exact_bytes_650", (double)eb, "bytes", "  memory per exact instance");
        qn_bench_add(r, "exact_bytes_per_quad_650", (double)eb / qn_mesh_quad_count(m), "bytes",
                     "  same, per quad");
        qn_bench_add(r, "discrete_bytes_650", (double)db, "bytes", "  baseline: discrete instance");
        const uint32_t ns[2] = {1000, 100000};
        for (int i = 0; i < 2; i++) {
            char key[64];
            int sr = quick ? 3 : (ns[i] <= 1000 ? 31 : 11);
            snprintf(key, sizeof key, "exact_sample_ns_per_unit_%u", ns[i]);
            snprintf(label, sizeof label, "sampling, %u units, default sampler (exact), hints kept", ns[i]);
            qn_bench_add(r, key, sample_ns(fe, goal, ns[i], sr, false), "ns", label);
            snprintf(key, sizeof key, "discrete_sample_ns_per_unit_%u", ns[i]);
            qn_bench_add(r, key, sample_ns(fd, goal, ns[i], sr, false), "ns",
                         "  baseline: discrete instance, funnel sampler, same units");
        }
        /* The 100,000 units again, in spatial order. */
        double by_quad = sample_ns(fe, goal, ns[1], quick ? 3 : 11, true);
        if (by_quad >= 0.0)
            qn_bench_add(r, "exact_sample_ns_per_unit_100000_by_quad", by_quad, "ns",
                         "  exact, same units sorted by quad, then x");
    }
    qn_field_destroy(fe);
    qn_field_destroy(fd);
    qn_mesh_destroy(m);
    return ok;
}

static bool bench_100k(qn_bench_report *r, bool quick) {
    qn_mesh *m = uniform_level(330, 330, 14, 100000);
    if (!m) return false;
    qn_vec2 goal = qn_sim_quad_centre(m, qn_mesh_quad_count(m) / 2);
    qn_field_opts disc = {.discrete = true};
    size_t eb = 0;
    int reps = quick ? 1 : 3;
    double e = build_us(m, goal, NULL, reps, &eb), d = build_us(m, goal, &disc, reps, NULL);
    char label[96];
    snprintf(label, sizeof label, "exact instance build, %u quads of uniform cost", qn_mesh_quad_count(m));
    if (e >= 0 && d >= 0) {
        qn_bench_add(r, "exact_instance_ms_100k", e / 1000.0, "ms", label);
        qn_bench_add(r, "discrete_instance_ms_100k", d / 1000.0, "ms",
                     "  baseline: discrete instance, same level");
        qn_bench_add(r, "exact_bytes_per_quad_100k", (double)eb / qn_mesh_quad_count(m), "bytes",
                     "  exact instance memory per quad");
    }
    qn_mesh_destroy(m);
    return e >= 0 && d >= 0;
}

int qn_tool_bench_exact(qn_bench_report *r, int quick) {
    return bench_650(r, quick != 0) && bench_100k(r, quick != 0) ? 0 : 1;
}
