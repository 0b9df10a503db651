/*
** fuzz_level.c: the level JSON loader, and everything a loaded level feeds.
**
** Each input is loaded twice: once with a counting allocator, then with one
** that fails at call N, N taken from a hash of the input (so the fuzzer
** reaches every out-of-memory path of the loader, the field build and the
** grid field). Nothing may leak either time, and the second run must agree
** with the first wherever no allocation failed.
**
** On a level that loads: the goals and spawns are well-formed, point
** location, nearest quad and segment tests agree with brute force at points
** derived from the input, a field to the first goal (or the centre of quad
** 0) has the shape of a shortest-path tree, samples agree with where the
** points are, a path is well-formed, the level's grid (if any) gets an
** exact integration field, and the mesh rasterised to a grid and the
** level's grid cut into rectangles both match their source cell by cell.
*/
#include "fuzz_checks.h"

/* Above this many quads, skip the brute-force checks (keeps runs fast). */
#define BIG_MESH 20000u

typedef struct outcome {
    qn_status load, field, grid, raster, grid_mesh;
    uint64_t digest; /* field costs, exits and samples: same input, same bits */
} outcome;

static uint64_t mix(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void check_named_points(const qn_level *lv, bool goals) {
    uint32_t n = goals ? qn_level_goal_count(lv) : qn_level_spawn_count(lv);
    FZ_CHECK(n <= (goals ? QN_MAX_GOALS : QN_MAX_SPAWNS), "%u named points", n);
    for (uint32_t i = 0; i <= n; i++) {
        const char *name = NULL;
        qn_vec2 at = {NAN, NAN};
        qn_status st = goals ? qn_level_goal(lv, i, &name, &at) : qn_level_spawn(lv, i, &name, &at);
        if (i == n) {
            FZ_CHECK(st != QN_OK, "point %u of %u exists", i, n);
            break;
        }
        FZ_CHECK(st == QN_OK && name != NULL, "point %u: %s", i, qn_status_name(st));
        FZ_CHECK(strlen(name) <= QN_MAX_NAME, "name of %zu bytes", strlen(name));
        FZ_CHECK(qn__finite2(at) && fabsf(at.x) <= QN_MAX_COORD && fabsf(at.y) <= QN_MAX_COORD,
                 "point %u at (%g, %g)", i, (double)at.x, (double)at.y);
        if (goals)
            FZ_CHECK(qn_level_find_goal(lv, name) == i, "goal \"%s\" found at %u, not %u", name,
                     qn_level_find_goal(lv, name), i);
    }
}

/* The status qn_field_create must give for these goals. */
static qn_status expected_field_status(const qn_mesh *m, const qn_vec2 *goals, uint32_t n,
                                       uint32_t *first_bad) {
    *first_bad = QN_NONE;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t q = fz_brute_locate(m, goals[i]);
        if (q == QN_NONE || m->blocked[q]) {
            *first_bad = i;
            return q == QN_NONE ? QN_E_OUTSIDE : QN_E_BLOCKED;
        }
    }
    return QN_OK;
}

static void exercise_field(const qn_level *lv, const qn_allocator *a, uint64_t seed,
                           const qn_vec2 *pts, uint32_t np, bool failing, outcome *r) {
    const qn_mesh *m = qn_level_mesh(lv);
    qn_vec2 goals[4];
    uint32_t ng = 0;
    const char *name;
    for (uint32_t i = 0; i < qn_level_goal_count(lv) && ng < 2; i++)
        qn_level_goal(lv, i, &name, &goals[ng++]);
    qn_vec2 kc[4];
    const qn_vec2 *k0 = qn__corners(m, 0, kc);
    if (ng == 0) goals[ng++] = qn__scale(qn__add(k0[0], k0[2]), 0.5f);
    if (seed % 5 == 0) goals[ng++] = pts[seed % np]; /* sometimes one more, anywhere */
    static const float radii[4] = {0.0f, 0.0f, 0.25f, 1.0f};
    static const uint32_t looks[4] = {0, 1, 2, 5};
    qn_field_opts o = {.radius = radii[(seed >> 8) % 4],
                       .lookahead = looks[(seed >> 10) % 4],
                       .midpoint_costs = (seed >> 12) & 1,
                       .repairable = ((seed >> 13) & 7) == 0};
    qn_field *f = (qn_field *)1;
    qn_error e;
    uint32_t bad;
    qn_status want = expected_field_status(m, goals, ng, &bad);
    qn_status st = qn_field_create(m, goals, ng, &o, a, &f, &e);
    r->field = st;
    FZ_CHECK((st == QN_OK) == (f != NULL), "field %p with %s", (void *)f, qn_status_name(st));
    if (!(failing && st == QN_E_NOMEM)) {
        FZ_CHECK(st == want, "field: %s, expected %s (%s)", qn_status_name(st),
                 qn_status_name(want), e.message);
        if (st != QN_OK)
            FZ_CHECK(e.index == bad, "field error names goal %u, not %u", e.index, bad);
    }
    if (st != QN_OK) return;
    if (!failing) {
        fz_check_field_shape(f);
        fz_check_sampling(f, pts, np);
        fz_check_path(m, a, pts[seed % np], goals[0], o.radius);
    }
    for (uint32_t q = 0; q < m->quad_count; q++) {
        float c = qn_field_quad_cost(f, q);
        uint32_t x = qn_field_quad_exit(f, q);
        r->digest = mix(mix(r->digest, &c, sizeof c), &x, sizeof x);
    }
    for (uint32_t i = 0; i < np; i++) {
        qn_vec2 d;
        uint32_t q = QN_NONE;
        qn_status s = qn_field_sample(f, pts[i], &q, &d);
        r->digest = mix(mix(mix(r->digest, &d, sizeof d), &q, sizeof q), &s, sizeof s);
    }
    qn_field_destroy(f);
}

/* An integration field on the level's grid from a passable cell. */
static void exercise_grid(const qn_grid *g, const qn_allocator *a, uint64_t seed, bool failing,
                          outcome *r) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    size_t cells = (size_t)w * h;
    FZ_CHECK(w >= 1 && h >= 1 && w <= QN_MAX_GRID_SIDE && h <= QN_MAX_GRID_SIDE &&
                 cells <= QN_MAX_GRID_CELLS,
             "grid %ux%u", w, h);
    const uint8_t *costs = qn_grid_costs(g);
    uint32_t goal = QN_NONE;
    for (size_t k = 0; k < cells && goal == QN_NONE; k++) {
        size_t c = (k + seed) % cells;
        FZ_CHECK(costs[c] != 0, "cell %zu has cost 0", c);
        if (costs[c] != QN_CELL_WALL) goal = (uint32_t)c;
    }
    if (goal == QN_NONE || cells > (1u << 18)) return;
    qn_grid_field_opts o = {.connectivity = (seed >> 20) & 1 ? QN_CONNECT_4 : QN_CONNECT_8};
    qn_grid_field *f = (qn_grid_field *)1;
    qn_status st = qn_grid_field_create(g, &goal, 1, &o, a, &f, NULL);
    r->grid = st;
    FZ_CHECK(st == QN_OK || (failing && st == QN_E_NOMEM), "grid field: %s", qn_status_name(st));
    FZ_CHECK((st == QN_OK) == (f != NULL), "grid field %p with %s", (void *)f, qn_status_name(st));
    if (st != QN_OK) return;
    FZ_CHECK(qn_grid_field_cost(f, goal % w, goal / w) == 0.0, "goal cell cost");
    if (!failing) fz_check_grid_field(f, o.connectivity == QN_CONNECT_8);
    qn_vec2 org = qn_grid_origin(g);
    float cs = qn_grid_cell_size(g);
    for (int i = 0; i < 16; i++) {
        qn_vec2 p = {org.x + cs * fz_rand_in(&seed, -1.0f, (float)w + 1.0f),
                     org.y + cs * fz_rand_in(&seed, -1.0f, (float)h + 1.0f)};
        qn_vec2 d;
        uint32_t cell;
        qn_status s = qn_grid_field_sample(f, i % 2 ? QN_FLOW_VECTOR : QN_FLOW_DIR8, p, &cell, &d);
        FZ_CHECK(s == QN_OK || s == QN_AT_GOAL || s == QN_E_OUTSIDE || s == QN_E_BLOCKED ||
                     s == QN_E_UNREACHABLE,
                 "grid sample: %s", qn_status_name(s));
        FZ_CHECK((s == QN_E_OUTSIDE) == (cell == QN_NONE) && (cell == QN_NONE || cell < cells),
                 "grid sample cell %u with %s", cell, qn_status_name(s));
        fz_check_dir(s, d);
    }
    qn_grid_field_destroy(f);
}

/* The mesh rasterised at a cell size from the input, and the level's grid
** (if any) cut into rectangles. */
static void exercise_conversions(const qn_level *lv, const qn_allocator *a, uint64_t seed,
                                 bool failing, outcome *r) {
    const qn_mesh *m = qn_level_mesh(lv);
    qn_rect b = qn_mesh_bounds(m);
    float cs = fmaxf(b.max.x - b.min.x, b.max.y - b.min.y) / (float)(4 + (seed >> 24) % 61);
    qn_grid *g = (qn_grid *)1;
    r->raster = qn_grid_from_mesh(m, cs, a, &g, NULL);
    FZ_CHECK(r->raster == QN_OK || (failing && r->raster == QN_E_NOMEM), "rasterising at %g: %s",
             (double)cs, qn_status_name(r->raster));
    FZ_CHECK((r->raster == QN_OK) == (g != NULL), "raster %p", (void *)g);
    if (g && !failing && (double)qn_grid_width(g) * qn_grid_height(g) * m->quad_count <= 2e6)
        fz_check_raster(m, g);
    qn_grid_destroy(g);
    const qn_grid *lg = qn_level_grid(lv);
    if (!lg) return;
    size_t cells = (size_t)qn_grid_width(lg) * qn_grid_height(lg), open = 0;
    for (size_t i = 0; i < cells; i++)
        open += qn_grid_costs(lg)[i] != QN_CELL_WALL;
    qn_mesh *gm = (qn_mesh *)1;
    qn_error e;
    r->grid_mesh = qn_mesh_from_grid(lg, a, &gm, &e);
    FZ_CHECK((r->grid_mesh == QN_OK) == (gm != NULL), "grid mesh %p", (void *)gm);
    if (!(failing && r->grid_mesh == QN_E_NOMEM))
        FZ_CHECK(r->grid_mesh == (open ? QN_OK : QN_E_INVALID_ARG), "level grid to mesh: %s (%s)",
                 qn_status_name(r->grid_mesh), e.message);
    if (gm && !failing && cells <= (1u << 16)) fz_check_grid_mesh(lg, gm);
    qn_mesh_destroy(gm);
}

static void run(const uint8_t *data, size_t size, const qn_allocator *a, bool failing, outcome *r) {
    memset(r, 0, sizeof *r);
    qn_level *lv = (qn_level *)1;
    qn_error e;
    qn_status st = qn_level_load_mem((const char *)data, size, a, &lv, &e);
    r->load = st;
    if (st != QN_OK) {
        FZ_CHECK(lv == NULL, "failed load left a level");
        fz_check_error(st, &e);
        return;
    }
    FZ_CHECK(lv != NULL, "load succeeded without a level");
    const qn_mesh *m = qn_level_mesh(lv);
    FZ_CHECK(m != NULL && qn_mesh_quad_count(m) >= 1, "level without quads");
    FZ_CHECK(qn_level_name(lv) != NULL && strlen(qn_level_name(lv)) <= QN_MAX_NAME, "name");
    check_named_points(lv, true);
    check_named_points(lv, false);
    qn_rect b = qn_mesh_bounds(m);
    FZ_CHECK(qn__finite2(b.min) && qn__finite2(b.max) && b.min.x <= b.max.x && b.min.y <= b.max.y,
             "bounds");
    uint64_t seed = fz_hash(data, size);
    if (qn_mesh_quad_count(m) <= BIG_MESH) {
        qn_vec2 pts[FZ_MAX_POINTS];
        uint32_t np = fz_points(m, seed, pts, FZ_MAX_POINTS);
        if (!failing) fz_check_mesh_queries(m, pts, np);
        exercise_field(lv, a, seed, pts, np, failing, r);
    }
    exercise_conversions(lv, a, seed, failing, r);
    if (qn_level_grid(lv)) exercise_grid(qn_level_grid(lv), a, seed, failing, r);
    qn_level_destroy(lv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    outcome first, second;
    run(data, size, &a, false, &first);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked", (long long)fa.live);
    /* Again, failing at call N of the calls the first run made. */
    uint64_t n = fz_hash(data, size) % (fa.calls + 1);
    a = failalloc_init(&fa, n);
    run(data, size, &a, true, &second);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked failing at call %llu", (long long)fa.live,
             (unsigned long long)n);
    if (fa.failures == 0) {
        FZ_CHECK(first.load == second.load && first.field == second.field &&
                     first.grid == second.grid && first.raster == second.raster &&
                     first.grid_mesh == second.grid_mesh && first.digest == second.digest,
                 "second run differs: %s %s, then %s %s", qn_status_name(first.load),
                 qn_status_name(first.field), qn_status_name(second.load),
                 qn_status_name(second.field));
    } else {
        FZ_CHECK(second.load == first.load || second.load == QN_E_NOMEM, "load %s, then %s",
                 qn_status_name(first.load), qn_status_name(second.load));
    }
    return 0;
}
