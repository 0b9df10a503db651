/* test_grid_mesh.c: grids to meshes (rectangle decomposition) and back
** (rasterisation), the level files `quadnav import-map` writes, and
** out-of-memory behaviour. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "failalloc.h"
#include "internal.h"
#include "testmesh.h"
#include "tool.h"

/* Implemented in tools/cmd_import.c (see the comment there). */
int qn_tool_write_grid_level(FILE *f, const char *name, const qn_grid *g, const qn_mesh *m);

/* ---- fixtures ---------------------------------------------------------- */

static qn_grid *make_grid(uint32_t w, uint32_t h, const uint8_t *costs, float cs, qn_vec2 o) {
    qn_grid_desc d = {w, h, costs, cs, o};
    qn_grid *g = NULL;
    qn_error e;
    qn_status st = qn_grid_create(&d, NULL, &g, &e);
    if (st != QN_OK) fail_msg("grid_create: %s: %s", qn_status_name(st), e.message);
    return g;
}

static qn_mesh *mesh_of(const qn_grid *g) {
    qn_mesh *m = NULL;
    qn_error e;
    qn_status st = qn_mesh_from_grid(g, NULL, &m, &e);
    if (st != QN_OK) fail_msg("mesh_from_grid: %s: %s", qn_status_name(st), e.message);
    return m;
}

/* A random grid: cost patches painted over ground, then walls, some cells
** of random cost. Patches make rectangles worth finding. */
static uint8_t *random_costs(uint64_t *s, uint32_t w, uint32_t h, uint32_t wall_pct) {
    uint8_t *c = malloc((size_t)w * h);
    assert_non_null(c);
    memset(c, 1, (size_t)w * h);
    static const uint8_t palette[] = {2, 3, 7, 254};
    uint32_t patches = tm_rand(s) % 6;
    for (uint32_t p = 0; p < patches; p++) {
        uint32_t x0 = tm_rand(s) % w, y0 = tm_rand(s) % h;
        uint32_t x1 = x0 + 1 + tm_rand(s) % (w - x0), y1 = y0 + 1 + tm_rand(s) % (h - y0);
        uint8_t v = palette[tm_rand(s) % 4];
        for (uint32_t y = y0; y < y1; y++) memset(c + (size_t)y * w + x0, v, x1 - x0);
    }
    for (size_t i = 0; i < (size_t)w * h; i++) {
        uint32_t r = tm_rand(s) % 100;
        if (r < wall_pct) c[i] = QN_CELL_WALL;
        else if (r < wall_pct + 3) c[i] = (uint8_t)(1 + tm_rand(s) % 254);
    }
    return c;
}

/* ---- checking a decomposition ------------------------------------------ */

/* A quad's cells [r0, r2) x [r1, r3), checking it is an axis-aligned
** rectangle on grid lines with corners in the documented order. */
static void quad_rect(const qn_grid *g, const qn_mesh *m, uint32_t q, uint32_t r[4]) {
    qn_vec2 c[4], o = qn_grid_origin(g);
    float cs = qn_grid_cell_size(g);
    assert_int_equal(qn_mesh_quad_corners(m, q, c), QN_OK);
    assert_true(c[0].y == c[1].y && c[1].x == c[2].x && c[2].y == c[3].y && c[3].x == c[0].x);
    assert_true(c[0].x < c[1].x && c[1].y < c[2].y);
    double v[4] = {(double)c[0].x, (double)c[0].y, (double)c[2].x, (double)c[2].y},
           base[4] = {(double)o.x, (double)o.y, (double)o.x, (double)o.y};
    for (int k = 0; k < 4; k++) {
        double cell = (v[k] - base[k]) / (double)cs;
        double ri = floor(cell + 0.5);
        assert_true(fabs(cell - ri) < 1e-6);
        assert_true(ri >= 0);
        r[k] = (uint32_t)ri;
    }
    assert_true(r[2] <= qn_grid_width(g) && r[3] <= qn_grid_height(g));
}

/* Marks each cell with the quad covering it: every passable cell exactly
** once, no wall, one cost per quad equal to its cells'. */
static uint32_t *owners(const qn_grid *g, const qn_mesh *m) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    const uint8_t *c = qn_grid_costs(g);
    uint32_t *own = malloc((size_t)w * h * sizeof *own);
    assert_non_null(own);
    for (size_t i = 0; i < (size_t)w * h; i++) own[i] = QN_NONE;
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        uint32_t r[4];
        quad_rect(g, m, q, r);
        float cost = qn_mesh_quad_cost(m, q);
        for (uint32_t y = r[1]; y < r[3]; y++)
            for (uint32_t x = r[0]; x < r[2]; x++) {
                size_t i = (size_t)y * w + x;
                assert_int_not_equal(c[i], QN_CELL_WALL);
                assert_int_equal(own[i], QN_NONE);
                assert_true(cost == (float)c[i]);
                own[i] = q;
            }
    }
    for (size_t i = 0; i < (size_t)w * h; i++)
        assert_true((own[i] == QN_NONE) == (c[i] == QN_CELL_WALL));
    return own;
}

/* One unit cell edge between two quads: on line `line` (x for a vertical
** edge, y for a horizontal one), from `pos` to pos + 1 along it. */
typedef struct cell_edge {
    uint32_t a, b;
    uint32_t vertical;
    uint32_t line, pos;
} cell_edge;

static int cmp_edge(const void *x, const void *y) {
    const cell_edge *p = x, *q = y;
    const uint32_t k1[5] = {p->a, p->b, p->vertical, p->line, p->pos};
    const uint32_t k2[5] = {q->a, q->b, q->vertical, q->line, q->pos};
    for (int i = 0; i < 5; i++)
        if (k1[i] != k2[i]) return k1[i] < k2[i] ? -1 : 1;
    return 0;
}

static void push_edge(cell_edge *e, size_t *n, uint32_t qa, uint32_t qb, uint32_t vertical,
                      uint32_t line, uint32_t pos) {
    if (qa == qb) return;
    cell_edge x = {qa < qb ? qa : qb, qa < qb ? qb : qa, vertical, line, pos};
    e[(*n)++] = x;
}

/* The portal segment between quads a and b, from the mesh; false if none. */
static bool mesh_portal(const qn_mesh *m, uint32_t a, uint32_t b, qn_portal *out) {
    uint32_t ids[64], n = 0;
    assert_int_equal(qn_mesh_quad_portals(m, a, ids, 64, &n), QN_OK);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(qn_mesh_portal(m, ids[i], out), QN_OK);
        if (out->a == a && out->b == b) return true;
    }
    return false;
}

/* Checks one run of edges e[i..j) between the same two quads: one straight
** contiguous segment, equal to the mesh's portal between them. */
static void check_run(const qn_grid *g, const qn_mesh *m, const cell_edge *e, size_t i,
                      size_t j) {
    for (size_t k = i + 1; k < j; k++) {
        assert_int_equal(e[k].vertical, e[i].vertical);
        assert_int_equal(e[k].line, e[i].line);
        assert_int_equal(e[k].pos, e[k - 1].pos + 1); /* contiguous */
    }
    qn_portal p;
    assert_true(mesh_portal(m, e[i].a, e[i].b, &p));
    qn_vec2 o = qn_grid_origin(g);
    float cs = qn_grid_cell_size(g);
    float line = e[i].vertical ? o.x : o.y, along = e[i].vertical ? o.y : o.x;
    line += (float)e[i].line * cs;
    float lo = along + (float)e[i].pos * cs, hi = along + (float)e[j - 1].pos * cs + cs;
    qn_vec2 a = e[i].vertical ? qn__v2(line, lo) : qn__v2(lo, line);
    qn_vec2 b = e[i].vertical ? qn__v2(line, hi) : qn__v2(hi, line);
    float tol = 1e-4f * (1.0f + fabsf(line) + fabsf(hi));
    bool same = (qn__len(qn__sub(p.p0, a)) < tol && qn__len(qn__sub(p.p1, b)) < tol) ||
                (qn__len(qn__sub(p.p0, b)) < tol && qn__len(qn__sub(p.p1, a)) < tol);
    if (!same)
        fail_msg("portal %u-%u is (%g,%g)-(%g,%g), cells say (%g,%g)-(%g,%g)", e[i].a, e[i].b,
                 (double)p.p0.x, (double)p.p0.y, (double)p.p1.x, (double)p.p1.y, (double)a.x,
                 (double)a.y, (double)b.x, (double)b.y);
}

/* Quad adjacency equals cell adjacency: a portal between two quads iff some
** pair of 4-adjacent passable cells lies one in each, and the portal is the
** union of the shared cell edges. */
static void check_adjacency(const qn_grid *g, const qn_mesh *m, const uint32_t *own) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    cell_edge *e = malloc(2 * (size_t)w * h * sizeof *e + 1);
    assert_non_null(e);
    size_t n = 0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t q = own[(size_t)y * w + x];
            if (q == QN_NONE) continue;
            if (x + 1 < w && own[(size_t)y * w + x + 1] != QN_NONE)
                push_edge(e, &n, q, own[(size_t)y * w + x + 1], 1, x + 1, y);
            if (y + 1 < h && own[(size_t)(y + 1) * w + x] != QN_NONE)
                push_edge(e, &n, q, own[(size_t)(y + 1) * w + x], 0, y + 1, x);
        }
    qsort(e, n, sizeof *e, cmp_edge);
    uint32_t pairs = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && e[j].a == e[i].a && e[j].b == e[i].b) j++;
        check_run(g, m, e, i, j);
        pairs++;
        i = j;
    }
    assert_int_equal(qn_mesh_portal_count(m), pairs);
    free(e);
}

/* The rasterised mesh gives back the grid: same passable cells and costs.
** Its origin is the mesh's bounds, the box of the passable cells, so the
** two grids are offset by whole cells; cells outside it must be walls. */
static void check_round_trip(const qn_grid *g, const qn_mesh *m) {
    float cs = qn_grid_cell_size(g);
    qn_grid *r = NULL;
    qn_error e;
    assert_int_equal(qn_grid_from_mesh(m, cs, NULL, &r, &e), QN_OK);
    assert_true(qn_grid_cell_size(r) == cs);
    qn_vec2 o = qn_grid_origin(g), ro = qn_grid_origin(r);
    double fx = ((double)ro.x - (double)o.x) / (double)cs;
    double fy = ((double)ro.y - (double)o.y) / (double)cs;
    long dx = lround(fx), dy = lround(fy);
    assert_true(fabs(fx - (double)dx) < 1e-6 && fabs(fy - (double)dy) < 1e-6);
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g);
    uint32_t rw = qn_grid_width(r), rh = qn_grid_height(r);
    assert_true(dx >= 0 && dy >= 0 && (uint32_t)dx + rw <= w && (uint32_t)dy + rh <= h);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            long lx = (long)x - dx, ly = (long)y - dy;
            uint8_t want = qn_grid_cost(g, x, y);
            bool in = lx >= 0 && ly >= 0 && lx < (long)rw && ly < (long)rh;
            uint8_t got = in ? qn_grid_cost(r, (uint32_t)lx, (uint32_t)ly) : QN_CELL_WALL;
            if (got != want) fail_msg("cell (%u, %u): cost %u, back %u", x, y, want, got);
        }
    qn_grid_destroy(r);
}

/* All the checks on one grid; returns the quad count. */
/* The portals qn_mesh_from_grid finds from the cells are exactly those the
** general edge pairing of qn_mesh_create finds for the same rectangles. */
static void check_same_as_general(const qn_grid *g, const qn_mesh *m) {
    qn_mesh *gm = NULL;
    assert_int_equal(qn__mesh_from_grid_with(g, QN__DECOMP_FEWEST, false, NULL, &gm, NULL), QN_OK);
    assert_int_equal(qn_mesh_quad_count(gm), qn_mesh_quad_count(m));
    assert_int_equal(qn_mesh_portal_count(gm), qn_mesh_portal_count(m));
    for (uint32_t i = 0; i < qn_mesh_portal_count(m); i++) {
        qn_portal a, b;
        assert_int_equal(qn_mesh_portal(m, i, &a), QN_OK);
        assert_int_equal(qn_mesh_portal(gm, i, &b), QN_OK);
        assert_memory_equal(&a, &b, sizeof a);
        /* The quads' edges they lie on too (the boundary cycles use them). */
        qn__portal pm = qn__portal_at(m, i), pg = qn__portal_at(gm, i);
        assert_int_equal(pm.edge[0], pg.edge[0]);
        assert_int_equal(pm.edge[1], pg.edge[1]);
    }
    assert_int_equal(qn_mesh_island_count(gm), qn_mesh_island_count(m));
    qn_mesh_destroy(gm);
}

static uint32_t check_grid(const qn_grid *g) {
    qn_mesh *m = mesh_of(g);
    uint32_t *own = owners(g, m);
    check_same_as_general(g, m);
    check_adjacency(g, m, own);
    check_round_trip(g, m);
    /* Listed in row-major order of their top-left cells. */
    uint32_t prev[4] = {0, 0, 0, 0};
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        uint32_t r[4];
        quad_rect(g, m, q, r);
        if (q) assert_true(r[1] > prev[1] || (r[1] == prev[1] && r[0] > prev[0]));
        memcpy(prev, r, sizeof prev);
    }
    uint32_t n = qn_mesh_quad_count(m);
    free(own);
    qn_mesh_destroy(m);
    return n;
}

/* ---- decomposition tests ---------------------------------------------- */

static void test_random_grids(void **state) {
    (void)state;
    uint64_t s = 12345;
    const float sizes[3] = {1.0f, 0.25f, 3.0f};
    const qn_vec2 origins[3] = {{0, 0}, {-3.0f, 2.5f}, {120.0f, -48.0f}};
    uint32_t grids = 0;
    for (int it = 0; it < 300; it++) {
        uint32_t w = 1 + tm_rand(&s) % 40, h = 1 + tm_rand(&s) % 40;
        uint32_t wall = (uint32_t)(it % 5) * 15; /* 0, 15, 30, 45, 60 % walls */
        uint8_t *c = random_costs(&s, w, h, wall);
        c[tm_rand(&s) % ((size_t)w * h)] = 1; /* at least one passable cell */
        qn_grid *g = make_grid(w, h, c, sizes[it % 3], origins[(it / 3) % 3]);
        check_grid(g);
        qn_grid_destroy(g);
        free(c);
        grids++;
    }
    assert_int_equal(grids, 300);
}

static void assert_same_mesh(const qn_mesh *a, const qn_mesh *b);

/* A mesh of rectangles keeps boxes, not corners; its portals keep no
** segment when the rectangles give each one bit for bit (qn__portal_at),
** and all of them when one differs: here two rectangles whose edges meet
** within the tolerance but not exactly, where the shared segment takes
** the upper one's coordinates. Either way the portals read the same as
** they were paired, and save and load keep them. */
static void test_lean_layout(void **state) {
    (void)state;
    uint64_t s = 777;
    uint8_t *c = random_costs(&s, 30, 20, 30);
    c[0] = 1;
    qn_grid *g = make_grid(30, 20, c, 1.0f, (qn_vec2){-4.0f, 2.5f});
    qn_mesh *m = mesh_of(g);
    assert_non_null(m->rects);
    assert_null(m->corners);
    assert_null(m->pgeo);
    assert_null(m->pedge);
    assert_null(m->planes);
    check_same_as_general(g, m);
    /* The first field keeps the portals' segments in the mesh, as the
    ** rectangles give them, and qn_mesh_bytes counts them from then on. */
    size_t before = qn_mesh_bytes(m);
    assert_null(atomic_load(&m->segs));
    qn_field_opts disc = {.discrete = true};
    qn_field *f = NULL;
    qn_vec2 goal = {-3.5f, 3.0f}; /* cell 0's centre */
    assert_int_equal(qn_field_create(m, &goal, 1, &disc, NULL, &f, NULL), QN_OK);
    const qn__pgeo *segs = atomic_load(&m->segs);
    assert_non_null(segs);
    assert_true(qn_mesh_bytes(m) == before + (size_t)m->portal_count * sizeof(qn__pgeo));
    for (uint32_t i = 0; i < qn_mesh_portal_count(m); i++) {
        qn_portal p;
        assert_int_equal(qn_mesh_portal(m, i, &p), QN_OK);
        assert_memory_equal(&segs[i].p0, &p.p0, sizeof p.p0);
        assert_memory_equal(&segs[i].p1, &p.p1, sizeof p.p1);
    }
    qn_field_destroy(f);
    assert_true(atomic_load(&m->segs) == segs); /* kept with the mesh */
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
    free(c);

    const float up = 1.0f + 1.1920929e-07f; /* one ulp above 1 */
    const qn_vec2 v[8] = {{0, 0}, {2, 0}, {2, 1}, {0, 1}, {0.5f, up}, {1.5f, up}, {1.5f, 2}, {0.5f, 2}};
    const uint32_t idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    qn_mesh_desc d = {.vertices = v, .vertex_count = 8, .quads = idx, .quad_count = 2};
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    assert_int_equal(qn_mesh_portal_count(m), 1);
    assert_non_null(m->rects);
    assert_non_null(m->pgeo);
    qn_portal p;
    assert_int_equal(qn_mesh_portal(m, 0, &p), QN_OK);
    assert_true(p.p0.x == 1.5f && p.p0.y == up && p.p1.x == 0.5f && p.p1.y == up);
    qn__portal derived = qn__portal_at(m, 0);
    qn__portal_derive(m, &derived);
    assert_false(derived.p0.y == up); /* the rectangles alone cannot say it */
    size_t len = 0;
    assert_int_equal(qn_mesh_save_mem(m, NULL, 0, &len, NULL), QN_E_BUFFER_TOO_SMALL);
    uint8_t *buf = malloc(len);
    assert_int_equal(qn_mesh_save_mem(m, buf, len, &len, NULL), QN_OK);
    qn_mesh *back = NULL;
    assert_int_equal(qn_mesh_load_mem(buf, len, NULL, &back, NULL), QN_OK);
    assert_non_null(back->pgeo);
    assert_same_mesh(m, back);
    free(buf);
    qn_mesh_destroy(back);
    qn_mesh_destroy(m);
}

/* The quad of a mesh of axis-aligned rectangles holding p, by looking at
** every quad (the last one holding it, as the buckets list them in order:
** any holding quad will do when p lies inside exactly one). */
static uint32_t brute_locate(const qn_mesh *m, qn_vec2 p) {
    uint32_t found = QN_NONE;
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
        qn_vec2 k[4];
        qn_mesh_quad_corners(m, q, k);
        if (p.x > k[0].x && p.x < k[2].x && p.y > k[0].y && p.y < k[2].y) found = q;
    }
    return found;
}

/* 2,000 random points of [0, 380] x [0, height] (off the unit grid's
** lines) located as brute_locate finds them; outside every quad, an error. */
static void check_locate(const qn_mesh *m, uint64_t *s, uint32_t height) {
    for (int i = 0; i < 2000; i++) {
        qn_vec2 p = {(float)(tm_rand(s) % 38000) / 100.0f + 0.005f,
                     (float)(tm_rand(s) % (height * 100)) / 100.0f + 0.005f};
        uint32_t q = QN_NONE, want = brute_locate(m, p);
        qn_status st = qn_mesh_locate(m, p, QN_NONE, &q);
        if (want == QN_NONE) {
            assert_int_not_equal(st, QN_OK);
        } else {
            assert_int_equal(st, QN_OK);
            assert_int_equal(q, want);
        }
    }
}

/* Bucket lists keep 16-bit offsets from each bucket's first quad while
** every list spans fewer than 65,536 quads, and 32-bit quads otherwise:
** here a big quad 0 shares buckets with small quads numbered past 65,536
** (a block of 280 x 250 unit squares, row by row, whose top rows it
** touches). Points are located the same as by looking at every quad,
** either way. */
static void test_bucket_offsets(void **state) {
    (void)state;
    const uint32_t cols = 280, rows = 250, n = 1 + cols * rows;
    qn_vec2 *v = malloc(4 * (size_t)n * sizeof *v);
    uint32_t *idx = malloc(4 * (size_t)n * sizeof *idx);
    assert_non_null(v);
    assert_non_null(idx);
    v[0] = (qn_vec2){0, 150}, v[1] = (qn_vec2){100, 150}, v[2] = (qn_vec2){100, 250};
    v[3] = (qn_vec2){0, 250};
    for (uint32_t y = 0, q = 1; y < rows; y++)
        for (uint32_t x = 0; x < cols; x++, q++) {
            float x0 = 100.0f + (float)x, y0 = (float)y;
            v[4 * q] = (qn_vec2){x0, y0}, v[4 * q + 1] = (qn_vec2){x0 + 1, y0};
            v[4 * q + 2] = (qn_vec2){x0 + 1, y0 + 1}, v[4 * q + 3] = (qn_vec2){x0, y0 + 1};
        }
    for (uint32_t i = 0; i < 4 * n; i++) idx[i] = i;
    qn_mesh_desc d = {.vertices = v, .vertex_count = 4 * n, .quads = idx, .quad_count = n};
    qn_mesh *m = NULL;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    assert_non_null(m->cell_list); /* some list spans more than 65,535 quads */
    assert_null(m->cell_off);
    uint64_t s = 99;
    check_locate(m, &s, 250);
    qn_mesh_destroy(m);
    /* Without the block's last rows every list is short: 16-bit offsets. */
    d.quad_count = 1 + cols * 200;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, NULL), QN_OK);
    assert_null(m->cell_list);
    assert_non_null(m->cell_off);
    check_locate(m, &s, 200);
    qn_mesh_destroy(m);
    free(v);
    free(idx);
}

/* An open grid is one quad; a grid of stripes of two costs is one quad per
** stripe; a checkerboard is one quad per passable cell. */
static void test_simple_shapes(void **state) {
    (void)state;
    uint8_t c[64 * 32];
    memset(c, 1, sizeof c);
    qn_grid *g = make_grid(64, 32, c, 1.0f, qn__v2(0, 0));
    assert_int_equal(check_grid(g), 1);
    qn_grid_destroy(g);
    for (uint32_t y = 0; y < 32; y++) memset(c + y * 64, (y / 4) % 2 ? 9 : 1, 64);
    g = make_grid(64, 32, c, 1.0f, qn__v2(0, 0));
    assert_int_equal(check_grid(g), 8);
    qn_grid_destroy(g);
    uint32_t open = 0;
    for (uint32_t i = 0; i < 64 * 32; i++) {
        c[i] = ((i % 64) + (i / 64)) % 2 ? QN_CELL_WALL : 1;
        open += c[i] == 1;
    }
    g = make_grid(64, 32, c, 1.0f, qn__v2(0, 0));
    assert_int_equal(check_grid(g), open);
    qn_grid_destroy(g);
}

/* A 1-wide grid and a single passable cell. */
static void test_thin_grids(void **state) {
    (void)state;
    uint8_t c[50];
    memset(c, 1, sizeof c);
    c[20] = QN_CELL_WALL;
    c[35] = 4;
    qn_grid *g = make_grid(1, 50, c, 1.0f, qn__v2(0, 0));
    assert_int_equal(check_grid(g), 4);
    qn_grid_destroy(g);
    g = make_grid(50, 1, c, 1.0f, qn__v2(0, 0));
    assert_int_equal(check_grid(g), 4);
    qn_grid_destroy(g);
    uint8_t one = 200;
    g = make_grid(1, 1, &one, 2.0f, qn__v2(-5, 5));
    qn_mesh *m = mesh_of(g);
    qn_vec2 k[4];
    assert_int_equal(qn_mesh_quad_corners(m, 0, k), QN_OK);
    assert_true(k[0].x == -5 && k[0].y == 5 && k[2].x == -3 && k[2].y == 7);
    assert_true(qn_mesh_quad_cost(m, 0) == 200.0f);
    qn_mesh_destroy(m);
    qn_grid_destroy(g);
}

static bool read_map(const char *name, qn_grid **g) {
    const char *dir = getenv("QN_DATA_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/maps/%s", dir && *dir ? dir : "data", name);
    if (access(path, R_OK) != 0) return false;
    qn_error e;
    qn_status st = qn_map_load_file(path, NULL, g, &e);
    if (st != QN_OK) fail_msg("%s: %s", path, e.message);
    return true;
}

/* The bundled maps: all checks, and far fewer quads than cells. */
static void test_bundled_maps(void **state) {
    (void)state;
    static const char *const maps[] = {"arena.map", "lak303d.map", "Berlin_0_256.map"};
    int found = 0;
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        qn_grid *g = NULL;
        if (!read_map(maps[i], &g)) continue;
        found++;
        const uint8_t *c = qn_grid_costs(g);
        size_t cells = 0;
        for (size_t k = 0; k < (size_t)qn_grid_width(g) * qn_grid_height(g); k++)
            cells += c[k] != QN_CELL_WALL;
        uint32_t quads = check_grid(g);
        printf("%-18s %7zu passable cells, %5u quads: quads/cells %.4f\n", maps[i], cells, quads,
               (double)quads / (double)cells);
        assert_true((size_t)quads * 8 < cells);
        qn_grid_destroy(g);
    }
    if (!found) skip();
}

/* ---- the fewest rectangles ----------------------------------------------- */

/* Fewest rectangles of one cost covering the uncovered passable cells of a
** tiny grid, by exhaustive search: the first uncovered cell in row-major
** order is the top-left corner of whichever rectangle covers it. */
static uint32_t brute_min(const uint8_t *c, uint8_t *covered, uint32_t w, uint32_t h,
                          uint32_t from, uint32_t best, uint32_t used) {
    while (from < w * h && (covered[from] || c[from] == QN_CELL_WALL)) from++;
    if (from == w * h) return used < best ? used : best;
    if (used + 1 >= best) return best;
    uint32_t x0 = from % w, y0 = from / w, xmax = w;
    for (uint32_t y1 = y0 + 1; y1 <= h; y1++) {
        uint32_t x = x0;
        while (x < xmax && !covered[(y1 - 1) * w + x] && c[(y1 - 1) * w + x] == c[from]) x++;
        xmax = x; /* a taller rectangle is at most as wide */
        if (xmax == x0) break;
        for (uint32_t x1 = x0 + 1; x1 <= xmax; x1++) {
            for (uint32_t y = y0; y < y1; y++) memset(covered + y * w + x0, 1, x1 - x0);
            best = brute_min(c, covered, w, h, from, best, used + 1);
            for (uint32_t y = y0; y < y1; y++) memset(covered + y * w + x0, 0, x1 - x0);
        }
    }
    return best;
}

static uint32_t rect_count(const qn_grid *g, qn__decomp how) {
    uint32_t n = 0;
    qn_error e;
    qn_status st = qn__grid_rect_count(g, how, NULL, &n, &e);
    if (st != QN_OK) fail_msg("grid_rect_count: %s", e.message);
    return n;
}

/* On tiny random grids (walls, two costs) the decomposition has exactly
** the fewest rectangles an exhaustive search finds, and is a valid mesh. */
static void test_fewest_is_minimum(void **state) {
    (void)state;
    uint64_t s = 4242;
    uint32_t fewer = 0;
    for (int it = 0; it < 400; it++) {
        uint32_t w = 2 + tm_rand(&s) % 5, h = 2 + tm_rand(&s) % 5;
        uint8_t c[36], covered[36] = {0};
        for (uint32_t i = 0; i < w * h; i++) {
            uint32_t r = tm_rand(&s) % 100;
            c[i] = r < 25 ? QN_CELL_WALL : (r < 35 && it % 2 ? 3 : 1);
        }
        c[tm_rand(&s) % (w * h)] = 1;
        qn_grid *g = make_grid(w, h, c, 1.0f, qn__v2(0, 0));
        uint32_t want = brute_min(c, covered, w, h, 0, UINT32_MAX, 0);
        uint32_t got = rect_count(g, QN__DECOMP_FEWEST), rows = rect_count(g, QN__DECOMP_ROWS);
        if (got != want)
            fail_msg("grid %d (%ux%u): %u rectangles, the fewest are %u", it, w, h, got, want);
        assert_int_equal(check_grid(g), got);
        fewer += want < rows;
        qn_grid_destroy(g);
    }
    assert_true(fewer > 0); /* the greedy rows are not always the fewest */
}

/* Pillars on a lattice (a wall at every odd x and odd y): the rows of
** pillars line up, so chords between them pay, and the greedy rows are not
** the fewest. The exhaustive search starts bounded by the greedy count. */
/* Obstacle corners on the sides of cell rectangle r = {x0, y0, x1, y1}:
** grid vertices on its boundary with exactly one wall (or outside) among
** the four cells round them. */
static uint32_t side_corners(const uint8_t *c, uint32_t w, uint32_t h, const uint32_t r[4]) {
    uint32_t n = 0;
    for (uint32_t y = r[1]; y <= r[3]; y++)
        for (uint32_t x = r[0]; x <= r[2]; x++) {
            if (x != r[0] && x != r[2] && y != r[1] && y != r[3]) continue;
            uint32_t walls = 0;
            for (int dy = -1; dy <= 0; dy++)
                for (int dx = -1; dx <= 0; dx++) {
                    long cx = (long)x + dx, cy = (long)y + dy;
                    walls += cx < 0 || cy < 0 || cx >= (long)w || cy >= (long)h ||
                             c[(size_t)cy * w + (size_t)cx] == QN_CELL_WALL;
                }
            n += walls == 1;
        }
    return n;
}

/* Corridors between rows of pillars: the fewest rectangles run the whole
** width with dozens of obstacle corners on their sides (each a root the
** exact instance may keep for them, and a corner a sample looks at);
** qn_mesh_from_grid cuts them so that none has more than 24, across, on
** both a wide and a tall layout. */
static void test_crowded_cut(void **state) {
    (void)state;
    for (int tall = 0; tall < 2; tall++) {
        uint32_t w = tall ? 20 : 61, h = tall ? 61 : 20;
        uint8_t *c = malloc((size_t)w * h);
        assert_non_null(c);
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                uint32_t a = tall ? y : x, b = tall ? x : y; /* a along the corridors */
                c[(size_t)y * w + x] = b % 3 == 1 && a % 3 == 1 ? QN_CELL_WALL : 1;
            }
        qn_grid *g = make_grid(w, h, c, 1.0f, qn__v2(0, 0));
        uint32_t fewest = rect_count(g, QN__DECOMP_FEWEST), most = 0;
        qn_mesh *m = mesh_of(g);
        for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++) {
            uint32_t r[4];
            quad_rect(g, m, q, r);
            uint32_t k = side_corners(c, w, h, r);
            most = k > most ? k : most;
        }
        assert_true(most <= 24);
        assert_true(qn_mesh_quad_count(m) > fewest);
        qn_mesh_destroy(m);
        check_grid(g); /* adjacency, round trip, row-major order */
        qn_grid_destroy(g);
        free(c);
    }
}

static void test_fewest_pillars(void **state) {
    (void)state;
    for (uint32_t n = 5; n <= 7; n += 2) {
        uint8_t c[49], covered[49] = {0};
        for (uint32_t i = 0; i < n * n; i++)
            c[i] = (i % n) % 2 && (i / n) % 2 ? QN_CELL_WALL : 1;
        qn_grid *g = make_grid(n, n, c, 1.0f, qn__v2(0, 0));
        uint32_t rows = rect_count(g, QN__DECOMP_ROWS);
        uint32_t want = brute_min(c, covered, n, n, 0, rows + 1, 0);
        assert_int_equal(check_grid(g), want);
        assert_true(want < rows);
        qn_grid_destroy(g);
    }
}

/* On the bundled maps the fewest rectangles are never more than the greedy
** rows, and both decompositions are valid meshes. */
static void test_fewest_on_maps(void **state) {
    (void)state;
    static const char *const maps[] = {"arena.map", "lak303d.map", "Berlin_0_256.map"};
    int found = 0;
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        qn_grid *g = NULL;
        if (!read_map(maps[i], &g)) continue;
        found++;
        uint32_t rows = rect_count(g, QN__DECOMP_ROWS), fewest = rect_count(g, QN__DECOMP_FEWEST);
        qn_mesh *m = NULL;
        assert_int_equal(qn__mesh_from_grid_with(g, QN__DECOMP_ROWS, true, NULL, &m, NULL), QN_OK);
        assert_int_equal(qn_mesh_quad_count(m), rows);
        qn_mesh_destroy(m);
        printf("%-18s rows %5u, fewest %5u\n", maps[i], rows, fewest);
        assert_true(fewest <= rows);
        qn_grid_destroy(g);
    }
    if (!found) skip();
}

/* ---- rasterising a hand-made mesh --------------------------------------- */

/* Quads: an open rect, a costly rect (2.6 rounds to 3), a blocked rect, and
** a trapezoid with a slanted side whose cost (300) clamps to 254. */
static qn_mesh *hand_mesh(float shift_x, float shift_y) {
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 4, 2);
    tm_add_rect(&t, 4, 0, 6, 2);
    t.costs[1] = 2.6f;
    tm_add_rect(&t, 0, 2, 2, 3);
    t.blocked[2] = 1;
    tm_add_rect(&t, 2, 2, 6, 4);
    t.verts[4 * 3 + 3] = qn__v2(5, 4); /* (2,2) (6,2) (6,4) (5,4) */
    t.costs[3] = 300.0f;
    for (uint32_t i = 0; i < 4 * t.n; i++) {
        t.verts[i].x += shift_x;
        t.verts[i].y += shift_y;
    }
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    qn_error e;
    qn_status st = qn_mesh_create(&d, NULL, &m, &e);
    if (st != QN_OK) fail_msg("mesh_create: %s", e.message);
    return m;
}

static void test_rasterise_hand_mesh(void **state) {
    (void)state;
    /* Row 2 (centre y 2.5): the slanted side is at x = 2.75, so cells 3..5;
    ** row 3 (y 3.5): x = 4.25, cells 4 and 5. Cells 0, 1 of row 2 are in the
    ** blocked quad: walls. */
    static const uint8_t want[4][6] = {{1, 1, 1, 1, 3, 3},
                                       {1, 1, 1, 1, 3, 3},
                                       {255, 255, 255, 254, 254, 254},
                                       {255, 255, 255, 255, 254, 254}};
    const float shifts[2][2] = {{0, 0}, {-10.5f, 3.0f}};
    for (int s = 0; s < 2; s++) {
        qn_mesh *m = hand_mesh(shifts[s][0], shifts[s][1]);
        qn_grid *g = (qn_grid *)1;
        qn_error e;
        assert_int_equal(qn_grid_from_mesh(m, 1.0f, NULL, &g, &e), QN_OK);
        assert_int_equal(qn_grid_width(g), 6);
        assert_int_equal(qn_grid_height(g), 4);
        assert_true(qn_grid_origin(g).x == shifts[s][0] && qn_grid_origin(g).y == shifts[s][1]);
        for (uint32_t y = 0; y < 4; y++)
            for (uint32_t x = 0; x < 6; x++)
                if (qn_grid_cost(g, x, y) != want[y][x])
                    fail_msg("shift %d cell (%u, %u): %u, want %u", s, x, y,
                             qn_grid_cost(g, x, y), want[y][x]);
        qn_grid_destroy(g);
        /* Half-size cells: row 5 (y 2.75) has the side at x = 3.125, so the
        ** first open cell there is x = 6 (centre 3.25). */
        assert_int_equal(qn_grid_from_mesh(m, 0.5f, NULL, &g, &e), QN_OK);
        assert_int_equal(qn_grid_width(g), 12);
        assert_int_equal(qn_grid_height(g), 8);
        assert_int_equal(qn_grid_cost(g, 5, 5), QN_CELL_WALL);
        assert_int_equal(qn_grid_cost(g, 6, 5), 254);
        assert_int_equal(qn_grid_cost(g, 3, 4), QN_CELL_WALL); /* blocked */
        assert_int_equal(qn_grid_cost(g, 11, 0), 3);
        qn_grid_destroy(g);
        /* A cell size that does not divide the bounds: ceil(6 / 4) x ceil(4 / 4). */
        assert_int_equal(qn_grid_from_mesh(m, 4.0f, NULL, &g, &e), QN_OK);
        assert_int_equal(qn_grid_width(g), 2);
        assert_int_equal(qn_grid_height(g), 1);
        /* Centres (2, 2) and (6, 2) are corners shared by several quads;
        ** the lowest-numbered one counts: quads 0 and 1. */
        assert_int_equal(qn_grid_cost(g, 0, 0), 1);
        assert_int_equal(qn_grid_cost(g, 1, 0), 3);
        qn_grid_destroy(g);
        qn_mesh_destroy(m);
    }
}

/* A cell centre on the edge between a blocked quad (lower index, which
** point location reports first) and an open one takes the open one's cost. */
static void test_rasterise_blocked_border(void **state) {
    (void)state;
    tm_mesh t = {0};
    tm_add_rect(&t, 0, 0, 1, 2);
    t.blocked[0] = 1;
    tm_add_rect(&t, 1, 0, 2, 2);
    t.costs[1] = 5.0f;
    qn_mesh_desc d = tm_desc(&t);
    qn_mesh *m = NULL;
    qn_error e;
    assert_int_equal(qn_mesh_create(&d, NULL, &m, &e), QN_OK);
    qn_grid *g = NULL;
    assert_int_equal(qn_grid_from_mesh(m, 2.0f, NULL, &g, &e), QN_OK);
    assert_int_equal(qn_grid_width(g), 1);
    assert_int_equal(qn_grid_cost(g, 0, 0), 5);
    qn_grid_destroy(g);
    /* Blocked on both sides: a wall. */
    t.blocked[1] = 1;
    d = tm_desc(&t);
    qn_mesh_destroy(m);
    assert_int_equal(qn_mesh_create(&d, NULL, &m, &e), QN_OK);
    assert_int_equal(qn_grid_from_mesh(m, 2.0f, NULL, &g, &e), QN_OK);
    assert_int_equal(qn_grid_cost(g, 0, 0), QN_CELL_WALL);
    qn_grid_destroy(g);
    qn_mesh_destroy(m);
}

/* Random guillotine meshes (T-junctions, holes, costs): the raster agrees
** with point location at every cell centre. */
static void test_rasterise_random_meshes(void **state) {
    (void)state;
    uint64_t s = 99;
    for (int it = 0; it < 40; it++) {
        tm_mesh *t = calloc(1, sizeof *t);
        assert_non_null(t);
        tm_guillotine(t, &s, 0, 0, 24, 16, 6, 64);
        for (uint32_t q = 0; q < t->n; q++) {
            t->costs[q] = 1.0f + (float)(tm_rand(&s) % 4000) / 10.0f;
            t->blocked[q] = tm_rand(&s) % 7 == 0;
        }
        qn_mesh_desc d = tm_desc(t);
        qn_mesh *m = NULL;
        qn_error e;
        assert_int_equal(qn_mesh_create(&d, NULL, &m, &e), QN_OK);
        float cs = (it % 2) ? 0.5f : 0.75f;
        qn_grid *g = NULL;
        assert_int_equal(qn_grid_from_mesh(m, cs, NULL, &g, &e), QN_OK);
        qn_rect b = qn_mesh_bounds(m);
        for (uint32_t y = 0; y < qn_grid_height(g); y++)
            for (uint32_t x = 0; x < qn_grid_width(g); x++) {
                qn_vec2 p = {b.min.x + ((float)x + 0.5f) * cs, b.min.y + ((float)y + 0.5f) * cs};
                /* Corners are integers and centres (x + 0.5) * cs with cs
                ** 0.5 or 0.75 never are, so each centre is inside one quad
                ** or outside all. */
                uint32_t q;
                if (qn_mesh_locate(m, p, QN_NONE, &q) != QN_OK) {
                    assert_int_equal(qn_grid_cost(g, x, y), QN_CELL_WALL);
                    continue;
                }
                uint8_t want = t->blocked[q] ? QN_CELL_WALL
                                             : (uint8_t)fminf(254.0f, roundf(t->costs[q]));
                assert_int_equal(qn_grid_cost(g, x, y), want);
            }
        qn_grid_destroy(g);
        qn_mesh_destroy(m);
        free(t);
    }
}

/* ---- errors -------------------------------------------------------------- */

static void test_errors(void **state) {
    (void)state;
    qn_error e;
    uint8_t walls[12];
    memset(walls, QN_CELL_WALL, sizeof walls);
    qn_grid *g = make_grid(4, 3, walls, 1.0f, qn__v2(0, 0));
    qn_mesh *m = (qn_mesh *)1;
    assert_int_equal(qn_mesh_from_grid(g, NULL, &m, &e), QN_E_INVALID_ARG);
    assert_null(m);
    assert_int_equal(e.code, QN_E_INVALID_ARG);
    assert_non_null(strstr(e.message, "no passable cell"));
    qn_grid_destroy(g);
    m = (qn_mesh *)1;
    assert_int_equal(qn_mesh_from_grid(NULL, NULL, &m, &e), QN_E_INVALID_ARG);
    assert_null(m);
    walls[5] = 1;
    g = make_grid(4, 3, walls, 1.0f, qn__v2(0, 0));
    assert_int_equal(qn_mesh_from_grid(g, NULL, NULL, &e), QN_E_INVALID_ARG);
    assert_int_equal(qn_mesh_from_grid(g, NULL, NULL, NULL), QN_E_INVALID_ARG);
    qn_grid_destroy(g);
    /* A grid whose far corner lies beyond QN_MAX_COORD. */
    g = make_grid(4, 3, walls, 1.0e5f, qn__v2(9.0e5f, 0));
    assert_int_equal(qn_mesh_from_grid(g, NULL, &m, &e), QN_E_BAD_NUMBER);
    assert_null(m);
    qn_grid_destroy(g);

    qn_mesh *hm = hand_mesh(0, 0);
    qn_grid *r = (qn_grid *)1;
    const float bad[] = {0.0f, -1.0f, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = (qn_grid *)1;
        assert_int_equal(qn_grid_from_mesh(hm, bad[i], NULL, &r, &e), QN_E_INVALID_ARG);
        assert_null(r);
        assert_int_equal(e.code, QN_E_INVALID_ARG);
    }
    r = (qn_grid *)1;
    assert_int_equal(qn_grid_from_mesh(NULL, 1.0f, NULL, &r, &e), QN_E_INVALID_ARG);
    assert_null(r);
    assert_int_equal(qn_grid_from_mesh(hm, 1.0f, NULL, NULL, &e), QN_E_INVALID_ARG);
    /* Too many cells: per side (6 / 1e-4 = 60000 > 16384), and in all
    ** (15000 x 10000 > 2^26), refused before any allocation. */
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    assert_int_equal(qn_grid_from_mesh(hm, 1e-4f, &a, &r, &e), QN_E_LIMIT);
    assert_null(r);
    assert_non_null(strstr(e.message, "cells"));
    assert_int_equal(qn_grid_from_mesh(hm, 4e-4f, &a, &r, &e), QN_E_LIMIT);
    assert_int_equal(fa.calls, 0); /* refused before allocating */
    qn_mesh_destroy(hm);
}

/* More rectangles than QN_MAX_QUADS: a checkerboard with 2^22 + 1 passable
** cells. */
static void test_too_many_quads(void **state) {
    (void)state;
    uint32_t w = 4096, h = 2049; /* 4096 * 2049 / 2 = 2^22 + 2048 passable */
    uint8_t *c = malloc((size_t)w * h);
    assert_non_null(c);
    for (size_t i = 0; i < (size_t)w * h; i++)
        c[i] = ((i % w) + (i / w)) % 2 ? QN_CELL_WALL : 1;
    qn_grid *g = make_grid(w, h, c, 1.0f, qn__v2(0, 0));
    free(c);
    failalloc fa;
    qn_allocator a = failalloc_init(&fa, UINT64_MAX);
    qn_mesh *m = (qn_mesh *)1;
    qn_error e;
    assert_int_equal(qn_mesh_from_grid(g, &a, &m, &e), QN_E_LIMIT);
    assert_null(m);
    assert_int_equal(fa.live, 0);
    qn_grid_destroy(g);
}

/* ---- out of memory ------------------------------------------------------- */

static void test_failing_allocator(void **state) {
    (void)state;
    uint64_t s = 7;
    uint8_t *c = random_costs(&s, 30, 20, 30);
    c[0] = 1;
    qn_grid *g = make_grid(30, 20, c, 1.0f, qn__v2(0, 0));
    free(c);
    qn_mesh *ref = mesh_of(g);
    for (int which = 0; which < 2; which++) {
        bool done = false;
        for (uint64_t k = 0; k < 1000 && !done; k++) {
            failalloc fa;
            qn_allocator a = failalloc_init(&fa, k);
            qn_error e;
            qn_status st;
            if (which == 0) {
                qn_mesh *m = (qn_mesh *)1;
                st = qn_mesh_from_grid(g, &a, &m, &e);
                if (st == QN_OK) {
                    assert_int_equal(qn_mesh_quad_count(m), qn_mesh_quad_count(ref));
                    assert_true(fa.live > 0); /* the mesh uses the allocator */
                }
                qn_mesh_destroy(st == QN_OK ? m : NULL);
                if (st != QN_OK) assert_null(m);
            } else {
                qn_grid *r = (qn_grid *)1;
                st = qn_grid_from_mesh(ref, 1.0f, &a, &r, &e);
                if (st == QN_OK) assert_true(fa.live > 0);
                qn_grid_destroy(st == QN_OK ? r : NULL);
                if (st != QN_OK) assert_null(r);
            }
            done = st == QN_OK;
            if (!done) {
                assert_int_equal(st, QN_E_NOMEM);
                assert_int_equal(e.code, QN_E_NOMEM);
                assert_true(fa.failures > 0);
            }
            assert_int_equal(fa.live, 0);
        }
        assert_true(done);
    }
    qn_mesh_destroy(ref);
    qn_grid_destroy(g);
}

/* ---- level files ------------------------------------------------------- */

/* Two meshes with the same quads (corners, costs, blocked) and portals. */
static void assert_same_mesh(const qn_mesh *a, const qn_mesh *b) {
    assert_int_equal(qn_mesh_quad_count(a), qn_mesh_quad_count(b));
    assert_int_equal(qn_mesh_portal_count(a), qn_mesh_portal_count(b));
    for (uint32_t q = 0; q < qn_mesh_quad_count(a); q++) {
        qn_vec2 ca[4], cb[4];
        qn_mesh_quad_corners(a, q, ca);
        qn_mesh_quad_corners(b, q, cb);
        assert_memory_equal(ca, cb, sizeof ca);
        assert_true(qn_mesh_quad_cost(a, q) == qn_mesh_quad_cost(b, q));
        assert_int_equal(qn_mesh_quad_blocked(a, q), qn_mesh_quad_blocked(b, q));
    }
    for (uint32_t i = 0; i < qn_mesh_portal_count(a); i++) {
        qn_portal pa, pb;
        qn_mesh_portal(a, i, &pa);
        qn_mesh_portal(b, i, &pb);
        assert_memory_equal(&pa, &pb, sizeof pa);
    }
}

static void assert_same_grid(const qn_grid *a, const qn_grid *b) {
    assert_non_null(b);
    assert_int_equal(qn_grid_width(a), qn_grid_width(b));
    assert_int_equal(qn_grid_height(a), qn_grid_height(b));
    assert_true(qn_grid_cell_size(a) == qn_grid_cell_size(b));
    assert_true(qn_grid_origin(a).x == qn_grid_origin(b).x);
    assert_true(qn_grid_origin(a).y == qn_grid_origin(b).y);
    assert_memory_equal(qn_grid_costs(a), qn_grid_costs(b),
                        (size_t)qn_grid_width(a) * qn_grid_height(a));
}

/* Writes the level for g with the tool's writer and loads it back. */
static qn_level *write_and_load(const qn_grid *g, const qn_mesh *m) {
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(qn_tool_write_grid_level(f, "test", g, m), 0);
    long n = ftell(f);
    assert_true(n > 0);
    char *buf = malloc((size_t)n);
    assert_non_null(buf);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    qn_level *l = NULL;
    qn_error e;
    qn_status st = qn_level_load_mem(buf, (size_t)n, NULL, &l, &e);
    if (st != QN_OK) fail_msg("level_load_mem: %s: %s\n%.*s", qn_status_name(st), e.message,
                              (int)(n < 2000 ? n : 2000), buf);
    free(buf);
    return l;
}

/* Grids with costs, cell sizes and origins: the level file loads and gives
** the same mesh and the same grid (cost entries included). */
static void test_level_writer(void **state) {
    (void)state;
    uint64_t s = 4242;
    const float sizes[3] = {1.0f, 0.5f, 2.0f};
    for (int it = 0; it < 30; it++) {
        uint32_t w = 1 + tm_rand(&s) % 30, h = 1 + tm_rand(&s) % 30;
        uint8_t *c = random_costs(&s, w, h, (uint32_t)(it % 4) * 15);
        c[0] = 3;
        qn_vec2 o = it % 2 ? qn__v2(-7.5f, 12.0f) : qn__v2(0, 0);
        qn_grid *g = make_grid(w, h, c, sizes[it % 3], o);
        free(c);
        qn_mesh *m = mesh_of(g);
        qn_level *l = write_and_load(g, m);
        assert_string_equal(qn_level_name(l), "test");
        assert_same_mesh(m, qn_level_mesh(l));
        assert_same_grid(g, qn_level_grid(l));
        assert_int_equal(qn_level_goal_count(l), 0);
        qn_level_destroy(l);
        qn_mesh_destroy(m);
        qn_grid_destroy(g);
    }
}

/* `quadnav import-map` on a bundled map: the file it writes loads and gives
** the mesh qn_mesh_from_grid makes from the map, and the map as its grid. */
static void test_import_command(void **state) {
    (void)state;
    const char *dir = getenv("QN_DATA_DIR");
    char map[1024];
    snprintf(map, sizeof map, "%s/maps/lak303d.map", dir && *dir ? dir : "data");
    qn_grid *g = NULL;
    if (!read_map("lak303d.map", &g)) skip();
    char out[] = "/tmp/qn_import_XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    char a0[] = "import-map", a2[] = "-o", a4[] = "--json";
    char *argv[] = {a0, map, a2, out, a4, NULL};
    assert_int_equal(qn_tool_import_map(5, argv), 0);
    qn_level *l = NULL;
    qn_error e;
    qn_status st = qn_level_load_file(out, NULL, &l, &e);
    remove(out);
    if (st != QN_OK) fail_msg("%s: %s", qn_status_name(st), e.message);
    assert_string_equal(qn_level_name(l), "lak303d");
    qn_mesh *m = mesh_of(g);
    assert_same_mesh(m, qn_level_mesh(l));
    assert_same_grid(g, qn_level_grid(l));
    qn_mesh_destroy(m);
    qn_level_destroy(l);
    qn_grid_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_grids),
        cmocka_unit_test(test_simple_shapes),
        cmocka_unit_test(test_lean_layout),
        cmocka_unit_test(test_bucket_offsets),
        cmocka_unit_test(test_thin_grids),
        cmocka_unit_test(test_bundled_maps),
        cmocka_unit_test(test_fewest_is_minimum),
        cmocka_unit_test(test_fewest_pillars),
        cmocka_unit_test(test_crowded_cut),
        cmocka_unit_test(test_fewest_on_maps),
        cmocka_unit_test(test_rasterise_hand_mesh),
        cmocka_unit_test(test_rasterise_blocked_border),
        cmocka_unit_test(test_rasterise_random_meshes),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_too_many_quads),
        cmocka_unit_test(test_failing_allocator),
        cmocka_unit_test(test_level_writer),
        cmocka_unit_test(test_import_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
