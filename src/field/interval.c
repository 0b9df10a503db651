/*
** interval.c: the interval engine (a continuous Dijkstra over the quads),
** shared by exact instances (one-to-all, to exhaustion) and by individual
** any-angle paths (qn_path_find: toward one target, with a heuristic).
**
** Exact instances. On a mesh whose open quads all cost the same, an
** instance is the shortest path map of its goal points: for every point p,
** d(p) = min over the roots r that see p of |p - r| + g(r), where a root is a
** goal point or a corner of the free space that shortest paths bend round,
** and g(r) is its exact distance to the goal.
**
** It is built by one-to-all interval propagation (a continuous Dijkstra):
** a state is a root and an interval of a portal the root sees, about to be
** entered into the quad beyond. Expanding it projects the root's view
** across that quad onto the quad's other portals; where an end of the
** interval is a corner, the part of the quad the root cannot see is seen
** from that corner, which becomes a new root. States leave the open list in
** order of the least distance they can give, and each portal keeps the
** pieces that reached it (root, span): a new piece is cut to where it is
** shorter than every piece already there. That cut is exact: when a path
** through x is beaten at x, every point it would reach beyond x is reached
** more cheaply through x by the path that beats it.
**
** Every state expanded into a quad leaves an entry there: its root and the
** wedge through its interval (or no wedge when the root lies on the quad's
** boundary and sees all of it). The sampler takes, among the entries whose
** wedge holds p, the one with the least |p - r| + g(r) and steers at that
** root. Roots keep the direction toward their own next root, which tells
** the side a path turns at a corner.
*/
#include "internal.h"
#include "core/heap.h"

#include <stdlib.h>

#define ON_BIT QN__SPM_ON
#define MAX_SPANS 8u
#define MAX_PEND 8u
#define SHUT_QUEUED 1u
#define SHUT_DONE 2u
/* close_portals closes only a portal whose pieces are this few */
#define SHUT_MAX_PIECES 32u

/* ---- the search's types ------------------------------------------------ */

/* Root rid (at r, cost g) sees the interval R..L of sub-edge `sub` of quad
** `quad`, which it is about to enter; `piece` is its record on the portal.
** Its key while open (the least length it can give) is in the heap. */
typedef struct xnode {
    qn_vec2 r, L, R;
    float g;
    uint32_t rid, quad, sub, piece;
    uint32_t parent; /* the state it came from (QN_NONE for a seed) */
    bool on;
    int8_t side; /* on: the obstacle's side at a corner root (see xentry) */
} xnode;


/* A piece of a portal's envelope: root rid, at (a, h) in the portal's
** frame (along and across from p0) and cost g, reaches [t0, t1] (distances
** along the portal from p0); `node` is the open state that carries it into
** the quad beyond (QN_NONE once taken out, or for a path). */
typedef struct piece {
    float a, h, g, t0, t1;
    uint32_t next, rid, node;
} piece;

/* An entry as the search finds it: a wedge keeps its sides' directions
** from the root, left and right, as diamond angles (qn__spm_dir), as the
** sampler's entry does; a root seeing all of the quad (rid with ON_BIT)
** keeps in l the side code (QN__SPM_LEFT, QN__SPM_RIGHT, 0) of the obstacle
** it bends round, as seen going from it toward its own next root. */
typedef struct xentry {
    uint32_t quad, rid;
    uint16_t l, r;
} xentry;

typedef struct span {
    float a, b;
} span;

struct qn__isearch {
    const qn_field *f; /* one-to-all: the field being built; NULL for a path */
    const qn_mesh *m;
    const qn__boundary *b;
    /* The portals' segments (qn__mesh_segments). */
    const qn__pgeo *geo;
    qn_allocator alloc;
    float tol, radius;
    float snap2;     /* the mesh tolerance, squared (add_piece) */
    uint32_t nv, nr; /* vertex ids, roots (vertex ids then goals) */
    qn_status st;
    /* growing pools */
    xnode *nodes;
    qn__hent *heap; /* the open states (src/core/heap.h), keyed by their f */
    uint32_t *hpos; /* per node slot: where it sits in the heap while open */
    qn__heap q;
    piece *pieces;
    /* The entries (one-to-all): found in blocks of 1 << eshift, eblk[i]
    ** the i-th (nblk of them, room for bcap), freed block by block as
    ** sort_entries moves them into the instance, sorted. */
    xentry **eblk;
    uint32_t nblk, bcap, eshift;
    uint32_t nn, ncap, hcap, poscap, npc, pcap, ne;
    /* fixed scratch */
    uint32_t *head;             /* per portal: first piece */
    float *rg;                  /* per root: best cost so far (INFINITY: none) */
    uint32_t *rpar;             /* per root: the root it was reached from */
    qn_vec2 *rpos;              /* per root: where it is */
    uint32_t *qvid;             /* per quad: the root last seen all of it */
    float *qg;                  /* ... at this cost */
    uint8_t *dyn;               /* per vertex id: corner because of closed portals */
    bool any_dyn;               /* ... for some vertex */
    uint8_t *sopen;             /* per boundary sub-edge: an open portal (mark_walls) */
    uint8_t *qopen;             /* per quad: its open portals, 0, 1 or 2 for more */
    bool fixed_kept;            /* the block holds only the kept part (shrink_fixed) */
    /* toward one target (paths): the point, its quad, the state bound, the
    ** state being expanded, the goal state once found */
    bool target;
    qn_vec2 to;
    uint32_t qt, nmax, cur, found;
    /* toward a target: the successors of the state being expanded, out of
    ** the heap until its expansion ends (run) */
    uint32_t pend[MAX_PEND], npend;
    uint32_t nfree; /* one-to-all: a free node slot (chained by parent) */
    /* One-to-all: portals whose envelope is final give their pieces back
    ** (close_portals). Per portal, whether it is queued to close
    ** (SHUT_QUEUED) or closed (SHUT_DONE); the queue, keyed by an upper
    ** bound on the portal's envelope as last seen; free piece slots,
    ** chained by next. */
    uint8_t *pshut;
    qn__hent *cheap;
    uint32_t chcap, pfree;
    qn__heap cq;
    uint32_t ngoal;   /* seed points (goal points, or a path's start) */
    uint64_t wver;    /* mesh version and radius the walls were marked for */
    float wrad;
    /* paths: every portal's width plus the mesh tolerance, sorted (nokey of
    ** them, made on first need): radii between the same two of them close
    ** the same portals (qn__isearch_same_portals) */
    float *okey;
    uint32_t nokey;
    /* paths: landmark lower bounds (qn__isearch_bounds), or nlm 0 */
    const float *lmv; /* per boundary vertex, lmk distances (NAN: unknown) */
    uint32_t lmk, nlm, lmsel[QN__MAX_LANDMARKS]; /* the nlm of them in use */
    float lmlo[QN__MAX_LANDMARKS], lmhi[QN__MAX_LANDMARKS]; /* ... at the target */
    float lmslack;
    /* paths: the roots and quads the last query recorded (rg, qvid), so the
    ** next resets only those; full_reset when it stopped part way */
    uint32_t *rtouch, *qtouch, nrt, nqt;
    bool full_reset;
};
typedef struct qn__isearch xsearch;

/* Portal e's segment (the mesh's table, qn__mesh_segments). */
static inline const qn__pgeo *xseg(const xsearch *S, uint32_t e) { return &S->geo[e]; }

/* ---- pools ------------------------------------------------------------------ */

/* Grows *p (elements of size sz, capacity *cap) to hold one more. */
static bool grow(xsearch *S, void **p, uint32_t *cap, size_t sz) {
    if (S->st != QN_OK) return false;
    uint32_t want = *cap ? *cap * 2 : 256;
    if (want < *cap || (uint64_t)want * sz > SIZE_MAX / 2) {
        S->st = QN_E_LIMIT;
        return false;
    }
    void *n = qn__realloc(&S->alloc, *p, (size_t)*cap * sz, (size_t)want * sz);
    if (!n) {
        S->st = QN_E_NOMEM;
        return false;
    }
    *p = n;
    *cap = want;
    return true;
}

/* Sizes an empty pool for `want` elements up front (pools then rarely
** grow during a search); false when out of memory. */
static bool reserve(xsearch *S, void **p, uint32_t *cap, size_t sz, uint32_t want) {
    if (*cap >= want) return true;
    void *n = qn__realloc(&S->alloc, *p, (size_t)*cap * sz, (size_t)want * sz);
    if (!n) return false;
    *p = n;
    *cap = want;
    return true;
}

static void push_key(xsearch *S, float f, uint32_t node) {
    while (node >= S->poscap)
        if (!grow(S, (void **)&S->hpos, &S->poscap, sizeof(uint32_t))) return;
    if (S->q.n == S->hcap && !grow(S, (void **)&S->heap, &S->hcap, sizeof(qn__hent))) return;
    S->q.a = S->heap;
    S->q.pos = S->hpos;
    qn__heap_push(&S->q, node, f);
}

static uint32_t pop_key(xsearch *S) { return qn__heap_pop(&S->q); }

/* Entries in block b (the last may be part full). */
static uint32_t block_count(const xsearch *S, uint32_t b) {
    uint32_t full = 1u << S->eshift, before = b << S->eshift;
    return S->ne - before < full ? S->ne - before : full;
}

/* Frees the entry blocks left (all of them, unless sort_entries ran). */
static void free_blocks(xsearch *S) {
    for (uint32_t b = 0; b < S->nblk; b++)
        qn__free(&S->alloc, S->eblk[b], sizeof(xentry) << S->eshift);
    qn__free(&S->alloc, S->eblk, (size_t)S->bcap * sizeof(xentry *));
    S->eblk = NULL;
    S->nblk = S->bcap = 0;
}

/* ---- geometry ------------------------------------------------------------------ */

static qn_vec2 unit(qn_vec2 d) {
    float l = qn__len(d);
    return l > 0.0f ? qn__scale(d, 1.0f / l) : qn__v2(0.0f, 0.0f);
}

/* Direction d (not zero) as a diamond angle (qn__spm_dir; the sampler's
** wedge test takes the rounding, under a half step, in its slack). */
static uint16_t diamond(qn_vec2 d) {
    float ax = fabsf(d.x), ay = fabsf(d.y), s = ax + ay;
    if (!(s > 0.0f)) return 0;
    float t;
    if (d.y >= 0.0f)
        t = d.x >= 0.0f ? ay / s : 1.0f + ax / s;
    else
        t = d.x < 0.0f ? 2.0f + ay / s : 3.0f + ax / s;
    return (uint16_t)((uint32_t)lrintf(t * QN__SPM_ANGLE) & 0xFFFFu);
}

/* Records an entry: root rid (at `at`) in quad `quad`, a wedge from the root
** through R..L, or (rid with ON_BIT) a root seeing all of it, the
** obstacle's side in L.x. */
static void add_entry(xsearch *S, uint32_t quad, uint32_t rid, qn_vec2 at, qn_vec2 L, qn_vec2 R) {
    if (!S->f) return; /* a path keeps no map */
    uint32_t b = S->ne >> S->eshift, i = S->ne & ((1u << S->eshift) - 1u);
    if (i == 0) { /* a new block */
        if (b == UINT32_MAX >> S->eshift) {
            S->st = QN_E_LIMIT;
            return;
        }
        if (b == S->bcap && !grow(S, (void **)&S->eblk, &S->bcap, sizeof(xentry *))) return;
        S->eblk[b] = qn__alloc(&S->alloc, sizeof(xentry) << S->eshift);
        if (!S->eblk[b]) {
            S->st = QN_E_NOMEM;
            return;
        }
        S->nblk = b + 1;
    }
    xentry *x = &S->eblk[b][i];
    x->quad = quad, x->rid = rid;
    if (rid & ON_BIT) {
        x->l = (uint16_t)(L.x > 0.0f ? QN__SPM_LEFT : (L.x < 0.0f ? QN__SPM_RIGHT : 0u));
        x->r = 0;
    } else {
        /* A side of no length (an end of the interval at the root) bounds
        ** nothing: the wedge is then the half-plane on the other side's
        ** left (its opposite as this side), or, with both, all of it. */
        qn_vec2 dl = qn__sub(L, at), dr = qn__sub(R, at);
        bool zl = dl.x == 0.0f && dl.y == 0.0f, zr = dr.x == 0.0f && dr.y == 0.0f;
        x->l = zl ? (uint16_t)(diamond(dr) + 0x8000u) : diamond(dl);
        x->r = zr ? (uint16_t)(diamond(dl) + 0x8000u) : diamond(dr);
        if (zl && zr) x->rid = rid | ON_BIT, x->l = x->r = 0;
    }
    S->ne++;
}

/* fmaxf/fminf without their NAN rules, which keep compilers from inlining
** them (no NAN reaches these). */
static inline float max_f(float a, float b) { return a > b ? a : b; }
static inline float min_f(float a, float b) { return a < b ? a : b; }

/* Parameters in [0, 1] where fa + (fb - fa) t >= 0; false when none. */
static inline bool clip_nonneg(float fa, float fb, float *t0, float *t1) {
    if (fa >= 0.0f && fb >= 0.0f) return true;
    if (fa < 0.0f && fb < 0.0f) return false;
    float t = fa / (fa - fb);
    if (fa >= 0.0f) *t1 = min_f(*t1, t);
    else *t0 = max_f(*t0, t);
    return *t0 < *t1;
}

/* ---- the envelope ---------------------------------------------------------------- */

/* A root in a portal's frame: along (a) and across (h) from p0. */
typedef struct froot {
    double a, h, g;
} froot;

static froot in_frame(const qn__pgeo *p, qn_vec2 r, float g) {
    qn_vec2 d = qn__sub(r, p->p0), u = qn__pgeo_dir(p);
    froot fr = {(double)qn__dot(d, u), (double)qn__cross(u, d), (double)g};
    return fr;
}

static double dist_at(froot r, double t) { return sqrt((t - r.a) * (t - r.a) + r.h * r.h) + r.g; }

/* Where n's distance may equal w's on the portal line: every root of
** dn(t) = dw(t) (more candidates do no harm). Returns how many, sorted. */
static int crossings(froot n, froot w, double t[2]) {
    double c = w.g - n.g, alpha = 2.0 * (w.a - n.a);
    double beta = n.a * n.a + n.h * n.h - w.a * w.a - w.h * w.h - c * c;
    double A = alpha * alpha - 4.0 * c * c, B = 2.0 * alpha * beta + 8.0 * c * c * w.a;
    double C = beta * beta - 4.0 * c * c * (w.a * w.a + w.h * w.h);
    if (fabs(A) < 1e-12 * (fabs(B) + fabs(C) + 1e-30)) {
        if (B == 0.0) return 0;
        t[0] = -C / B;
        return 1;
    }
    double disc = B * B - 4.0 * A * C;
    if (disc < 0.0) return 0;
    double s = sqrt(disc), q = -0.5 * (B + (B >= 0.0 ? s : -s));
    t[0] = q / A;
    t[1] = q != 0.0 ? C / q : t[0];
    if (t[0] > t[1]) {
        double x = t[0];
        t[0] = t[1];
        t[1] = x;
    }
    return 2;
}

/* Appends [a, b] to out (merging with the last span when they touch). */
static void span_add(span *out, uint32_t *n, float a, float b) {
    if (!(b > a)) return;
    if (*n && out[*n - 1].b >= a) {
        if (b > out[*n - 1].b) out[*n - 1].b = b;
        return;
    }
    if (*n < MAX_SPANS) out[(*n)++] = (span){a, b};
    else out[*n - 1].b = b; /* out of room: keep more, never less */
}

/* The parts of [lo, hi] where n is not beaten by w by more than tol. */
/* The least of r's distance over [lo, hi] (it is convex). */
static double least_on(froot r, double lo, double hi, double at_lo, double at_hi) {
    if (r.a > lo && r.a < hi) return fabs(r.h) + r.g;
    return at_lo < at_hi ? at_lo : at_hi;
}

static void unbeaten(froot n, froot w, float lo, float hi, double tol, span *out, uint32_t *cnt) {
    w.g += tol;
    /* Both distances are convex along the portal: decide at once when one
    ** lies wholly below the other. */
    double dlo = (double)lo, dhi = (double)hi;
    double nl = dist_at(n, dlo), nh = dist_at(n, dhi), wl = dist_at(w, dlo), wh = dist_at(w, dhi);
    if ((nl > nh ? nl : nh) <= least_on(w, dlo, dhi, wl, wh)) {
        span_add(out, cnt, lo, hi);
        return;
    }
    if (least_on(n, dlo, dhi, nl, nh) > (wl > wh ? wl : wh)) return;
    double t[4] = {(double)lo, 0, 0, (double)hi};
    double c[2];
    int k = crossings(n, w, c), m = 1;
    for (int i = 0; i < k; i++)
        if (c[i] > (double)lo && c[i] < (double)hi) t[m++] = c[i];
    t[m++] = (double)hi;
    for (int i = 0; i + 1 < m; i++) {
        double mid = 0.5 * (t[i] + t[i + 1]);
        if (dist_at(n, mid) <= dist_at(w, mid)) span_add(out, cnt, (float)t[i], (float)t[i + 1]);
    }
}

/* Cuts spans sp[0..*n) of portal e to where root n beats piece w. */
static void cut_by(froot n, const piece *w, double tol, span *sp, uint32_t *cnt) {
    span out[MAX_SPANS];
    uint32_t k = 0;
    froot fw = {(double)w->a, (double)w->h, (double)w->g};
    for (uint32_t i = 0; i < *cnt; i++) {
        float lo = max_f(sp[i].a, w->t0), hi = min_f(sp[i].b, w->t1);
        if (!(hi > lo)) {
            span_add(out, &k, sp[i].a, sp[i].b);
            continue;
        }
        span_add(out, &k, sp[i].a, lo);
        unbeaten(n, fw, lo, hi, tol, out, &k);
        span_add(out, &k, hi, sp[i].b);
    }
    memcpy(sp, out, k * sizeof *out);
    *cnt = k;
}

/* The parts of [t0, t1] on portal e where root r (cost g) is not beaten by
** a piece already there (other than `self`). */
static uint32_t envelope_cut(const xsearch *S, uint32_t e, uint32_t self, qn_vec2 r, float g,
                             float t0, float t1, span *sp) {
    const qn__pgeo *pt = xseg(S, e);
    froot n = in_frame(pt, r, g);
    /* Exact ties survive, and differences within a hundredth of the mesh
    ** tolerance. Not more: a tie kept costs a piece here and states beyond,
    ** and on grid maps ties are common (the lattice is symmetric) and
    ** multiply with distance; a tolerance growing with g (as a float sum's
    ** rounding does) made one-to-all builds on 2048 x 2048 maps 1.4 times
    ** slower. Dropping a near-tie changes a length by rounding only. */
    double tol = 0.01 * (double)S->tol;
    uint32_t cnt = 1;
    sp[0] = (span){t0, t1};
    for (uint32_t w = S->head[e]; w != QN_NONE && cnt; w = S->pieces[w].next) {
        /* A portal's pieces lie far apart in the pool: the next one is
        ** fetched while this one cuts. */
        if (S->pieces[w].next != QN_NONE) QN__PREFETCH(&S->pieces[S->pieces[w].next]);
        if (w != self) cut_by(n, &S->pieces[w], tol, sp, &cnt);
    }
    return cnt;
}

/* The larger of piece pc's values at the ends of its span (its largest:
** a distance is convex along the portal), rounded up by a few parts in a
** million. */
static float piece_top(const piece *pc) {
    float d0 = pc->t0 - pc->a, d1 = pc->t1 - pc->a, d = fabsf(d0) > fabsf(d1) ? d0 : d1;
    return (sqrtf(d * d + pc->h * pc->h) + pc->g) * (1.0f + 4e-6f);
}

/* One-to-all: queues portal e to close (close_portals) at key `top`. */
static void queue_shut(xsearch *S, uint32_t e, float top) {
    if (S->cq.n == S->chcap && !grow(S, (void **)&S->cheap, &S->chcap, sizeof(qn__hent))) return;
    S->cq.a = S->cheap;
    qn__heap_push(&S->cq, e, top);
    S->pshut[e] = SHUT_QUEUED;
}

static uint32_t add_piece_record(xsearch *S, uint32_t e, qn_vec2 r, uint32_t rid, float g,
                                 float t0, float t1) {
    uint32_t i = S->pfree;
    if (i != QN_NONE) S->pfree = S->pieces[i].next;
    else if (S->npc == S->pcap && !grow(S, (void **)&S->pieces, &S->pcap, sizeof(piece)))
        return QN_NONE;
    else i = S->npc++;
    froot fr = in_frame(xseg(S, e), r, g);
    S->pieces[i] = (piece){(float)fr.a, (float)fr.h, g, t0, t1, S->head[e], rid, QN_NONE};
    S->head[e] = i;
    if (S->pshut && !S->pshut[e]) queue_shut(S, e, piece_top(&S->pieces[i]));
    return i;
}

/* One-to-all: do portal e's pieces cover all of it? Only for a short list
** (else false). With *top, the largest value a piece gives at an end of its
** span, an upper bound on the portal's envelope where they cover it (every
** piece is beaten only where another covers), and in *open whether an open
** state carries one of them. */
static bool portal_covered(const xsearch *S, uint32_t e, float *top, bool *open) {
    span sp[SHUT_MAX_PIECES];
    uint32_t n = 0;
    *top = -INFINITY;
    *open = false;
    for (uint32_t w = S->head[e]; w != QN_NONE; w = S->pieces[w].next) {
        const piece *pc = &S->pieces[w];
        if (n == SHUT_MAX_PIECES) return false;
        float t = piece_top(pc);
        *top = t > *top ? t : *top;
        *open |= pc->node != QN_NONE;
        span x = {pc->t0, pc->t1};
        uint32_t j = n++;
        for (; j > 0 && sp[j - 1].a > x.a; j--) sp[j] = sp[j - 1];
        sp[j] = x;
    }
    if (n == 0 || sp[0].a > S->tol) return false;
    float end = sp[0].b;
    for (uint32_t j = 1; j < n; j++) {
        if (sp[j].a > end) return false;
        if (sp[j].b > end) end = sp[j].b;
    }
    return end >= xseg(S, e)->width - S->tol;
}

/* One-to-all, before a state of key k is expanded: every piece made from
** now on gives at least k on its portal (distances only grow along a
** path), so a portal covered by pieces that give at most some bound,
** below k by more than the cut's tie tolerance and rounding, will take no
** new piece. Such portals close: their pieces go back to the pool, and a
** later piece there is dropped at once (push_spans). A portal is queued
** with its first piece's largest value; when it comes up, one not yet
** covered waits for its next piece (which queues it again), one whose
** bound has risen goes back in the queue with it. */
static void close_portals(xsearch *S, float k) {
    float below = k - (S->tol + 4e-6f * k);
    while (S->cq.n && S->cq.a[0].key < below) {
        uint32_t e = qn__heap_pop(&S->cq);
        S->pshut[e] = 0;
        float top;
        bool open;
        if (!portal_covered(S, e, &top, &open)) continue;
        if (!(top < below) || open) { /* (open only with top >= k) */
            queue_shut(S, e, top > k ? top : k);
            continue;
        }
        uint32_t w = S->head[e];
        while (S->pieces[w].next != QN_NONE) w = S->pieces[w].next;
        S->pieces[w].next = S->pfree;
        S->pfree = S->head[e];
        S->head[e] = QN_NONE;
        S->pshut[e] = SHUT_DONE;
    }
}

/* ---- roots ------------------------------------------------------------------------ */

static bool is_corner(const xsearch *S, uint32_t vid) {
    return (S->b->vkind[vid] & QN__VK_CORNER) || S->dyn[vid];
}

/* Records root rid at cost g, reached from root `par`. */
static void root_record(xsearch *S, uint32_t rid, float g, uint32_t par, qn_vec2 at) {
    if (S->rtouch && S->rg[rid] == INFINITY) S->rtouch[S->nrt++] = rid;
    if (g < S->rg[rid]) {
        S->rg[rid] = g;
        S->rpar[rid] = par;
        S->rpos[rid] = at;
    }
}

/* No cheaper path to root rid than g (within rounding)? */
static bool root_ok(const xsearch *S, uint32_t rid, float g) {
    return !(g > S->rg[rid] * (1.0f + 1e-6f) + S->tol);
}

/* ---- states ------------------------------------------------------------------------- */

/* A sub-edge of the quad being expanded: end points, their vertex ids, the
** portal. */
typedef struct sub_edge {
    qn_vec2 a, b;
    uint32_t va, vb, e;
} sub_edge;

static float along(const qn__pgeo *p, qn_vec2 x) {
    return qn__dot(qn__sub(x, p->p0), qn__pgeo_dir(p));
}
static qn_vec2 on_portal(const qn__pgeo *p, float t) {
    return qn__add(p->p0, qn__scale(qn__pgeo_dir(p), t));
}

/* Length of the shortest line from root r through the interval R-L to t
** (t mirrored first when on r's side of the interval's line, since the line
** must cross it); r on the interval sees everywhere. A* heuristic. */
static float through_interval(qn_vec2 r, qn_vec2 L, qn_vec2 R, qn_vec2 t, bool on) {
    if (on) return qn__len(qn__sub(t, r));
    qn_vec2 d = qn__sub(L, R);
    float dl = qn__len(d), sr = qn__cross(d, qn__sub(r, R)), st = qn__cross(d, qn__sub(t, R));
    if (dl > 0.0f && sr * st > 0.0f) t = qn__sub(t, qn__scale(qn__v2(-d.y, d.x), 2.0f * st / (dl * dl)));
    if (qn__cross(qn__sub(R, r), qn__sub(t, r)) < 0.0f)
        return qn__len(qn__sub(R, r)) + qn__len(qn__sub(t, R));
    if (qn__cross(qn__sub(t, r), qn__sub(L, r)) < 0.0f)
        return qn__len(qn__sub(L, r)) + qn__len(qn__sub(t, L));
    return qn__len(qn__sub(t, r));
}

/* A lower bound from the landmarks (path/landmark.c) on the length of a
** path from root r through the interval R-L of sub-edge `sub` of quad q to
** the target; 0 without landmarks. For each landmark the target's distance
** differs from x's by at most d(x, target), and along the sub-edge x's
** distance from the landmark lies between max(d0 - s, d1 - (len - s)) and
** min(d0 + s, d1 + len - s) (it changes by at most the length moved). Each
** side of the bound is then piecewise linear in s with slopes -1 then +1,
** and |r - x| changes more slowly, so |r - x| plus it is least at the bend
** (clamped to the interval): one point per side and landmark. */
static float landmark_bound(const xsearch *S, uint32_t q, uint32_t sub, qn_vec2 L, qn_vec2 R,
                            qn_vec2 r) {
    const qn__boundary *b = S->b;
    uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base;
    uint32_t i0 = base + sub, i1 = base + (sub + 1 == k ? 0 : sub + 1);
    qn_vec2 a = b->bv[i0], ab = qn__sub(b->bv[i1], a);
    float len = qn__len(ab);
    if (!(len > 0.0f)) return 0.0f;
    qn_vec2 u = qn__scale(ab, 1.0f / len), ra = qn__sub(a, r);
    float sa = qn__dot(qn__sub(R, a), u), sb = qn__dot(qn__sub(L, a), u);
    if (sa > sb) {
        float x = sa;
        sa = sb;
        sb = x;
    }
    const float *v0 = S->lmv + (size_t)i0 * S->lmk, *v1 = S->lmv + (size_t)i1 * S->lmk;
    float best = 0.0f;
#if QN__HAVE_SSE2
    /* Four landmarks at a time, with the same operations as the plain loop
    ** below, lane by lane; every side's root is taken (the plain loop skips
    ** those that cannot raise best). Lanes past nlm bound nothing (see
    ** qn__isearch_bounds). */
    const __m128 vlen = _mm_set1_ps(len), vsa = _mm_set1_ps(sa), vsb = _mm_set1_ps(sb);
    const __m128 rax = _mm_set1_ps(ra.x), ray = _mm_set1_ps(ra.y), ux = _mm_set1_ps(u.x),
                 uy = _mm_set1_ps(u.y), zero = _mm_setzero_ps(), inf = _mm_set1_ps(INFINITY);
    __m128 vbest = zero;
    for (uint32_t j = 0; j < S->nlm; j += 4) {
        const uint32_t *sel = S->lmsel + j;
        __m128 d0 = _mm_set_ps(v0[sel[3]], v0[sel[2]], v0[sel[1]], v0[sel[0]]);
        __m128 d1 = _mm_set_ps(v1[sel[3]], v1[sel[2]], v1[sel[1]], v1[sel[0]]);
        __m128 ok = _mm_and_ps(_mm_cmplt_ps(d0, inf), _mm_cmplt_ps(d1, inf));
        __m128 sl = _mm_mul_ps(_mm_set1_ps(0.5f), _mm_add_ps(_mm_sub_ps(d0, d1), vlen));
        __m128 sh = _mm_sub_ps(vlen, sl);
        sl = _mm_min_ps(_mm_max_ps(sl, vsa), vsb);
        sh = _mm_min_ps(_mm_max_ps(sh, vsa), vsb);
        __m128 lo = _mm_sub_ps(_mm_max_ps(_mm_sub_ps(d0, sl), _mm_sub_ps(d1, _mm_sub_ps(vlen, sl))),
                               _mm_loadu_ps(S->lmhi + j));
        __m128 far1 = _mm_sub_ps(_mm_add_ps(d1, vlen), sh);
        __m128 hi = _mm_sub_ps(_mm_loadu_ps(S->lmlo + j), _mm_min_ps(_mm_add_ps(d0, sh), far1));
        __m128 xl = _mm_add_ps(rax, _mm_mul_ps(ux, sl)), yl = _mm_add_ps(ray, _mm_mul_ps(uy, sl));
        __m128 xh = _mm_add_ps(rax, _mm_mul_ps(ux, sh)), yh = _mm_add_ps(ray, _mm_mul_ps(uy, sh));
        __m128 cl = _mm_add_ps(lo, _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(xl, xl), _mm_mul_ps(yl, yl))));
        __m128 ch = _mm_add_ps(hi, _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(xh, xh), _mm_mul_ps(yh, yh))));
        vbest = _mm_max_ps(vbest, _mm_and_ps(_mm_and_ps(ok, _mm_cmpgt_ps(lo, zero)), cl));
        vbest = _mm_max_ps(vbest, _mm_and_ps(_mm_and_ps(ok, _mm_cmpgt_ps(hi, zero)), ch));
    }
    float lanes[4];
    _mm_storeu_ps(lanes, vbest);
    best = max_f(max_f(lanes[0], lanes[1]), max_f(lanes[2], lanes[3]));
#else
    float far = qn__len(ra) + len;
    for (uint32_t j = 0; j < S->nlm; j++) {
        float d0 = v0[S->lmsel[j]], d1 = v1[S->lmsel[j]];
        if (!(d0 < INFINITY && d1 < INFINITY)) continue; /* NAN: unknown */
        float sl = 0.5f * (d0 - d1 + len), sh = len - sl;
        sl = sl < sa ? sa : (sl > sb ? sb : sl);
        sh = sh < sa ? sa : (sh > sb ? sb : sh);
        float lo = max_f(d0 - sl, d1 - (len - sl)) - S->lmhi[j];
        float hi = S->lmlo[j] - min_f(d0 + sh, d1 + len - sh);
        /* |r - x| <= |r - a| + len: a side that cannot beat best even so
        ** needs no square root. */
        if (lo > 0.0f && lo + far > best) best = max_f(best, lo + qn__len(qn__add(ra, qn__scale(u, sl))));
        if (hi > 0.0f && hi + far > best) best = max_f(best, hi + qn__len(qn__add(ra, qn__scale(u, sh))));
    }
#endif
    return best > S->lmslack ? best - S->lmslack : 0.0f;
}

/* The key of state n toward the target: the least length through its
** interval to the target (consistent, so the first goal state taken is a
** shortest path), raised to the landmarks' bound. */
static float target_key(const xsearch *S, const xnode *n) {
    if (n->quad == QN_NONE) return n->g;
    float f = n->g + through_interval(n->r, n->L, n->R, S->to, n->on);
    if (S->nlm) {
        float lb = n->g + landmark_bound(S, n->quad, n->sub, n->L, n->R, n->r);
        if (lb > f) f = lb;
    }
    return f;
}

/* Toward a target: the successors held back go into the heap, keyed. With
** go_on, the least of them is kept out and returned instead when no open
** state has a lower key (the heap would hand it out next anyway), unless it
** is a goal state; else QN_NONE. */
static uint32_t flush_pending(xsearch *S, bool go_on) {
    float key[MAX_PEND], least = INFINITY;
    uint32_t pick = 0, next = QN_NONE;
    for (uint32_t k = 0; k < S->npend; k++) {
        key[k] = target_key(S, &S->nodes[S->pend[k]]);
        if (key[k] < least) least = key[k], pick = k;
    }
    if (go_on && S->npend && S->nodes[S->pend[pick]].quad != QN_NONE &&
        (S->q.n == 0 || least <= S->q.a[0].key))
        next = S->pend[pick];
    for (uint32_t k = 0; k < S->npend && S->st == QN_OK; k++)
        if (S->pend[k] != next) push_key(S, key[k], S->pend[k]);
    S->npend = 0;
    return next;
}

/* Opens state n; f is its key one-to-all. Toward a target the state is
** held back (pend) and keyed when it enters the heap (flush_pending). */
static void push_node(xsearch *S, xnode *n, float f) {
    if (S->nn >= S->nmax) {
        S->st = QN_E_LIMIT;
        return;
    }
    if (S->nfree == QN_NONE && S->nn == S->ncap &&
        !grow(S, (void **)&S->nodes, &S->ncap, sizeof(xnode)))
        return;
    n->parent = S->cur;
    /* One-to-all keeps no parents: a popped state's slot is reused, so the
    ** pool holds the open states (the wavefront), not every state ever. */
    uint32_t i = S->nfree != QN_NONE ? S->nfree : S->nn++;
    if (i == S->nfree) S->nfree = S->nodes[i].parent;
    S->nodes[i] = *n;
    if (!S->target) {
        if (n->piece < S->npc) S->pieces[n->piece].node = i;
        push_key(S, f, i);
        return;
    }
    if (S->npend == MAX_PEND) flush_pending(S, false);
    S->pend[S->npend++] = i;
}

/* One-to-all: the open state of root rid entering quad nq through portal
** e whose piece ends where [t0, t1] begins, or begins where it ends (a
** root's view split by a vertex it saw past); QN_NONE when there is none. */
static uint32_t touching_piece(const xsearch *S, uint32_t e, uint32_t rid, float g, uint32_t nq,
                               float t0, float t1) {
    for (uint32_t w = S->head[e]; w != QN_NONE; w = S->pieces[w].next) {
        const piece *pc = &S->pieces[w];
        if (pc->rid != rid || pc->node == QN_NONE || pc->g != g) continue;
        const xnode *n = &S->nodes[pc->node];
        if (n->quad != nq || n->on) continue;
        if (fabsf(pc->t1 - t0) <= S->tol || fabsf(pc->t0 - t1) <= S->tol) return w;
    }
    return QN_NONE;
}

/* Widens the open state of piece w to [t0, t1] too: one state carries the
** root's whole view through the portal, instead of one per part, whose
** count would grow with every vertex the root sees past. */
static void widen(xsearch *S, uint32_t w, uint32_t e, bool up, float t0, float t1) {
    piece *pc = &S->pieces[w];
    const qn__pgeo *pt = xseg(S, e);
    if (t0 < pc->t0) pc->t0 = t0;
    if (t1 > pc->t1) pc->t1 = t1;
    xnode *n = &S->nodes[pc->node];
    qn_vec2 lo = on_portal(pt, pc->t0), hi = on_portal(pt, pc->t1);
    n->R = up ? lo : hi;
    n->L = up ? hi : lo;
    float f = n->g + qn__point_segment_dist(n->r, n->R, n->L);
    if (f < qn__heap_key(&S->q, pc->node)) qn__heap_lowered(&S->q, pc->node, f);
}

/* States for root rt (id rid, cost g) through the part [x0, x1] of the
** portal e into quad nq, cut to where it beats the portal's pieces. */
static void push_spans(xsearch *S, qn_vec2 rt, uint32_t rid, float g, uint32_t e, uint32_t nq,
                       qn_vec2 x0, qn_vec2 x1, bool on, int side) {
    if (S->pshut && S->pshut[e] == SHUT_DONE) return; /* no new piece beats it */
    const qn__pgeo *pt = xseg(S, e);
    float ta = along(pt, x0), tb = along(pt, x1);
    bool up = ta <= tb; /* x0 (the R end) lies at the lower t */
    span sp[MAX_SPANS];
    uint32_t n = envelope_cut(S, e, QN_NONE, rt, g, up ? ta : tb, up ? tb : ta, sp);
    if (on && n) n = 1, sp[0] = (span){up ? ta : tb, up ? tb : ta};
    const qn_mesh *m = S->m;
    uint32_t sub = S->b->psub[2 * e + (m->pq[e].q[0] == nq ? 0 : 1)];
    for (uint32_t i = 0; i < n && S->st == QN_OK; i++) {
        if (!on && !S->target) {
            uint32_t w = touching_piece(S, e, rid, g, nq, sp[i].a, sp[i].b);
            if (w != QN_NONE) {
                widen(S, w, e, up, sp[i].a, sp[i].b);
                continue;
            }
        }
        qn_vec2 pa = on ? x0 : on_portal(pt, up ? sp[i].a : sp[i].b);
        qn_vec2 pb = on ? x1 : on_portal(pt, up ? sp[i].b : sp[i].a);
        uint32_t pc = add_piece_record(S, e, rt, rid, g, sp[i].a, sp[i].b);
        /* The least length a path through the state can give: from a root
        ** that sees all of the quad, its distance to the quad (which can be
        ** less than to the interval: successors are then never keyed below
        ** their state, as close_portals needs; without it, the two give the
        ** same maps). Toward a target the key is worked out later
        ** (target_key). */
        float near =
            on && S->pshut ? qn__quad_distance(m, nq, rt) : qn__point_segment_dist(rt, pa, pb);
        float f = S->target ? 0.0f : g + near;
        xnode nd = {rt, pb, pa, g, rid, nq, sub, pc, QN_NONE, on, (int8_t)side};
        push_node(S, &nd, f);
    }
}

/* Do the points root + u, root + v and root + w lie within tol of one line
** through the root? Each is measured from the line toward the farthest of
** them: a short side's direction, carried far, carries its ends' rounding
** with it (a level turned and placed 1,000 units out, a root 0.6 from the
** end of its view's side, a sub-edge 5 to 7 beyond: the side's line passed
** 1.6e-4 from the sub-edge's ends where the tolerance was 2.4e-4 times
** 0.6, and the quad beyond was reached by no root at all). */
static bool in_line(float tol, qn_vec2 u, qn_vec2 v, qn_vec2 w) {
    float lu = qn__dot(u, u), lv = qn__dot(v, v), lw = qn__dot(w, w);
    qn_vec2 far = lu >= lv ? u : v;
    float lf = lu >= lv ? lu : lv;
    if (lw > lf) far = w, lf = lw;
    float t2 = tol * tol * lf, cu = qn__cross(far, u), cv = qn__cross(far, v),
          cw = qn__cross(far, w);
    return cu * cu <= t2 && cv * cv <= t2 && cw * cw <= t2;
}

/* Is quad q a dead end for a path entering it through an open portal: no
** other portal open? (Polyanya's dead-end pruning: only a path ending in q
** goes in.) */
static bool dead_end(const xsearch *S, uint32_t q) {
    return S->qopen[q] <= 1; /* the one it is entered by (open) */
}

/* A state for root rt seeing [t0, t1] of sub-edge se of quad `from`. A root
** in line with the interval sees all of the next quad; beyond the interval
** on its line, the path grazes the boundary and the nearer end (a corner)
** becomes the root. */
static void add_piece(xsearch *S, qn_vec2 rt, uint32_t rid, float g, const sub_edge *se, float t0,
                      float t1, uint32_t from) {
    qn_vec2 ab = qn__sub(se->b, se->a);
    /* A view's end within the mesh tolerance of an end of the sub-edge is
    ** that end, exactly. A view's sides are carried from portal to portal
    ** in floats; where one runs through vertices (a diagonal through a
    ** lattice), each clip near a vertex adds a few float steps, and far from
    ** the origin they add up past the tolerance within a few portals. The
    ** corner at the end is then not found as one (bend_at), and all that
    ** only that corner sees is reached the long way (exact costs 50 % too
    ** high 20,000 units out). */
    if (t0 > 0.0f || t1 < 1.0f) {
        float l2 = qn__dot(ab, ab), u = 1.0f - t1;
        if (t0 * t0 * l2 <= S->snap2) t0 = 0.0f;
        if (u * u * l2 <= S->snap2) t1 = 1.0f;
    }
    qn_vec2 x0 = qn__add(se->a, qn__scale(ab, t0)), x1 = qn__add(se->a, qn__scale(ab, t1));
    /* Squared: no test waits on a square root. */
    qn_vec2 d01 = qn__sub(x1, x0);
    float len2 = qn__dot(d01, d01), tol2 = S->tol * S->tol;
    if (!(len2 > tol2)) return;
    uint32_t nq = qn__portal_other(S->m, se->e, from);
    if (S->target && nq != S->qt && dead_end(S, nq)) return;
    /* The root in line with the interval: on a mesh of rectangles, within
    ** tol of its line (exact there); on any other, of one line with both
    ** its ends (in_line: a root far beyond a short interval). */
    float cr = qn__cross(d01, qn__sub(rt, x0));
    bool on = S->m->planes ? in_line(S->tol, qn__sub(x0, rt), qn__sub(x1, rt), qn__sub(x1, rt))
                           : cr * cr <= tol2 * len2;
    int side = 0;
    if (on && qn__point_segment_dist(rt, x0, x1) > S->tol) {
        bool near0 = qn__dot(qn__sub(x0, rt), qn__sub(x0, rt)) <= qn__dot(qn__sub(x1, rt), qn__sub(x1, rt));
        float tn = near0 ? t0 : t1;
        if (tn != 0.0f && tn != 1.0f) return; /* no corner to turn at */
        qn_vec2 xn = near0 ? x0 : x1;
        uint32_t v = tn == 0.0f ? se->va : se->vb;
        float gv = g + qn__len(qn__sub(xn, rt));
        if (!is_corner(S, v) || !root_ok(S, v, gv)) return;
        root_record(S, v, gv, rid, xn);
        /* The path runs along the sub-edge's line from the corner on to the
        ** old root; nq lies right of a -> b, and the obstacle on its side. */
        side = qn__dot(qn__sub(rt, xn), ab) > 0.0f ? -1 : 1;
        rt = xn, rid = v, g = gv;
    }
    if (on) {
        if (S->qvid[nq] == rid && g >= S->qg[nq]) return;
        if (S->qtouch && S->qvid[nq] == QN_NONE) S->qtouch[S->nqt++] = nq;
        S->qvid[nq] = rid;
        S->qg[nq] = g;
    }
    push_spans(S, rt, rid, g, se->e, nq, x0, x1, on, side);
}

/* A corner at an end of the interval, where the path may bend to reach what
** the root cannot see. */
typedef struct bend {
    bool on;
    qn_vec2 at;
    uint32_t vid;
    float g;
} bend;

static bend bend_at(xsearch *S, const xnode *n, qn_vec2 end, uint32_t bi, int side) {
    const qn__boundary *b = S->b;
    bend bd = {false, end, b->bvid[bi], 0.0f};
    qn_vec2 d = qn__sub(end, b->bv[bi]);
    if (n->on || qn__dot(d, d) > S->tol * S->tol || !is_corner(S, bd.vid)) return bd;
    bd.g = n->g + qn__len(qn__sub(end, n->r));
    if (!root_ok(S, bd.vid, bd.g)) return bd;
    bd.at = b->bv[bi];
    root_record(S, bd.vid, bd.g, n->rid, bd.at);
    add_entry(S, n->quad, bd.vid | ON_BIT, bd.at, qn__v2((float)side, 0.0f), bd.at);
    /* Its view of this quad was pushed once already at this cost. */
    bd.on = !(S->qvid[n->quad] == bd.vid && bd.g >= S->qg[n->quad]);
    return bd;
}

/* through_sub_edge's sides of a view (rays rr, rl from the root) that a
** sub-edge (its ends ra, rb from the root) runs along within tol: their
** cross products set to zero. */
static void edge_on(float tol, qn_vec2 rr, qn_vec2 rl, qn_vec2 ra, qn_vec2 rb, float *fra,
                    float *frb, float *fla, float *flb) {
    if (in_line(tol, rr, ra, rb)) *fra = *frb = 0.0f;
    if (in_line(tol, rl, ra, rb)) *fla = *flb = 0.0f;
}

/* Successors of node n through sub-edge se of its quad. */
static void through_sub_edge(xsearch *S, const xnode *n, const bend *br, const bend *bl,
                             const sub_edge *se) {
    if (n->on) {
        add_piece(S, n->r, n->rid, n->g, se, 0.0f, 1.0f, n->quad);
        return;
    }
    qn_vec2 rr = qn__sub(n->R, n->r), rl = qn__sub(n->L, n->r);
    qn_vec2 ra = qn__sub(se->a, n->r), rb = qn__sub(se->b, n->r);
    float fra = qn__cross(rr, ra), frb = qn__cross(rr, rb);
    float fla = qn__cross(ra, rl), flb = qn__cross(rb, rl);
    /* A sub-edge along a side of the view (both ends within the tolerance
    ** of its line) is seen edge-on, whichever side rounding puts it: the
    ** root then sees all of the quad beyond (add_piece). When every quad is
    ** a rectangle, the only such lines are axis-parallel, and exact; a
    ** turned mesh has them within a few ulps. */
    if (S->m->planes) edge_on(S->tol, rr, rl, ra, rb, &fra, &frb, &fla, &flb);
    float t0 = 0.0f, t1 = 1.0f;
    if (clip_nonneg(fra, frb, &t0, &t1) && clip_nonneg(fla, flb, &t0, &t1))
        add_piece(S, n->r, n->rid, n->g, se, t0, t1, n->quad);
    t0 = 0.0f, t1 = 1.0f;
    if (br->on && clip_nonneg(-fra, -frb, &t0, &t1))
        add_piece(S, br->at, br->vid, br->g, se, t0, t1, n->quad);
    t0 = 0.0f, t1 = 1.0f;
    if (bl->on && clip_nonneg(-fla, -flb, &t0, &t1))
        add_piece(S, bl->at, bl->vid, bl->g, se, t0, t1, n->quad);
}

/* Takes piece w out of portal e's list; one-to-all, its slot goes back
** to the pool (a path's query keeps every slot until path_reset). Without
** that, on a 4096 x 4096 map four slots in five were lost (2.5 million
** made, half a million in use at the end: 64 MiB). */
static void unlink_piece(xsearch *S, uint32_t e, uint32_t w) {
    for (uint32_t *at = &S->head[e]; *at != QN_NONE; at = &S->pieces[*at].next)
        if (*at == w) {
            *at = S->pieces[w].next;
            if (S->f) {
                S->pieces[w].next = S->pfree;
                S->pfree = w;
            }
            return;
        }
}

/* Cuts a popped state to the part no piece beats now; false when none is
** left. A state cut into several parts keeps its hull. */
static bool still_useful(xsearch *S, xnode *n) {
    if (n->on) return true;
    uint32_t e = S->b->bportal[S->b->bstart[n->quad] + n->sub];
    if (S->head[e] == n->piece) return true; /* nothing reached the portal since */
    const qn__pgeo *pt = xseg(S, e);
    float ta = along(pt, n->R), tb = along(pt, n->L);
    bool up = ta <= tb;
    span sp[MAX_SPANS];
    uint32_t k = envelope_cut(S, e, n->piece, n->r, n->g, up ? ta : tb, up ? tb : ta, sp);
    /* Where the others beat this piece, every later cut they make is
    ** stricter than its own: it keeps only the hull of what survives, or
    ** leaves the portal's list (shorter lists, fewer cache misses). */
    if (k == 0) {
        unlink_piece(S, e, n->piece);
        return false;
    }
    S->pieces[n->piece].t0 = sp[0].a;
    S->pieces[n->piece].t1 = sp[k - 1].b;
    if (k == 1) {
        qn_vec2 lo = sp[0].a > (up ? ta : tb) ? on_portal(pt, sp[0].a) : (up ? n->R : n->L);
        qn_vec2 hi = sp[0].b < (up ? tb : ta) ? on_portal(pt, sp[0].b) : (up ? n->L : n->R);
        n->R = up ? lo : hi;
        n->L = up ? hi : lo;
    }
    return true;
}

static void expand(xsearch *S, xnode n) {
    const qn__boundary *b = S->b;
    if (!still_useful(S, &n)) return;
    if (S->target && n.quad == S->qt) { /* the goal state: the rest is straight */
        xnode goal = n;
        goal.quad = QN_NONE;
        goal.g = n.g + through_interval(n.r, n.L, n.R, S->to, n.on);
        push_node(S, &goal, goal.g);
        return;
    }
    add_entry(S, n.quad, n.on ? n.rid | ON_BIT : n.rid, n.r,
              n.on ? qn__v2((float)n.side, 0.0f) : n.L, n.R);
    uint32_t base = b->bstart[n.quad], k = b->bstart[n.quad + 1] - base, j = n.sub;
    /* The wall beyond the right end lies right of the root's view, so on
    ** the left going back from that corner toward the root. */
    bend br = bend_at(S, &n, n.R, base + (j + 1) % k, 1);
    bend bl = bend_at(S, &n, n.L, base + j, -1);
    for (uint32_t s = j + 1 == k ? 0 : j + 1; s != j;) {
        uint32_t e = b->bportal[base + s], s1 = s + 1 == k ? 0 : s + 1;
        if (S->sopen[base + s]) {
            sub_edge se = {b->bv[base + s], b->bv[base + s1], b->bvid[base + s], b->bvid[base + s1], e};
            through_sub_edge(S, &n, &br, &bl, &se);
        }
        s = s1;
    }
}

/* Seed i (a goal point, or a path's start) at `at` in quad q, at cost g0
** (0 but for seeded fields: qn__field_create_seeded), sees all of its quad. */
static void seed_point(xsearch *S, uint32_t i, qn_vec2 at, uint32_t q, float g0) {
    const qn__boundary *b = S->b;
    uint32_t rid = S->nv + i, base = b->bstart[q], k = b->bstart[q + 1] - base;
    root_record(S, rid, g0, QN_NONE, at);
    add_entry(S, q, rid | ON_BIT, at, qn__v2(0.0f, 0.0f), at);
    for (uint32_t s = 0; s < k; s++) {
        uint32_t e = b->bportal[base + s];
        if (!S->sopen[base + s]) continue;
        sub_edge se = {b->bv[base + s], b->bv[base + (s + 1) % k], b->bvid[base + s],
                       b->bvid[base + (s + 1) % k], e};
        add_piece(S, at, rid, g0, &se, 0.0f, 1.0f, q);
    }
}

/* The walls as the mesh's state makes them, seen from open quads: corners
** the state adds (the ends of portals closed for this radius or by a
** blocked quad), and at every vertex the sum of the unit directions of the
** walls leaving it, whose opposite points away from the obstacle there. */
static void mark_walls(xsearch *S) {
    const qn__boundary *b = S->b;
    const qn_mesh *m = S->m;
    if (S->wver == m->version + 1 &&
        (S->wrad == S->radius || (S->target && qn__isearch_same_portals(S, S->wrad, S->radius)))) {
        S->wrad = S->radius; /* still right: the same portals are open */
        return;
    }
    S->wver = m->version + 1;
    S->wrad = S->radius;
    memset(S->dyn, 0, S->nv);
    S->any_dyn = false;
    memset(S->sopen, 0, b->bstart[m->quad_count]);
    memset(S->qopen, 0, m->quad_count);
    for (uint32_t q = 0; q < m->quad_count; q++) {
        if (m->blocked[q]) continue;
        uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base;
        for (uint32_t s = 0; s < k; s++) {
            uint32_t e = b->bportal[base + s], s1 = s + 1 == k ? 0 : s + 1;
            bool open = e != QN_NONE && qn__portal_open(m, e, S->radius);
            S->sopen[base + s] = open;
            if (open) {
                if (S->qopen[q] < 2) S->qopen[q]++;
                continue;
            }
            if (e != QN_NONE)
                S->dyn[b->bvid[base + s]] = S->dyn[b->bvid[base + s1]] = 1, S->any_dyn = true;
        }
    }
    if (!S->any_dyn) return;
    /* Of those, only the ones that stick out into the open quads round
    ** them (their angles there sum to more than pi) are corners: a path
    ** never bends round a point of a straight or hollow wall. The angles
    ** sum in rg, which is all INFINITY before any seed, and is again after
    ** (no array of its own: 22 MiB less on a 4096 x 4096 map). */
    float *vang = S->rg;
    for (uint32_t v = 0; v < S->nv; v++)
        vang[v] = 0.0f;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base;
        for (uint32_t s = 0; !m->blocked[q] && s < k; s++) {
            uint32_t v = b->bvid[base + s];
            if (S->dyn[v] && !(b->vkind[v] & QN__VK_CORNER))
                vang[v] += qn__boundary_angle(b, base, k, s);
        }
    }
    S->any_dyn = false;
    for (uint32_t v = 0; v < S->nv; v++) {
        if (S->dyn[v] && !(b->vkind[v] & QN__VK_CORNER) && !(vang[v] > QN__CORNER_OPEN))
            S->dyn[v] = 0;
        vang[v] = INFINITY;
        S->any_dyn |= S->dyn[v] != 0;
    }
}

/* Takes states out in key order and expands them. Toward a target, a
** state whose expansion leaves exactly one successor (a root's view going
** on through a quad with one other open portal: more than half of them on
** game maps) has that successor expanded at once, without keying it or
** passing it through the heap (Polyanya's intermediate pruning); of
** several, the least is expanded at once when no open state has a lower
** key. The path found stays a shortest one: a state expanded early only
** adds work, and the goal state is still taken from the heap in key order. */
static void run(xsearch *S) {
    while (S->st == QN_OK && S->q.n > 0) {
        if (S->pshut) close_portals(S, S->q.a[0].key);
        uint32_t i = pop_key(S);
        for (;;) {
            xnode n = S->nodes[i];
            if (n.quad == QN_NONE) { /* a goal state: the shortest path is found */
                S->found = i;
                return;
            }
            if (!S->target) {
                S->nodes[i].parent = S->nfree, S->nfree = i;
                if (n.piece < S->npc && S->pieces[n.piece].node == i)
                    S->pieces[n.piece].node = QN_NONE;
            }
            if (n.g > S->rg[n.rid] * (1.0f + 1e-6f) + S->tol) break; /* a cheaper root since */
            S->cur = S->target ? i : QN_NONE;
            expand(S, n);
            if (!S->target) break;
            if (S->npend == 1 && S->nodes[S->pend[0]].quad != QN_NONE) {
                i = S->pend[0];
                S->npend = 0;
                continue;
            }
            i = flush_pending(S, true);
            if (i == QN_NONE) break;
        }
    }
}

/* Portals close on meshes of this many quads or more: there the pieces of
** a one-to-all search would take tens of megabytes (about 11 pieces of 32
** bytes per quad on game maps), and closing them costs a tenth to a fifth
** of the build's time (a queue of portals, a look at each list). */
uint32_t qn__spm_shut_min_quads = 1u << 17;

/* ---- the instance -------------------------------------------------------------- */

/* A quad's entries in the order redundant() and join_wedges() need: by
** root (numbered in vertex id order, as the search's ids), a root seeing
** all of the quad before its wedges. */
static bool sent_before(const qn__sent *a, const qn__sent *b) {
    uint32_t ra = a->root & ~ON_BIT, rb = b->root & ~ON_BIT;
    if (ra != rb) return ra < rb;
    return (a->root & ON_BIT) && !(b->root & ON_BIT);
}

/* Is entry i the same as one kept already (same root seeing all the quad,
** or a wedge of a root that sees all of it)? Entries are sorted. */
static bool redundant(const qn__sent *e, uint32_t i, uint32_t first) {
    uint32_t rid = e[i].root & ~ON_BIT;
    for (uint32_t j = i; j-- > first && (e[j].root & ~ON_BIT) == rid;) {
        bool same = e[j].l == e[i].l && e[j].r == e[i].r;
        /* A root that sees all of the quad makes its wedges repeats; two
        ** such entries differ only by the obstacle's side. */
        if (same || ((e[j].root & ON_BIT) && !(e[i].root & ON_BIT))) return true;
    }
    return false;
}

/* The instance minus its entries (finish makes those): room for nroots
** roots. */
static qn_status spm_alloc(const qn_field *f, uint32_t nroots, uint32_t nb, qn__spm **out) {
    const qn_mesh *m = f->mesh;
    qn__spm *s = qn__calloc(&f->alloc, 1, sizeof *s);
    if (!s) return QN_E_NOMEM;
    s->nroots = nroots;
    s->nb = nb;
    s->open = qn__calloc(&f->alloc, (size_t)nb / 8 + 1, 1);
    s->qstart = qn__alloc(&f->alloc, ((size_t)m->quad_count + 1) * sizeof(uint32_t));
    s->rcap = nroots;
    s->roots = qn__alloc(&f->alloc, ((size_t)nroots + 1) * sizeof(qn__sroot));
    s->bytes = sizeof *s + ((size_t)m->quad_count + 1) * sizeof(uint32_t) +
               ((size_t)nroots + 1) * sizeof(qn__sroot) + (size_t)nb / 8 + 1;
    *out = s;
    if (!s->qstart || !s->roots || !s->open) return QN_E_NOMEM;
    return QN_OK;
}

void qn__spm_free(const qn_allocator *a, qn__spm *s, uint32_t quads) {
    if (!s) return;
    qn__free(a, s->xq, (size_t)s->nxc * sizeof(uint32_t));
    qn__free(a, s->xc, (size_t)s->nxc * sizeof(qn__xcorner));
    qn__free(a, s->qstart, ((size_t)quads + 1) * sizeof(uint32_t));
    qn__free(a, s->ents, ((size_t)s->nents + 1) * sizeof(qn__sent));
    qn__free(a, s->roots, ((size_t)s->rcap + 1) * sizeof(qn__sroot));
    qn__free(a, s->open, (size_t)s->nb / 8 + 1);
    qn__spm_exits_free(a, atomic_load(&s->exits), quads);
    qn__free(a, s, sizeof *s);
}

static size_t search_fixed_bytes(const xsearch *S);
static void shrink_fixed(xsearch *S);

/* Root rid as the sampler keeps it, into *r (wsum: walls_sum's). */
static void make_root(const xsearch *S, const qn_vec2 *wsum, uint32_t rid, qn__sroot *r) {
    r->at = S->rpos[rid];
    r->g = S->rg[rid] * qn__quad_cost(S->f->mesh, S->f->goals[0].quad);
    uint32_t par = S->rpar[rid];
    qn_vec2 out = par == QN_NONE ? qn__v2(0.0f, 0.0f) : unit(qn__sub(S->rpos[par], r->at));
    r->goal = out.x == 0.0f && out.y == 0.0f ? QN__SROOT_GOAL : 0;
    r->out = r->goal ? 0 : diamond(out);
    /* A goal proper no unit's centre can reach (the sampler's
    ** goal_out_of_reach): asked once here, not at every sample near it. */
    bool clear = true;
    if (r->goal && r->g == 0.0f && S->f->radius > 0.0f &&
        qn_mesh_line_of_sight(S->f->mesh, r->at, r->at, S->f->radius, QN_NONE, &clear) == QN_OK &&
        !clear)
        r->goal |= QN__SROOT_TIGHT;
    /* The obstacle's side from the walls at the corner (their directions
    ** sum into the obstacle); unknown where they cancel (two obstacles
    ** touching at the corner) or point along the path. */
    qn_vec2 w = rid < S->nv ? wsum[rid] : qn__v2(0.0f, 0.0f);
    float c = qn__cross(out, w), lw = qn__len(w);
    r->side = (int8_t)(lw > 1e-3f && fabsf(c) > 0.1f * lw ? (c > 0.0f ? 1 : -1) : 0);
}

/* Two of an entry's directions within a step of each other. */
static bool near_dir(uint16_t a, uint16_t b) {
    uint16_t d = (uint16_t)(a - b);
    return d <= 1u || d == 0xFFFFu;
}

/* Joins the wedges of one root that touch (a root seeing a quad through
** two portals side by side on one edge): one wedge from the right side of
** one to the left side of the other. e[first..n) is one quad's entries;
** returns the new count. */
static uint32_t join_wedges(qn__sent *e, uint32_t first, uint32_t n) {
    for (uint32_t i = first; i < n; i++) {
        if (e[i].root & ON_BIT) continue;
        for (uint32_t j = i + 1; j < n && e[j].root == e[i].root;) {
            bool li = near_dir(e[i].l, e[j].r), ri = near_dir(e[i].r, e[j].l);
            if (!li && !ri) {
                j++;
                continue;
            }
            if (li)
                e[i].l = e[j].l;
            else
                e[i].r = e[j].r;
            e[j] = e[--n];
            j = i + 1; /* the joined wedge may touch one seen before */
        }
    }
    return n;
}

/* The sampler's order of a quad's entries: the wedges, then those whose
** root sees all of the quad (the sampler's look for corners to round
** reads only them, from the end); least bound (la, lb) first in each group. */
static bool spm_before(const qn__sent *a, float la, const qn__sent *b, float lb) {
    bool ona = (a->root & ON_BIT) != 0, onb = (b->root & ON_BIT) != 0;
    return ona != onb ? onb : la < lb;
}

bool qn__spm_add_corners(const qn_allocator *a, qn__spm *s, const uint32_t *q,
                         const qn__xcorner *c, uint32_t n) {
    if (!n) return true;
    uint32_t total = s->nxc + n, i = 0, o = 0, k = 0;
    uint32_t *xq = qn__alloc(a, (size_t)total * sizeof(uint32_t));
    qn__xcorner *xc = qn__alloc(a, (size_t)total * sizeof(qn__xcorner));
    if (!xq || !xc) {
        qn__free(a, xq, (size_t)total * sizeof(uint32_t));
        qn__free(a, xc, (size_t)total * sizeof(qn__xcorner));
        return false;
    }
    while (o < s->nxc || k < n) { /* the two lists, merged by quad */
        bool old = k == n || (o < s->nxc && s->xq[o] <= q[k]);
        xq[i] = old ? s->xq[o] : q[k];
        xc[i++] = old ? s->xc[o++] : c[k++];
        s->qstart[xq[i - 1]] |= QN__SPM_QXCORNERS;
    }
    qn__free(a, s->xq, (size_t)s->nxc * sizeof(uint32_t));
    qn__free(a, s->xc, (size_t)s->nxc * sizeof(qn__xcorner));
    s->bytes += (size_t)n * (sizeof(uint32_t) + sizeof(qn__xcorner));
    s->xq = xq, s->xc = xc, s->nxc = total;
    return true;
}

/* The corners the mesh's state adds for this search (mark_walls's dyn:
** ends of portals closed for the radius or by a blocked quad, where the
** mesh itself has no corner, that stick out into the open quads), with the
** walls' direction sum there (wsum: walls_sum's), by quad: *n of them
** into *q and *c (NULL when none); false when out of memory. */
static bool state_corners(const xsearch *S, const qn_vec2 *wsum, uint32_t **q, qn__xcorner **c,
                          uint32_t *n) {
    const qn__boundary *b = S->b;
    const qn_mesh *m = S->m;
    *q = NULL, *c = NULL, *n = 0;
    if (!S->any_dyn) return true;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t k = 0;
        for (uint32_t qq = 0; qq < m->quad_count; qq++) {
            if (m->blocked[qq]) continue;
            for (uint32_t i = b->bstart[qq]; i < b->bstart[qq + 1]; i++) {
                uint32_t v = b->bvid[i];
                if (!S->dyn[v] || (b->vkind[v] & QN__VK_CORNER)) continue;
                if (pass) (*q)[k] = qq, (*c)[k] = (qn__xcorner){b->bv[i], wsum[v]};
                k++;
            }
        }
        *n = k;
        if (pass || !k) break;
        *q = qn__alloc(&S->alloc, (size_t)k * sizeof(uint32_t));
        *c = qn__alloc(&S->alloc, (size_t)k * sizeof(qn__xcorner));
        if (!*q || !*c) return false;
    }
    return true;
}

/* Per vertex id, the sum of the unit directions of the walls leaving it
** as mark_walls left them (sopen), seen from open quads, whose opposite
** points away from the obstacle there: nv + 1 of them, the caller's to
** free. Made when the instance is laid out, not for the search (on a
** 4096 x 4096 map, 42 MiB less while it runs). NULL when out of memory. */
static qn_vec2 *walls_sum(const xsearch *S) {
    const qn__boundary *b = S->b;
    const qn_mesh *m = S->m;
    qn_vec2 *wsum = qn__calloc(&S->alloc, (size_t)S->nv + 1, sizeof *wsum);
    if (!wsum) return NULL;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        if (m->blocked[q]) continue;
        uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base;
        for (uint32_t s = 0; s < k; s++) {
            if (S->sopen[base + s]) continue;
            uint32_t s1 = s + 1 == k ? 0 : s + 1;
            uint32_t va = b->bvid[base + s], vb = b->bvid[base + s1];
            qn_vec2 d = unit(qn__sub(b->bv[base + s1], b->bv[base + s]));
            wsum[va] = qn__add(wsum[va], d);
            wsum[vb] = qn__sub(wsum[vb], d);
        }
    }
    return wsum;
}

/* Numbers the ids of map[0..n) that are marked (not QN_NONE) 0, 1, ... in
** id order, in place; returns how many. */
static uint32_t number_marked(uint32_t *map, uint32_t n) {
    uint32_t used = 0;
    for (uint32_t i = 0; i < n; i++)
        if (map[i] != QN_NONE) map[i] = used++;
    return used;
}

/* Are the walls mark_walls made (sopen) the boundary's: a wall where it
** has no portal, nothing else? */
static bool walls_match(const xsearch *S) {
    const qn__boundary *b = S->b;
    for (uint32_t i = 0; i < b->nb; i++)
        if ((S->sopen[i] != 0) != (b->bportal[i] != QN_NONE)) return false;
    return true;
}

static bool any_blocked(const qn_mesh *m) {
    for (uint32_t q = 0; q < m->quad_count; q++)
        if (m->blocked[q]) return true;
    return false;
}

/* The roots the entries use, numbered in vertex id order, into s->roots,
** and what else of the search's fixed arrays the instance keeps (the
** walls, the state's corners); then those arrays are freed, before the
** entries are laid out: on a 4096 x 4096 map 100 MiB by then. The
** entries' roots become root indices, in their blocks. The roots in use
** are marked in a bit set, and each one's new index goes in its rpar slot
** once make_root has read it (no map of its own: 21 MiB less at this
** step's peak on that map); the walls' sums are the boundary's when the
** walls are (44 MiB less). */
static qn_status roots_first(xsearch *S, qn__spm **out, uint32_t **xq, qn__xcorner **xc,
                             uint32_t *nx) {
    shrink_fixed(S);
    uint32_t nr = S->nr, words = nr / 64 + 1;
    uint64_t *mark = qn__calloc(&S->alloc, words, sizeof(uint64_t));
    if (!mark) return QN_E_NOMEM;
    for (uint32_t b = 0; b < S->nblk; b++)
        for (uint32_t i = 0, n = block_count(S, b); i < n; i++) {
            uint32_t rid = S->eblk[b][i].rid & ~ON_BIT;
            mark[rid >> 6] |= (uint64_t)1 << (rid & 63u);
        }
    uint32_t used = 0;
    for (uint32_t w = 0; w < words; w++)
        used += qn__popcount64(mark[w]);
    qn__spm *s = NULL;
    qn_status st = spm_alloc(S->f, used, S->b->nb, &s);
    /* With the boundary's walls and no quad blocked (a blocked quad with
    ** no portal leaves walls_sum's walls out), the boundary's vwall is
    ** walls_sum's, bit for bit: the same sums in the same order. */
    bool same = walls_match(S), own = st == QN_OK && !(same && !any_blocked(S->m));
    qn_vec2 *mine = own ? walls_sum(S) : NULL;
    const qn_vec2 *wsum = own ? mine : S->b->vwall;
    if (own && !mine) st = QN_E_NOMEM;
    for (uint32_t i = 0, k = 0; st == QN_OK && i < nr; i++) {
        if (!(mark[i >> 6] >> (i & 63u) & 1u)) {
            S->rpar[i] = QN_NONE;
            continue;
        }
        make_root(S, wsum, i, &s->roots[k]);
        S->rpar[i] = k++; /* make_root reads only its own root's rpar */
    }
    qn__free(&S->alloc, mark, (size_t)words * sizeof(uint64_t));
    if (st == QN_OK) {
        /* The walls as mark_walls made them, unless the boundary tells
        ** (qn__spm_wall). */
        for (uint32_t i = 0; !same && i < S->b->nb; i++)
            s->open[i >> 3] |= (uint8_t)((S->sopen[i] != 0) << (i & 7u));
        if (same) {
            qn__free(&S->f->alloc, s->open, (size_t)s->nb / 8 + 1);
            s->open = NULL;
            s->bytes -= (size_t)s->nb / 8 + 1;
        }
        if (!state_corners(S, wsum, xq, xc, nx)) st = QN_E_NOMEM;
    }
    if (mine) qn__free(&S->alloc, mine, ((size_t)S->nv + 1) * sizeof *mine);
    if (st == QN_OK) {
        for (uint32_t b = 0; b < S->nblk; b++)
            for (uint32_t i = 0, n = block_count(S, b); i < n; i++) {
                xentry *x = &S->eblk[b][i];
                x->rid = S->rpar[x->rid & ~ON_BIT] | (x->rid & ON_BIT);
            }
        qn__free(&S->alloc, S->rpos, search_fixed_bytes(S));
        S->rpos = NULL;
    }
    *out = s;
    return st;
}

/* Sorts the entries by quad into ents as the sampler keeps them (the quad
** is then their place): a counting sort (read in order, each entry
** written once to its quad's place; following the permutation in place
** instead took a cache miss or two per entry, a quarter of a 4096 x 4096
** map's build), each block freed once moved, so the entries take their
** room about once, not twice; each quad's few entries then by
** insertion. qstart gets each quad's first (before redundant ones go).
** False when out of memory. */
static bool sort_entries(xsearch *S, qn__spm *s) {
    uint32_t nq = S->m->quad_count, ne = S->ne, *start = s->qstart;
    qn__sent *to = qn__alloc(&S->alloc, ((size_t)ne + 1) * sizeof *to);
    if (!to) return false;
    for (uint32_t q = 0; q <= nq; q++)
        start[q] = 0;
    for (uint32_t b = 0; b < S->nblk; b++)
        for (uint32_t i = 0, n = block_count(S, b); i < n; i++)
            start[S->eblk[b][i].quad]++;
    for (uint32_t q = 0, sum = 0; q <= nq; q++) { /* start[q]: the end of q-1's, for now */
        uint32_t c = start[q];
        start[q] = sum;
        sum += c;
    }
    for (uint32_t b = 0; b < S->nblk; b++) {
        const xentry *e = S->eblk[b];
        for (uint32_t i = 0, n = block_count(S, b); i < n; i++)
            to[start[e[i].quad]++] = (qn__sent){e[i].rid, e[i].l, e[i].r};
        qn__free(&S->alloc, S->eblk[b], sizeof(xentry) << S->eshift);
        S->eblk[b] = NULL;
    }
    free_blocks(S);
    for (uint32_t q = nq; q > 0; q--)
        start[q] = start[q - 1]; /* back to each quad's first */
    start[0] = 0;
    s->ents = to; /* the instance's from now on */
    s->nents = ne;
    for (uint32_t q = 0; q < nq; q++)
        for (uint32_t i = start[q] + 1; i < start[q + 1]; i++) {
            qn__sent x = to[i];
            uint32_t j = i;
            for (; j > start[q] && sent_before(&x, &to[j - 1]); j--)
                to[j] = to[j - 1];
            to[j] = x;
        }
    return true;
}

/* Roots no kept entry uses (redundant ones went) leave the list; the
** rest keep their order. */
static bool shrink_roots(const xsearch *S, qn__spm *s) {
    uint32_t n = s->nroots;
    uint32_t *map = qn__alloc(&S->alloc, ((size_t)n + 1) * sizeof(uint32_t));
    if (!map) return false;
    for (uint32_t i = 0; i < n; i++)
        map[i] = QN_NONE;
    for (uint32_t i = 0; i < s->nents; i++)
        map[s->ents[i].root & ~ON_BIT] = 0;
    uint32_t kept = number_marked(map, n);
    for (uint32_t i = 0; i < n; i++) /* map[i] <= i: moved down in order */
        if (map[i] != QN_NONE) s->roots[map[i]] = s->roots[i];
    for (uint32_t i = 0; i < s->nents; i++)
        s->ents[i].root = map[s->ents[i].root & ~ON_BIT] | (s->ents[i].root & ON_BIT);
    qn__free(&S->alloc, map, ((size_t)n + 1) * sizeof(uint32_t));
    s->nroots = kept;
    if (kept < s->rcap) {
        qn__sroot *r =
            qn__realloc(&S->f->alloc, s->roots, ((size_t)s->rcap + 1) * sizeof(qn__sroot),
                        ((size_t)kept + 1) * sizeof(qn__sroot));
        if (r) {
            s->bytes -= (size_t)(s->rcap - kept) * sizeof(qn__sroot);
            s->roots = r;
            s->rcap = kept;
        }
    }
    return true;
}

static qn_status finish(xsearch *S, qn__spm **out) {
    const qn_mesh *m = S->m;
    uint32_t nq = m->quad_count, *xq = NULL, nx = 0;
    qn__xcorner *xc = NULL;
    qn__spm *s = NULL;
    qn_status st = roots_first(S, &s, &xq, &xc, &nx);
    if (st == QN_OK && !sort_entries(S, s)) st = QN_E_NOMEM;
    uint32_t kept = 0, most = 0;
    if (st == QN_OK) {
        /* Each quad's entries less the redundant ones, joined, moved
        ** forward; then the obstacle's side at a root seeing all of the
        ** quad: the root's own (from the walls there) when known, else the
        ** entry's. */
        qn__sent *e = s->ents;
        for (uint32_t q = 0; q < nq; q++) {
            uint32_t first = kept, end = s->qstart[q + 1];
            for (uint32_t i = s->qstart[q]; i < end; i++) {
                e[kept] = e[i];
                if (!redundant(e, kept, first)) kept++;
            }
            kept = join_wedges(e, first, kept);
            s->qstart[q] = first;
            most = kept - first > most ? kept - first : most;
            for (uint32_t i = first; i < kept; i++) {
                int side = s->roots[e[i].root & ~ON_BIT].side;
                if ((e[i].root & ON_BIT) && side != 0)
                    e[i].l = (uint16_t)(side > 0 ? QN__SPM_LEFT : QN__SPM_RIGHT);
            }
        }
        s->qstart[nq] = kept;
        qn__sent *ents = qn__realloc(&S->alloc, e, ((size_t)S->ne + 1) * sizeof(qn__sent),
                                     ((size_t)kept + 1) * sizeof(qn__sent));
        if (ents) s->ents = ents, s->nents = kept;
        s->bytes += ((size_t)s->nents + 1) * sizeof(qn__sent);
        if (kept > QN__SPM_QMASK) st = QN_E_LIMIT; /* qstart keeps flags above */
    }
    float *lb = st == QN_OK ? qn__alloc(&S->alloc, ((size_t)most + 1) * sizeof(float)) : NULL;
    if (st == QN_OK && !lb) st = QN_E_NOMEM;
    if (st == QN_OK) {
        /* Each entry's least cost over the quad (its root's cost plus its
        ** distance to the quad); each quad's entries in the sampler's order
        ** (spm_before), so that the best so far is low early and most of
        ** the others are set aside without a square root. */
        for (uint32_t qq = 0; qq < nq; qq++) {
            uint32_t first = s->qstart[qq], n = s->qstart[qq + 1] - first;
            qn__sent *e = s->ents + first;
            for (uint32_t i = 0; i < n; i++) {
                const qn__sroot *r = &s->roots[e[i].root & ~ON_BIT];
                float d = (e[i].root & ON_BIT) ? 0.0f : qn__quad_distance(m, qq, r->at);
                lb[i] = r->g + d;
            }
            for (uint32_t i = 1; i < n; i++) {
                qn__sent x = e[i];
                float xl = lb[i];
                uint32_t j = i;
                for (; j > 0 && spm_before(&x, xl, &e[j - 1], lb[j - 1]); j--)
                    e[j] = e[j - 1], lb[j] = lb[j - 1];
                e[j] = x, lb[j] = xl;
            }
        }
    }
    qn__free(&S->alloc, lb, ((size_t)most + 1) * sizeof(float));
    if (st == QN_OK) /* quads with obstacle corners on their boundary */
        for (uint32_t qq = 0; qq < nq; qq++)
            if (S->b->cmask[qq]) s->qstart[qq] |= QN__SPM_QCORNERS;
    if (st == QN_OK && !qn__spm_add_corners(&S->f->alloc, s, xq, xc, nx)) st = QN_E_NOMEM;
    qn__free(&S->alloc, xq, (size_t)nx * sizeof(uint32_t));
    qn__free(&S->alloc, xc, (size_t)nx * sizeof(qn__xcorner));
    if (st == QN_OK && !shrink_roots(S, s)) st = QN_E_NOMEM;
    if (st != QN_OK) qn__spm_free(&S->f->alloc, s, nq), s = NULL;
    *out = s;
    return st;
}

/* The search's fixed arrays, one block: first what the instance's roots
** and walls are made from after the search (per root rpos, rg, rpar; per
** vertex id dyn; per boundary sub-edge sopen), then the rest (per quad qg,
** qvid, qopen; per portal head), which roots_first gives back first. */
static size_t search_kept_bytes(const xsearch *S) {
    size_t b = (size_t)S->nr * (sizeof(qn_vec2) + sizeof(float) + sizeof(uint32_t)) +
               (size_t)S->nv + S->b->bstart[S->m->quad_count];
    return (b + 7u) & ~(size_t)7u;
}
static size_t search_fixed_bytes(const xsearch *S) {
    const qn_mesh *m = S->m;
    if (S->fixed_kept) return search_kept_bytes(S);
    return search_kept_bytes(S) + (size_t)m->portal_count * sizeof(uint32_t) +
           (size_t)m->quad_count * (2 * sizeof(uint32_t) + 1);
}

/* Sets every per-search array to "nothing reached yet". */
static void search_reset(xsearch *S) {
    const qn_mesh *m = S->m;
    for (uint32_t i = 0; i < m->portal_count; i++) S->head[i] = QN_NONE;
    for (uint32_t i = 0; i < S->nr; i++) S->rg[i] = INFINITY, S->rpar[i] = QN_NONE;
    for (uint32_t i = 0; i < m->quad_count; i++) S->qvid[i] = QN_NONE, S->qg[i] = INFINITY;
    S->nn = S->q.n = S->npc = S->ne = 0;
    S->cur = S->found = S->nfree = S->pfree = QN_NONE;
    S->npend = 0;
    S->st = QN_OK;
}

/* Points the kept arrays into the fixed block at p. */
static void kept_arrays(xsearch *S, char *p) {
    S->rpos = (qn_vec2 *)(void *)p;
    S->rg = (float *)(void *)(S->rpos + S->nr);
    S->rpar = (uint32_t *)(void *)(S->rg + S->nr);
    S->dyn = (uint8_t *)(S->rpar + S->nr);
    S->sopen = S->dyn + S->nv;
}

/* One-to-all, once the search has run: the fixed block shrinks to its
** kept part (12 MiB of quads and 11 of portals on a 4096 x 4096 map, given
** back before the instance's roots are made). Left whole when the
** allocator cannot. */
static void shrink_fixed(xsearch *S) {
    size_t all = search_fixed_bytes(S), kept = search_kept_bytes(S);
    char *p = qn__realloc(&S->alloc, S->rpos, all, kept);
    if (!p) return;
    S->fixed_kept = true;
    kept_arrays(S, p);
    S->qg = NULL, S->qvid = NULL, S->head = NULL, S->qopen = NULL;
}

static qn_status search_init(xsearch *S, const qn_mesh *m, const qn_allocator *a, uint32_t seeds) {
    memset(S, 0, sizeof *S);
    S->m = m;
    S->b = qn__mesh_boundary(m, NULL);
    S->geo = qn__mesh_segments(m);
    if (!S->b || !S->geo) return QN_E_NOMEM;
    S->alloc = *a;
    S->tol = qn__tol_inner(m); /* lengths inside the level, not coordinates */
    S->snap2 = m->eps * m->eps;
    S->nv = S->b->nv;
    S->ngoal = seeds;
    S->nr = S->nv + seeds;
    S->nmax = UINT32_MAX;
    size_t bytes = search_fixed_bytes(S);
    char *p = qn__alloc(&S->alloc, bytes);
    if (!p) return QN_E_NOMEM;
    kept_arrays(S, p);
    S->qg = (float *)(void *)(p + search_kept_bytes(S));
    S->qvid = (uint32_t *)(void *)(S->qg + m->quad_count);
    S->head = S->qvid + m->quad_count;
    S->qopen = (uint8_t *)(S->head + m->portal_count);
    search_reset(S);
    return QN_OK;
}

/* Frees the growing pools of states and pieces (the search's, not the
** entries) and marks them empty. */
static void free_pools(xsearch *S) {
    qn__free(&S->alloc, S->pshut, (size_t)S->m->portal_count + 1);
    qn__free(&S->alloc, S->cheap, (size_t)S->chcap * sizeof(qn__hent));
    S->pshut = NULL, S->cheap = NULL;
    S->chcap = 0;
    qn__free(&S->alloc, S->nodes, (size_t)S->ncap * sizeof(xnode));
    qn__free(&S->alloc, S->heap, (size_t)S->hcap * sizeof(qn__hent));
    qn__free(&S->alloc, S->hpos, (size_t)S->poscap * sizeof(uint32_t));
    qn__free(&S->alloc, S->pieces, (size_t)S->pcap * sizeof(piece));
    S->nodes = NULL, S->heap = NULL, S->hpos = NULL, S->pieces = NULL;
    S->ncap = S->hcap = S->poscap = S->pcap = 0;
}

static void search_free(xsearch *S) {
    if (S->rpos) qn__free(&S->alloc, S->rpos, search_fixed_bytes(S));
    free_pools(S);
    free_blocks(S);
}

qn_status qn__spm_build(qn_field *f, qn_error *err) {
    xsearch S;
    qn_status st = search_init(&S, f->mesh, &f->alloc, f->goal_count);
    /* About four pieces and entries per quad on game maps; the open states,
    ** and where portals close (close_portals) the pieces, are the wavefront. */
    uint32_t want = f->mesh->quad_count < (1u << 26) ? 4 * f->mesh->quad_count + 64 : (1u << 28);
    bool shut = f->mesh->quad_count >= qn__spm_shut_min_quads;
    uint32_t pwant = shut ? want / 16 : want;
    if (st == QN_OK && (!reserve(&S, (void **)&S.nodes, &S.ncap, sizeof(xnode), want / 16) ||
                        !reserve(&S, (void **)&S.heap, &S.hcap, sizeof(qn__hent), want / 16) ||
                        !reserve(&S, (void **)&S.pieces, &S.pcap, sizeof(piece), pwant)))
        st = QN_E_NOMEM;
    /* Entry blocks: one for a small mesh; for a large one, 2 Mi entries
    ** (24 MiB) each, freed in turn as sort_entries moves them. */
    for (S.eshift = 8; S.eshift < 21 && (1u << S.eshift) < want;) S.eshift++;
    /* The portals' closing marks (close_portals), on large meshes. */
    if (st == QN_OK && shut) {
        S.pshut = qn__calloc(&S.alloc, (size_t)f->mesh->portal_count + 1, 1);
        if (!S.pshut) st = QN_E_NOMEM;
    }
    if (st == QN_OK) {
        S.f = f;
        S.radius = f->radius;
        mark_walls(&S);
        /* A goal in a quad blocked since the field was made reaches
        ** nothing, its own quad included. */
        for (uint32_t i = 0; i < f->goal_count; i++)
            if (!f->mesh->blocked[f->goals[i].quad])
                seed_point(&S, i, f->goals[i].at, f->goals[i].quad, qn__goal_g0(f, i));
        run(&S);
        st = S.st;
    }
    /* The states and pieces are done with: freed before the entries are
    ** laid out, so the two never take memory at once. */
    free_pools(&S);
    qn__spm *s = NULL;
    if (st == QN_OK) st = finish(&S, &s);
    if (st == QN_OK) {
        qn__spm_free(&f->alloc, f->spm, f->mesh->quad_count);
        f->spm = s;
    }
    if (S.b && S.geo) search_free(&S);
    if (st == QN_E_NOMEM) return qn__fail(err, st, QN_NONE, "out of memory (exact instance)");
    if (st != QN_OK) return qn__fail(err, st, QN_NONE, "exact instance: search too large");
    return QN_OK;
}

/* ---- individual paths ---------------------------------------------------------- */

void qn__isearch_destroy(qn__isearch *S);

qn_status qn__isearch_create(const qn_mesh *m, const qn_allocator *a, uint32_t max_states,
                             qn__isearch **out) {
    *out = NULL;
    xsearch *S = qn__alloc(a, sizeof *S);
    if (!S) return QN_E_NOMEM;
    qn_status st = search_init(S, m, a, 1);
    if (st != QN_OK) {
        if (S->rpos) search_free(S);
        qn__free(a, S, sizeof *S);
        return st;
    }
    S->target = true;
    S->nmax = max_states;
    S->rtouch = qn__alloc(a, (size_t)S->nr * sizeof(uint32_t));
    S->qtouch = qn__alloc(a, ((size_t)m->quad_count + 1) * sizeof(uint32_t));
    if (!S->rtouch || !S->qtouch) {
        qn__isearch_destroy(S);
        return QN_E_NOMEM;
    }
    /* Pools for short queries up front; longer ones grow them (and keep
    ** what they grew). */
    if (!grow(S, (void **)&S->nodes, &S->ncap, sizeof(xnode)) ||
        !grow(S, (void **)&S->heap, &S->hcap, sizeof(qn__hent)) ||
        !grow(S, (void **)&S->hpos, &S->poscap, sizeof(uint32_t)) ||
        !grow(S, (void **)&S->pieces, &S->pcap, sizeof(piece))) {
        qn__isearch_destroy(S);
        return QN_E_NOMEM;
    }
    *out = S;
    return QN_OK;
}

void qn__isearch_destroy(qn__isearch *S) {
    if (!S) return;
    qn_allocator a = S->alloc;
    qn__free(&a, S->okey, (size_t)S->nokey * sizeof(float));
    qn__free(&a, S->rtouch, (size_t)S->nr * sizeof(uint32_t));
    qn__free(&a, S->qtouch, ((size_t)S->m->quad_count + 1) * sizeof(uint32_t));
    search_free(S);
    qn__free(&a, S, sizeof *S);
}

size_t qn__isearch_bytes(const qn__isearch *S) {
    if (!S) return 0;
    return sizeof *S + search_fixed_bytes(S) +
           (size_t)S->ncap * sizeof(xnode) + (size_t)S->hcap * sizeof(qn__hent) +
           (size_t)S->poscap * sizeof(uint32_t) +
           (size_t)S->pcap * sizeof(piece) +
           ((size_t)S->nr + S->m->quad_count + 1) * sizeof(uint32_t) +
           (size_t)S->nokey * sizeof(float);
}

static int cmp_float(const void *x, const void *y) {
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

/* How many portals a radius closes by their width (qn__portal_open), from
** the sorted keys: those whose key is below twice the radius. */
static uint32_t closed_by_width(const xsearch *S, float radius) {
    if (radius <= 0.0f) return 0;
    uint32_t lo = 0, hi = S->nokey;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (S->okey[mid] < 2.0f * radius) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

bool qn__isearch_same_portals(qn__isearch *S, float r1, float r2) {
    const qn_mesh *m = S->m;
    if (r1 == r2) return true;
    if (!S->okey && m->portal_count) {
        float *k = qn__alloc(&S->alloc, (size_t)m->portal_count * sizeof(float));
        if (!k) return false; /* then the walls are marked again */
        for (uint32_t e = 0; e < m->portal_count; e++) k[e] = qn__portal_width(m, e) + m->eps;
        qsort(k, m->portal_count, sizeof *k, cmp_float);
        S->okey = k;
        S->nokey = m->portal_count;
    }
    return closed_by_width(S, r1) == closed_by_width(S, r2);
}

void qn__isearch_bounds(qn__isearch *S, const float *per_vertex, uint32_t k, const uint32_t *sel,
                        uint32_t nsel, const float *lo, const float *hi, float slack) {
    S->nlm = per_vertex ? (nsel < QN__MAX_LANDMARKS ? nsel : QN__MAX_LANDMARKS) : 0;
    S->lmv = per_vertex;
    S->lmk = k;
    S->lmslack = slack;
    for (uint32_t j = 0; j < S->nlm; j++) S->lmsel[j] = sel[j], S->lmlo[j] = lo[j], S->lmhi[j] = hi[j];
    /* Up to a multiple of four (landmark_bound's groups), landmarks that
    ** bound nothing: a real one's distances, and -inf / +inf at the target. */
    for (uint32_t j = S->nlm; j % 4u && j < QN__MAX_LANDMARKS; j++)
        S->lmsel[j] = S->lmsel[0], S->lmlo[j] = -INFINITY, S->lmhi[j] = INFINITY;
}

/* Undoes what the last query recorded: the portals its states crossed
** (every piece made a state), and the roots and quads it noted. After a
** query stopped part way (out of memory, the state bound), everything. */
static void path_reset(xsearch *S) {
    const qn__boundary *b = S->b;
    if (S->full_reset) {
        search_reset(S);
        S->full_reset = false;
    } else {
        for (uint32_t i = 0; i < S->nn; i++) {
            const xnode *n = &S->nodes[i];
            if (n->quad != QN_NONE) S->head[b->bportal[b->bstart[n->quad] + n->sub]] = QN_NONE;
        }
        for (uint32_t i = 0; i < S->nrt; i++) S->rg[S->rtouch[i]] = INFINITY, S->rpar[S->rtouch[i]] = QN_NONE;
        for (uint32_t i = 0; i < S->nqt; i++) S->qvid[S->qtouch[i]] = QN_NONE, S->qg[S->qtouch[i]] = INFINITY;
        S->nn = S->q.n = S->npc = S->ne = 0;
        S->cur = S->found = S->nfree = QN_NONE;
        S->npend = 0;
        S->st = QN_OK;
    }
    S->nrt = S->nqt = 0;
}

qn_status qn__isearch_path(qn__isearch *S, qn_vec2 from, uint32_t qs, qn_vec2 to, uint32_t qt,
                           float radius, float *length) {
    path_reset(S);
    S->radius = radius;
    S->to = to;
    S->qt = qt;
    mark_walls(S);
    if (qs == qt) { /* one convex quad: straight there */
        *length = qn__len(qn__sub(to, from));
        return QN_OK;
    }
    seed_point(S, 0, from, qs, 0.0f);
    flush_pending(S, false);
    run(S);
    S->full_reset = S->st != QN_OK;
    if (S->st != QN_OK) return S->st;
    if (S->found == QN_NONE) return QN_E_UNREACHABLE;
    *length = S->nodes[S->found].g;
    return QN_OK;
}

uint32_t qn__isearch_chain(const qn__isearch *S, uint32_t *portals, uint32_t *quads, uint32_t cap) {
    uint32_t n = 0;
    if (S->found == QN_NONE) return 0;
    for (uint32_t v = S->nodes[S->found].parent; v != QN_NONE; v = S->nodes[v].parent) n++;
    if (n > cap) return UINT32_MAX;
    uint32_t i = n;
    for (uint32_t v = S->nodes[S->found].parent; v != QN_NONE; v = S->nodes[v].parent) {
        const xnode *x = &S->nodes[v];
        i--;
        portals[i] = S->b->bportal[S->b->bstart[x->quad] + x->sub];
        quads[i] = x->quad;
    }
    return n;
}

uint32_t qn__isearch_states(const qn__isearch *S) { return S ? S->nn : 0; }
