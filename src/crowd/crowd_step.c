/*
** crowd_step.c: one crowd step. Begin takes the snapshot (the units' arrays
** are not written until the end) and files every unit into a spatial hash;
** ranges compute each unit's new velocity and position from the snapshot
** alone into the "n" arrays; end commits them. A unit's result depends only
** on the snapshot, so any split into ranges and threads gives the same bits.
*/
#include "crowd_internal.h"

#include <pthread.h>

#define MAX_THREADS 64u
#define MAX_WALL_LINES 8u
#define ARRIVE_SLOW 0.34f   /* arrival by contact: slower than this share of max speed */
#define CATCH_UP_GAIN 1.5f  /* follower: 1/s of slot error added to the leader's velocity */

/* ---- spatial hash ------------------------------------------------------ */

static uint32_t hash_cell(int32_t cx, int32_t cy, uint32_t mask) {
    uint32_t h = (uint32_t)cx * 0x8da6b343u ^ (uint32_t)cy * 0xd8163841u;
    return (h ^ (h >> 15)) & mask;
}

static int32_t cell_coord(float v, float inv) {
    float f = floorf(v * inv);
    return f < -1.0e9f ? -1000000000 : (f > 1.0e9f ? 1000000000 : (int32_t)f);
}

static size_t table_bytes(uint32_t cap) { return ((size_t)2 * cap + 1) * sizeof(uint32_t); }

/* Hash arrays for at least n units; false (the old ones kept) when out of
** memory. */
static bool hash_reserve(qn_crowd *c, uint32_t n) {
    if (n <= c->hcap) return true;
    uint32_t cap = 64;
    while (cap < n) cap *= 2;
    uint32_t *s = qn__alloc(&c->alloc, table_bytes(cap));
    uint32_t *u = qn__alloc(&c->alloc, cap * sizeof *u);
    qn_vec2 *p = qn__alloc(&c->alloc, cap * sizeof *p);
    if (!s || !u || !p) {
        qn__free(&c->alloc, s, table_bytes(cap));
        qn__free(&c->alloc, u, cap * sizeof *u);
        qn__free(&c->alloc, p, cap * sizeof *p);
        return false;
    }
    qn__crowd_step_free(c);
    c->hstart = s;
    c->hunits = u;
    c->hpos = p;
    c->hcap = cap;
    return true;
}

void qn__crowd_step_free(qn_crowd *c) {
    if (c->hcap) {
        qn__free(&c->alloc, c->hstart, table_bytes(c->hcap));
        qn__free(&c->alloc, c->hunits, c->hcap * sizeof(uint32_t));
        qn__free(&c->alloc, c->hpos, c->hcap * sizeof(qn_vec2));
    }
    c->hstart = c->hunits = NULL;
    c->hpos = NULL;
    c->hcap = 0;
}

/* Counting sort of the units into 2*hcap buckets. */
static void hash_build(qn_crowd *c) {
    uint32_t tsize = 2 * c->hcap, n = c->count;
    c->hmask = tsize - 1;
    memset(c->hstart, 0, ((size_t)tsize + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++) {
        qn_vec2 p = c->u.pos[i];
        uint32_t k = hash_cell(cell_coord(p.x, c->hinv), cell_coord(p.y, c->hinv), c->hmask);
        c->u.hkey[i] = k;
        c->hstart[k + 1]++;
    }
    for (uint32_t k = 0; k < tsize; k++) c->hstart[k + 1] += c->hstart[k];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t at = --c->hstart[c->u.hkey[i] + 1];
        c->hunits[at] = i;
        c->hpos[at] = c->u.pos[i];
    }
    /* hstart[k + 1] now holds the start of bucket k; shift to hstart[k]. */
    memmove(c->hstart, c->hstart + 1, (size_t)tsize * sizeof(uint32_t));
    c->hstart[tsize] = n;
}

/* ---- nearest neighbours -------------------------------------------------- */

typedef struct knn {
    uint32_t n, cap;
    float d2[QN_CROWD_MAX_NEIGHBOURS];
    uint32_t who[QN_CROWD_MAX_NEIGHBOURS]; /* dense index */
    uint32_t id[QN_CROWD_MAX_NEIGHBOURS];
} knn;

/* Keeps the cap nearest by (distance, id); a unit seen twice (two cells in
** one bucket) is kept once. */
static void knn_offer(knn *k, float d2, uint32_t who, uint32_t id) {
    uint32_t at = k->n;
    while (at > 0 && (k->d2[at - 1] > d2 || (k->d2[at - 1] == d2 && k->id[at - 1] >= id))) {
        if (k->d2[at - 1] == d2 && k->id[at - 1] == id) return;
        at--;
    }
    if (at >= k->cap) return;
    uint32_t last = k->n < k->cap ? k->n : k->cap - 1;
    for (uint32_t j = last; j > at; j--) {
        k->d2[j] = k->d2[j - 1];
        k->who[j] = k->who[j - 1];
        k->id[j] = k->id[j - 1];
    }
    k->d2[at] = d2;
    k->who[at] = who;
    k->id[at] = id;
    if (k->n < k->cap) k->n++;
}

static void scan_bucket(const qn_crowd *c, uint32_t b, uint32_t self, qn_vec2 p, float range2,
                        knn *k) {
    for (uint32_t s = c->hstart[b]; s < c->hstart[b + 1]; s++) {
        uint32_t j = c->hunits[s];
        if (j == self) continue;
        qn_vec2 d = qn__sub(c->hpos[s], p);
        float d2 = d.x * d.x + d.y * d.y;
        if (d2 > range2 || (k->n == k->cap && d2 > k->d2[k->n - 1])) continue;
        knn_offer(k, d2, j, c->u.id[j]);
    }
}

/* The cap nearest units within `range` of unit i: rings of cells outwards,
** stopping once the k-th nearest is nearer than any unsearched cell. */
static void neighbours(const qn_crowd *c, uint32_t i, float range, knn *k) {
    qn_vec2 p = c->u.pos[i];
    int32_t cx = cell_coord(p.x, c->hinv), cy = cell_coord(p.y, c->hinv);
    float fx = p.x - (float)cx * c->hcell, fy = p.y - (float)cy * c->hcell;
    float edge = fminf(fminf(fx, c->hcell - fx), fminf(fy, c->hcell - fy));
    int32_t rings = (int32_t)ceilf(range * c->hinv);
    float range2 = range * range;
    for (int32_t r = 0; r <= rings; r++) {
        for (int32_t y = -r; y <= r; y++) {
            int32_t step = (y == -r || y == r) ? 1 : 2 * r;
            for (int32_t x = -r; x <= r; x += step ? step : 1)
                scan_bucket(c, hash_cell(cx + x, cy + y, c->hmask), i, p, range2, k);
        }
        float clear = edge + (float)r * c->hcell; /* everything nearer has been seen */
        if (k->n == k->cap && k->d2[k->n - 1] <= clear * clear) break;
    }
}

/* ---- desired velocity ---------------------------------------------------- */

static qn_vec2 clamp_len(qn_vec2 v, float max) {
    float l2 = qn__dot(v, v);
    return l2 > max * max ? qn__scale(v, max / sqrtf(l2)) : v;
}

/* Direction from the unit's instance (toward a way out when it stands in a
** blocked quad or cannot reach the goal from where it is). */
static qn_vec2 field_dir(const qn_field *f, qn_vec2 p, uint32_t quad) {
    qn_vec2 dir = {0, 0};
    uint32_t q = quad;
    qn_status st = qn_field_sample(f, p, &q, &dir);
    if (st == QN_E_BLOCKED || st == QN_E_OUTSIDE) {
        qn_vec2 to;
        if (qn_field_way_out(f, p, &q, &to) == QN_OK) {
            qn_vec2 d = qn__sub(to, p);
            float l = qn__len(d);
            dir = l > 1e-6f ? qn__scale(d, 1.0f / l) : qn__v2(0, 0);
        }
    }
    return dir;
}

static bool sees(const qn_mesh *m, qn_vec2 a, qn_vec2 b, uint32_t hint) {
    return qn_mesh_segment_inside(m, a, b, hint, NULL) == QN_OK;
}

/* Follower: the leader's velocity plus a pull toward the slot point (or the
** leader, or along the unit's own instance when it sees neither). */
static qn_vec2 follow(const qn_crowd *c, uint32_t i, uint32_t l) {
    const qn__cunits *u = &c->u;
    qn_vec2 h = u->heading[l], s = u->slot[i], lp = u->pos[l], p = u->pos[i];
    qn_vec2 at = qn__add(lp, qn__v2(h.x * s.x - h.y * s.y, h.y * s.x + h.x * s.y));
    qn_vec2 hit;
    if (qn_mesh_segment_inside(c->mesh, lp, at, u->quad[l], &hit) != QN_OK) {
        qn_vec2 back = qn__sub(hit, lp);
        float bl = qn__len(back), keep = bl - u->rad[i];
        at = keep > 0.0f ? qn__add(lp, qn__scale(back, keep / bl)) : lp;
    }
    if (!sees(c->mesh, p, at, u->quad[i])) {
        if (sees(c->mesh, p, lp, u->quad[i])) at = lp;
        else if (u->field[i]) return qn__scale(field_dir(u->field[i], p, u->quad[i]), u->vmax[i]);
    }
    qn_vec2 v = qn__add(u->vel[l], qn__scale(qn__sub(at, p), CATCH_UP_GAIN));
    return clamp_len(v, u->vmax[i]);
}

/* Path walker: toward the next waypoint, passed within two radii. */
static qn_vec2 walk_path(const qn_crowd *c, uint32_t i, float dt, uint32_t *next) {
    const qn__cpath *pa = &c->u.path[i];
    qn_vec2 p = c->u.pos[i];
    uint32_t k = c->u.path_next[i];
    if (k >= pa->n) k = pa->n - 1;
    float pass = 2.0f * c->u.rad[i];
    while (k + 1 < pa->n && qn__len(qn__sub(pa->pts[k], p)) <= pass) k++;
    *next = k;
    qn_vec2 d = qn__sub(pa->pts[k], p);
    float l = qn__len(d);
    if (l < QN_AT_GOAL_DISTANCE) return qn__v2(0, 0);
    float speed = k + 1 == pa->n ? fminf(c->u.vmax[i], l / dt) : c->u.vmax[i];
    return qn__scale(d, speed / l);
}

/* Slows a unit inside its arrival region, down to a quarter of max speed
** at the goal point. */
static qn_vec2 arrival_slow(const qn__cunits *u, uint32_t i, qn_vec2 v) {
    float gr = u->goal_r[i];
    if (gr <= 0.0f) return v;
    float d = qn__len(qn__sub(u->goal[i], u->pos[i]));
    if (d >= gr) return v;
    float f = d / gr;
    return qn__scale(v, f < 0.25f ? 0.25f : f);
}

static qn_vec2 desired(const qn_crowd *c, uint32_t i, float dt, uint32_t *next) {
    const qn__cunits *u = &c->u;
    *next = u->path_next[i];
    if (u->flags[i] & QN__CU_ARRIVED) return qn__v2(0, 0);
    uint32_t l = u->leader[i] == QN_NONE ? QN_NONE : c->dense_of[u->leader[i]];
    qn_vec2 v;
    if (l != QN_NONE) return follow(c, i, l);
    if (u->path[i].n) v = walk_path(c, i, dt, next);
    else if (u->field[i]) v = qn__scale(field_dir(u->field[i], u->pos[i], u->quad[i]), u->vmax[i]);
    else v = qn__v2(0, 0);
    return arrival_slow(u, i, v);
}

/* ---- one unit ------------------------------------------------------------- */

/* Sticky arrival (see qn_crowd_unit_desc): at the goal point, or touching
** an arrived unit of the same goal while slow. */
static bool arrives(const qn_crowd *c, uint32_t i, const knn *k) {
    const qn__cunits *u = &c->u;
    if (u->flags[i] & QN__CU_ARRIVED) return true;
    float gr = u->goal_r[i], r = u->rad[i];
    qn_vec2 to = qn__sub(u->goal[i], u->pos[i]);
    if (gr <= 0.0f || qn__dot(to, to) > gr * gr) return false;
    if (qn__dot(to, to) <= r * r) return true;
    float v2 = qn__dot(u->vel[i], u->vel[i]), slow = ARRIVE_SLOW * u->vmax[i];
    if (v2 > slow * slow) return false;
    for (uint32_t n = 0; n < k->n; n++) {
        uint32_t j = k->who[n];
        float touch = 1.1f * (r + u->rad[j]);
        if ((u->flags[j] & QN__CU_ARRIVED) && u->goal[j].x == u->goal[i].x &&
            u->goal[j].y == u->goal[i].y && k->d2[n] <= touch * touch)
            return true;
    }
    return false;
}

static void step_unit(qn_crowd *c, uint32_t i) {
    qn__cunits *u = &c->u;
    float dt = c->dt, r = u->rad[i], vmax = u->vmax[i];
    qn_vec2 p = u->pos[i], v = u->vel[i];
    uint32_t next;
    qn_vec2 want = desired(c, i, dt, &next);
    qn_vec2 pref = qn__add(v, clamp_len(qn__sub(want, v), u->amax[i] * dt));
    knn k;
    k.n = 0;
    k.cap = c->max_nb;
    neighbours(c, i, r + c->max_rad + c->nb_range, &k);
    bool arrived = arrives(c, i, &k);
    if (arrived) pref = qn__v2(0, 0);
    qn__line lines[MAX_WALL_LINES + QN_CROWD_MAX_NEIGHBOURS];
    uint32_t nw = qn__walls_lines(&c->walls, p, r, r + vmax * c->tau_wall + 1e-3f, c->tau_wall,
                                  dt, lines, MAX_WALL_LINES);
    uint32_t n = nw;
    float inv_tau = 1.0f / c->tau, inv_dt = 1.0f / dt;
    for (uint32_t m = 0; m < k.n; m++) {
        uint32_t j = k.who[m];
        lines[n++] = qn__orca_line(p, v, r, u->pos[j], u->vel[j], u->rad[j], inv_tau, inv_dt,
                                   u->id[i] < u->id[j]);
    }
    qn_vec2 nv = vmax > 0.0f ? qn__orca_solve(lines, n, nw, vmax, pref) : qn__v2(0, 0);
    qn_vec2 np = p;
    uint32_t nq = u->quad[i];
    bool slid = qn__walls_move(&c->walls, c->mesh, &np, qn__scale(nv, dt), &nq);
    u->npos[i] = np;
    u->nvel[i] = slid ? qn__scale(qn__sub(np, p), inv_dt) : nv;
    u->ndes[i] = want;
    u->nquad[i] = nq;
    u->npath_next[i] = next;
    u->nflags[i] = (uint8_t)((arrived ? QN__CU_ARRIVED : 0) | (slid ? QN__CU_WALL : 0) |
                             QN__CU_STEPPED);
}

/* ---- begin, ranges, end ----------------------------------------------------- */

static void crowd_extent(qn_crowd *c) {
    float mr = 0.0f, mv = 0.0f;
    for (uint32_t i = 0; i < c->count; i++) {
        mr = fmaxf(mr, c->u.rad[i]);
        mv = fmaxf(mv, c->u.vmax[i]);
    }
    c->max_rad = mr;
    c->max_vmax = mv;
    c->nb_range = c->nb_extra > 0.0f ? c->nb_extra : 2.5f * mr + 1.5f * mv;
    /* Cells of about a quarter of the search radius: few rings, few units each. */
    c->hcell = fmaxf(2.0f * mr, 0.25f * (2.0f * mr + c->nb_range));
    c->hcell = fmaxf(c->hcell, 1e-3f);
    c->hinv = 1.0f / c->hcell;
}

qn_status qn_crowd_step_begin(qn_crowd *crowd, float dt) {
    if (!crowd || crowd->in_step || !(dt > 0.0f && dt <= 10.0f)) return QN_E_INVALID_ARG;
    qn_crowd *c = crowd;
    if (c->walls.version != c->mesh->version &&
        qn__walls_build(&c->walls, c->mesh, &c->alloc) != QN_OK)
        return QN_E_NOMEM;
    if (!hash_reserve(c, c->count)) return QN_E_NOMEM;
    crowd_extent(c);
    if (c->count) hash_build(c);
    for (uint32_t i = 0; i < c->count; i++) c->u.nflags[i] = 0;
    c->dt = dt;
    c->in_step = true;
    return QN_OK;
}

qn_status qn_crowd_step_range(qn_crowd *crowd, uint32_t begin, uint32_t end) {
    if (!crowd || !crowd->in_step || begin > end || end > crowd->count) return QN_E_INVALID_ARG;
    for (uint32_t i = begin; i < end; i++) step_unit(crowd, i);
    return QN_OK;
}

static void swap_ptr(void *a, void *b) {
    void *t;
    memcpy(&t, a, sizeof t);
    memcpy(a, b, sizeof t);
    memcpy(b, &t, sizeof t);
}

qn_status qn_crowd_step_end(qn_crowd *crowd) {
    if (!crowd || !crowd->in_step) return QN_E_INVALID_ARG;
    qn_crowd *c = crowd;
    qn__cunits *u = &c->u;
    c->in_step = false;
    for (uint32_t i = 0; i < c->count; i++)
        if (!(u->nflags[i] & QN__CU_STEPPED)) return QN_E_MISMATCH;
    swap_ptr(&u->pos, &u->npos);
    swap_ptr(&u->vel, &u->nvel);
    swap_ptr(&u->des, &u->ndes);
    swap_ptr(&u->quad, &u->nquad);
    swap_ptr(&u->path_next, &u->npath_next);
    swap_ptr(&u->flags, &u->nflags);
    for (uint32_t i = 0; i < c->count; i++) {
        u->flags[i] &= (uint8_t)~QN__CU_STEPPED;
        c->wall_contacts += (u->flags[i] & QN__CU_WALL) != 0;
        float dl = qn__len(u->des[i]);
        if (dl > 0.1f * u->vmax[i] && dl > 0.0f) u->heading[i] = qn__scale(u->des[i], 1.0f / dl);
    }
    c->steps++;
    return QN_OK;
}

qn_status qn_crowd_step(qn_crowd *crowd, float dt) {
    qn_status st = qn_crowd_step_begin(crowd, dt);
    if (st != QN_OK) return st;
    qn_crowd_step_range(crowd, 0, crowd->count);
    return qn_crowd_step_end(crowd);
}

typedef struct part {
    qn_crowd *c;
    uint32_t begin, end;
} part;

static void *part_main(void *arg) {
    part *p = arg;
    qn_crowd_step_range(p->c, p->begin, p->end);
    return NULL;
}

qn_status qn_crowd_step_parallel(qn_crowd *crowd, float dt, uint32_t threads) {
    if (threads == 0 || threads > MAX_THREADS) return QN_E_INVALID_ARG;
    qn_status st = qn_crowd_step_begin(crowd, dt);
    if (st != QN_OK) return st;
    uint32_t n = crowd->count;
    if (threads > n) threads = n ? n : 1;
    part parts[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    uint32_t started = 0;
    for (uint32_t t = 0; t < threads; t++) {
        parts[t].c = crowd;
        parts[t].begin = (uint32_t)((uint64_t)n * t / threads);
        parts[t].end = (uint32_t)((uint64_t)n * (t + 1) / threads);
    }
    for (uint32_t t = 1; t < threads; t++) {
        if (pthread_create(&ids[t], NULL, part_main, &parts[t]) != 0) {
            st = QN_E_NOMEM;
            break;
        }
        started = t;
    }
    part_main(&parts[0]);
    for (uint32_t t = 1; t <= started; t++) pthread_join(ids[t], NULL);
    for (uint32_t t = started + 1; t < threads; t++) part_main(&parts[t]);
    qn_status end = qn_crowd_step_end(crowd);
    return end != QN_OK ? end : st;
}
