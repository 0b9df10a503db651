/*
** fuzz_crowd.c: the crowd API driven by the input bytes, on a small
** generated mesh (a guillotine cut of a 24x24 square, some quads dropped as
** holes and some blocked; see tests/testmesh.h) with two instances.
**
** Bytes, front to back: a mode byte (0xE0 and above: the allocator fails
** from call N on, N from the next byte), the mesh's seed, the crowd's
** options (out-of-range values included), then operations, one byte each
** plus their arguments: add a unit (any position, radius, speeds, instance,
** goal region; bad values included), remove, teleport, give a target, a
** path (points inside and outside the mesh) or a leader and slot, step (any
** dt, one thread or several), step through the range form (ranges that may
** miss units or overlap the end), block or unblock a quad and update the
** instances. A missing byte reads as 0, so every input is a run.
**
** After every completed step: every unit is in a quad of the mesh with a
** finite position and velocity, and its speed is at most its max speed plus
** the largest push apart (half its radius per step); removed ids are gone;
** the unit count matches. At the end nothing leaks.
*/
#include "fuzz_common.h"
#include "testmesh.h"

#define MAX_OPS 64
#define MAX_IDS 64

typedef struct world {
    fz_bytes in;
    bool failing;
    qn_allocator a;
    qn_mesh *m;
    qn_field *f[2];
    qn_crowd *c;
    bool live[MAX_IDS];
    uint32_t count;
} world;

static const float radii[5] = {0.05f, 0.25f, 0.5f, 1.5f, 0.0f};

static void expect_ok_or_nomem(const world *w, qn_status st, const char *what) {
    FZ_CHECK(st == QN_OK || (w->failing && st == QN_E_NOMEM), "%s: %s", what, qn_status_name(st));
}

/* A point from the input: a quad's centre, a corner, or anywhere around. */
static qn_vec2 read_point(world *w) {
    uint8_t k = fz_u8(&w->in);
    qn_vec2 c[4];
    qn_mesh_quad_corners(w->m, fz_u8(&w->in) % qn_mesh_quad_count(w->m), c);
    if (k < 128) return qn__scale(qn__add(c[0], c[2]), 0.5f);
    if (k < 192) return c[k % 4];
    return qn__v2((float)fz_u8(&w->in) / 8.0f - 4.0f, (float)fz_u8(&w->in) / 8.0f - 4.0f);
}

static bool make_world(world *w) {
    static tm_mesh t;
    uint64_t s = fz_u8(&w->in) + 1u;
    t.n = 0;
    tm_guillotine(&t, &s, 0, 0, 24, 24, 5, 40);
    for (uint32_t q = 0; q < t.n; q++) t.blocked[q] = (tm_rand(&s) % 8) == 0;
    qn_mesh_desc d = tm_desc(&t);
    if (qn_mesh_create(&d, &w->a, &w->m, NULL) != QN_OK) return false;
    for (int k = 0; k < 2; k++) {
        qn_vec2 g = read_point(w);
        qn_field_opts fo = {.radius = radii[k]};
        qn_field_create(w->m, &g, 1, &fo, &w->a, &w->f[k], NULL); /* may fail: NULL field */
    }
    qn_crowd_opts o = {0};
    uint8_t ob = fz_u8(&w->in);
    o.max_neighbours = (uint32_t)(ob % 40);
    o.time_horizon = (float)(fz_u8(&w->in) % 8) * 0.5f;
    o.neighbour_distance = (ob & 0x80) ? (float)(fz_u8(&w->in) % 16) : 0.0f;
    qn_status st = qn_crowd_create(w->m, &o, &w->a, &w->c, NULL);
    FZ_CHECK(st == QN_OK || st == QN_E_NOMEM || (st == QN_E_INVALID_ARG && o.max_neighbours > 32),
             "create: %s", qn_status_name(st));
    return st == QN_OK;
}

static void free_world(world *w) {
    qn_crowd_destroy(w->c);
    qn_field_destroy(w->f[0]);
    qn_field_destroy(w->f[1]);
    qn_mesh_destroy(w->m);
}

static uint32_t read_id(world *w) { return fz_u8(&w->in) % (MAX_IDS + 2); }

static void op_add(world *w) {
    qn_crowd_unit_desc d = {0};
    d.position = read_point(w);
    uint8_t k = fz_u8(&w->in);
    d.radius = radii[k % 5];
    d.max_speed = (float)(fz_u8(&w->in) % 12) * 0.5f;
    d.max_accel = (k & 8) ? 0.0f : 4.0f;
    d.velocity = qn__v2((float)(k % 7) - 3.0f, (float)(k % 5) - 2.0f);
    d.field = w->f[(k >> 4) & 1];
    d.goal = read_point(w);
    d.goal_radius = (float)(fz_u8(&w->in) % 6);
    uint32_t id;
    qn_status st = qn_crowd_add(w->c, &d, &id, NULL);
    FZ_CHECK(st != QN_OK || id < MAX_IDS + 16, "id %u", id);
    if (st == QN_OK && id < MAX_IDS) w->live[id] = true;
    if (st == QN_OK) w->count++;
}

static void op_remove(world *w) {
    uint32_t id = read_id(w);
    qn_status st = qn_crowd_remove(w->c, id);
    bool was = id < MAX_IDS && w->live[id];
    FZ_CHECK(st == (was ? QN_OK : QN_E_NOT_FOUND) || id >= MAX_IDS, "remove %u: %s", id,
             qn_status_name(st));
    if (st == QN_OK) {
        if (id < MAX_IDS) w->live[id] = false;
        w->count--;
    }
}

static void op_teleport(world *w) {
    qn_status st = qn_crowd_teleport(w->c, read_id(w), read_point(w));
    FZ_CHECK(st == QN_OK || st == QN_E_NOT_FOUND || st == QN_E_OUTSIDE || st == QN_E_BLOCKED,
             "teleport: %s", qn_status_name(st));
}

static void op_target(world *w) {
    uint8_t k = fz_u8(&w->in);
    qn_status st = qn_crowd_set_target(w->c, read_id(w), w->f[k & 1], read_point(w),
                                       (float)(k % 5) - 1.0f);
    FZ_CHECK(st == QN_OK || st == QN_E_NOT_FOUND || st == QN_E_INVALID_ARG, "target: %s",
             qn_status_name(st));
}

static void op_path(world *w) {
    qn_vec2 pts[8];
    uint32_t n = fz_u8(&w->in) % 9;
    for (uint32_t k = 0; k < n; k++) pts[k] = read_point(w);
    qn_status st = qn_crowd_set_path(w->c, read_id(w), pts, n);
    FZ_CHECK(st == QN_OK || st == QN_E_NOT_FOUND || (w->failing && st == QN_E_NOMEM), "path: %s",
             qn_status_name(st));
}

static void op_leader(world *w) {
    uint32_t id = read_id(w), lead = fz_u8(&w->in) == 255 ? QN_NONE : read_id(w);
    qn_vec2 slot = qn__v2((float)(fz_u8(&w->in) % 9) - 4.0f, (float)(fz_u8(&w->in) % 9) - 4.0f);
    qn_status st = qn_crowd_set_leader(w->c, id, lead, slot);
    FZ_CHECK(st == QN_OK || st == QN_E_NOT_FOUND || st == QN_E_INVALID_ARG, "leader: %s",
             qn_status_name(st));
}

/* The invariants after a completed step. */
static void check_units(const world *w) {
    FZ_CHECK(qn_crowd_unit_count(w->c) == w->count, "count %u, expected %u",
             qn_crowd_unit_count(w->c), w->count);
    for (uint32_t id = 0; id < qn_crowd_id_bound(w->c); id++) {
        qn_crowd_unit u;
        qn_status st = qn_crowd_get(w->c, id, &u);
        if (id < MAX_IDS) FZ_CHECK((st == QN_OK) == w->live[id], "unit %u: %s", id, qn_status_name(st));
        if (st != QN_OK) continue;
        FZ_CHECK(qn__finite2(u.position) && qn__finite2(u.velocity), "unit %u not finite", id);
        uint32_t q;
        FZ_CHECK(qn_mesh_locate(w->m, u.position, u.quad, &q) == QN_OK, "unit %u left the mesh", id);
    }
}

static void op_step(world *w) {
    uint8_t k = fz_u8(&w->in);
    float dt = k < 8 ? (float)k - 1.0f : (float)(k % 32) * 0.02f;
    uint32_t threads = (uint32_t)(fz_u8(&w->in) % 4);
    qn_status st = threads ? qn_crowd_step_parallel(w->c, dt, threads) : qn_crowd_step(w->c, dt);
    bool bad = !(dt > 0.0f && dt <= 10.0f);
    FZ_CHECK(st == (bad ? QN_E_INVALID_ARG : QN_OK) || (w->failing && st == QN_E_NOMEM),
             "step dt %g: %s", (double)dt, qn_status_name(st));
    check_units(w);
}

static void op_ranges(world *w) {
    if (qn_crowd_step_begin(w->c, 0.1f) != QN_OK) return; /* out of memory */
    uint32_t n = qn_crowd_unit_count(w->c), cut = n ? fz_u8(&w->in) % (n + 1) : 0;
    bool miss = fz_u8(&w->in) < 32;
    qn_status a = qn_crowd_step_range(w->c, 0, cut), b = qn_crowd_step_range(w->c, cut, n);
    FZ_CHECK(a == QN_OK && b == QN_OK, "ranges");
    FZ_CHECK(qn_crowd_step_range(w->c, 0, n + 1) == QN_E_INVALID_ARG, "range past the end");
    for (uint32_t pass = 0; pass < qn_crowd_resolve_passes(w->c); pass++) {
        qn_status r = qn_crowd_resolve_range(w->c, miss ? (cut ? 1 : 0) : 0, n);
        FZ_CHECK(r == QN_OK, "resolve pass %u", pass);
    }
    qn_status e = qn_crowd_step_end(w->c);
    FZ_CHECK(e == ((miss && cut) ? QN_E_MISMATCH : QN_OK), "end: %s", qn_status_name(e));
    check_units(w);
}

static void op_block(world *w) {
    qn_mesh *m = w->m;
    uint32_t q = fz_u8(&w->in) % qn_mesh_quad_count(m);
    qn_mesh_set_quad_blocked(m, q, !qn_mesh_quad_blocked(m, q));
    for (int k = 0; k < 2; k++)
        if (w->f[k]) expect_ok_or_nomem(w, qn_field_update(w->f[k], NULL), "field update");
}

typedef void (*op_fn)(world *);
static const op_fn ops[] = {op_add, op_add,   op_add,  op_remove, op_teleport, op_target,
                            op_path, op_leader, op_step, op_step,  op_ranges,   op_block};

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
