/*
** failalloc.h: a counting allocator for out-of-memory tests. It fails the
** allocation numbered `fail_at` (0-based; UINT64_MAX never fails) and every
** later one, and tracks live bytes so a test can assert that nothing leaked
** after a failure.
*/
#ifndef QN_TEST_FAILALLOC_H
#define QN_TEST_FAILALLOC_H

#include <stdint.h>
#include <stdlib.h>

#include "quadnav.h"

typedef struct failalloc {
    uint64_t calls;    /* allocations (and growing reallocs) seen */
    uint64_t fail_at;  /* index of the first call to fail */
    int64_t live;      /* bytes currently allocated */
    uint64_t failures; /* calls refused */
} failalloc;

static void *failalloc_fn(void *ud, void *ptr, size_t old_size, size_t new_size) {
    failalloc *fa = ud;
    if (new_size == 0) {
        if (ptr) fa->live -= (int64_t)old_size;
        free(ptr);
        return NULL;
    }
    uint64_t n = fa->calls++;
    if (n >= fa->fail_at) {
        fa->failures++;
        return NULL;
    }
    void *p = realloc(ptr, new_size);
    if (p) fa->live += (int64_t)new_size - (int64_t)(ptr ? old_size : 0);
    return p;
}

static inline qn_allocator failalloc_init(failalloc *fa, uint64_t fail_at) {
    fa->calls = 0;
    fa->fail_at = fail_at;
    fa->live = 0;
    fa->failures = 0;
    qn_allocator a = {failalloc_fn, fa};
    return a;
}

#endif
