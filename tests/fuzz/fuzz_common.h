/*
** fuzz_common.h: shared pieces of the fuzz targets: the entry point's
** prototype, an invariant check that aborts (so the fuzzer records the input
** as a crash), a reader that turns input bytes into values, a hash, and the
** checks every loader's result must pass.
*/
#ifndef QN_FUZZ_COMMON_H
#define QN_FUZZ_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failalloc.h"
#include "internal.h"
#include "quadnav.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with the failed condition and a message: any broken invariant is a
** crash to the fuzzer, which then keeps the input. */
#define FZ_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Input bytes read front to back; past the end every read gives 0, so any
** input, however short, drives a complete run. */
typedef struct fz_bytes {
    const uint8_t *p;
    size_t n, i;
} fz_bytes;

static inline uint8_t fz_u8(fz_bytes *b) { return b->i < b->n ? b->p[b->i++] : 0; }
static inline uint32_t fz_u16(fz_bytes *b) {
    uint32_t lo = fz_u8(b);
    return lo | (uint32_t)fz_u8(b) << 8;
}
static inline uint32_t fz_u32(fz_bytes *b) {
    uint32_t lo = fz_u16(b);
    return lo | fz_u16(b) << 16;
}
static inline bool fz_more(const fz_bytes *b) { return b->i < b->n; }

/* FNV-1a: a seed for the points a target derives from its whole input. */
static inline uint64_t fz_hash(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static inline uint32_t fz_rand(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* Uniform in [lo, hi]. */
static inline float fz_rand_in(uint64_t *s, float lo, float hi) {
    float t = (float)(fz_rand(s) & 0xffffffu) / (float)0xffffffu;
    return lo + (hi - lo) * t;
}

/* What every failing constructor must leave behind: the code in err, a
** NUL-terminated message that starts with the JSON path when there is one. */
static inline void fz_check_error(qn_status st, const qn_error *e) {
    FZ_CHECK(st > QN_OK && st < QN_STATUS_COUNT, "status %d", (int)st);
    FZ_CHECK(e->code == st, "err.code %s, returned %s", qn_status_name(e->code),
             qn_status_name(st));
    FZ_CHECK(memchr(e->message, '\0', sizeof e->message) != NULL, "message not terminated");
    FZ_CHECK(memchr(e->path, '\0', sizeof e->path) != NULL, "path not terminated");
    FZ_CHECK(e->message[0] != '\0', "empty message for %s", qn_status_name(st));
    FZ_CHECK(!e->path[0] || strncmp(e->message, e->path, strlen(e->path)) == 0,
             "message \"%s\" does not start with its path \"%s\"", e->message, e->path);
}

/* The line and column an error names lie within the input. */
static inline void fz_check_position(const uint8_t *data, size_t size, const qn_error *e) {
    uint32_t lines = 1;
    size_t start = 0;
    for (size_t i = 0; i < size; i++)
        if (data[i] == '\n') {
            lines++;
            if (lines == e->line) start = i + 1;
        }
    FZ_CHECK(e->line <= lines, "error on line %u of %u", e->line, lines);
    if (e->line == 0 || e->column == 0) return;
    size_t len = 0;
    while (start + len < size && data[start + len] != '\n')
        len++;
    FZ_CHECK(e->column <= len + 1, "error at line %u column %u, the line has %zu bytes", e->line,
             e->column, len);
}

/* The input with every LF turned into CR LF, or NULL when it already holds
** a CR (then the two spellings could differ on purpose). Free with free(). */
static inline char *fz_crlf(const uint8_t *data, size_t size, size_t *out_size) {
    if (memchr(data, '\r', size)) return NULL;
    char *out = malloc(2 * size + 1);
    FZ_CHECK(out != NULL, "out of memory in the check");
    size_t n = 0;
    for (size_t i = 0; i < size; i++) {
        if (data[i] == '\n') out[n++] = '\r';
        out[n++] = (char)data[i];
    }
    *out_size = n;
    return out;
}

/* A unit direction, or zero. */
static inline void fz_check_dir(qn_status st, qn_vec2 d) {
    FZ_CHECK(isfinite(d.x) && isfinite(d.y), "direction (%g, %g)", (double)d.x, (double)d.y);
    float len = sqrtf(d.x * d.x + d.y * d.y);
    if (st == QN_OK)
        FZ_CHECK(len == 0.0f || fabsf(len - 1.0f) < 1e-3f, "direction length %g", (double)len);
    else
        FZ_CHECK(len == 0.0f, "%s with direction length %g", qn_status_name(st), (double)len);
}

/* The lowest-index quad containing p (with the mesh tolerance), by brute
** force: what qn_mesh_locate must answer without a hint. */
static inline uint32_t fz_brute_locate(const qn_mesh *m, qn_vec2 p) {
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (qn__quad_contains(m, q, p)) return q;
    return QN_NONE;
}

#endif
