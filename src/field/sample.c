/*
** sample.c: the edge-projection sampler.
**
** A unit in quad q with exit portal E (end points inset by the agent radius):
**  - if its projection on E falls between the inset end points, it steers at
**    the next quad's exit portal (or the goal point, when the next quad holds
**    the goal), and the straight line there is clamped to cross E between the
**    inset end points, so the move never cuts the corner of a wall;
**  - otherwise it steers at the nearest inset end point of E.
** In a goal quad it steers at the nearest goal point.
**
** Work is done in each portal's own frame (origin p0, unit axis u), so a
** sample costs a few dot products, one division and one square root. Never
** allocates; reads only const data.
*/
#include "internal.h"

/* Distance under which a unit counts as standing on its aim point: a few
** times the mesh tolerance, so float noise near a portal cannot turn it back. */
static float reach_tolerance(const qn_mesh *m) { return 4.0f * m->eps + 1e-5f; }

/* A portal in its own frame: points o + u*s for s in [lo, hi] are the part a
** unit of the field's radius may cross. */
typedef struct frame {
    qn_vec2 o, u;
    float lo, hi;
} frame;

/* The field's radius, or a hair's breadth (qn__hair) for a point agent,
** so that float noise cannot put a unit into a wall. */
static float agent_radius(const qn_field *f) {
    float hair = qn__hair(f->mesh);
    return f->radius > hair ? f->radius : hair;
}

static frame portal_frame(const qn_field *f, uint32_t e) {
    const qn__pgeo *p = &f->geo[e];
    /* Even a point agent keeps its hair from a wall's end. */
    float r = agent_radius(f);
    r = r < 0.5f * p->width ? r : 0.5f * p->width;
    frame fr = {p->p0, qn__pgeo_dir(p), r, p->width - r};
    return fr;
}

static float along(const frame *fr, qn_vec2 p) { return qn__dot(qn__sub(p, fr->o), fr->u); }
static float across(const frame *fr, qn_vec2 p) { return qn__cross(fr->u, qn__sub(p, fr->o)); }
static qn_vec2 frame_at(const frame *fr, float s) { return qn__add(fr->o, qn__scale(fr->u, s)); }
static float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* Where the unit aims once across into quad r: r's goal point, or the
** nearest crossable point of r's exit portal. False when r has neither. */
static bool beyond_target(const qn_field *f, uint32_t r, qn_vec2 p, qn_vec2 *t) {
    uint32_t ex = f->slots[r].exit;
    if (ex == QN_NONE) return false;
    if (ex & QN__GOAL_BIT) {
        *t = qn__nearest_goal(f, ex & ~QN__GOAL_BIT, p)->at;
        return true;
    }
    frame next = portal_frame(f, ex);
    *t = frame_at(&next, clampf(along(&next, p), next.lo, next.hi));
    return true;
}

/* The aim through portal frame fr at target t, for a unit at p (along s):
** t itself when the straight line crosses the portal's crossable part, else
** the nearest end of that part. */
static qn_vec2 clamp_through(const frame *fr, qn_vec2 p, float s, qn_vec2 t) {
    float h = across(fr, p), ht = across(fr, t);
    /* t lies across the portal line from q. A unit on that side too (or on
    ** the line) stands on the portal: nothing is left to cross. */
    if (h == 0.0f || (ht != 0.0f && (h > 0.0f) == (ht > 0.0f))) return t;
    float sx = s + h / (h - ht) * (along(fr, t) - s);
    if (sx < fr->lo || sx > fr->hi) return frame_at(fr, clampf(sx, fr->lo, fr->hi));
    return t;
}

/* The edge-projection rule of the article: two portals deep. */
static void steer_projection(const qn_field *f, uint32_t q, uint32_t ex, qn_vec2 p,
                             qn_vec2 *target) {
    frame fr = portal_frame(f, ex);
    float s = along(&fr, p), sc = clampf(s, fr.lo, fr.hi);
    *target = frame_at(&fr, sc);
    /* Off the span: steer at the nearest crossable end, unless the unit
    ** already stands on it (within the tolerance); then it goes on through. */
    if (s != sc && qn__len(qn__sub(*target, p)) > reach_tolerance(f->mesh)) return;
    qn_vec2 t;
    if (beyond_target(f, qn__portal_other(f->mesh, ex, q), p, &t))
        *target = clamp_through(&fr, p, s, t);
}

/* The crossable part of portal e, seen by a unit leaving quad q: its left
** and right ends (left: positive cross product with the direction of
** travel, in the frame where quads have positive area). */
static void portal_sides(const qn_field *f, uint32_t e, uint32_t q, qn_vec2 *l, qn_vec2 *r) {
    frame fr = portal_frame(f, e);
    qn_vec2 lo = frame_at(&fr, fr.lo), hi = frame_at(&fr, fr.hi);
    bool from_a = f->mesh->pq[e].q[0] == q; /* a is on the left of p0 -> p1 */
    *l = from_a ? hi : lo;
    *r = from_a ? lo : hi;
}

static float side_of(qn_vec2 apex, qn_vec2 ray, qn_vec2 x) {
    return qn__cross(qn__sub(ray, apex), qn__sub(x, apex));
}

/* Quad q's step along the exit chain, from its slot (qn__hop). */
static qn__hop hop_of(const qn_field *f, uint32_t q) {
    uint32_t ex = f->slots[q].exit;
    qn__hop h = {{0.0f, 0.0f}, {0.0f, 0.0f}, ex};
    if (ex == QN_NONE || (ex & QN__GOAL_BIT)) return h;
    portal_sides(f, ex, q, &h.l, &h.r);
    h.next = qn__portal_other(f->mesh, ex, q);
    return h;
}

void qn__field_hop(qn_field *f, uint32_t q) { f->hops[q] = hop_of(f, q); }

/* The funnel's next portal along the exit chain from quad `cur`: its left
** and right crossable ends (both the nearest goal point when cur holds a
** goal), and the quad beyond it; QN__GOAL_BIT at a goal quad, QN_NONE at
** the chain's end. Reads the field's hops when it has them, else works
** the step out from the slot. */
static uint32_t chain_next(const qn_field *f, uint32_t cur, qn_vec2 p, qn_vec2 *l, qn_vec2 *r) {
    qn__hop h = f->hops ? f->hops[cur] : hop_of(f, cur);
    if (h.next == QN_NONE) return QN_NONE;
    if (!(h.next & QN__GOAL_BIT)) {
        *l = h.l, *r = h.r;
        return h.next;
    }
    *l = *r = qn__nearest_goal(f, h.next & ~QN__GOAL_BIT, p)->at;
    return QN__GOAL_BIT;
}

/*
** Funnel over the exit chain, `depth` portals deep: the taut line from p
** through the crossable parts of the portals ahead. Returns the first corner
** the line bends at, or, when none is met, the goal (if the chain reached
** it) or the middle of the funnel's far end. The straight line to the answer
** crosses every portal it meets inside its crossable part, so it stays in
** the quads of the chain.
*/
static void steer_funnel(const qn_field *f, uint32_t q, uint32_t ex, qn_vec2 p, uint32_t depth,
                         qn_vec2 *target) {
    const qn_mesh *m = f->mesh;
    float tol = reach_tolerance(m);
    qn_vec2 L, R, nl, nr;
    portal_sides(f, ex, q, &L, &R);
    uint32_t cur = qn__portal_other(m, ex, q);
    for (uint32_t i = 1; i < depth; i++) {
        uint32_t next = chain_next(f, cur, p, &nl, &nr);
        if (next == QN_NONE) break;
        bool at_goal_point = next == QN__GOAL_BIT;
        if (side_of(p, R, nr) >= 0.0f) { /* nr narrows the right side */
            if (qn__len(qn__sub(R, p)) <= tol || side_of(p, L, nr) < 0.0f) R = nr;
            else {
                *target = L; /* right crosses over left: bend at L */
                return;
            }
        }
        if (side_of(p, L, nl) <= 0.0f) { /* nl narrows the left side */
            if (qn__len(qn__sub(L, p)) <= tol || side_of(p, R, nl) > 0.0f) L = nl;
            else {
                *target = R;
                return;
            }
        }
        if (at_goal_point) {
            *target = nl;
            return;
        }
        cur = next;
    }
    *target = qn__scale(qn__add(L, R), 0.5f);
}

/*
** The portal a unit at p in quad q leaves by. The edge-projection rule
** (lookahead <= 2) uses the quad's stored exit. Otherwise the unit picks, among
** the portals into quads with a lower cost than q (so every hop goes strictly
** downhill and no unit can circle), the one with the least portal cost plus
** the distance to its nearest crossable point: in a large quad with several
** ways out, units on different sides leave by different portals.
*/
/* Portal e's cost plus the weighted distance from p to its crossable part. */
static float portal_offer(const qn_field *f, uint32_t e, qn_vec2 p, float w) {
    frame fr = portal_frame(f, e);
    qn_vec2 x = frame_at(&fr, clampf(along(&fr, p), fr.lo, fr.hi));
    return f->pg[e] + w * qn__len(qn__sub(x, p));
}

static uint32_t unit_exit(const qn_field *f, uint32_t q, qn_vec2 p) {
    uint32_t ex = f->slots[q].exit;
    /* An exact field keeps no portal costs: its rare fallback takes the exit. */
    if ((ex & QN__GOAL_BIT) || f->lookahead <= 2 || !f->pg) return ex; /* also QN_NONE */
    const qn_mesh *m = f->mesh;
    float cq = f->slots[q].cost, w = qn__quad_cost(m, q);
    /* Start from the stored exit: a portal whose own cost is already above
    ** that total cannot win, which skips most of them without a distance. */
    float best = portal_offer(f, ex, p, w);
    for (uint32_t k = m->qp_start[q]; k < m->qp_start[q + 1]; k++) {
        uint32_t e = m->qp_list[k];
        if (!(f->pg[e] < best) || e == ex || !(f->slots[qn__portal_other(m, e, q)].cost < cq))
            continue;
        float c = portal_offer(f, e, p, w);
        if (c < best || (c == best && e < ex)) best = c, ex = e;
    }
    return ex;
}

static qn_status steer(const qn_field *f, uint32_t q, uint32_t ex, qn_vec2 p, qn_vec2 *target) {
    if (ex == QN_NONE) return QN_E_UNREACHABLE;
    if (ex & QN__GOAL_BIT) {
        *target = qn__nearest_goal(f, ex & ~QN__GOAL_BIT, p)->at;
        qn_vec2 d = qn__sub(*target, p);
        return qn__dot(d, d) <= QN_AT_GOAL_DISTANCE * QN_AT_GOAL_DISTANCE ? QN_AT_GOAL : QN_OK;
    }
    if (f->lookahead <= 2) steer_projection(f, q, ex, p, target);
    else steer_funnel(f, q, ex, p, f->lookahead, target);
    return QN_OK;
}

/* Unit direction toward target. A unit already standing on its aim point at
** a portal (within the tolerance) steps straight out through its exit ex. */
static qn_vec2 direction(const qn_field *f, uint32_t q, uint32_t ex, qn_vec2 p, qn_vec2 target) {
    qn_vec2 d = qn__sub(target, p);
    float len = qn__len(d);
    bool goal_quad = (ex & QN__GOAL_BIT) != 0;
    if (len > reach_tolerance(f->mesh) || (goal_quad && len > 0.0f))
        return qn__scale(d, 1.0f / len);
    if (goal_quad) return qn__v2(0.0f, 0.0f);
    const qn__portal pt_at = qn__portal_at(f->mesh, ex), *pt = &pt_at;
    int side = pt->q[0] == q ? 0 : 1;
    qn__planes tmp;
    const qn__planes *pl = qn__quad_planes(f->mesh, q, &tmp);
    /* The reversed inward normal of q's edge points out through the portal. */
    return qn__v2(-pl->nx[pt->edge[side]], -pl->ny[pt->edge[side]]);
}

/* A unit standing on the portal it would leave by (within the tolerance, and
** inside the next quad) counts as already across it. Without this, float
** noise can keep a unit on the boundary in the quad behind it, aiming back
** and forth. Every hop goes to a cheaper quad, so this takes a few hops at
** most (a corner where several portals meet). The first test (distance from
** the portal's line, signed toward q's inside) almost always ends it. Sets
** *ex to the exit for the final quad. */
static uint32_t cross_if_on_exit(const qn_field *f, uint32_t q, qn_vec2 p, uint32_t *ex_out) {
    const qn_mesh *m = f->mesh;
    float tol = reach_tolerance(m);
    uint32_t ex = unit_exit(f, q, p);
    for (int hops = 0; hops < 4 && !(ex & QN__GOAL_BIT); hops++) { /* also QN_NONE */
        const qn__pgeo *pt = &f->geo[ex];
        const qn__pq *pq = &m->pq[ex];
        qn_vec2 d = qn__sub(p, pt->p0), u = qn__pgeo_dir(pt);
        float h = qn__cross(u, d); /* > 0 inside quad q[0], < 0 inside q[1] */
        int side = pq->q[0] == q ? 0 : 1;
        if ((side == 0 ? h : -h) > tol) break;
        float s = qn__dot(d, u);
        if (s < -tol || s > pt->width + tol) break;
        if (!qn__quad_contains(m, pq->q[1 - side], p)) break;
        q = pq->q[1 - side];
        ex = unit_exit(f, q, p);
    }
    *ex_out = ex;
    return q;
}

/* ---- exact instances ------------------------------------------------------ */

/* A quad with this many entries or more tests each one's bound before its
** wedge: the least bound come first, so on a cluttered map most of a long
** list is set aside by the bound alone (whole-process A/B of 300 walks on
** random512 and Aftershock: 0.97-0.99 of the time; fewer entries are
** faster wedge first, see below). */
#define SPM_BOUND_FIRST 8

/* The slack qn__spm_root gives a wedge's sides at v from the root: a
** diamond angle is off by at most half a step, which turns its direction
** (of length 1 or less) by at most 1 / QN__SPM_ANGLE radians and so moves
** a cross product with v by at most |v| / QN__SPM_ANGLE; the slack takes
** that and float rounding (|vx| + |vy| >= |v|), plus tol. */
static float wedge_slack(qn_vec2 v, float tol) { return 6.5e-5f * (fabsf(v.x) + fabsf(v.y)) + tol; }

/* The root through which the shortest path from p (in quad q) leaves, and
** the path's length in *cost: the least |p - r| + g(r) over q's entries
** whose wedge holds p (a hair of slack on the wedge's sides, where two
** roots give the same length anyway). NULL when q has no entry for p. The
** entries come least bound first, so the best so far is low early. */
const qn__sroot *qn__spm_root(const qn_field *f, uint32_t q, qn_vec2 p, float *cost,
                              const qn__sent **entry, float *dist) {
    const qn__spm *s = f->spm;
    const qn__sroot *best = NULL;
    float bv = INFINITY, tol = qn__tol_inner(f->mesh);
    uint32_t first, end;
    qn__spm_range(s, q, &first, &end);
    bool many = end - first >= SPM_BOUND_FIRST;
    for (uint32_t i = first; i < end; i++) {
        const qn__sent *e = &s->ents[i];
        const qn__sroot *r = &s->roots[e->root & ~QN__SPM_ON];
        qn_vec2 v = qn__sub(p, r->at);
        /* |v| >= the larger of |vx|, |vy|: a bound below which no loser's
        ** square root is needed */
        float ax = fabsf(v.x), ay = fabsf(v.y), bound = (ax > ay ? ax : ay) + r->g;
        if (many && !(bound < bv)) continue;
        if (!(e->root & QN__SPM_ON)) {
            float slack = wedge_slack(v, tol);
#if QN__HAVE_SSE2
            /* qn__spm_dir of both angles at once, lanes 0 and 1: (1 - f, f)
            ** turned k quarter turns, as a swap for an odd k and sign
            ** bits; then v x l and r x v (the plain form's sums). */
            uint32_t lr = (uint32_t)e->l | ((uint32_t)e->r << 16);
            __m128i a = _mm_unpacklo_epi16(_mm_cvtsi32_si128((int)lr), _mm_setzero_si128());
            __m128i k = _mm_srli_epi32(a, 14);
            __m128 fv = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(a, _mm_set1_epi32(0x3FFF))),
                                   _mm_set1_ps(1.0f / QN__SPM_ANGLE));
            __m128 gv = _mm_sub_ps(_mm_set1_ps(1.0f), fv);
            __m128i oddi = _mm_slli_epi32(k, 31);
            __m128 odd = _mm_castsi128_ps(_mm_srai_epi32(oddi, 31));
            __m128 half = _mm_castsi128_ps(_mm_slli_epi32(_mm_srli_epi32(k, 1), 31));
            __m128 x = _mm_or_ps(_mm_and_ps(odd, fv), _mm_andnot_ps(odd, gv));
            __m128 y = _mm_or_ps(_mm_and_ps(odd, gv), _mm_andnot_ps(odd, fv));
            x = _mm_xor_ps(x, _mm_xor_ps(half, _mm_castsi128_ps(oddi)));
            y = _mm_xor_ps(y, half);
            __m128 c = _mm_sub_ps(_mm_mul_ps(_mm_set1_ps(v.x), y), _mm_mul_ps(_mm_set1_ps(v.y), x));
            c = _mm_mul_ps(c, _mm_set_ps(0.0f, 0.0f, -1.0f, 1.0f));
            if (_mm_movemask_ps(_mm_cmplt_ps(c, _mm_set1_ps(-slack))) & 3) continue;
#else
            qn_vec2 dl = qn__spm_dir(e->l), dr = qn__spm_dir(e->r);
            float cr = dr.x * v.y - dr.y * v.x;
            float cl = v.x * dl.y - v.y * dl.x;
            if (cr < -slack || cl < -slack) continue;
#endif
        }
        /* Most losers need no square root (with few entries, the bound is
        ** tested after the wedge: on 100,000 units 0.84-0.95 of the time
        ** of the other order, whole-process A/B). */
        if (!many && !(bound < bv)) continue;
        float len = qn__len(v), val = len + r->g;
        if (!(val < bv)) continue;
        bv = val;
        best = r;
        if (entry) *entry = e;
        if (dist) *dist = len;
    }
    *cost = bv;
    return best;
}

const qn__sroot *qn__spm_root_loose(const qn_field *f, uint32_t q, qn_vec2 p, float *cost,
                                    const qn__sent **entry, float *dist) {
    const qn__spm *s = f->spm;
    const qn__sroot *best = NULL;
    float bv = INFINITY;
    uint32_t first, end;
    qn__spm_range(s, q, &first, &end);
    for (uint32_t i = first; i < end; i++) {
        const qn__sroot *r = &s->roots[s->ents[i].root & ~QN__SPM_ON];
        float len = qn__len(qn__sub(p, r->at)), val = len + r->g;
        if (!(val < bv)) continue;
        bv = val;
        best = r;
        if (entry) *entry = &s->ents[i];
        if (dist) *dist = len;
    }
    *cost = bv;
    return best;
}

/* Clips the convex polygon v[0..n) (counter-clockwise) to the half-plane
** cross(d, x) >= -slack into o (room for n + 1); returns o's count. */
static int clip_half(const qn_vec2 *v, int n, qn_vec2 d, float slack, qn_vec2 *o) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        qn_vec2 a = v[i == 0 ? n - 1 : i - 1], b = v[i];
        float ha = qn__cross(d, a) + slack, hb = qn__cross(d, b) + slack;
        if ((ha < 0.0f) != (hb < 0.0f))
            o[k++] = qn__add(a, qn__scale(qn__sub(b, a), ha / (ha - hb)));
        if (hb >= 0.0f) o[k++] = b;
    }
    return k;
}

/* The distance from root r to the part of quad q in the wedge between the
** directions dr (right) and dl (left) from r, its sides widened by the
** slack qn__spm_root gives them (at the quad's farthest corner), so that
** the least cost is taken where the sampler takes it: a diamond angle is
** off by up to half a step, and a corner of the quad on a side (fans of
** slivers round a vertex) fell outside by that, for a quad cost above a
** neighbour's (0.08 over on a fan of kites 100 across) and an exit
** leading uphill. NAN when the wedge misses q. */
static float wedge_distance(const qn_mesh *m, uint32_t q, qn_vec2 r, qn_vec2 dr, qn_vec2 dl) {
    qn_vec2 k_at[4], a[6], b[7];
    const qn_vec2 *k = qn__corners(m, q, k_at);
    float slack = 0.0f;
    for (int i = 0; i < 4; i++) {
        a[i] = qn__sub(k[i], r); /* r at the origin */
        slack = fmaxf(slack, wedge_slack(a[i], 0.0f));
    }
    int n = clip_half(a, 4, dr, slack, b);
    n = clip_half(b, n, qn__v2(-dl.x, -dl.y), slack, a);
    return n == 0 ? NAN : qn__convex_distance(qn__v2(0.0f, 0.0f), a, n);
}

float qn__spm_quad_cost(const qn_field *f, uint32_t q) {
    const qn__spm *s = f->spm;
    const qn_mesh *m = f->mesh;
    float best = INFINITY;
    uint32_t first, end;
    qn__spm_range(s, q, &first, &end);
    /* From the last: those whose root sees all of the quad (on its
    ** boundary, or a goal in it, both within the mesh's tolerance) cost
    ** their root's, and set the bar low. */
    for (uint32_t i = end; i-- > first;) {
        const qn__sent *e = &s->ents[i];
        const qn__sroot *r = &s->roots[e->root & ~QN__SPM_ON];
        if (!(r->g < best)) continue;
        if (e->root & QN__SPM_ON) {
            best = r->g;
            continue;
        }
        float d = qn__quad_distance(m, q, r->at);
        if (!(r->g + d < best)) continue;
        qn_vec2 dr = qn__spm_dir(e->r), dl = qn__spm_dir(e->l);
        bool in_wedge = false;
        if (!m->planes) { /* the rectangle's nearest point, when the wedge holds it */
            qn_vec2 v = qn__sub(qn__rect_nearest(m->rects[q], r->at), r->at);
            float sl = wedge_slack(v, 0.0f);
            in_wedge = qn__cross(dr, v) >= -sl && qn__cross(v, dl) >= -sl;
        }
        /* Else the wedge's part of the quad; the whole quad's distance when
        ** float noise leaves none. */
        float w = in_wedge ? d : wedge_distance(m, q, r->at, dr, dl);
        if (w == w) d = w > d ? w : d;
        best = r->g + d < best ? r->g + d : best;
    }
    return best;
}

uint32_t qn__spm_quad_exit(const qn_field *f, uint32_t q) {
    const qn__spm_exits *s = qn__spm_exits_get(f);
    uint8_t k = s ? s->qexit[q] : QN__SPM_XNONE; /* none when out of memory */
    if (k == QN__SPM_XNONE) return QN_NONE;
    if (k != QN__SPM_XOVER) return f->mesh->qp_list[f->mesh->qp_start[q] + k];
    uint32_t lo = 0, hi = s->nxo;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->xo[2 * mid] < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nxo && s->xo[2 * lo] == q ? s->xo[2 * lo + 1] : QN_NONE;
}

/* A corner a unit passes: where it is, the way on from it (a direction,
** not always of unit length; for a root, its diamond angle `a` until it is
** needed), and the obstacle's side seen along that way (+1 left, -1
** right, 0 unknown). */
typedef struct corner {
    qn_vec2 at, out;
    float side;
    bool root;
    uint16_t a;
} corner;

static corner root_corner(const qn__sroot *r) {
    return (corner){.at = r->at, .side = (float)r->side, .root = true, .a = r->out};
}

static qn_vec2 corner_out(const corner *c) { return c->root ? qn__spm_dir(c->a) : c->out; }

/* d (not zero) scaled to unit length. */
static qn_vec2 unit_dir(qn_vec2 d) { return qn__scale(d, 1.0f / qn__len(d)); }

/* The obstacle's side at corner r for a unit heading along u (of any
** length): +1 when the path turns left there (the obstacle on the left),
** -1 right. */
static float turn_side(const corner *r, qn_vec2 u) {
    float c = qn__cross(u, corner_out(r));
    return c > 0.0f ? 1.0f : (c < 0.0f ? -1.0f : 0.0f);
}

/* How far outside a wedge qn__spm_root can take a point, as a part of its
** distance to the root: a wedge side's step of angle and the test's slack
** (2.5e-4 of |dx| + |dy|), plus a few tolerances (corner_cut); and the
** most that comes to anywhere on mesh m (a root and a point both lie in
** its bounds): an agent of a wider radius rounds every corner the slack
** could make it cut (corner_in_way), and skips the test. */
#define WEDGE_FUZZ 2.5e-4f
#define WEDGE_FUZZ_EPS 8.0f
static float fuzz_most(const qn_mesh *m) {
    qn_rect b = m->bounds;
    return WEDGE_FUZZ * ((b.max.x - b.min.x) + (b.max.y - b.min.y)) + WEDGE_FUZZ_EPS * m->eps;
}

/* The breadth an exact sample keeps from walls and corners, steering from
** p at a root: the field's radius, or for a point agent a hair. The hair
** (qn__hair: 64 mesh tolerances, for the wedge slack that grows with
** distances inside the level) is what the aim's error toward a root that
** far needs at most: float noise (8 tolerances) and the wedge slack's
** share, WEDGE_FUZZ of the distance, capped at the hair. Taken at the
** level's extent for every sample instead, it was a quarter of a unit on
** a 4,096-wide map, where a point agent, or one of radius 0.1, then kept
** as far from walls as one of radius 0.25 (at radius 0, 9 % over the
** shortest length in a maze tiled to that size, against 1.3 % at 512). */
static float exact_radius(const qn_field *f, qn_vec2 p, qn_vec2 root) {
    /* |x| + |y| for the distance (at most 1.42 times it): no square root
    ** for the tangent's to wait on */
    const qn_mesh *m = f->mesh;
    float h = 8.0f * m->eps + WEDGE_FUZZ * (fabsf(root.x - p.x) + fabsf(root.y - p.y));
    float most = qn__hair(m);
    h = h < most ? h : most;
    return f->radius > h ? f->radius : h;
}

/* Round the corner at c along the circle about it, from p (u = p - c,
** of length ul > 0), in the turn's direction (side +1: counterclockwise),
** and out toward the circle of radius rad while inside it. */
static qn_vec2 along_circle(qn_vec2 u, float ul, float side, float rad) {
    qn_vec2 tn = side > 0.0f ? qn__v2(-u.y, u.x) : qn__v2(u.y, -u.x);
    float out = ul < rad ? 0.5f * (1.0f - ul / rad) : 0.0f;
    return unit_dir(qn__add(tn, qn__scale(u, out)));
}

/* Does the way from p to a, both near corner c, cross the wall there: the
** ray from c along w, the sum of the directions of the walls leaving c
** (which points into the obstacle; along a fence that ends at c)? Worked
** out near c, without the mesh's tolerances (a walk through the quads
** would let a way that passes a hundredth from a fence's end through). */
static bool wall_between(qn_vec2 c, qn_vec2 w, qn_vec2 p, qn_vec2 a) {
    qn_vec2 u = qn__sub(p, c), v = qn__sub(a, c);
    float su = qn__cross(w, u), sv = qn__cross(w, v);
    if (!(su * sv < 0.0f)) return false; /* one side of the wall's line */
    qn_vec2 x = qn__add(u, qn__scale(qn__sub(v, u), su / (su - sv)));
    return qn__dot(x, w) > 0.0f;
}

/* The walls' direction sum (qn__boundary's vwall) at point c when it is a
** vertex of quad q's cycle (within tol), else zero. */
static qn_vec2 walls_at(const qn_mesh *m, uint32_t q, qn_vec2 c, float tol) {
    const qn__boundary *b = atomic_load(&m->bnd);
    if (b)
        for (uint32_t i = b->bstart[q]; i < b->bstart[q + 1]; i++)
            if (fabsf(b->bv[i].x - c.x) <= tol && fabsf(b->bv[i].y - c.y) <= tol)
                return b->vwall[b->bvid[i]];
    return qn__v2(0.0f, 0.0f);
}

/* round_corner's case of a unit inside the circle (pushed there, or
** started there), or standing on the corner (on), side known: out to the
** point a radius from the corner square to the way on, on the open side,
** and from there on along the way (on the corner and on the open side of
** the way: on along the way at once). A unit stepping past that point, in
** a gap between two such circles, would be sent back and forth between
** them. Where a wall at the
** corner stands between the unit and that point (a fence's end, the unit
** behind it and within a radius of it), it goes round the corner along the
** circle first: straight on, it would walk into the wall, and along the
** way, away from the corner on the wrong side of it. Kept out of
** round_corner's way: few samples come here. */
static QN__NOINLINE qn_vec2 inside_corner(const qn_field *f, uint32_t q, const corner *r, qn_vec2 p,
                                          float side, float len, float rad, bool on, float *go) {
    qn_vec2 o = unit_dir(corner_out(r));
    qn_vec2 open = side > 0.0f ? qn__v2(o.y, -o.x) : qn__v2(-o.y, o.x);
    qn_vec2 at = qn__add(r->at, qn__scale(open, rad));
    if (r->root &&
        wall_between(r->at, walls_at(f->mesh, q, r->at, qn__tol_inner(f->mesh)), p, at)) {
        if (go) *go = 0.5f * rad;
        return along_circle(qn__sub(p, r->at), len, side, rad);
    }
    /* On the corner, on the open side of the way's line (or on it): on
    ** along the way; so too a point agent anywhere in its hair's circle on
    ** that side (sent first to the point a hair out, it took a sideways
    ** step at every corner). On the obstacle's side, even within the reach
    ** tolerance of the corner (a few float steps of the coordinates: a
    ** tenth of a unit 30,000 units out), that way runs into the obstacle's
    ** face: out to the point beside the corner first. */
    if ((on || f->radius == 0.0f) && qn__dot(qn__sub(p, r->at), open) >= 0.0f) return o;
    qn_vec2 a = qn__sub(at, p);
    float la = qn__len(a);
    if (!(la > 0.1f * rad)) return o;
    if (go) *go = la;
    return qn__scale(a, 1.0f / la);
}

/* Toward corner root r from p (in quad q), passing it on the outside:
** along the tangent to the circle of the agent's radius (a hair for a
** point agent) round the corner, on the side away from the obstacle; round
** the circle when inside it; on toward the next root when standing on it.
** With go, also how far the unit may go that way before it turns: to where
** the tangent touches the circle, or to the point it aims at inside the
** circle (a radius when it stands on the corner or goes on along the way). */
static qn_vec2 round_corner(const qn_field *f, uint32_t q, const corner *r, qn_vec2 p, float side,
                            float len, float rad, float *go) {
    qn_vec2 d = qn__sub(r->at, p);
    float dd = qn__dot(d, d);
    /* The tangent's length (the way to where it touches the circle). */
    float t2 = dd - rad * rad, t = sqrtf(t2 > 0.0f ? t2 : 0.0f);
    if (go) *go = len > rad ? t : rad;
    if (r->side != 0.0f) side = r->side;
    if (side == 0.0f && len > 0.0f) side = turn_side(r, d);
    bool on = len <= reach_tolerance(f->mesh);
    if (side == 0.0f || !(len > 0.0f))
        return on ? unit_dir(corner_out(r)) : qn__scale(d, 1.0f / len);
    if (on || len < rad) return inside_corner(f, q, r, p, side, len, rad, on, go);
    /* The tangent: d turned by the angle whose sine is rad / |d|, away from
    ** the obstacle, as (d t + side rad perp(d)) / |d|^2 (one root and one
    ** division, side by side, where turning the unit vector took two roots
    ** and a division in a row; for a hair of a radius t is |d| to float
    ** precision). */
    float k = side * rad, inv = 1.0f / dd;
    return qn__v2((d.x * t + k * d.y) * inv, (d.y * t - k * d.x) * inv);
}

/* corner_in_way's test of an obstacle corner c (w: the sum of the unit
** directions of the walls leaving it) that the way may graze: true, with
** *best and *out updated, when it lies ahead nearer than *best and the way
** passes it closer than the radius. */
static bool grazed(qn_vec2 c, qn_vec2 w, qn_vec2 p, qn_vec2 dir, float rad, float reach_tol,
                   qn_vec2 root, float *best, corner *out) {
    qn_vec2 v = qn__sub(c, p);
    float ahead = qn__dot(v, dir), lateral = qn__cross(dir, v);
    if (ahead <= 0.0f || ahead >= *best || fabsf(lateral) >= rad * 0.999f) return false;
    if (lateral == 0.0f || qn__len(v) <= reach_tol) return false;
    if (fabsf(c.x - root.x) <= reach_tol && fabsf(c.y - root.y) <= reach_tol) return false;
    *best = ahead;
    /* The obstacle on the left of the way: side +1. A corner well off the
    ** way is kept on the side it lies (the side from the walls flips as
    ** the way turns past their sum, and a unit sent round both sides in
    ** turn goes back and forth); one nearly on it, on its walls' side. */
    float ws = qn__cross(dir, w), side = lateral < 0.0f ? -1.0f : 1.0f;
    if (fabsf(lateral) < 0.5f * rad && fabsf(ws) > 0.1f * qn__len(w))
        side = ws > 0.0f ? 1.0f : -1.0f;
    *out = (corner){.at = c, .out = dir, .side = side};
    return true;
}

/* A corner of the unit's quad that the way toward dir passes closer than
** the agent's radius: the radius-0 map goes straight past it (or switched
** roots just before it), but an agent with a body must round it first.
** Two kinds: roots of the quad's entries whose own way out runs along dir
** (their obstacle side is then known; the unit rounds them toward its own
** way), and obstacle corners that the way merely grazes (a shortest path
** that runs along a wall line touches them without bending): the quad's
** own, and those the instance lists for it (blocked quads' corners; for a
** hierarchical local field, the parent mesh's too), tested by grazed().
** Skips the root being steered at (`root`). Fills *out with the corner to
** round and returns true, or returns false. With `fuzz` wider than the
** radius (how far outside its wedge p may be: see sample_exact), also the
** nearest of the quad's own obstacle corners that the way passes nearer
** than fuzz but not than the radius, in *cut (its place in the cycle, or
** UINT32_MAX), for corner_cut. */
static bool corner_in_way(const qn_field *f, uint32_t q, qn_vec2 p, qn_vec2 dir, float reach,
                          float rad, qn_vec2 root, float fuzz, uint32_t *cut, corner *out) {
    const qn__spm *s = f->spm;
    float best = reach, reach_tol = reach_tolerance(f->mesh);
    float cut_best = reach;
    *cut = UINT32_MAX;
    bool hit = false;
    uint32_t first, end;
    qn__spm_range(s, q, &first, &end);
    for (uint32_t i = end; i-- > first;) {
        const qn__sent *e = &s->ents[i];
        if (!(e->root & QN__SPM_ON)) break; /* those seeing all of the quad come last */
        /* Only a corner whose side is known (kept in the entry, so the
        ** others cost no look at their root). */
        float cs = qn__spm_side(e);
        if (cs == 0.0f) continue;
        const qn__sroot *c = &s->roots[e->root & ~QN__SPM_ON];
        qn_vec2 v = qn__sub(c->at, p);
        float ahead = qn__dot(v, dir);
        if (ahead <= 0.0f || ahead >= best) continue;
        /* Passing farther than the radius, on either side, is clear. */
        float lateral = qn__cross(dir, v);
        if (fabsf(lateral) >= rad * 0.999f) continue;
        /* An agent with a body whose way passes it well on the other side
        ** than its own paths do (a thin wall at the corner, the unit on its
        ** far side): grazed() below takes it, by the side it lies on. */
        if (f->radius > 0.0f && cs * lateral < -0.25f * rad) continue;
        /* Its way on within 60 degrees of dir (|o| is not 1). */
        qn_vec2 o = qn__spm_dir(c->out);
        float od = qn__dot(o, dir);
        if (!(od > 0.0f) || od * od < 0.25f * qn__dot(o, o)) continue;
        if (qn__len(v) <= reach_tol) continue;
        best = ahead;
        hit = true;
        /* the unit's way past it (round_corner's way on) */
        *out = (corner){.at = c->at, .out = dir, .side = cs};
    }
    if (s->qstart[q] & QN__SPM_QXCORNERS) { /* the state's corners: a few, by quad */
        uint32_t lo = 0, hi = s->nxc;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (s->xq[mid] < q) lo = mid + 1;
            else hi = mid;
        }
        for (uint32_t i = lo; i < s->nxc && s->xq[i] == q; i++)
            hit |= grazed(s->xc[i].at, s->xc[i].wall, p, dir, rad, reach_tol, root, &best, out);
    }
    if (!(s->qstart[q] & QN__SPM_QCORNERS)) return hit;
    const qn__boundary *b = atomic_load(&f->mesh->bnd);
#if QN__HAVE_SSE2
    const __m128 px = _mm_set1_ps(p.x), py = _mm_set1_ps(p.y), dx = _mm_set1_ps(dir.x),
                 dy = _mm_set1_ps(dir.y), lim = _mm_set1_ps((fuzz > rad ? fuzz : rad) * 0.999f);
#endif
    const qn_vec2 *bv = b->bv + b->bstart[q];
    const uint32_t *bvid = b->bvid + b->bstart[q];
    /* The corners by their place in the cycle, four at a time. */
    for (uint32_t t = qn__next_corner(b, q, 0); t != UINT32_MAX;) {
        uint32_t c[4] = {0, 0, 0, 0}, n4 = 0;
        for (; t != UINT32_MAX && n4 < 4; t = qn__next_corner(b, q, t + 1)) c[n4++] = t;
        uint32_t bits = (1u << n4) - 1u;
#if QN__HAVE_SSE2
        {
            /* Four corners at a time: a mask, without branching, of those
            ** ahead within best and nearer the way than the radius (the
            ** first test below, on the same products; the few that pass
            ** take it again, with best as it is then). A last group of
            ** fewer than four repeats its last corner in the lanes beyond,
            ** which the mask then leaves out. */
            uint32_t i1 = c[n4 > 1 ? 1 : 0], i2 = n4 > 2 ? c[2] : i1, i3 = n4 > 3 ? c[3] : i2;
            __m128 cx = _mm_set_ps(bv[i3].x, bv[i2].x, bv[i1].x, bv[c[0]].x);
            __m128 cy = _mm_set_ps(bv[i3].y, bv[i2].y, bv[i1].y, bv[c[0]].y);
            __m128 vx = _mm_sub_ps(cx, px), vy = _mm_sub_ps(cy, py);
            __m128 ahead = _mm_add_ps(_mm_mul_ps(vx, dx), _mm_mul_ps(vy, dy));
            __m128 lateral = _mm_sub_ps(_mm_mul_ps(dx, vy), _mm_mul_ps(dy, vx));
            __m128 near = _mm_cmplt_ps(_mm_andnot_ps(_mm_set1_ps(-0.0f), lateral), lim);
            __m128 within = _mm_and_ps(_mm_cmpgt_ps(ahead, _mm_setzero_ps()),
                                       _mm_cmplt_ps(ahead, _mm_set1_ps(best)));
            bits &= (uint32_t)_mm_movemask_ps(_mm_and_ps(within, near));
        }
#endif
        for (; bits; bits &= bits - 1u) {
            uint32_t i = c[qn__ctz32(bits)];
            qn_vec2 at = bv[i];
            if (fuzz > rad) {
                /* Nearer than the slack (the mask let it through), not than
                ** the radius: a corner the way may cut (not the root). */
                qn_vec2 v = qn__sub(at, p);
                float ahead = qn__dot(v, dir), lateral = fabsf(qn__cross(dir, v));
                if (lateral >= rad * 0.999f) {
                    if (ahead > 0.0f && ahead < cut_best && lateral < fuzz &&
                        qn__dot(v, v) > reach_tol * reach_tol &&
                        !(fabsf(at.x - root.x) <= reach_tol && fabsf(at.y - root.y) <= reach_tol))
                        cut_best = ahead, *cut = i;
                    continue;
                }
            }
            hit |= grazed(at, b->vwall[bvid[i]], p, dir, rad, reach_tol, root, &best, out);
        }
    }
    return hit;
}

/* Corner t of quad q's cycle, which the straight way from p along dir
** (toward a root `reach` away) passes closer than the wedges' slack
** (corner_in_way's *cut): when the way cuts into the obstacle there (the
** mesh says so, the way a quarter unit past the corner), where to go
** first instead, the point a radius (a hair for a point agent) out from
** the corner, away from the obstacle, into *to, and true. A wedge's sides
** are kept to a step of angle and qn__spm_root takes a point within its
** slack of a side as inside, so a point just past a corner, up to about
** 2e-4 of its distance to a root outside that corner's shadow, can take
** the root: its way then cuts the corner by that much, more than a point
** agent's hair. A corner the way passes on the open side is left alone. */
static bool corner_cut(const qn_field *f, uint32_t q, qn_vec2 p, qn_vec2 dir, float reach,
                       float rad, uint32_t t, qn_vec2 *to) {
    const qn__boundary *b = atomic_load(&f->mesh->bnd);
    uint32_t i = b->bstart[q] + t;
    qn_vec2 c = b->bv[i];
    float ahead = qn__dot(qn__sub(c, p), dir), past = ahead + 0.25f < reach ? ahead + 0.25f : reach;
    qn_vec2 end = qn__add(p, qn__scale(dir, past));
    if (qn__segment_walk(f->mesh, p, end, f->radius, q, NULL) != QN_E_BLOCKED) return false;
    qn_vec2 w = b->vwall[b->bvid[i]];
    float lw = qn__len(w);
    *to = lw > 0.0f ? qn__sub(c, qn__scale(w, rad / lw)) : c;
    return qn__len(qn__sub(*to, p)) > reach_tolerance(f->mesh);
}

/* Is sub-edge s (of a quad's boundary cycle b) a wall for this field: not
** an open portal for its radius, as the mesh stood when the field was
** built or last updated (kept as bits in the instance, or the boundary's
** own portals when no other was closed: a sample reads no portal or
** neighbouring quad for it). */
static bool is_wall(const qn_field *f, const qn__boundary *b, uint32_t s) {
    return qn__spm_wall(f->spm, b, s);
}

/* The distance from p to the nearest edge of quad q (its edge planes). */
static float edge_distance(const qn_mesh *m, uint32_t q, qn_vec2 p) {
    if (!m->planes) { /* a rectangle: its planes' sums, term by term */
        qn_rect c = m->rects[q];
        float a = p.y - c.min.y, b = c.max.x - p.x, d = c.max.y - p.y, e = p.x - c.min.x;
        a = b < a ? b : a;
        d = e < d ? e : d;
        return d < a ? d : a;
    }
    qn__planes tmp;
    const qn__planes *pl = qn__quad_planes(m, q, &tmp);
    float d = INFINITY;
    for (int i = 0; i < 4; i++) {
        float h = pl->nx[i] * p.x + pl->ny[i] * p.y - pl->c[i];
        d = h < d ? h : d;
    }
    return d;
}

/* A unit closer than its radius to a wall of its quad does not move
** further into it: the part of dir toward the wall's nearest point is taken
** out, so a unit on a path that runs along a wall slides along it. Callers
** ask only when the quad's edge planes put the unit within the radius. */
static qn_vec2 keep_off_walls(const qn_field *f, uint32_t q, qn_vec2 p, qn_vec2 dir, float rad) {
    const qn_mesh *m = f->mesh;
    const qn__boundary *b = atomic_load(&m->bnd);
    uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base;
    qn_vec2 d = dir;
    /* Portals first out (a bit each in the instance): only walls push. */
    for (uint32_t s = 0; s < k; s++) {
        if (!is_wall(f, b, base + s)) continue;
        qn_vec2 a = b->bv[base + s], ab = qn__sub(b->bv[base + (s + 1 == k ? 0 : s + 1)], a);
        float l2 = qn__dot(ab, ab), t = l2 > 0.0f ? qn__dot(qn__sub(p, a), ab) / l2 : 0.0f;
        if (t > 0.0f && t < 1.0f) {
            /* Beside the wall: its outward normal (the quad is on the left),
            ** and the signed distance inside; a unit float noise put just
            ** outside is also steered back in. */
            qn_vec2 out = qn__scale(qn__v2(ab.y, -ab.x), 1.0f / sqrtf(l2));
            float h = -qn__dot(qn__sub(p, a), out), toward = qn__dot(d, out);
            if (!(h < 0.9f * rad)) continue;
            if (toward > 0.0f) d = qn__sub(d, qn__scale(out, toward));
            if (h < 0.0f) d = qn__sub(d, qn__scale(out, 0.5f));
            continue;
        }
        t = t < 0.0f ? 0.0f : 1.0f;
        qn_vec2 to = qn__sub(qn__add(a, qn__scale(ab, t)), p);
        float dist = qn__len(to);
        /* A little inside the radius, so that this and the crossing kept a
        ** radius from a wall end (clamp_exit) do not pull against each other. */
        if (!(dist < 0.9f * rad) || !(dist > 0.0f)) continue;
        qn_vec2 n = qn__scale(to, 1.0f / dist);
        float toward = qn__dot(d, n);
        if (toward > 0.0f) d = qn__sub(d, qn__scale(n, toward));
    }
    float len = qn__len(d);
    return len > 1e-3f ? qn__scale(d, 1.0f / len) : dir;
}

/* Is an end of a portal sub-edge one a wall touches (a wall of this quad
** next to it, or any wall of the mesh ending at that point)? */
static bool wall_end(const qn_field *f, const qn__boundary *b, uint32_t base, uint32_t s,
                     uint32_t nb) {
    return is_wall(f, b, base + nb) || (b->vkind[b->bvid[base + s]] & QN__VK_WALL);
}

/* Is there, past the wall beyond one end of sub-edge s of a quad's cycle
** (step -1: before it, +1: after it), an open portal on the same line, with
** only walls in line between? */
static bool portal_in_line(const qn_field *f, const qn__boundary *b, uint32_t base, uint32_t k,
                           uint32_t s, int step, qn_vec2 e, float len) {
    uint32_t j = s;
    for (uint32_t n = 1; n < k; n++) {
        j = step < 0 ? (j == 0 ? k - 1 : j - 1) : (j + 1 == k ? 0 : j + 1);
        qn_vec2 a = b->bv[base + j], d = qn__sub(b->bv[base + (j + 1 == k ? 0 : j + 1)], a);
        if (!(qn__dot(d, e) > 0.999f * qn__len(d) * len)) return false; /* the edge turns */
        if (!is_wall(f, b, base + j)) return true;
    }
    return false;
}

/* Where the way from p along dir leaves quad q, kept the agent's radius
** from every wall end along the portal it crosses (the same inset the
** article's sampler keeps): when the straight way would cross closer to a
** wall end, or into a wall, the unit aims at the nearest crossable point
** instead. The exact map's roots are corners, and a way from a root to the
** next can run along a wall line; a unit with a body passes such a line's
** corners on the open side this way. */
/* How far the way from p along dir runs inside quad q (its edge planes). */
static float run_inside(const qn_mesh *m, uint32_t q, qn_vec2 p, qn_vec2 dir) {
    if (!m->planes) { /* a rectangle: its planes' sums, term by term */
        qn_rect c = m->rects[q];
        float tx = INFINITY, ty = INFINITY;
        if (dir.x > 0.0f) tx = (c.max.x - p.x) / dir.x;
        else if (dir.x < 0.0f) tx = (p.x - c.min.x) / -dir.x;
        if (dir.y > 0.0f) ty = (c.max.y - p.y) / dir.y;
        else if (dir.y < 0.0f) ty = (p.y - c.min.y) / -dir.y;
        return ty < tx ? ty : tx;
    }
    qn__planes tmp;
    const qn__planes *pl = qn__quad_planes(m, q, &tmp);
    float t = INFINITY;
    for (int i = 0; i < 4; i++) {
        float closing = -(pl->nx[i] * dir.x + pl->ny[i] * dir.y);
        if (closing <= 0.0f) continue;
        float ti = (pl->nx[i] * p.x + pl->ny[i] * p.y - pl->c[i]) / closing;
        t = ti < t ? ti : t;
    }
    return t;
}

static qn_vec2 clamp_exit(const qn_field *f, uint32_t q, qn_vec2 p, qn_vec2 dir, qn_vec2 goal,
                          float edge, float rad) {
    /* Most ways leave the quad farther off than two radii: nothing to keep
    ** off yet (the edge planes tell without the boundary's pieces). No way
    ** leaves sooner than the nearest edge (edge, from the same planes). */
    if (edge > 2.0f * rad || run_inside(f->mesh, q, p, dir) > 2.0f * rad) return dir;
    const qn__boundary *b = atomic_load(&f->mesh->bnd);
    uint32_t base = b->bstart[q], k = b->bstart[q + 1] - base, hit = QN_NONE;
    float best = INFINITY, at = 0.0f;
    for (uint32_t s = 0; s < k; s++) {
        qn_vec2 a = b->bv[base + s], e = qn__sub(b->bv[base + (s + 1 == k ? 0 : s + 1)], a);
        float den = qn__cross(dir, e);
        if (!(den > 0.0f)) continue; /* the way leaves through the edge's outer side */
        qn_vec2 ap = qn__sub(a, p);
        float t = qn__cross(ap, e) / den, u = qn__cross(ap, dir) / den;
        if (t >= -1e-6f && t < best && u >= -1e-4f && u <= 1.0f + 1e-4f) best = t, hit = s, at = u;
    }
    if (hit == QN_NONE || best > 2.0f * rad) return dir; /* not there yet */
    uint32_t s1 = hit + 1 == k ? 0 : hit + 1;
    if (is_wall(f, b, base + hit)) return dir; /* keep_off_walls slides it */
    qn_vec2 a = b->bv[base + hit], e = qn__sub(b->bv[base + s1], a);
    float len = qn__len(e), x = at * len;
    float lo = wall_end(f, b, base, hit, hit == 0 ? k - 1 : hit - 1) ? rad : 0.0f;
    float hi = len - (wall_end(f, b, base, s1, s1) ? rad : 0.0f);
    if (lo > hi) lo = hi = 0.5f * len;
    if (x >= lo && x <= hi) return dir;
    /* Too close to a wall end. When the way on lies past that end along
    ** the edge (a way that runs along a wall line), slide along the edge
    ** inside the quad until past the wall; else cross nearer the middle. */
    float gx = qn__dot(qn__sub(goal, a), e) / len, end = x < lo ? 0.0f : len;
    /* ... and only while the way's root is not across this portal. */
    bool across = qn__cross(e, qn__sub(goal, a)) < -4.0f * f->mesh->eps * len;
    if (!across && ((x < lo && gx < end) || (x > hi && gx > end)) &&
        portal_in_line(f, b, base, k, hit, x < lo ? -1 : 1, e, len)) {
        qn_vec2 u = qn__scale(e, (x < lo ? -1.0f : 1.0f) / len);
        return u;
    }
    qn_vec2 aim = qn__add(a, qn__scale(e, (x < lo ? lo : hi) / len));
    qn_vec2 d = qn__sub(aim, p);
    float l = qn__len(d);
    return l > reach_tolerance(f->mesh) ? qn__scale(d, 1.0f / l) : dir;
}

/* A goal point nearer a wall than the field's radius (root r has
** QN__SROOT_TIGHT, set as the field was built) can never be reached by a
** unit's centre: such a unit has arrived once it stands within two radii
** of the goal (the nearest a centre can come to a goal in a square corner
** is less) and the walls turn its way more than 25 degrees off the goal
** (dir, after keep_off_walls; len: its distance to the goal); at 60
** degrees a unit still stepped back and forth beside one goal, and
** without this it did so for good. A goal clear of the walls by the
** radius is never taken for arrived early. Only for a goal proper (cost
** 0): a hierarchical instance's local field seeds its exits at their
** costs, and a unit near one goes on across it. */
static bool goal_out_of_reach(const qn_field *f, const qn__sroot *r, qn_vec2 p, qn_vec2 dir,
                              float len) {
    if (!(r->goal & QN__SROOT_TIGHT) || len > 2.0f * f->radius) return false;
    return qn__dot(dir, qn__sub(r->at, p)) < 0.9f * len; /* else on its way there */
}

static qn_status sample_exact(const qn_field *f, uint32_t q, qn_vec2 p, qn_vec2 *dir, float *ahead,
                              const qn__sroot **root, float *root_cost) {
    float cost;
    const qn__sent *e = NULL;
    float len = 0.0f; /* |r - p| */
    const qn__sroot *r = qn__spm_root(f, q, p, &cost, &e, &len);
    /* A point float noise leaves outside every wedge (none was seen in
    ** millions of random points): the least cost over all of q's entries. */
    if (!r) r = qn__spm_root_loose(f, q, p, &cost, &e, &len);
    if (!r) return QN_E_UNREACHABLE;
    if (root) *root = r, *root_cost = cost;
    qn_vec2 d;
    float go = 0.0f, rad = exact_radius(f, p, r->at);
    if (r->goal) {
        if (len <= QN_AT_GOAL_DISTANCE) return QN_AT_GOAL;
        d = qn__scale(qn__sub(r->at, p), 1.0f / len);
        go = len;
    } else {
        corner rc = root_corner(r);
        d = round_corner(f, q, &rc, p, (e->root & QN__SPM_ON) ? qn__spm_side(e) : 0.0f, len, rad,
                         ahead ? &go : NULL);
    }
    float edge = edge_distance(f->mesh, q, p);
    /* How far outside a wedge qn__spm_root may have taken p (corner_cut). */
    float fuzz = 0.0f;
    if (!(e->root & QN__SPM_ON) && rad < fuzz_most(f->mesh)) { /* a wedge's root */
        qn_vec2 v = qn__sub(p, r->at);
        fuzz = WEDGE_FUZZ * (fabsf(v.x) + fabsf(v.y)) + WEDGE_FUZZ_EPS * f->mesh->eps;
    }
    corner c;
    qn_vec2 to;
    uint32_t cut;
    if (corner_in_way(f, q, p, d, len, rad, r->at, fuzz, &cut, &c)) {
        d = round_corner(f, q, &c, p, c.side, qn__len(qn__sub(c.at, p)), rad, ahead ? &go : NULL);
    } else if (cut != UINT32_MAX && corner_cut(f, q, p, d, len, rad, cut, &to)) {
        qn_vec2 t = qn__sub(to, p);
        go = qn__len(t);
        d = qn__scale(t, 1.0f / go);
    }
    qn_vec2 way = d;
    d = clamp_exit(f, q, p, d, r->at, edge, rad);
    *dir = edge < rad ? keep_off_walls(f, q, p, d, rad) : d;
    if (goal_out_of_reach(f, r, p, *dir, len)) {
        *dir = qn__v2(0.0f, 0.0f);
        return QN_AT_GOAL;
    }
    /* A way bent near a wall is good for a radius or two, but not past
    ** the point it aims at. */
    if (ahead)
        *ahead = dir->x == way.x && dir->y == way.y ? go : (go < 2.0f * rad ? go : 2.0f * rad);
    return QN_OK;
}

/* One unit, arguments already checked except p; root and cost as
** qn__field_sample_root's (root NULL: not asked). */
static qn_status sample_one(const qn_field *f, qn_vec2 p, uint32_t *quad_io, qn_vec2 *dir,
                            float *ahead, const qn__sroot **root, float *cost) {
    if (root) *root = NULL;
    *dir = qn__v2(0.0f, 0.0f);
    if (ahead) *ahead = 0.0f;
    if (!qn__finite2(p)) {
        if (quad_io) *quad_io = QN_NONE;
        return QN_E_INVALID_ARG;
    }
    const qn_mesh *m = f->mesh;
    uint32_t hint = quad_io ? *quad_io : QN_NONE;
    /* The hint is usually right (units move a little per frame): test it
    ** here, before the general lookup. */
    uint32_t q = (hint < m->quad_count && qn__quad_contains(m, hint, p)) ? hint
                                                                        : qn__locate(m, p, QN_NONE);
    if (q != QN_NONE && (m->blocked[q] || !qn__field_reaches(f, q))) q = qn__field_quad_of(f, q, p);
    if (f->spm) {
        if (quad_io) *quad_io = q;
        if (q == QN_NONE) return QN_E_OUTSIDE;
        if (m->blocked[q]) return QN_E_BLOCKED;
        qn_status st = sample_exact(f, q, p, dir, ahead, root, cost);
        if (root && st != QN_OK && st != QN_AT_GOAL) *root = NULL;
        return st;
    }
    uint32_t ex = QN_NONE;
    if (q != QN_NONE && !m->blocked[q]) q = cross_if_on_exit(f, q, p, &ex);
    if (quad_io) *quad_io = q;
    if (q == QN_NONE) return QN_E_OUTSIDE;
    if (m->blocked[q]) return QN_E_BLOCKED;
    qn_vec2 target;
    qn_status st = steer(f, q, ex, p, &target);
    if (st != QN_OK) return st;
    *dir = direction(f, q, ex, p, target);
    if (ahead) *ahead = qn__len(qn__sub(target, p));
    return QN_OK;
}

qn_status qn_field_sample(const qn_field *field, qn_vec2 p, uint32_t *quad_io, qn_vec2 *dir) {
    qn_status st = qn__sample_args(field, quad_io, dir, false, NULL);
    return st != QN_OK ? st : sample_one(field, p, quad_io, dir, NULL, NULL, NULL);
}

qn_status qn_field_sample_ahead(const qn_field *field, qn_vec2 p, uint32_t *quad_io,
                                qn_vec2 *dir, float *ahead) {
    qn_status st = qn__sample_args(field, quad_io, dir, true, ahead);
    return st != QN_OK ? st : sample_one(field, p, quad_io, dir, ahead, NULL, NULL);
}

qn_status qn__field_sample_root(const qn_field *f, qn_vec2 p, uint32_t *quad_io, qn_vec2 *dir,
                                float *ahead, const qn__sroot **root, float *cost) {
    return sample_one(f, p, quad_io, dir, ahead, root, cost);
}

qn_status qn_field_sample_batch(const qn_field *field, const qn_vec2 *positions, qn_vec2 *dirs,
                                uint8_t *status, uint32_t *quads, size_t count) {
    if (!field || (count && (!positions || !dirs))) return QN_E_INVALID_ARG;
    for (size_t i = 0; i < count; i++) {
        qn_status st =
            sample_one(field, positions[i], quads ? &quads[i] : NULL, &dirs[i], NULL, NULL, NULL);
        if (status) status[i] = (uint8_t)st;
    }
    return QN_OK;
}
