/*
** heap.h: the library's one priority queue, a 4-ary min-heap of ids ordered
** by a key array the caller owns (key[id]). With a position array (pos[id]:
** where id sits while queued) it also takes decrease-key. Used by the
** discrete field search (field.c), the interval engine (interval.c) and
** the cost search of individual paths (path.c).
**
** 4-ary: shallower than a binary heap, and a node's children share a cache
** line. The caller sizes `a` (and pos, key) for every id it may queue;
** nothing here allocates. Header-only so the hot loops inline it.
*/
#ifndef QN_CORE_HEAP_H
#define QN_CORE_HEAP_H

#include <stdint.h>

typedef struct qn__heap {
    uint32_t *a;      /* ids; a[0] has the least key */
    uint32_t n;       /* ids queued */
    const float *key; /* key[id] */
    uint32_t *pos;    /* NULL, or pos[id] = index of id in a while queued */
} qn__heap;

static inline void qn__heap_place(qn__heap *h, uint32_t i, uint32_t id) {
    h->a[i] = id;
    if (h->pos) h->pos[id] = i;
}

/* Moves the id at index i up to where its key belongs. */
static inline void qn__heap_up(qn__heap *h, uint32_t i) {
    uint32_t v = h->a[i];
    float kv = h->key[v];
    while (i > 0) {
        uint32_t parent = (i - 1) / 4, pv = h->a[parent];
        if (h->key[pv] <= kv) break;
        qn__heap_place(h, i, pv);
        i = parent;
    }
    qn__heap_place(h, i, v);
}

/* Moves the id at index i down to where its key belongs. */
static inline void qn__heap_down(qn__heap *h, uint32_t i) {
    uint32_t v = h->a[i];
    float kv = h->key[v];
    for (;;) {
        uint32_t first = 4 * i + 1;
        if (first >= h->n) break;
        uint32_t last = first + 4 < h->n ? first + 4 : h->n, c = first;
        float kc = h->key[h->a[first]];
        for (uint32_t k = first + 1; k < last; k++) {
            float kk = h->key[h->a[k]];
            if (kk < kc) kc = kk, c = k;
        }
        if (kc >= kv) break;
        qn__heap_place(h, i, h->a[c]);
        i = c;
    }
    qn__heap_place(h, i, v);
}

/* Queues id (room for it is the caller's). */
static inline void qn__heap_push(qn__heap *h, uint32_t id) {
    h->a[h->n] = id;
    qn__heap_up(h, h->n++);
}

/* Takes the id of least key out (the heap must not be empty). With pos,
** the caller marks it as it likes afterwards. */
static inline uint32_t qn__heap_pop(qn__heap *h) {
    uint32_t top = h->a[0];
    if (--h->n > 0) {
        h->a[0] = h->a[h->n];
        qn__heap_down(h, 0);
    }
    return top;
}

/* key[id] was lowered while id is queued (needs pos). */
static inline void qn__heap_lowered(qn__heap *h, uint32_t id) { qn__heap_up(h, h->pos[id]); }

#endif
