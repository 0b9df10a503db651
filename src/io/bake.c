/*
** bake.c: baked binary meshes (.qnm): the file format, saving, and
** loading with validation. The level section (name, goals, spawns, grid)
** is written and read by level.c through qn__qnm_save_mem and
** qn__qnm_load, so a build without JSON has baked meshes but no levels.
**
** The format (version 2, every number little-endian, no padding):
**
**   header, 64 bytes:
**     0  8  magic "QNMESH\r\n"
**     8  4  version (2; 1 is read too)
**    12  4  header size (64)
**    16  4  quad count Q (1 .. QN_MAX_QUADS)
**    20  4  portal count P
**    24  4  bucket grid width GW, 28 4 bucket grid height GH
**    32  4  bucket entries E (length of the bucket lists)
**    36  4  flags: bit 0 = a level section follows the mesh
**    40  8  total file size in bytes
**    48  8  checksum of bytes 64 .. end
**    56  8  checksum of bytes 0 .. 55
**   mesh:
**     Q x 4 corners (f32 x, f32 y), counter-clockwise
**     Q f32 costs, Q u8 blocked flags (0 or 1)
**     P portals: u32 a, u32 b (a < b, sorted by (a, b)), u8 edge of a,
**       u8 edge of b, f32 x0, y0, x1, y1 (the shared segment along a's edge)
**     bucket grid: f32 origin x, y, f32 cell size, (GW*GH + 1) u32 list
**       starts, E u32 quad indices (increasing within a bucket)
**   level (flag bit 0):
**     u32 name length, bytes; u32 goal count, per goal u32 name length,
**     bytes, f32 x, y; the same for spawns; u32 1 when a grid follows
**     (u32 width, height, f32 cell size, origin x, y, width*height u8
**     costs), else 0
**
** The checksum: a 64-bit state, h = (h ^ w) * K; h ^= h >> 29 for each
** 8-byte little-endian word w (the last one zero-padded), then the length.
** Every step is a bijection, so any change of one word changes the sum.
** The header's sum is this one. From version 2 the body's runs four such
** states side by side (checksum4 below, a few times faster); a file of
** version 1, the same layout with the one-state sum, still loads.
**
** The level section is written and read by level.c (through
** qn__qnm_save_mem and qn__qnm_load), so a build without JSON has baked
** meshes but no levels.
**
** Loading checks the header, sizes and both checksums before reading, then
** everything a query relies on: finite coordinates, convex counter-clockwise
** quads, costs and flags in range, portal and bucket indices in range and
** ordered. What it does not redo is the pairing and overlap search: a file
** with a valid checksum is trusted to come from qn_mesh_save.
*/
#include "mesh/build.h"

#include <stdio.h>

#define QNM_MAGIC "QNMESH\r\n"
#define QNM_VERSION 2u
#define QNM_HEADER 64u
#define QNM_PORTAL 26u
#define QNM_FLAG_LEVEL 1u

/* ---- little-endian bytes ------------------------------------------------- */

typedef qn__wbuf wbuf;

static void put(wbuf *w, const void *src, size_t n) {
    if (w->p && n) memcpy(w->p + w->n, src, n);
    w->n += n;
}

static void put_u32(wbuf *w, uint32_t v) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 4);
}

static void put_u64(wbuf *w, uint64_t v) {
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}

static void put_f32(wbuf *w, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(w, u);
}

static bool host_little_endian(void) {
    uint32_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static uint32_t get_u32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Inline, and one load on a little-endian host: the checksums read every
** word of a file through it. */
static inline uint64_t get_u64(const uint8_t *b) {
    if (host_little_endian()) {
        uint64_t v;
        memcpy(&v, b, 8);
        return v;
    }
    return (uint64_t)get_u32(b) | (uint64_t)get_u32(b + 4) << 32;
}

static float get_f32(const uint8_t *b) {
    uint32_t u = get_u32(b);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* n floats from little-endian bytes (a copy on little-endian hosts). */
static void get_f32s(float *out, const uint8_t *b, size_t n) {
    if (host_little_endian()) {
        memcpy(out, b, 4 * n);
        return;
    }
    for (size_t i = 0; i < n; i++) out[i] = get_f32(b + 4 * i);
}

static void get_u32s(uint32_t *out, const uint8_t *b, size_t n) {
    if (host_little_endian()) {
        memcpy(out, b, 4 * n);
        return;
    }
    for (size_t i = 0; i < n; i++) out[i] = get_u32(b + 4 * i);
}

static inline uint64_t mix(uint64_t h, uint64_t w) {
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static uint64_t checksum(const uint8_t *b, size_t n) {
    uint64_t h = 0x243F6A8885A308D3ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) h = mix(h, get_u64(b + i));
    uint8_t tail[8] = {0};
    if (i < n) memcpy(tail, b + i, n - i);
    h = mix(h, get_u64(tail));
    return (h ^ (uint64_t)n) * 0xBF58476D1CE4E5B9ull;
}

/* Version 2's checksum of the body: four such states side by side, lane k
** taking word k of each 32-byte block (four chains the processor runs at
** once, not one), then the words left over through lane 0, the
** zero-padded tail, the four lanes folded in order, and the length. */
static uint64_t checksum4(const uint8_t *b, size_t n) {
    uint64_t h[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                     0x082EFA98EC4E6C89ull};
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        h[0] = mix(h[0], get_u64(b + i));
        h[1] = mix(h[1], get_u64(b + i + 8));
        h[2] = mix(h[2], get_u64(b + i + 16));
        h[3] = mix(h[3], get_u64(b + i + 24));
    }
    for (; i + 8 <= n; i += 8) h[0] = mix(h[0], get_u64(b + i));
    uint8_t tail[8] = {0};
    if (i < n) memcpy(tail, b + i, n - i);
    h[0] = mix(h[0], get_u64(tail));
    uint64_t r = mix(mix(mix(mix(0x452821E638D01377ull, h[0]), h[1]), h[2]), h[3]);
    return (r ^ (uint64_t)n) * 0xBF58476D1CE4E5B9ull;
}

/* The body's checksum as a file of this version keeps it. */
static uint64_t body_checksum(uint32_t version, const uint8_t *b, size_t n) {
    return version == 1 ? checksum(b, n) : checksum4(b, n);
}

void qn__put(qn__wbuf *w, const void *src, size_t n) { put(w, src, n); }
void qn__put_u32(qn__wbuf *w, uint32_t v) { put_u32(w, v); }
void qn__put_f32(qn__wbuf *w, float f) { put_f32(w, f); }
uint32_t qn__get_u32(const uint8_t *b) { return get_u32(b); }
float qn__get_f32(const uint8_t *b) { return get_f32(b); }

void qn__qnm_reseal_header(uint8_t *b) {
    wbuf h = {b + 56, 0};
    put_u64(&h, checksum(b, 56));
}

void qn__qnm_reseal(uint8_t *b, size_t len) {
    if (len < QNM_HEADER) return;
    wbuf h = {b + 48, 0};
    put_u64(&h, body_checksum(get_u32(b + 8), b + QNM_HEADER, len - QNM_HEADER));
    qn__qnm_reseal_header(b);
}

/* ---- writing ---------------------------------------------------------------- */

static void write_mesh(wbuf *w, const qn_mesh *m) {
    size_t q = m->quad_count, cells = (size_t)m->grid_w * m->grid_h;
    for (uint32_t i = 0; i < q; i++) {
        qn_vec2 kc[4];
        const qn_vec2 *c = qn__corners(m, i, kc);
        for (int k = 0; k < 4; k++) put_f32(w, c[k].x), put_f32(w, c[k].y);
    }
    for (uint32_t i = 0; i < m->quad_count; i++) put_f32(w, qn__quad_cost(m, i));
    put(w, m->blocked, q);
    for (uint32_t i = 0; i < m->portal_count; i++) {
        const qn__portal p = qn__portal_at(m, i);
        put_u32(w, p.q[0]);
        put_u32(w, p.q[1]);
        put(w, p.edge, 2);
        put_f32(w, p.p0.x), put_f32(w, p.p0.y), put_f32(w, p.p1.x), put_f32(w, p.p1.y);
    }
    put_f32(w, m->grid_origin.x), put_f32(w, m->grid_origin.y), put_f32(w, m->grid_cell);
    for (size_t i = 0; i <= cells; i++) put_u32(w, m->cell_start[i]);
    for (size_t c = 0; c < cells; c++)
        for (uint32_t i = m->cell_start[c]; i < m->cell_start[c + 1]; i++)
            put_u32(w, qn__bucket_quad(m, c, i));
}

/* The whole file into w (counting only when w->p is NULL). */
static void write_file(wbuf *w, const qn_mesh *m, qn__level_writer level, const void *ctx) {
    uint8_t *base = w->p;
    size_t cells = (size_t)m->grid_w * m->grid_h;
    put(w, QNM_MAGIC, 8);
    put_u32(w, QNM_VERSION), put_u32(w, QNM_HEADER);
    put_u32(w, m->quad_count), put_u32(w, m->portal_count);
    put_u32(w, m->grid_w), put_u32(w, m->grid_h), put_u32(w, m->cell_start[cells]);
    put_u32(w, level ? QNM_FLAG_LEVEL : 0u);
    put_u64(w, 0), put_u64(w, 0), put_u64(w, 0); /* size and sums, below */
    write_mesh(w, m);
    if (level) level(w, ctx);
    if (!base) return;
    wbuf h = {base + 40, 0};
    put_u64(&h, (uint64_t)w->n);
    put_u64(&h, body_checksum(QNM_VERSION, base + QNM_HEADER, w->n - QNM_HEADER));
    put_u64(&h, checksum(base, 56));
}

qn_status qn__qnm_save_mem(const qn_mesh *m, qn__level_writer level, const void *ctx, void *buf,
                           size_t cap, size_t *len, qn_error *err) {
    wbuf count = {NULL, 0};
    write_file(&count, m, level, ctx);
    if (len) *len = count.n;
    if (!buf || cap < count.n)
        return qn__fail(err, QN_E_BUFFER_TOO_SMALL, QN_NONE,
                        "the baked mesh needs %zu bytes, the buffer has %zu", count.n,
                        buf ? cap : 0);
    wbuf w = {buf, 0};
    write_file(&w, m, level, ctx);
    return QN_OK;
}

qn_status qn__qnm_save_file(const qn_mesh *m, qn__level_writer level, const void *ctx,
                            const char *path, qn_error *err) {
    wbuf count = {NULL, 0};
    write_file(&count, m, level, ctx);
    qn_allocator a = m->alloc;
    uint8_t *buf = qn__alloc(&a, count.n);
    if (!buf) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory baking the mesh");
    wbuf w = {buf, 0};
    write_file(&w, m, level, ctx);
    qn_status st = qn__write_file(path, buf, w.n, err);
    qn__free(&a, buf, count.n);
    return st;
}

qn_status qn_mesh_save_mem(const qn_mesh *mesh, void *buf, size_t cap, size_t *len,
                           qn_error *err) {
    qn__error_clear(err);
    if (!mesh) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL mesh");
    return qn__qnm_save_mem(mesh, NULL, NULL, buf, cap, len, err);
}

qn_status qn_mesh_save(const qn_mesh *mesh, const char *path, qn_error *err) {
    qn__error_clear(err);
    if (!mesh || !path) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL mesh or path");
    return qn__qnm_save_file(mesh, NULL, NULL, path, err);
}


/* ---- reading: header -------------------------------------------------------- */

typedef struct qnm_header {
    uint32_t quads, portals, gw, gh, entries, flags;
    uint64_t size;
} qnm_header;

/* Bytes of the mesh part (after the header) the header's counts imply;
** 0 on overflow. */
static uint64_t mesh_part_bytes(const qnm_header *h) {
    uint64_t q = h->quads, cells = (uint64_t)h->gw * h->gh;
    return q * 32 + q * 4 + q + (uint64_t)h->portals * QNM_PORTAL + 12 + (cells + 1) * 4 +
           (uint64_t)h->entries * 4;
}

static qn_status corrupt(qn_error *err, const char *what) {
    return qn__fail(err, QN_E_CORRUPT, QN_NONE, "baked mesh: %s", what);
}

static qn_status read_header(const uint8_t *b, size_t len, qnm_header *h, qn_error *err) {
    if (len < 8 && (len == 0 || memcmp(b, QNM_MAGIC, len) == 0))
        return qn__fail(err, QN_E_TRUNCATED, QN_NONE,
                        "baked mesh: the file ends at byte %zu, inside the magic", len);
    if (len < 8 || memcmp(b, QNM_MAGIC, 8) != 0)
        return corrupt(err, "no \"QNMESH\" magic: not a baked mesh, or its line ends were "
                            "rewritten");
    if (len < QNM_HEADER)
        return qn__fail(err, QN_E_TRUNCATED, QN_NONE,
                        "baked mesh: the file ends at byte %zu, inside the %u-byte header", len,
                        QNM_HEADER);
    if (get_u64(b + 56) != checksum(b, 56)) return corrupt(err, "header checksum mismatch");
    uint32_t version = get_u32(b + 8);
    if (version != QNM_VERSION && version != 1)
        return qn__fail(err, QN_E_FORMAT_VERSION, QN_NONE,
                        "baked mesh: format version %u; this build reads versions 1 and %u",
                        version, QNM_VERSION);
    if (get_u32(b + 12) != QNM_HEADER) return corrupt(err, "header size is not 64");
    h->quads = get_u32(b + 16), h->portals = get_u32(b + 20);
    h->gw = get_u32(b + 24), h->gh = get_u32(b + 28), h->entries = get_u32(b + 32);
    h->flags = get_u32(b + 36), h->size = get_u64(b + 40);
    if (h->quads == 0 || h->quads > QN_MAX_QUADS) return corrupt(err, "quad count out of range");
    if (h->portals > 2u * QN_MAX_QUADS) return corrupt(err, "portal count out of range");
    if (h->gw == 0 || h->gh == 0 || (uint64_t)h->gw * h->gh > 2ull * h->quads + 16)
        return corrupt(err, "bucket grid size out of range");
    if (h->entries > UINT32_MAX / 2 || (h->flags & ~QNM_FLAG_LEVEL))
        return corrupt(err, "bucket entries or flags out of range");
    uint64_t need = QNM_HEADER + mesh_part_bytes(h);
    if (h->size < need || (!(h->flags & QNM_FLAG_LEVEL) && h->size != need))
        return corrupt(err, "the file size in the header does not match its counts");
    if ((uint64_t)len < h->size)
        return qn__fail(err, QN_E_TRUNCATED, QN_NONE,
                        "baked mesh: the file ends at byte %zu of %llu", len,
                        (unsigned long long)h->size);
    if ((uint64_t)len > h->size)
        return corrupt(err, "bytes after the end the header gives");
    if (get_u64(b + 48) != body_checksum(version, b + QNM_HEADER, len - QNM_HEADER))
        return corrupt(err, "checksum mismatch (the file is damaged)");
    return QN_OK;
}

/* ---- reading: mesh -------------------------------------------------------------- */

static qn_status read_quads(qn__builder *bd, const uint8_t *b, qn_error *err) {
    qn_mesh *m = bd->m;
    size_t q = m->quad_count;
    get_f32s(m->cost, b + 32 * q, q);
    memcpy(m->blocked, b + 36 * q, q);
    /* Corners copied and checked in one pass (a quad's 32 bytes at a time). */
    for (uint32_t i = 0; i < q; i++) {
        qn_vec2 *c = &m->corners[4 * (size_t)i];
        get_f32s(&c[0].x, b + 32 * (size_t)i, 8);
        for (int k = 0; k < 4; k++) {
            if (!qn__finite2(c[k]) || fabsf(c[k].x) > QN_MAX_COORD || fabsf(c[k].y) > QN_MAX_COORD)
                return qn__fail(err, QN_E_CORRUPT, i, "baked mesh: quad %u: corner %d is not "
                                "finite or out of range", i, k);
        }
        float cost = qn__quad_cost(m, i);
        if (!(cost >= 1.0f && cost <= QN_MAX_QUAD_COST) || m->blocked[i] > 1)
            return qn__fail(err, QN_E_CORRUPT, i, "baked mesh: quad %u: cost or blocked flag "
                            "out of range", i);
    }
    return qn__mesh_shapes(bd);
}

/* A portal's segment as the file gives it (QNM_PORTAL bytes at b); its
** width only when asked (a mesh that derives its portals needs none). */
static qn__pgeo file_segment(const uint8_t *b, bool width) {
    qn__pgeo g;
    g.p0 = qn__v2(get_f32(b + 10), get_f32(b + 14));
    g.p1 = qn__v2(get_f32(b + 18), get_f32(b + 22));
    g.width = width ? qn__len(qn__sub(g.p1, g.p0)) : 0.0f;
    return g;
}

static bool same_point_bits(qn_vec2 a, qn_vec2 b) {
    return qn__same_bits(a.x, b.x) && qn__same_bits(a.y, b.y);
}

/* Portal i's edges and segment as the file gives them, into the mesh's
** arrays (pedge, pgeo). */
static void keep_portal(qn_mesh *m, uint32_t i, const uint8_t *b) {
    m->pedge[2 * (size_t)i] = b[8];
    m->pedge[2 * (size_t)i + 1] = b[9];
    m->pgeo[i] = file_segment(b, true);
}

static bool keep_portals(qn_mesh *m, uint32_t np) {
    m->pedge = qn__alloc(&m->alloc, 2 * (size_t)np);
    m->pgeo = qn__alloc(&m->alloc, (size_t)np * sizeof(qn__pgeo));
    return m->pedge && m->pgeo;
}

/* Straight into the mesh's portal table (no candidate list in between),
** its quads' list counts in the same pass. A mesh of rectangles keeps no
** edges or segments while each portal's are those its quads' rectangles
** give (qn__portal_at); from the first that is not, it keeps them all
** (those before read again from the file). */
static qn_status read_portals(qn__builder *bd, const uint8_t *b, uint32_t np, qn_error *err) {
    qn_mesh *m = bd->m;
    m->portal_count = np; /* the size the mesh's free gives back */
    m->pq = qn__alloc(&m->alloc, (size_t)np * sizeof(qn__pq));
    if (np && !m->pq) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    m->qp_start = qn__calloc(&m->alloc, (size_t)m->quad_count + 1, sizeof(uint32_t));
    if (!m->qp_start) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    bool derive = m->rects != NULL;
    if (!derive && np && !keep_portals(m, np))
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    qn__islands_begin(m);
    const uint8_t *first = b;
    for (uint32_t i = 0; i < np; i++, b += QNM_PORTAL) {
        /* The other quad's box (the derive check), list count and island
        ** are cache misses mostly (the first quad's come in order): fetched
        ** some portals ahead. */
        if (i + QN__FETCH_AHEAD < np) {
            uint32_t ahead = get_u32(b + QN__FETCH_AHEAD * QNM_PORTAL + 4);
            if (ahead < m->quad_count) {
                if (derive) QN__PREFETCH(&m->rects[ahead]);
                QN__PREFETCH(&m->qp_start[ahead + 1]);
                QN__PREFETCH(&m->island[ahead]);
            }
        }
        qn__portal p = {{get_u32(b), get_u32(b + 4)}, {0, 0}, {0, 0}, 0.0f, {b[8], b[9]}};
        qn__pgeo g = file_segment(b, false);
        bool order = i == 0 || p.q[0] > m->pq[i - 1].q[0] ||
                     (p.q[0] == m->pq[i - 1].q[0] && p.q[1] > m->pq[i - 1].q[1]);
        if (p.q[0] >= p.q[1] || p.q[1] >= m->quad_count || p.edge[0] > 3 || p.edge[1] > 3 ||
            !order || !qn__finite2(g.p0) || !qn__finite2(g.p1) ||
            (g.p0.x == g.p1.x && g.p0.y == g.p1.y)) {
            return qn__fail(err, QN_E_CORRUPT, i, "baked mesh: portal %u is invalid", i);
        }
        m->pq[i] = (qn__pq){{p.q[0], p.q[1]}};
        if (derive) {
            qn__portal_derive(m, &p);
            derive = same_point_bits(p.p0, g.p0) && same_point_bits(p.p1, g.p1) &&
                     p.edge[0] == b[8] && p.edge[1] == b[9];
            if (!derive && !keep_portals(m, np))
                return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
            for (uint32_t k = 0; !derive && k < i; k++)
                keep_portal(m, k, first + (size_t)k * QNM_PORTAL);
        }
        if (!derive) keep_portal(m, i, b);
        qn__portal_tally(m, i);
        qn__islands_join(m, p.q[0], p.q[1]);
    }
    return qn__mesh_portal_fill(m, err);
}

static qn_status read_buckets(qn_mesh *m, const uint8_t *b, const qnm_header *h, qn_error *err) {
    size_t cells = (size_t)h->gw * h->gh;
    m->grid_w = h->gw, m->grid_h = h->gh;
    m->grid_origin = qn__v2(get_f32(b), get_f32(b + 4));
    m->grid_cell = get_f32(b + 8);
    if (!qn__finite2(m->grid_origin) || !(m->grid_cell > 0.0f) || !isfinite(m->grid_cell))
        return corrupt(err, "bucket grid origin or cell size invalid");
    m->grid_inv_cell = 1.0f / m->grid_cell;
    m->cell_start = qn__alloc(&m->alloc, (cells + 1) * sizeof(uint32_t));
    if (!m->cell_start) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (buckets)");
    get_u32s(m->cell_start, b + 12, cells + 1);
    if (m->cell_start[0] != 0 || m->cell_start[cells] != h->entries) {
        m->cell_start[cells] = 0; /* so the free below sizes the list as empty */
        return corrupt(err, "bucket list starts do not span the entries");
    }
    m->cell_list = qn__alloc(&m->alloc, (size_t)h->entries * sizeof(uint32_t));
    if (!m->cell_list) {
        m->cell_start[cells] = 0;
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (buckets)");
    }
    /* Each bucket's quads copied and checked in one pass: in range and
    ** increasing (one branch per bucket). */
    const uint8_t *list = b + 12 + 4 * (cells + 1);
    for (size_t c = 0; c < cells; c++) {
        uint32_t s = m->cell_start[c], e = m->cell_start[c + 1];
        if (e < s) return corrupt(err, "bucket starts decrease");
        if (e > h->entries) return corrupt(err, "bucket start past the list");
        if (s == e) continue;
        uint32_t prev = get_u32(list + 4 * (size_t)s);
        bool bad = prev >= m->quad_count;
        m->cell_list[s] = prev;
        for (uint32_t i = s + 1; i < e; i++) {
            uint32_t x = get_u32(list + 4 * (size_t)i);
            bad |= (x >= m->quad_count) | (x <= prev);
            m->cell_list[i] = prev = x;
        }
        if (bad) return corrupt(err, "bucket list holds a bad quad index");
    }
    return QN_OK;
}

static qn_status read_mesh(const uint8_t *b, const qnm_header *h, const qn_allocator *alloc,
                           qn_mesh **out, qn_error *err) {
    qn_allocator a = qn__allocator(alloc);
    qn_mesh *m = qn__calloc(&a, 1, sizeof *m);
    if (!m) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh)");
    m->alloc = a;
    m->quad_count = h->quads;
    /* No per-quad tolerances (bd.tol): only pairing reads them. */
    qn__builder bd = {NULL, m, err, NULL, NULL, 0, 0, NULL, NULL};
    size_t q = h->quads;
    qn_status st = qn__mesh_alloc_quads(m, err);
    if (st == QN_OK) st = read_quads(&bd, b, err);
    if (st == QN_OK) st = read_portals(&bd, b + 37 * q, h->portals, err);
    if (st == QN_OK) st = read_buckets(m, b + 37 * q + (size_t)h->portals * QNM_PORTAL, h, err);
    if (st == QN_OK) {
        qn__islands_end(m); /* joined while the portals were read */
        st = qn__mesh_lean(m, err);
    }
    if (st != QN_OK) {
        if (err) err->code = st;
        qn_mesh_destroy(m);
        return st;
    }
    m->bytes = sizeof *m + qn__mesh_array_bytes(m);
    *out = m;
    return QN_OK;
}

qn_status qn_mesh_load_mem(const void *data, size_t len, const qn_allocator *alloc,
                           qn_mesh **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!out || (!data && len)) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    qnm_header h;
    qn_status st = read_header(data, len, &h, err);
    if (st != QN_OK) return st;
    return read_mesh((const uint8_t *)data + QNM_HEADER, &h, alloc, out, err);
}

qn_status qn_mesh_load(const char *path, const qn_allocator *alloc, qn_mesh **out,
                       qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!out || !path) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    const void *map;
    size_t len;
    qn_status st;
    if (qn__map_file(path, &map, &len)) { /* no copy of the file in memory */
        st = qn_mesh_load_mem(map, len, alloc, out, err);
        qn__unmap_file(map, len);
        return st;
    }
    qn_allocator a = qn__allocator(alloc);
    char *buf;
    st = qn__read_file(path, &a, &buf, &len, err);
    if (st != QN_OK) return st;
    st = qn_mesh_load_mem(buf, len, alloc, out, err);
    qn__free(&a, buf, len + 1);
    return st;
}


qn_status qn__qnm_load(const void *data, size_t len, const qn_allocator *alloc, qn_mesh **out,
                       const uint8_t **rest, size_t *rest_len, qn_error *err) {
    qnm_header h;
    *rest = NULL;
    *rest_len = 0;
    qn_status st = read_header(data, len, &h, err);
    if (st != QN_OK) return st;
    const uint8_t *b = (const uint8_t *)data + QNM_HEADER;
    st = read_mesh(b, &h, alloc, out, err);
    if (st == QN_OK && (h.flags & QNM_FLAG_LEVEL)) {
        *rest = b + mesh_part_bytes(&h);
        *rest_len = len - QNM_HEADER - (size_t)mesh_part_bytes(&h);
    }
    return st;
}
