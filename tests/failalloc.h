/*
** failalloc.h: a counting allocator for out-of-memory tests. It fails the
** allocation numbered `fail_at` (0-based; UINT64_MAX never fails) and every
** later one, and tracks live bytes so a test can assert that nothing leaked
** after a failure. Its counters are atomic: the library calls an allocator
** from several threads at once where it works on threads (hier and tile
** builds on the built-in runner, lazy builds under concurrent sampling).
*/
#ifndef QN_TEST_FAILALLOC_H
#define QN_TEST_FAILALLOC_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "quadnav.h"

typedef struct failalloc {
    _Atomic uint64_t calls;    /* allocations (and growing reallocs) seen */
    uint64_t fail_at;          /* index of the first call to fail */
    _Atomic int64_t live;      /* bytes currently allocated */
    _Atomic uint64_t failures; /* calls refused */
} failalloc;

static void *failalloc_fn(void *ud, void *ptr, size_t old_size, size_t new_size) {
    failalloc *fa = ud;
    if (new_size == 0) {
        if (ptr) atomic_fetch_sub(&fa->live, (int64_t)old_size);
        free(ptr);
        return NULL;
    }
    uint64_t n = atomic_fetch_add(&fa->calls, 1);
    if (n >= fa->fail_at) {
        atomic_fetch_add(&fa->failures, 1);
        return NULL;
    }
    void *p = realloc(ptr, new_size);
    if (p) atomic_fetch_add(&fa->live, (int64_t)new_size - (int64_t)(ptr ? old_size : 0));
    return p;
}

static inline qn_allocator failalloc_init(failalloc *fa, uint64_t fail_at) {
    atomic_init(&fa->calls, 0);
    fa->fail_at = fail_at;
    atomic_init(&fa->live, 0);
    atomic_init(&fa->failures, 0);
    qn_allocator a = {failalloc_fn, fa};
    return a;
}

#endif
