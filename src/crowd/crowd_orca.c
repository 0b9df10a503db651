/*
** crowd_orca.c: reciprocal avoidance. Each neighbour adds one half-plane of
** allowed velocities (optimal reciprocal collision avoidance: the smallest
** change that leaves the velocity obstacle of the pair over the time horizon,
** half of it taken by each unit); the new velocity is the one nearest the
** preferred velocity that satisfies all half-planes, found by an incremental
** 2-D linear program over the disc of speeds up to the unit's max speed.
** When no velocity satisfies all of them (dense crowds), the fallback keeps
** the wall half-planes and minimises the largest violation of the others.
** Written from the published method (van den Berg et al., "Reciprocal
** n-body collision avoidance", 2011); plain float arithmetic throughout, so
** the result depends only on the inputs and their order.
*/
#include "crowd_internal.h"

#define LP_EPS 1.0e-6f
#define MAX_LINES 64u
#define SETTLE_PREF 0.5f /* in a jam, aim at this share of the preferred velocity */

static qn_vec2 perp_right(qn_vec2 v) { return qn__v2(v.y, -v.x); }

/* Collision already: push out within one step along w = rel_vel - rel_pos/dt. */
static qn__line overlap_line(qn_vec2 rel_pos, qn_vec2 rel_vel, float rsum, float inv_dt,
                             bool a_first) {
    qn_vec2 w = qn__sub(rel_vel, qn__scale(rel_pos, inv_dt));
    float wl = qn__len(w);
    qn_vec2 uw;
    if (wl > 1e-9f) uw = qn__scale(w, 1.0f / wl);
    else {
        float pl = qn__len(rel_pos);
        /* Coincident units part along x, in opposite directions by id order. */
        uw = pl > 1e-9f ? qn__scale(rel_pos, -1.0f / pl) : qn__v2(a_first ? -1.0f : 1.0f, 0.0f);
    }
    qn__line l;
    l.d = perp_right(uw);
    l.p = qn__scale(uw, rsum * inv_dt - wl); /* u; the caller adds va + u/2 */
    return l;
}

/* Apart: leave the truncated cone (cut-off circle at rel_pos/tau, or a leg). */
static qn__line cone_line(qn_vec2 rel_pos, qn_vec2 rel_vel, float rsum, float dist2,
                          float inv_tau) {
    qn_vec2 w = qn__sub(rel_vel, qn__scale(rel_pos, inv_tau));
    float wl2 = qn__dot(w, w), dot1 = qn__dot(w, rel_pos);
    qn__line l;
    if (dot1 < 0.0f && dot1 * dot1 > rsum * rsum * wl2) {
        float wl = sqrtf(wl2);
        qn_vec2 uw = wl > 1e-9f ? qn__scale(w, 1.0f / wl) : qn__v2(1.0f, 0.0f);
        l.d = perp_right(uw);
        l.p = qn__scale(uw, rsum * inv_tau - wl);
        return l;
    }
    float leg = sqrtf(dist2 - rsum * rsum);
    if (qn__cross(rel_pos, w) > 0.0f) /* left leg */
        l.d = qn__scale(qn__v2(rel_pos.x * leg - rel_pos.y * rsum,
                               rel_pos.x * rsum + rel_pos.y * leg), 1.0f / dist2);
    else /* right leg, pointing the other way */
        l.d = qn__scale(qn__v2(rel_pos.x * leg + rel_pos.y * rsum,
                               -rel_pos.x * rsum + rel_pos.y * leg), -1.0f / dist2);
    l.p = qn__sub(qn__scale(l.d, qn__dot(rel_vel, l.d)), rel_vel);
    return l;
}

qn__line qn__orca_line(qn_vec2 pa, qn_vec2 va, float ra, qn_vec2 pb, qn_vec2 vb, float rb,
                       float inv_tau, float inv_dt, bool a_first, float share) {
    qn_vec2 rel_pos = qn__sub(pb, pa), rel_vel = qn__sub(va, vb);
    float rsum = ra + rb, dist2 = qn__dot(rel_pos, rel_pos);
    qn__line l = dist2 > rsum * rsum ? cone_line(rel_pos, rel_vel, rsum, dist2, inv_tau)
                                     : overlap_line(rel_pos, rel_vel, rsum, inv_dt, a_first);
    l.p = qn__add(va, qn__scale(l.p, share));
    return l;
}

/* ---- the linear program ------------------------------------------------ */

/* Best point on line k within the disc of radius r that satisfies lines
** [0, k): nearest to opt, or farthest along opt when `along`. */
static bool lp1(const qn__line *L, uint32_t k, float r, qn_vec2 opt, bool along,
                qn_vec2 *res) {
    float dp = qn__dot(L[k].p, L[k].d);
    float disc = dp * dp + r * r - qn__dot(L[k].p, L[k].p);
    if (disc < 0.0f) return false;
    float s = sqrtf(disc), tl = -dp - s, tr = -dp + s;
    for (uint32_t i = 0; i < k; i++) {
        float b = qn__cross(L[i].d, L[k].d);
        float a = qn__cross(L[i].d, qn__sub(L[k].p, L[i].p));
        if (fabsf(b) <= LP_EPS) {
            if (a < 0.0f) return false; /* parallel and on the wrong side */
            continue;
        }
        float t = -a / b;
        if (b > 0.0f) tl = t > tl ? t : tl;
        else tr = t < tr ? t : tr;
        if (tl > tr) return false;
    }
    float t;
    if (along) t = qn__dot(opt, L[k].d) > 0.0f ? tr : tl;
    else {
        t = qn__dot(L[k].d, qn__sub(opt, L[k].p));
        t = t < tl ? tl : (t > tr ? tr : t);
    }
    *res = qn__add(L[k].p, qn__scale(L[k].d, t));
    return true;
}

/* Incremental LP over lines [0, n); returns n on success, else the index of
** the first line it could not satisfy (*res then satisfies those before). */
static uint32_t lp2(const qn__line *L, uint32_t n, float r, qn_vec2 opt, bool along,
                    qn_vec2 *res) {
    float ol2 = qn__dot(opt, opt);
    if (along) *res = qn__scale(opt, r);
    else if (ol2 > r * r) *res = qn__scale(opt, r / sqrtf(ol2));
    else *res = opt;
    for (uint32_t i = 0; i < n; i++) {
        if (qn__cross(L[i].d, qn__sub(*res, L[i].p)) >= 0.0f) continue;
        qn_vec2 keep = *res;
        if (!lp1(L, i, r, opt, along, res)) {
            *res = keep;
            return i;
        }
    }
    return n;
}

/* Line i's boundary where it meets line j, as a constraint of the fallback. */
static bool bisector(const qn__line *li, const qn__line *lj, qn__line *out) {
    float det = qn__cross(li->d, lj->d);
    if (fabsf(det) <= LP_EPS) {
        if (qn__dot(li->d, lj->d) > 0.0f) return false; /* same direction: no constraint */
        out->p = qn__scale(qn__add(li->p, lj->p), 0.5f);
    } else {
        float t = qn__cross(lj->d, qn__sub(li->p, lj->p)) / det;
        out->p = qn__add(li->p, qn__scale(li->d, t));
    }
    qn_vec2 d = qn__sub(lj->d, li->d);
    float dl = qn__len(d);
    if (dl <= LP_EPS) return false;
    out->d = qn__scale(d, 1.0f / dl);
    return true;
}

/* Fallback: keep lines [0, hard) and minimise the largest violation of the
** rest, starting from the failed line `from`. */
static void lp3(const qn__line *L, uint32_t n, uint32_t hard, uint32_t from, float r,
                qn_vec2 *res) {
    qn__line proj[MAX_LINES];
    float worst = 0.0f;
    for (uint32_t i = from; i < n; i++) {
        if (qn__cross(L[i].d, qn__sub(L[i].p, *res)) <= worst) continue;
        uint32_t m = 0;
        for (uint32_t j = 0; j < hard; j++) proj[m++] = L[j];
        for (uint32_t j = hard; j < i; j++)
            if (bisector(&L[i], &L[j], &proj[m])) m++;
        qn_vec2 keep = *res;
        if (lp2(proj, m, r, qn__v2(-L[i].d.y, L[i].d.x), true, res) < m) *res = keep;
        worst = qn__cross(L[i].d, qn__sub(L[i].p, *res));
    }
}

/* The fallback's velocity lies on the speed limit (it maximises the margin
** along one line), so in a jam units would keep moving at full speed into
** each other. Among the velocities that violate no soft line by more than
** the fallback's worst violation, take the one nearest `opt` instead. */
static qn_vec2 settle(const qn__line *L, uint32_t n, uint32_t hard, float vmax, qn_vec2 res,
                      qn_vec2 opt) {
    float worst = 0.0f;
    for (uint32_t i = hard; i < n; i++) {
        float v = qn__cross(L[i].d, qn__sub(L[i].p, res));
        worst = v > worst ? v : worst;
    }
    qn__line shifted[MAX_LINES];
    float slack = worst * 1.001f + 1e-5f;
    for (uint32_t i = 0; i < n; i++) {
        shifted[i] = L[i];
        if (i >= hard) /* move the line by `slack` toward its forbidden side */
            shifted[i].p = qn__add(L[i].p, qn__scale(qn__v2(L[i].d.y, -L[i].d.x), slack));
    }
    qn_vec2 out;
    return lp2(shifted, n, vmax, opt, false, &out) == n ? out : res;
}

qn_vec2 qn__orca_solve(const qn__line *lines, uint32_t n, uint32_t hard, float vmax,
                       qn_vec2 pref) {
    if (n > MAX_LINES) n = MAX_LINES;
    if (hard > n) hard = n;
    qn_vec2 res;
    uint32_t fail = lp2(lines, n, vmax, pref, false, &res);
    if (fail == n) return res;
    /* The walls alone cannot be met (squeezed, or pushed faster than vmax):
    ** treat every line alike. */
    if (fail < hard) hard = 0;
    lp3(lines, n, hard, fail, vmax, &res);
    return settle(lines, n, hard, vmax, res, qn__scale(pref, SETTLE_PREF));
}
