/*
** shapes.h: generated levels of shapes that once made portal pairing slow
** (issue "Hardening 2"), as level JSON text. Shared by `quadnav bench`
** (load_ms_* keys) and the tests, which check their portal counts.
**
**   band     n thin parallelograms side by side along a diagonal, each
**            about 1,400 units long: every bounding box overlaps every other.
**   kites    n kites round one vertex, a full circle: every quad touches it.
**   long     one long quad with n unit squares along its top edge: n
**            T-junctions on one edge.
**   squares  the baseline: a square grid of unit squares.
*/
#ifndef QN_TOOLS_SHAPES_H
#define QN_TOOLS_SHAPES_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct qn_shape_text {
    char *json; /* malloc'd, NUL-terminated; NULL when out of memory */
    size_t len, cap;
    uint32_t quads, portals; /* what the level must load as */
} qn_shape_text;

static inline void qn_shape_put(qn_shape_text *t, const char *fmt, ...) {
    if (!t->json && t->cap) return; /* an earlier allocation failed */
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->json ? t->json + t->len : NULL, t->json ? t->cap - t->len : 0, fmt,
                          ap);
        va_end(ap);
        if (n < 0) return;
        if (t->json && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t ncap = t->cap ? t->cap * 2 : 1 << 16;
        while (ncap < t->len + (size_t)n + 1) ncap *= 2;
        char *p = realloc(t->json, ncap);
        if (!p) {
            free(t->json);
            t->json = NULL;
            t->cap = 1;
            return;
        }
        t->json = p;
        t->cap = ncap;
    }
}

static inline void qn_shape_vertex(qn_shape_text *t, uint32_t i, double x, double y) {
    qn_shape_put(t, "%s[%.9g, %.9g]", i ? ", " : "", (double)(float)x, (double)(float)y);
}

static inline void qn_shape_quad(qn_shape_text *t, uint32_t i, uint32_t a, uint32_t b, uint32_t c,
                                 uint32_t d) {
    qn_shape_put(t, "%s{\"v\": [%u, %u, %u, %u]}", i ? ",\n" : "", a, b, c, d);
}

/* n slices: p_i = (i, i), q_i = p_i + (-1000, 1000); quad i = p_i p_i+1 q_i+1 q_i. */
static inline qn_shape_text qn_shape_band(uint32_t n) {
    qn_shape_text t = {NULL, 0, 0, n, n - 1};
    qn_shape_put(&t, "{\"format\": 1, \"name\": \"diagonal band\",\n\"vertices\": [");
    for (uint32_t i = 0; i <= n; i++) {
        qn_shape_vertex(&t, 2 * i, i, i);
        qn_shape_vertex(&t, 2 * i + 1, (double)i - 1000.0, (double)i + 1000.0);
    }
    qn_shape_put(&t, "],\n\"quads\": [");
    for (uint32_t i = 0; i < n; i++) qn_shape_quad(&t, i, 2 * i, 2 * i + 2, 2 * i + 3, 2 * i + 1);
    qn_shape_put(&t, "]}\n");
    return t;
}

/* Centre 0; ring vertex 1 + k at radius 100, tip 1 + n + k at radius 120. */
static inline qn_shape_text qn_shape_kites(uint32_t n) {
    qn_shape_text t = {NULL, 0, 0, n, n};
    const double tau = 6.283185307179586;
    qn_shape_put(&t, "{\"format\": 1, \"name\": \"kites round a vertex\",\n\"vertices\": [");
    qn_shape_vertex(&t, 0, 0, 0);
    for (uint32_t k = 0; k < n; k++) {
        double a = tau * k / n;
        qn_shape_vertex(&t, 1 + k, 100.0 * cos(a), 100.0 * sin(a));
    }
    for (uint32_t k = 0; k < n; k++) {
        double a = tau * (k + 0.5) / n;
        qn_shape_vertex(&t, 1 + n + k, 120.0 * cos(a), 120.0 * sin(a));
    }
    qn_shape_put(&t, "],\n\"quads\": [");
    for (uint32_t k = 0; k < n; k++) qn_shape_quad(&t, k, 0, 1 + k, 1 + n + k, 1 + (k + 1) % n);
    qn_shape_put(&t, "]}\n");
    return t;
}

/* Bottom row b_i = (i, 0) at 2i, top row (i, 1) at 2i + 1; the long quad
** (0,-1) (n,-1) b_n b_0 is the last one. */
static inline qn_shape_text qn_shape_long(uint32_t n) {
    qn_shape_text t = {NULL, 0, 0, n + 1, 2 * n - 1};
    qn_shape_put(&t, "{\"format\": 1, \"name\": \"long edge\",\n\"vertices\": [");
    for (uint32_t i = 0; i <= n; i++) {
        qn_shape_vertex(&t, 2 * i, i, 0);
        qn_shape_vertex(&t, 2 * i + 1, i, 1);
    }
    qn_shape_vertex(&t, 2 * n + 2, 0, -1);
    qn_shape_vertex(&t, 2 * n + 3, n, -1);
    qn_shape_put(&t, "],\n\"quads\": [");
    for (uint32_t i = 0; i < n; i++) qn_shape_quad(&t, i, 2 * i, 2 * i + 2, 2 * i + 3, 2 * i + 1);
    qn_shape_quad(&t, n, 2 * n + 2, 2 * n + 3, 2 * n, 0);
    qn_shape_put(&t, "]}\n");
    return t;
}

/* Baseline: a side x side grid of unit squares sharing whole edges. */
static inline qn_shape_text qn_shape_squares(uint32_t side) {
    qn_shape_text t = {NULL, 0, 0, side * side, 2 * side * (side - 1)};
    qn_shape_put(&t, "{\"format\": 1, \"name\": \"squares\",\n\"quads\": [");
    for (uint32_t i = 0; i < side * side; i++)
        qn_shape_put(&t, "%s{\"rect\": [%u, %u, %u, %u]}", i ? ",\n" : "", i % side, i / side,
                     i % side + 1, i / side + 1);
    qn_shape_put(&t, "]}\n");
    return t;
}

static inline void qn_shape_free(qn_shape_text *t) {
    free(t->json);
    t->json = NULL;
}

#endif /* QN_TOOLS_SHAPES_H */
