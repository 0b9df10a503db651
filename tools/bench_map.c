/*
** bench_map.c: `quadnav bench --map FILE.map [--json]`: the big-world
** figures on one MovingAI map (issue "big worlds"): importing it, loading it
** back as level JSON and as a baked mesh, one full exact instance and one
** grid field, and the peak memory of the whole run. Each part is a function
** appending its keys; parts that need the map's grid or mesh take them from
** the shared context built once by the import part.
*/
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim.h"
#include "tool.h"

int qn_tool_write_grid_level(FILE *f, const char *name, const qn_grid *g, const qn_mesh *m);

/* The peak so far, as peak_rss_mb_after_<part>: which part sets the run's. */
static void peak_after(qn_bench_report *r, int rc, const char *part) {
    char key[64];
    snprintf(key, sizeof key, "peak_rss_mb_after_%s", part);
    if (!rc) qn_bench_add(r, key, qn_tool_peak_rss_mb(), "MB", "  peak resident memory so far");
}

/* The import part: map text to grid to mesh, timed as a whole. */
static int part_import(qn_bench_map_ctx *c, qn_bench_report *r) {
    qn_error e;
    double t0 = qn_tool_now();
    qn_status st = qn_map_load_file(c->path, NULL, &c->grid, &e);
    if (st == QN_OK) st = qn_mesh_from_grid(c->grid, NULL, &c->mesh, &e);
    double ms = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK)
        return qn_cli_error("bench: %s: %s: %s", c->path, qn_status_name(st), e.message);
    uint32_t nq = qn_mesh_quad_count(c->mesh);
    qn_bench_add(r, "import_ms", ms, "ms", "import: map file to grid and quads");
    qn_bench_add(r, "quads", nq, "", "import: quads");
    qn_bench_add(r, "mesh_bytes_per_quad", (double)qn_mesh_bytes(c->mesh) / nq, "B",
                 "mesh: bytes per quad (qn_mesh_bytes, index included)");
    return 0;
}

/* The peak resident memory (MiB) of `quadnav info FILE --json` run as a
** child process of this very program (its peak_rss_mb: the load's alone,
** as a user running it sees), or NaN when it cannot be run or fails.
** Linux only (/proc/self/exe). */
static double child_info_peak_mb(const char *file) {
    extern char **environ;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int fds[2];
    if (n <= 0 || pipe(fds) != 0) return (double)NAN;
    exe[n] = '\0';
    posix_spawn_file_actions_t fa;
    pid_t pid = -1;
    if (posix_spawn_file_actions_init(&fa) == 0) {
        posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&fa, fds[0]);
        char *argv[] = {exe, "info", (char *)(uintptr_t)file, "--json", NULL};
        if (posix_spawn(&pid, exe, &fa, NULL, argv, environ) != 0) pid = -1;
        posix_spawn_file_actions_destroy(&fa);
    }
    close(fds[1]);
    /* Read to the end (the child never blocks on a full pipe), keeping
    ** the first 4 KiB: the one JSON line. */
    char out[4096], spill[512];
    size_t got = 0;
    for (ssize_t r;;) {
        bool room = got + 1 < sizeof out;
        r = room ? read(fds[0], out + got, sizeof out - 1 - got)
                 : read(fds[0], spill, sizeof spill);
        if (r <= 0) break;
        if (room) got += (size_t)r;
    }
    out[got] = '\0';
    close(fds[0]);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return (double)NAN;
    const char *k = strstr(out, "\"peak_rss_mb\":");
    return k ? strtod(k + strlen("\"peak_rss_mb\":"), NULL) : (double)NAN;
}

/* An allocator that counts: the bytes live (the library passes every
** block's size) and the most ever live. */
typedef struct counted {
    size_t live, most;
} counted;

static void *count_realloc(void *ud, void *ptr, size_t old_size, size_t new_size) {
    counted *c = ud;
    if (new_size == 0) {
        free(ptr);
        c->live -= ptr ? old_size : 0;
        return NULL;
    }
    void *q = realloc(ptr, new_size);
    if (!q) return NULL;
    c->live += new_size - (ptr ? old_size : 0);
    c->most = c->live > c->most ? c->live : c->most;
    return q;
}

/* The caches a mesh builds for its first exact search (boundary cycles,
** portal segments; here by qn_pathfinder_create): MiB kept, MiB at their
** build's peak (both above the mesh itself) and the build's ms, on the
** baked mesh at qnm loaded again with a counting allocator; negative when
** it fails. The run's own mesh (*mesh, the same mesh as saved) goes first
** and is loaded again from qnm after, without caches, as the full
** instance's part expects it: a game keeps one copy, and two resident at
** once set the run's peak on some maps (maze512-1-0 tiled 8 x 8: 938 MB,
** 111 MB of it the second mesh). */
static void cache_figures(const char *qnm, qn_mesh **mesh, double *kept, double *peak, double *ms) {
    counted c = {0, 0};
    qn_allocator a = {count_realloc, &c};
    qn_mesh *m = NULL;
    qn_pathfinder *pf = NULL;
    *kept = *peak = *ms = -1.0;
    qn_mesh_destroy(*mesh);
    *mesh = NULL;
    if (qn_mesh_load(qnm, &a, &m, NULL) == QN_OK) {
        size_t base = c.live;
        c.most = base;
        double t0 = qn_tool_now();
        if (qn_pathfinder_create(m, NULL, &pf, NULL) == QN_OK) {
            *ms = (qn_tool_now() - t0) * 1e3;
            *kept = (double)(c.live - base) / 1048576.0;
            *peak = (double)(c.most - base) / 1048576.0;
        }
    }
    qn_pathfinder_destroy(pf);
    qn_mesh_destroy(m);
    if (qn_mesh_load(qnm, NULL, mesh, NULL) != QN_OK) *mesh = NULL;
}

/* Writes the level JSON and the baked mesh to temporary files and loads
** them back, each timed alone; then the peak memory of `quadnav info` on
** each, in a child process. */
static int part_load(qn_bench_map_ctx *c, qn_bench_report *r) {
    char dir[] = "/tmp/quadnav-bench-XXXXXX";
    if (!mkdtemp(dir)) return qn_cli_error("bench: cannot make a temporary folder");
    char json[64], qnm[64];
    snprintf(json, sizeof json, "%s/level.json", dir);
    snprintf(qnm, sizeof qnm, "%s/level.qnm", dir);
    int rc = 0;
    FILE *f = fopen(json, "w");
    if (!f || qn_tool_write_grid_level(f, "bench", c->grid, c->mesh) != 0)
        rc = qn_cli_error("bench: cannot write %s", json);
    if (f && fclose(f) != 0 && !rc) rc = qn_cli_error("bench: cannot write %s", json);
    qn_error e;
    if (!rc) {
        qn_level *lv = NULL;
        double t0 = qn_tool_now();
        qn_status st = qn_level_load_file(json, NULL, &lv, &e);
        double ms = (qn_tool_now() - t0) * 1e3;
        if (st != QN_OK) rc = qn_cli_error("bench: level JSON: %s", e.message);
        else qn_bench_add(r, "level_load_ms", ms, "ms", "load: level JSON of the map");
        qn_level_destroy(lv);
    }
    if (!rc) {
        qn_status st = qn_mesh_save(c->mesh, qnm, &e);
        qn_mesh *m = NULL;
        double t0 = qn_tool_now();
        if (st == QN_OK) st = qn_mesh_load(qnm, NULL, &m, &e);
        double ms = (qn_tool_now() - t0) * 1e3;
        if (st != QN_OK) rc = qn_cli_error("bench: baked mesh: %s", e.message);
        else qn_bench_add(r, "bake_load_ms", ms, "ms", "load: baked mesh (.qnm)");
        qn_mesh_destroy(m);
    }
    if (!rc) {
        double kept, peak, ms;
        cache_figures(qnm, &c->mesh, &kept, &peak, &ms);
        if (!c->mesh) rc = qn_cli_error("bench: cannot load the baked mesh again");
        if (kept >= 0.0) {
            qn_bench_add(
                r, "mesh_cache_ms", ms, "ms",
                "mesh: building those caches (once per mesh; full_instance_ms includes it)");
            qn_bench_add(r, "mesh_cache_mb", kept, "MB",
                         "mesh: caches of the first exact search (boundary cycles, segments)");
            qn_bench_add(r, "mesh_cache_build_peak_mb", peak, "MB",
                         "  the same at their build's peak (above the mesh)");
        }
    }
    if (!rc) {
        struct stat js;
        double size = stat(json, &js) == 0 ? (double)js.st_size : (double)NAN;
        double jp = child_info_peak_mb(json), bp = child_info_peak_mb(qnm);
        qn_bench_add(r, "level_json_mb", size / 1048576.0, "MB", "load: size of the level JSON");
        qn_bench_add(r, "level_load_peak_mb", jp, "MB",
                     "load: peak memory of `quadnav info` on the level JSON (a child process)");
        qn_bench_add(r, "bake_load_peak_mb", bp, "MB",
                     "load: peak memory of `quadnav info` on the baked mesh (a child process)");
    }
    unlink(json);
    unlink(qnm);
    rmdir(dir);
    return rc;
}

/* A reachable goal: the passable cell nearest the map's centre, found by
** scanning rings outward. */
static bool centre_goal(const qn_grid *g, uint32_t *cell) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    const uint8_t *cost = qn_grid_costs(g);
    int64_t cx = w / 2, cy = h / 2;
    for (int64_t rad = 0; rad < (int64_t)(w > h ? w : h); rad++)
        for (int64_t y = cy - rad; y <= cy + rad; y++)
            for (int64_t x = cx - rad; x <= cx + rad; x++) {
                if (x < 0 || y < 0 || x >= w || y >= h) continue;
                if (llabs(x - cx) != rad && llabs(y - cy) != rad) continue;
                if (cost[y * w + x] != 255) {
                    *cell = (uint32_t)(y * w + x);
                    return true;
                }
            }
    return false;
}

/* One full exact instance for a goal near the centre, and one grid field. */
static int part_full(qn_bench_map_ctx *c, qn_bench_report *r) {
    if (!centre_goal(c->grid, &c->goal_cell)) return qn_cli_error("bench: the map has no ground");
    uint32_t w = qn_grid_width(c->grid);
    c->goal = (qn_vec2){(float)(c->goal_cell % w) + 0.5f, (float)(c->goal_cell / w) + 0.5f};
    qn_error e;
    qn_field *f = NULL;
    double t0 = qn_tool_now();
    qn_status st = qn_field_create(c->mesh, &c->goal, 1, NULL, NULL, &f, &e);
    double ms = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK) return qn_cli_error("bench: full instance: %s", e.message);
    qn_bench_add(r, "full_instance_ms", ms, "ms", "full exact instance: build");
    qn_bench_add(r, "full_instance_bytes", (double)qn_field_bytes(f), "B",
                 "full exact instance: bytes");
    qn_field_destroy(f);
    qn_grid_field *gf = NULL;
    t0 = qn_tool_now();
    st = qn_grid_field_create(c->grid, &c->goal_cell, 1, NULL, NULL, &gf, &e);
    ms = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK) return qn_cli_error("bench: grid field: %s", e.message);
    qn_bench_add(r, "grid_field_ms", ms, "ms", "full grid field (8-dir): build");
    qn_bench_add(r, "grid_field_bytes", (double)qn_grid_field_bytes(gf), "B",
                 "full grid field: bytes");
    c->grid_field = gf;
    return 0;
}

/* 10 groups of 100 units, as armies stand: each round a random centre cell
** reachable from the goal, its units on reachable cells within 10 cells. */
static void place_units(qn_bench_map_ctx *c) {
    uint32_t w = qn_grid_width(c->grid), h = qn_grid_height(c->grid);
    uint64_t rng = 1000;
    for (uint32_t gi = 0, n = 0; gi < 10; gi++) {
        uint32_t cx, cy;
        do {
            cx = (uint32_t)(qn_rand_next(&rng) % w), cy = (uint32_t)(qn_rand_next(&rng) % h);
        } while (!(qn_grid_field_cost(c->grid_field, cx, cy) < (double)INFINITY));
        for (uint32_t k = 0; k < 100;) {
            int64_t x = (int64_t)cx + (int64_t)(qn_rand_next(&rng) % 21) - 10;
            int64_t y = (int64_t)cy + (int64_t)(qn_rand_next(&rng) % 21) - 10;
            if (x < 0 || y < 0 || x >= w || y >= h) continue;
            if (!(qn_grid_field_cost(c->grid_field, (uint32_t)x, (uint32_t)y) < (double)INFINITY)) continue;
            c->units[n++] = (qn_vec2){(float)x + 0.5f, (float)y + 0.5f};
            k++;
        }
    }
}

/* Mean distance walked (vector flow, steps of 0.2 cells) by every tenth
** unit; arrived counts those that reach the goal. */
typedef qn_status (*grid_sampler)(const void *field, qn_vec2 p, qn_vec2 *dir);
static qn_status sample_full(const void *f, qn_vec2 p, qn_vec2 *dir) {
    return qn_grid_field_sample(f, QN_FLOW_VECTOR, p, NULL, dir);
}
static qn_status sample_tiles(const void *f, qn_vec2 p, qn_vec2 *dir) {
    return qn_grid_tfield_sample(f, QN_FLOW_VECTOR, p, NULL, dir);
}
static double walk_units(const qn_bench_map_ctx *c, grid_sampler s, const void *f, uint32_t *arrived) {
    double sum = 0.0;
    *arrived = 0;
    for (uint32_t i = 0; i < 1000; i += 10) {
        qn_vec2 p = c->units[i], d;
        double walked = 0.0;
        for (uint32_t k = 0; k < 400000; k++) {
            qn_status st = s(f, p, &d);
            if (st == QN_AT_GOAL) {
                (*arrived)++;
                sum += walked;
                break;
            }
            if (st != QN_OK) break;
            p = (qn_vec2){p.x + 0.2f * d.x, p.y + 0.2f * d.y};
            walked += 0.2;
        }
    }
    return sum;
}

/* Grid tiles: the one-time sector graph, then a new destination answering
** the first samples of 1,000 units, and its memory after them. */
static int part_grid_tiles(qn_bench_map_ctx *c, qn_bench_report *r) {
    qn_error e;
    qn_grid_tiles *t = NULL;
    double t0 = qn_tool_now();
    qn_status st = qn_grid_tiles_create(c->grid, 0, NULL, &t, &e);
    double build = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK) return qn_cli_error("bench: grid tiles: %s", e.message);
    place_units(c);
    qn_grid_tfield *f = NULL;
    qn_vec2 dirs[1000];
    t0 = qn_tool_now();
    st = qn_grid_tfield_create(t, c->goal_cell, NULL, NULL, &f, &e);
    if (st == QN_OK) st = qn_grid_tfield_sample_batch(f, QN_FLOW_VECTOR, c->units, dirs, NULL, NULL, 1000);
    double first = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK) {
        qn_grid_tiles_destroy(t);
        return qn_cli_error("bench: tile field: %s", qn_status_name(st));
    }
    qn_bench_add(r, "grid_hier_build_ms", build, "ms", "grid tiles: sector graph (once per grid)");
    qn_bench_add(r, "grid_hier_first_1000_ms", first, "ms",
                 "grid tiles: new destination, first samples of 1,000 units (10 groups)");
    qn_bench_add(r, "grid_hier_instance_bytes", (double)qn_grid_tfield_bytes(f), "B",
                 "grid tiles: bytes per destination after those samples");
    qn_bench_add(r, "grid_hier_nodes_settled", qn_grid_tfield_nodes_settled(f), "",
                 "grid tiles: nodes settled by those samples");
    qn_bench_add(r, "grid_hier_nodes", qn_grid_tiles_node_count(t), "", "grid tiles: nodes");
    /* The same with the samples in two jobs (five groups each) on the
    ** built-in runner's two threads, for another new field. */
    qn_grid_tfield *f2 = NULL;
    t0 = qn_tool_now();
    qn_status st2 = qn_grid_tfield_create(t, c->goal_cell, NULL, NULL, &f2, &e);
    if (st2 == QN_OK)
        st2 = qn_grid_tfield_sample_jobs(f2, QN_FLOW_VECTOR, c->units, dirs, NULL, NULL, 1000, 2, NULL);
    double first2 = (qn_tool_now() - t0) * 1e3;
    qn_grid_tfield_destroy(f2);
    if (st2 == QN_OK)
        qn_bench_add(r, "grid_hier_first_1000_ms_jobs2", first2, "ms",
                     "  same, another new field, samples in 2 jobs on 2 threads");
    qn_bench_add(r, "grid_hier_tiles_bytes", (double)qn_grid_tiles_bytes(t), "B",
                 "grid tiles: bytes of the sector graph (shared by destinations)");
    uint32_t at = 0, af = 0;
    double wt = walk_units(c, sample_tiles, f, &at), wf = walk_units(c, sample_full, c->grid_field, &af);
    qn_bench_add(r, "grid_hier_arrived_100", at, "", "grid tiles: of 100 units walked, arrived");
    qn_bench_add(r, "grid_hier_stretch_ratio", at == af && wf > 0.0 ? wt / wf : (double)NAN, "",
                 "grid tiles: distance walked / with the whole-grid field, same units");
    qn_grid_tfield_destroy(f);
    /* The same with the node search's bound weighted by 1.2. */
    qn_grid_tfield_opts o = {.search_weight = 1.2f};
    t0 = qn_tool_now();
    st = qn_grid_tfield_create(t, c->goal_cell, &o, NULL, &f, &e);
    if (st == QN_OK) st = qn_grid_tfield_sample_batch(f, QN_FLOW_VECTOR, c->units, dirs, NULL, NULL, 1000);
    first = (qn_tool_now() - t0) * 1e3;
    if (st == QN_OK) {
        qn_bench_add(r, "grid_hier_first_1000_ms_w12", first, "ms",
                     "grid tiles, search weight 1.2: first samples of the same units");
        wt = walk_units(c, sample_tiles, f, &at);
        qn_bench_add(r, "grid_hier_stretch_ratio_w12", at == af && wf > 0.0 ? wt / wf : (double)NAN,
                     "", "grid tiles, search weight 1.2: distance walked / whole-grid field's");
    }
    qn_grid_tfield_destroy(f);
    qn_grid_tiles_destroy(t);
    return st == QN_OK ? 0 : qn_cli_error("bench: tile field (weighted): %s", qn_status_name(st));
}

int qn_tool_bench_map(qn_bench_report *r, const char *path) {
    static qn_bench_map_ctx c;
    c = (qn_bench_map_ctx){.path = path};
    int rc = part_import(&c, r);
    peak_after(r, rc, "import");
    if (!rc) rc = part_load(&c, r);
    peak_after(r, rc, "load");
    if (!rc) rc = part_full(&c, r);
    peak_after(r, rc, "full");
    if (!rc) rc = part_grid_tiles(&c, r);
    peak_after(r, rc, "grid_tiles");
    /* The grid parts are done with their full field (units placed, walks
    ** compared): it goes before the quad hierarchy's part, which does not
    ** read it. */
    qn_grid_field_destroy(c.grid_field);
    c.grid_field = NULL;
    if (!rc) rc = qn_tool_bench_map_hier(&c, r);
    peak_after(r, rc, "hier");
    if (!rc)
        qn_bench_add(r, "peak_rss_mb", qn_tool_peak_rss_mb(), "MB",
                     "peak resident memory of the run");
    qn_grid_field_destroy(c.grid_field);
    qn_mesh_destroy(c.mesh);
    qn_grid_destroy(c.grid);
    return rc;
}
