/*
** field.c: building an instance (qn_field) for a set of goal points, and
** repairing it after the mesh changes.
**
** The search graph's nodes are the portals. Inside a quad, going from one
** portal's mid point to another's costs the distance times the quad's cost;
** a portal of a goal quad reaches the goal for the distance to the goal point
** times that quad's cost. Dijkstra with a 4-ary heap (decrease-key by
** position) gives every open portal its cost g; then every quad takes the
** cheapest of its portals (ties: the lowest portal index) as its exit.
**
** A repairable field keeps g and the shortest-path tree over portals. After
** changes to some quads, the portals whose tree path ran through a changed
** quad (and their descendants) are reset and re-seeded from their unaffected
** neighbours; edges through changed quads that got cheaper are relaxed; one
** Dijkstra pass then settles everything that moved. Only quads touching a
** portal whose cost changed get their exit recomputed.
*/
#include "internal.h"
#include "core/heap.h"

#include <stdlib.h>

#define CLOSED (QN_NONE - 1u) /* pos[] of a portal no agent of this radius may use */
/* via[] holds the side in its low bit; during a repair also these flags. */
#define AFFECTED 2u /* reset: its old cost ran through a changed quad */
#define MOVED 4u    /* listed in moved[] */

typedef struct search {
    const qn_mesh *m;
    const qn__pgeo *geo; /* the portals' segments (qn_field.geo) */
    float radius;
    float *g;
    qn__hent *heap;
    uint32_t *pos; /* pos: heap index, QN_NONE idle, CLOSED */
    uint8_t *via;         /* side (0, 1) of the quad g came through */
    qn_vec2 *x;           /* where the best path crosses each portal; NULL: mid points */
    uint32_t *pred;       /* tree parent, or NULL when not kept */
    qn__tree *t;          /* repair only: the tree whose child lists to keep */
    qn__heap h; /* the open portals, on g (over heap and pos) */
    /* Repair only: portals whose g changed, to refresh their quads' exits. */
    uint32_t *moved;
    uint32_t nmoved;
    uint8_t *mark; /* per quad: exit needs refreshing */
} search;

/* The relaxation path is hot: keep it in one function. */
#define QN__HOT_INLINE QN__ALWAYS_INLINE

/* ---- the queue: portals on g (src/core/heap.h) ------------------------------ */

static void queue_init(search *s) { s->h = (qn__heap){s->heap, 0, s->pos}; }

static uint32_t pop_min(search *s) {
    uint32_t top = qn__heap_pop(&s->h);
    s->pos[top] = QN_NONE;
    return top;
}

static void tree_detach(qn__tree *t, uint32_t v);

/* Lists v once among the portals a repair touched. */
static void note_moved(search *s, uint32_t v) {
    if (!s->moved || (s->via[v] & MOVED)) return;
    s->via[v] |= MOVED;
    s->moved[s->nmoved++] = v;
}

/* Lowers g[v] to val, reached from portal `from` (QN_NONE: a goal seed)
** through v's side `via`, crossing v at `at`, and queues v. A popped portal is never lowered
** again: weights are not negative. */
static QN__HOT_INLINE void improve(search *s, uint32_t v, float val, uint8_t via, uint32_t from,
                                   qn_vec2 at) {
    if (s->pos[v] == CLOSED || !(val < s->g[v])) return;
    if (s->x) s->x[v] = at;
    if (s->t) { /* repair: leave the old parent; re-linked in finish_repair */
        note_moved(s, v);
        tree_detach(s->t, v);
    }
    s->g[v] = val;
    s->via[v] = (uint8_t)((s->via[v] & ~1u) | via);
    if (s->pred) s->pred[v] = from;
    if (s->pos[v] == QN_NONE) qn__heap_push(&s->h, v, val);
    else qn__heap_lowered(&s->h, v, val);
}

static uint8_t side_in(const qn_mesh *m, uint32_t v, uint32_t q) {
    return m->pq[v].q[0] == q ? 0 : 1;
}

/* Where a path coming from point `from` crosses portal v: the point of v's
** crossable part nearest to `from` (so straight runs stay straight and bends
** hug corners). */
static qn_vec2 crossing(const search *s, uint32_t v, qn_vec2 from) {
    const qn__pgeo *pt = &s->geo[v];
    float r = s->radius < 0.5f * pt->width ? s->radius : 0.5f * pt->width;
    qn_vec2 u = qn__pgeo_dir(pt);
    float t = qn__dot(qn__sub(from, pt->p0), u);
    t = t < r ? r : (t > pt->width - r ? pt->width - r : t);
    return qn__add(pt->p0, qn__scale(u, t));
}

/* Length of a step between crossing points. Two portals meeting at a corner
** can share their nearest points; a floor of the mesh tolerance keeps every
** step's cost positive, so costs fall strictly along exits (and a unit can
** never circle between quads of equal cost). */
static float step_len(const qn_mesh *m, qn_vec2 a, qn_vec2 b) {
    float d = qn__len(qn__sub(a, b));
    return d > m->eps ? d : m->eps;
}

/* Relax every portal of quad q (u's side `side`) from portal u. */
static void relax_through(search *s, uint32_t q, int side, uint32_t u, float gu) {
    const qn_mesh *m = s->m;
    uint32_t base = m->qp_start[q], k = m->qp_start[q + 1] - base;
    float w = qn__quad_cost(m, q);
    if (s->x) {
        qn_vec2 xu = s->x[u];
        for (uint32_t j = 0; j < k; j++) {
            uint32_t v = m->qp_list[base + j];
            if (s->pos[v] == CLOSED) continue;
            qn_vec2 xv = crossing(s, v, xu);
            improve(s, v, gu + w * step_len(m, xv, xu), side_in(m, v, q), u, xv);
        }
        return;
    }
    qn_vec2 mu = qn__pgeo_mid(&s->geo[u]);
    (void)side;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t v = m->qp_list[base + j];
        qn_vec2 mv = qn__pgeo_mid(&s->geo[v]);
        improve(s, v, gu + w * qn__len(qn__sub(mu, mv)), side_in(m, v, q), u, mv);
    }
}

/* Offers v the path from point `from` (in quad q, at cost g0 there). */
static void offer_from_point(search *s, uint32_t v, uint32_t q, qn_vec2 from, float g0,
                             uint32_t pred) {
    qn_vec2 xv = s->x ? crossing(s, v, from) : qn__pgeo_mid(&s->geo[v]);
    float d = s->x ? step_len(s->m, xv, from) : qn__len(qn__sub(xv, from));
    improve(s, v, g0 + qn__quad_cost(s->m, q) * d, side_in(s->m, v, q), pred, xv);
}

static void seed_goal_quad(search *s, const qn_field *f, uint32_t gi) {
    const qn_mesh *m = s->m;
    uint32_t q = f->goals[gi].quad;
    if (m->blocked[q]) return;
    for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++)
        offer_from_point(s, m->qp_list[k], q, f->goals[gi].at, qn__goal_g0(f, gi), QN_NONE);
}

/* Dijkstra until the queue is empty. Going back through the quad a portal
** was reached through cannot help: inside one quad the straight line is
** shortest (and a goal quad's portals were seeded straight from the goal). */
static void drain(search *s) {
    const qn_mesh *m = s->m;
    while (s->h.n > 0) {
        uint32_t u = pop_min(s);
        float gu = s->g[u];
        for (int side = 0; side < 2; side++)
            if ((unsigned)side != (s->via[u] & 1u)) relax_through(s, m->pq[u].q[side], side, u, gu);
    }
}

/* ---- exits ------------------------------------------------------------------ */

/* First goal (in quad order) whose quad is q, or QN_NONE. */
static uint32_t goal_in_quad(const qn_field *f, uint32_t q) {
    uint32_t lo = 0, hi = f->goal_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->goals[mid].quad < q) lo = mid + 1;
        else hi = mid;
    }
    return lo < f->goal_count && f->goals[lo].quad == q ? lo : QN_NONE;
}

/* A quad's slot from its portals' costs: the cheapest open portal, ties to
** the lowest index (the portal list of a quad is in increasing order). */
static void refresh_slot(qn_field *f, const float *g, uint32_t q) {
    const qn_mesh *m = f->mesh;
    qn__slot slot = {INFINITY, QN_NONE};
    uint32_t gi = m->blocked[q] ? QN_NONE : goal_in_quad(f, q);
    if (gi != QN_NONE) {
        slot.cost = 0.0f;
        slot.exit = QN__GOAL_BIT | gi;
    } else if (!m->blocked[q]) {
        for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
            uint32_t v = m->qp_list[k];
            if (g[v] < slot.cost) slot.cost = g[v], slot.exit = v;
        }
    }
    f->slots[q] = slot;
    if (f->hops) qn__field_hop(f, q);
}

/* ---- full build ----------------------------------------------------------- */

static void reset_portals(search *s) {
    for (uint32_t i = 0; i < s->m->portal_count; i++) {
        s->g[i] = INFINITY;
        s->via[i] = 0;
        s->pos[i] = qn__portal_open(s->m, i, s->radius) ? QN_NONE : CLOSED;
        if (s->pred) s->pred[i] = QN_NONE;
    }
}

/* Child lists from the parents, once, after a full search. */
static void link_children(const qn_mesh *m, qn__tree *t) {
    for (uint32_t i = 0; i < m->portal_count; i++) t->child[i] = t->sib[i] = QN_NONE;
    for (uint32_t i = m->portal_count; i-- > 0;) {
        uint32_t p = t->pred[i];
        if (p == QN_NONE || t->g[i] == INFINITY) continue;
        t->sib[i] = t->child[p];
        t->child[p] = i;
    }
}

static void full_search(qn_field *f, search *s) {
    reset_portals(s);
    for (uint32_t i = 0; i < f->goal_count; i++) seed_goal_quad(s, f, i);
    drain(s);
    for (uint32_t q = 0; q < f->mesh->quad_count; q++) refresh_slot(f, s->g, q);
    if (f->tree) link_children(f->mesh, f->tree);
}

static size_t scratch_bytes(uint32_t portals) {
    return (size_t)portals * (sizeof(qn_vec2) + sizeof(qn__hent) + sizeof(uint32_t) + 1);
}

static search search_on_tree(const qn_field *f) {
    qn__tree *t = f->tree;
    search s = {.m = f->mesh, .geo = f->geo, .radius = f->radius, .g = t->g, .heap = t->heap,
                .pos = t->pos, .via = t->via, .x = f->midpoint ? NULL : t->x, .pred = t->pred};
    queue_init(&s);
    return s;
}

/* Do all open quads cost the same? Then an instance can be exact. One scan
** per mesh version (create and update both ask). */
static bool uniform_costs(qn_field *f) {
    const qn_mesh *m = f->mesh;
    if (f->uniform_version == m->version + 1) return f->uniform;
    float c = -1.0f;
    bool same = true;
    for (uint32_t q = 0; q < m->quad_count && same; q++) {
        if (m->blocked[q]) continue;
        if (c < 0.0f) c = qn__quad_cost(m, q);
        else same = qn__quad_cost(m, q) == c;
    }
    f->uniform = same;
    f->uniform_version = m->version + 1;
    return same;
}

/* The discrete instance: portal costs, and each quad's cost and exit. An
** exact instance keeps these too (quad costs, exits and the way out are
** the discrete model's; the sampler falls back on them where the map has
** no entry for a point, which float noise at a wedge's edge can cause). */
static qn_status build_discrete(qn_field *f, qn_error *err) {
    if (f->tree) {
        search s = search_on_tree(f);
        full_search(f, &s);
        return QN_OK;
    }
    uint32_t np = f->mesh->portal_count;
    void *block = qn__alloc(&f->alloc, scratch_bytes(np));
    if (!block) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (search scratch)");
    /* The portal costs stay with the field (the sampler reads them); the
    ** rest is scratch, x first for alignment. */
    qn_vec2 *x = block;
    search s = {.m = f->mesh, .geo = f->geo, .radius = f->radius, .g = f->pg,
                .x = f->midpoint ? NULL : x};
    s.heap = (qn__hent *)(x + np);
    s.pos = (uint32_t *)(s.heap + np);
    s.via = (uint8_t *)(s.pos + np);
    queue_init(&s);
    full_search(f, &s);
    qn__free(&f->alloc, block, scratch_bytes(np));
    return QN_OK;
}

/* A discrete field whose sampler walks the exit chain (lookahead above 2)
** keeps each quad's step (hops, filled as its slots are); an exact one
** does not (its fallback funnel reads the slots). */
static qn_status hops_for(qn_field *f, bool discrete, qn_error *err) {
    size_t bytes = (size_t)f->mesh->quad_count * sizeof(qn__hop);
    bool want = discrete && f->lookahead > 2;
    if (want && !f->hops && !(f->hops = qn__alloc(&f->alloc, bytes)))
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (field)");
    if (!want && f->hops) {
        qn__free(&f->alloc, f->hops, bytes);
        f->hops = NULL;
    }
    return QN_OK;
}

/* An exact field that is not repairable keeps no portal costs once built:
** the map answers every point (the fallback to the quad's exit, for a
** point no entry holds, needs only the slots). A rebuild makes them again. */
static void drop_portal_costs(qn_field *f) {
    if (f->tree || !f->pg) return;
    qn__free(&f->alloc, f->pg, (size_t)f->mesh->portal_count * sizeof(float));
    f->pg = NULL;
}

static int cmp_pair(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : (a > b);
}

/* An exact instance's exits (qn_field_quad_exit): quads taken in order of
** their least cost (qn__spm_quad_cost), from the goal quads out, each as
** soon as a quad taken before it is its neighbour through a portal open
** for the radius; it leaves toward the cheapest of those (the lowest
** portal on a tie). A quad is taken no earlier than any cheaper one, so
** every exit leads to a quad that costs no more, taken before: the chains
** end at goal quads. Quads a wedge's corner touches share its cost (the
** path bends there); they leave one by one round it this way. Made on the
** first qn_field_quad_exit, not with the instance: a fifth of a small
** level's build, which units steering by the map never read. NULL when
** out of memory. */
static qn__spm_exits *spm_exits(const qn_field *f) {
    const qn_mesh *m = f->mesh;
    qn_allocator a = f->alloc;
    uint32_t nq = m->quad_count;
    size_t bytes = (size_t)nq * (sizeof(float) + sizeof(qn__hent) + 1);
    float *cost = qn__alloc(&a, bytes);
    uint8_t *qexit = qn__alloc(&a, (size_t)nq + 1);
    qn__spm_exits *x = qn__calloc(&a, 1, sizeof *x);
    if (!cost || !qexit || !x) {
        qn__free(&a, cost, bytes);
        qn__free(&a, qexit, (size_t)nq + 1);
        qn__free(&a, x, sizeof *x);
        return NULL;
    }
    qn__heap h = {(qn__hent *)(void *)(cost + nq), 0, NULL};
    uint8_t *state = (uint8_t *)(h.a + nq); /* 0 not seen, 1 queued, 2 taken */
    uint32_t *xo = NULL, nxo = 0, xcap = 0;
    bool ok = true;
    for (uint32_t q = 0; q < nq; q++) {
        cost[q] = qn__spm_quad_cost(f, q);
        state[q] = 0;
        qexit[q] = QN__SPM_XNONE;
    }
    for (uint32_t i = 0; i < f->goal_count; i++) {
        uint32_t q = f->goals[i].quad;
        if (state[q] || !isfinite(cost[q])) continue;
        state[q] = 1;
        qn__heap_push(&h, q, cost[q]);
    }
    while (h.n > 0 && ok) {
        uint32_t q = qn__heap_pop(&h), best = QN_NONE, k0 = m->qp_start[q];
        bool goal = goal_in_quad(f, q) != QN_NONE;
        float bc = INFINITY;
        for (uint32_t k = k0; k < m->qp_start[q + 1]; k++) {
            uint32_t e = m->qp_list[k], r = qn__portal_other(m, e, q);
            if (!qn__portal_open(m, e, f->radius) || !isfinite(cost[r])) continue;
            if (state[r] == 2) {
                if (!goal && cost[r] < bc) best = k, bc = cost[r];
            } else if (state[r] == 0) {
                state[r] = 1;
                qn__heap_push(&h, r, cost[r]);
            }
        }
        state[q] = 2;
        if (best == QN_NONE) continue;
        if (best - k0 < QN__SPM_XOVER) {
            qexit[q] = (uint8_t)(best - k0);
            continue;
        }
        /* A quad with more portals than a byte numbers: a pair, by quad. */
        if (nxo == xcap) {
            uint32_t ncap = xcap ? 2 * xcap : 16;
            uint32_t *nx = qn__realloc(&a, xo, (size_t)xcap * 2 * sizeof(uint32_t),
                                       (size_t)ncap * 2 * sizeof(uint32_t));
            if (!nx) {
                ok = false;
                break;
            }
            xo = nx, xcap = ncap;
        }
        xo[2 * nxo] = q, xo[2 * nxo + 1] = m->qp_list[best];
        nxo++;
        qexit[q] = QN__SPM_XOVER;
    }
    qn__free(&a, cost, bytes);
    if (ok && nxo) { /* taken in cost order: sort the pairs by quad */
        qsort(xo, nxo, 2 * sizeof(uint32_t), cmp_pair);
        uint32_t *nx = qn__realloc(&a, xo, (size_t)xcap * 2 * sizeof(uint32_t),
                                   (size_t)nxo * 2 * sizeof(uint32_t));
        if (nx) xo = nx, xcap = nxo;
    }
    *x = (qn__spm_exits){qexit, xo, nxo, xcap,
                         sizeof *x + (size_t)nq + 1 + (size_t)xcap * 2 * sizeof(uint32_t)};
    if (!ok) {
        qn__spm_exits_free(&a, x, nq);
        return NULL;
    }
    return x;
}

void qn__spm_exits_free(const qn_allocator *a, qn__spm_exits *x, uint32_t quads) {
    if (!x) return;
    qn__free(a, x->qexit, (size_t)quads + 1);
    qn__free(a, x->xo, (size_t)x->xcap * 2 * sizeof(uint32_t));
    qn__free(a, x, sizeof *x);
}

/* The field is shared read-only: the exits are a cache it owns, published
** once (a thread that loses the race frees its copy), as the mesh's
** boundary is. */
const qn__spm_exits *qn__spm_exits_get(const qn_field *f) {
    qn__spm *s = f->spm;
    qn__spm_exits *x = atomic_load_explicit(&s->exits, memory_order_acquire);
    if (x || s->no_exits) return x;
    qn__spm_exits *mine = spm_exits(f), *none = NULL;
    if (!mine) return NULL;
    if (atomic_compare_exchange_strong_explicit(&s->exits, &none, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    qn__spm_exits_free(&f->alloc, mine, f->mesh->quad_count);
    return none;
}

/* Did the map reach every quad open to one it reached? */
static bool spm_complete(const qn_field *f) {
    const qn_mesh *m = f->mesh;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        if (!qn__field_reaches(f, q)) continue;
        for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
            uint32_t e = m->qp_list[k];
            if (qn__portal_open(m, e, f->radius) &&
                !qn__field_reaches(f, qn__portal_other(m, e, q)))
                return false;
        }
    }
    return true;
}

static qn_status build(qn_field *f, qn_error *err) {
    bool exact = f->exact_ok && uniform_costs(f);
    qn_status st = hops_for(f, !exact, err);
    if (st != QN_OK) return st;
    if (exact) {
        /* The map alone: no discrete slots, no portal costs (a repairable
        ** field keeps its tree's). */
        st = qn__spm_build(f, err);
        bool complete = st == QN_OK && spm_complete(f);
        if (st != QN_OK) return st;
        if (complete) {
            /* A seeded field is a hierarchical instance's local one, which
            ** only samples and costs points: no exits. */
            f->spm->no_exits = f->seed_g != NULL;
            qn__free(&f->alloc, f->slots, (size_t)f->mesh->quad_count * sizeof(qn__slot));
            f->slots = NULL;
            drop_portal_costs(f);
            return QN_OK;
        }
        /* The propagation lost its way (tolerances of a mesh whose extent
        ** dwarfs its quads): the discrete field instead. */
        st = hops_for(f, true, err);
        if (st != QN_OK) return st;
    }
    if (!f->slots &&
        !(f->slots = qn__alloc(&f->alloc, (size_t)f->mesh->quad_count * sizeof(qn__slot))))
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (field)");
    if (!f->pg && !(f->pg = qn__alloc(&f->alloc, (size_t)f->mesh->portal_count * sizeof(float))))
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (field)");
    st = build_discrete(f, err);
    qn__spm_free(&f->alloc, f->spm, f->mesh->quad_count);
    f->spm = NULL;
    return st;
}

/* ---- repair ----------------------------------------------------------------- */

static void tree_detach(qn__tree *t, uint32_t v) {
    uint32_t p = t->pred[v];
    if (p == QN_NONE) return;
    uint32_t *link = &t->child[p];
    while (*link != QN_NONE && *link != v) link = &t->sib[*link];
    if (*link == v) *link = t->sib[v];
    t->sib[v] = QN_NONE;
}

/* Resets the subtree under v (v included) to unreached, listing it. */
static void reset_subtree(search *s, qn__tree *t, uint32_t v, uint32_t *stack) {
    uint32_t top = 0;
    tree_detach(t, v);
    t->pred[v] = QN_NONE;
    stack[top++] = v;
    while (top > 0) {
        uint32_t u = stack[--top];
        if (s->via[u] & AFFECTED) continue;
        s->via[u] |= AFFECTED;
        note_moved(s, u);
        t->g[u] = INFINITY;
        for (uint32_t c = t->child[u]; c != QN_NONE;) {
            uint32_t next = t->sib[c];
            t->pred[c] = QN_NONE;
            t->sib[c] = QN_NONE;
            stack[top++] = c;
            c = next;
        }
        t->child[u] = QN_NONE;
    }
}

/* Portals of changed quads whose cost came through that quad, or whose
** openness changed, lose their subtree. */
static void reset_affected(search *s, qn__tree *t, const uint32_t *quads, uint32_t nq,
                           uint32_t *stack) {
    const qn_mesh *m = s->m;
    for (uint32_t i = 0; i < nq; i++) {
        uint32_t q = quads[i];
        for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
            uint32_t v = m->qp_list[k];
            bool open = qn__portal_open(m, v, s->radius);
            bool was_open = s->pos[v] != CLOSED;
            s->pos[v] = open ? QN_NONE : CLOSED;
            bool through_q = t->g[v] != INFINITY && (s->via[v] & 1u) == side_in(m, v, q);
            if (open != was_open || through_q) reset_subtree(s, t, v, stack);
        }
    }
}

/* Cheapest way into v from portals that kept their cost (or a goal seed). */
static void reseed(search *s, const qn_field *f, uint32_t v) {
    const qn_mesh *m = s->m;
    if (s->pos[v] == CLOSED) return;
    for (int side = 0; side < 2; side++) {
        uint32_t q = m->pq[v].q[side];
        if (m->blocked[q]) continue;
        uint32_t gi = goal_in_quad(f, q);
        for (; gi != QN_NONE && gi < f->goal_count && f->goals[gi].quad == q; gi++)
            offer_from_point(s, v, q, f->goals[gi].at, qn__goal_g0(f, gi), QN_NONE);
        for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
            uint32_t u = m->qp_list[k];
            if (u == v || (s->via[u] & AFFECTED) || s->pos[u] == CLOSED || s->g[u] == INFINITY)
                continue;
            qn_vec2 xu = s->x ? s->x[u] : qn__pgeo_mid(&s->geo[u]);
            offer_from_point(s, v, q, xu, s->g[u], u);
        }
    }
}

/* Edges through a changed quad may have become cheaper, and a goal quad's
** seeds may be back: offer them. */
static void offer_changed(search *s, const qn_field *f, uint32_t q) {
    const qn_mesh *m = s->m;
    if (m->blocked[q]) return;
    for (uint32_t gi = goal_in_quad(f, q); gi != QN_NONE && gi < f->goal_count &&
                                           f->goals[gi].quad == q;
         gi++)
        seed_goal_quad(s, f, gi);
    for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
        uint32_t u = m->qp_list[k];
        if (s->pos[u] == CLOSED || s->g[u] == INFINITY) continue;
        relax_through(s, q, side_in(m, u, q), u, s->g[u]);
    }
}

/* After the Dijkstra pass: rebuild the tree links of every portal that moved,
** and refresh the exits of the quads around them. */
static void finish_repair(qn_field *f, search *s, const uint32_t *quads, uint32_t nq) {
    const qn_mesh *m = f->mesh;
    qn__tree *t = f->tree;
    for (uint32_t i = 0; i < s->nmoved; i++) {
        uint32_t v = s->moved[i];
        s->via[v] &= 1u; /* clears AFFECTED and MOVED */
        if (t->g[v] != INFINITY && t->pred[v] != QN_NONE) {
            t->sib[v] = t->child[t->pred[v]];
            t->child[t->pred[v]] = v;
        }
        for (int side = 0; side < 2; side++) s->mark[m->pq[v].q[side]] = 1;
    }
    for (uint32_t i = 0; i < nq; i++) s->mark[quads[i]] = 1;
    for (uint32_t i = 0; i < s->nmoved; i++)
        for (int side = 0; side < 2; side++) {
            uint32_t q = m->pq[s->moved[i]].q[side];
            if (s->mark[q]) refresh_slot(f, t->g, q), s->mark[q] = 0;
        }
    for (uint32_t i = 0; i < nq; i++)
        if (s->mark[quads[i]]) refresh_slot(f, t->g, quads[i]), s->mark[quads[i]] = 0;
}

/*
** The moved list holds each portal once: a portal enters it when first reset
** or first lowered from an idle state, and a lowered portal is queued (not
** idle) until popped, after which it is never lowered again. The list is at
** most the portal count; the per-quad marks are cleared as they are used.
*/
static qn_status repair(qn_field *f, const uint32_t *quads, uint32_t nq, qn_error *err) {
    const qn_mesh *m = f->mesh;
    uint32_t np = m->portal_count;
    size_t bytes = 2 * (size_t)np * sizeof(uint32_t) + m->quad_count;
    uint32_t *block = qn__alloc(&f->alloc, bytes);
    if (!block) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (repair scratch)");
    search s = search_on_tree(f);
    s.t = f->tree;
    s.moved = block;
    s.mark = (uint8_t *)(block + 2 * (size_t)np);
    memset(s.mark, 0, m->quad_count);
    reset_affected(&s, f->tree, quads, nq, block + np);
    uint32_t nreset = s.nmoved;
    for (uint32_t i = 0; i < nreset; i++) reseed(&s, f, s.moved[i]);
    for (uint32_t i = 0; i < nq; i++) offer_changed(&s, f, quads[i]);
    drain(&s);
    finish_repair(f, &s, quads, nq);
    qn__free(&f->alloc, block, bytes);
    return QN_OK;
}

/* Distinct quads changed between the field's version and the mesh's. */
static uint32_t pending_quads(const qn_field *f, uint32_t *out) {
    const qn_mesh *m = f->mesh;
    uint32_t n = 0;
    for (uint64_t v = f->version + 1; v <= m->version; v++) {
        uint32_t q = m->journal[v % QN__JOURNAL];
        bool seen = false;
        for (uint32_t i = 0; i < n && !seen; i++) seen = out[i] == q;
        if (!seen) out[n++] = q;
    }
    return n;
}

qn_status qn_field_update(qn_field *field, qn_error *err) {
    qn__error_clear(err);
    if (!field) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL field");
    const qn_mesh *m = field->mesh;
    if (field->version == m->version) return QN_OK;
    qn_status st;
    /* An exact instance is rebuilt; so is one that changes kind. */
    if (field->tree && !field->spm && !(field->exact_ok && uniform_costs(field)) &&
        m->version - field->version <= QN__JOURNAL) {
        uint32_t quads[QN__JOURNAL];
        uint32_t nq = pending_quads(field, quads);
        st = repair(field, quads, nq, err);
    } else {
        st = build(field, err);
    }
    if (st == QN_OK) field->version = m->version;
    return st;
}

bool qn_field_is_current(const qn_field *field) {
    return field && field->version == field->mesh->version;
}

/* ---- goals ------------------------------------------------------------------ */

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
    if (f->goal_count > 1) qsort(f->goals, f->goal_count, sizeof(qn__goal), cmp_goal);
    return QN_OK;
}

/* ---- create / destroy -------------------------------------------------------- */

static size_t tree_bytes(uint32_t portals) {
    return (size_t)portals *
           (sizeof(qn_vec2) + sizeof(qn__hent) + sizeof(float) + 4 * sizeof(uint32_t) + 1);
}

static void tree_free(qn_field *f) {
    if (!f->tree) return;
    qn__free(&f->alloc, f->tree->x, tree_bytes(f->mesh->portal_count));
    qn__free(&f->alloc, f->tree, sizeof *f->tree);
}

static qn_status tree_alloc(qn_field *f, qn_error *err) {
    uint32_t np = f->mesh->portal_count;
    f->tree = qn__calloc(&f->alloc, 1, sizeof *f->tree);
    qn_vec2 *x = f->tree ? qn__alloc(&f->alloc, tree_bytes(np)) : NULL;
    if (!x) {
        qn__free(&f->alloc, f->tree, sizeof *f->tree);
        f->tree = NULL;
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (repair state)");
    }
    qn__tree *t = f->tree;
    t->x = x;
    t->heap = (qn__hent *)(x + np);
    t->g = (float *)(t->heap + np);
    t->pred = (uint32_t *)(t->g + np);
    t->child = t->pred + np;
    t->sib = t->child + np;
    t->pos = t->sib + np;
    t->via = (uint8_t *)(t->pos + np);
    return QN_OK;
}

void qn_field_destroy(qn_field *field) {
    if (!field) return;
    qn_allocator a = field->alloc;
    if (!field->tree) qn__free(&a, field->pg, (size_t)field->mesh->portal_count * sizeof(float));
    field->pg = NULL;
    tree_free(field);
    qn__spm_free(&a, field->spm, field->mesh->quad_count);
    qn__free(&a, field->slots, (size_t)field->mesh->quad_count * sizeof(qn__slot));
    qn__free(&a, field->hops, (size_t)field->mesh->quad_count * sizeof(qn__hop));
    qn__free(&a, field->goals, (size_t)field->goal_count * sizeof(qn__goal));
    qn__free(&a, field->seed_g, (size_t)field->goal_count * sizeof(float));
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
    if (opts && opts->lookahead > QN_MAX_LOOKAHEAD)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "lookahead %u is above %u",
                        opts->lookahead, QN_MAX_LOOKAHEAD);
    return QN_OK;
}

qn_status qn_field_create(const qn_mesh *mesh, const qn_vec2 *goals, uint32_t goal_count,
                          const qn_field_opts *opts, const qn_allocator *alloc, qn_field **out,
                          qn_error *err) {
    return qn__field_create_seeded(mesh, goals, NULL, goal_count, opts, alloc, out, err);
}

qn_status qn__field_create_seeded(const qn_mesh *mesh, const qn_vec2 *goals, const float *g0,
                                  uint32_t goal_count, const qn_field_opts *opts,
                                  const qn_allocator *alloc, qn_field **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    qn_status st = check_args(mesh, goals, goal_count, opts, out, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    qn_field *f = qn__calloc(&a, 1, sizeof *f);
    if (!f) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (field)");
    f->alloc = a;
    f->mesh = mesh;
    f->geo = qn__mesh_segments(mesh);
    f->radius = opts ? opts->radius : 0.0f;
    f->lookahead = opts && opts->lookahead ? opts->lookahead : QN_DEFAULT_LOOKAHEAD;
    /* Repair reproduces a rebuild exactly only for the plain graph model: the
    ** nearest-point model depends on the order portals are settled in. */
    f->midpoint = opts && (opts->midpoint_costs || opts->repairable);
    /* Exact unless the caller asked for the discrete model or sampler. */
    f->exact_ok = !(opts && (opts->discrete || opts->midpoint_costs || opts->lookahead));
    f->goal_count = goal_count;
    f->version = mesh->version;
    f->goals = qn__alloc(&a, (size_t)goal_count * sizeof(qn__goal));
    if (!f->goals || !f->geo) st = qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (field)");
    if (st == QN_OK && g0) {
        f->seed_g = qn__alloc(&a, (size_t)goal_count * sizeof(float));
        if (f->seed_g) memcpy(f->seed_g, g0, (size_t)goal_count * sizeof(float));
        else st = qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (field)");
    }
    if (st == QN_OK) st = place_goals(f, goals, err);
    if (st == QN_OK && opts && opts->repairable && !(f->exact_ok && uniform_costs(f)))
        st = tree_alloc(f, err);
    if (st == QN_OK && f->tree) f->pg = f->tree->g;
    if (st == QN_OK) st = build(f, err);
    if (st != QN_OK) {
        qn_field_destroy(f);
        return st;
    }
    f->bytes = sizeof *f + (size_t)goal_count * (sizeof(qn__goal) + (g0 ? sizeof(float) : 0)) +
               (f->tree ? sizeof *f->tree + tree_bytes(mesh->portal_count) : 0);
    *out = f;
    return QN_OK;
}

/* ---- queries ------------------------------------------------------------------- */

const qn_mesh *qn_field_mesh(const qn_field *field) { return field ? field->mesh : NULL; }
size_t qn_field_bytes(const qn_field *field) {
    if (!field) return 0;
    size_t pg = field->pg && !field->tree ? (size_t)field->mesh->portal_count * sizeof(float) : 0;
    size_t slots = field->slots ? (size_t)field->mesh->quad_count * sizeof(qn__slot) : 0;
    const qn__spm_exits *x = field->spm ? atomic_load(&field->spm->exits) : NULL;
    return field->bytes + pg + slots + (field->spm ? field->spm->bytes : 0) + (x ? x->bytes : 0) +
           (field->hops ? (size_t)field->mesh->quad_count * sizeof(qn__hop) : 0);
}

float qn_field_quad_cost(const qn_field *field, uint32_t quad) {
    if (!field || quad >= field->mesh->quad_count) return INFINITY;
    /* An exact map holds distances: times the quads' common cost. */
    if (field->spm) return qn__spm_quad_cost(field, quad) * qn__quad_cost(field->mesh, quad);
    return field->slots[quad].cost;
}

uint32_t qn_field_quad_exit(const qn_field *field, uint32_t quad) {
    if (!field || quad >= field->mesh->quad_count) return QN_NONE;
    if (field->spm) return qn__spm_quad_exit(field, quad);
    uint32_t e = field->slots[quad].exit;
    return (e & QN__GOAL_BIT) ? QN_NONE : e;
}

qn_status qn_field_exits(const qn_field *field, qn_error *err) {
    qn__error_clear(err);
    if (!field) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL field");
    if (!field->spm || field->spm->no_exits || qn__spm_exits_get(field)) return QN_OK;
    return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quad exits)");
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

static bool reached_open(const void *ctx, uint32_t q) {
    const qn_field *f = ctx;
    return !f->mesh->blocked[q] && qn__field_reaches(f, q);
}

uint32_t qn__field_quad_of(const qn_field *f, uint32_t q, qn_vec2 p) {
    const qn_mesh *m = f->mesh;
    if (q == QN_NONE) return q;
    if (m->blocked[q])
        for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
            uint32_t r = qn__portal_other(m, m->qp_list[k], q);
            if (!m->blocked[r] && qn__quad_contains(m, r, p)) {
                q = r;
                break;
            }
        }
    if (m->blocked[q] || qn__field_reaches(f, q)) return q;
    uint32_t r = qn__locate_other(m, p, q, reached_open, f);
    return r != QN_NONE ? r : q;
}

float qn_field_cost_at(const qn_field *field, qn_vec2 p, uint32_t hint) {
    if (!field || !qn__finite2(p)) return INFINITY;
    const qn_mesh *m = field->mesh;
    uint32_t q = qn__field_quad_of(field, qn__locate(m, p, hint), p);
    if (q == QN_NONE || m->blocked[q]) return INFINITY;
    float exact;
    if (field->spm) { /* INFINITY where no entry is; a distance, times the common cost */
        if (!qn__spm_root(field, q, p, &exact, NULL, NULL))
            qn__spm_root_loose(field, q, p, &exact, NULL, NULL);
        return exact * qn__quad_cost(m, q);
    }
    qn__slot s = field->slots[q];
    if (s.exit == QN_NONE) return INFINITY;
    if (s.exit & QN__GOAL_BIT) {
        const qn__goal *g = qn__nearest_goal(field, s.exit & ~QN__GOAL_BIT, p);
        return qn__quad_cost(m, q) * qn__len(qn__sub(g->at, p));
    }
    float best = INFINITY;
    for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
        uint32_t e = m->qp_list[k];
        float ge = field->pg[e];
        if (!(ge < best)) continue;
        const qn__portal pt_at = qn__portal_at(m, e), *pt = &pt_at;
        float r = field->radius < 0.5f * pt->width ? field->radius : 0.5f * pt->width;
        qn_vec2 u = qn__portal_dir(pt);
        float t = qn__dot(qn__sub(p, pt->p0), u);
        t = t < r ? r : (t > pt->width - r ? pt->width - r : t);
        float c = ge + qn__quad_cost(m, q) * qn__len(qn__sub(qn__add(pt->p0, qn__scale(u, t)), p));
        best = c < best ? c : best;
    }
    return best;
}

static bool keep_reachable(const void *ctx, uint32_t q) {
    const qn_field *f = ctx;
    return !f->mesh->blocked[q] && qn__field_reaches(f, q);
}

/* Just inside quad q from its boundary point `at`, toward q's centre. A
** quad accepted as convex within the mesh's tolerance can be a sliver whose
** edge planes leave little room near `at` (a long quad with a corner bent
** the wrong way by less than the tolerance): then farther toward the
** centre, until the quad holds the point. */
static qn_vec2 nudge_inside(const qn_mesh *m, uint32_t q, qn_vec2 at) {
    qn_vec2 k_at[4];
    const qn_vec2 *k = qn__corners(m, q, k_at);
    qn_vec2 c = qn__scale(qn__add(qn__add(k[0], k[1]), qn__add(k[2], k[3])), 0.25f);
    /* Toward the centre, then (a quad whose dent is within a tolerance that
    ** a far-flung level makes large, so that its edge planes hold little
    ** of it) toward each corner, and the corners themselves. */
    for (int t = -1; t < 4; t++) {
        qn_vec2 aim = t < 0 ? c : k[t], to = qn__sub(aim, at);
        float len = qn__len(to), nudge = 16.0f * m->eps + 1e-3f * len;
        if (t < 0 && !(len > nudge) && qn__quad_contains(m, q, c)) return c;
        const float part[4] = {len > nudge ? nudge / len : 1.0f, 0.25f, 0.5f, 1.0f};
        for (int i = 0; i < 4; i++) {
            qn_vec2 x = qn__add(at, qn__scale(to, part[i]));
            if (qn__quad_contains(m, q, x)) return x;
        }
    }
    return c;
}

/* From inside blocked quad q: the nearest point of a portal into a quad that
** can reach the goal, kept off the portal's ends by the agent radius. The
** straight line there stays in q (it is convex); a unit standing on that
** point samples as being in the open quad (see sample.c). */
static uint32_t out_through_portals(const qn_field *f, uint32_t q, qn_vec2 p, qn_vec2 *out) {
    const qn_mesh *m = f->mesh;
    uint32_t best = QN_NONE;
    float best_d = INFINITY;
    for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
        uint32_t e = m->qp_list[k], r = qn__portal_other(m, e, q);
        if (!keep_reachable(f, r)) continue;
        const qn__portal pt_at = qn__portal_at(m, e), *pt = &pt_at;
        float inset = f->radius > 16.0f * m->eps ? f->radius : 16.0f * m->eps;
        inset = inset < 0.5f * pt->width ? inset : 0.5f * pt->width;
        qn_vec2 u = qn__portal_dir(pt);
        float s = qn__dot(qn__sub(p, pt->p0), u);
        s = s < inset ? inset : (s > pt->width - inset ? pt->width - inset : s);
        qn_vec2 x = qn__add(pt->p0, qn__scale(u, s));
        float d = qn__len(qn__sub(x, p));
        if (d < best_d) best_d = d, best = r, *out = x;
    }
    return best;
}

qn_status qn_field_way_out(const qn_field *field, qn_vec2 p, uint32_t *quad, qn_vec2 *point) {
    if (quad) *quad = QN_NONE;
    if (!field || !quad || !point || !qn__finite2(p)) return QN_E_INVALID_ARG;
    const qn_mesh *m = field->mesh;
    uint32_t q = qn__locate(m, p, QN_NONE);
    if (q != QN_NONE && m->blocked[q]) {
        *quad = out_through_portals(field, q, p, point);
        if (*quad != QN_NONE) return QN_OK;
    }
    qn_vec2 at = p;
    *quad = qn__nearest(m, p, keep_reachable, field, &at);
    if (*quad == QN_NONE) return QN_E_NOT_FOUND;
    *point = nudge_inside(m, *quad, at);
    return QN_OK;
}
