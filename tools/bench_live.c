/*
** bench_live.c: figures for living worlds, each beside its baseline from
** the same run: repairing an instance after blocking one quad of a
** 100,000-quad level against rebuilding it; many live destinations through
** the cache on the largest map at hand; batch sampling of 1,000,000 units on
** 2 threads against 1.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "tool.h"

/* A grid of uneven rectangles, some left out: about 100,000 quads. */
static qn_mesh *big_level(uint32_t cols, uint32_t rows) {
    size_t n = (size_t)cols * rows;
    qn_vec2 *verts = malloc(4 * n * sizeof *verts);
    uint32_t *quads = malloc(4 * n * sizeof *quads);
    float *xs = malloc((cols + 1) * sizeof *xs), *ys = malloc((rows + 1) * sizeof *ys);
    qn_mesh *m = NULL;
    if (verts && quads && xs && ys) {
        uint64_t rng = 100000;
        xs[0] = ys[0] = 0;
        for (uint32_t i = 1; i <= cols; i++) xs[i] = xs[i - 1] + 1.0f + (float)(qn_rand_next(&rng) % 3);
        for (uint32_t i = 1; i <= rows; i++) ys[i] = ys[i - 1] + 1.0f + (float)(qn_rand_next(&rng) % 3);
        uint32_t k = 0;
        for (uint32_t r = 0; r < rows; r++)
            for (uint32_t c = 0; c < cols; c++) {
                if (r + c > 0 && qn_rand_next(&rng) % 20 == 0) continue; /* a hole */
                uint32_t v = 4 * k++;
                verts[v] = (qn_vec2){xs[c], ys[r]};
                verts[v + 1] = (qn_vec2){xs[c + 1], ys[r]};
                verts[v + 2] = (qn_vec2){xs[c + 1], ys[r + 1]};
                verts[v + 3] = (qn_vec2){xs[c], ys[r + 1]};
                for (uint32_t j = 0; j < 4; j++) quads[v + j] = v + j;
            }
        qn_mesh_desc d = {verts, 4 * k, quads, k, NULL, NULL, NULL, 0, false};
        qn_error e;
        if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) qn_cli_error("bench: %s", e.message);
    }
    free(verts), free(quads), free(xs), free(ys);
    return m;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of the repair (block, update, unblock, update: two repairs) and of a
** rebuild, over quads spread across the level. */
static bool bench_repair(qn_bench_report *r, bool quick) {
    uint32_t side = quick ? 60 : 333;
    qn_mesh *m = big_level(side, side);
    if (!m) return false;
    qn_vec2 goal = {0.5f, 0.5f};
    qn_field_opts o = {.repairable = true};
    qn_field *f = NULL;
    if (qn_field_create(m, &goal, 1, &o, NULL, &f, NULL) != QN_OK) return qn_mesh_destroy(m), false;
    enum { REPS = 21 };
    double rep[REPS], reb[REPS];
    uint32_t nq = qn_mesh_quad_count(m);
    uint64_t rng = 7;
    for (int i = 0; i < REPS; i++) {
        uint32_t q = (uint32_t)(qn_rand_next(&rng) % nq);
        double t0 = qn_tool_now();
        qn_mesh_set_quad_blocked(m, q, true);
        qn_field_update(f, NULL);
        double t1 = qn_tool_now();
        qn_mesh_set_quad_blocked(m, q, false);
        qn_field_update(f, NULL);
        double t2 = qn_tool_now();
        qn_field *fresh = NULL;
        qn_field_create(m, &goal, 1, NULL, NULL, &fresh, NULL);
        double t3 = qn_tool_now();
        qn_field_destroy(fresh);
        rep[i] = (t2 - t0) * 0.5e3; /* ms per repair, block and unblock averaged */
        reb[i] = (t3 - t2) * 1e3;
        (void)t1;
    }
    qsort(rep, REPS, sizeof(double), cmp_d);
    qsort(reb, REPS, sizeof(double), cmp_d);
    char label[96];
    snprintf(label, sizeof label, "repair after blocking one quad (%u quads; islands incl.)", nq);
    qn_bench_add(r, "repair_ms_100k", rep[REPS / 2], "ms", label);
    qn_bench_add(r, "rebuild_ms_100k", reb[REPS / 2], "ms", "  baseline: rebuild from scratch");
    qn_field_destroy(f);
    qn_mesh_destroy(m);
    return true;
}

/* The largest map at hand, imported to quads. */
static qn_mesh *largest_map(char *name, size_t cap) {
    const char *shared = getenv("QN_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/data/movingai/maps/dao/orz900d.map", shared ? shared : "../shared");
    qn_grid *g = NULL;
    if (qn_map_load_file(path, NULL, &g, NULL) != QN_OK) {
        snprintf(path, sizeof path, "%s/maps/Berlin_0_256.map", qn_cli_data_dir());
        if (qn_map_load_file(path, NULL, &g, NULL) != QN_OK) return NULL;
    }
    snprintf(name, cap, "%s", strrchr(path, '/') + 1);
    qn_mesh *m = NULL;
    qn_mesh_from_grid(g, NULL, &m, NULL);
    qn_grid_destroy(g);
    return m;
}

static bool bench_cache(qn_bench_report *r, bool quick) {
    char name[64], label[160];
    qn_mesh *m = largest_map(name, sizeof name);
    if (!m) return qn_cli_error("bench: no map for the cache figures; skipped"), true;
    uint32_t dests = quick ? 50 : 1000, nq = qn_mesh_quad_count(m);
    qn_cache_opts o = {.budget_bytes = (size_t)256 << 20};
    qn_cache *c = NULL;
    if (qn_cache_create(m, &o, NULL, &c, NULL) != QN_OK) return qn_mesh_destroy(m), false;
    uint64_t rng = 1000;
    uint32_t got = 0;
    double t0 = qn_tool_now();
    for (uint32_t tries = 0; got < dests && tries < 20 * dests; tries++) {
        uint32_t q = (uint32_t)(qn_rand_next(&rng) % nq);
        qn_vec2 k[4];
        qn_mesh_quad_corners(m, q, k);
        qn_vec2 goal = {(k[0].x + k[2].x) * 0.5f, (k[0].y + k[2].y) * 0.5f};
        const qn_field *f;
        if (qn_cache_acquire(c, goal, 0.0f, &f, NULL) == QN_OK) got++; /* held: all live */
    }
    double ms = (qn_tool_now() - t0) * 1e3;
    qn_cache_stats st;
    qn_cache_get_stats(c, &st);
    snprintf(label, sizeof label, "live destinations held in the cache, %s (%u quads)", name, nq);
    qn_bench_add(r, "cache_destinations", got, "", label);
    qn_bench_add(r, "cache_mb", (double)st.bytes / (1 << 20), "MiB", "  memory in use (budget 256)");
    qn_bench_add(r, "cache_build_ms_per_destination", ms / got, "ms", "  build time per destination");
    qn_cache_destroy(c);
    qn_mesh_destroy(m);
    return true;
}

static double time_parallel(const qn_field *f, const qn_vec2 *pos, qn_vec2 *dirs, uint8_t *st,
                            uint32_t *hints, size_t n, uint32_t threads, int reps) {
    double t[16];
    for (int k = 0; k < reps; k++) {
        double t0 = qn_tool_now();
        qn_field_sample_parallel(f, pos, dirs, st, hints, n, threads);
        t[k] = (qn_tool_now() - t0) * 1e3;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_d);
    return t[reps / 2];
}

static bool bench_threads(qn_bench_report *r, bool quick) {
    qn_mesh *m = big_level(60, 60);
    if (!m) return false;
    qn_vec2 goal = {0.5f, 0.5f};
    qn_field *f = NULL;
    size_t n = quick ? 100000 : 1000000;
    qn_vec2 *pos = malloc(n * sizeof *pos), *dirs = malloc(n * sizeof *dirs);
    uint32_t *hints = malloc(n * sizeof *hints);
    uint8_t *st = malloc(n);
    bool ok = pos && dirs && hints && st &&
              qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL) == QN_OK;
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    if (ok) qn_sim_world_quad(&w, &ctx, f, goal);
    uint64_t rng = 5;
    for (size_t i = 0; ok && i < n; i++) {
        ok = w.random_start(&ctx, qn_rand_unit(&rng), qn_rand_unit(&rng), qn_rand_unit(&rng),
                            &pos[i]);
        hints[i] = QN_NONE;
    }
    if (ok) {
        qn_field_sample_batch(f, pos, dirs, st, hints, n); /* hints as after one frame */
        int reps = quick ? 3 : 11;
        double one = time_parallel(f, pos, dirs, st, hints, n, 1, reps);
        double two = time_parallel(f, pos, dirs, st, hints, n, 2, reps);
        qn_bench_add(r, "sample_ms_1m_2threads", two, "ms", "sampling 1,000,000 units, 2 threads");
        qn_bench_add(r, "sample_ms_1m_1thread", one, "ms", "  baseline: 1 thread");
        qn_bench_add(r, "sample_speedup_2threads", one / two, "x", "  speed-up");
    }
    free(pos), free(dirs), free(hints), free(st);
    qn_field_destroy(f);
    qn_mesh_destroy(m);
    return ok;
}

int qn_tool_bench_live(qn_bench_report *r, int quick) {
    bool ok = bench_repair(r, quick != 0);
    ok = ok && bench_cache(r, quick != 0);
    ok = ok && bench_threads(r, quick != 0);
    return ok ? 0 : 1;
}
