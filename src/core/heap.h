/*
** heap.h: the library's one priority queue, a 4-ary min-heap of ids, each
** kept beside its key. With a position array (pos[id]: where id sits while
** queued) it also takes decrease-key. Used by the discrete field search
** (field.c), the interval engine (interval.c), the cost search of
** individual paths (path.c), the sector searches of hierarchical instances
** (hier.c, grid_tiles.c) and their node search (nsearch.h).
**
** Keys live in the heap's own entries, not in an array the caller indexes
** by id: a step down compares four children that share a cache line,
** instead of fetching four keys from wherever their ids point. 4-ary:
** shallower than a binary heap. The caller sizes `a` (and pos) for every id
** it may queue; nothing here allocates. Header-only so the hot loops
** inline it.
*/
#ifndef QN_CORE_HEAP_H
#define QN_CORE_HEAP_H

#include <stdint.h>

typedef struct qn__hent {
    float key;
    uint32_t id;
} qn__hent;

typedef struct qn__heap {
    qn__hent *a;   /* a[0] has the least key */
    uint32_t n;    /* ids queued */
    uint32_t *pos; /* NULL, or pos[id] = index of id in a while queued */
} qn__heap;

static inline void qn__heap_place(qn__heap *h, uint32_t i, qn__hent e) {
    h->a[i] = e;
    if (h->pos) h->pos[e.id] = i;
}

/* Moves entry e, at index i, up to where its key belongs. */
static inline void qn__heap_up(qn__heap *h, uint32_t i, qn__hent e) {
    while (i > 0) {
        uint32_t parent = (i - 1) / 4;
        if (h->a[parent].key <= e.key) break;
        qn__heap_place(h, i, h->a[parent]);
        i = parent;
    }
    qn__heap_place(h, i, e);
}

/* Moves the entry at index i down to where its key belongs. */
static inline void qn__heap_down(qn__heap *h, uint32_t i) {
    qn__hent e = h->a[i];
    for (;;) {
        uint32_t first = 4 * i + 1;
        if (first >= h->n) break;
        uint32_t last = first + 4 < h->n ? first + 4 : h->n, c = first;
        float kc = h->a[first].key;
        for (uint32_t k = first + 1; k < last; k++)
            if (h->a[k].key < kc) kc = h->a[k].key, c = k;
        if (kc >= e.key) break;
        qn__heap_place(h, i, h->a[c]);
        i = c;
    }
    qn__heap_place(h, i, e);
}

/* Queues id with key `key` (room for it is the caller's). */
static inline void qn__heap_push(qn__heap *h, uint32_t id, float key) {
    qn__heap_up(h, h->n++, (qn__hent){key, id});
}

/* Takes the id of least key out (the heap must not be empty). With pos,
** the caller marks it as it likes afterwards. */
static inline uint32_t qn__heap_pop(qn__heap *h) {
    uint32_t top = h->a[0].id;
    if (--h->n > 0) {
        h->a[0] = h->a[h->n];
        qn__heap_down(h, 0);
    }
    return top;
}

/* Lowers the key of id, which is queued, to `key` (needs pos). */
static inline void qn__heap_lowered(qn__heap *h, uint32_t id, float key) {
    qn__heap_up(h, h->pos[id], (qn__hent){key, id});
}

/* The key id is queued with (needs pos; id must be queued). */
static inline float qn__heap_key(const qn__heap *h, uint32_t id) { return h->a[h->pos[id]].key; }

/* Restores the heap's order after the caller changed keys in a[0..n). */
static inline void qn__heap_order(qn__heap *h) {
    for (uint32_t i = h->n > 1 ? (h->n - 2) / 4 + 1 : 0; i-- > 0;) qn__heap_down(h, i);
}

#endif
