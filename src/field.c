/*
** field.c: building an instance (qn_field) for a set of goal points.
**
** The search graph's nodes are the portals. Inside a quad, going from one
** portal's mid point to another's costs the distance times the quad's cost;
** a portal of a goal quad reaches the goal for the distance to the goal point
** times that quad's cost. Dijkstra with a 4-ary heap (decrease-key by
** position) settles portals in order of cost; the first portal of a quad to
** be settled is its cheapest, so the quad leaves by it. Scratch memory lives
** only for the duration of the build.
*/
#include "internal.h"

#include <stdlib.h>

typedef struct search {
    const qn_mesh *m;
    float radius;
    float *g;       /* cost per portal */
    uint32_t *heap; /* portal indices */
    uint32_t *pos;  /* position in heap; QN_NONE never queued; SETTLED after pop */
    uint8_t *via;   /* side (0, 1) of the quad the best cost came through */
    uint32_t n;     /* heap size */
} search;

#define SETTLED (QN_NONE - 1u)

static size_t search_bytes(uint32_t portals) {
    return (size_t)portals * (sizeof(float) + 2 * sizeof(uint32_t) + 1);
}

/* ---- heap on g ------------------------------------------------- */

/* A 4-ary heap: shallower than a binary one, and a node's children share a
** cache line. */
static inline void heap_up(search *s, uint32_t i) {
    uint32_t v = s->heap[i];
    float gv = s->g[v];
    while (i > 0) {
        uint32_t parent = (i - 1) / 4, pv = s->heap[parent];
        if (s->g[pv] <= gv) break;
        s->heap[i] = pv;
        s->pos[pv] = i;
        i = parent;
    }
    s->heap[i] = v;
    s->pos[v] = i;
}

static void heap_down(search *s, uint32_t i) {
    uint32_t v = s->heap[i];
    float gv = s->g[v];
    for (;;) {
        uint32_t first = 4 * i + 1;
        if (first >= s->n) break;
        uint32_t last = first + 4 < s->n ? first + 4 : s->n, c = first;
        float gc = s->g[s->heap[first]];
        for (uint32_t k = first + 1; k < last; k++) {
            float gk = s->g[s->heap[k]];
            if (gk < gc) gc = gk, c = k;
        }
        if (gc >= gv) break;
        s->heap[i] = s->heap[c];
        s->pos[s->heap[i]] = i;
        i = c;
    }
    s->heap[i] = v;
    s->pos[v] = i;
}

/* Lowers g[v] to val (reached through v's side `via`), queueing v if it was
** not queued. */
static inline void improve(search *s, uint32_t v, float val, uint8_t via) {
    if (s->pos[v] == SETTLED || val >= s->g[v]) return;
    s->g[v] = val;
    s->via[v] = via;
    if (s->pos[v] == QN_NONE) {
        s->heap[s->n] = v;
        s->pos[v] = s->n++;
    }
    heap_up(s, s->pos[v]);
}

static uint32_t pop_min(search *s) {
    uint32_t top = s->heap[0];
    s->pos[top] = SETTLED;
    if (--s->n > 0) {
        s->heap[0] = s->heap[s->n];
        heap_down(s, 0);
    }
    return top;
}

/* ---- the search --------------------------------------------------------- */

/* Relax every open portal of quad q = u's side `side` from portal u (settled
** at cost gu). */
static void relax_through(search *s, uint32_t q, int side, uint32_t u, float gu) {
    const qn_mesh *m = s->m;
    uint32_t base = m->qp_start[q], k = m->qp_start[q + 1] - base;
    const float *row = &m->qdist[m->qd_start[q] + (size_t)m->portals[u].local[side] * k];
    float w = m->cost[q];
    for (uint32_t j = 0; j < k; j++) {
        uint32_t v = m->qp_list[base + j];
        if (s->pos[v] == SETTLED) continue; /* closed portals start settled */
        improve(s, v, gu + w * row[j], m->portals[v].q[0] == q ? 0 : 1);
    }
}

static void seed_goals(search *s, qn_field *f) {
    const qn_mesh *m = s->m;
    for (uint32_t i = 0; i < f->goal_count; i++) {
        uint32_t q = f->goals[i].quad;
        for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
            uint32_t v = m->qp_list[k];
            improve(s, v, m->cost[q] * qn__len(qn__sub(m->portals[v].mid, f->goals[i].at)),
                    m->portals[v].q[0] == q ? 0 : 1);
        }
    }
}

static void run_search(search *s, qn_field *f) {
    const qn_mesh *m = s->m;
    seed_goals(s, f);
    while (s->n > 0) {
        uint32_t u = pop_min(s);
        float gu = s->g[u];
        for (int side = 0; side < 2; side++) {
            uint32_t q = m->portals[u].q[side];
            if (f->slots[q].exit == QN_NONE) {
                f->slots[q].cost = gu;
                f->slots[q].exit = u;
            }
            /* Going back through the quad u was reached through cannot help:
            ** inside one quad the straight line is shortest (and likewise
            ** for a goal quad, whose portals were seeded straight from the
            ** goal point). */
            if (side != s->via[u]) relax_through(s, q, side, u, gu);
        }
    }
}

/* ---- goals ---------------------------------------------------------------- */

static int cmp_goal(const void *x, const void *y) {
    const qn__goal *a = x, *b = y;
    if (a->quad != b->quad) return a->quad < b->quad ? -1 : 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

static qn_status place_goals(qn_field *f, const qn_vec2 *goals, qn_error *err) {
    const qn_mesh *m = f->mesh;
    for (uint32_t i = 0; i < f->goal_count; i++) {
        qn_vec2 p = goals[i];
        if (!qn__finite2(p))
            return qn__fail(err, QN_E_INVALID_ARG, i, "goal %u is not a finite point", i);
        uint32_t q = qn__locate(m, p, QN_NONE);
        if (q == QN_NONE)
            return qn__fail(err, QN_E_OUTSIDE, i, "goal %u (%g, %g) is outside every quad", i,
                            (double)p.x, (double)p.y);
        if (m->blocked[q])
            return qn__fail(err, QN_E_BLOCKED, i, "goal %u (%g, %g) is in blocked quad %u", i,
                            (double)p.x, (double)p.y, q);
        f->goals[i].at = p;
        f->goals[i].quad = q;
        f->goals[i].index = i;
    }
    qsort(f->goals, f->goal_count, sizeof(qn__goal), cmp_goal);
    for (uint32_t q = 0; q < m->quad_count; q++) {
        f->slots[q].cost = INFINITY;
        f->slots[q].exit = QN_NONE;
    }
    for (uint32_t i = f->goal_count; i-- > 0;) {
        f->slots[f->goals[i].quad].cost = 0.0f;
        f->slots[f->goals[i].quad].exit = QN__GOAL_BIT | i; /* lowest index wins */
    }
    return QN_OK;
}

/* ---- create / destroy -------------------------------------------------------- */

void qn_field_destroy(qn_field *field) {
    if (!field) return;
    qn_allocator a = field->alloc;
    qn__free(&a, field->slots, (size_t)field->mesh->quad_count * sizeof(qn__slot));
    qn__free(&a, field->goals, (size_t)field->goal_count * sizeof(qn__goal));
    qn__free(&a, field, sizeof *field);
}

static qn_status check_args(const qn_mesh *mesh, const qn_vec2 *goals, uint32_t goal_count,
                            const qn_field_opts *opts, qn_field **out, qn_error *err) {
    if (!mesh || !goals || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    if (goal_count == 0) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "no goal points");
    if (goal_count > QN_MAX_GOALS)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "%u goal points, more than the limit of %u",
                        goal_count, QN_MAX_GOALS);
    if (opts && (!isfinite(opts->radius) || opts->radius < 0.0f))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "radius %g is not finite and >= 0",
                        (double)opts->radius);
    return QN_OK;
}

static qn_status search_run(qn_field *f, qn_error *err) {
    const qn_mesh *m = f->mesh;
    uint32_t np = m->portal_count;
    void *block = qn__alloc(&f->alloc, search_bytes(np));
    if (!block) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (search scratch)");
    search s = {m, f->radius, block, NULL, NULL, NULL, 0};
    s.heap = (uint32_t *)(s.g + np);
    s.pos = s.heap + np;
    s.via = (uint8_t *)(s.pos + np);
    /* Closed portals (a blocked side, or narrower than the agent) are marked
    ** settled up front, so the search never looks at them again. */
    for (uint32_t i = 0; i < np; i++) {
        s.g[i] = INFINITY;
        s.pos[i] = qn__portal_open(m, i, f->radius) ? QN_NONE : SETTLED;
    }
    run_search(&s, f);
    qn__free(&f->alloc, block, search_bytes(np));
    return QN_OK;
}

qn_status qn_field_create(const qn_mesh *mesh, const qn_vec2 *goals, uint32_t goal_count,
                          const qn_field_opts *opts, const qn_allocator *alloc, qn_field **out,
                          qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    qn_status st = check_args(mesh, goals, goal_count, opts, out, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    qn_field *f = qn__calloc(&a, 1, sizeof *f);
    if (!f) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (field)");
    f->alloc = a;
    f->mesh = mesh;
    f->radius = opts ? opts->radius : 0.0f;
    f->goal_count = goal_count;
    f->slots = qn__alloc(&a, (size_t)mesh->quad_count * sizeof(qn__slot));
    f->goals = qn__alloc(&a, (size_t)goal_count * sizeof(qn__goal));
    if (!f->slots || !f->goals) st = qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (field)");
    if (st == QN_OK) st = place_goals(f, goals, err);
    if (st == QN_OK) st = search_run(f, err);
    if (st != QN_OK) {
        qn_field_destroy(f);
        return st;
    }
    f->bytes = sizeof *f + (size_t)mesh->quad_count * sizeof(qn__slot) +
               (size_t)goal_count * sizeof(qn__goal);
    *out = f;
    return QN_OK;
}

/* ---- queries ------------------------------------------------------------------- */

const qn_mesh *qn_field_mesh(const qn_field *field) { return field ? field->mesh : NULL; }
size_t qn_field_bytes(const qn_field *field) { return field ? field->bytes : 0; }

float qn_field_quad_cost(const qn_field *field, uint32_t quad) {
    if (!field || quad >= field->mesh->quad_count) return INFINITY;
    return field->slots[quad].cost;
}

uint32_t qn_field_quad_exit(const qn_field *field, uint32_t quad) {
    if (!field || quad >= field->mesh->quad_count) return QN_NONE;
    uint32_t e = field->slots[quad].exit;
    return (e & QN__GOAL_BIT) ? QN_NONE : e;
}

uint32_t qn_field_quad_next(const qn_field *field, uint32_t quad) {
    uint32_t e = qn_field_quad_exit(field, quad);
    return e == QN_NONE ? QN_NONE : qn__portal_other(field->mesh, e, quad);
}

/* Nearest goal point to p among the goals of goal quad q (first = sorted
** index from the quad's exit value). */
const qn__goal *qn__nearest_goal(const qn_field *f, uint32_t first, qn_vec2 p) {
    const qn__goal *best = &f->goals[first];
    float bd = qn__len(qn__sub(best->at, p));
    for (uint32_t i = first + 1; i < f->goal_count && f->goals[i].quad == best->quad; i++) {
        float d = qn__len(qn__sub(f->goals[i].at, p));
        if (d < bd) {
            bd = d;
            best = &f->goals[i];
        }
    }
    return best;
}

float qn_field_cost_at(const qn_field *field, qn_vec2 p, uint32_t hint) {
    if (!field || !qn__finite2(p)) return INFINITY;
    const qn_mesh *m = field->mesh;
    uint32_t q = qn__locate(m, p, hint);
    if (q == QN_NONE || m->blocked[q]) return INFINITY;
    qn__slot s = field->slots[q];
    if (s.exit == QN_NONE) return INFINITY;
    if (s.exit & QN__GOAL_BIT) {
        const qn__goal *g = qn__nearest_goal(field, s.exit & ~QN__GOAL_BIT, p);
        return m->cost[q] * qn__len(qn__sub(g->at, p));
    }
    return s.cost + m->cost[q] * qn__len(qn__sub(m->portals[s.exit].mid, p));
}
