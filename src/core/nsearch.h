/*
** nsearch.h: the library's one node search for hierarchical instances, a
** Dijkstra over border nodes that stops and resumes. It is aimed: keys are
** a node's cost so far plus a lower bound on its distance to the sector
** being asked for (A*), and each new sector re-aims the open nodes (their
** keys redone, the heap rebuilt) before the search goes on. Grid tiles
** (src/grid/grid_tiles.c) and hierarchical quad instances (src/field/hier.c)
** use it; each walks its own edges and offers the nodes they reach.
**
** Why resuming under a new aim stays exact: the settled nodes have their
** least costs and have offered their neighbours, so the open nodes carry
** the least cost through a settled node. With any consistent bound, the
** open node of least key then has its least cost too (the node where a
** cheaper path to it leaves the settled set would have a smaller key).
** Both users' bounds are distances no path can undercut, hence consistent.
**
** One thread at a time: the search carries a lock, and users run each
** settling step through qn__nsearch_locked. Header-only so the offer loop
** inlines.
*/
#ifndef QN_CORE_NSEARCH_H
#define QN_CORE_NSEARCH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/heap.h"

#ifndef QN_NO_THREADS
#include <pthread.h>
#endif

#define QN__NS_SETTLED (UINT32_MAX - 1u)
#define QN__NS_NONE UINT32_MAX

typedef struct qn__nsearch {
    qn__heap q;
    float *d;      /* per node: least cost so far (INFINITY: not reached) */
    uint32_t *pos; /* per node: heap index while open, QN__NS_NONE, QN__NS_SETTLED */
    uint32_t aim;  /* the sector the keys are for */
    uint32_t settled; /* nodes settled so far */
#ifndef QN_NO_THREADS
    pthread_mutex_t lock;
    bool has_lock; /* the lock was made (and must be destroyed) */
#endif
} qn__nsearch;

/* Makes the search's lock (once, before any qn__nsearch_locked); false
** when the system has none to give. */
static inline bool qn__nsearch_lock_init(qn__nsearch *s) {
#ifndef QN_NO_THREADS
    s->has_lock = pthread_mutex_init(&s->lock, NULL) == 0;
    return s->has_lock;
#else
    (void)s;
    return true;
#endif
}

static inline void qn__nsearch_lock_free(qn__nsearch *s) {
#ifndef QN_NO_THREADS
    if (s->has_lock) pthread_mutex_destroy(&s->lock);
    s->has_lock = false;
#else
    (void)s;
#endif
}

/* Runs step(ctx, sector) holding the search's lock, and returns true;
** without `wait`, only when no other thread holds the lock (false, and
** step not run, when one does). */
static inline bool qn__nsearch_locked(qn__nsearch *s, void (*step)(void *, uint32_t), void *ctx,
                                      uint32_t sector, bool wait) {
#ifndef QN_NO_THREADS
    if (wait)
        pthread_mutex_lock(&s->lock);
    else if (pthread_mutex_trylock(&s->lock) != 0)
        return false;
#else
    (void)s, (void)wait;
#endif
    step(ctx, sector);
#ifndef QN_NO_THREADS
    pthread_mutex_unlock(&s->lock);
#endif
    return true;
}

/* A lower bound on the cost from node n to sector `aim`. */
typedef float (*qn__nsearch_bound)(const void *ctx, uint32_t n, uint32_t aim);

/* Starts over on n nodes (arrays of n, the caller's), none reached,
** aimed at `aim`. An open node's key (its cost plus its bound to the aim)
** lives in the heap. */
static inline void qn__nsearch_start(qn__nsearch *s, float *d, uint32_t *pos, qn__hent *heap,
                                     uint32_t n, uint32_t aim) {
    s->q = (qn__heap){heap, 0, pos};
    s->d = d, s->pos = pos, s->aim = aim, s->settled = 0;
    for (uint32_t i = 0; i < n; i++) d[i] = INFINITY, pos[i] = QN__NS_NONE;
}

static inline bool qn__nsearch_settled(const qn__nsearch *s, uint32_t n) {
    return s->pos[n] == QN__NS_SETTLED;
}

/* Offers node n at cost v (bound: its bound to the current aim); true
** when that lowered its cost. */
static inline bool qn__nsearch_offer(qn__nsearch *s, uint32_t n, float v, float bound) {
    if (s->pos[n] == QN__NS_SETTLED || !(v < s->d[n])) return false;
    s->d[n] = v;
    if (s->pos[n] == QN__NS_NONE) qn__heap_push(&s->q, n, v + bound);
    else qn__heap_lowered(&s->q, n, v + bound);
    return true;
}

/* Aims the open nodes at sector `aim`: their keys redone, the heap rebuilt. */
static inline void qn__nsearch_aim(qn__nsearch *s, uint32_t aim, qn__nsearch_bound bound,
                                   const void *ctx) {
    if (s->aim == aim) return;
    s->aim = aim;
    for (uint32_t i = 0; i < s->q.n; i++) {
        uint32_t n = s->q.a[i].id;
        s->q.a[i].key = s->d[n] + bound(ctx, n, aim);
    }
    qn__heap_order(&s->q);
}

/* Takes the open node of least key out and settles it; QN__NS_NONE when
** none is left (every reachable node settled). */
static inline uint32_t qn__nsearch_next(qn__nsearch *s) {
    if (s->q.n == 0) return QN__NS_NONE;
    uint32_t n = qn__heap_pop(&s->q);
    s->pos[n] = QN__NS_SETTLED;
    s->settled++;
    return n;
}

/* qn__nsearch_settled_count's step: copies the count (ctx: a
** qn__nsearch_count). */
typedef struct qn__nsearch_count {
    const qn__nsearch *s;
    uint32_t n;
} qn__nsearch_count;
static inline void qn__nsearch_read_settled(void *ctx, uint32_t unused) {
    (void)unused;
    qn__nsearch_count *c = ctx;
    c->n = c->s->settled;
}

/* The nodes settled so far, read under the search's lock. */
static inline uint32_t qn__nsearch_settled_count(qn__nsearch *s) {
    qn__nsearch_count c = {s, 0};
    (void)qn__nsearch_locked(s, qn__nsearch_read_settled, &c, 0, true);
    return c.n;
}

/* A destination's goal block: the goal's sector and the (up to) eight
** round it on a grid of sectors sw wide, the sectors x0..x1 by y0..y1.
** Both hierarchies give it one field, so that ways near the goal are the
** exact ones rather than ones through a node on a sector's edge. */
typedef struct qn__sblock {
    uint32_t x0, y0, x1, y1;
} qn__sblock;

/* The block round sector g of a grid of sw x sh sectors. */
static inline qn__sblock qn__sblock_around(uint32_t g, uint32_t sw, uint32_t sh) {
    uint32_t x = g % sw, y = g / sw;
    return (qn__sblock){x ? x - 1 : 0, y ? y - 1 : 0, x + 1 < sw ? x + 1 : x,
                        y + 1 < sh ? y + 1 : y};
}

static inline bool qn__sblock_has(const qn__sblock *b, uint32_t s, uint32_t sw) {
    uint32_t x = s % sw, y = s / sw;
    return x >= b->x0 && x <= b->x1 && y >= b->y0 && y <= b->y1;
}

/* Does the field of sector s (or with s UINT32_MAX, block b's) cover
** sector t? */
static inline bool qn__sblock_covers(const qn__sblock *b, uint32_t s, uint32_t t, uint32_t sw) {
    return s == UINT32_MAX ? qn__sblock_has(b, t, sw) : t == s;
}

/* The sectors a field covers, into out (at most 9), and how many: sector
** s alone, or with s QN_NONE (UINT32_MAX) block b's, row by row. */
static inline uint32_t qn__sblock_sectors(const qn__sblock *b, uint32_t s, uint32_t sw,
                                          uint32_t out[9]) {
    if (s != UINT32_MAX) return out[0] = s, 1;
    uint32_t n = 0;
    for (uint32_t y = b->y0; y <= b->y1; y++)
        for (uint32_t x = b->x0; x <= b->x1; x++)
            out[n++] = y * sw + x;
    return n;
}

#endif
