/*
** Internal declarations shared by the modules in src/. Not installed.
** qn__ names are internal but non-static; plain names are static helpers.
*/
#ifndef QN_INTERNAL_H
#define QN_INTERNAL_H

#include "quadnav.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- memory (util.c) ------------------------------------------------ */

/* The allocator a handle keeps: a copy of the caller's, or the C library's. */
qn_allocator qn__allocator(const qn_allocator *alloc);
/* Allocates n bytes (n > 0), NULL on failure. */
void *qn__alloc(const qn_allocator *a, size_t n);
/* Allocates count*size zeroed bytes; NULL on failure or overflow. */
void *qn__calloc(const qn_allocator *a, size_t count, size_t size);
/* Grows or shrinks p from old_n to new_n bytes; NULL on failure (p kept). */
void *qn__realloc(const qn_allocator *a, void *p, size_t old_n, size_t new_n);
/* Frees p, which was allocated with n bytes; p may be NULL. */
void qn__free(const qn_allocator *a, void *p, size_t n);
/* Copies a NUL-terminated string with the allocator; NULL on failure. */
char *qn__strdup(const qn_allocator *a, const char *s);

/* ---- errors (util.c) ------------------------------------------------ */

/* Clears err (if not NULL) to QN_OK and returns QN_OK. */
qn_status qn__error_clear(qn_error *err);
/* Fills err (if not NULL) with code, index, and a printf-style message;
** returns code, so callers can write `return qn__fail(err, ...)`. */
qn_status qn__fail(qn_error *err, qn_status code, uint32_t index, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Sets err->path (if err is not NULL). */
void qn__error_path(qn_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Reads a whole file into memory (NUL-terminated for convenience) with the
** allocator. QN_E_IO when it cannot be opened or read, QN_E_LIMIT above
** QN_MAX_FILE_BYTES. *size gets the byte count (without the NUL); free with
** qn__free(a, buf, size + 1). */
qn_status qn__read_file(const char *path, const qn_allocator *a, char **buf, size_t *size,
                        qn_error *err);

/* ---- geometry helpers ------------------------------------------------ */

static inline qn_vec2 qn__v2(float x, float y) {
    qn_vec2 v = {x, y};
    return v;
}
static inline qn_vec2 qn__sub(qn_vec2 a, qn_vec2 b) { return qn__v2(a.x - b.x, a.y - b.y); }
static inline qn_vec2 qn__add(qn_vec2 a, qn_vec2 b) { return qn__v2(a.x + b.x, a.y + b.y); }
static inline qn_vec2 qn__scale(qn_vec2 a, float s) { return qn__v2(a.x * s, a.y * s); }
static inline float qn__dot(qn_vec2 a, qn_vec2 b) { return a.x * b.x + a.y * b.y; }
static inline float qn__cross(qn_vec2 a, qn_vec2 b) { return a.x * b.y - a.y * b.x; }
static inline float qn__len(qn_vec2 a) { return sqrtf(a.x * a.x + a.y * a.y); }
static inline bool qn__finite2(qn_vec2 a) { return isfinite(a.x) && isfinite(a.y); }

#endif
