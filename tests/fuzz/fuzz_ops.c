/*
** fuzz_ops.c: a sequence of API calls driven by the input bytes, on a small
** generated mesh (a guillotine cut of a 30x24 rectangle into up to 128
** rectangles, some dropped as holes; see tests/testmesh.h).
**
** Bytes, front to back: a mode byte (0xE0 and above: the allocator fails
** from call N on, N from the next byte), the mesh's seed and size, the
** destination cache's budget and kind, then operations, one byte each plus
** their arguments: build a field (any goals, radius, look-ahead, repairable
** or not), destroy one, change a quad's cost or blocked flag (bad values
** included), update every field and the cache, sample (one by one, as a
** batch, and over threads), acquire and release cached fields, find paths,
** test lines of sight; and on the mesh rasterised to a grid (cell size 1),
** build grid fields (any goals, connectivity, early stop, no flow), stamp
** rectangles of cells, update, sample; hierarchical instances and grid
** tiles built on the mesh and grid as they are, with two destinations each
** sampled in a batch and in jobs. A missing byte reads as 0, so every
** input is a run.
**
** After every update, each field must equal a fresh build of the changed
** mesh: bit for bit for one rebuilt in place, and for a repairable one,
** costs within 1e-4 relative and the same exits as a fresh build with the
** same options (the mid-point model where quad costs differ, the exact map
** where they do not); a grid field equals a
** fresh build bit for bit (values and both flows). Every current field also
** passes the shape checks of fuzz_checks.h. At the end nothing leaks.
*/
#include "fuzz_checks.h"
#include "testmesh.h"

#define SLOTS 4
#define HELD 8
#define MAX_OPS 96
#define GRID_SLOTS 2

typedef struct own_field {
    qn_field *f;
    qn_vec2 goals[2];
    uint32_t ng;
    qn_field_opts o;
} own_field;

typedef struct own_grid_field {
    qn_grid_field *f;
    uint32_t goals[3];
    uint32_t ng;
    qn_grid_field_opts o;
    bool broken;        /* its last update failed */
    uint64_t broken_at; /* the grid's version then */
} own_grid_field;

typedef struct world {
    fz_bytes in;
    bool failing;
    qn_allocator a;
    qn_mesh *m;
    own_field fields[SLOTS];
    qn_cache *cache;
    const qn_field *held[HELD];
    uint32_t nheld;
    qn_pathfinder *pf;
    qn_grid *g; /* the mesh rasterised at cell size 1 */
    own_grid_field gfields[GRID_SLOTS];
} world;

static const float radii[6] = {0.0f, 0.0f, 0.3f, 0.5f, 1.0f, 3.0f};

/* got must be want, or out of memory when the allocator fails. */
static void expect(const world *w, qn_status got, qn_status want, const char *what) {
    FZ_CHECK(got == want || (w->failing && got == QN_E_NOMEM), "%s: %s, expected %s", what,
             qn_status_name(got), qn_status_name(want));
}

/* A point from the input: a quad's centre, a corner (maybe nudged by a few
** tolerances), or anywhere around the mesh. */
static qn_vec2 read_point(world *w) {
    const qn_mesh *m = w->m;
    uint8_t k = fz_u8(&w->in);
    qn_vec2 kc[4];
    const qn_vec2 *c = qn__corners(m, fz_u8(&w->in) % m->quad_count, kc);
    if (k < 96) return qn__scale(qn__add(c[0], c[2]), 0.5f);
    if (k < 192) {
        qn_vec2 p = c[k % 4];
        float d = m->eps * (float)(k % 8) * ((k & 32) ? 1.0f : -1.0f);
        return qn__v2(p.x + d, p.y + ((k & 64) ? d : -d));
    }
    return qn__v2(-2.0f + 34.0f * (float)fz_u8(&w->in) / 255.0f,
                  -2.0f + 28.0f * (float)fz_u8(&w->in) / 255.0f);
}

static qn_status expected_goals(const qn_mesh *m, const qn_vec2 *goals, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        uint32_t q = fz_brute_locate(m, goals[i]);
        if (q == QN_NONE) return QN_E_OUTSIDE;
        if (m->blocked[q]) return QN_E_BLOCKED;
    }
    return QN_OK;
}

/* ---- comparison with a fresh build ------------------------------------------ */

static void compare_fresh(const own_field *of) {
    const qn_field *f = of->f;
    const qn_mesh *m = qn_field_mesh(f);
    /* The same options: a repairable field is in the mid-point model where
    ** costs differ, and exact (rebuilt, not repaired) where all open quads
    ** cost the same, as a fresh one is. */
    qn_field_opts ro = of->o;
    qn_field *ref = NULL;
    qn_status st = qn_field_create(m, of->goals, of->ng, &ro, NULL, &ref, NULL);
    if (st == QN_E_BLOCKED) { /* a goal quad is blocked now */
        if (of->ng == 1)
            for (uint32_t q = 0; q < m->quad_count; q++)
                FZ_CHECK(!isfinite(qn_field_quad_cost(f, q)),
                         "quad %u reachable while the goal quad is blocked", q);
        return;
    }
    FZ_CHECK(st == QN_OK, "fresh build: %s", qn_status_name(st));
    bool exits = fz_exits(f);
    for (uint32_t q = 0; q < m->quad_count; q++) {
        float a = qn_field_quad_cost(f, q), b = qn_field_quad_cost(ref, q);
        uint32_t ea = exits ? qn_field_quad_exit(f, q) : QN_NONE;
        uint32_t eb = exits ? qn_field_quad_exit(ref, q) : QN_NONE;
        if (of->o.repairable)
            FZ_CHECK(isfinite(a) == isfinite(b) &&
                         (!isfinite(a) || fabsf(a - b) <= 1e-4f * fmaxf(1.0f, b)),
                     "repaired quad %u cost %.9g, rebuild %.9g", q, (double)a, (double)b);
        else
            FZ_CHECK(memcmp(&a, &b, sizeof a) == 0, "updated quad %u cost %.9g, rebuild %.9g", q,
                     (double)a, (double)b);
        FZ_CHECK(ea == eb, "%s quad %u exit %u, rebuild %u",
                 of->o.repairable ? "repaired" : "updated", q, ea, eb);
    }
    qn_field_destroy(ref);
}

/* ---- operations --------------------------------------------------------------- */

static void op_build(world *w) {
    own_field *of = &w->fields[fz_u8(&w->in) % SLOTS];
    qn_field_destroy(of->f);
    of->f = NULL;
    uint8_t flags = fz_u8(&w->in);
    of->ng = 1 + (flags & 1);
    for (uint32_t i = 0; i < of->ng; i++)
        of->goals[i] = read_point(w);
    memset(&of->o, 0, sizeof of->o);
    of->o.radius = radii[(flags >> 1) % 6];
    of->o.repairable = (flags & 16) != 0;
    of->o.midpoint_costs = (flags & 32) != 0;
    of->o.lookahead = fz_u8(&w->in) % (QN_MAX_LOOKAHEAD + 4);
    qn_status want = of->o.lookahead > QN_MAX_LOOKAHEAD ? QN_E_INVALID_ARG
                                                        : expected_goals(w->m, of->goals, of->ng);
    qn_field *f = (qn_field *)1;
    qn_status st = qn_field_create(w->m, of->goals, of->ng, &of->o, &w->a, &f, NULL);
    expect(w, st, want, "field create");
    FZ_CHECK((st == QN_OK) == (f != NULL), "field %p with %s", (void *)f, qn_status_name(st));
    of->f = f;
    if (f) fz_check_field_shape(f);
}

static void op_destroy(world *w) {
    own_field *of = &w->fields[fz_u8(&w->in) % SLOTS];
    qn_field_destroy(of->f);
    of->f = NULL;
}

static void op_cost(world *w) {
    static const float costs[8] = {1.0f, 2.0f, 3.0f, 1.5f, 6.0f, 0.5f, NAN, 2.0e6f};
    uint32_t n = w->m->quad_count, q = fz_u8(&w->in) % (n + 1);
    float c = costs[fz_u8(&w->in) % 8];
    bool valid = q < n && c >= 1.0f && c <= QN_MAX_QUAD_COST;
    bool changes = valid && qn__quad_cost(w->m, q) != c;
    uint64_t v = qn_mesh_version(w->m);
    float before = q < n ? qn_mesh_quad_cost(w->m, q) : 0.0f;
    qn_status st = qn_mesh_set_quad_cost(w->m, q, c);
    expect(w, st, valid ? QN_OK : QN_E_INVALID_ARG, "set cost");
    /* Refused (the mesh's first cost other than 1 needs its cost array):
    ** nothing changes. */
    if (st == QN_E_NOMEM) changes = false;
    FZ_CHECK(qn_mesh_version(w->m) == v + changes, "version %llu after %llu",
             (unsigned long long)qn_mesh_version(w->m), (unsigned long long)v);
    if (valid && st == QN_OK) FZ_CHECK(qn_mesh_quad_cost(w->m, q) == c, "cost of %u not set", q);
    if (st == QN_E_NOMEM)
        FZ_CHECK(qn_mesh_quad_cost(w->m, q) == before, "cost of %u changed by a refused call", q);
}

static void op_block(world *w) {
    uint32_t n = w->m->quad_count, q = fz_u8(&w->in) % (n + 1);
    bool b = fz_u8(&w->in) & 1;
    bool changes = q < n && (w->m->blocked[q] != 0) != b;
    uint64_t v = qn_mesh_version(w->m);
    expect(w, qn_mesh_set_quad_blocked(w->m, q, b), q < n ? QN_OK : QN_E_INVALID_ARG, "block");
    FZ_CHECK(qn_mesh_version(w->m) == v + changes, "version after blocking");
    if (q < n) FZ_CHECK(qn_mesh_quad_blocked(w->m, q) == b, "quad %u not (un)blocked", q);
    for (uint32_t i = 0; i < n; i++) /* islands follow the flags */
        FZ_CHECK((qn_mesh_island(w->m, i) == QN_NONE) == (w->m->blocked[i] != 0),
                 "quad %u island %u", i, qn_mesh_island(w->m, i));
}

static void check_held(const world *w) {
    for (uint32_t i = 0; i < w->nheld; i++)
        if (qn_field_is_current(w->held[i])) fz_check_field_shape(w->held[i]);
}

static void op_update(world *w) {
    for (uint32_t i = 0; i < SLOTS; i++) {
        own_field *of = &w->fields[i];
        if (!of->f) continue;
        qn_status st = qn_field_update(of->f, NULL);
        expect(w, st, QN_OK, "field update");
        if (st != QN_OK) { /* the field is of no use now: rebuild it */
            qn_field_destroy(of->f);
            of->f = NULL;
            continue;
        }
        fz_check_field_shape(of->f);
        compare_fresh(of);
    }
    if (!w->cache) return;
    qn_status st = qn_cache_update(w->cache, NULL);
    expect(w, st, QN_OK, "cache update");
    if (st == QN_OK)
        for (uint32_t i = 0; i < w->nheld; i++)
            FZ_CHECK(qn_field_is_current(w->held[i]), "held field %u stale after update", i);
    check_held(w);
}

/* Sampling a field that is not current must still be safe. */
static void sample_stale(const qn_field *f, const qn_vec2 *pts, uint32_t n) {
    qn_vec2 dirs[FZ_MAX_POINTS];
    uint8_t sts[FZ_MAX_POINTS];
    FZ_CHECK(qn_field_sample_batch(f, pts, dirs, sts, NULL, n) == QN_OK, "stale batch");
    for (uint32_t i = 0; i < n; i++) {
        FZ_CHECK(sts[i] < QN_STATUS_COUNT, "status %u", sts[i]);
        fz_check_dir((qn_status)sts[i], dirs[i]);
    }
}

static void sample_field(const qn_field *f, const qn_vec2 *pts, uint32_t n) {
    if (qn_field_is_current(f))
        fz_check_sampling(f, pts, n);
    else
        sample_stale(f, pts, n);
}

static void op_sample(world *w) {
    qn_vec2 pts[16];
    uint32_t n = 1 + fz_u8(&w->in) % 16;
    for (uint32_t i = 0; i < n; i++)
        pts[i] = read_point(w);
    fz_check_mesh_queries(w->m, pts, n);
    for (uint32_t i = 0; i < SLOTS; i++)
        if (w->fields[i].f) sample_field(w->fields[i].f, pts, n);
    for (uint32_t i = 0; i < w->nheld; i++)
        sample_field(w->held[i], pts, n);
}

/* Threads give the same bits as one batch. */
static void op_parallel(world *w) {
    qn_vec2 pts[FZ_MAX_POINTS], d1[FZ_MAX_POINTS], d2[FZ_MAX_POINTS];
    uint8_t s1[FZ_MAX_POINTS], s2[FZ_MAX_POINTS];
    uint32_t q1[FZ_MAX_POINTS], q2[FZ_MAX_POINTS];
    uint32_t n = 1 + fz_u8(&w->in) % FZ_MAX_POINTS, threads = 2 + fz_u8(&w->in) % 2;
    for (uint32_t i = 0; i < n; i++)
        pts[i] = read_point(w);
    for (uint32_t k = 0; k < SLOTS; k++) {
        const qn_field *f = w->fields[k].f;
        if (!f || !qn_field_is_current(f)) continue;
        for (uint32_t i = 0; i < n; i++)
            q1[i] = q2[i] = (i * 7) % (w->m->quad_count + 1);
        FZ_CHECK(qn_field_sample_batch(f, pts, d1, s1, q1, n) == QN_OK, "batch");
        qn_status st = qn_field_sample_parallel(f, pts, d2, s2, q2, n, threads);
        FZ_CHECK(st == QN_OK || st == QN_E_NOMEM, "parallel: %s", qn_status_name(st));
        FZ_CHECK(memcmp(d1, d2, n * sizeof *d1) == 0 && memcmp(s1, s2, n) == 0 &&
                     memcmp(q1, q2, n * sizeof *q1) == 0,
                 "%u threads differ from one batch", threads);
    }
    FZ_CHECK(w->fields[0].f == NULL || qn_field_sample_parallel(w->fields[0].f, pts, d2, s2, q2, n,
                                                                0) == QN_E_INVALID_ARG,
             "0 threads accepted");
}

static uint32_t distinct_held(const world *w) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->nheld; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = w->held[j] == w->held[i];
        n += !seen;
    }
    return n;
}

static void check_cache_stats(const world *w) {
    qn_cache_stats s;
    qn_cache_get_stats(w->cache, &s);
    FZ_CHECK(s.bytes <= s.budget_bytes, "cache holds %zu bytes, budget %zu", s.bytes,
             s.budget_bytes);
    FZ_CHECK(s.held == distinct_held(w), "cache says %u held, %u are", s.held, distinct_held(w));
    FZ_CHECK(s.entries >= s.held, "%u entries, %u held", s.entries, s.held);
}

static void op_acquire(world *w) {
    if (!w->cache) return;
    qn_vec2 goal = read_point(w);
    float radius = radii[fz_u8(&w->in) % 6];
    qn_cache_stats before, after;
    qn_cache_get_stats(w->cache, &before);
    const qn_field *f = (const qn_field *)1;
    qn_status st = qn_cache_acquire(w->cache, goal, radius, &f, NULL);
    qn_cache_get_stats(w->cache, &after);
    FZ_CHECK((st == QN_OK) == (f != NULL), "cached field %p with %s", (const void *)f,
             qn_status_name(st));
    if (st == QN_OK) {
        FZ_CHECK(qn_field_is_current(f), "acquired a stale field");
        bool was_hit = after.hits == before.hits + 1;
        FZ_CHECK(was_hit != (after.misses == before.misses + 1), "neither hit nor miss");
        if (!was_hit) expect(w, QN_OK, expected_goals(w->m, &goal, 1), "cache miss");
        fz_check_field_shape(f);
        if (w->nheld < HELD)
            w->held[w->nheld++] = f;
        else
            qn_cache_release(w->cache, f);
    } else {
        /* Over the budget only once the field is built, so the goal is fine. */
        expect(w, st == QN_E_LIMIT ? QN_OK : st, expected_goals(w->m, &goal, 1), "cache acquire");
    }
    check_cache_stats(w);
}

static void op_release(world *w) {
    if (!w->cache || w->nheld == 0) return;
    uint32_t i = fz_u8(&w->in) % w->nheld;
    qn_cache_release(w->cache, w->held[i]);
    w->held[i] = w->held[--w->nheld];
    check_cache_stats(w);
}

static void op_path(world *w) {
    qn_vec2 a = read_point(w), b = read_point(w);
    float r = radii[fz_u8(&w->in) % 6];
    if (w->pf) fz_check_path_query(w->pf, w->m->eps, a, b, r);
    bool visible = true;
    qn_status st = qn_mesh_line_of_sight(w->m, a, b, r, QN_NONE, &visible);
    FZ_CHECK(st == QN_OK || st == QN_E_OUTSIDE, "line of sight: %s", qn_status_name(st));
    FZ_CHECK(st == QN_OK || !visible, "visible from outside");
    /* A clear line ends in an open quad. */
    if (st == QN_OK && visible)
        FZ_CHECK(fz_in_open_quad(w->m, b),
                 "visible at radius %g from (%.9g, %.9g), but the end (%.9g, %.9g) is not near "
                 "an open quad",
                 (double)r, (double)a.x, (double)a.y, (double)b.x, (double)b.y);
}

/* ---- grid mode -------------------------------------------------------------------- */

/* The status qn_grid_field_create must give. */
static qn_status expected_grid_field(const qn_grid *g, const own_grid_field *gf) {
    uint32_t n = qn_grid_width(g) * qn_grid_height(g);
    if (gf->o.connectivity != QN_CONNECT_8 && gf->o.connectivity != QN_CONNECT_4)
        return QN_E_INVALID_ARG;
    if (gf->o.stop_enabled && gf->o.stop_cell >= n) return QN_E_INVALID_ARG;
    for (uint32_t i = 0; i < gf->ng; i++) {
        if (gf->goals[i] >= n) return QN_E_INVALID_ARG;
        if (qn_grid_costs(g)[gf->goals[i]] == QN_CELL_WALL) return QN_E_BLOCKED;
    }
    return QN_OK;
}

/* An updated grid field equals a fresh build exactly: the same doubles, the
** same flows. Goals that are walls now do not count; with none left every
** cell is unreachable. */
static void compare_grid_fresh(const qn_grid *g, const own_grid_field *gf) {
    uint32_t goals[3], ng = 0;
    for (uint32_t i = 0; i < gf->ng; i++)
        if (qn_grid_costs(g)[gf->goals[i]] != QN_CELL_WALL) goals[ng++] = gf->goals[i];
    qn_grid_field *ref = NULL;
    if (ng) {
        qn_status st = qn_grid_field_create(g, goals, ng, &gf->o, NULL, &ref, NULL);
        FZ_CHECK(st == QN_OK, "fresh grid field: %s", qn_status_name(st));
    }
    for (uint32_t y = 0; y < qn_grid_height(g); y++)
        for (uint32_t x = 0; x < qn_grid_width(g); x++) {
            double a = qn_grid_field_cost(gf->f, x, y);
            double b = ref ? qn_grid_field_cost(ref, x, y) : (double)INFINITY;
            FZ_CHECK(memcmp(&a, &b, sizeof a) == 0, "updated cell (%u, %u) %.17g, fresh %.17g", x,
                     y, a, b);
            uint8_t da = qn_grid_field_dir(gf->f, x, y);
            uint8_t db = ref ? qn_grid_field_dir(ref, x, y) : QN_DIR_NONE;
            FZ_CHECK(da == db, "updated cell (%u, %u) flows %u, fresh %u", x, y, da, db);
            qn_vec2 va = qn_grid_field_vec(gf->f, x, y);
            qn_vec2 vb = ref ? qn_grid_field_vec(ref, x, y) : qn__v2(0, 0);
            FZ_CHECK(memcmp(&va, &vb, sizeof va) == 0,
                     "updated cell (%u, %u) vector (%.9g, %.9g), fresh (%.9g, %.9g)", x, y,
                     (double)va.x, (double)va.y, (double)vb.x, (double)vb.y);
        }
    qn_grid_field_destroy(ref);
}

static void op_grid_build(world *w) {
    if (!w->g) return;
    own_grid_field *gf = &w->gfields[fz_u8(&w->in) % GRID_SLOTS];
    qn_grid_field_destroy(gf->f);
    gf->f = NULL;
    gf->broken = false;
    uint32_t n = qn_grid_width(w->g) * qn_grid_height(w->g);
    uint8_t flags = fz_u8(&w->in);
    gf->ng = 1 + flags % 3;
    for (uint32_t i = 0; i < gf->ng; i++)
        gf->goals[i] = fz_u16(&w->in) % (n + 1);
    memset(&gf->o, 0, sizeof gf->o);
    gf->o.connectivity = (qn_connectivity)((flags >> 2) % 3); /* 2: not a connectivity */
    gf->o.stop_enabled = (flags & 0x30) == 0x30;
    gf->o.stop_cell = gf->o.stop_enabled ? fz_u16(&w->in) % (n + 1) : 0;
    gf->o.no_flow = (flags & 0xC0) == 0xC0;
    qn_grid_field *f = (qn_grid_field *)1;
    qn_status st = qn_grid_field_create(w->g, gf->goals, gf->ng, &gf->o, &w->a, &f, NULL);
    expect(w, st, expected_grid_field(w->g, gf), "grid field create");
    FZ_CHECK((st == QN_OK) == (f != NULL), "grid field %p with %s", (void *)f, qn_status_name(st));
    gf->f = f;
    if (f && !gf->o.stop_enabled) fz_check_grid_field(f, gf->o.connectivity == QN_CONNECT_8);
}

static void op_stamp(world *w) {
    static const uint8_t costs[8] = {1, 1, 2, 7, 254, QN_CELL_WALL, QN_CELL_WALL, 0};
    if (!w->g) return;
    uint32_t gw = qn_grid_width(w->g), gh = qn_grid_height(w->g);
    uint32_t x0 = fz_u8(&w->in) % (gw + 1), y0 = fz_u8(&w->in) % (gh + 1);
    uint32_t x1 = x0 + fz_u8(&w->in) % 9, y1 = y0 + fz_u8(&w->in) % 9;
    uint8_t c = costs[fz_u8(&w->in) % 8];
    bool valid = c != 0 && x0 < x1 && y0 < y1 && x1 <= gw && y1 <= gh;
    bool changes = false;
    for (uint32_t y = y0; valid && y < y1; y++)
        for (uint32_t x = x0; x < x1; x++)
            changes = changes || qn_grid_cost(w->g, x, y) != c;
    uint64_t v = qn_grid_version(w->g);
    expect(w, qn_grid_stamp(w->g, x0, y0, x1, y1, c), valid ? QN_OK : QN_E_INVALID_ARG, "stamp");
    FZ_CHECK(qn_grid_version(w->g) == v + changes, "grid version after a stamp");
    for (uint32_t y = y0; valid && y < y1; y++)
        for (uint32_t x = x0; x < x1; x++)
            FZ_CHECK(qn_grid_cost(w->g, x, y) == c, "cell (%u, %u) not stamped", x, y);
}

static void op_grid_update(world *w) {
    for (uint32_t i = 0; i < GRID_SLOTS; i++) {
        own_grid_field *gf = &w->gfields[i];
        if (!gf->f) continue;
        qn_status st = qn_grid_field_update(gf->f, NULL);
        expect(w, st, QN_OK, "grid field update");
        gf->broken = st != QN_OK;
        gf->broken_at = qn_grid_version(w->g);
        if (st != QN_OK) { /* documented: all unreachable until the next update */
            FZ_CHECK(!qn_grid_field_is_current(gf->f), "failed update left the field current");
            for (uint32_t y = 0; y < qn_grid_height(w->g); y++)
                for (uint32_t x = 0; x < qn_grid_width(w->g); x++)
                    FZ_CHECK(!isfinite(qn_grid_field_cost(gf->f, x, y)) &&
                                 qn_grid_field_dir(gf->f, x, y) == QN_DIR_NONE,
                             "cell (%u, %u) reachable after a failed update", x, y);
            continue;
        }
        FZ_CHECK(qn_grid_field_is_current(gf->f), "grid field not current after update");
        compare_grid_fresh(w->g, gf);
        if (!gf->o.stop_enabled) fz_check_grid_field(gf->f, gf->o.connectivity == QN_CONNECT_8);
    }
}

/* Batch and one-by-one samples agree, and each status fits the cell. */
static void op_grid_sample(world *w) {
    qn_vec2 pts[16], dirs[16];
    uint8_t sts[16];
    uint32_t cells[16];
    uint32_t n = 1 + fz_u8(&w->in) % 16;
    for (uint32_t i = 0; i < n; i++)
        pts[i] = read_point(w);
    for (uint32_t k = 0; k < GRID_SLOTS; k++) {
        const qn_grid_field *f = w->gfields[k].f;
        if (!f) continue;
        qn_flow_kind kind = (k + n) % 2 ? QN_FLOW_VECTOR : QN_FLOW_DIR8;
        FZ_CHECK(qn_grid_field_sample_batch(f, kind, pts, dirs, sts, cells, n) == QN_OK,
                 "grid batch");
        for (uint32_t i = 0; i < n; i++) {
            qn_vec2 d;
            uint32_t cell;
            qn_status st = qn_grid_field_sample(f, kind, pts[i], &cell, &d);
            FZ_CHECK(st == sts[i] && cell == cells[i] && memcmp(&d, &dirs[i], sizeof d) == 0,
                     "grid sample %u differs from the batch", i);
            fz_check_dir(st, d);
            /* After a failed update every cell reads as unreachable, except
            ** that walls of the grid at that time still say so. */
            if (w->gfields[k].broken && w->gfields[k].broken_at == qn_grid_version(w->g))
                FZ_CHECK(st == QN_E_OUTSIDE || st == QN_E_UNREACHABLE ||
                             (st == QN_E_BLOCKED && qn_grid_costs(w->g)[cell] == QN_CELL_WALL),
                         "grid sample %s after a failed update", qn_status_name(st));
            /* A stale field answers for the grid it was built on. */
            if (st == QN_E_OUTSIDE || !qn_grid_field_is_current(f)) continue;
            uint32_t gw = qn_grid_width(w->g);
            double c = qn_grid_field_cost(f, cell % gw, cell / gw);
            bool wall = qn_grid_costs(w->g)[cell] == QN_CELL_WALL;
            FZ_CHECK(st == QN_E_BLOCKED ? wall
                                        : !wall && (st == QN_E_UNREACHABLE) == !isfinite(c) &&
                                              (st == QN_AT_GOAL) == (c == 0.0),
                     "grid sample %s at a cell of cost %g%s", qn_status_name(st), c,
                     wall ? " (wall)" : "");
        }
    }
}

/* ---- hierarchical instances and grid tiles ----------------------------------- */

static bool uniform_mesh(const qn_mesh *m) {
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (!m->blocked[q] && qn__quad_cost(m, q) != 1.0f) return false;
    return true;
}

/* Three samplings of the same points by destinations of one goal: a batch
** on d1 (building its sectors), then jobs on d1 (sectors built: the same
** bits) and jobs on a fresh d2 (its jobs build the sectors, maybe in
** another order: the same statuses and hints). sample(f, ..., jobs) takes
** jobs 0 for the batch form. Without allocation failures only: a sector
** that could not be built is tried again by the next sample. */
typedef qn_status (*fz_sampler)(const void *f, const qn_vec2 *p, qn_vec2 *d, uint8_t *st,
                                uint32_t *q, uint32_t n, uint32_t jobs);
static void compare_samplings(const world *w, fz_sampler sample, const void *d1, const void *d2,
                              const qn_vec2 *pts, uint32_t n, uint32_t jobs, const char *what) {
    qn_vec2 a[FZ_MAX_POINTS], b[FZ_MAX_POINTS], c[FZ_MAX_POINTS];
    uint8_t sa[FZ_MAX_POINTS], sb[FZ_MAX_POINTS], sc[FZ_MAX_POINTS];
    uint32_t qa[FZ_MAX_POINTS], qb[FZ_MAX_POINTS], qc[FZ_MAX_POINTS];
    for (uint32_t i = 0; i < n; i++)
        qa[i] = qb[i] = qc[i] = QN_NONE;
    FZ_CHECK(sample(d1, pts, a, sa, qa, n, 0) == QN_OK, "%s batch", what);
    qn_status st = sample(d1, pts, b, sb, qb, n, jobs);
    FZ_CHECK(st == QN_OK || st == QN_E_NOMEM, "%s jobs: %s", what, qn_status_name(st));
    st = sample(d2, pts, c, sc, qc, n, jobs);
    FZ_CHECK(st == QN_OK || st == QN_E_NOMEM, "%s fresh jobs: %s", what, qn_status_name(st));
    for (uint32_t i = 0; i < n; i++) {
        FZ_CHECK(sa[i] < QN_STATUS_COUNT && sb[i] < QN_STATUS_COUNT && sc[i] < QN_STATUS_COUNT,
                 "%s status", what);
        fz_check_dir((qn_status)sa[i], a[i]);
        fz_check_dir((qn_status)sb[i], b[i]);
        fz_check_dir((qn_status)sc[i], c[i]);
    }
    if (w->failing) return;
    FZ_CHECK(memcmp(a, b, n * sizeof *a) == 0 && memcmp(sa, sb, n) == 0 &&
                 memcmp(qa, qb, n * sizeof *qa) == 0,
             "%s: %u jobs on built sectors differ from one batch", what, jobs);
    FZ_CHECK(memcmp(sa, sc, n) == 0 && memcmp(qa, qc, n * sizeof *qa) == 0,
             "%s: %u jobs on a fresh destination differ from one batch", what, jobs);
}

static qn_status hier_sample(const void *f, const qn_vec2 *p, qn_vec2 *d, uint8_t *st, uint32_t *q,
                             uint32_t n, uint32_t jobs) {
    return jobs ? qn_hfield_sample_jobs(f, p, d, st, q, n, jobs, NULL)
                : qn_hfield_sample_batch(f, p, d, st, q, n);
}

/* A hierarchical instance of the mesh as it is now, or after setting every
** open quad's cost to 1 (refused unless they all cost 1; its sector graph
** is built on the built-in runner's threads), and two destinations of one
** goal sampled as above. */
static void op_hier(world *w) {
    qn_hier_opts o = {.sector_size = (float)(2 + fz_u8(&w->in) % 14),
                      .node_spacing = (float)(fz_u8(&w->in) % 8)};
    qn_vec2 goal = read_point(w), pts[FZ_MAX_POINTS];
    float radius = radii[fz_u8(&w->in) % 6];
    uint32_t n = 1 + fz_u8(&w->in) % FZ_MAX_POINTS, jobs = 1 + fz_u8(&w->in) % 4;
    for (uint32_t i = 0; i < n; i++)
        pts[i] = read_point(w);
    if (fz_u8(&w->in) & 1) /* every open quad to cost 1 first (a mesh change) */
        for (uint32_t q = 0; q < w->m->quad_count; q++)
            if (!w->m->blocked[q] && qn__quad_cost(w->m, q) != 1.0f)
                expect(w, qn_mesh_set_quad_cost(w->m, q, 1.0f), QN_OK, "cost 1");
    qn_hier *h = NULL;
    qn_status st = qn_hier_create(w->m, &o, &w->a, &h, NULL);
    expect(w, st, uniform_mesh(w->m) ? QN_OK : QN_E_MISMATCH, "hier create");
    if (st != QN_OK) return;
    qn_hfield *d1 = NULL, *d2 = NULL;
    qn_status want = expected_goals(w->m, &goal, 1);
    st = qn_hfield_create(h, goal, radius, &w->a, &d1, NULL);
    expect(w, st, want, "destination");
    if (st == QN_OK) {
        st = qn_hfield_create(h, goal, radius, &w->a, &d2, NULL);
        expect(w, st, want, "second destination");
    }
    if (st == QN_OK) compare_samplings(w, hier_sample, d1, d2, pts, n, jobs, "hier");
    qn_hfield_destroy(d1);
    qn_hfield_destroy(d2);
    qn_hier_destroy(h);
}

static qn_status tiles_sample(const void *f, const qn_vec2 *p, qn_vec2 *d, uint8_t *st, uint32_t *q,
                              uint32_t n, uint32_t jobs) {
    qn_flow_kind k = n % 2 ? QN_FLOW_VECTOR : QN_FLOW_DIR8;
    return jobs ? qn_grid_tfield_sample_jobs(f, k, p, d, st, q, n, jobs, NULL)
                : qn_grid_tfield_sample_batch(f, k, p, d, st, q, n);
}

/* Grid tiles of the rasterised mesh as it is now (their sectors' costs
** are built on the built-in runner's threads), and two fields of one goal
** cell sampled as above. */
static void op_tiles(world *w) {
    if (!w->g) return; /* the grid could not be made (allocation failures) */
    uint32_t sector = 4 + fz_u8(&w->in) % 13, gw = qn_grid_width(w->g), gh = qn_grid_height(w->g);
    uint32_t goal = (uint32_t)fz_u16(&w->in) % (gw * gh), jobs = 1 + fz_u8(&w->in) % 4;
    uint32_t n = 1 + fz_u8(&w->in) % FZ_MAX_POINTS;
    qn_vec2 pts[FZ_MAX_POINTS];
    for (uint32_t i = 0; i < n; i++)
        pts[i] = read_point(w);
    qn_grid_tiles *t = NULL;
    qn_status st = qn_grid_tiles_create(w->g, sector, &w->a, &t, NULL);
    expect(w, st, QN_OK, "tiles create");
    if (st != QN_OK) return;
    qn_grid_tfield *f1 = NULL, *f2 = NULL;
    qn_status want = qn_grid_costs(w->g)[goal] == QN_CELL_WALL ? QN_E_BLOCKED : QN_OK;
    st = qn_grid_tfield_create(t, goal, NULL, &w->a, &f1, NULL);
    expect(w, st, want, "tile field");
    if (st == QN_OK) {
        st = qn_grid_tfield_create(t, goal, NULL, &w->a, &f2, NULL);
        expect(w, st, want, "second tile field");
    }
    if (st == QN_OK) compare_samplings(w, tiles_sample, f1, f2, pts, n, jobs, "tiles");
    qn_grid_tfield_destroy(f1);
    qn_grid_tfield_destroy(f2);
    qn_grid_tiles_destroy(t);
}

/* ---- the run ------------------------------------------------------------------- */

static bool make_world(world *w) {
    static tm_mesh t;
    uint64_t s = fz_u16(&w->in) + 1;
    int max_rects = 2 + fz_u8(&w->in) % 127;
    t.n = 0;
    tm_guillotine(&t, &s, 0, 0, 30, 24, 8, max_rects);
    for (uint32_t q = 0; q < t.n; q++) {
        t.costs[q] = (float)(1 + tm_rand(&s) % 3);
        t.blocked[q] = tm_rand(&s) % 16 == 0;
    }
    qn_mesh_desc d = tm_desc(&t);
    qn_status st = qn_mesh_create(&d, &w->a, &w->m, NULL);
    expect(w, st, QN_OK, "mesh create");
    if (st != QN_OK) return false;
    uint8_t c = fz_u8(&w->in);
    qn_cache_opts co = {.budget_bytes = (size_t)(c & 0x7f) * 256, .repairable = (c & 0x80) != 0};
    expect(w, qn_cache_create(w->m, &co, &w->a, &w->cache, NULL), QN_OK, "cache create");
    expect(w, qn_pathfinder_create(w->m, &w->a, &w->pf, NULL), QN_OK, "pathfinder create");
    expect(w, qn_grid_from_mesh(w->m, 1.0f, &w->a, &w->g, NULL), QN_OK, "grid from mesh");
    return true;
}

static void free_world(world *w) {
    for (uint32_t i = 0; i < w->nheld; i++)
        qn_cache_release(w->cache, w->held[i]);
    if (w->cache) {
        qn_cache_stats s;
        qn_cache_get_stats(w->cache, &s);
        FZ_CHECK(s.held == 0, "%u fields still held after releasing all", s.held);
    }
    qn_cache_destroy(w->cache);
    qn_pathfinder_destroy(w->pf);
    for (uint32_t i = 0; i < SLOTS; i++)
        qn_field_destroy(w->fields[i].f);
    for (uint32_t i = 0; i < GRID_SLOTS; i++)
        qn_grid_field_destroy(w->gfields[i].f);
    qn_grid_destroy(w->g);
    qn_mesh_destroy(w->m);
}

/* One byte picks the next operation; changes come twice as often as the
** rest so that updates have something to do. */
static void (*const ops[])(world *) = {
    op_build,      op_destroy, op_cost,     op_cost,        op_block,       op_block,
    op_update,     op_sample,  op_parallel, op_acquire,     op_release,     op_path,
    op_grid_build, op_stamp,   op_stamp,    op_grid_update, op_grid_sample, op_hier,
    op_tiles,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static world w;
    memset(&w, 0, sizeof w);
    w.in = (fz_bytes){data, size, 0};
    failalloc fa;
    uint8_t mode = fz_u8(&w.in);
    w.failing = mode >= 0xE0;
    w.a = failalloc_init(&fa, w.failing ? fz_u8(&w.in) : UINT64_MAX);
    if (make_world(&w)) {
        for (int done = 0; done < MAX_OPS && fz_more(&w.in); done++)
            ops[fz_u8(&w.in) % (sizeof ops / sizeof ops[0])](&w);
    }
    free_world(&w);
    FZ_CHECK(fa.live == 0, "%lld bytes leaked", (long long)fa.live);
    return 0;
}
