/*
** names.c: a table of optional, unique names for numbered elements (the
** quad "id"s of a level), looked up by binary search. One pool holds the
** strings; the sorted entries point into it.
*/
#include "internal.h"

#include <stdlib.h> /* qsort */

static int cmp_entry(const void *a, const void *b) {
    const qn__name_entry *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    if (d) return d;
    return (x->index > y->index) - (x->index < y->index);
}

qn_status qn__names_init(qn__names *t, const qn_allocator *a, uint32_t elements, uint32_t named,
                         size_t pool_bytes) {
    memset(t, 0, sizeof *t);
    if (named == 0) return QN_OK;
    t->pool = qn__alloc(a, pool_bytes);
    t->entries = qn__calloc(a, named, sizeof *t->entries);
    t->offset = qn__calloc(a, elements, sizeof *t->offset);
    t->pool_bytes = pool_bytes;
    t->cap = named;
    t->elements = elements;
    if (!t->pool || !t->entries || !t->offset) return QN_E_NOMEM;
    for (uint32_t i = 0; i < elements; i++)
        t->offset[i] = QN_NONE;
    return QN_OK;
}

void qn__names_add(qn__names *t, uint32_t index, const char *name) {
    size_t n = strlen(name) + 1;
    char *s = t->pool + t->used;
    memcpy(s, name, n);
    t->offset[index] = (uint32_t)t->used;
    t->used += n;
    t->entries[t->count].name = s;
    t->entries[t->count].index = index;
    t->count++;
}

/* Sorts the entries. On a duplicate sets *first and *later to the two
** element indices (the earliest second use in index order) and returns
** QN_E_DUPLICATE_NAME; else QN_OK. */
qn_status qn__names_finish(qn__names *t, uint32_t *first, uint32_t *later) {
    *first = *later = QN_NONE;
    if (t->count > 1) qsort(t->entries, t->count, sizeof *t->entries, cmp_entry);
    for (uint32_t i = 1; i < t->count; i++) {
        const qn__name_entry *p = &t->entries[i - 1], *e = &t->entries[i];
        if (e->index < *later && strcmp(p->name, e->name) == 0) {
            *later = e->index;
            *first = p->index;
        }
    }
    return *later == QN_NONE ? QN_OK : QN_E_DUPLICATE_NAME;
}

uint32_t qn__names_find(const qn__names *t, const char *name) {
    uint32_t lo = 0, hi = t->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int d = strcmp(t->entries[mid].name, name);
        if (d == 0) return t->entries[mid].index;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return QN_NONE;
}

const char *qn__names_get(const qn__names *t, uint32_t index) {
    if (index >= t->elements || t->offset[index] == QN_NONE) return NULL;
    return t->pool + t->offset[index];
}

void qn__names_free(qn__names *t, const qn_allocator *a) {
    qn__free(a, t->pool, t->pool_bytes);
    qn__free(a, t->entries, (size_t)t->cap * sizeof *t->entries);
    qn__free(a, t->offset, (size_t)t->elements * sizeof *t->offset);
    memset(t, 0, sizeof *t);
}
