/*
** boundary.c: each quad's boundary as a cycle of sub-edges, the structure
** the interval engine (field/interval.c) walks and the sampler reads.
**
** A quad's cycle starts at each edge's first corner and adds the end points
** of the portals along that edge, so sub-edge j runs from cycle vertex j to
** j + 1 and is either one whole portal or a piece of wall. Equal points of
** different quads share a vertex id. Built once with the mesh (it depends
** only on the geometry), so every search over the mesh reuses it.
**
** Per vertex id the boundary keeps what decides whether a shortest path
** can bend there (the mesh fully open, radius 0): a wall ends there and the
** quads round it fill more than a half turn. Blocked quads and closed
** portals only add corners; searches mark those themselves.
*/
#include "internal.h"

#include <stdlib.h>

#define PI_F 3.14159265358979f

/* A portal's extent along a quad edge, from the edge's first corner. */
typedef struct spos {
    float lo, hi;
    uint32_t e;
    qn_vec2 plo, phi;
} spos;

static inline uint8_t side_in(const qn_mesh *m, uint32_t e, uint32_t q) {
    return m->pq[e].q[0] == q ? 0 : 1;
}

/* The portals of quad q on its edge i, sorted along it, into tmp. */
static uint32_t edge_portals(const qn_mesh *m, uint32_t q, int i, qn_vec2 c0, qn_vec2 u,
                             spos *tmp) {
    uint32_t cnt = 0;
    for (uint32_t j = m->qp_start[q]; j < m->qp_start[q + 1]; j++) {
        uint32_t e = m->qp_list[j];
        const qn__portal p_at = qn__portal_at(m, e), *p = &p_at;
        if (p->edge[side_in(m, e, q)] != i) continue;
        float s0 = qn__dot(qn__sub(p->p0, c0), u), s1 = qn__dot(qn__sub(p->p1, c0), u);
        spos a = {s0, s1, e, p->p0, p->p1}, b = {s1, s0, e, p->p1, p->p0};
        tmp[cnt++] = s0 <= s1 ? a : b;
    }
    /* Insertion: an edge has a few portals (qsort's calls cost more). */
    for (uint32_t a = 1; a < cnt; a++) {
        spos x = tmp[a];
        uint32_t j = a;
        for (; j > 0 && tmp[j - 1].lo > x.lo; j--)
            tmp[j] = tmp[j - 1];
        tmp[j] = x;
    }
    return cnt;
}

/* Adds a cycle vertex (a wall sub-edge from it, until a portal is set). */
static void push_bv(qn__boundary *b, qn_vec2 p) {
    b->bv[b->nb] = p;
    b->bportal[b->nb++] = QN_NONE;
}

/* Quad q's cycle; a portal reaching the next corner ends there. */
static void quad_cycle(const qn_mesh *m, qn__boundary *b, uint32_t q, spos *tmp) {
    qn_vec2 k_at[4];
    const qn_vec2 *k = qn__corners(m, q, k_at);
    float tol = 4.0f * m->eps;
    uint32_t base = b->nb;
    for (int i = 0; i < 4; i++) {
        qn_vec2 c0 = k[i], d = qn__sub(k[(i + 1) & 3], c0);
        float len = qn__len(d), cur = 0.0f;
        uint32_t cnt = edge_portals(m, q, i, c0, qn__scale(d, 1.0f / len), tmp);
        push_bv(b, c0);
        for (uint32_t j = 0; j < cnt; j++) {
            if (tmp[j].lo > cur + tol) push_bv(b, tmp[j].plo);
            b->bportal[b->nb - 1] = tmp[j].e;
            b->psub[2 * tmp[j].e + side_in(m, tmp[j].e, q)] = b->nb - 1 - base;
            cur = tmp[j].hi;
            if (cur < len - tol) push_bv(b, tmp[j].phi);
        }
    }
}

typedef struct vkey {
    float x, y;
    uint32_t i;
} vkey;

/* Byte `d` (0 = lowest) of the key (x, y): y's four bytes, then x's. */
static uint32_t key_byte(const vkey *k, int d) {
    uint32_t u = qn__float_order_key(d < 4 ? k->y : k->x);
    return (u >> (8 * (d & 3))) & 0xFFu;
}

/* Sorts keys[0..n) by (x, y, i): a stable radix sort by bytes of (x, y),
** lowest first, over keys in order of i, skipping bytes that are the same
** for all (most of them, on a small part of the world); tmp: room for n.
** Returns where the result is. */
static vkey *sort_vkeys(vkey *keys, vkey *tmp, uint32_t n) {
    uint32_t count[257];
    for (int d = 0; d < 8; d++) {
        memset(count, 0, sizeof count);
        for (uint32_t i = 0; i < n; i++) count[key_byte(&keys[i], d) + 1]++;
        if (count[key_byte(&keys[0], d) + 1] == n) continue; /* the same byte everywhere */
        for (int c = 0; c < 256; c++) count[c + 1] += count[c];
        for (uint32_t i = 0; i < n; i++) tmp[count[key_byte(&keys[i], d)]++] = keys[i];
        vkey *t = keys;
        keys = tmp;
        tmp = t;
    }
    return keys;
}

/* Vertex ids: equal points share one, numbered in order of (x, y). The
** sub-edges are first grouped into bands of x (a monotone function of x,
** so equal points share a band and the bands come in order), each band
** then sorted on its own: the scratch is 4 bytes a sub-edge (order) and
** two key arrays for the largest band, where one sort of all took 24. A
** band per 64 Ki sub-edges, up to 64 (one for a small mesh). */
#define QN__VBANDS 64u
static bool number_vertices(const qn_allocator *al, qn__boundary *b, uint32_t *order) {
    uint32_t nb = b->nb, start[QN__VBANDS + 1] = {0}, at[QN__VBANDS];
    uint32_t bands = nb >> 16 < 1 ? 1 : (nb >> 16 > QN__VBANDS ? QN__VBANDS : nb >> 16);
    float lo = INFINITY, hi = -INFINITY;
    for (uint32_t i = 0; bands > 1 && i < nb; i++)
        lo = fminf(lo, b->bv[i].x), hi = fmaxf(hi, b->bv[i].x);
    float scale = bands > 1 && hi > lo ? (float)bands / (hi - lo) : 0.0f;
#define BAND(x) ((uint32_t)fminf((float)(bands - 1), ((x)-lo) * scale))
    for (uint32_t i = 0; i < nb; i++)
        start[BAND(b->bv[i].x) + 1]++;
    uint32_t most = 0;
    for (uint32_t k = 0; k < bands; k++) {
        most = start[k + 1] > most ? start[k + 1] : most;
        start[k + 1] += start[k];
        at[k] = start[k];
    }
    for (uint32_t i = 0; i < nb; i++)
        order[at[BAND(b->bv[i].x)]++] = i;
#undef BAND
    size_t kb = 2 * ((size_t)most + 1) * sizeof(vkey);
    vkey *keys = qn__alloc(al, kb);
    if (!keys) return false;
    uint32_t id = 0;
    bool any = false;
    vkey last = {0};
    for (uint32_t k = 0; k < bands; k++) {
        uint32_t n = start[k + 1] - start[k];
        if (!n) continue;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t i = order[start[k] + j];
            keys[j] = (vkey){b->bv[i].x, b->bv[i].y, i};
        }
        vkey *sorted = n > 1 ? sort_vkeys(keys, keys + most + 1, n) : keys;
        for (uint32_t j = 0; j < n; j++) {
            if (any && (last.x != sorted[j].x || last.y != sorted[j].y)) id++;
            any = true;
            last = sorted[j];
            b->bvid[sorted[j].i] = id;
        }
    }
    qn__free(al, keys, kb);
    b->nv = any ? id + 1 : 0;
    return true;
}

/* The interior angle of quad q's cycle at its vertex s (pi on a straight
** edge); counter-clockwise cycles, so from the next edge round to the
** previous one is inside. */
float qn__boundary_angle(const qn__boundary *b, uint32_t base, uint32_t k, uint32_t s) {
    qn_vec2 v = b->bv[base + s];
    qn_vec2 pa = qn__sub(b->bv[base + (s + k - 1) % k], v), nb = qn__sub(b->bv[base + (s + 1) % k], v);
    float a = atan2f(qn__cross(nb, pa), qn__dot(nb, pa));
    return a < 0.0f ? a + 2.0f * PI_F : a;
}

/* Static corner flags per vertex id, from walls and summed angles. */
static void mark_corners(const qn_mesh *m, qn__boundary *b, float *open) {
    memset(b->vkind, 0, b->nv);
    for (uint32_t v = 0; v < b->nv; v++) open[v] = 0.0f, b->vwall[v] = qn__v2(0.0f, 0.0f);
    for (uint32_t q = 0; q < m->quad_count; q++) {
        uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base;
        for (uint32_t s = 0; s < k; s++) {
            uint32_t v = b->bvid[base + s];
            open[v] += qn__boundary_angle(b, base, k, s);
            if (b->bportal[base + s] == QN_NONE) {
                uint32_t w = b->bvid[base + (s + 1) % k];
                qn_vec2 d = qn__sub(b->bv[base + (s + 1) % k], b->bv[base + s]);
                float l = qn__len(d);
                d = l > 0.0f ? qn__scale(d, 1.0f / l) : d;
                b->vkind[v] |= QN__VK_WALL, b->vkind[w] |= QN__VK_WALL;
                b->vwall[v] = qn__add(b->vwall[v], d);
                b->vwall[w] = qn__sub(b->vwall[w], d);
            }
        }
    }
    for (uint32_t v = 0; v < b->nv; v++)
        if ((b->vkind[v] & QN__VK_WALL) && open[v] > QN__CORNER_OPEN) b->vkind[v] |= QN__VK_CORNER;
}

void qn__boundary_free(const qn_allocator *a, qn__boundary *b) {
    if (!b) return;
    qn__free(a, b->cmask, b->cbytes);
    qn__free(a, b->vblock, b->vbytes);
    qn__free(a, b->block, b->blbytes);
    qn__free(a, b->eblock, b->ebytes);
    qn__free(a, b, sizeof *b);
}

/* Each quad's obstacle corners as a mask of its cycle's vertices: a word
** a quad, where a list of corners with their points took 12 bytes a corner,
** each corner again in every quad round it (81 bytes a quad on a map of
** scattered obstacles). The sampler reads the points from the cycle. */
static bool pack_corners(const qn_mesh *m, qn__boundary *b) {
    uint32_t nq = m->quad_count;
    b->cbytes = ((size_t)nq + 1) * sizeof(uint32_t);
    b->cmask = qn__alloc(&m->alloc, b->cbytes);
    if (!b->cmask) return false;
    for (uint32_t q = 0; q < nq; q++) {
        uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base, mask = 0;
        for (uint32_t t = 0; t < k; t++) {
            if (!(b->vkind[b->bvid[base + t]] & QN__VK_CORNER)) continue;
            mask |= k > 31 ? QN__CMASK_LONG : 1u << t;
        }
        b->cmask[q] = mask;
    }
    b->cmask[nq] = 0;
    return true;
}

const qn__boundary *qn__mesh_boundary(const qn_mesh *m, qn_error *err) {
    qn__boundary *b = atomic_load(&m->bnd);
    if (b) return b;
    if (qn__boundary_build(m, &b, err) != QN_OK) return NULL;
    qn__boundary *none = NULL;
    /* The mesh is shared read-only; its boundary is a cache it owns. */
    qn__boundary *_Atomic *slot = (qn__boundary *_Atomic *)(uintptr_t)&m->bnd;
    if (atomic_compare_exchange_strong(slot, &none, b)) return b;
    qn__boundary_free(&m->alloc, b); /* another thread's copy won */
    return none;
}

/* The cycles, in bv and bportal with room for the most a quad's portals
** can make (4 sub-edges a quad, 2 more a portal side), then bportal moved
** down after bv and their block shrunk in place: the scratch is only that
** slack, at most two fifths on a map of rectangles. bstart and psub come
** first in the block that bvid joins. */
static bool build_cycles(const qn_mesh *m, qn__boundary *b) {
    uint32_t nq = m->quad_count, np = m->portal_count, maxk = 1;
    for (uint32_t q = 0; q < nq; q++)
        if (m->qp_start[q + 1] - m->qp_start[q] > maxk) maxk = m->qp_start[q + 1] - m->qp_start[q];
    size_t tbytes = (size_t)maxk * sizeof(spos), cap = 4 * (size_t)nq + 4 * (size_t)np;
    spos *tmp = qn__alloc(&m->alloc, tbytes);
    b->ebytes = cap * (sizeof(qn_vec2) + sizeof(uint32_t));
    b->eblock = qn__alloc(&m->alloc, b->ebytes);
    b->blbytes = ((size_t)nq + 1 + 2 * (size_t)np) * sizeof(uint32_t);
    b->block = qn__alloc(&m->alloc, b->blbytes);
    bool ok = tmp && b->eblock && b->block;
    if (ok) {
        b->bv = b->eblock;
        b->bportal = (uint32_t *)(void *)(b->bv + cap);
        b->bstart = b->block;
        b->psub = b->bstart + nq + 1;
        for (uint32_t q = 0; q < nq; q++) {
            b->bstart[q] = b->nb;
            quad_cycle(m, b, q, tmp);
        }
        b->bstart[nq] = b->nb;
        uint32_t *bp = (uint32_t *)(void *)(b->bv + b->nb);
        memmove(bp, b->bportal, (size_t)b->nb * sizeof(uint32_t));
        b->bportal = bp;
        size_t used = (size_t)b->nb * (sizeof(qn_vec2) + sizeof(uint32_t));
        void *e = qn__realloc(&m->alloc, b->eblock, b->ebytes, used);
        if (e) { /* else it stays as it was, larger */
            b->eblock = e, b->ebytes = used;
            b->bv = e;
            b->bportal = (uint32_t *)(void *)(b->bv + b->nb);
        }
        size_t grown = b->blbytes + (size_t)b->nb * sizeof(uint32_t);
        void *block = qn__realloc(&m->alloc, b->block, b->blbytes, grown);
        ok = block != NULL;
        if (ok) {
            b->block = block, b->blbytes = grown;
            b->bstart = block;
            b->psub = b->bstart + nq + 1;
            b->bvid = b->psub + 2 * (size_t)np;
        }
    }
    qn__free(&m->alloc, tmp, tbytes);
    return ok;
}

qn_status qn__boundary_build(const qn_mesh *m, qn__boundary **out, qn_error *err) {
    *out = NULL;
    uint64_t nb64 = 4 * (uint64_t)m->quad_count + 4 * (uint64_t)m->portal_count;
    if (nb64 >= UINT32_MAX / 2)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "mesh too large for its boundary index");
    qn__boundary *b = qn__calloc(&m->alloc, 1, sizeof *b);
    bool ok = b && build_cycles(m, b);
    /* Scratch: the sub-edges by band of x, then the angle sums. */
    size_t obytes = ok ? ((size_t)b->nb + 1) * sizeof(uint32_t) : 0;
    uint32_t *order = ok ? qn__alloc(&m->alloc, obytes) : NULL;
    ok = order && number_vertices(&m->alloc, b, order);
    if (ok) {
        b->vbytes = (size_t)b->nv * (sizeof(qn_vec2) + 1); /* vwall, vkind */
        b->vblock = qn__alloc(&m->alloc, b->vbytes);
        ok = b->vblock != NULL;
    }
    if (ok) {
        b->bytes = b->ebytes + b->blbytes + b->vbytes;
        b->vwall = (qn_vec2 *)b->vblock;
        b->vkind = (uint8_t *)(b->vwall + b->nv);
        mark_corners(m, b, (float *)(void *)order); /* nv <= nb */
    }
    qn__free(&m->alloc, order, obytes);
    if (!ok || !pack_corners(m, b)) {
        qn__boundary_free(&m->alloc, b);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quad boundaries)");
    }
    *out = b;
    return QN_OK;
}
