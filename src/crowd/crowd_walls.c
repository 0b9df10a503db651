/*
** crowd_walls.c: the mesh's walls for the crowd. A wall is a piece of an
** unblocked quad's edge that no portal to another unblocked quad covers;
** it keeps the quad's winding, so the quad's inside is on its left. Walls go
** into a uniform grid of buckets over the mesh bounds; units turn the walls
** near them into half-planes of allowed velocities, and every move is
** checked against the mesh and slides along the wall it would cross.
*/
#include "crowd_internal.h"

#include <stdlib.h>

#define MAX_PIECES 16u /* portals on one quad edge that are subtracted */

/* Parameter interval [t0, t1] of edge a-b covered by portal e, if on it. */
static bool portal_on_edge(const qn_mesh *m, uint32_t e, qn_vec2 a, qn_vec2 b, float *t0,
                           float *t1) {
    const qn__portal p_at = qn__portal_at(m, e), *p = &p_at;
    qn_vec2 ab = qn__sub(b, a);
    float len2 = qn__dot(ab, ab), len = sqrtf(len2), tol = 4.0f * m->eps;
    if (fabsf(qn__cross(ab, qn__sub(p->p0, a))) > tol * len ||
        fabsf(qn__cross(ab, qn__sub(p->p1, a))) > tol * len)
        return false;
    float s0 = qn__dot(qn__sub(p->p0, a), ab) / len2, s1 = qn__dot(qn__sub(p->p1, a), ab) / len2;
    *t0 = s0 < s1 ? s0 : s1;
    *t1 = s0 < s1 ? s1 : s0;
    return *t1 > 0.0f && *t0 < 1.0f;
}

static int cmp_float2(const void *x, const void *y) {
    const float *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Appends a wall, growing the array; false when out of memory. */
static bool push_wall(qn__walls *w, const qn_allocator *al, qn_vec2 a, qn_vec2 b) {
    if (w->count == w->seg_cap) {
        uint32_t nc = w->seg_cap ? 2 * w->seg_cap : 64;
        qn__wall *n = qn__realloc(al, w->seg, w->seg_cap * sizeof *n, nc * sizeof *n);
        if (!n) return false;
        w->seg = n;
        w->seg_cap = nc;
    }
    w->seg[w->count].a = a;
    w->seg[w->count].b = b;
    w->count++;
    return true;
}

/* The walls along edge k of quad q: the edge minus its open portals. */
static bool edge_walls(qn__walls *w, const qn_allocator *al, const qn_mesh *m,
                       uint32_t q, int k) {
    qn_vec2 kc[4];
    const qn_vec2 *c = qn__corners(m, q, kc);
    qn_vec2 a = c[k], b = c[(k + 1) & 3];
    float iv[MAX_PIECES][2];
    uint32_t n = 0;
    for (uint32_t s = m->qp_start[q]; s < m->qp_start[q + 1] && n < MAX_PIECES; s++) {
        uint32_t e = m->qp_list[s];
        if (m->blocked[qn__portal_other(m, e, q)]) continue;
        if (portal_on_edge(m, e, a, b, &iv[n][0], &iv[n][1])) n++;
    }
    qsort(iv, n, sizeof iv[0], cmp_float2);
    float at = 0.0f, len = qn__len(qn__sub(b, a)), min_t = m->eps / (len > 0 ? len : 1.0f);
    qn_vec2 ab = qn__sub(b, a);
    for (uint32_t i = 0; i <= n; i++) {
        float to = i < n ? iv[i][0] : 1.0f;
        if (to - at > min_t &&
            !push_wall(w, al, qn__add(a, qn__scale(ab, at)), qn__add(a, qn__scale(ab, to))))
            return false;
        if (i < n && iv[i][1] > at) at = iv[i][1];
    }
    return true;
}

/* Bucket range covered by box lo..hi, clamped to the grid. */
static void cell_range(const qn__walls *w, qn_vec2 lo, qn_vec2 hi, uint32_t r[4]) {
    float f[4] = {(lo.x - w->origin.x) * w->inv_cell, (lo.y - w->origin.y) * w->inv_cell,
                  (hi.x - w->origin.x) * w->inv_cell, (hi.y - w->origin.y) * w->inv_cell};
    uint32_t lim[4] = {w->w - 1, w->h - 1, w->w - 1, w->h - 1};
    for (int i = 0; i < 4; i++)
        r[i] = f[i] <= 0.0f ? 0 : (f[i] >= (float)lim[i] ? lim[i] : (uint32_t)f[i]);
}

static void wall_box(const qn__wall *s, qn_vec2 *lo, qn_vec2 *hi) {
    *lo = qn__v2(fminf(s->a.x, s->b.x), fminf(s->a.y, s->b.y));
    *hi = qn__v2(fmaxf(s->a.x, s->b.x), fmaxf(s->a.y, s->b.y));
}

/* Counts (fill false) or fills (fill true) the bucket lists. */
static void bucket_pass(qn__walls *w, bool fill) {
    for (uint32_t i = 0; i < w->count; i++) {
        qn_vec2 lo, hi;
        uint32_t r[4];
        wall_box(&w->seg[i], &lo, &hi);
        cell_range(w, lo, hi, r);
        for (uint32_t y = r[1]; y <= r[3]; y++)
            for (uint32_t x = r[0]; x <= r[2]; x++) {
                size_t c = (size_t)y * w->w + x;
                if (fill) w->list[w->start[c + 1]++] = i;
                else w->start[c + 2]++;
            }
    }
}

static bool build_buckets(qn__walls *w, const qn_mesh *m, const qn_allocator *al) {
    qn_rect b = m->bounds;
    float ext = fmaxf(b.max.x - b.min.x, b.max.y - b.min.y);
    float side = ceilf(sqrtf(4.0f * (float)(w->count + 1)));
    side = side > 1024.0f ? 1024.0f : side;
    w->cell = fmaxf(ext / side, 1e-3f);
    w->inv_cell = 1.0f / w->cell;
    w->origin = b.min;
    w->w = (uint32_t)((b.max.x - b.min.x) * w->inv_cell) + 1;
    w->h = (uint32_t)((b.max.y - b.min.y) * w->inv_cell) + 1;
    size_t cells = (size_t)w->w * w->h;
    w->start = qn__calloc(al, cells + 2, sizeof(uint32_t));
    if (!w->start) return false;
    bucket_pass(w, false);
    for (size_t c = 0; c < cells; c++) w->start[c + 2] += w->start[c + 1];
    w->list_len = w->start[cells + 1];
    w->list = qn__alloc(al, (size_t)(w->list_len ? w->list_len : 1) * sizeof(uint32_t));
    if (!w->list) return false;
    bucket_pass(w, true);
    return true;
}

void qn__walls_free(qn__walls *w, const qn_allocator *a) {
    qn__free(a, w->seg, w->seg_cap * sizeof(qn__wall));
    if (w->start) qn__free(a, w->start, ((size_t)w->w * w->h + 2) * sizeof(uint32_t));
    qn__free(a, w->list, (size_t)(w->list_len ? w->list_len : 1) * sizeof(uint32_t));
    memset(w, 0, sizeof *w);
}

qn_status qn__walls_build(qn__walls *w, const qn_mesh *m, const qn_allocator *a) {
    qn__walls_free(w, a);
    for (uint32_t q = 0; q < m->quad_count; q++) {
        if (m->blocked[q]) continue;
        for (int k = 0; k < 4; k++)
            if (!edge_walls(w, a, m, q, k)) return qn__walls_free(w, a), QN_E_NOMEM;
    }
    if (!build_buckets(w, m, a)) return qn__walls_free(w, a), QN_E_NOMEM;
    w->version = m->version;
    return QN_OK;
}

/* ---- queries --------------------------------------------------------- */

static qn_vec2 closest_point(const qn__wall *s, qn_vec2 p) {
    qn_vec2 ab = qn__sub(s->b, s->a);
    float l2 = qn__dot(ab, ab);
    float t = l2 > 0.0f ? qn__dot(qn__sub(p, s->a), ab) / l2 : 0.0f;
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return qn__add(s->a, qn__scale(ab, t));
}

/* Half-plane keeping a unit of radius r at p off wall s (p in front of it):
** it may close in at (gap / tau), and leaves within a step when overlapping. */
static qn__line wall_line(const qn__wall *s, qn_vec2 p, qn_vec2 c, float d, float r, float tau,
                          float dt) {
    qn_vec2 n;
    if (d > 1e-6f) n = qn__scale(qn__sub(p, c), 1.0f / d);
    else {
        qn_vec2 e = qn__sub(s->b, s->a);
        n = qn__scale(qn__v2(-e.y, e.x), 1.0f / qn__len(e));
    }
    float gap = d - r;
    float m = gap >= 0.0f ? -gap / tau : -gap / dt;
    qn__line l = {qn__scale(n, m), qn__v2(n.y, -n.x)};
    return l;
}

uint32_t qn__walls_lines(const qn__walls *w, qn_vec2 p, float r, float range, float tau,
                         float dt, qn__line *out, uint32_t cap) {
    if (!w->count || !cap) return 0;
    uint32_t rg[4], ids[QN_CROWD_MAX_NEIGHBOURS];
    float dist[QN_CROWD_MAX_NEIGHBOURS];
    uint32_t n = 0;
    if (cap > QN_CROWD_MAX_NEIGHBOURS) cap = QN_CROWD_MAX_NEIGHBOURS;
    cell_range(w, qn__v2(p.x - range, p.y - range), qn__v2(p.x + range, p.y + range), rg);
    for (uint32_t y = rg[1]; y <= rg[3]; y++)
        for (uint32_t x = rg[0]; x <= rg[2]; x++) {
            size_t c = (size_t)y * w->w + x;
            for (uint32_t k = w->start[c]; k < w->start[c + 1]; k++) {
                uint32_t id = w->list[k];
                const qn__wall *s = &w->seg[id];
                if (qn__cross(qn__sub(s->b, s->a), qn__sub(p, s->a)) < 0.0f) continue; /* behind */
                float d = qn__len(qn__sub(p, closest_point(s, p)));
                if (d > range) continue;
                uint32_t j = 0;
                while (j < n && ids[j] != id) j++;
                if (j < n) continue; /* seen in another bucket */
                if (n < cap) j = n++;
                else { /* full: replace the farthest when this one is nearer */
                    j = 0;
                    for (uint32_t t = 1; t < n; t++) j = dist[t] > dist[j] ? t : j;
                    if (dist[j] <= d) continue;
                }
                ids[j] = id;
                dist[j] = d;
            }
        }
    for (uint32_t i = 0; i < n; i++) {
        const qn__wall *s = &w->seg[ids[i]];
        out[i] = wall_line(s, p, closest_point(s, p), dist[i], r, tau, dt);
    }
    return n;
}

/* The wall nearest to x (searching x's bucket and its neighbours); NULL if none. */
static const qn__wall *nearest_wall(const qn__walls *w, qn_vec2 x) {
    uint32_t rg[4];
    cell_range(w, qn__v2(x.x - w->cell, x.y - w->cell), qn__v2(x.x + w->cell, x.y + w->cell), rg);
    const qn__wall *best = NULL;
    float bd = INFINITY;
    for (uint32_t y = rg[1]; y <= rg[3]; y++)
        for (uint32_t cx = rg[0]; cx <= rg[2]; cx++) {
            size_t c = (size_t)y * w->w + cx;
            for (uint32_t k = w->start[c]; k < w->start[c + 1]; k++) {
                const qn__wall *s = &w->seg[w->list[k]];
                qn_vec2 diff = qn__sub(x, closest_point(s, x));
                float d = qn__dot(diff, diff);
                if (d < bd) bd = d, best = s;
            }
        }
    return best;
}

/* Is p in an unblocked quad? Sets *quad. */
static bool inside_open(const qn_mesh *m, qn_vec2 p, uint32_t *quad) {
    uint32_t q = qn__locate(m, p, *quad);
    if (q == QN_NONE || m->blocked[q]) return false;
    *quad = q;
    return true;
}

/* Last point of p..hit kept a hair's width short of hit. */
static qn_vec2 short_of(const qn_mesh *m, qn_vec2 p, qn_vec2 hit) {
    qn_vec2 s = qn__sub(hit, p);
    float l = qn__len(s), back = 8.0f * m->eps;
    return l > back ? qn__add(p, qn__scale(s, (l - back) / l)) : p;
}

bool qn__walls_move(const qn__walls *w, const qn_mesh *m, qn_vec2 *p, qn_vec2 d,
                    uint32_t *quad) {
    bool slid = false;
    if (*quad != QN_NONE && m->blocked[*quad]) { /* walking out of a quad blocked meanwhile */
        uint32_t q = qn__locate(m, qn__add(*p, d), *quad);
        if (q != QN_NONE) *p = qn__add(*p, d), *quad = q;
        return false;
    }
    for (int it = 0; it < 3 && qn__dot(d, d) > 0.0f; it++) {
        qn_vec2 b = qn__add(*p, d), hit;
        uint32_t q = *quad;
        if (qn_mesh_segment_inside(m, *p, b, *quad, &hit) == QN_OK && inside_open(m, b, &q)) {
            *p = b;
            *quad = q;
            return slid;
        }
        slid = true;
        qn_vec2 stop = short_of(m, *p, hit);
        q = *quad;
        if (!inside_open(m, stop, &q)) return slid;
        *p = stop;
        *quad = q;
        const qn__wall *s = nearest_wall(w, hit);
        if (!s) return slid;
        qn_vec2 t = qn__sub(s->b, s->a);
        t = qn__scale(t, 1.0f / qn__len(t));
        d = qn__scale(t, qn__dot(qn__sub(b, hit), t)); /* the rest, along the wall */
    }
    return slid;
}
