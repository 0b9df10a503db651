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

static int cmp_spos(const void *a, const void *b) {
    float x = ((const spos *)a)->lo, y = ((const spos *)b)->lo;
    return (x > y) - (x < y);
}

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
    if (cnt > 1) qsort(tmp, cnt, sizeof *tmp, cmp_spos);
    return cnt;
}

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

/* Vertex ids: equal points share one, numbered in sorted order; tmp: room
** for b->nb keys. */
static void number_vertices(qn__boundary *b, vkey *keys, vkey *tmp) {
    for (uint32_t i = 0; i < b->nb; i++) keys[i] = (vkey){b->bv[i].x, b->bv[i].y, i};
    if (b->nb > 1) keys = sort_vkeys(keys, tmp, b->nb);
    uint32_t id = 0;
    for (uint32_t i = 0; i < b->nb; i++) {
        if (i > 0 && (keys[i - 1].x != keys[i].x || keys[i - 1].y != keys[i].y)) id++;
        b->bvid[keys[i].i] = id;
    }
    b->nv = b->nb ? id + 1 : 0;
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

/* The fixed arrays' bytes for nb sub-edges and nv vertex ids. */
static size_t boundary_bytes(uint32_t nq, uint32_t np, uint32_t nb, uint32_t nv) {
    return ((size_t)nq + 1 + 2 * (size_t)np) * sizeof(uint32_t) +
           (size_t)nb * (sizeof(qn_vec2) + 2 * sizeof(uint32_t)) +
           (size_t)nv * (sizeof(qn_vec2) + 1);
}

void qn__boundary_free(const qn_allocator *a, qn__boundary *b) {
    if (!b) return;
    qn__free(a, b->cmask, b->cbytes);
    qn__free(a, b->block, b->bytes);
    qn__free(a, b, sizeof *b);
}

/* Carves the fixed arrays out of one block (room for nb sub-edges and nv
** vertex ids). */
static void boundary_layout(qn__boundary *b, uint32_t nq, uint32_t np, uint32_t nb, uint32_t nv) {
    char *p = b->block;
    b->bv = (qn_vec2 *)(void *)p;
    p += (size_t)nb * sizeof(qn_vec2);
    b->vwall = (qn_vec2 *)(void *)p;
    p += (size_t)nv * sizeof(qn_vec2);
    b->bstart = (uint32_t *)(void *)p;
    b->bportal = b->bstart + nq + 1;
    b->bvid = b->bportal + nb;
    b->psub = b->bvid + nb;
    b->vkind = (uint8_t *)(b->psub + 2 * (size_t)np);
}

/* Moves the arrays into a block sized for nb vertices (built with room for
** the most a mesh can have). */
static bool shrink(const qn_mesh *m, qn__boundary *b, uint32_t nbmax) {
    size_t bytes = boundary_bytes(m->quad_count, m->portal_count, b->nb, b->nv);
    qn__boundary t = *b;
    b->block = qn__alloc(&m->alloc, bytes);
    if (!b->block) {
        b->block = t.block;
        return false;
    }
    boundary_layout(b, m->quad_count, m->portal_count, b->nb, b->nv);
    memcpy(b->bv, t.bv, (size_t)b->nb * sizeof(qn_vec2));
    memcpy(b->bstart, t.bstart, ((size_t)m->quad_count + 1) * sizeof(uint32_t));
    memcpy(b->bportal, t.bportal, (size_t)b->nb * sizeof(uint32_t));
    memcpy(b->bvid, t.bvid, (size_t)b->nb * sizeof(uint32_t));
    memcpy(b->psub, t.psub, 2 * (size_t)m->portal_count * sizeof(uint32_t));
    memcpy(b->vkind, t.vkind, b->nv);
    memcpy(b->vwall, t.vwall, (size_t)b->nv * sizeof(qn_vec2));
    qn__free(&m->alloc, t.block, boundary_bytes(m->quad_count, m->portal_count, nbmax, nbmax));
    b->bytes = bytes;
    return true;
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

qn_status qn__boundary_build(const qn_mesh *m, qn__boundary **out, qn_error *err) {
    *out = NULL;
    uint32_t nq = m->quad_count, np = m->portal_count, maxk = 1;
    uint64_t nb64 = 4 * (uint64_t)nq + 4 * (uint64_t)np;
    if (nb64 >= UINT32_MAX / 2) return qn__fail(err, QN_E_LIMIT, QN_NONE, "mesh too large for its boundary index");
    uint32_t nbmax = (uint32_t)nb64;
    for (uint32_t q = 0; q < nq; q++)
        if (m->qp_start[q + 1] - m->qp_start[q] > maxk) maxk = m->qp_start[q + 1] - m->qp_start[q];
    qn__boundary *b = qn__calloc(&m->alloc, 1, sizeof *b);
    size_t kbytes = (size_t)nbmax * sizeof(vkey) + (size_t)maxk * sizeof(spos) + sizeof(vkey);
    void *scratch = qn__alloc(&m->alloc, kbytes);
    if (b) {
        b->bytes = boundary_bytes(nq, np, nbmax, nbmax);
        b->block = qn__alloc(&m->alloc, b->bytes);
    }
    if (!b || !b->block || !scratch) {
        qn__boundary_free(&m->alloc, b);
        qn__free(&m->alloc, scratch, kbytes);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quad boundaries)");
    }
    boundary_layout(b, nq, np, nbmax, nbmax);
    vkey *keys = scratch;
    spos *tmp = (spos *)(void *)(keys + nbmax);
    for (uint32_t q = 0; q < nq; q++) {
        b->bstart[q] = b->nb;
        quad_cycle(m, b, q, tmp);
    }
    b->bstart[nq] = b->nb;
    vkey *sorted = qn__alloc(&m->alloc, ((size_t)b->nb + 1) * sizeof(vkey));
    if (!sorted) {
        qn__boundary_free(&m->alloc, b);
        qn__free(&m->alloc, scratch, kbytes);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quad boundaries)");
    }
    number_vertices(b, keys, sorted);
    qn__free(&m->alloc, sorted, ((size_t)b->nb + 1) * sizeof(vkey));
    /* The sort keys are free again: reuse them as the angle sums. */
    mark_corners(m, b, (float *)(void *)keys);
    qn__free(&m->alloc, scratch, kbytes);
    if (!shrink(m, b, nbmax)) {
        qn__boundary_free(&m->alloc, b);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quad boundaries)");
    }
    if (!pack_corners(m, b)) {
        qn__boundary_free(&m->alloc, b);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quad boundaries)");
    }
    *out = b;
    return QN_OK;
}
