/*
** Internal declarations shared by the modules in src/. Not installed.
** qn__ names are internal but non-static; plain names are static helpers.
*/
#ifndef QN_INTERNAL_H
#define QN_INTERNAL_H

#include "quadnav.h"
#include "core/heap.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

/* ---- compiler features ---------------------------------------------- */
/* Every compiler-specific attribute goes through these, so the sources
** build with any C11 compiler (the attributes only help gcc and clang). */
#if defined(__GNUC__) || defined(__clang__)
/* printf-style format checking: argument fmt is the format, args start at va. */
#define QN__PRINTF(fmt, va) __attribute__((format(printf, fmt, va)))
/* Inline even where the compiler would not: for a hot loop's helpers. */
#define QN__ALWAYS_INLINE inline __attribute__((always_inline))
/* A hint to fetch the cache line at p for reading soon (no effect on results). */
#define QN__PREFETCH(p) __builtin_prefetch(p)
#elif defined(_MSC_VER)
#define QN__PRINTF(fmt, va)
#define QN__ALWAYS_INLINE __forceinline
#define QN__PREFETCH(p) ((void)(p))
#else
#define QN__PRINTF(fmt, va)
#define QN__ALWAYS_INLINE inline
#define QN__PREFETCH(p) ((void)(p))
#endif
/* SSE2 (every x86-64 compiler has it), for the few hot loops that work on
** four floats at once (the node searches' rows, the landmark bound, the
** exact sampler's wedge test and corner screen); without it, their plain
** loops, with the same results. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
#define QN__HAVE_SSE2 1
#include <emmintrin.h>
#else
#define QN__HAVE_SSE2 0
#endif
/* The index of the lowest set bit of x (x != 0). */
static inline uint32_t qn__ctz32(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_ctz(x);
#else
    uint32_t n = 0;
    for (; !(x & 1u); x >>= 1) n++;
    return n;
#endif
}
/* The number of set bits of x. */
static inline uint32_t qn__popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_popcountll(x);
#else
    uint32_t n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
#endif
}
/* How many items ahead a loop over scattered reads fetches them: what an
** item's record names (a slot, a quad's box) is fetched half as far ahead,
** once the record fetched this far ahead has come. */
#define QN__FETCH_AHEAD 16u

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
/* Is a fresh block of n bytes from a already zero (the C library's
** allocator maps large blocks itself, util.c)? */
bool qn__fresh_zero(const qn_allocator *a, size_t n);

/* ---- errors (util.c) ------------------------------------------------ */

/* Clears err (if not NULL) to QN_OK and returns QN_OK. */
qn_status qn__error_clear(qn_error *err);
/* Fills err (if not NULL) with code, index, and a printf-style message;
** returns code, so callers can write `return qn__fail(err, ...)`. */
qn_status qn__fail(qn_error *err, qn_status code, uint32_t index, const char *fmt, ...)
    QN__PRINTF(4, 5);
/* Sets err->path (if err is not NULL). */
void qn__error_path(qn_error *err, const char *fmt, ...) QN__PRINTF(2, 3);

/* Reads a whole file into memory (NUL-terminated for convenience) with the
** allocator. QN_E_IO when it cannot be opened or read, QN_E_LIMIT above
** QN_MAX_FILE_BYTES. *size gets the byte count (without the NUL); free with
** qn__free(a, buf, size + 1). */
qn_status qn__read_file(const char *path, const qn_allocator *a, char **buf, size_t *size,
                        qn_error *err);

/* Maps the regular file at path read-only (1 .. QN_MAX_FILE_BYTES bytes)
** where the system can; false, with nothing to undo, when it cannot (then
** read it with qn__read_file, which reports why). Unmap with
** qn__unmap_file(*data, *len). Binary files only: no NUL follows the bytes. */
bool qn__map_file(const char *path, const void **data, size_t *len);
void qn__unmap_file(const void *data, size_t len);

/* ---- JSON text checks (json_check.c) ---------------------------------- */

/* Is text[0..len) one well-formed JSON value (with blanks around it), nested
** at most max_depth deep? Allocates nothing. */
bool qn__json_well_formed(const char *text, size_t len, uint32_t max_depth);
/* Offset of the first \u0000 escape inside a string, or len when none. */
size_t qn__json_find_nul_escape(const char *text, size_t len);

/* ---- JSON read in place (json_read.c) ---------------------------------- */

/* A JSON value inside a text that passed qn__json_well_formed and is
** followed by a readable NUL: the pointer to its first byte; NULL for none.
** Nothing is allocated; values read as cJSON reads them. */
typedef const char *qn__jv;
static inline bool qn__jv_is_number(qn__jv v) { return v && (*v == '-' || (*v >= '0' && *v <= '9')); }
static inline bool qn__jv_is_string(qn__jv v) { return v && *v == '"'; }
static inline bool qn__jv_is_true(qn__jv v) { return v && *v == 't'; }
static inline bool qn__jv_is_bool(qn__jv v) { return v && (*v == 't' || *v == 'f'); }
static inline bool qn__jv_is_null(qn__jv v) { return v && *v == 'n'; }
static inline bool qn__jv_is_array(qn__jv v) { return v && *v == '['; }
static inline bool qn__jv_is_object(qn__jv v) { return v && *v == '{'; }
/* The first element of an array, or the first key of an object; NULL when
** empty or not a container. */
qn__jv qn__jv_child(qn__jv v);
/* The element after v in its array, or the key after key v in its object;
** NULL after the last. O(size of v). */
qn__jv qn__jv_next(qn__jv v);
/* Where the value at v ends (just past it), and the element after a value
** that ends at `end` (NULL after the last): qn__jv_next in two steps, for a
** reader that keeps where a value ended instead of skipping it again. */
const char *qn__jv_end(qn__jv v);
qn__jv qn__jv_after(const char *end);
/* Just past the container whose last element or member value ends at end. */
const char *qn__jv_close(const char *end);
/* The value of a key, and whether a key reads as name. */
qn__jv qn__jv_key_value(qn__jv key);
bool qn__jv_key_is(qn__jv key, const char *name);
/* The value of obj's first member called name; NULL when none (or obj is
** not an object). */
qn__jv qn__jv_member(qn__jv obj, const char *name);
/* A number's value (infinity when it overflows, as strtod gives it). */
double qn__jv_number(qn__jv v);
/* Decodes a string into buf (at most cap - 1 bytes and a NUL when cap > 0;
** buf may be NULL when cap is 0); returns its whole decoded length. */
size_t qn__jv_string(qn__jv v, char *buf, size_t cap);
/* Offset of the first \u escape in a well-formed text that is a lone
** UTF-16 surrogate, or len when none. */
size_t qn__json_find_bad_escape(const char *text, size_t len);

/* Writes n bytes to path (created or truncated); QN_E_IO with the system's
** reason when it cannot. */
qn_status qn__write_file(const char *path, const void *buf, size_t n, qn_error *err);

/* ---- baked files (io/bake.c) ------------------------------------------- */

/* Little-endian output; p NULL: only count bytes into n. */
typedef struct qn__wbuf {
    uint8_t *p;
    size_t n;
} qn__wbuf;
void qn__put(qn__wbuf *w, const void *src, size_t n);
void qn__put_u32(qn__wbuf *w, uint32_t v);
void qn__put_f32(qn__wbuf *w, float f);
uint32_t qn__get_u32(const uint8_t *b);
float qn__get_f32(const uint8_t *b);
/* Appends a level section after the mesh (level.c); NULL: a mesh file. */
typedef void (*qn__level_writer)(qn__wbuf *w, const void *ctx);
qn_status qn__qnm_save_mem(const qn_mesh *m, qn__level_writer level, const void *ctx, void *buf,
                           size_t cap, size_t *len, qn_error *err);
qn_status qn__qnm_save_file(const qn_mesh *m, qn__level_writer level, const void *ctx,
                            const char *path, qn_error *err);
/* Loads the mesh of a baked file (checksums, sizes, contents checked);
** *rest and *rest_len get its level section (NULL and 0 when none). */
qn_status qn__qnm_load(const void *data, size_t len, const qn_allocator *alloc, qn_mesh **out,
                       const uint8_t **rest, size_t *rest_len, qn_error *err);
/* Recomputes both checksums of a baked file in place: tests and fuzzing
** use it to reach the checks behind them. */
void qn__qnm_reseal(uint8_t *buf, size_t len);
/* Rewrites only the header's checksum (tests). */
void qn__qnm_reseal_header(uint8_t *buf);

/* ---- name tables (io/names.c) ----------------------------------------- */

/* Optional unique names of numbered elements (a level's quad ids): one
** string pool, an offset per element (QN_NONE: unnamed) and the entries
** sorted by name for lookup. All zero when no element has a name. */
typedef struct qn__name_entry {
    const char *name;
    uint32_t index;
} qn__name_entry;

typedef struct qn__names {
    char *pool;
    size_t pool_bytes, used;
    uint32_t *offset; /* per element */
    qn__name_entry *entries;
    uint32_t elements, cap, count;
} qn__names;

/* Room for `named` names of `pool_bytes` bytes in all (NULs included)
** among `elements` elements; allocates nothing when named is 0. QN_E_NOMEM
** (free with qn__names_free either way). */
qn_status qn__names_init(qn__names *t, const qn_allocator *a, uint32_t elements, uint32_t named,
                         size_t pool_bytes);
/* Adds the name of element index (< elements, each at most once), within
** the room promised to qn__names_init. */
void qn__names_add(qn__names *t, uint32_t index, const char *name);
/* Sorts for lookup. A name used twice: QN_E_DUPLICATE_NAME with *first and
** *later the two element indices (the earliest second use); else QN_OK. */
qn_status qn__names_finish(qn__names *t, uint32_t *first, uint32_t *later);
/* The element called name, or QN_NONE. O(log n). */
uint32_t qn__names_find(const qn__names *t, const char *name);
/* The name of an element, or NULL when it has none or is out of range. */
const char *qn__names_get(const qn__names *t, uint32_t index);
void qn__names_free(qn__names *t, const qn_allocator *a);

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

/* A sampling call's arguments checked: no field, no dir, or no ahead where
** one is asked for (want_ahead) are refused, their outputs cleared
** (dir zero, ahead 0, quad_io QN_NONE) and QN_E_INVALID_ARG returned. */
static inline qn_status qn__sample_args(const void *field, uint32_t *quad_io, qn_vec2 *dir,
                                        bool want_ahead, float *ahead) {
    if (field && dir && (!want_ahead || ahead)) return QN_OK;
    if (dir) *dir = (qn_vec2){0.0f, 0.0f};
    if (ahead) *ahead = 0.0f;
    if (quad_io) *quad_io = QN_NONE;
    return QN_E_INVALID_ARG;
}

/* The point of segment a-b nearest p (a when the segment is a point), and
** p's distance to it. */
static inline qn_vec2 qn__closest_on_segment(qn_vec2 p, qn_vec2 a, qn_vec2 b) {
    qn_vec2 ab = qn__sub(b, a);
    float l2 = qn__dot(ab, ab);
    float t = l2 > 0.0f ? qn__dot(qn__sub(p, a), ab) / l2 : 0.0f;
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return qn__add(a, qn__scale(ab, t));
}
static inline float qn__point_segment_dist(qn_vec2 p, qn_vec2 a, qn_vec2 b) {
    return qn__len(qn__sub(p, qn__closest_on_segment(p, a, b)));
}

/* A float's bits as an unsigned key in the same order, for radix sorts (no
** NaN; -0 reads as +0, which compares equal to it). */
static inline uint32_t qn__float_order_key(float f) {
    f += 0.0f;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u >> 31 ? ~u : u | (1u << 31);
}

/* ---- mesh internals (mesh.c) ----------------------------------------- */

/* Inward edge planes of a convex quad: inside when nx*x + ny*y >= c for all 4. */
typedef struct qn__planes {
    float nx[4], ny[4], c[4];
} qn__planes;

/* A portal as the code reads it: the two quads (a < b), the segment p0 ->
** p1 along a's edge, its width, and which edge of a and of b it lies on.
** The mesh keeps it in parts (qn_mesh: pq, pedge, pgeo); qn__portal_at
** puts them together. The mid point and direction are derived
** (qn__portal_mid, qn__portal_dir). */
typedef struct qn__portal {
    uint32_t q[2];
    qn_vec2 p0, p1;
    float width;
    uint8_t edge[2];
} qn__portal;

/* The parts a mesh keeps per portal: its quads always; its segment only
** when the quads' rectangles do not give it (qn__portal_at). */
typedef struct qn__pq {
    uint32_t q[2];
} qn__pq;
typedef struct qn__pgeo {
    qn_vec2 p0, p1;
    float width;
} qn__pgeo;

/* A portal's mid point, and its unit direction from p0 to p1: the same
** bits the mesh build once stored. */
static inline qn_vec2 qn__seg_mid(qn_vec2 p0, qn_vec2 p1) {
    return qn__scale(qn__add(p0, p1), 0.5f);
}
static inline qn_vec2 qn__seg_dir(qn_vec2 p0, qn_vec2 p1, float width) {
    return qn__scale(qn__sub(p1, p0), 1.0f / width);
}
static inline qn_vec2 qn__portal_mid(const qn__portal *p) { return qn__seg_mid(p->p0, p->p1); }
static inline qn_vec2 qn__portal_dir(const qn__portal *p) {
    return qn__seg_dir(p->p0, p->p1, p->width);
}
/* The same of a segment alone (qn__mesh_segments). */
static inline qn_vec2 qn__pgeo_mid(const qn__pgeo *p) { return qn__seg_mid(p->p0, p->p1); }
static inline qn_vec2 qn__pgeo_dir(const qn__pgeo *p) {
    return qn__seg_dir(p->p0, p->p1, p->width);
}

/* Each quad's boundary as a cycle of sub-edges (boundary.c): quad q's cycle
** is bv[bstart[q] .. bstart[q + 1]); sub-edge j runs from vertex j to j + 1
** (cyclically) and is portal bportal[j] or a wall (QN_NONE). Equal points
** share a vertex id (bvid, < nv). psub[2e + side] is portal e's sub-edge
** in its quad q[side], counted from that quad's bstart. vkind[id] holds
** QN__VK_* flags for the fully open mesh at radius 0. */
#define QN__VK_WALL 1u   /* a wall ends at this point */
#define QN__VK_CORNER 2u /* ... and the open quads round it fill more than a half turn */
/* cmask[q]'s flag for a cycle of more than 31 vertices: its corners are
** found by their kind (qn__next_corner). */
#define QN__CMASK_LONG 0x80000000u
typedef struct qn__boundary {
    uint32_t nb, nv;
    qn_vec2 *bv;
    uint32_t *bstart, *bportal, *bvid, *psub;
    uint8_t *vkind;
    /* Per vertex id: the sum of the unit directions of the walls leaving it
    ** (fully open mesh, radius 0); at an obstacle corner it points into the
    ** obstacle. */
    qn_vec2 *vwall;
    /* bv and bportal share a block (ebytes), bstart, psub and bvid another
    ** (blbytes), vwall and vkind a third (vbytes); bytes: all of these. */
    void *eblock, *block, *vblock;
    size_t bytes, ebytes, blbytes, vbytes;
    /* Per quad: the vertices of its cycle that are obstacle corners
    ** (QN__VK_CORNER), bit t for vertex t; QN__CMASK_LONG for a longer cycle
    ** with some. Read through qn__next_corner. */
    uint32_t *cmask;
    size_t cbytes;
} qn__boundary;

/* The first obstacle corner of quad q's cycle at vertex `from` or after
** (its place in the cycle), or UINT32_MAX when none is left. */
static inline uint32_t qn__next_corner(const qn__boundary *b, uint32_t q, uint32_t from) {
    uint32_t m = b->cmask[q];
    if (!(m & QN__CMASK_LONG)) {
        m = from < 31 ? m & (~0u << from) : 0;
        return m ? qn__ctz32(m) : UINT32_MAX;
    }
    uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base;
    for (uint32_t t = from; t < k; t++)
        if (b->vkind[b->bvid[base + t]] & QN__VK_CORNER) return t;
    return UINT32_MAX;
}

struct qn_mesh {
    qn_allocator alloc;
    uint32_t quad_count;
    uint32_t portal_count;
    uint32_t island_count;
    float eps; /* geometric tolerance in world units */
    /* The same 8 float epsilons taken at the mesh's extent instead: what
    ** lengths measured inside the level may be off by, where eps is what a
    ** coordinate may be. The two differ for a level far from the origin. */
    float eps_ext;
    qn_rect bounds;
    /* A mesh whose quads are all rectangles (qn__axis_rect) keeps each as
    ** its box (rects) and no corners or planes once built; any other keeps
    ** 4 corners and the edge planes per quad (rects NULL). Read corners
    ** through qn__corners, planes through qn__quad_planes. While a mesh
    ** of rectangles is built, it has both rects and corners. */
    qn_vec2 *corners;   /* 4 per quad */
    qn__planes *planes; /* 1 per quad; NULL when every quad is a rectangle */
    qn_rect *rects;     /* 1 per quad when every quad is a rectangle, else NULL */
    float *cost;        /* 1 per quad; NULL while every quad costs 1 (qn__quad_cost) */
    uint8_t *blocked;   /* 1 per quad */
    uint32_t *island;   /* 1 per quad; QN_NONE when blocked */
    /* Portals (read them through qn__portal_at): quads, edges (2 per
    ** portal) and segments; pedge and pgeo are NULL when the quads'
    ** rectangles give every portal's edges and segment bit for bit, as in
    ** a mesh of rectangles whose neighbours meet exactly (grid imports). */
    qn__pq *pq;
    uint8_t *pedge;
    qn__pgeo *pgeo;
    uint32_t *qp_start; /* quad_count + 1: portals of quad q are qp_list[qp_start[q]..] */
    uint32_t *qp_list;
    /* Uniform grid of buckets over the bounds: quads whose tolerant region
    ** (edges pushed out by eps) meets a bucket, in increasing quad order;
    ** the outer buckets reach to infinity. */
    qn_vec2 grid_origin;
    float grid_inv_cell;
    float grid_cell;
    uint32_t grid_w, grid_h;
    uint32_t *cell_start; /* grid_w*grid_h + 1 */
    /* The lists' quads (read them through qn__bucket_quad): 32 bits each,
    ** or, once built, when every bucket's quads lie within 65,536 of its
    ** first, 16 bits above that first (cell_base) and cell_list NULL. */
    uint32_t *cell_list;
    uint32_t *cell_base;
    uint16_t *cell_off;
    /* Built by the first search that needs it (qn__mesh_boundary), then
    ** shared; published with an atomic compare-and-swap. */
    _Atomic(qn__boundary *) bnd;
    /* For a mesh that derives its portals (pgeo NULL): their segments,
    ** built by the first search or sampler that reads them in its hot loop
    ** (qn__mesh_segments), then shared like bnd. */
    _Atomic(qn__pgeo *) segs;
    size_t bytes;
    /* Dynamic changes: version counts them; journal[v % QN__JOURNAL] is the
    ** quad changed by change number v (1-based). */
    uint64_t version;
    uint32_t journal[1024];
};

#define QN__JOURNAL 1024u

/* A function kept out of line: a rare case out of a hot caller's way. */
#if defined(__GNUC__) || defined(__clang__)
#define QN__NOINLINE __attribute__((noinline))
#else
#define QN__NOINLINE
#endif

/* The interval engine's tolerance, and a point path's berth round corners:
** four tolerances of the extent (lengths inside the level), not under a
** quarter of eps (a couple of float steps of the coordinates themselves)
** and not over 4 eps. The same 4 eps for a level near the origin; for one
** 30,000 units out, 4 eps (0.11) was 5 % of its 2-unit quads: the engine
** took roots within that of a sub-edge's line for roots seeing along it
** (costs up to 42 % long), and point paths rounded every corner that far
** out (0.7 % long). */
static inline float qn__tol_inner(const qn_mesh *m) {
    float t = 4.0f * m->eps_ext;
    t = t > 0.25f * m->eps ? t : 0.25f * m->eps;
    return t < 4.0f * m->eps ? t : 4.0f * m->eps;
}

/* The breadth a point agent keeps from walls and corners (the sampler's
** least radius): 8 times the mesh's tolerance (float noise in the
** coordinates, which grows with the largest of them) and 56 times that
** tolerance taken at the level's extent instead (wedge slack, which grows
** with distances inside the level): 64 tolerances, about 6e-5 of the
** largest coordinate, for a level whose corner is at the origin. Not
** less: an exact field's wedges are kept to a step of angle, and a point
** within that slack of a wedge's side, just before the corner of a
** neighbouring quad that casts it, can take a root past that corner and
** aim across it by up to about 2e-4 of its distance to the root; at 8
** tolerances in all a point agent grazed such a corner (test_exact's
** closing scenes). Not more for a level far from the origin: 64
** tolerances there are 1.2 units at 20,000, and units of a 1-unit maze
** stuck in its corridors. */
static inline float qn__hair(const qn_mesh *m) {
    float h = 8.0f * m->eps + 56.0f * m->eps_ext;
    return h < 64.0f * m->eps ? h : 64.0f * m->eps;
}

/* Are a and b the same bits (so 0 and -0 differ)? */
static inline bool qn__same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Is c (4 corners) an axis-aligned rectangle listed counter-clockwise from
** its lower left corner, as level "rect"s and grid imports give them? The
** shared coordinates must be the same bits: a mesh of rectangles keeps
** only each box (min, max) and gives its corners back from it, so a quad
** with 0 at one corner and -0 at the next keeps its corners instead (its
** file saves back to the bytes it was loaded from). */
static inline bool qn__axis_rect(const qn_vec2 *c) {
    return qn__same_bits(c[0].y, c[1].y) && qn__same_bits(c[1].x, c[2].x) &&
           qn__same_bits(c[2].y, c[3].y) && qn__same_bits(c[3].x, c[0].x) && c[0].x < c[1].x &&
           c[1].y < c[2].y;
}

/* The edge planes of a rectangle (qn__axis_rect), bit for bit those the
** general construction (mesh.c) computes: unit normals (-0, 1), (-1, 0),
** (-0, -1), (1, 0) and their offsets, so a mesh of rectangles keeps none. */
static inline void qn__rect_planes(const qn_vec2 *c, qn__planes *pl) {
    static const float nx[4] = {-0.0f, -1.0f, -0.0f, 1.0f}, ny[4] = {1.0f, 0.0f, -1.0f, 0.0f};
    for (int i = 0; i < 4; i++) {
        pl->nx[i] = nx[i];
        pl->ny[i] = ny[i];
        pl->c[i] = (float)((double)nx[i] * (double)c[i].x + (double)ny[i] * (double)c[i].y);
    }
}

/* Corner k (0..3) of box r: from its lower left corner, counter-clockwise. */
static inline qn_vec2 qn__rect_corner(qn_rect r, unsigned k) {
    return qn__v2((k == 1 || k == 2) ? r.max.x : r.min.x, k >= 2 ? r.max.y : r.min.y);
}

/* Quad q's 4 corners: the stored ones, or those of its rectangle written
** into tmp (qn__rect_corner). */
static inline const qn_vec2 *qn__corners(const qn_mesh *m, uint32_t q, qn_vec2 tmp[4]) {
    if (!m->rects) return &m->corners[4 * (size_t)q];
    for (unsigned k = 0; k < 4; k++)
        tmp[k] = qn__rect_corner(m->rects[q], k);
    return tmp;
}

/* Quad q's edge planes: the stored ones, or those of its rectangle
** written into *tmp. */
static inline const qn__planes *qn__quad_planes(const qn_mesh *m, uint32_t q, qn__planes *tmp) {
    if (m->planes) return &m->planes[q];
    qn_vec2 c[4];
    qn__rect_planes(qn__corners(m, q, c), tmp);
    return tmp;
}

/* Inclusive point-in-quad test within tol of the quad's sides. A
** rectangle's planes reduce it to the same comparisons on its sides (the
** products with 0 and +-1 are exact; x1 + tol is the negation of
** -x1 - tol). */
static inline bool qn__quad_holds(const qn_mesh *m, uint32_t q, qn_vec2 p, float tol) {
    if (!m->planes) {
        qn_rect r = m->rects[q];
        return !(p.y < r.min.y - tol || p.x > r.max.x + tol || p.y > r.max.y + tol ||
                 p.x < r.min.x - tol);
    }
    const qn__planes *pl = &m->planes[q];
    for (int i = 0; i < 4; i++)
        if (pl->nx[i] * p.x + pl->ny[i] * p.y < pl->c[i] - tol) return false;
    return true;
}
/* The same with the mesh tolerance: the library's point-in-quad test. */
static inline bool qn__quad_contains(const qn_mesh *m, uint32_t q, qn_vec2 p) {
    return qn__quad_holds(m, q, p, m->eps);
}
/* The mean of four corners k; a quad's centre (qn__quad_centre). */
static inline qn_vec2 qn__corners_centre(const qn_vec2 *k) {
    return qn__v2(0.25f * (k[0].x + k[1].x + k[2].x + k[3].x),
                  0.25f * (k[0].y + k[1].y + k[2].y + k[3].y));
}
static inline qn_vec2 qn__quad_centre(const qn_mesh *m, uint32_t q) {
    qn_vec2 k_at[4];
    return qn__corners_centre(qn__corners(m, q, k_at));
}
/* The point of rectangle r nearest p (p itself when r holds it). */
static inline qn_vec2 qn__rect_nearest(qn_rect r, qn_vec2 p) {
    return qn__v2(p.x < r.min.x ? r.min.x : (p.x > r.max.x ? r.max.x : p.x),
                  p.y < r.min.y ? r.min.y : (p.y > r.max.y ? r.max.y : p.y));
}
/* Distance from p to the convex polygon v[0..n), counter-clockwise (0
** inside). */
static inline float qn__convex_distance(qn_vec2 p, const qn_vec2 *v, int n) {
    bool inside = true;
    float best = INFINITY;
    for (int i = 0; i < n; i++) {
        qn_vec2 a = v[i], b = v[i + 1 == n ? 0 : i + 1];
        if (qn__cross(qn__sub(b, a), qn__sub(p, a)) < 0.0f) inside = false;
        float d = qn__point_segment_dist(p, a, b);
        best = d < best ? d : best;
    }
    return inside ? 0.0f : best;
}
/* Distance from p to convex quad q (0 inside). */
static inline float qn__quad_distance(const qn_mesh *m, uint32_t q, qn_vec2 p) {
    if (!m->planes) return qn__len(qn__sub(qn__rect_nearest(m->rects[q], p), p));
    qn_vec2 c_at[4];
    return qn__convex_distance(p, qn__corners(m, q, c_at), 4);
}

/* Entry i (cell_start[cell] <= i < cell_start[cell + 1]) of a bucket list. */
static inline uint32_t qn__bucket_quad(const qn_mesh *m, size_t cell, uint32_t i) {
    return m->cell_off ? m->cell_base[cell] + m->cell_off[i] : m->cell_list[i];
}

/* Quad q's cost. */
static inline float qn__quad_cost(const qn_mesh *m, uint32_t q) { return m->cost ? m->cost[q] : 1.0f; }

/* The quad on the other side of portal e from quad q. */
static inline uint32_t qn__portal_other(const qn_mesh *m, uint32_t e, uint32_t q) {
    return m->pq[e].q[0] == q ? m->pq[e].q[1] : m->pq[e].q[0];
}

/* Portal p's edges and segment from its quads' (p->q) rectangles, which
** meet exactly: the edge of a that b touches (0 bottom, 1 right, 2 top,
** 3 left, counter-clockwise), b's facing one, and along a's edge the part
** both rectangles share. */
static QN__ALWAYS_INLINE void qn__portal_derive(const qn_mesh *m, qn__portal *p) {
    qn_rect a = m->rects[p->q[0]], b = m->rects[p->q[1]];
    float xlo = a.min.x > b.min.x ? a.min.x : b.min.x, xhi = a.max.x < b.max.x ? a.max.x : b.max.x;
    float ylo = a.min.y > b.min.y ? a.min.y : b.min.y, yhi = a.max.y < b.max.y ? a.max.y : b.max.y;
    p->edge[0] = a.max.x == b.min.x ? 1 : (a.min.x == b.max.x ? 3 : (a.max.y == b.min.y ? 2 : 0));
    p->edge[1] = (uint8_t)((p->edge[0] + 2) & 3u);
    /* The width as qn__len gives it: the square root of a rounded square
    ** is the number itself. */
    switch (p->edge[0]) {
    case 0: p->p0 = qn__v2(xlo, a.min.y), p->p1 = qn__v2(xhi, a.min.y), p->width = xhi - xlo; break;
    case 1: p->p0 = qn__v2(a.max.x, ylo), p->p1 = qn__v2(a.max.x, yhi), p->width = yhi - ylo; break;
    case 2: p->p0 = qn__v2(xhi, a.max.y), p->p1 = qn__v2(xlo, a.max.y), p->width = xhi - xlo; break;
    default: p->p0 = qn__v2(a.min.x, yhi), p->p1 = qn__v2(a.min.x, ylo), p->width = yhi - ylo; break;
    }
}

/* Portal e as a whole (qn__portal). */
static QN__ALWAYS_INLINE qn__portal qn__portal_at(const qn_mesh *m, uint32_t e) {
    qn__portal p;
    p.q[0] = m->pq[e].q[0];
    p.q[1] = m->pq[e].q[1];
    if (m->pgeo) {
        p.edge[0] = m->pedge[2 * (size_t)e];
        p.edge[1] = m->pedge[2 * (size_t)e + 1];
        p.p0 = m->pgeo[e].p0;
        p.p1 = m->pgeo[e].p1;
        p.width = m->pgeo[e].width;
    } else {
        qn__portal_derive(m, &p);
    }
    return p;
}
static inline float qn__portal_width(const qn_mesh *m, uint32_t e) {
    if (m->pgeo) return m->pgeo[e].width;
    qn__portal p = qn__portal_at(m, e);
    return p.width;
}
static inline qn_vec2 qn__portal_mid_at(const qn_mesh *m, uint32_t e) {
    qn__portal p = qn__portal_at(m, e);
    return qn__portal_mid(&p);
}

/* Every portal's segment, indexed by portal: the mesh's own (pgeo), or for
** a mesh that derives them from its rectangles a table built on first use
** (any thread may ask; one copy is kept until the mesh is destroyed, and
** qn_mesh_bytes counts it from then on); NULL when out of memory. */
const qn__pgeo *qn__mesh_segments(const qn_mesh *m);

/* Builds or frees a mesh's boundary cycles (boundary.c). */
qn_status qn__boundary_build(const qn_mesh *m, qn__boundary **out, qn_error *err);
/* The mesh's boundary cycles, built on first use (any thread may ask; one
** copy wins and is kept until the mesh is destroyed); NULL on failure. */
const qn__boundary *qn__mesh_boundary(const qn_mesh *m, qn_error *err);
void qn__boundary_free(const qn_allocator *a, qn__boundary *b);
/* The interior angle at vertex s of the cycle of k vertices from base (pi on
** a straight edge). */
float qn__boundary_angle(const qn__boundary *b, uint32_t base, uint32_t k, uint32_t s);
/* A wall vertex whose angles in the open quads round it sum to more than
** this sticks out into them: an obstacle corner (the mesh's own, and those
** its state adds). */
#define QN__CORNER_OPEN (3.14159265358979f + 1e-3f)

/* Walks segment a-b through the quads, crossing only portals open for
** radius (mesh_query.c): QN_OK when it stays inside; QN_E_OUTSIDE when a is
** in no quad; QN_E_BLOCKED when a is only in blocked quads or the segment
** leaves through a wall or a closed portal (*hit, if not NULL: where). */
qn_status qn__segment_walk(const qn_mesh *m, qn_vec2 a, qn_vec2 b, float radius, uint32_t hint,
                           qn_vec2 *hit);

/* (Re)computes the islands from the blocked flags and portals (mesh.c). */
void qn__mesh_islands(qn_mesh *m);

/* Nearest quad to p among those `keep` accepts (all when NULL), and its
** closest point; QN_NONE when none qualifies (mesh_query.c). */
typedef bool (*qn__quad_filter)(const void *ctx, uint32_t quad);
uint32_t qn__nearest(const qn_mesh *m, qn_vec2 p, qn__quad_filter keep, const void *ctx,
                     qn_vec2 *closest);

/* Locate without argument checks; QN_NONE when outside (mesh_query.c). */
uint32_t qn__locate(const qn_mesh *m, qn_vec2 p, uint32_t hint);
/* A quad other than not_q whose tolerant inside holds p and for which
** ok(ctx, q) holds; QN_NONE when there is none. Where quads touch, a point
** within the tolerance of their shared line is inside both, and
** qn__locate answers the first it meets. */
uint32_t qn__locate_other(const qn_mesh *m, qn_vec2 p, uint32_t not_q, qn__quad_filter ok,
                          const void *ctx);

/* ---- level internals (level.c, bake.c) --------------------------------- */

typedef struct level_point {
    char name[QN_MAX_NAME + 1];
    qn_vec2 at;
} level_point;

struct qn_level {
    qn_allocator alloc;
    qn_mesh *mesh;
    qn_grid *grid;
    level_point *goals;
    level_point *spawns;
    uint32_t goal_count;
    uint32_t spawn_count;
    char name[QN_MAX_NAME + 1];
    qn__names quad_ids; /* the quads' "id"s, for qn_level_find_quad */
};

/* ---- field internals (field.c) ----------------------------------------- */

/* Exit values with this bit set mark a goal quad; the low bits index the
** field's goals, sorted by quad. */
#define QN__GOAL_BIT 0x80000000u

/* One quad's entry of an instance: 8 bytes. */
typedef struct qn__slot {
    float cost;
    uint32_t exit;
} qn__slot;

/* A discrete field's exit chain as the funnel sampler walks it: per quad,
** the crossable ends of its exit portal seen leaving it (left, right: the
** same points portal_sides gives, sample.c) and the quad beyond; `next` is
** the slot's exit instead for a goal quad (QN__GOAL_BIT) or an
** unreachable one (QN_NONE). One record a portal instead of three reads. */
typedef struct qn__hop {
    qn_vec2 l, r;
    uint32_t next;
} qn__hop;

typedef struct qn__goal {
    qn_vec2 at;
    uint32_t quad;
    uint32_t index; /* position in the caller's goal array */
} qn__goal;

/* Per-portal state a repairable field keeps between updates: the portal
** costs, the shortest-path tree over portals (parent, first child, next
** sibling), the side each cost came through, and an idle heap. */
typedef struct qn__tree {
    qn_vec2 *x; /* where the best path crosses each portal */
    float *g;
    uint32_t *pred, *child, *sib;
    qn__hent *heap;
    uint32_t *pos;
    uint8_t *via;
} qn__tree;

/* An exact instance (interval.c): per quad (qstart, like a CSR) the entries of
** the roots through which shortest paths leave its points. An entry's
** root index has QN__SPM_ON set when the root sees all of the quad;
** otherwise it serves the wedge between the directions l and r from the
** root (r on the right, as the root looks into the quad), each kept as a
** 16-bit diamond angle (qn__spm_dir). A root keeps its position, exact cost
** to the goal and the direction to the root after it (a diamond angle; a
** goal point has none), in 16 bytes. An entry whose root sees all of the
** quad (a goal point, or a corner on the quad's boundary) keeps in l the
** side of the obstacle the corner's path bends round there, seen along
** the root's out (qn__spm_side: +1 left, -1 right, 0 not known: the
** root's own side when it has one, else what the entry's view tells). The
** instance works out each quad's exit for qn_field_quad_exit on the
** first call (qn__spm_exits_get; never for a seeded field: hier.c's local
** fields never ask); quad costs are worked out from the entries. A quad's
** wedge entries come first, then those whose root sees all of it; each
** group least bound (its root's cost plus its distance to the quad) first. */
#define QN__SPM_ON 0x80000000u
/* qstart[q] keeps its first entry below QN__SPM_QMASK, and
** QN__SPM_QCORNERS when quad q has obstacle corners on its boundary (so
** the sampler reads the boundary's corner list only then), and
** QN__SPM_QXCORNERS when it has corners that the mesh's state at the build
** adds (qn__spm's xq, xc). */
#define QN__SPM_QCORNERS 0x80000000u
#define QN__SPM_QXCORNERS 0x40000000u
#define QN__SPM_QMASK 0x3fffffffu
typedef struct qn__sroot {
    qn_vec2 at;
    float g;
    uint16_t out; /* the direction to the root after it, a diamond angle */
    int8_t side;  /* the obstacle, seen along out: +1 left, -1 right, 0 unknown */
    uint8_t goal; /* QN__SROOT_GOAL at a goal point (no root after it), with
                  ** QN__SROOT_TIGHT for a goal proper (cost 0) nearer a
                  ** wall than the field's radius, as the field was built */
} qn__sroot;
#define QN__SROOT_GOAL 1u
#define QN__SROOT_TIGHT 2u
_Static_assert(sizeof(qn__sroot) == 16, "a root is 16 bytes (quadnav.h says so)");
typedef struct qn__sent {
    uint32_t root;
    uint16_t l, r; /* diamond angles; l: the side code for a root seeing all */
} qn__sent;
/* A diamond angle: t in [0, 4) round the square |x| + |y| = 1, from +x
** toward +y (t = y / (|x| + |y|) in the first quadrant, and so on), in
** units of 1 / QN__SPM_ANGLE, modulo 4. The direction it stands for has
** |x| + |y| = 1 (its length is 0.71 to 1); a step turns it by at most
** 2 / QN__SPM_ANGLE radians. */
#define QN__SPM_ANGLE 16384.0f
static inline qn_vec2 qn__spm_dir(uint16_t a) {
    static const float base[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    static const float step[4][2] = {{-1, 1}, {-1, -1}, {1, -1}, {1, 1}};
    unsigned k = (unsigned)a >> 14;
    float f = (float)(a & 0x3FFFu) * (1.0f / QN__SPM_ANGLE);
    return (qn_vec2){base[k][0] + f * step[k][0], base[k][1] + f * step[k][1]};
}
/* The side code of an entry whose root sees all of its quad. */
#define QN__SPM_LEFT 1u
#define QN__SPM_RIGHT 2u
static inline float qn__spm_side(const qn__sent *e) {
    return e->l == QN__SPM_LEFT ? 1.0f : (e->l == QN__SPM_RIGHT ? -1.0f : 0.0f);
}
typedef struct qn__xcorner {
    qn_vec2 at, wall;
} qn__xcorner;
typedef struct qn__spm {
    uint32_t *qstart;
    qn__sent *ents;
    qn__sroot *roots;
    uint32_t nents, nroots, rcap;
    /* Per sub-edge of the mesh's boundary (bit s of open, nb of them): an
    ** open portal for the field's radius as the mesh stood at the build;
    ** the rest are walls (qn__spm_wall). NULL when those are just the
    ** boundary's portals (none closed for the radius, no quad blocked):
    ** the boundary then tells, and never changes. */
    uint8_t *open;
    uint32_t nb;
    /* Corners the mesh's state adds (ends of portals closed for the radius
    ** or by a blocked quad; for a hierarchical local field also the parent
    ** mesh's corners on its quads, hier.c), nxc of them, by quad: xq[i] is
    ** the open quad whose boundary has corner xc[i] (increasing), with the
    ** sum of the unit directions of the walls leaving it (toward the
    ** obstacle). */
    uint32_t nxc;
    uint32_t *xq;
    qn__xcorner *xc;
    /* The quads' exits, made and published on first use (NULL until
    ** then); never for a seeded field (no_exits). */
    _Atomic(struct qn__spm_exits *) exits;
    bool no_exits;
    size_t bytes;
} qn__spm;
/* Per quad, the portal it leaves by (qn_field_quad_exit): its place in the
** quad's portal list, QN__SPM_XOVER for a place past 253 (then xo, nxo
** pairs of quad and portal, by quad), QN__SPM_XNONE for a goal quad or one
** the instance does not reach. */
typedef struct qn__spm_exits {
    uint8_t *qexit;
    uint32_t *xo, nxo, xcap;
    size_t bytes;
} qn__spm_exits;
#define QN__SPM_XOVER 254u
#define QN__SPM_XNONE 255u
static inline bool qn__spm_wall(const qn__spm *s, const qn__boundary *b, uint32_t sub) {
    if (!s->open) return b->bportal[sub] == QN_NONE;
    return !((s->open[sub >> 3] >> (sub & 7u)) & 1u);
}
/* Quad q's entries: ents[*first .. *end) (qstart without its flag). */
static inline void qn__spm_range(const qn__spm *s, uint32_t q, uint32_t *first, uint32_t *end) {
    *first = s->qstart[q] & QN__SPM_QMASK;
    *end = s->qstart[q + 1] & QN__SPM_QMASK;
}

struct qn_field {
    qn_allocator alloc;
    const qn_mesh *mesh;
    float radius;
    uint32_t lookahead; /* portals the sampler looks through; <= 2: edge projection */
    bool midpoint;      /* portal-to-portal costs between mid points */
    bool exact_ok;      /* exact unless asked otherwise (on uniform-cost meshes) */
    bool uniform;       /* all open quads cost the same, as of mesh version ... */
    uint32_t goal_count;
    qn__slot *slots; /* a discrete instance's; NULL for an exact one */
    float *pg;      /* cost of each portal (the tree's g when repairable) */
    qn__goal *goals;
    qn__tree *tree; /* NULL unless built repairable */
    qn__spm *spm;   /* the exact instance; NULL for a discrete one */
    /* Per quad, the funnel's step along the exit chain (qn__field_hop):
    ** for a discrete field with a lookahead above 2; NULL otherwise (an
    ** exact field's rare discrete fallback reads the slots). */
    qn__hop *hops;
    const qn__pgeo *geo; /* the mesh's portal segments (qn__mesh_segments) */
    uint64_t uniform_version; /* ... uniform_version - 1 (0: not known) */
    uint64_t version; /* mesh version the field reflects */
    size_t bytes;
    /* Seeds with initial costs (qn__field_create_seeded, for hierarchical
    ** local fields): per caller goal index (qn__goal.index), the cost the
    ** goal point starts at; NULL: every goal starts at 0. */
    float *seed_g;
};

/* Is portal e usable for an agent of this radius: both sides open and wide
** enough. */
static inline bool qn__portal_open(const qn_mesh *m, uint32_t e, float radius) {
    const qn__pq *p = &m->pq[e];
    return !m->blocked[p->q[0]] && !m->blocked[p->q[1]] &&
           (radius <= 0.0f || qn__portal_width(m, e) + m->eps >= 2.0f * radius);
}

/* The interval engine (interval.c) for individual any-angle paths: a
** workspace for one mesh, reused by every query (only its pools grow, up
** to max_states search states). qn__isearch_path finds the shortest path
** from `from` (in quad qs) to `to` (in quad qt) through portals open for
** radius, its length in *length: QN_OK, QN_E_UNREACHABLE, QN_E_NOMEM or
** QN_E_LIMIT (the state bound). qn__isearch_chain writes the portals the
** path crosses, each with the quad it enters, start to goal; returns their
** count, or UINT32_MAX when more than cap. */
typedef struct qn__isearch qn__isearch;
qn_status qn__isearch_create(const qn_mesh *m, const qn_allocator *a, uint32_t max_states,
                             qn__isearch **out);
void qn__isearch_destroy(qn__isearch *S);
size_t qn__isearch_bytes(const qn__isearch *S);
qn_status qn__isearch_path(qn__isearch *S, qn_vec2 from, uint32_t qs, qn_vec2 to, uint32_t qt,
                           float radius, float *length);
uint32_t qn__isearch_chain(const qn__isearch *S, uint32_t *portals, uint32_t *quads, uint32_t cap);
/* Landmark lower bounds for the next queries (path/landmark.c): per_vertex
** holds k distances per boundary vertex of the mesh (qn__boundary order;
** NAN: unknown); the nsel landmarks sel[] are used, lo[j] and hi[j]
** bounding landmark sel[j]'s distance to the target; slack is taken off
** every bound (float rounding). per_vertex NULL turns them off. Kept by
** pointer until the next call. */
#define QN__MAX_LANDMARKS 16u
void qn__isearch_bounds(qn__isearch *S, const float *per_vertex, uint32_t k, const uint32_t *sel,
                        uint32_t nsel, const float *lo, const float *hi, float slack);
/* States the last qn__isearch_path generated. */
uint32_t qn__isearch_states(const qn__isearch *S);
/* Do radii r1 and r2 open the same portals of the workspace's mesh (the
** same widths lie below twice each)? Then the walls marked for one, and
** anything else that depends only on which portals are open, serve the
** other. False when the sorted widths it keeps cannot be made. */
bool qn__isearch_same_portals(qn__isearch *S, float r1, float r2);

/* Landmarks (path/landmark.c): k points spread over the largest island,
** each with its exact distance to every boundary vertex (NAN where
** unknown), from exact instances built at them (uniform-cost meshes only:
** QN_E_INVALID_ARG otherwise). qn__landmarks_current says whether they
** still bound the mesh's distances from below (no quad blocked at build is
** open now; for pd, the quads' costs as at build too). qn__landmarks_at bounds each landmark's distance to point p
** in quad q from the quad's corners. */
typedef struct qn__landmarks {
    qn_allocator alloc;
    const qn__boundary *b;
    uint32_t k, nq;
    float *d;         /* b->nb * k */
    float *pd;        /* np * k: costs to each portal over the mid-point graph */
    uint32_t np;
    float pslack;     /* ... taken off their bounds */
    float cost0;      /* every open quad's cost at build (they hold while it stays) */
    uint8_t *blocked; /* per quad, as at build */
    uint64_t version; /* mesh version last found current */
    float dmax, slack;
    qn_vec2 at[QN__MAX_LANDMARKS]; /* where they are */
} qn__landmarks;
qn_status qn__landmarks_build(const qn_mesh *m, const qn_allocator *a, uint32_t k,
                              qn__landmarks **out);
void qn__landmarks_destroy(qn__landmarks *L);
bool qn__landmarks_current(qn__landmarks *L, const qn_mesh *m);
void qn__landmarks_at(const qn__landmarks *L, const qn_mesh *m, uint32_t q, qn_vec2 p, float *lo,
                      float *hi);
size_t qn__landmarks_bytes(const qn__landmarks *L);
/* Each landmark's cost over the mid-point graph (path.c's cost search) to
** point p in quad q, through q's portals; INFINITY where none leads. */
void qn__landmarks_goal_costs(const qn__landmarks *L, const qn_mesh *m, uint32_t q, qn_vec2 p,
                              float *out);
/* Has the pathfinder built its landmarks? (for the tests) */
bool qn__pathfinder_has_landmarks(const qn_pathfinder *pf);

/* qn_field_create whose goal i starts at cost g0[i] (>= 0, finite) instead
** of 0: a field of paths that leave through the cheapest of several exits
** (hier.c's local fields). Same codes; g0 is copied. (field.c) */
qn_status qn__field_create_seeded(const qn_mesh *mesh, const qn_vec2 *goals, const float *g0,
                                  uint32_t goal_count, const qn_field_opts *opts,
                                  const qn_allocator *alloc, qn_field **out, qn_error *err);
/* The initial cost of f's sorted goal gi (0 unless seeded). */
static inline float qn__goal_g0(const qn_field *f, uint32_t gi) {
    return f->seed_g ? f->seed_g[f->goals[gi].index] : 0.0f;
}

/* Builds (or rebuilds) f's exact instance (interval.c); frees one (quads: the mesh's quad count). */
qn_status qn__spm_build(qn_field *f, qn_error *err);
/* Builds on meshes of at least this many quads give the pieces of finished
** portals back as they go (interval.c, close_portals): less memory on big
** meshes, a little more time. 1 << 17 unless a test lowers it (to cover
** closing on small meshes); set it before any build, never during one. */
extern uint32_t qn__spm_shut_min_quads;
void qn__spm_free(const qn_allocator *a, qn__spm *s, uint32_t quads);
/* Adds n corners to instance s's list of extra corners (q[i], increasing:
** the quad whose boundary has corner c[i]), merged by quad, and flags their
** quads; a is the field's allocator. False when out of memory (s as it was). */
bool qn__spm_add_corners(const qn_allocator *a, qn__spm *s, const uint32_t *q,
                         const qn__xcorner *c, uint32_t n);
/* The root an exact instance steers a unit at p in quad q toward, and the
** exact cost from p in *cost, its entry in *entry and p's distance to the
** root in *dist (either may be NULL); NULL when none serves p (sample.c). */
const qn__sroot *qn__spm_root(const qn_field *f, uint32_t q, qn_vec2 p, float *cost,
                              const qn__sent **entry, float *dist);

/* An exact instance's least cost over quad q: over its entries, the root's
** cost plus its distance to the part of q in the entry's wedge; INFINITY
** for a quad the instance does not reach (no entry), finite for every
** other (sample.c). The same float every
** time it is asked (the exits are ordered by it). */
float qn__spm_quad_cost(const qn_field *f, uint32_t q);
/* The portal an exact instance's quad q leaves by, QN_NONE for a goal quad
** or one not reached (sample.c). */
uint32_t qn__spm_quad_exit(const qn_field *f, uint32_t q);
/* The exits of exact field f, made on first use and then shared (field.c);
** NULL for a seeded field, or when out of memory. */
const qn__spm_exits *qn__spm_exits_get(const qn_field *f);
void qn__spm_exits_free(const qn_allocator *a, qn__spm_exits *x, uint32_t quads);
/* qn__spm_root without the wedges: the least |p - r| + g(r) over all of q's
** entries (for a point float noise leaves outside every wedge). */
const qn__sroot *qn__spm_root_loose(const qn_field *f, uint32_t q, qn_vec2 p, float *cost,
                                    const qn__sent **entry, float *dist);
/* Does field f reach quad q (as of its build)? */
static inline bool qn__field_reaches(const qn_field *f, uint32_t q) {
    if (!f->spm) return f->slots[q].exit != QN_NONE;
    uint32_t first, end;
    qn__spm_range(f->spm, q, &first, &end);
    return end > first;
}

/* The quad of field f that p stands in, given q, the one point location
** found (QN_NONE allowed), for the sampler and qn_field_cost_at alike:
** - a blocked q gives way to an open portal neighbour holding p (a point
**   on the edge between the two stands on open ground);
** - an open q the field does not reach, to another open quad holding p
**   (within the mesh's tolerance) that it reaches: a point within the
**   tolerance of a fence (two quads that touch with no portal between) is
**   in both, and belongs to the side the field reaches, or a unit placed in
**   a reached quad beside an enclosed one was told its goal was
**   unreachable;
** - else q itself (field.c). */
uint32_t qn__field_quad_of(const qn_field *f, uint32_t q, qn_vec2 p);

/* qn_field_sample (ahead NULL) or qn_field_sample_ahead, arguments
** already checked, that also tells an exact field's root the unit steers
** at and its cost there (*root NULL otherwise: a discrete field, or no
** QN_OK or QN_AT_GOAL answer). For hierarchical local fields (hier.c),
** which would otherwise look for that root a second time (sample.c). */
qn_status qn__field_sample_root(const qn_field *f, qn_vec2 p, uint32_t *quad_io, qn_vec2 *dir,
                                float *ahead, const qn__sroot **root, float *cost);

/* Sets quad q's record in f->hops from its slot (sample.c). */
void qn__field_hop(qn_field *f, uint32_t q);

/* Nearest goal point to p among the goals of one goal quad, whose first
** (sorted) goal index is `first` (field.c). */
const qn__goal *qn__nearest_goal(const qn_field *f, uint32_t first, qn_vec2 p);

/* Runs fn(data, j) for every j in [0, jobs) with the caller's runner, or
** the built-in one when runner is NULL; false when a thread of the built-in
** runner could not start (every job has still run). (parallel.c) */
bool qn__run_jobs(const qn_jobs *runner, uint32_t jobs, qn_job_fn fn, void *data);
/* Building ahead in jobs (parallel.c), for searches that build sectors
** lazily (hier.c's; the grid tiles' jobs were slower this way, 18-19.5 ms
** against 15-16 for the first samples of 1,000 units on a 4096 map: their
** node search is most of the work, their sector fields little):
** the sectors (keys) a batch of units will sample in, each first settled
** by the node search ns, one at a time under its lock (settle, called
** with the lock held), then built (build, any number at once; a sector
** another thread built already is left as it is). In jobs run by the
** runner, whichever job finds the search free settles the next key while
** the others build the keys already settled (or, with none settled to
** build, warm the next keys), so the search runs without a break; keys are
** settled in their order. */
struct qn__nsearch;
typedef struct qn__ahead {
    struct qn__nsearch *ns;
    void (*settle)(void *ctx, uint32_t key);
    void (*build)(void *ctx, uint32_t key);
    /* Optional: what of a key's build needs no settled nodes, done by a
    ** job that would otherwise wait (keys [0, warmed) done or being done). */
    void (*warm)(void *ctx, uint32_t key);
    void *ctx;
    const uint32_t *key;
    uint32_t n;
    /* keys [0, settled) are settled, [0, taken) built or being built */
    _Atomic uint32_t settled, taken, warmed;
} qn__ahead;
void qn__ahead_run(qn__ahead *a, uint32_t jobs, const qn_jobs *runner);
/* A hierarchical destination's batch in jobs (hier.c, parallel.c): the
** jobs sample with qn__hfield_sample_built, which answers the units whose
** local fields are built and leaves the others' dirs NAN (status not
** written); then qn__hfield_sample_pending builds the local fields those
** need ahead, in jobs (qn__ahead_run), and samples them. Once a
** destination's sectors are built, the second step only looks at dirs. */
void qn__hfield_sample_built(const qn_hfield *f, const qn_vec2 *positions, qn_vec2 *dirs,
                             uint8_t *status, uint32_t *quads, size_t count);
void qn__hfield_sample_pending(const qn_hfield *f, const qn_vec2 *positions, qn_vec2 *dirs,
                               uint8_t *status, uint32_t *quads, size_t count, uint32_t jobs,
                               const qn_jobs *runner);
/* Jobs for n independent pieces of work: n, at least 1 and at most most. */
static inline uint32_t qn__jobs_for(uint32_t n, uint32_t most) {
    return n < most ? (n ? n : 1) : most;
}

/* ---- the vector flow's exit cell (grid.c, grid_tiles.c) --------------- */

/* The cell that the ray from (px, py), in cells and inside cell (x, y),
** along (gx, gy) (not both 0) enters when it leaves that cell: *ex, *ey.
** True when it leaves through the cell's corner (within 1e-4 cells along
** the ray), into the diagonal neighbour. The vector flow takes a cell's
** gradient only when this cell is lower: unlike a test of the cell a short
** step reaches, it is the same for every point of the cell on one ray, so
** a unit cannot take the gradient in the middle of a cell and the
** 8-direction flow nearer its edge, back and forth. */
static inline bool qn__grid_exit_cell(double px, double py, float gx, float gy, int64_t x,
                                      int64_t y, int64_t *ex, int64_t *ey) {
    double tx = gx > 0.0f   ? ((double)x + 1.0 - px) / (double)gx
                : gx < 0.0f ? ((double)x - px) / (double)gx
                            : (double)INFINITY;
    double ty = gy > 0.0f   ? ((double)y + 1.0 - py) / (double)gy
                : gy < 0.0f ? ((double)y - py) / (double)gy
                            : (double)INFINITY;
    bool corner = fabs(tx - ty) < 1e-4;
    *ex = x + ((corner || tx < ty) ? (gx > 0.0f ? 1 : -1) : 0);
    *ey = y + ((corner || ty < tx) ? (gy > 0.0f ? 1 : -1) : 0);
    return corner;
}

/* ---- grids into rectangles (grid_rects.c, grid_mesh.c) ---------------- */

/* Cut marks per cell of a grid: on the edge above the cell, on its left. */
#define QN__CUT_TOP 1u
#define QN__CUT_LEFT 2u

/* Marks in cut (width*height zeroed bytes) the edges between cells of equal
** cost along which the grid's passable cells split into the fewest
** rectangles of one cost each: every region of equal-cost cells bounded by
** walls, other costs and cuts is then a rectangle. QN_OK or QN_E_NOMEM. */
qn_status qn__grid_cuts(const qn_grid *g, const qn_allocator *a, uint8_t *cut, qn_error *err);
/* qn_grid_create in two steps: the checks and the costs, then the padded
** cell info the queries read (the level loader makes that once the mesh is
** built, so a big level's peak holds only the costs). Until finished, a
** grid may only be destroyed. */
qn_status qn__grid_create_costs(const qn_grid_desc *desc, const qn_allocator *alloc, qn_grid **out,
                                qn_error *err);
qn_status qn__grid_finish(qn_grid *g, qn_error *err);

/* A portal candidate: quads a < b, their edges (0..3, edge i from corner i
** to i + 1), and the shared segment p0 -> p1 along a's edge. */
typedef struct qn__cand {
    uint32_t a, b;
    uint8_t ea, eb;
    qn_vec2 p0, p1;
} qn__cand;

/* qn_mesh_create for a caller that knows the adjacency: cands (sorted by
** (a, b), one per pair) are taken as the portals, and no edge pairing or
** overlap search runs; quad shapes are still checked. For quads that
** cannot overlap (a partition of grid cells into rectangles). No links.
** (mesh.c) */
qn_status qn__mesh_create_paired(const qn_mesh_desc *desc, qn__cand *cands, uint32_t ncand,
                                 const qn_allocator *alloc, qn_mesh **out, qn_error *err);

/* Either of the above (cands NULL: edges paired, links applied), with
** release(ud) called once the quads are copied out of desc (its vertices,
** quads, costs and blocked flags are not read after; its links are): a
** loader that owns those arrays frees them there, so they and the pairing
** scratch are not resident together at the peak of a big build. release
** is called at most once, and not at all when the build fails before. */
qn_status qn__mesh_create_releasing(const qn_mesh_desc *desc, qn__cand *cands, uint32_t ncand,
                                    void (*release)(void *ud), void *ud, const qn_allocator *alloc,
                                    qn_mesh **out, qn_error *err);

/* Pairing sorts more portal candidates than this in rounds (pair.c,
** best_per_pair); the tests lower it to run the rounds on small meshes. */
extern uint32_t qn__pair_rounds_above;

/* Frees a mesh's point-location index and islands, for a mesh only ever
** read by quad (a hierarchical instance's cut mesh, hier.c): no lookup of a
** point (qn__locate, qn_mesh_locate) or of islands may touch it after, nor
** may qn_mesh_set_quad_blocked. (mesh.c) */
void qn__mesh_drop_lookup(qn_mesh *m);

/* Decompositions of qn__mesh_from_grid_with. */
typedef enum qn__decomp {
    QN__DECOMP_FEWEST, /* along qn__grid_cuts: the fewest rectangles (the default) */
    QN__DECOMP_ROWS    /* greedy, row-major: widest run, then grown down */
} qn__decomp;

/* The number of rectangles of decomposition `how` (no mesh is built). */
qn_status qn__grid_rect_count(const qn_grid *grid, qn__decomp how, const qn_allocator *alloc,
                              uint32_t *count, qn_error *err);

/* qn_mesh_from_grid with a chosen decomposition (the tools compare them);
** pair_by_cells: the portals from the cells (as qn_mesh_from_grid does),
** else from qn_mesh_create's general edge pairing (tests compare them). */
qn_status qn__mesh_from_grid_with(const qn_grid *grid, qn__decomp how, bool pair_by_cells,
                                  const qn_allocator *alloc, qn_mesh **out, qn_error *err);

#endif /* QN_INTERNAL_H */
