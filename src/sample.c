/*
** sample.c: the edge-projection sampler.
**
** A unit in quad q with exit portal E (end points inset by the agent radius):
**  - if its projection on E falls between the inset end points, it steers at
**    the next quad's exit portal (or the goal point, when the next quad holds
**    the goal), and the straight line there is clamped to cross E between the
**    inset end points, so the move never cuts the corner of a wall;
**  - otherwise it steers at the nearest inset end point of E.
** In a goal quad it steers at the nearest goal point. Never allocates.
*/
#include "internal.h"

/* Distance under which a unit counts as standing on its aim point: a few
** times the mesh tolerance, so float noise near a portal cannot turn it back. */
static float reach_tolerance(const qn_mesh *m) { return 4.0f * m->eps + 1e-5f; }

/* A portal's segment, shortened at each end by the agent radius. */
typedef struct seg {
    qn_vec2 a, b;
} seg;

static seg inset_portal(const qn_mesh *m, uint32_t e, float radius) {
    const qn__portal *p = &m->portals[e];
    seg s = {p->p0, p->p1};
    /* Even a point agent keeps a hair's breadth (a few ulps of the level's
    ** coordinates) from a wall's end, so float noise cannot put it outside. */
    float min_inset = 64.0f * m->eps;
    radius = radius > min_inset ? radius : min_inset;
    if (p->width > 0.0f) {
        float r = radius < 0.5f * p->width ? radius : 0.5f * p->width;
        qn_vec2 u = qn__scale(qn__sub(p->p1, p->p0), r / p->width);
        s.a = qn__add(p->p0, u);
        s.b = qn__sub(p->p1, u);
    }
    return s;
}

/* Parameter of p's projection on the line a-b (0 at a, 1 at b). */
static float project_t(seg s, qn_vec2 p) {
    qn_vec2 ab = qn__sub(s.b, s.a);
    float l2 = qn__dot(ab, ab);
    return l2 > 0.0f ? qn__dot(qn__sub(p, s.a), ab) / l2 : 0.5f;
}

static qn_vec2 seg_point(seg s, float t) {
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return qn__add(s.a, qn__scale(qn__sub(s.b, s.a), t));
}

/* Where the unit aims once it has crossed portal e into quad r. */
static qn_vec2 beyond_target(const qn_field *f, uint32_t r, qn_vec2 p, qn_vec2 fallback) {
    const qn_mesh *m = f->mesh;
    uint32_t ex = f->slots[r].exit;
    if (ex == QN_NONE) return fallback;
    if (ex & QN__GOAL_BIT) return qn__nearest_goal(f, ex & ~QN__GOAL_BIT, p)->at;
    seg next = inset_portal(m, ex, f->radius);
    return seg_point(next, project_t(next, p));
}

/* Clamps the aim so the straight line p -> target crosses the portal between
** its inset end points. */
static qn_vec2 clamp_through(seg s, qn_vec2 p, qn_vec2 target, qn_vec2 on_portal) {
    qn_vec2 ab = qn__sub(s.b, s.a);
    qn_vec2 d = qn__sub(target, p);
    float den = qn__cross(d, ab);
    float sp = qn__cross(ab, qn__sub(p, s.a)), st = qn__cross(ab, qn__sub(target, s.a));
    /* The target lies in the next quad's closure, across the portal line. A
    ** unit on that side too stands on the portal (within the location
    ** tolerance): nothing is left to cross. */
    if (sp == 0.0f || (st != 0.0f && (sp > 0.0f) == (st > 0.0f))) return target;
    if (den == 0.0f) return on_portal;
    /* Line p + u*d meets the portal line where cross(p + u d - a, ab) = 0. */
    float u = qn__cross(qn__sub(s.a, p), ab) / den;
    qn_vec2 x = qn__add(p, qn__scale(d, u));
    float t = project_t(s, x);
    if (t < 0.0f || t > 1.0f) return seg_point(s, t);
    return target;
}

static qn_status steer(const qn_field *f, uint32_t q, qn_vec2 p, qn_vec2 *target) {
    const qn_mesh *m = f->mesh;
    uint32_t ex = f->slots[q].exit;
    if (ex == QN_NONE) return QN_E_UNREACHABLE;
    if (ex & QN__GOAL_BIT) {
        *target = qn__nearest_goal(f, ex & ~QN__GOAL_BIT, p)->at;
        qn_vec2 d = qn__sub(*target, p);
        return qn__dot(d, d) <= QN_AT_GOAL_DISTANCE * QN_AT_GOAL_DISTANCE ? QN_AT_GOAL : QN_OK;
    }
    seg s = inset_portal(m, ex, f->radius);
    float t = project_t(s, p);
    qn_vec2 on_portal = seg_point(s, t);
    /* Off the span, steer at the nearest inset end point, unless the unit
    ** already stands on it (within the tolerance): then it goes on through. */
    if ((t < 0.0f || t > 1.0f) && qn__len(qn__sub(on_portal, p)) > reach_tolerance(m)) {
        *target = on_portal;
        return QN_OK;
    }
    uint32_t r = qn__portal_other(m, ex, q);
    *target = clamp_through(s, p, beyond_target(f, r, p, on_portal), on_portal);
    return QN_OK;
}

/* Unit direction toward target. A unit already standing on its aim point at
** a portal (within the tolerance) steps straight out through that portal. */
static qn_vec2 direction(const qn_field *f, uint32_t q, qn_vec2 p, qn_vec2 target) {
    qn_vec2 d = qn__sub(target, p);
    float len = qn__len(d);
    uint32_t ex = f->slots[q].exit;
    bool goal_quad = (ex & QN__GOAL_BIT) != 0;
    if (len > reach_tolerance(f->mesh) || (goal_quad && len > 0.0f))
        return qn__scale(d, 1.0f / len);
    if (goal_quad) return qn__v2(0.0f, 0.0f);
    const qn__portal *pt = &f->mesh->portals[ex];
    int side = pt->q[0] == q ? 0 : 1;
    const qn__planes *pl = &f->mesh->planes[q];
    /* The reversed inward normal of q's edge points out through the portal. */
    return qn__v2(-pl->nx[pt->edge[side]], -pl->ny[pt->edge[side]]);
}

/* A unit standing on its quad's exit portal (within the tolerance) counts as
** already across it, in the next quad. Without this, float noise can keep a
** unit on the boundary in the quad behind it, aiming back and forth. Costs
** fall strictly along exits, so this takes a few hops at most (a corner where
** several portals meet). */
static uint32_t cross_if_on_exit(const qn_field *f, uint32_t q, qn_vec2 p) {
    const qn_mesh *m = f->mesh;
    float tol = reach_tolerance(m);
    for (int hops = 0; hops < 4; hops++) {
        uint32_t ex = f->slots[q].exit;
        if (ex == QN_NONE || (ex & QN__GOAL_BIT)) break;
        const qn__portal *pt = &m->portals[ex];
        int side = pt->q[0] == q ? 0 : 1;
        const qn__planes *pl = &m->planes[q];
        int e = pt->edge[side];
        if (pl->nx[e] * p.x + pl->ny[e] * p.y - pl->c[e] > tol) break;
        seg s = {pt->p0, pt->p1};
        float t = project_t(s, p);
        if (qn__len(qn__sub(seg_point(s, t), p)) > tol) break;
        if (!qn__quad_contains(m, pt->q[1 - side], p)) break;
        q = pt->q[1 - side];
    }
    return q;
}

qn_status qn_field_sample(const qn_field *field, qn_vec2 p, uint32_t *quad_io, qn_vec2 *dir) {
    if (dir) *dir = qn__v2(0.0f, 0.0f);
    if (!field || !dir || !qn__finite2(p)) {
        if (quad_io) *quad_io = QN_NONE;
        return QN_E_INVALID_ARG;
    }
    const qn_mesh *m = field->mesh;
    uint32_t q = qn__locate(m, p, quad_io ? *quad_io : QN_NONE);
    if (quad_io) *quad_io = q;
    if (q == QN_NONE) return QN_E_OUTSIDE;
    if (m->blocked[q]) return QN_E_BLOCKED;
    q = cross_if_on_exit(field, q, p);
    if (quad_io) *quad_io = q;
    qn_vec2 target;
    qn_status st = steer(field, q, p, &target);
    if (st != QN_OK) return st;
    *dir = direction(field, q, p, target);
    return QN_OK;
}

qn_status qn_field_sample_batch(const qn_field *field, const qn_vec2 *positions, qn_vec2 *dirs,
                                uint8_t *status, uint32_t *quads, size_t count) {
    if (!field || (count && (!positions || !dirs))) return QN_E_INVALID_ARG;
    for (size_t i = 0; i < count; i++) {
        qn_status st = qn_field_sample(field, positions[i], quads ? &quads[i] : NULL, &dirs[i]);
        if (status) status[i] = (uint8_t)st;
    }
    return QN_OK;
}
