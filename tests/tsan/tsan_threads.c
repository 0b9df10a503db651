/*
** tsan_threads.c: the library's thread-safety promises, exercised at once
** from several threads in a build with the thread sanitizer (the 'tsan'
** suite). Every answer computed concurrently must equal the one computed on
** one thread, bit for bit:
**  - one field sampled by 4 threads on disjoint ranges (qn_field_sample_batch)
**    while 2 more threads run qn_field_sample_parallel on the same field;
**  - 4 quad fields and 4 grid fields built at the same time on one mesh and
**    one grid;
**  - 4 pathfinders querying one mesh at the same time;
**  - the simulation harness stepping units on 4 threads;
**  - grid tile fields and hierarchical destinations sampled by 4 threads
**    while they build their sectors, and fresh ones in 8 jobs
**    (*_sample_jobs): the same answers but for float rounding of node
**    costs summed in another order.
** Exit status 0 when every answer agrees; the sanitizer itself makes the
** run fail on a data race (run with TSAN_OPTIONS=halt_on_error=1).
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quadnav.h"
#include "sim.h"

#define THREADS 4u
#define UNITS 20000u

static int failures;

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failures++;
}

static void *must(void *p, const char *what) {
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", what);
        exit(2);
    }
    return p;
}

static void spawn_all(pthread_t *ids, uint32_t n, void *(*fn)(void *), void *args,
                      size_t arg_size) {
    for (uint32_t i = 0; i < n; i++)
        if (pthread_create(&ids[i], NULL, fn, (char *)args + i * arg_size) != 0) {
            fprintf(stderr, "cannot start thread %u\n", i);
            exit(2);
        }
}

static void join_all(pthread_t *ids, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) pthread_join(ids[i], NULL);
}

static uint64_t rng_state = 42;

static float rand_unit(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(rng_state >> 40) / 16777216.0f;
}

static const char *data_dir(void) {
    const char *d = getenv("QN_DATA_DIR");
    return d && *d ? d : "data";
}

/* ---- sampling ------------------------------------------------------------ */

typedef struct samples {
    qn_vec2 *dirs;
    uint8_t *status;
    uint32_t *quads;
} samples;

static samples samples_new(void) {
    samples s = {must(calloc(UNITS, sizeof(qn_vec2)), "dirs"),
                 must(calloc(UNITS, 1), "status"), must(calloc(UNITS, sizeof(uint32_t)), "quads")};
    for (uint32_t i = 0; i < UNITS; i++) s.quads[i] = QN_NONE;
    return s;
}

static void samples_free(samples *s) {
    free(s->dirs);
    free(s->status);
    free(s->quads);
}

static void compare_samples(const samples *a, const samples *b, const char *what) {
    if (memcmp(a->dirs, b->dirs, UNITS * sizeof(qn_vec2)) || memcmp(a->status, b->status, UNITS) ||
        memcmp(a->quads, b->quads, UNITS * sizeof(uint32_t)))
        fail("%s: concurrent sampling differs from one thread", what);
}

typedef struct sample_job {
    const qn_field *field;
    const qn_vec2 *pos;
    samples out;
    size_t begin, end;
    uint32_t threads; /* 0: qn_field_sample_batch on [begin, end) */
    qn_status st;
} sample_job;

static void *sample_main(void *arg) {
    sample_job *j = arg;
    size_t n = j->end - j->begin;
    if (j->threads == 0)
        j->st = qn_field_sample_batch(j->field, j->pos + j->begin, j->out.dirs + j->begin,
                                      j->out.status + j->begin, j->out.quads + j->begin, n);
    else
        j->st = qn_field_sample_parallel(j->field, j->pos, j->out.dirs, j->out.status,
                                         j->out.quads, UNITS, j->threads);
    return NULL;
}

static void check_sampling(const qn_field *f, const qn_vec2 *pos) {
    samples ref = samples_new(), mine = samples_new(), par[2] = {samples_new(), samples_new()};
    if (qn_field_sample_batch(f, pos, ref.dirs, ref.status, ref.quads, UNITS) != QN_OK)
        fail("reference sampling failed");
    /* 4 batch threads on disjoint ranges of one output, 2 parallel samplers
    ** (4 threads each) on outputs of their own: all reading one field. */
    sample_job jobs[THREADS + 2];
    for (uint32_t i = 0; i < THREADS + 2; i++) {
        bool batch = i < THREADS;
        jobs[i] = (sample_job){f, pos, batch ? mine : par[i - THREADS],
                               batch ? UNITS * i / THREADS : 0,
                               batch ? UNITS * (i + 1) / THREADS : UNITS, batch ? 0u : THREADS,
                               QN_OK};
    }
    pthread_t ids[THREADS + 2];
    spawn_all(ids, THREADS + 2, sample_main, jobs, sizeof jobs[0]);
    join_all(ids, THREADS + 2);
    for (uint32_t i = 0; i < THREADS + 2; i++)
        if (jobs[i].st != QN_OK) fail("sampling job %u: %s", i, qn_status_name(jobs[i].st));
    compare_samples(&ref, &mine, "qn_field_sample_batch on 4 ranges");
    compare_samples(&ref, &par[0], "qn_field_sample_parallel (first caller)");
    compare_samples(&ref, &par[1], "qn_field_sample_parallel (second caller)");
    uint32_t ok = 0;
    for (uint32_t i = 0; i < UNITS; i++) ok += ref.status[i] == QN_OK;
    if (ok < UNITS / 4) fail("only %u of %u units sampled QN_OK", ok, UNITS);
    samples_free(&ref);
    samples_free(&mine);
    samples_free(&par[0]);
    samples_free(&par[1]);
}

/* ---- an exact field's exits, made on first use ------------------------------ */

typedef struct exit_job {
    const qn_field *field;
    uint32_t *out; /* per quad */
} exit_job;

static void *exit_main(void *arg) {
    exit_job *j = arg;
    uint32_t n = qn_mesh_quad_count(qn_field_mesh(j->field));
    for (uint32_t q = 0; q < n; q++)
        j->out[q] = qn_field_quad_exit(j->field, q);
    return NULL;
}

/* Threads ask a new exact field's exits at once (the first call makes
** them, and one copy is published); every thread sees the exits a second
** field of the same goal gives one thread. */
static void check_exits(const qn_mesh *m, qn_vec2 goal) {
    qn_field *f[2] = {NULL, NULL};
    qn_error e;
    for (int i = 0; i < 2; i++)
        if (qn_field_create(m, &goal, 1, NULL, NULL, &f[i], &e) != QN_OK) {
            fail("exits: field: %s", e.message);
            qn_field_destroy(f[0]);
            return;
        }
    uint32_t n = qn_mesh_quad_count(m);
    exit_job jobs[THREADS + 1];
    for (uint32_t i = 0; i <= THREADS; i++)
        jobs[i] = (exit_job){i < THREADS ? f[0] : f[1], must(calloc(n, sizeof(uint32_t)), "exits")};
    pthread_t ids[THREADS];
    size_t before = qn_field_bytes(f[0]);
    spawn_all(ids, THREADS, exit_main, jobs, sizeof jobs[0]);
    join_all(ids, THREADS);
    exit_main(&jobs[THREADS]);
    uint32_t leaving = 0;
    for (uint32_t q = 0; q < n; q++)
        leaving += jobs[THREADS].out[q] != QN_NONE;
    if (leaving == 0) fail("exits: no quad has an exit");
    for (uint32_t i = 0; i < THREADS; i++)
        if (memcmp(jobs[i].out, jobs[THREADS].out, n * sizeof(uint32_t)))
            fail("exits: thread %u's differ from one thread's", i);
    if (!(qn_field_bytes(f[0]) > before)) fail("exits: not counted in qn_field_bytes");
    for (uint32_t i = 0; i <= THREADS; i++)
        free(jobs[i].out);
    qn_field_destroy(f[0]);
    qn_field_destroy(f[1]);
}

/* ---- building fields at once ----------------------------------------------- */

typedef struct build_job {
    const qn_mesh *mesh;
    const qn_grid *grid;
    qn_vec2 goal;
    uint32_t cell;
    qn_field *field;
    qn_grid_field *gfield;
    qn_status st, gst;
} build_job;

static void *build_main(void *arg) {
    build_job *j = arg;
    qn_field_opts o = {.radius = 0.25f};
    j->st = qn_field_create(j->mesh, &j->goal, 1, &o, NULL, &j->field, NULL);
    j->gst = qn_grid_field_create(j->grid, &j->cell, 1, NULL, NULL, &j->gfield, NULL);
    return NULL;
}

static void compare_fields(const build_job *a, const build_job *b, uint32_t i) {
    uint32_t nq = qn_mesh_quad_count(a->mesh);
    for (uint32_t q = 0; q < nq; q++) {
        float ca = qn_field_quad_cost(a->field, q), cb = qn_field_quad_cost(b->field, q);
        if (memcmp(&ca, &cb, sizeof ca) || qn_field_quad_exit(a->field, q) != qn_field_quad_exit(b->field, q)) {
            fail("field %u: quad %u differs when built concurrently", i, q);
            return;
        }
    }
    uint32_t w = qn_grid_width(a->grid), h = qn_grid_height(a->grid);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            double ca = qn_grid_field_cost(a->gfield, x, y), cb = qn_grid_field_cost(b->gfield, x, y);
            qn_vec2 va = qn_grid_field_vec(a->gfield, x, y), vb = qn_grid_field_vec(b->gfield, x, y);
            if (memcmp(&ca, &cb, sizeof ca) || memcmp(&va, &vb, sizeof va) ||
                qn_grid_field_dir(a->gfield, x, y) != qn_grid_field_dir(b->gfield, x, y)) {
                fail("grid field %u: cell %u,%u differs when built concurrently", i, x, y);
                return;
            }
        }
}

static void free_builds(build_job *jobs, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        qn_field_destroy(jobs[i].field);
        qn_grid_field_destroy(jobs[i].gfield);
    }
}

/* Goals at the centres of quads spread over the mesh; grid goals at the
** cells under them. The concurrent builds run first, on a mesh nothing has
** searched yet: they race to build the caches the mesh keeps (boundary
** cycles, portal segments), which one thread publishes. */
static void check_builds(const qn_mesh *m, const qn_grid *g) {
    build_job one[THREADS], many[THREADS];
    uint32_t nq = qn_mesh_quad_count(m);
    for (uint32_t i = 0; i < THREADS; i++) {
        qn_vec2 c[4];
        qn_mesh_quad_corners(m, (nq - 1) * i / THREADS, c);
        qn_vec2 goal = {(c[0].x + c[2].x) * 0.5f, (c[0].y + c[2].y) * 0.5f};
        uint32_t x, y;
        if (qn_grid_locate(g, goal, &x, &y) != QN_OK) fail("goal %u outside the grid", i);
        one[i] = (build_job){m, g, goal, y * qn_grid_width(g) + x, NULL, NULL, QN_OK, QN_OK};
        many[i] = one[i];
    }
    pthread_t ids[THREADS];
    spawn_all(ids, THREADS, build_main, many, sizeof many[0]);
    join_all(ids, THREADS);
    for (uint32_t i = 0; i < THREADS; i++) build_main(&one[i]);
    for (uint32_t i = 0; i < THREADS; i++) {
        if (one[i].st || many[i].st || one[i].gst || many[i].gst)
            fail("build %u: %s / %s", i, qn_status_name(many[i].st), qn_status_name(many[i].gst));
        else
            compare_fields(&one[i], &many[i], i);
    }
    free_builds(one, THREADS);
    free_builds(many, THREADS);
}

/* ---- pathfinders on one mesh ------------------------------------------------ */

#define QUERIES 200u
#define MAX_POINTS 512u

typedef struct path_job {
    const qn_mesh *mesh;
    const qn_vec2 *ends; /* 2 * QUERIES points */
    float cost[QUERIES];
    uint32_t count[QUERIES];
    qn_status st[QUERIES];
} path_job;

static void *path_main(void *arg) {
    path_job *j = arg;
    qn_pathfinder *pf = NULL;
    if (qn_pathfinder_create(j->mesh, NULL, &pf, NULL) != QN_OK) {
        for (uint32_t q = 0; q < QUERIES; q++) j->st[q] = QN_E_NOMEM;
        return NULL;
    }
    qn_vec2 *pts = must(malloc(MAX_POINTS * sizeof *pts), "path points");
    for (uint32_t q = 0; q < QUERIES; q++)
        j->st[q] = qn_path_find(pf, j->ends[2 * q], j->ends[2 * q + 1], 0.25f, pts, MAX_POINTS,
                                &j->count[q], &j->cost[q]);
    free(pts);
    qn_pathfinder_destroy(pf);
    return NULL;
}

static void check_paths(const qn_mesh *m, const qn_vec2 *pos) {
    static path_job ref, jobs[THREADS];
    /* End points inside open quads. */
    static qn_vec2 ends[2 * QUERIES];
    uint32_t n = 0;
    for (uint32_t i = 0; i < UNITS && n < 2 * QUERIES; i++) {
        uint32_t q;
        if (qn_mesh_locate(m, pos[i], QN_NONE, &q) == QN_OK && !qn_mesh_quad_blocked(m, q))
            ends[n++] = pos[i];
    }
    if (n < 2 * QUERIES) fail("only %u path end points inside the mesh", n);
    ref.mesh = m;
    ref.ends = ends;
    path_main(&ref);
    for (uint32_t i = 0; i < THREADS; i++) jobs[i] = ref;
    pthread_t ids[THREADS];
    spawn_all(ids, THREADS, path_main, jobs, sizeof jobs[0]);
    join_all(ids, THREADS);
    uint32_t found = 0;
    for (uint32_t q = 0; q < QUERIES; q++) found += ref.st[q] == QN_OK;
    if (found < QUERIES / 2) fail("only %u of %u paths found", found, QUERIES);
    for (uint32_t i = 0; i < THREADS; i++)
        if (memcmp(ref.st, jobs[i].st, sizeof ref.st) || memcmp(ref.cost, jobs[i].cost, sizeof ref.cost) ||
            memcmp(ref.count, jobs[i].count, sizeof ref.count))
            fail("pathfinder %u: answers differ from one thread", i);
}

/* ---- the simulation harness on threads ------------------------------------------ */

static void check_sim(const qn_field *f, qn_vec2 goal) {
    qn_sim_world w;
    qn_sim_quad_ctx ctx;
    qn_sim_world_quad(&w, &ctx, f, goal);
    qn_sim_result r[2];
    for (uint32_t k = 0; k < 2; k++) {
        qn_sim_opts o = {0};
        o.units = 200;
        o.seed = 3;
        o.threads = k ? THREADS : 1;
        if (qn_sim_run(&w, &o, &r[k]) != QN_OK) fail("sim with %u threads failed", o.threads);
    }
    if (r[0].arrived != r[1].arrived || r[0].samples != r[1].samples ||
        r[0].wall_contacts != r[1].wall_contacts || r[0].stretch_mean != r[1].stretch_mean)
        fail("sim: 4 threads give another outcome than 1");
    if (r[0].arrived == 0) fail("sim: no unit arrived");
}

/* ---- crowd steps on threads ------------------------------------------------------ */

/* 300 units on the town, 40 steps on one thread and on THREADS: the same
** states, and no data race between the ranges of a step. */
static void check_crowd(const qn_field *f, qn_vec2 goal, const qn_vec2 *pos) {
    qn_crowd_unit first[300];
    for (uint32_t k = 0; k < 2; k++) {
        qn_crowd *c = NULL;
        if (qn_crowd_create(qn_field_mesh(f), NULL, NULL, &c, NULL) != QN_OK) {
            fail("crowd: create failed");
            return;
        }
        for (uint32_t i = 0, n = 0; i < UNITS && n < 300; i++) {
            qn_crowd_unit_desc d = {.position = pos[i], .radius = 0.25f, .max_speed = 1.5f,
                                    .max_accel = 6.0f, .field = f, .goal = goal,
                                    .goal_radius = 5.0f};
            uint32_t id;
            if (qn_crowd_add(c, &d, &id, NULL) == QN_OK) n++;
        }
        for (int s = 0; s < 40; s++)
            if (qn_crowd_step_parallel(c, 0.1f, k ? THREADS : 1) != QN_OK) fail("crowd: step failed");
        for (uint32_t id = 0; id < qn_crowd_unit_count(c) && id < 300; id++) {
            qn_crowd_unit u;
            memset(&u, 0, sizeof u);
            qn_crowd_get(c, id, &u);
            if (k == 0) memcpy(&first[id], &u, sizeof u);
            else if (memcmp(&first[id], &u, sizeof u)) fail("crowd: unit %u differs on threads", id);
        }
        qn_crowd_destroy(c);
    }
}

/* Grid tiles: threads racing to build the sectors of one fresh tile field
** (each sector published once by compare-and-swap) answer as one thread. */
typedef struct tile_job {
    const qn_grid_tfield *f;
    const qn_vec2 *pos;
    qn_vec2 *dirs;
} tile_job;

static void *tile_main(void *arg) {
    tile_job *j = arg;
    qn_grid_tfield_sample_batch(j->f, QN_FLOW_VECTOR, j->pos, j->dirs, NULL, NULL, UNITS);
    return NULL;
}

static void check_tiles(const qn_grid *g, const qn_vec2 *pos) {
    qn_grid_tiles *t = NULL;
    if (qn_grid_tiles_create(g, 8, NULL, &t, NULL) != QN_OK) {
        fail("tiles: cannot build");
        return;
    }
    uint32_t goal = 0, n = qn_grid_width(g) * qn_grid_height(g);
    while (goal < n && qn_grid_costs(g)[goal] == QN_CELL_WALL) goal++;
    qn_grid_tfield *one = NULL, *f = NULL;
    if (goal == n || qn_grid_tfield_create(t, goal, NULL, NULL, &one, NULL) != QN_OK ||
        qn_grid_tfield_create(t, goal, NULL, NULL, &f, NULL) != QN_OK) {
        fail("tiles: cannot make the fields");
    } else {
        qn_vec2 *ref = must(malloc(UNITS * sizeof *ref), "tile directions");
        qn_grid_tfield_sample_batch(one, QN_FLOW_VECTOR, pos, ref, NULL, NULL, UNITS);
        pthread_t ids[THREADS];
        tile_job jobs[THREADS];
        for (uint32_t i = 0; i < THREADS; i++)
            jobs[i] = (tile_job){f, pos, must(malloc(UNITS * sizeof(qn_vec2)), "tile directions")};
        spawn_all(ids, THREADS, tile_main, jobs, sizeof jobs[0]);
        join_all(ids, THREADS);
        for (uint32_t i = 0; i < THREADS; i++) {
            if (memcmp(jobs[i].dirs, ref, UNITS * sizeof *ref) != 0) fail("tiles: thread %u differs", i);
            free(jobs[i].dirs);
        }
        /* A fresh field sampled in 8 jobs on the built-in runner's threads:
        ** its sectors are asked for in another order, so node costs of
        ** equal ways may differ in their last bits, and directions with them. */
        qn_grid_tfield *fj = NULL;
        qn_vec2 *dj = must(malloc(UNITS * sizeof *dj), "tile directions");
        if (qn_grid_tfield_create(t, goal, NULL, NULL, &fj, NULL) != QN_OK ||
            qn_grid_tfield_sample_jobs(fj, QN_FLOW_VECTOR, pos, dj, NULL, NULL, UNITS, 8, NULL) != QN_OK)
            fail("tiles: qn_grid_tfield_sample_jobs failed");
        else
            for (uint32_t i = 0; i < UNITS; i++)
                if (fabsf(dj[i].x - ref[i].x) > 1e-4f || fabsf(dj[i].y - ref[i].y) > 1e-4f) {
                    fail("tiles: qn_grid_tfield_sample_jobs differs at unit %u", i);
                    break;
                }
        qn_grid_tfield_destroy(fj);
        free(dj);
        free(ref);
    }
    qn_grid_tfield_destroy(one);
    qn_grid_tfield_destroy(f);
    qn_grid_tiles_destroy(t);
}

/* Hierarchical quad instances: threads racing to build the local fields
** of two fresh destinations of a fresh hier, and the sector meshes the
** two share (each published once by compare-and-swap, a losing copy
** freed), answer as one thread does on a hier of its own. */
typedef struct hier_job {
    const qn_hfield *f;
    const qn_vec2 *pos;
    qn_vec2 *dirs;
    uint8_t *st;
} hier_job;

static void *hier_main(void *arg) {
    hier_job *j = arg;
    qn_hfield_sample_batch(j->f, j->pos, j->dirs, j->st, NULL, UNITS);
    return NULL;
}

static void check_hier(const qn_mesh *m, qn_vec2 goal, const qn_vec2 *pos) {
    qn_hier *h = NULL, *h2 = NULL;
    qn_rect r = qn_mesh_bounds(m);
    qn_hier_opts o = {.sector_size = (r.max.x - r.min.x) / 6.0f};
    qn_hfield *one = NULL, *f = NULL, *one0 = NULL, *f0 = NULL;
    if (qn_hier_create(m, &o, NULL, &h, NULL) != QN_OK ||
        qn_hier_create(m, &o, NULL, &h2, NULL) != QN_OK ||
        qn_hfield_create(h, goal, 0.25f, NULL, &one, NULL) != QN_OK ||
        qn_hfield_create(h, goal, 0.0f, NULL, &one0, NULL) != QN_OK ||
        qn_hfield_create(h2, goal, 0.25f, NULL, &f, NULL) != QN_OK ||
        qn_hfield_create(h2, goal, 0.0f, NULL, &f0, NULL) != QN_OK) {
        fail("hier: cannot build");
    } else {
        qn_vec2 *ref[2] = {must(malloc(UNITS * sizeof(qn_vec2)), "hier directions"),
                           must(malloc(UNITS * sizeof(qn_vec2)), "hier directions")};
        uint8_t *rst[2] = {must(malloc(UNITS), "hier statuses"),
                           must(malloc(UNITS), "hier statuses")};
        qn_hfield_sample_batch(one, pos, ref[0], rst[0], NULL, UNITS);
        qn_hfield_sample_batch(one0, pos, ref[1], rst[1], NULL, UNITS);
        pthread_t ids[THREADS];
        hier_job jobs[THREADS];
        for (uint32_t i = 0; i < THREADS; i++) /* half on each destination */
            jobs[i] = (hier_job){i % 2 ? f0 : f, pos,
                                 must(malloc(UNITS * sizeof(qn_vec2)), "hier directions"),
                                 must(malloc(UNITS), "hier statuses")};
        spawn_all(ids, THREADS, hier_main, jobs, sizeof jobs[0]);
        join_all(ids, THREADS);
        for (uint32_t i = 0; i < THREADS; i++) {
            if (memcmp(jobs[i].dirs, ref[i % 2], UNITS * sizeof(qn_vec2)) != 0 ||
                memcmp(jobs[i].st, rst[i % 2], UNITS) != 0)
                fail("hier: thread %u differs", i);
            free(jobs[i].dirs);
            free(jobs[i].st);
        }
        qn_vec2 *ref0 = ref[0];
        uint8_t *rst0 = rst[0];
        free(ref[1]);
        free(rst[1]);
        if (qn_hfield_sectors_built(f) != qn_hfield_sectors_built(one)) fail("hier: sectors built differ");
        /* A fresh destination sampled in 8 jobs on the built-in runner's
        ** threads (the sectors built ahead, one job running the node
        ** search while the others build): the same answers. */
        qn_hfield *fj = NULL;
        qn_vec2 *dj = must(malloc(UNITS * sizeof *dj), "hier directions");
        uint8_t *sj = must(malloc(UNITS), "hier statuses");
        if (qn_hfield_create(h, goal, 0.25f, NULL, &fj, NULL) != QN_OK ||
            qn_hfield_sample_jobs(fj, pos, dj, sj, NULL, UNITS, 8, NULL) != QN_OK) {
            fail("hier: qn_hfield_sample_jobs failed");
        } else {
            if (memcmp(sj, rst0, UNITS) != 0 || memcmp(dj, ref0, UNITS * sizeof *dj) != 0)
                fail("hier: qn_hfield_sample_jobs differs");
        }
        qn_hfield_destroy(fj);
        free(dj);
        free(sj);
        free(ref0);
        free(rst0);
    }
    qn_hfield_destroy(one);
    qn_hfield_destroy(one0);
    qn_hfield_destroy(f);
    qn_hfield_destroy(f0);
    qn_hier_destroy(h);
    qn_hier_destroy(h2);
}

/* check_builds on a bundled level of its own. */
static void check_builds_of(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/levels/%s", data_dir(), name);
    qn_level *lv = NULL;
    qn_grid *g = NULL;
    qn_error e;
    if (qn_level_load_file(path, NULL, &lv, &e) != QN_OK ||
        qn_grid_from_mesh(qn_level_mesh(lv), 1.0f, NULL, &g, &e) != QN_OK)
        fail("%s: %s", path, e.message);
    else
        check_builds(qn_level_mesh(lv), g);
    qn_grid_destroy(g);
    qn_level_destroy(lv);
}

int main(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/levels/town.json", data_dir());
    qn_level *lv = NULL;
    qn_error e;
    if (qn_level_load_file(path, NULL, &lv, &e) != QN_OK) {
        fprintf(stderr, "%s: %s\n", path, e.message);
        return 2;
    }
    const qn_mesh *m = qn_level_mesh(lv);
    qn_grid *g = NULL;
    if (qn_grid_from_mesh(m, 1.0f, NULL, &g, &e) != QN_OK) {
        fprintf(stderr, "grid: %s\n", e.message);
        return 2;
    }
    check_builds(m, g); /* first: no search has built the mesh's caches */
    check_builds_of("maze.json"); /* rectangles: its portals' segments are derived */
    qn_vec2 goal;
    const char *name;
    qn_level_goal(lv, 0, &name, &goal);
    qn_field_opts o = {.radius = 0.25f};
    qn_field *f = NULL;
    if (qn_field_create(m, &goal, 1, &o, NULL, &f, &e) != QN_OK) {
        fprintf(stderr, "field: %s\n", e.message);
        return 2;
    }
    qn_rect r = qn_mesh_bounds(m);
    qn_vec2 *pos = must(malloc(UNITS * sizeof *pos), "positions");
    for (uint32_t i = 0; i < UNITS; i++)
        pos[i] = (qn_vec2){r.min.x + (r.max.x - r.min.x) * rand_unit(),
                           r.min.y + (r.max.y - r.min.y) * rand_unit()};

    check_sampling(f, pos);
    check_exits(m, goal);
    check_paths(m, pos);
    check_sim(f, goal);
    check_crowd(f, goal, pos);
    check_tiles(g, pos);
    check_hier(m, goal, pos);

    free(pos);
    qn_field_destroy(f);
    qn_grid_destroy(g);
    qn_level_destroy(lv);
    printf("%s\n", failures ? "concurrent answers differ" : "all concurrent answers agree");
    return failures ? 1 : 0;
}
