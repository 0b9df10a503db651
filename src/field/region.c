/*
** region.c: how far from its goal a field's ground holds a given area
** (qn_field_region_radius), to size a crowd's arrival region on cluttered
** ground.
**
** A best-first walk over the quads from the goals' quads, by a lower bound
** of each quad's cost (the cost at its centre less its largest distance to
** a corner times its cost multiplier: a cost grows no faster than that
** inside a convex quad), samples each quad on a lattice of its own (points
** weighted by the quad's area over their count) with qn_field_cost_at,
** where a unit of the field's radius has room (room_for). The
** radius is the least cost whose samples cover the area; it is final once
** the next quad's bound lies above it, as no point left can cost less.
*/
#include "core/heap.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>

/* Samples a row or column of a quad at most: a quad of the open ground
** larger than 64 x 64 steps is sampled more coarsely. */
#define REGION_SIDE 64u
/* Samples that cover the area asked for, about: the step is chosen so. */
#define REGION_SAMPLES 2000.0

typedef struct rsample {
    float c, w;
} rsample;

typedef struct rwalk {
    const qn_field *f;
    const qn_mesh *m;
    qn_allocator a;
    qn__heap h;
    uint32_t hcap;
    uint8_t *seen; /* a bit per quad: queued once */
    rsample *s;
    uint32_t ns, scap;
    double weight; /* of the samples of finite cost */
    float step;
    float most; /* the most any quad queued can cost, or more */
    bool nomem;
} rwalk;

/* Makes room in *p (elements of size sz, capacity *cap) for `need`, by
** doubling from `first`; false (w->nomem) when out of memory. */
static bool make_room(rwalk *w, void **p, uint32_t *cap, size_t sz, uint32_t need, uint32_t first) {
    if (need <= *cap) return true;
    uint32_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    void *n = qn__realloc(&w->a, *p, (size_t)*cap * sz, (size_t)c * sz);
    if (!n) {
        w->nomem = true;
        return false;
    }
    *p = n, *cap = c;
    return true;
}

static int cmp_sample(const void *x, const void *y) {
    const rsample *a = x, *b = y;
    return a->c < b->c ? -1 : a->c > b->c;
}

/* The least cost of quad q's points, or less (0 when its centre has no
** cost); *hi gets the most, or more (INFINITY then). */
static float quad_bound(const rwalk *w, uint32_t q, float *hi) {
    qn_vec2 k_at[4];
    const qn_vec2 *k = qn__corners(w->m, q, k_at);
    qn_vec2 c = qn__corners_centre(k);
    float far = 0.0f;
    for (int i = 0; i < 4; i++) {
        float d = qn__len(qn__sub(k[i], c));
        far = d > far ? d : far;
    }
    float reach = qn__quad_cost(w->m, q) * far * 1.001f, cc = qn_field_cost_at(w->f, c, q);
    *hi = cc + reach;
    return isfinite(cc) && cc > reach ? cc - reach : 0.0f;
}

static void queue(rwalk *w, uint32_t q) {
    if (w->seen[q >> 3] & (1u << (q & 7u))) return;
    if (w->m->blocked[q] || !qn__field_reaches(w->f, q)) return;
    w->seen[q >> 3] |= (uint8_t)(1u << (q & 7u));
    if (!make_room(w, (void **)&w->h.a, &w->hcap, sizeof *w->h.a, w->h.n + 1, 256)) return;
    float hi;
    qn__heap_push(&w->h, q, quad_bound(w, q, &hi));
    if (hi < INFINITY && hi > w->most) w->most = hi;
}

/* Is there room at p for a unit of the field's radius: are the points a
** radius from p along the axes reached too? (A disc near a wall's corner
** can still poke into it: a sizing, not a clearance map.) */
static bool room_for(const rwalk *w, qn_vec2 p, uint32_t q) {
    float r = w->f->radius;
    if (!(r > 0.0f)) return true;
    const qn_vec2 d[4] = {{r, 0.0f}, {-r, 0.0f}, {0.0f, r}, {0.0f, -r}};
    for (int k = 0; k < 4; k++)
        if (!isfinite(qn_field_cost_at(w->f, qn__add(p, d[k]), q))) return false;
    return true;
}

/* Quad q's samples: a lattice of its (u, v) square, mapped onto it, where
** a unit has room (room_for). */
static void sample_quad(rwalk *w, uint32_t q) {
    qn_vec2 k_at[4];
    const qn_vec2 *k = qn__corners(w->m, q, k_at);
    float su = fmaxf(qn__len(qn__sub(k[1], k[0])), qn__len(qn__sub(k[2], k[3])));
    float sv = fmaxf(qn__len(qn__sub(k[3], k[0])), qn__len(qn__sub(k[2], k[1])));
    uint32_t nu = (uint32_t)fminf((float)REGION_SIDE, fmaxf(1.0f, ceilf(su / w->step)));
    uint32_t nv = (uint32_t)fminf((float)REGION_SIDE, fmaxf(1.0f, ceilf(sv / w->step)));
    uint32_t n = nu * nv;
    if (!make_room(w, (void **)&w->s, &w->scap, sizeof *w->s, w->ns + n, 1024)) return;
    float wt = qn_mesh_quad_area(w->m, q) / (float)n;
    for (uint32_t j = 0; j < nv; j++)
        for (uint32_t i = 0; i < nu; i++) {
            float u = ((float)i + 0.5f) / (float)nu, v = ((float)j + 0.5f) / (float)nv;
            qn_vec2 a = qn__add(k[0], qn__scale(qn__sub(k[1], k[0]), u));
            qn_vec2 b = qn__add(k[3], qn__scale(qn__sub(k[2], k[3]), u));
            qn_vec2 at = qn__add(a, qn__scale(qn__sub(b, a), v));
            float c = qn_field_cost_at(w->f, at, q);
            if (!isfinite(c) || !room_for(w, at, q)) continue;
            w->s[w->ns++] = (rsample){c, wt};
            w->weight += (double)wt;
        }
}

/* The least cost whose samples (sorted here) weigh `area`; the largest
** when they weigh less. */
static float quantile(rwalk *w, double area) {
    qsort(w->s, w->ns, sizeof *w->s, cmp_sample);
    double sum = 0.0;
    for (uint32_t i = 0; i < w->ns; i++) {
        sum += (double)w->s[i].w;
        if (sum >= area) return w->s[i].c;
    }
    return w->ns ? w->s[w->ns - 1].c : 0.0f;
}

qn_status qn_field_region_radius(const qn_field *field, float area, float *radius) {
    if (radius) *radius = 0.0f;
    if (!field || !radius || !(area > 0.0f) || !isfinite(area)) return QN_E_INVALID_ARG;
    rwalk w = {.f = field, .m = field->mesh, .a = field->alloc};
    const qn_mesh *m = w.m;
    w.step = sqrtf((float)((double)area / REGION_SAMPLES));
    w.seen = qn__calloc(&w.a, (size_t)m->quad_count / 8 + 1, 1);
    if (!w.seen) return QN_E_NOMEM;
    for (uint32_t i = 0; i < field->goal_count; i++)
        if (field->goals[i].quad != QN_NONE) queue(&w, field->goals[i].quad);
    float found = INFINITY; /* the quantile as last sorted: at or above the current one */
    uint32_t sorted_at = 0;
    while (!w.nomem) {
        float top = w.h.n ? w.h.a[0].key : INFINITY;
        if (w.weight >= (double)area && (top > found || w.ns >= sorted_at + sorted_at / 2)) {
            found = quantile(&w, (double)area);
            sorted_at = w.ns;
        }
        if (!w.h.n || top > found) break;
        uint32_t q = qn__heap_pop(&w.h);
        sample_quad(&w, q);
        for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1] && !w.nomem; k++) {
            uint32_t e = m->qp_list[k];
            if (qn__portal_open(m, e, field->radius)) queue(&w, qn__portal_other(m, e, q));
        }
    }
    /* Less ground than the area: all of it, out to its farthest point. */
    if (!w.nomem && !(found < INFINITY)) found = w.ns ? w.most : 0.0f;
    qn__free(&w.a, w.seen, (size_t)m->quad_count / 8 + 1);
    qn__free(&w.a, w.h.a, (size_t)w.hcap * sizeof *w.h.a);
    qn__free(&w.a, w.s, (size_t)w.scap * sizeof *w.s);
    if (w.nomem) return QN_E_NOMEM;
    *radius = found;
    return QN_OK;
}
