/*
** bench_path.c: individual paths against one shared instance, in the same
** run, on the largest map at hand imported to quads: 1,000 units with random
** open starts and one shared goal. Each unit gets its own A* plus funnel
** (qn_path_find, cost included), against building one instance at the goal
** (qn_field_create) plus sampling every unit once.
*/
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "tool.h"

/* Loads the map at path if it has more cells than *best; keeps the larger. */
static void keep_larger(const char *path, qn_grid **best, char *name, size_t cap) {
    qn_grid *g = NULL;
    if (qn_map_load_file(path, NULL, &g, NULL) != QN_OK) return;
    uint64_t cells = (uint64_t)qn_grid_width(g) * qn_grid_height(g);
    if (*best && cells <= (uint64_t)qn_grid_width(*best) * qn_grid_height(*best)) {
        qn_grid_destroy(g);
        return;
    }
    qn_grid_destroy(*best);
    *best = g;
    snprintf(name, cap, "%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
}

/* $QN_SHARED_DIR/data/movingai/maps/dao/orz900d.map, else the largest of the
** bundled maps. */
static qn_grid *pick_map(char *name, size_t cap) {
    const char *shared = getenv("QN_SHARED_DIR");
    char path[4400];
    qn_grid *g = NULL;
    snprintf(path, sizeof path, "%s/data/movingai/maps/dao/orz900d.map",
             shared && *shared ? shared : "../shared");
    keep_larger(path, &g, name, cap);
    if (g) return g;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/maps", qn_cli_data_dir());
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".map") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        keep_larger(path, &g, name, cap);
    }
    if (d) closedir(d);
    return g;
}

/* The goal: the centre of the largest quad. Starts: random open cell
** centres in the goal's island. */
static uint32_t place_units(const qn_mesh *m, const qn_grid *g, qn_vec2 *goal, qn_vec2 *starts,
                            uint32_t units) {
    uint32_t nq = qn_mesh_quad_count(m), big = 0, gq;
    for (uint32_t q = 1; q < nq; q++)
        if (qn_mesh_quad_area(m, q) > qn_mesh_quad_area(m, big)) big = q;
    qn_vec2 k[4];
    qn_mesh_quad_corners(m, big, k);
    *goal = (qn_vec2){(k[0].x + k[2].x) * 0.5f, (k[0].y + k[2].y) * 0.5f};
    qn_mesh_locate(m, *goal, QN_NONE, &gq);
    uint64_t rng = 1000;
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g), got = 0;
    for (uint64_t tries = 0; got < units && tries < 1000 * (uint64_t)units; tries++) {
        uint32_t x = (uint32_t)(qn_rand_next(&rng) % w), y = (uint32_t)(qn_rand_next(&rng) % h), q;
        qn_vec2 p = {(float)x + 0.5f, (float)y + 0.5f};
        if (qn_mesh_locate(m, p, QN_NONE, &q) != QN_OK) continue;
        if (qn_mesh_island(m, q) == qn_mesh_island(m, gq)) starts[got++] = p;
    }
    return got;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ms for every unit's own path (waypoints into one reused buffer); with
** want_cost, the cost search runs too. */
static double time_paths(qn_pathfinder *pf, const qn_vec2 *starts, uint32_t n, qn_vec2 goal,
                         bool want_cost, uint32_t *failed, double *length) {
    static qn_vec2 pts[1 << 16];
    *failed = 0;
    *length = 0.0;
    double t0 = qn_tool_now();
    for (uint32_t i = 0; i < n; i++) {
        uint32_t count;
        float cost;
        if (qn_path_find(pf, starts[i], goal, 0.0f, pts, 1u << 16, &count, want_cost ? &cost : NULL) !=
            QN_OK)
            (*failed)++;
        else *length += qn_path_length(pts, count);
    }
    return (qn_tool_now() - t0) * 1e3;
}

/* ms to build one instance at the goal and sample every unit once. */
static double time_shared(const qn_mesh *m, const qn_vec2 *starts, uint32_t n, qn_vec2 goal,
                          qn_vec2 *dirs) {
    double t0 = qn_tool_now();
    qn_field *f = NULL;
    if (qn_field_create(m, &goal, 1, NULL, NULL, &f, NULL) != QN_OK) return (double)NAN;
    qn_field_sample_batch(f, starts, dirs, NULL, NULL, n);
    double ms = (qn_tool_now() - t0) * 1e3;
    qn_field_destroy(f);
    return ms;
}

static void report(qn_bench_report *r, const char *name, const qn_mesh *m, uint32_t units,
                   double paths_ms, double exact_ms, double shared_ms, uint32_t failed,
                   double mean_len, size_t pf_bytes) {
    char label[160];
    double scale = 1000.0 / units; /* quick runs time fewer units */
    snprintf(label, sizeof label, "A* + funnel, 1000 units, one goal, %s (%u quads%s)", name,
             qn_mesh_quad_count(m), units == 1000 ? "" : ", scaled");
    qn_bench_add(r, "path_astar_funnel_ms_1000", paths_ms * scale, "ms", label);
    qn_bench_add(r, "path_exact_ms_1000", exact_ms * scale, "ms",
                 "  the same exact paths without the cost search (cost NULL)");
    qn_bench_add(r, "path_shared_instance_ms_1000", shared_ms * scale, "ms",
                 "  baseline: one shared instance + sampling every unit once");
    qn_bench_add(r, "path_ratio_to_shared", paths_ms / shared_ms, "x", "  own paths / shared");
    qn_bench_add(r, "path_mean_length", mean_len, "", "  mean path length (cells)");
    qn_bench_add(r, "path_failures", failed, "", "  units without a path (should be 0)");
    qn_bench_add(r, "path_pathfinder_kb", (double)pf_bytes / 1024.0, "KiB", "  pathfinder scratch");
}

int qn_tool_bench_path(qn_bench_report *r, int quick) {
    char name[256] = "";
    qn_grid *g = pick_map(name, sizeof name);
    if (!g) return qn_cli_error("bench: no map for the path figures; skipped"), 0;
    qn_mesh *m = NULL;
    qn_pathfinder *pf = NULL;
    uint32_t want = quick ? 100 : 1000, reps = quick ? 1 : 3;
    qn_vec2 *starts = malloc(want * sizeof *starts), *dirs = malloc(want * sizeof *dirs), goal;
    int rc = 1;
    if (starts && dirs && qn_mesh_from_grid(g, NULL, &m, NULL) == QN_OK &&
        qn_pathfinder_create(m, NULL, &pf, NULL) == QN_OK) {
        uint32_t units = place_units(m, g, &goal, starts, want), failed = 0;
        double paths[3], exact[3], shared[3], len = 0.0;
        for (uint32_t i = 0; i < reps && units > 0; i++) {
            paths[i] = time_paths(pf, starts, units, goal, true, &failed, &len);
            exact[i] = time_paths(pf, starts, units, goal, false, &failed, &len);
            shared[i] = time_shared(m, starts, units, goal, dirs);
        }
        qsort(paths, reps, sizeof *paths, cmp_d);
        qsort(shared, reps, sizeof *shared, cmp_d);
        qsort(exact, reps, sizeof *exact, cmp_d);
        if (units > 0) {
            report(r, name, m, units, paths[reps / 2], exact[reps / 2], shared[reps / 2], failed,
                   len / (units - failed ? units - failed : 1), qn_pathfinder_bytes(pf));
            rc = 0;
        }
    }
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
    free(starts);
    free(dirs);
    return rc;
}
