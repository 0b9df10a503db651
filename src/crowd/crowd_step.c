/*
** crowd_step.c: one crowd step. Begin takes the snapshot (the units' arrays
** are not written until the end) and files every unit into a spatial hash;
** ranges compute each unit's new velocity and position from the snapshot
** alone into the "n" arrays; end commits them. A unit's result depends only
** on the snapshot, so any split into ranges and threads gives the same bits.
*/
#include "crowd_internal.h"


#define MAX_WALL_LINES 8u
#define ARRIVE_WAIT 1.0f   /* seconds held up inside the region before arriving */
#define CATCH_UP_GAIN 1.5f  /* follower: 1/s of slot error added to the leader's velocity */
#define TURN_RATE 1.5707963f /* formation frame: radians a second */
#define PAD 1.3f /* avoidance keeps a margin: radii grown by this factor */
#define YIELD 0.8f /* share of the avoidance an arrived unit takes against a moving one */
#define RESOLVE 0.5f /* share of an overlap each unit of the pair steps back */
#define RESOLVE_MAX 0.5f /* largest push, in radii */
#define GAP_SHARE 0.5f /* share of the gap to a neighbour a unit may close in one step */
#define ASIDE 0.5f /* share of max speed an arrived unit steps aside at for a passer-by */
#define ASIDE_AHEAD 6.0f /* how far ahead of a passer-by (in its radii) units step aside */

/* ---- spatial grid ------------------------------------------------------ */

/* The units are counting-sorted by cell of a uniform grid over their
** bounding box, rows first, so the cells of one row of a search are one
** contiguous run of units. The grid is rebuilt every step; its cells grow
** when the box is large for the number of units (at most 8 cells a unit). */

static size_t grid_bytes(uint32_t cells) { return ((size_t)cells + 1) * sizeof(uint32_t); }

/* Unit arrays for at least n units and a cell table of `cells`; false (the
** old ones kept) when out of memory. */
static bool grid_reserve(qn_crowd *c, uint32_t n, uint32_t cells) {
    if (cells > c->gcap) {
        uint32_t *s = qn__realloc(&c->alloc, c->hstart, c->gcap ? grid_bytes(c->gcap) : 0,
                                  grid_bytes(cells));
        if (!s) return false;
        c->hstart = s;
        c->gcap = cells;
    }
    if (n <= c->hcap) return true;
    uint32_t cap = 64;
    while (cap < n) cap *= 2;
    uint32_t *u = qn__alloc(&c->alloc, cap * sizeof *u);
    qn_vec2 *p = qn__alloc(&c->alloc, cap * sizeof *p);
    if (!u || !p) {
        qn__free(&c->alloc, u, cap * sizeof *u);
        qn__free(&c->alloc, p, cap * sizeof *p);
        return false;
    }
    qn__free(&c->alloc, c->hunits, c->hcap * sizeof(uint32_t));
    qn__free(&c->alloc, c->hpos, c->hcap * sizeof(qn_vec2));
    c->hunits = u;
    c->hpos = p;
    c->hcap = cap;
    return true;
}

void qn__crowd_step_free(qn_crowd *c) {
    if (c->gcap) qn__free(&c->alloc, c->hstart, grid_bytes(c->gcap));
    if (c->hcap) {
        qn__free(&c->alloc, c->hunits, c->hcap * sizeof(uint32_t));
        qn__free(&c->alloc, c->hpos, c->hcap * sizeof(qn_vec2));
    }
    c->hstart = c->hunits = NULL;
    c->hpos = NULL;
    c->hcap = c->gcap = 0;
}

/* Grid shape over the units' bounding box for cells of (at least) `cell`. */
static void grid_shape(qn_crowd *c, float cell) {
    qn_vec2 lo = c->u.pos[0], hi = lo;
    for (uint32_t i = 1; i < c->count; i++) {
        qn_vec2 p = c->u.pos[i];
        lo.x = fminf(lo.x, p.x), lo.y = fminf(lo.y, p.y);
        hi.x = fmaxf(hi.x, p.x), hi.y = fmaxf(hi.y, p.y);
    }
    double limit = 8.0 * (double)c->count + 64.0, w, h;
    for (;;) {
        w = floor((double)(hi.x - lo.x) / (double)cell) + 1.0;
        h = floor((double)(hi.y - lo.y) / (double)cell) + 1.0;
        if (w * h <= limit) break;
        cell *= 1.5f;
    }
    c->gorigin = lo;
    c->hcell = cell;
    c->hinv = 1.0f / cell;
    c->gw = (uint32_t)w;
    c->gh = (uint32_t)h;
}

static uint32_t grid_coord(float v, float inv, uint32_t n) {
    float f = v * inv;
    return f <= 0.0f ? 0 : (f >= (float)(n - 1) ? n - 1 : (uint32_t)f);
}

/* Counting sort of the units by cell. */
static void grid_fill(qn_crowd *c) {
    uint32_t cells = c->gw * c->gh, n = c->count;
    memset(c->hstart, 0, grid_bytes(cells));
    for (uint32_t i = 0; i < n; i++) {
        qn_vec2 p = qn__sub(c->u.pos[i], c->gorigin);
        uint32_t k = grid_coord(p.y, c->hinv, c->gh) * c->gw + grid_coord(p.x, c->hinv, c->gw);
        c->u.hkey[i] = k;
        c->hstart[k + 1]++;
    }
    for (uint32_t k = 0; k < cells; k++) c->hstart[k + 1] += c->hstart[k];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t at = --c->hstart[c->u.hkey[i] + 1];
        c->hunits[at] = i;
        c->hpos[at] = c->u.pos[i];
    }
    memmove(c->hstart, c->hstart + 1, (size_t)cells * sizeof(uint32_t));
    c->hstart[cells] = n;
}

/* ---- nearest neighbours -------------------------------------------------- */

typedef struct cand {
    float d2;
    uint32_t who; /* dense index */
    uint32_t id;
} cand;

typedef struct knn {
    uint32_t n, cap;
    cand c[QN_CROWD_MAX_NEIGHBOURS];
} knn;

/* Keeps the cap nearest by (distance, id). */
static void knn_offer(knn *k, float d2, uint32_t who, uint32_t id) {
    if (k->n == k->cap) {
        const cand *last = &k->c[k->n - 1];
        if (last->d2 < d2 || (last->d2 == d2 && last->id < id)) return;
    }
    uint32_t at = k->n < k->cap ? k->n : k->cap - 1;
    while (at > 0 && (k->c[at - 1].d2 > d2 || (k->c[at - 1].d2 == d2 && k->c[at - 1].id > id))) {
        k->c[at] = k->c[at - 1];
        at--;
    }
    k->c[at].d2 = d2;
    k->c[at].who = who;
    k->c[at].id = id;
    if (k->n < k->cap) k->n++;
}

/* Offers the units of cells [x0, x1] of row y. */
static void scan_run(const qn_crowd *c, uint32_t y, uint32_t x0, uint32_t x1, uint32_t self,
                     qn_vec2 p, float range2, knn *k) {
    uint32_t row = y * c->gw, end = c->hstart[row + x1 + 1];
    for (uint32_t s = c->hstart[row + x0]; s < end; s++) {
        qn_vec2 d = qn__sub(c->hpos[s], p);
        float d2 = d.x * d.x + d.y * d.y;
        if (d2 > range2 || (k->n == k->cap && !(d2 <= k->c[k->n - 1].d2))) continue;
        uint32_t j = c->hunits[s];
        if (j != self) knn_offer(k, d2, j, c->u.id[j]);
    }
}

/* Ring r around cell (cx, cy), clipped to the grid: two full rows and the
** two end cells of the rows between. False when the ring lies outside. */
static bool scan_ring(const qn_crowd *c, int32_t cx, int32_t cy, int32_t r, uint32_t self,
                      qn_vec2 p, float range2, knn *k) {
    int32_t w = (int32_t)c->gw, h = (int32_t)c->gh;
    int32_t x0 = cx - r < 0 ? 0 : cx - r, x1 = cx + r >= w ? w - 1 : cx + r;
    bool any = false;
    for (int32_t y = cy - r; y <= cy + r; y++) {
        if (y < 0 || y >= h) continue;
        if (y == cy - r || y == cy + r) {
            scan_run(c, (uint32_t)y, (uint32_t)x0, (uint32_t)x1, self, p, range2, k);
            any = true;
            continue;
        }
        if (cx - r >= 0) scan_run(c, (uint32_t)y, (uint32_t)(cx - r), (uint32_t)(cx - r), self, p, range2, k), any = true;
        if (cx + r < w) scan_run(c, (uint32_t)y, (uint32_t)(cx + r), (uint32_t)(cx + r), self, p, range2, k), any = true;
    }
    return any;
}

/* The cap nearest units within `range` of unit i: rings of cells outwards,
** stopping once the k-th nearest is nearer than any cell not yet searched. */
static void neighbours(const qn_crowd *c, uint32_t i, float range, knn *k) {
    qn_vec2 p = c->u.pos[i], rel = qn__sub(p, c->gorigin);
    int32_t cx = (int32_t)grid_coord(rel.x, c->hinv, c->gw);
    int32_t cy = (int32_t)grid_coord(rel.y, c->hinv, c->gh);
    float fx = rel.x - (float)cx * c->hcell, fy = rel.y - (float)cy * c->hcell;
    float edge = fmaxf(0.0f, fminf(fminf(fx, c->hcell - fx), fminf(fy, c->hcell - fy)));
    int32_t rings = (int32_t)ceilf(range * c->hinv) + 1;
    float range2 = range * range;
    for (int32_t r = 0; r <= rings; r++) {
        if (!scan_ring(c, cx, cy, r, i, p, range2, k) && r > 0) break;
        float clear = edge + (float)r * c->hcell; /* everything nearer has been seen */
        if (clear >= range || (k->n == k->cap && k->c[k->n - 1].d2 <= clear * clear)) break;
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

/* How far unit i is from its goal, for its arrival region: the straight
** distance; for a unit that follows an exact instance, within the region's
** rim in a straight line, its way there along the instance (the cost at
** the unit less the cost at the goal point, over the quads' common cost),
** when longer. The two agree on open ground; round obstacles, and along a
** maze's corridors, the way is longer, and a disc took in ground far from
** the goal along it, where units that stopped blocked a corridor for good. */
static float goal_distance(const qn__cunits *u, uint32_t i) {
    float d = qn__len(qn__sub(u->goal[i], u->pos[i]));
    const qn_field *f = u->field[i];
    if (!f || !f->spm || u->path[i].n || u->goal_r[i] <= 0.0f ||
        d > u->goal_r[i] + 2.0f * u->rad[i])
        return d;
    float cp = qn_field_cost_at(f, u->pos[i], u->quad[i]);
    float cg = qn_field_cost_at(f, u->goal[i], QN_NONE);
    float way = (cp - cg) / qn__quad_cost(f->mesh, u->quad[i]);
    return way > d ? way : d; /* NAN is not > d (the straight distance); INFINITY is */
}

/* Slows a unit inside its arrival region (d: goal_distance), down to a
** quarter of max speed at the goal point. */
static qn_vec2 arrival_slow(const qn__cunits *u, uint32_t i, float d, qn_vec2 v) {
    float gr = u->goal_r[i];
    if (gr <= 0.0f) return v;
    if (d >= gr) return v;
    float f = d / gr;
    return qn__scale(v, f < 0.25f ? 0.25f : f);
}

static qn_vec2 desired(const qn_crowd *c, uint32_t i, float dt, float gd, uint32_t *next) {
    const qn__cunits *u = &c->u;
    *next = u->path_next[i];
    if (u->flags[i] & QN__CU_ARRIVED) return qn__v2(0, 0);
    uint32_t l = u->leader[i] == QN_NONE ? QN_NONE : c->dense_of[u->leader[i]];
    qn_vec2 v;
    if (l != QN_NONE && !(u->flags[l] & QN__CU_ARRIVED)) return follow(c, i, l);
    if (u->path[i].n) v = walk_path(c, i, dt, next);
    else if (u->field[i]) v = qn__scale(field_dir(u->field[i], u->pos[i], u->quad[i]), u->vmax[i]);
    else v = qn__v2(0, 0);
    return arrival_slow(u, i, gd, v);
}

/* ---- one unit ------------------------------------------------------------- */

/* Does unit i touch (their margins do) a neighbour that arrived at the same
** goal point? A full region's last units then stop beyond its rim, up to
** twice its radius from the goal: on cluttered ground the arrived units
** pack less densely than on open ground (pockets they cannot reach), and
** those units queued beyond the rim for good. */
static bool against_arrived(const qn__cunits *u, uint32_t i, const knn *k) {
    for (uint32_t m = 0; m < k->n; m++) {
        uint32_t j = k->c[m].who;
        if (!(u->flags[j] & QN__CU_ARRIVED) || u->goal[j].x != u->goal[i].x ||
            u->goal[j].y != u->goal[i].y)
            continue;
        float touch = 1.1f * PAD * (u->rad[i] + u->rad[j]);
        qn_vec2 d = qn__sub(u->pos[j], u->pos[i]);
        if (qn__dot(d, d) <= touch * touch) return true;
    }
    return false;
}

/* Sticky arrival (see qn_crowd_unit_desc): at the goal point, or after
** ARRIVE_WAIT seconds in a row inside the region (or within a diameter of
** its rim) moving slower than a third of the speed it wants (held up by
** units already there). The wait lets
** avoidance slide it round into gaps first, so the region fills instead of
** growing fingers. *wait gets the count of such steps so far. */
static bool arrives(const qn_crowd *c, uint32_t i, float gd, const knn *k, qn_vec2 want,
                    uint16_t *wait) {
    const qn__cunits *u = &c->u;
    *wait = 0;
    if (u->flags[i] & QN__CU_ARRIVED) return true;
    float gr = u->goal_r[i], r = u->rad[i], rim = gr + 2.0f * r;
    if (gr <= 0.0f || !(gd <= rim || (gd <= 2.0f * gr && against_arrived(u, i, k)))) return false;
    if (gd <= r) return true;
    float v2 = qn__dot(u->vel[i], u->vel[i]), w2 = qn__dot(want, want);
    if (v2 * 9.0f > w2) return false;
    *wait = (uint16_t)(u->wait[i] < UINT16_MAX ? u->wait[i] + 1 : UINT16_MAX);
    return (float)*wait * c->dt >= ARRIVE_WAIT;
}

/* A tiny turn of the preferred velocity, different for every unit and step
** (a hash of both, so deterministic): breaks the perfect symmetries in
** which reciprocal avoidance deadlocks (units meeting exactly head-on). */
static qn_vec2 nudge(qn_vec2 v, uint32_t id, uint64_t step) {
    uint64_t h = ((uint64_t)id * 0x9e3779b97f4a7c15ull) ^ (step * 0xbf58476d1ce4e5b9ull);
    h ^= h >> 29;
    float a = ((float)(h & 0xffff) / 65535.0f - 0.5f) * 2e-3f;
    float cs = cosf(a), sn = sinf(a);
    return qn__v2(v.x * cs - v.y * sn, v.x * sn + v.y * cs);
}

/* A unit passing through (not arrived, and outside its own region's rim,
** so not about to arrive here): units arrived in its way step aside. */
static bool passing(const qn__cunits *u, uint32_t j) {
    if (u->flags[j] & QN__CU_ARRIVED) return false;
    return u->goal_r[j] <= 0.0f || !(goal_distance(u, j) <= u->goal_r[j] + 2.0f * u->rad[j]);
}

/* Arrived unit i steps aside, square to their way, for passers-by among
** its neighbours that want to go through it (within ASIDE_AHEAD of their
** radii ahead, less than the sum of radii plus a radius off their line):
** a full arrival region does not wall in or block the units of other
** goals. Zero when none. */
static qn_vec2 step_aside(const qn_crowd *c, uint32_t i, const knn *k) {
    const qn__cunits *u = &c->u;
    qn_vec2 p = u->pos[i], push = {0, 0};
    for (uint32_t m = 0; m < k->n; m++) {
        uint32_t j = k->c[m].who;
        qn_vec2 d = u->des[j];
        float dl = qn__len(d);
        if (!(dl > 1e-3f) || !passing(u, j)) continue;
        d = qn__scale(d, 1.0f / dl);
        qn_vec2 rel = qn__sub(p, u->pos[j]);
        float along = qn__dot(rel, d), side = qn__cross(d, rel), rs = u->rad[i] + u->rad[j];
        if (along <= 0.0f || along > ASIDE_AHEAD * u->rad[j] + rs || fabsf(side) >= rs + u->rad[i])
            continue;
        float sgn = side > 0.0f ? 1.0f : (side < 0.0f ? -1.0f : (u->id[i] & 1u ? 1.0f : -1.0f));
        push = qn__add(push, qn__v2(-d.y * sgn, d.x * sgn));
    }
    float pl = qn__len(push);
    return pl > 1e-6f ? qn__scale(push, ASIDE * u->vmax[i] / pl) : push;
}

/* Keeps a velocity from closing on any neighbour faster than half the gap
** between them in one step (if both do, the pair cannot come to overlap
** more within the step): the excess toward each neighbour is projected out,
** then the velocity is scaled down until no gap is closed too fast. Where
** avoidance had no answer (a collapsing crowd), this keeps units from
** being driven into each other; sideways and backward motion stay free. */
static qn_vec2 keep_gaps(const qn_crowd *c, uint32_t i, const knn *k, qn_vec2 v, float dt) {
    const qn__cunits *u = &c->u;
    qn_vec2 p = u->pos[i], dir[QN_CROWD_MAX_NEIGHBOURS];
    float allow[QN_CROWD_MAX_NEIGHBOURS];
    uint32_t n = 0;
    for (uint32_t m = 0; m < k->n; m++) {
        uint32_t j = k->c[m].who;
        qn_vec2 d = qn__sub(u->pos[j], p);
        float dl = sqrtf(k->c[m].d2);
        if (!(dl > 1e-6f)) continue;
        dir[n] = qn__scale(d, 1.0f / dl);
        allow[n++] = fmaxf(dl - u->rad[i] - u->rad[j], 0.0f) * GAP_SHARE / dt;
    }
    for (uint32_t m = 0; m < n; m++) {
        float over = qn__dot(v, dir[m]) - allow[m];
        if (over > 0.0f) v = qn__sub(v, qn__scale(dir[m], over));
    }
    float s = 1.0f;
    for (uint32_t m = 0; m < n; m++) {
        float along = qn__dot(v, dir[m]);
        if (along > allow[m] && along > 0.0f) s = fminf(s, allow[m] / along);
    }
    return qn__scale(v, s);
}

/* Does unit a want to go toward unit b: its desired velocity as of the last
** step within 60 degrees of the way to b? */
static bool heads_for(const qn__cunits *u, uint32_t a, uint32_t b) {
    qn_vec2 d = u->des[a], to = qn__sub(u->pos[b], u->pos[a]);
    float dt = qn__dot(d, to);
    return dt > 0.0f && 4.0f * dt * dt > 3.0f * qn__dot(d, d) * qn__dot(to, to);
}

/* May i leave j's line out when held up: neither has arrived (arrived
** units make way by their own rule) nor is in a formation (its units hold
** slots)? */
static bool may_pass(const qn__cunits *u, uint32_t j, uint32_t i) {
    return !((u->flags[i] | u->flags[j]) & QN__CU_ARRIVED) && u->leader[i] == QN_NONE &&
           u->leader[j] == QN_NONE;
}

/* Does j follow i: j heads for i and i does not head for j (a queue, not
** two units meeting)? Both units of a pair read the same last-step state.
** Callers ask may_pass first. */
static bool follows(const qn__cunits *u, uint32_t j, uint32_t i) {
    return heads_for(u, j, i) && !heads_for(u, i, j);
}

/* Is j behind i on their way to one goal: both follow the same instance
** (no path), and j's cost there is higher
** (by more than a hundredth; ids break nearer ties)? Two units held up
** where their ways merge into a gap one unit wide (a cell of a random map,
** each against a wall, each in the other's way) stood still for good:
** neither heads for the other alone, so neither follows. The one nearer
** the goal goes first. *ci caches i's cost (NAN until worked out). Callers
** ask may_pass first. */
static bool behind(const qn__cunits *u, uint32_t j, uint32_t i, float *ci) {
    const qn_field *f = u->field[i];
    if (!f || u->field[j] != f || u->path[i].n || u->path[j].n) return false;
    if (isnan(*ci)) *ci = qn_field_cost_at(f, u->pos[i], u->quad[i]);
    float cj = qn_field_cost_at(f, u->pos[j], u->quad[j]);
    if (!isfinite(*ci) || !isfinite(cj)) return false;
    float gap = cj - *ci;
    return gap > 0.01f || (fabsf(gap) <= 0.01f && u->id[j] > u->id[i]);
}

/* Unit i held up by units that follow it: the lines of nl half-planes
** (the first nw the walls) without those of its followers (follower[k]
** for line nw + k), into out; returns how many are left. */
static uint32_t without_followers(const qn__line *lines, uint32_t nl, uint32_t nw,
                                  const bool *follower, qn__line *out) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < nl; k++)
        if (k < nw || !follower[k - nw]) out[n++] = lines[k];
    return n;
}

static void step_unit(qn_crowd *c, uint32_t i) {
    qn__cunits *u = &c->u;
    float dt = c->dt, r = u->rad[i], vmax = u->vmax[i];
    qn_vec2 p = u->pos[i], v = u->vel[i];
    uint32_t next;
    float gd = goal_distance(u, i);
    qn_vec2 want = desired(c, i, dt, gd, &next);
    qn_vec2 pref = qn__add(v, clamp_len(qn__sub(want, v), u->amax[i] * dt));
    knn k;
    k.n = 0;
    k.cap = c->max_nb;
    neighbours(c, i, r + c->max_rad + c->nb_range, &k);
    bool arrived = arrives(c, i, gd, &k, want, &u->nwait[i]);
    if (arrived) pref = step_aside(c, i, &k);
    qn__line lines[MAX_WALL_LINES + QN_CROWD_MAX_NEIGHBOURS];
    uint32_t nw = qn__walls_lines(&c->walls, p, r, r + vmax * c->tau_wall + 1e-3f, c->tau_wall,
                                  dt, lines, MAX_WALL_LINES);
    uint32_t n = nw;
    float inv_tau = 1.0f / c->tau, inv_dt = 1.0f / dt;
    for (uint32_t m = 0; m < k.n; m++) {
        uint32_t j = k.c[m].who;
        /* Arrived units make way: they take the larger share against units
        ** still on their way (the pair's shares still add up to one). */
        bool ai = (u->flags[i] & QN__CU_ARRIVED) != 0, aj = (u->flags[j] & QN__CU_ARRIVED) != 0;
        float share = ai == aj ? 0.5f : (ai ? YIELD : 1.0f - YIELD);
        lines[n++] = qn__orca_line(p, v, r * PAD, u->pos[j], u->vel[j], u->rad[j] * PAD, inv_tau,
                                   inv_dt, u->id[i] < u->id[j], share);
    }
    qn_vec2 nv = vmax > 0.0f ? qn__orca_solve(lines, n, nw, vmax, nudge(pref, u->id[i], c->steps))
                             : qn__v2(0, 0);
    /* Held up (under a tenth of the speed it prefers) with followers among
    ** its neighbours (follows, behind): it goes on as if they were not
    ** there, and they make way (they avoid it as ever). With their shares
    ** kept, a queue in a corridor one cell wide stood still for good where
    ** the corridor turns: the unit ahead, against the wall of the bend, may
    ** not move across toward the follower that touches its margin at a
    ** slant, and the follower may not move into it. Only when held up:
    ** leaving followers out everywhere made lanes of counterflow slower,
    ** and some jammed. */
    if (vmax > 0.0f && qn__dot(nv, nv) < 0.01f * qn__dot(pref, pref)) {
        bool follower[QN_CROWD_MAX_NEIGHBOURS];
        uint32_t nf = 0;
        float ci = NAN; /* i's cost on its instance, when first needed */
        for (uint32_t m = 0; m < k.n; m++) {
            uint32_t j = k.c[m].who;
            nf += follower[m] = may_pass(u, j, i) && (follows(u, j, i) || behind(u, j, i, &ci));
        }
        if (nf) {
            qn__line free_lines[MAX_WALL_LINES + QN_CROWD_MAX_NEIGHBOURS];
            uint32_t nfree = without_followers(lines, n, nw, follower, free_lines);
            nv = qn__orca_solve(free_lines, nfree, nw, vmax, nudge(pref, u->id[i], c->steps));
        }
    }
    nv = keep_gaps(c, i, &k, nv, dt);
    qn_vec2 np = p;
    uint32_t nq = u->quad[i];
    bool slid = qn__walls_move(&c->walls, c->mesh, &np, qn__scale(nv, dt), &nq);
    for (uint32_t m = 0; m < k.n; m++) c->nbr[(size_t)i * c->max_nb + m] = k.c[m].who;
    u->nnb[i] = (uint8_t)k.n;
    u->npos[i] = np;
    u->nvel[i] = slid ? qn__scale(qn__sub(np, p), inv_dt) : nv;
    u->ndes[i] = want;
    u->nquad[i] = nq;
    u->npath_next[i] = next;
    u->nflags[i] = (uint8_t)((arrived ? QN__CU_ARRIVED : 0) | (slid ? QN__CU_WALL : 0) |
                             QN__CU_STEPPED);
}

/* ---- resolving overlaps ------------------------------------------------- */

/* Where avoidance failed (dense crowds, where no velocity satisfies every
** neighbour), units that overlap after the move step apart, in passes:
** each pass moves every unit away from each neighbour it overlaps by half
** the depth, at most half its radius, sliding along walls like any move,
** reading the positions the pass before left (Jacobi: any split into
** ranges gives the same bits). One pass resolves a lone pair exactly; the
** pushes of several neighbours can drive a unit into another, which the
** next passes undo. Passes alternate between the npos and fpos buffers:
** pass k reads npos/nquad when k is even, fpos/fquad when odd, and writes
** the other. */
static void resolve_unit(qn_crowd *c, uint32_t i) {
    qn__cunits *u = &c->u;
    bool even = (u->nres[i] & 1u) == 0;
    const qn_vec2 *src = even ? u->npos : u->fpos;
    qn_vec2 *dst = even ? u->fpos : u->npos;
    uint32_t *dstq = even ? u->fquad : u->nquad;
    qn_vec2 p = src[i], push = {0, 0};
    const uint32_t *nb = &c->nbr[(size_t)i * c->max_nb];
    for (uint32_t m = 0; m < u->nnb[i]; m++) {
        uint32_t j = nb[m];
        float rs = u->rad[i] + u->rad[j];
        qn_vec2 d = qn__sub(p, src[j]);
        float d2 = qn__dot(d, d);
        if (d2 >= rs * rs) continue;
        float dl = sqrtf(d2);
        qn_vec2 away = dl > 1e-6f ? qn__scale(d, 1.0f / dl)
                                  : qn__v2(u->id[i] < u->id[j] ? -1.0f : 1.0f, 0.0f);
        push = qn__add(push, qn__scale(away, RESOLVE * (rs - dl)));
    }
    qn_vec2 fp = p;
    uint32_t fq = even ? u->nquad[i] : u->fquad[i];
    bool slid = false;
    if (push.x != 0.0f || push.y != 0.0f) {
        slid = qn__walls_move(&c->walls, c->mesh, &fp, clamp_len(push, RESOLVE_MAX * u->rad[i]), &fq);
        u->nvel[i] = qn__scale(qn__sub(fp, u->pos[i]), 1.0f / c->dt);
    }
    dst[i] = fp;
    dstq[i] = fq;
    u->nres[i]++;
    u->nflags[i] |= (uint8_t)((u->nres[i] == c->passes ? QN__CU_RESOLVED : 0) |
                              (slid ? QN__CU_WALL : 0));
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
    c->nb_range = c->nb_extra > 0.0f ? c->nb_extra : 2.0f * mr + 0.75f * mv;
}

/* Room for every unit's neighbour list. */
static bool nbr_reserve(qn_crowd *c) {
    if (c->count <= c->nbr_cap) return true;
    size_t cap = c->nbr_cap ? c->nbr_cap : 64, per = c->max_nb * sizeof(uint32_t);
    while (cap < c->count) cap *= 2;
    uint32_t *n = qn__realloc(&c->alloc, c->nbr, c->nbr_cap * per, cap * per);
    if (!n) return false;
    c->nbr = n;
    c->nbr_cap = cap;
    return true;
}

qn_status qn_crowd_step_begin(qn_crowd *crowd, float dt) {
    if (!crowd || crowd->in_step || !(dt > 0.0f && dt <= 10.0f)) return QN_E_INVALID_ARG;
    qn_crowd *c = crowd;
    if (c->walls.version != c->mesh->version &&
        qn__walls_build(&c->walls, c->mesh, &c->alloc) != QN_OK)
        return QN_E_NOMEM;
    crowd_extent(c);
    if (c->count) {
        /* Cells of half the search radius: a search looks at 5 x 5 cells or fewer. */
        grid_shape(c, fmaxf(fmaxf(2.0f * c->max_rad, 0.5f * (2.0f * c->max_rad + c->nb_range)),
                            1e-3f));
        if (!grid_reserve(c, c->count, c->gw * c->gh) || !nbr_reserve(c)) return QN_E_NOMEM;
        grid_fill(c);
    }
    for (uint32_t i = 0; i < c->count; i++) c->u.nflags[i] = c->u.nres[i] = 0;
    c->dt = dt;
    c->in_step = true;
    return QN_OK;
}

qn_status qn_crowd_step_range(qn_crowd *crowd, uint32_t begin, uint32_t end) {
    if (!crowd || !crowd->in_step || begin > end || end > crowd->count) return QN_E_INVALID_ARG;
    for (uint32_t i = begin; i < end; i++) step_unit(crowd, i);
    return QN_OK;
}

qn_status qn_crowd_resolve_range(qn_crowd *crowd, uint32_t begin, uint32_t end) {
    if (!crowd || !crowd->in_step || begin > end || end > crowd->count) return QN_E_INVALID_ARG;
    for (uint32_t i = begin; i < end; i++)
        if (!(crowd->u.nflags[i] & QN__CU_STEPPED) || crowd->u.nres[i] >= crowd->passes)
            return QN_E_MISMATCH;
    for (uint32_t i = begin; i < end; i++) resolve_unit(crowd, i);
    return QN_OK;
}

uint32_t qn_crowd_resolve_passes(const qn_crowd *crowd) { return crowd ? crowd->passes : 0; }

/* Turns a heading toward the desired velocity, at most TURN_RATE radians a
** second, when the unit means to move (faster than a tenth of max speed). */
static void turn_heading(qn_vec2 *h, qn_vec2 des, float vmax, float dt) {
    float dl = qn__len(des);
    if (!(dl > 0.1f * vmax && dl > 0.0f)) return;
    qn_vec2 to = qn__scale(des, 1.0f / dl);
    float ang = atan2f(qn__cross(*h, to), qn__dot(*h, to)), lim = TURN_RATE * dt;
    ang = ang > lim ? lim : (ang < -lim ? -lim : ang);
    float cs = cosf(ang), sn = sinf(ang);
    qn_vec2 n = qn__v2(h->x * cs - h->y * sn, h->x * sn + h->y * cs);
    float nl = qn__len(n);
    *h = nl > 0.0f ? qn__scale(n, 1.0f / nl) : to;
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
        if ((u->nflags[i] & (QN__CU_STEPPED | QN__CU_RESOLVED)) !=
            (QN__CU_STEPPED | QN__CU_RESOLVED))
            return QN_E_MISMATCH;
    /* An odd number of passes ends in fpos, an even one in npos. */
    swap_ptr(&u->pos, c->passes & 1u ? &u->fpos : &u->npos);
    swap_ptr(&u->quad, c->passes & 1u ? &u->fquad : &u->nquad);
    swap_ptr(&u->vel, &u->nvel);
    swap_ptr(&u->des, &u->ndes);
    swap_ptr(&u->path_next, &u->npath_next);
    swap_ptr(&u->flags, &u->nflags);
    swap_ptr(&u->wait, &u->nwait);
    for (uint32_t i = 0; i < c->count; i++) {
        u->flags[i] &= (uint8_t)~(QN__CU_STEPPED | QN__CU_RESOLVED);
        c->wall_contacts += (u->flags[i] & QN__CU_WALL) != 0;
        turn_heading(&u->heading[i], u->des[i], u->vmax[i], c->dt);
    }
    c->steps++;
    return QN_OK;
}

qn_status qn_crowd_step(qn_crowd *crowd, float dt) {
    qn_status st = qn_crowd_step_begin(crowd, dt);
    if (st != QN_OK) return st;
    qn_crowd_step_range(crowd, 0, crowd->count);
    for (uint32_t k = 0; k < crowd->passes; k++) qn_crowd_resolve_range(crowd, 0, crowd->count);
    return qn_crowd_step_end(crowd);
}

/* A phase cut into jobs: job t covers units [n*t/jobs, n*(t+1)/jobs). */
typedef struct phase {
    qn_crowd *c;
    uint32_t jobs;
    bool resolve;
} phase;

static void phase_job(void *data, uint32_t job) {
    const phase *p = data;
    uint32_t n = p->c->count;
    uint32_t begin = (uint32_t)((uint64_t)n * job / p->jobs);
    uint32_t end = (uint32_t)((uint64_t)n * (job + 1u) / p->jobs);
    if (p->resolve) qn_crowd_resolve_range(p->c, begin, end);
    else qn_crowd_step_range(p->c, begin, end);
}

qn_status qn_crowd_step_jobs(qn_crowd *crowd, float dt, uint32_t jobs, const qn_jobs *runner) {
    if (jobs == 0 || jobs > QN_MAX_JOBS || (runner && !runner->run)) return QN_E_INVALID_ARG;
    qn_status st = qn_crowd_step_begin(crowd, dt);
    if (st != QN_OK) return st;
    if (jobs > crowd->count) jobs = crowd->count ? crowd->count : 1;
    phase a = {crowd, jobs, false}, b = {crowd, jobs, true};
    bool all = qn__run_jobs(runner, jobs, phase_job, &a);
    for (uint32_t k = 0; k < crowd->passes; k++) all = qn__run_jobs(runner, jobs, phase_job, &b) && all;
    qn_status end = qn_crowd_step_end(crowd);
    return end != QN_OK ? end : (all ? QN_OK : QN_E_NOMEM);
}

qn_status qn_crowd_step_parallel(qn_crowd *crowd, float dt, uint32_t threads) {
    if (threads == 0 || threads > QN_MAX_THREADS) return QN_E_INVALID_ARG;
    return qn_crowd_step_jobs(crowd, dt, threads, NULL);
}
