/*
** crowd.c: the crowd handle and its units: create, destroy, add, remove,
** teleport, read back, targets, paths and formation slots. Units live in
** dense parallel arrays (structure of arrays, for the step's inner loops);
** an id table maps stable ids to dense positions, and removal moves the
** last unit into the hole, so every unit call is O(1).
*/
#include "crowd_internal.h"

/* One per-unit array: where its pointer lives and its element size. */
typedef struct unit_array {
    void **ptr;
    size_t size;
} unit_array;

#define ARR(field) {(void **)&c->u.field, sizeof *c->u.field}

/* Every per-unit array; returns how many. */
static uint32_t unit_arrays(qn_crowd *c, unit_array out[40]) {
    unit_array t[] = {ARR(id),    ARR(pos),   ARR(vel),       ARR(des),   ARR(heading),
                      ARR(goal),  ARR(slot),  ARR(rad),       ARR(vmax),  ARR(amax),
                      ARR(goal_r), ARR(field), ARR(group),    ARR(quad),  ARR(leader),
                      ARR(path_next), ARR(flags), ARR(path),  ARR(npos),  ARR(nvel),
                      ARR(ndes),  ARR(nquad), ARR(npath_next), ARR(nflags), ARR(hkey),
                      ARR(nfollow), ARR(fpos), ARR(fquad), ARR(nnb),
                      ARR(wait), ARR(nwait), ARR(nres)};
    uint32_t n = (uint32_t)(sizeof t / sizeof t[0]);
    memcpy(out, t, sizeof t);
    return n;
}

/* Grows every per-unit array to ncap units: all new arrays are allocated
** before any old one is given up, so a failure loses nothing. */
static bool grow_units(qn_crowd *c, uint32_t ncap) {
    unit_array a[40];
    void *fresh[40];
    uint32_t n = unit_arrays(c, a);
    for (uint32_t i = 0; i < n; i++) {
        fresh[i] = qn__alloc(&c->alloc, a[i].size * ncap);
        if (!fresh[i]) {
            for (uint32_t k = 0; k < i; k++) qn__free(&c->alloc, fresh[k], a[k].size * ncap);
            return false;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (c->count) memcpy(fresh[i], *a[i].ptr, a[i].size * c->count);
        qn__free(&c->alloc, *a[i].ptr, a[i].size * c->cap);
        *a[i].ptr = fresh[i];
    }
    c->cap = ncap;
    return true;
}

static bool grow_ids(qn_crowd *c, uint32_t ncap) {
    uint32_t *d = qn__alloc(&c->alloc, ncap * sizeof *d);
    uint32_t *f = qn__alloc(&c->alloc, ncap * sizeof *f);
    if (!d || !f) {
        qn__free(&c->alloc, d, ncap * sizeof *d);
        qn__free(&c->alloc, f, ncap * sizeof *f);
        return false;
    }
    if (c->id_cap) {
        memcpy(d, c->dense_of, c->id_cap * sizeof *d);
        memcpy(f, c->free_ids, c->id_cap * sizeof *f);
    }
    for (uint32_t i = c->id_cap; i < ncap; i++) d[i] = QN_NONE;
    qn__free(&c->alloc, c->dense_of, c->id_cap * sizeof *d);
    qn__free(&c->alloc, c->free_ids, c->id_cap * sizeof *f);
    c->dense_of = d;
    c->free_ids = f;
    c->id_cap = ncap;
    return true;
}

static qn_status check_opts(const qn_crowd_opts *o, qn_error *err) {
    if (o->max_neighbours > QN_CROWD_MAX_NEIGHBOURS)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "max_neighbours %u above %u",
                        o->max_neighbours, QN_CROWD_MAX_NEIGHBOURS);
    if (o->resolve_passes > QN_CROWD_MAX_RESOLVE_PASSES)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "resolve_passes %u above %u",
                        o->resolve_passes, QN_CROWD_MAX_RESOLVE_PASSES);
    float v[3] = {o->time_horizon, o->wall_horizon, o->neighbour_distance};
    const char *names[3] = {"time_horizon", "wall_horizon", "neighbour_distance"};
    float hi[3] = {100.0f, 100.0f, QN_MAX_COORD};
    for (int i = 0; i < 3; i++)
        if (!(v[i] >= 0.0f && v[i] <= hi[i]))
            return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "%s is not in [0, %g]", names[i],
                            (double)hi[i]);
    return QN_OK;
}

qn_status qn_crowd_create(const qn_mesh *mesh, const qn_crowd_opts *opts,
                          const qn_allocator *alloc, qn_crowd **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!mesh || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL mesh or out");
    qn_crowd_opts o = {0};
    if (opts) o = *opts;
    qn_status st = check_opts(&o, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    qn_crowd *c = qn__calloc(&a, 1, sizeof *c);
    if (!c) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (crowd)");
    c->alloc = a;
    c->mesh = mesh;
    c->max_nb = o.max_neighbours ? o.max_neighbours : 10;
    c->tau = o.time_horizon > 0.0f ? o.time_horizon : 1.5f;
    c->tau_wall = o.wall_horizon > 0.0f ? o.wall_horizon : 0.5f;
    c->nb_extra = o.neighbour_distance;
    c->passes = o.resolve_passes ? o.resolve_passes : QN_CROWD_DEFAULT_RESOLVE_PASSES;
    if (qn__walls_build(&c->walls, mesh, &c->alloc) != QN_OK) {
        qn_crowd_destroy(c);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (crowd walls)");
    }
    *out = c;
    return QN_OK;
}

static void free_path(qn_crowd *c, uint32_t i) {
    qn__cpath *p = &c->u.path[i];
    qn__free(&c->alloc, p->pts, (size_t)p->n * sizeof(qn_vec2));
    p->pts = NULL;
    p->n = 0;
}

void qn_crowd_destroy(qn_crowd *crowd) {
    if (!crowd) return;
    qn_crowd *c = crowd;
    for (uint32_t i = 0; i < c->count; i++) free_path(c, i);
    unit_array a[40];
    uint32_t n = unit_arrays(c, a);
    for (uint32_t i = 0; i < n; i++) qn__free(&c->alloc, *a[i].ptr, a[i].size * c->cap);
    qn__free(&c->alloc, c->dense_of, c->id_cap * sizeof(uint32_t));
    qn__free(&c->alloc, c->free_ids, c->id_cap * sizeof(uint32_t));
    qn__walls_free(&c->walls, &c->alloc);
    qn__crowd_step_free(c);
    qn__free(&c->alloc, c->nbr, c->nbr_cap * c->max_nb * sizeof(uint32_t));
    qn_allocator al = c->alloc;
    qn__free(&al, c, sizeof *c);
}

/* ---- units ------------------------------------------------------------ */

/* Quad of p for a unit: QN_OK, QN_E_OUTSIDE or QN_E_BLOCKED. */
static qn_status place(const qn_crowd *c, qn_vec2 p, uint32_t hint, uint32_t *quad,
                       qn_error *err) {
    *quad = qn__locate(c->mesh, p, hint);
    if (*quad == QN_NONE)
        return qn__fail(err, QN_E_OUTSIDE, QN_NONE, "position (%g, %g) is outside the mesh",
                        (double)p.x, (double)p.y);
    if (c->mesh->blocked[*quad])
        return qn__fail(err, QN_E_BLOCKED, *quad, "position (%g, %g) is in blocked quad %u",
                        (double)p.x, (double)p.y, *quad);
    return QN_OK;
}

static bool in_range(float v, float lo, float hi, bool open_lo) {
    return (open_lo ? v > lo : v >= lo) && v <= hi;
}

static qn_status check_target(const qn_crowd *c, const qn_field *f, qn_vec2 goal, float gr,
                              qn_error *err) {
    if (f && qn_field_mesh(f) != c->mesh)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "field is an instance of another mesh");
    if (!qn__finite2(goal) || !in_range(gr, 0.0f, QN_MAX_COORD, false))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE,
                        "goal must be finite and goal_radius in [0, %g]", (double)QN_MAX_COORD);
    return QN_OK;
}

static qn_status check_desc(const qn_crowd *c, const qn_crowd_unit_desc *d, qn_error *err) {
    if (!qn__finite2(d->position) || !qn__finite2(d->velocity))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "position and velocity must be finite");
    if (!in_range(d->radius, 0.0f, QN_CROWD_MAX_RADIUS, true))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "radius %g is not in (0, %g]",
                        (double)d->radius, (double)QN_CROWD_MAX_RADIUS);
    if (!in_range(d->max_speed, 0.0f, QN_CROWD_MAX_SPEED, false) ||
        !in_range(d->max_accel, 0.0f, QN_CROWD_MAX_SPEED, true))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE,
                        "max_speed must be in [0, %g] and max_accel in (0, %g]",
                        (double)QN_CROWD_MAX_SPEED, (double)QN_CROWD_MAX_SPEED);
    return check_target(c, d->field, d->goal, d->goal_radius, err);
}

/* A free id (growing the table when needed); QN_NONE when out of memory. */
static uint32_t take_id(qn_crowd *c) {
    if (c->free_count) return c->free_ids[--c->free_count];
    if (c->id_bound == c->id_cap && !grow_ids(c, c->id_cap ? 2 * c->id_cap : 64)) return QN_NONE;
    return c->id_bound++;
}

static void init_unit(qn_crowd *c, uint32_t i, uint32_t id, const qn_crowd_unit_desc *d,
                      uint32_t quad) {
    qn__cunits *u = &c->u;
    u->id[i] = id;
    u->pos[i] = d->position;
    u->vel[i] = d->velocity;
    u->des[i] = qn__v2(0, 0);
    float vl = qn__len(d->velocity);
    u->heading[i] = vl > 0.0f ? qn__scale(d->velocity, 1.0f / vl) : qn__v2(1, 0);
    u->goal[i] = d->goal;
    u->goal_r[i] = d->goal_radius;
    u->slot[i] = qn__v2(0, 0);
    u->rad[i] = d->radius;
    u->vmax[i] = d->max_speed;
    u->amax[i] = d->max_accel;
    u->field[i] = d->field;
    u->group[i] = d->group;
    u->quad[i] = quad;
    u->leader[i] = QN_NONE;
    u->nfollow[i] = 0;
    u->path_next[i] = 0;
    u->flags[i] = 0;
    u->wait[i] = 0;
    u->path[i].pts = NULL;
    u->path[i].n = 0;
}

qn_status qn_crowd_add(qn_crowd *crowd, const qn_crowd_unit_desc *desc, uint32_t *id,
                       qn_error *err) {
    qn__error_clear(err);
    if (id) *id = QN_NONE;
    if (!crowd || !desc || !id || crowd->in_step)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument, or a step is running");
    qn_crowd *c = crowd;
    qn_status st = check_desc(c, desc, err);
    uint32_t quad;
    if (st == QN_OK) st = place(c, desc->position, QN_NONE, &quad, err);
    if (st != QN_OK) return st;
    if (c->count >= QN_CROWD_MAX_UNITS)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "more than %u units", QN_CROWD_MAX_UNITS);
    if (c->count == c->cap && !grow_units(c, c->cap ? 2 * c->cap : 64))
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (units)");
    uint32_t nid = take_id(c);
    if (nid == QN_NONE) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (ids)");
    init_unit(c, c->count, nid, desc, quad);
    c->dense_of[nid] = c->count++;
    *id = nid;
    return QN_OK;
}

/* Dense position of a live id, or QN_NONE. */
static uint32_t dense(const qn_crowd *c, uint32_t id) {
    return id < c->id_bound ? c->dense_of[id] : QN_NONE;
}

/* Moves unit `from` into dense slot `to` (every array). */
static void move_unit(qn_crowd *c, uint32_t from, uint32_t to) {
    unit_array a[40];
    uint32_t n = unit_arrays(c, a);
    for (uint32_t k = 0; k < n; k++)
        memcpy((char *)*a[k].ptr + a[k].size * to, (char *)*a[k].ptr + a[k].size * from,
               a[k].size);
    c->dense_of[c->u.id[to]] = to;
}

qn_status qn_crowd_remove(qn_crowd *crowd, uint32_t id) {
    if (!crowd || crowd->in_step) return QN_E_INVALID_ARG;
    qn_crowd *c = crowd;
    uint32_t i = dense(c, id);
    if (i == QN_NONE) return QN_E_NOT_FOUND;
    free_path(c, i);
    if (c->u.leader[i] != QN_NONE) c->u.nfollow[dense(c, c->u.leader[i])]--;
    /* A leader's followers lose their slot: found by a scan, the one case
    ** that is O(n) (ids are reused, so they must not keep a stale id). */
    for (uint32_t k = 0; c->u.nfollow[i] && k < c->count; k++)
        if (c->u.leader[k] == id) c->u.leader[k] = QN_NONE, c->u.nfollow[i]--;
    c->dense_of[id] = QN_NONE;
    c->free_ids[c->free_count++] = id;
    c->count--;
    if (i != c->count) move_unit(c, c->count, i);
    return QN_OK;
}

qn_status qn_crowd_teleport(qn_crowd *crowd, uint32_t id, qn_vec2 p) {
    if (!crowd || crowd->in_step || !qn__finite2(p)) return QN_E_INVALID_ARG;
    uint32_t i = dense(crowd, id), quad;
    if (i == QN_NONE) return QN_E_NOT_FOUND;
    qn_status st = place(crowd, p, crowd->u.quad[i], &quad, NULL);
    if (st != QN_OK) return st;
    crowd->u.pos[i] = p;
    crowd->u.quad[i] = quad;
    crowd->u.flags[i] &= (uint8_t)~QN__CU_ARRIVED;
    return QN_OK;
}

qn_status qn_crowd_get(const qn_crowd *crowd, uint32_t id, qn_crowd_unit *out) {
    if (!crowd || !out) return QN_E_INVALID_ARG;
    memset(out, 0, sizeof *out);
    uint32_t i = dense(crowd, id);
    if (i == QN_NONE) return QN_E_NOT_FOUND;
    const qn__cunits *u = &crowd->u;
    out->position = u->pos[i];
    out->velocity = u->vel[i];
    out->desired = u->des[i];
    out->heading = u->heading[i];
    out->radius = u->rad[i];
    out->max_speed = u->vmax[i];
    out->max_accel = u->amax[i];
    out->field = u->field[i];
    out->group = u->group[i];
    out->quad = u->quad[i];
    out->leader = u->leader[i];
    out->arrived = (u->flags[i] & QN__CU_ARRIVED) != 0;
    out->wall_contact = (u->flags[i] & QN__CU_WALL) != 0;
    return QN_OK;
}

uint32_t qn_crowd_unit_count(const qn_crowd *crowd) { return crowd ? crowd->count : 0; }
uint32_t qn_crowd_id_bound(const qn_crowd *crowd) { return crowd ? crowd->id_bound : 0; }

qn_status qn_crowd_set_target(qn_crowd *crowd, uint32_t id, const qn_field *field, qn_vec2 goal,
                              float goal_radius) {
    if (!crowd || crowd->in_step) return QN_E_INVALID_ARG;
    uint32_t i = dense(crowd, id);
    if (i == QN_NONE) return QN_E_NOT_FOUND;
    qn_status st = check_target(crowd, field, goal, goal_radius, NULL);
    if (st != QN_OK) return st;
    crowd->u.field[i] = field;
    crowd->u.goal[i] = goal;
    crowd->u.goal_r[i] = goal_radius;
    crowd->u.flags[i] &= (uint8_t)~QN__CU_ARRIVED;
    return QN_OK;
}

qn_status qn_crowd_set_path(qn_crowd *crowd, uint32_t id, const qn_vec2 *pts, uint32_t n) {
    if (!crowd || crowd->in_step || n > QN_CROWD_MAX_PATH || (n && !pts)) return QN_E_INVALID_ARG;
    uint32_t i = dense(crowd, id);
    if (i == QN_NONE) return QN_E_NOT_FOUND;
    for (uint32_t k = 0; k < n; k++)
        if (!qn__finite2(pts[k])) return QN_E_INVALID_ARG;
    qn_vec2 *copy = NULL;
    if (n) {
        copy = qn__alloc(&crowd->alloc, (size_t)n * sizeof *copy);
        if (!copy) return QN_E_NOMEM;
        memcpy(copy, pts, (size_t)n * sizeof *copy);
    }
    free_path(crowd, i);
    crowd->u.path[i].pts = copy;
    crowd->u.path[i].n = n;
    crowd->u.path_next[i] = 0;
    crowd->u.flags[i] &= (uint8_t)~QN__CU_ARRIVED;
    return QN_OK;
}

qn_status qn_crowd_set_leader(qn_crowd *crowd, uint32_t id, uint32_t leader, qn_vec2 slot) {
    if (!crowd || crowd->in_step || !qn__finite2(slot)) return QN_E_INVALID_ARG;
    qn_crowd *c = crowd;
    uint32_t i = dense(c, id);
    if (i == QN_NONE) return QN_E_NOT_FOUND;
    uint32_t l = leader == QN_NONE ? QN_NONE : dense(c, leader);
    if (leader != QN_NONE && l == QN_NONE) return QN_E_NOT_FOUND;
    /* No chains: a leader follows nobody, and a follower leads nobody. */
    if (l == i || (l != QN_NONE && (c->u.leader[l] != QN_NONE || c->u.nfollow[i])))
        return QN_E_INVALID_ARG;
    if (c->u.leader[i] != QN_NONE) c->u.nfollow[dense(c, c->u.leader[i])]--;
    c->u.leader[i] = leader;
    c->u.slot[i] = slot;
    if (l != QN_NONE) c->u.nfollow[l]++;
    return QN_OK;
}

qn_status qn_formation_slots(qn_formation_shape shape, uint32_t n, float spacing,
                             qn_vec2 *slots) {
    if ((n && !slots) || !(spacing > 0.0f && spacing < QN_MAX_COORD) ||
        (shape != QN_FORMATION_LINE && shape != QN_FORMATION_WEDGE && shape != QN_FORMATION_BOX))
        return QN_E_INVALID_ARG;
    uint32_t side = 1;
    while (side * side < n) side++; /* box: rows of `side` behind the leader */
    for (uint32_t k = 0; k < n; k++) {
        float rank = (float)(k / 2 + 1), sign = (k & 1) ? -1.0f : 1.0f;
        if (shape == QN_FORMATION_LINE) /* a row behind the leader, centred on it */
            slots[k] = qn__v2(-spacing, ((float)k - 0.5f * (float)(n - 1)) * spacing);
        else if (shape == QN_FORMATION_WEDGE)
            slots[k] = qn__v2(-rank * spacing, sign * rank * spacing);
        else {
            uint32_t row = k / side + 1, col = k % side;
            slots[k] = qn__v2(-(float)row * spacing, ((float)col - 0.5f * (float)(side - 1)) * spacing);
        }
    }
    return QN_OK;
}

void qn_crowd_get_stats(const qn_crowd *crowd, qn_crowd_stats *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!crowd) return;
    out->steps = crowd->steps;
    out->wall_contacts = crowd->wall_contacts;
    out->units = crowd->count;
    for (uint32_t i = 0; i < crowd->count; i++)
        out->arrived += (crowd->u.flags[i] & QN__CU_ARRIVED) != 0;
}
