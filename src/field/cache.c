/*
** cache.c: the destination cache. Fields keyed by (goal point, radius) in an
** open-addressing hash table, kept in a doubly linked recency list (most
** recent at the head), reference counted. Eviction takes unheld fields from
** the tail until the new field fits the budget.
*/
#include "internal.h"

typedef struct entry {
    qn_vec2 goal;
    float radius;
    qn_field *field;
    uint32_t refs;
    uint32_t prev, next; /* recency list; QN_NONE at the ends */
    bool used;
    bool tomb; /* evicted: keeps probe chains intact */
} entry;

struct qn_cache {
    qn_allocator alloc;
    const qn_mesh *mesh;
    qn_cache_opts opts;
    entry *entries; /* slots of the hash table, cap of them */
    uint32_t cap;   /* a power of two */
    uint32_t count, tombs;
    uint32_t head, tail;
    qn_cache_stats stats;
};

static uint32_t float_bits(float f) {
    uint32_t u;
    f = f == 0.0f ? 0.0f : f; /* -0 and +0 are one key */
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint32_t hash_key(qn_vec2 g, float r) {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    uint32_t parts[3] = {float_bits(g.x), float_bits(g.y), float_bits(r)};
    for (int i = 0; i < 3; i++) {
        h ^= parts[i];
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    return (uint32_t)h;
}

static bool is_tomb(const entry *e) { return e->tomb; }

static bool same_key(const entry *e, qn_vec2 g, float r) {
    return e->used && float_bits(e->goal.x) == float_bits(g.x) &&
           float_bits(e->goal.y) == float_bits(g.y) && float_bits(e->radius) == float_bits(r);
}

/* Slot holding the key, or QN_NONE. */
static uint32_t find(const qn_cache *c, qn_vec2 g, float r) {
    uint32_t mask = c->cap - 1;
    for (uint32_t i = hash_key(g, r) & mask, n = 0; n < c->cap; i = (i + 1) & mask, n++) {
        const entry *e = &c->entries[i];
        if (same_key(e, g, r)) return i;
        if (!e->used && !is_tomb(e)) return QN_NONE;
    }
    return QN_NONE;
}

/* ---- recency list -------------------------------------------------------- */

static void unlink_entry(qn_cache *c, uint32_t i) {
    entry *e = &c->entries[i];
    if (e->prev != QN_NONE) c->entries[e->prev].next = e->next;
    else c->head = e->next;
    if (e->next != QN_NONE) c->entries[e->next].prev = e->prev;
    else c->tail = e->prev;
    e->prev = e->next = QN_NONE;
}

static void push_front(qn_cache *c, uint32_t i) {
    entry *e = &c->entries[i];
    e->prev = QN_NONE;
    e->next = c->head;
    if (c->head != QN_NONE) c->entries[c->head].prev = i;
    c->head = i;
    if (c->tail == QN_NONE) c->tail = i;
}

/* ---- table growth ---------------------------------------------------------- */

static uint32_t insert_slot(const qn_cache *c, qn_vec2 g, float r) {
    uint32_t mask = c->cap - 1, i = hash_key(g, r) & mask;
    while (c->entries[i].used) i = (i + 1) & mask;
    return i;
}

/* Rehashes into a table of new_cap slots, keeping the recency order. */
static qn_status rehash(qn_cache *c, uint32_t new_cap) {
    entry *old = c->entries;
    uint32_t old_cap = c->cap, at = c->tail;
    entry *fresh = qn__calloc(&c->alloc, new_cap, sizeof(entry));
    if (!fresh) return QN_E_NOMEM;
    c->entries = fresh;
    c->cap = new_cap;
    c->head = c->tail = QN_NONE;
    c->tombs = 0;
    for (; at != QN_NONE; at = old[at].prev) { /* oldest first, so pushes keep order */
        uint32_t i = insert_slot(c, old[at].goal, old[at].radius);
        c->entries[i] = old[at];
        push_front(c, i);
    }
    qn__free(&c->alloc, old, (size_t)old_cap * sizeof(entry));
    return QN_OK;
}

/* ---- create / destroy ----------------------------------------------------------- */

qn_status qn_cache_create(const qn_mesh *mesh, const qn_cache_opts *opts,
                          const qn_allocator *alloc, qn_cache **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!mesh || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    qn_allocator a = qn__allocator(alloc);
    qn_cache *c = qn__calloc(&a, 1, sizeof *c);
    if (!c) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (cache)");
    c->alloc = a;
    c->mesh = mesh;
    if (opts) c->opts = *opts;
    if (c->opts.budget_bytes == 0) c->opts.budget_bytes = (size_t)64 << 20;
    c->cap = 16;
    c->head = c->tail = QN_NONE;
    c->entries = qn__calloc(&a, c->cap, sizeof(entry));
    if (!c->entries) {
        qn__free(&a, c, sizeof *c);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (cache)");
    }
    c->stats.budget_bytes = c->opts.budget_bytes;
    *out = c;
    return QN_OK;
}

void qn_cache_destroy(qn_cache *cache) {
    if (!cache) return;
    qn_allocator a = cache->alloc;
    for (uint32_t i = 0; i < cache->cap; i++)
        if (cache->entries[i].used) qn_field_destroy(cache->entries[i].field);
    qn__free(&a, cache->entries, (size_t)cache->cap * sizeof(entry));
    qn__free(&a, cache, sizeof *cache);
}

/* ---- eviction and lookup ----------------------------------------------------------- */

static void evict(qn_cache *c, uint32_t i) {
    entry *e = &c->entries[i];
    c->stats.bytes -= qn_field_bytes(e->field);
    qn_field_destroy(e->field);
    unlink_entry(c, i);
    e->used = false;
    e->tomb = true;
    e->field = NULL;
    c->count--;
    c->tombs++;
    c->stats.evictions++;
}

/* Frees unheld fields, oldest first, until `need` more bytes fit; false when
** even that is not enough (nothing is evicted then). */
static bool make_room(qn_cache *c, size_t need) {
    size_t freeable = 0;
    for (uint32_t i = c->tail; i != QN_NONE; i = c->entries[i].prev)
        if (c->entries[i].refs == 0) freeable += qn_field_bytes(c->entries[i].field);
    if (c->stats.bytes - freeable + need > c->opts.budget_bytes) return false;
    for (uint32_t i = c->tail; i != QN_NONE && c->stats.bytes + need > c->opts.budget_bytes;) {
        uint32_t prev = c->entries[i].prev;
        if (c->entries[i].refs == 0) evict(c, i);
        i = prev;
    }
    return true;
}

static qn_status hit(qn_cache *c, uint32_t i, const qn_field **out, qn_error *err) {
    entry *e = &c->entries[i];
    if (!qn_field_is_current(e->field)) {
        qn_status st = qn_field_update(e->field, err);
        if (st != QN_OK) return st;
        c->stats.updates++;
    }
    c->stats.hits++;
    if (e->refs++ == 0) c->stats.held++;
    unlink_entry(c, i);
    push_front(c, i);
    *out = e->field;
    return QN_OK;
}

static qn_status miss(qn_cache *c, qn_vec2 goal, float radius, const qn_field **out,
                      qn_error *err) {
    if ((c->count + c->tombs + 1) * 4 > c->cap * 3 &&
        rehash(c, (c->count + 1) * 4 > c->cap * 2 ? c->cap * 2 : c->cap) != QN_OK)
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (cache table)");
    qn_field_opts fo = {.radius = radius, .repairable = c->opts.repairable};
    qn_field *f = NULL;
    qn_status st = qn_field_create(c->mesh, &goal, 1, &fo, &c->alloc, &f, err);
    if (st != QN_OK) return st;
    if (!make_room(c, qn_field_bytes(f))) {
        size_t need = qn_field_bytes(f);
        qn_field_destroy(f);
        return qn__fail(err, QN_E_LIMIT, QN_NONE,
                        "a field of %zu bytes does not fit the budget of %zu bytes "
                        "(%zu held)",
                        need, c->opts.budget_bytes, c->stats.bytes);
    }
    uint32_t i = insert_slot(c, goal, radius);
    entry *e = &c->entries[i];
    if (is_tomb(e)) c->tombs--;
    entry fresh = {goal, radius, f, 1, QN_NONE, QN_NONE, true, false};
    *e = fresh;
    push_front(c, i);
    c->count++;
    c->stats.misses++;
    c->stats.held++;
    c->stats.bytes += qn_field_bytes(f);
    *out = f;
    return QN_OK;
}

qn_status qn_cache_acquire(qn_cache *cache, qn_vec2 goal, float radius, const qn_field **out,
                           qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!cache || !out || !qn__finite2(goal) || !isfinite(radius) || radius < 0.0f)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "bad cache request");
    uint32_t i = find(cache, goal, radius);
    return i != QN_NONE ? hit(cache, i, out, err) : miss(cache, goal, radius, out, err);
}

void qn_cache_release(qn_cache *cache, const qn_field *field) {
    if (!cache || !field || field->goal_count != 1) return;
    uint32_t i = find(cache, field->goals[0].at, field->radius);
    if (i == QN_NONE || cache->entries[i].field != field) return; /* not ours */
    entry *e = &cache->entries[i];
    if (e->refs > 0 && --e->refs == 0) cache->stats.held--;
}

qn_status qn_cache_update(qn_cache *cache, qn_error *err) {
    qn__error_clear(err);
    if (!cache) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL cache");
    for (uint32_t i = 0; i < cache->cap; i++) {
        entry *e = &cache->entries[i];
        if (!e->used || qn_field_is_current(e->field)) continue;
        qn_status st = qn_field_update(e->field, err);
        if (st != QN_OK) return st;
        cache->stats.updates++;
    }
    return QN_OK;
}

void qn_cache_get_stats(const qn_cache *cache, qn_cache_stats *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!cache) return;
    *out = cache->stats;
    out->entries = cache->count;
}
