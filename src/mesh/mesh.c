/*
** mesh.c: building and validating a mesh of convex quads, computing the
** portals between them (T-junctions included), and the spatial index used
** for point location.
**
** Build order: check inputs -> per-quad geometry (winding, convexity, area)
** -> bucket grid -> candidate pairs (overlap test, shared edge segments)
** -> explicit links checked against those segments -> portal tables ->
** per-quad portal distance matrices -> islands. Any failure frees all.
*/
#include "internal.h"

#include <float.h>
#include <stdlib.h>

/* A portal candidate found while pairing quads, before it gets its index. */
typedef struct cand {
    uint32_t a, b;
    uint8_t ea, eb;
    qn_vec2 p0, p1;
} cand;

typedef struct builder {
    const qn_mesh_desc *desc;
    qn_mesh *m;
    qn_error *err;
    cand *cands;
    uint32_t ncand, capcand;
} builder;

/* ---- small helpers --------------------------------------------------- */

static size_t mesh_array_bytes(const qn_mesh *m) {
    size_t q = m->quad_count, p = m->portal_count;
    size_t cells = (size_t)m->grid_w * m->grid_h;
    size_t nd = m->qd_start ? m->qd_start[q] : 0;
    size_t ncl = m->cell_start ? m->cell_start[cells] : 0;
    return q * (4 * sizeof(qn_vec2) + sizeof(qn__planes) + 2 * sizeof(float) + 1 +
                sizeof(uint32_t)) +
           p * sizeof(qn__portal) + (q + 1) * 2 * sizeof(uint32_t) + 2 * p * sizeof(uint32_t) +
           nd * sizeof(float) + (cells + 1 + ncl) * sizeof(uint32_t);
}

static void mesh_free_arrays(qn_mesh *m) {
    const qn_allocator *a = &m->alloc;
    size_t q = m->quad_count, p = m->portal_count;
    size_t cells = (size_t)m->grid_w * m->grid_h;
    qn__free(a, m->corners, q * 4 * sizeof(qn_vec2));
    qn__free(a, m->planes, q * sizeof(qn__planes));
    qn__free(a, m->cost, q * sizeof(float));
    qn__free(a, m->blocked, q);
    qn__free(a, m->area, q * sizeof(float));
    qn__free(a, m->island, q * sizeof(uint32_t));
    qn__free(a, m->portals, p * sizeof(qn__portal));
    qn__free(a, m->qp_list, 2 * p * sizeof(uint32_t));
    if (m->qd_start) qn__free(a, m->qdist, m->qd_start[q] * sizeof(float));
    qn__free(a, m->qp_start, (q + 1) * sizeof(uint32_t));
    qn__free(a, m->qd_start, (q + 1) * sizeof(uint32_t));
    if (m->cell_start) qn__free(a, m->cell_list, m->cell_start[cells] * sizeof(uint32_t));
    qn__free(a, m->cell_start, (cells + 1) * sizeof(uint32_t));
}

void qn_mesh_destroy(qn_mesh *mesh) {
    if (!mesh) return;
    qn_allocator a = mesh->alloc;
    qn__boundary_free(&a, mesh->bnd);
    mesh_free_arrays(mesh);
    qn__free(&a, mesh, sizeof *mesh);
}

/* ---- input checks ---------------------------------------------------- */

static qn_status check_counts(const qn_mesh_desc *d, qn_error *err) {
    if (d->quad_count == 0) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "mesh has no quads");
    if (d->quad_count > QN_MAX_QUADS)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "%u quads, more than the limit of %u",
                        d->quad_count, QN_MAX_QUADS);
    if (d->vertex_count > QN_MAX_VERTICES)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "%u vertices, more than the limit of %u",
                        d->vertex_count, QN_MAX_VERTICES);
    if (d->has_links && d->link_count > QN_MAX_LINKS)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "%u links, more than the limit of %u",
                        d->link_count, QN_MAX_LINKS);
    if (!d->vertices || !d->quads || (d->has_links && d->link_count && !d->links))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "mesh description has a NULL array");
    return QN_OK;
}

static qn_status check_vertices(const qn_mesh_desc *d, qn_error *err) {
    for (uint32_t i = 0; i < d->vertex_count; i++) {
        qn_vec2 v = d->vertices[i];
        if (!qn__finite2(v) || fabsf(v.x) > QN_MAX_COORD || fabsf(v.y) > QN_MAX_COORD)
            return qn__fail(err, QN_E_BAD_NUMBER, i,
                            "vertex %u: coordinates (%g, %g) are not finite or exceed %g", i,
                            (double)v.x, (double)v.y, (double)QN_MAX_COORD);
    }
    return QN_OK;
}

static qn_status check_quad_fields(const qn_mesh_desc *d, uint32_t q, qn_error *err) {
    for (int k = 0; k < 4; k++) {
        uint32_t vi = d->quads[4 * (size_t)q + (size_t)k];
        if (vi >= d->vertex_count)
            return qn__fail(err, QN_E_INDEX_RANGE, q,
                            "quad %u: vertex index %u out of range (%u vertices)", q, vi,
                            d->vertex_count);
    }
    if (d->costs) {
        float c = d->costs[q];
        if (!isfinite(c) || c < 1.0f || c > QN_MAX_QUAD_COST)
            return qn__fail(err, QN_E_BAD_NUMBER, q, "quad %u: cost %g is not in [1, %g]", q,
                            (double)c, (double)QN_MAX_QUAD_COST);
    }
    return QN_OK;
}

/* ---- per-quad geometry ---------------------------------------------- */

static double cross_d(qn_vec2 o, qn_vec2 a, qn_vec2 b) {
    return ((double)a.x - (double)o.x) * ((double)b.y - (double)o.y) - ((double)a.y - (double)o.y) * ((double)b.x - (double)o.x);
}

static double dist_d(qn_vec2 a, qn_vec2 b) {
    double dx = (double)a.x - (double)b.x, dy = (double)a.y - (double)b.y;
    return sqrt(dx * dx + dy * dy);
}

/* Signed turn at each corner of c[] is >= -tol (convex for its winding sign). */
static bool corners_convex(const qn_vec2 *c, double sign, double eps) {
    for (int i = 0; i < 4; i++) {
        qn_vec2 a = c[i], b = c[(i + 1) & 3], n = c[(i + 2) & 3];
        double tol = eps * (dist_d(a, b) + dist_d(b, n));
        if (sign * cross_d(a, b, n) < -tol) return false;
    }
    return true;
}

static qn_status check_quad_shape(qn_mesh *m, uint32_t q, qn_error *err) {
    const qn_vec2 *c = &m->corners[4 * (size_t)q];
    double area2 = 0.0, longest = 0.0, eps = (double)m->eps;
    for (int i = 0; i < 4; i++) {
        double len = dist_d(c[i], c[(i + 1) & 3]);
        if (len <= eps)
            return qn__fail(err, QN_E_DEGENERATE_QUAD, q, "quad %u: edge %d has zero length", q,
                            i);
        if (len > longest) longest = len;
        area2 += (double)c[i].x * (double)c[(i + 1) & 3].y - (double)c[(i + 1) & 3].x * (double)c[i].y;
    }
    if (fabs(area2) <= eps * longest)
        return qn__fail(err, QN_E_DEGENERATE_QUAD, q, "quad %u has zero area", q);
    if (area2 < 0 && corners_convex(c, -1.0, 1e-6))
        return qn__fail(err, QN_E_WINDING, q,
                        "quad %u is wound clockwise (negative area); list its corners in the "
                        "other order",
                        q);
    if (area2 < 0 || !corners_convex(c, 1.0, 1e-6))
        return qn__fail(err, QN_E_NONCONVEX_QUAD, q, "quad %u is not convex", q);
    m->area[q] = (float)(0.5 * area2);
    return QN_OK;
}

static void quad_planes(qn_mesh *m, uint32_t q) {
    const qn_vec2 *c = &m->corners[4 * (size_t)q];
    qn__planes *pl = &m->planes[q];
    for (int i = 0; i < 4; i++) {
        double ex = (double)c[(i + 1) & 3].x - (double)c[i].x, ey = (double)c[(i + 1) & 3].y - (double)c[i].y;
        double len = sqrt(ex * ex + ey * ey);
        double nx = -ey / len, ny = ex / len;
        pl->nx[i] = (float)nx;
        pl->ny[i] = (float)ny;
        pl->c[i] = (float)(nx * (double)c[i].x + ny * (double)c[i].y);
    }
}

static qn_status build_quads(qn_mesh *m, const qn_mesh_desc *d, qn_error *err) {
    double maxabs = 1.0;
    for (uint32_t q = 0; q < d->quad_count; q++) {
        qn_status st = check_quad_fields(d, q, err);
        if (st != QN_OK) return st;
        for (int k = 0; k < 4; k++) {
            qn_vec2 v = d->vertices[d->quads[4 * (size_t)q + (size_t)k]];
            m->corners[4 * (size_t)q + (size_t)k] = v;
            maxabs = fmax(maxabs, fmax(fabs((double)v.x), fabs((double)v.y)));
        }
        m->cost[q] = d->costs ? d->costs[q] : 1.0f;
        m->blocked[q] = d->blocked ? (d->blocked[q] != 0) : 0;
    }
    /* A few float ulps of the largest coordinate: vertices that should meet
    ** exactly but went through arithmetic still match. */
    m->eps = (float)fmax(1e-6, 8.0 * (double)FLT_EPSILON * maxabs);
    qn_rect b = {{FLT_MAX, FLT_MAX}, {-FLT_MAX, -FLT_MAX}};
    for (uint32_t q = 0; q < d->quad_count; q++) {
        qn_status st = check_quad_shape(m, q, err);
        if (st != QN_OK) return st;
        quad_planes(m, q);
        for (int k = 0; k < 4; k++) {
            qn_vec2 v = m->corners[4 * (size_t)q + (size_t)k];
            b.min.x = fminf(b.min.x, v.x);
            b.min.y = fminf(b.min.y, v.y);
            b.max.x = fmaxf(b.max.x, v.x);
            b.max.y = fmaxf(b.max.y, v.y);
        }
    }
    m->bounds = b;
    return QN_OK;
}

/* ---- bucket grid ----------------------------------------------------- */

/* The box of every point the tolerant inside test accepts for quad q: the
** quad with each edge pushed out by eps. At a sharp corner that reaches
** eps / sin(angle / 2) past the vertex, further than eps. */
static qn_rect quad_box(const qn_mesh *m, uint32_t q) {
    const qn_vec2 *c = &m->corners[4 * (size_t)q];
    const qn__planes *pl = &m->planes[q];
    double eps = (double)m->eps;
    qn_rect r = {c[0], c[0]};
    for (int k = 0; k < 4; k++) {
        /* Outward normals of the edges before and after corner k. */
        int a = (k + 3) & 3, b = k;
        double ax = -(double)pl->nx[a], ay = -(double)pl->ny[a];
        double bx = -(double)pl->nx[b], by = -(double)pl->ny[b];
        double det = ax * by - ay * bx, ox, oy;
        if (fabs(det) < 1e-6) { /* straight through the corner */
            ox = ax * eps;
            oy = ay * eps;
        } else { /* o . a = eps and o . b = eps */
            ox = eps * (by - ay) / det;
            oy = eps * (ax - bx) / det;
        }
        double x = (double)c[k].x, y = (double)c[k].y;
        r.min.x = fminf(r.min.x, (float)(x + fmin(ox, -eps)));
        r.min.y = fminf(r.min.y, (float)(y + fmin(oy, -eps)));
        r.max.x = fmaxf(r.max.x, (float)(x + fmax(ox, eps)));
        r.max.y = fmaxf(r.max.y, (float)(y + fmax(oy, eps)));
    }
    return r;
}

static uint32_t cell_coord(float v, float origin, float inv, uint32_t n) {
    float f = (v - origin) * inv;
    if (!(f > 0.0f)) return 0;
    if (f >= (float)n) return n - 1;
    return (uint32_t)f;
}

static void box_cells(const qn_mesh *m, qn_rect r, uint32_t c[4]) {
    c[0] = cell_coord(r.min.x, m->grid_origin.x, m->grid_inv_cell, m->grid_w);
    c[1] = cell_coord(r.min.y, m->grid_origin.y, m->grid_inv_cell, m->grid_h);
    c[2] = cell_coord(r.max.x, m->grid_origin.x, m->grid_inv_cell, m->grid_w);
    c[3] = cell_coord(r.max.y, m->grid_origin.y, m->grid_inv_cell, m->grid_h);
}

/* Cell size near the mean quad size, so a bucket holds a few quads. */
static void grid_dims(qn_mesh *m) {
    double w = (double)m->bounds.max.x - (double)m->bounds.min.x;
    double h = (double)m->bounds.max.y - (double)m->bounds.min.y;
    double n = (double)m->quad_count;
    double cs = sqrt(w * h / n);
    if (!(cs > 0)) cs = fmax(w, h);
    double gw = ceil(w / cs), gh = ceil(h / cs);
    while (gw * gh > 2.0 * n + 16.0) {
        cs *= 1.25;
        gw = ceil(w / cs);
        gh = ceil(h / cs);
    }
    m->grid_w = (uint32_t)fmax(1.0, gw);
    m->grid_h = (uint32_t)fmax(1.0, gh);
    m->grid_cell = (float)cs;
    m->grid_inv_cell = (float)(1.0 / cs);
    m->grid_origin = m->bounds.min;
}

static qn_status build_grid(qn_mesh *m, qn_error *err) {
    grid_dims(m);
    size_t cells = (size_t)m->grid_w * m->grid_h;
    m->cell_start = qn__calloc(&m->alloc, cells + 1, sizeof(uint32_t));
    if (!m->cell_start) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh grid)");
    uint64_t total = 0;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        uint32_t c[4];
        box_cells(m, quad_box(m, q), c);
        for (uint32_t y = c[1]; y <= c[3]; y++)
            for (uint32_t x = c[0]; x <= c[2]; x++) m->cell_start[(size_t)y * m->grid_w + x + 1]++;
        total += (uint64_t)(c[2] - c[0] + 1) * (c[3] - c[1] + 1);
    }
    if (total > (uint64_t)UINT32_MAX / 2)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "quads too large for the spatial index");
    for (size_t i = 0; i < cells; i++) m->cell_start[i + 1] += m->cell_start[i];
    m->cell_list = qn__alloc(&m->alloc, (size_t)total * sizeof(uint32_t));
    uint32_t *fill = qn__calloc(&m->alloc, cells, sizeof(uint32_t));
    if (!m->cell_list || !fill) {
        qn__free(&m->alloc, fill, cells * sizeof(uint32_t));
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh grid)");
    }
    for (uint32_t q = 0; q < m->quad_count; q++) {
        uint32_t c[4];
        box_cells(m, quad_box(m, q), c);
        for (uint32_t y = c[1]; y <= c[3]; y++)
            for (uint32_t x = c[0]; x <= c[2]; x++) {
                size_t cell = (size_t)y * m->grid_w + x;
                m->cell_list[m->cell_start[cell] + fill[cell]++] = q;
            }
    }
    qn__free(&m->alloc, fill, cells * sizeof(uint32_t));
    return QN_OK;
}

/* ---- pairs: overlap and shared edge segments ------------------------- */

/* Separating-axis test on the 8 edge normals; touching is not overlap. */
static bool quads_overlap(const qn_mesh *m, uint32_t a, uint32_t b) {
    const uint32_t qs[2] = {a, b};
    double tol = 4.0 * (double)m->eps;
    for (int s = 0; s < 2; s++) {
        const qn__planes *pl = &m->planes[qs[s]];
        const qn_vec2 *o = &m->corners[4 * (size_t)qs[1 - s]];
        for (int i = 0; i < 4; i++) {
            double maxo = -DBL_MAX;
            for (int k = 0; k < 4; k++)
                maxo = fmax(maxo, (double)pl->nx[i] * (double)o[k].x + (double)pl->ny[i] * (double)o[k].y);
            if (maxo <= (double)pl->c[i] + tol) return false;
        }
    }
    return true;
}

static qn_status push_cand(builder *bd, cand c) {
    if (bd->ncand == bd->capcand) {
        uint32_t ncap = bd->capcand ? bd->capcand * 2 : 256;
        if (ncap > 2u * QN_MAX_LINKS)
            return qn__fail(bd->err, QN_E_LIMIT, QN_NONE, "more than %u portals", QN_MAX_LINKS);
        cand *n = qn__realloc(&bd->m->alloc, bd->cands, bd->capcand * sizeof(cand),
                              ncap * sizeof(cand));
        if (!n) return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
        bd->cands = n;
        bd->capcand = ncap;
    }
    bd->cands[bd->ncand++] = c;
    return QN_OK;
}

/* Overlap of edge ea of quad a with edge eb of quad b, when they lie on one
** line and run in opposite directions; returns its length (0 when none). */
static double edge_overlap(const qn_mesh *m, uint32_t a, int ea, uint32_t b, int eb, qn_vec2 *p0,
                           qn_vec2 *p1) {
    const qn_vec2 *ca = &m->corners[4 * (size_t)a], *cb = &m->corners[4 * (size_t)b];
    qn_vec2 a0 = ca[ea], a1 = ca[(ea + 1) & 3], b0 = cb[eb], b1 = cb[(eb + 1) & 3];
    double len = dist_d(a0, a1), eps = (double)m->eps;
    double ux = ((double)a1.x - (double)a0.x) / len, uy = ((double)a1.y - (double)a0.y) / len;
    double d0 = ux * ((double)b0.y - (double)a0.y) - uy * ((double)b0.x - (double)a0.x);
    double d1 = ux * ((double)b1.y - (double)a0.y) - uy * ((double)b1.x - (double)a0.x);
    if (fabs(d0) > eps || fabs(d1) > eps) return 0.0;
    double t0 = ux * ((double)b0.x - (double)a0.x) + uy * ((double)b0.y - (double)a0.y);
    double t1 = ux * ((double)b1.x - (double)a0.x) + uy * ((double)b1.y - (double)a0.y);
    if (t1 >= t0) return 0.0; /* same direction: not a shared boundary */
    double lo = fmax(0.0, t1), hi = fmin(len, t0);
    if (hi - lo <= eps) return 0.0;
    *p0 = qn__v2((float)((double)a0.x + ux * lo), (float)((double)a0.y + uy * lo));
    *p1 = qn__v2((float)((double)a0.x + ux * hi), (float)((double)a0.y + uy * hi));
    if (lo <= eps) *p0 = a0;
    if (len - hi <= eps) *p1 = a1;
    return hi - lo;
}

/* Convex quads with disjoint interiors touch along one segment at most; when
** a quad has a split edge that segment may come in pieces, merged here. */
static qn_status pair_portal(builder *bd, uint32_t a, uint32_t b) {
    cand best = {a, b, 0, 0, {0, 0}, {0, 0}};
    double best_len = 0.0;
    for (int ea = 0; ea < 4; ea++)
        for (int eb = 0; eb < 4; eb++) {
            qn_vec2 p0 = {0, 0}, p1 = {0, 0};
            double len = edge_overlap(bd->m, a, ea, b, eb, &p0, &p1);
            if (len > best_len) {
                best_len = len;
                best.ea = (uint8_t)ea;
                best.eb = (uint8_t)eb;
                best.p0 = p0;
                best.p1 = p1;
            }
        }
    if (best_len <= 0.0) return QN_OK;
    return push_cand(bd, best);
}

/* Each pair of quads whose boxes meet is looked at once: in the bucket that
** holds the low corner of the two boxes' intersection. */
static bool pair_owned_here(const qn_mesh *m, uint32_t a, uint32_t b, size_t cell) {
    qn_rect ra = quad_box(m, a), rb = quad_box(m, b);
    if (ra.max.x < rb.min.x || rb.max.x < ra.min.x || ra.max.y < rb.min.y || rb.max.y < ra.min.y)
        return false;
    uint32_t cx = cell_coord(fmaxf(ra.min.x, rb.min.x), m->grid_origin.x, m->grid_inv_cell,
                             m->grid_w);
    uint32_t cy = cell_coord(fmaxf(ra.min.y, rb.min.y), m->grid_origin.y, m->grid_inv_cell,
                             m->grid_h);
    return (size_t)cy * m->grid_w + cx == cell;
}

static qn_status find_pairs(builder *bd) {
    qn_mesh *m = bd->m;
    size_t cells = (size_t)m->grid_w * m->grid_h;
    for (size_t cell = 0; cell < cells; cell++) {
        for (uint32_t i = m->cell_start[cell]; i < m->cell_start[cell + 1]; i++) {
            for (uint32_t j = i + 1; j < m->cell_start[cell + 1]; j++) {
                uint32_t a = m->cell_list[i], b = m->cell_list[j];
                if (!pair_owned_here(m, a, b, cell)) continue;
                if (quads_overlap(m, a, b))
                    return qn__fail(bd->err, QN_E_OVERLAP, b, "quad %u overlaps quad %u", b, a);
                qn_status st = pair_portal(bd, a, b);
                if (st != QN_OK) return st;
            }
        }
    }
    return QN_OK;
}

/* ---- explicit links -------------------------------------------------- */

static int cmp_cand(const void *x, const void *y) {
    const cand *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    return 0;
}

/* A link with its position in the caller's table, for messages. */
typedef struct link_ix {
    uint32_t a, b, i;
} link_ix;

static int cmp_link(const void *x, const void *y) {
    const link_ix *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

static qn_status check_link(builder *bd, uint32_t i, link_ix *norm) {
    qn_link l = bd->desc->links[i];
    uint32_t n = bd->m->quad_count;
    if (l.a >= n || l.b >= n)
        return qn__fail(bd->err, QN_E_LINK_TARGET, i,
                        "link %u names quad %u, which does not exist (%u quads)", i,
                        l.a >= n ? l.a : l.b, n);
    if (l.a == l.b)
        return qn__fail(bd->err, QN_E_LINK_NO_EDGE, i, "link %u joins quad %u to itself", i, l.a);
    norm->a = l.a < l.b ? l.a : l.b;
    norm->b = l.a < l.b ? l.b : l.a;
    norm->i = i;
    cand key = {norm->a, norm->b, 0, 0, {0, 0}, {0, 0}};
    if (bd->ncand == 0 || !bsearch(&key, bd->cands, bd->ncand, sizeof(cand), cmp_cand))
        return qn__fail(bd->err, QN_E_LINK_NO_EDGE, i,
                        "link %u: quads %u and %u share no edge segment", i, l.a, l.b);
    return QN_OK;
}

static qn_status find_duplicate(builder *bd, link_ix *sorted, uint32_t nl) {
    if (nl > 1) qsort(sorted, nl, sizeof(link_ix), cmp_link);
    for (uint32_t i = 1; i < nl; i++) {
        const link_ix *x = &sorted[i - 1], *y = &sorted[i];
        if (x->a == y->a && x->b == y->b)
            return qn__fail(bd->err, QN_E_LINK_DUPLICATE, y->i,
                            "link %u repeats link %u (quads %u and %u)", y->i, x->i, x->a, x->b);
    }
    return QN_OK;
}

/* Keeps only the candidates named by the link table, after checking it.
** bd->cands must be sorted with cmp_cand. */
static qn_status apply_links(builder *bd) {
    uint32_t nl = bd->desc->link_count;
    link_ix *sorted = qn__alloc(&bd->m->alloc, (size_t)nl * sizeof(link_ix));
    if (!sorted) return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (links)");
    qn_status st = QN_OK;
    for (uint32_t i = 0; st == QN_OK && i < nl; i++) st = check_link(bd, i, &sorted[i]);
    if (st == QN_OK) st = find_duplicate(bd, sorted, nl);
    if (st == QN_OK) {
        uint32_t keep = 0;
        for (uint32_t i = 0; i < bd->ncand; i++) {
            link_ix key = {bd->cands[i].a, bd->cands[i].b, 0};
            /* Search on (a, b) only: find any entry with that pair. */
            uint32_t lo = 0, hi = nl;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                link_ix k2 = sorted[mid];
                k2.i = 0;
                if (cmp_link(&k2, &key) < 0) lo = mid + 1;
                else hi = mid;
            }
            if (lo < nl && sorted[lo].a == key.a && sorted[lo].b == key.b)
                bd->cands[keep++] = bd->cands[i];
        }
        bd->ncand = keep;
    }
    qn__free(&bd->m->alloc, sorted, (size_t)nl * sizeof(link_ix));
    return st;
}

/* ---- portal tables --------------------------------------------------- */

static qn_status build_portals(builder *bd) {
    qn_mesh *m = bd->m;
    if (bd->ncand > 1) qsort(bd->cands, bd->ncand, sizeof(cand), cmp_cand);
    m->portal_count = bd->ncand;
    m->portals = qn__alloc(&m->alloc, (size_t)bd->ncand * sizeof(qn__portal));
    m->qp_start = qn__calloc(&m->alloc, (size_t)m->quad_count + 1, sizeof(uint32_t));
    m->qp_list = qn__alloc(&m->alloc, 2 * (size_t)bd->ncand * sizeof(uint32_t));
    if (!m->portals || !m->qp_start || !m->qp_list)
        return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    for (uint32_t i = 0; i < bd->ncand; i++) {
        const cand *c = &bd->cands[i];
        qn__portal *p = &m->portals[i];
        p->q[0] = c->a;
        p->q[1] = c->b;
        p->edge[0] = c->ea;
        p->edge[1] = c->eb;
        p->p0 = c->p0;
        p->p1 = c->p1;
        p->mid = qn__scale(qn__add(c->p0, c->p1), 0.5f);
        p->width = qn__len(qn__sub(c->p1, c->p0));
        p->u = qn__scale(qn__sub(c->p1, c->p0), 1.0f / p->width);
        m->qp_start[c->a + 1]++;
        m->qp_start[c->b + 1]++;
    }
    for (uint32_t q = 0; q < m->quad_count; q++) m->qp_start[q + 1] += m->qp_start[q];
    uint32_t *fill = qn__calloc(&m->alloc, m->quad_count, sizeof(uint32_t));
    if (!fill) return qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    for (uint32_t i = 0; i < bd->ncand; i++)
        for (int s = 0; s < 2; s++) {
            uint32_t q = m->portals[i].q[s];
            m->portals[i].local[s] = fill[q];
            m->qp_list[m->qp_start[q] + fill[q]++] = i;
        }
    qn__free(&m->alloc, fill, (size_t)m->quad_count * sizeof(uint32_t));
    return QN_OK;
}

static qn_status build_distances(qn_mesh *m, qn_error *err) {
    m->qd_start = qn__calloc(&m->alloc, (size_t)m->quad_count + 1, sizeof(uint32_t));
    if (!m->qd_start) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (distances)");
    uint64_t total = 0;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        m->qd_start[q] = (uint32_t)total;
        uint64_t k = m->qp_start[q + 1] - m->qp_start[q];
        total += k * k;
        if (total > UINT32_MAX / 2)
            return qn__fail(err, QN_E_LIMIT, q, "quad %u: too many portals", q);
    }
    m->qd_start[m->quad_count] = (uint32_t)total;
    m->qdist = qn__alloc(&m->alloc, (size_t)total * sizeof(float));
    if (!m->qdist) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (distances)");
    for (uint32_t q = 0; q < m->quad_count; q++) {
        uint32_t s = m->qp_start[q], k = m->qp_start[q + 1] - s;
        float *row = &m->qdist[m->qd_start[q]];
        for (uint32_t i = 0; i < k; i++)
            for (uint32_t j = 0; j < k; j++)
                row[i * k + j] = qn__len(
                    qn__sub(m->portals[m->qp_list[s + i]].mid, m->portals[m->qp_list[s + j]].mid));
    }
    return QN_OK;
}

/* ---- islands ---------------------------------------------------------- */

static uint32_t uf_find(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

void qn__mesh_islands(qn_mesh *m) {
    uint32_t *id = m->island; /* the union-find forest, then the island ids */
    for (uint32_t q = 0; q < m->quad_count; q++) id[q] = q;
    for (uint32_t i = 0; i < m->portal_count; i++) {
        uint32_t a = m->portals[i].q[0], b = m->portals[i].q[1];
        if (m->blocked[a] || m->blocked[b]) continue;
        a = uf_find(id, a);
        b = uf_find(id, b);
        if (a != b) id[a > b ? a : b] = a < b ? a : b; /* root = lowest index */
    }
    for (uint32_t q = 0; q < m->quad_count; q++) id[q] = uf_find(id, q);
    /* Roots come before the rest of their set, so a root's id is assigned
    ** (overwriting its own index) before any member reads it. */
    uint32_t next = 0;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        if (m->blocked[q]) id[q] = QN_NONE;
        else if (id[q] == q) id[q] = next++;
        else id[q] = id[id[q]];
    }
    m->island_count = next;
}

/* ---- create ----------------------------------------------------------- */

static qn_status alloc_quad_arrays(qn_mesh *m, qn_error *err) {
    size_t q = m->quad_count;
    m->corners = qn__alloc(&m->alloc, q * 4 * sizeof(qn_vec2));
    m->planes = qn__alloc(&m->alloc, q * sizeof(qn__planes));
    m->cost = qn__alloc(&m->alloc, q * sizeof(float));
    m->blocked = qn__alloc(&m->alloc, q);
    m->area = qn__alloc(&m->alloc, q * sizeof(float));
    m->island = qn__alloc(&m->alloc, q * sizeof(uint32_t));
    if (!m->corners || !m->planes || !m->cost || !m->blocked || !m->area || !m->island)
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quads)");
    return QN_OK;
}

static qn_status build_all(builder *bd) {
    qn_mesh *m = bd->m;
    qn_status st = alloc_quad_arrays(m, bd->err);
    if (st == QN_OK) st = check_vertices(bd->desc, bd->err);
    if (st == QN_OK) st = build_quads(m, bd->desc, bd->err);
    if (st == QN_OK) st = build_grid(m, bd->err);
    if (st == QN_OK) st = find_pairs(bd);
    if (st == QN_OK && bd->desc->has_links) {
        if (bd->ncand > 1) qsort(bd->cands, bd->ncand, sizeof(cand), cmp_cand);
        st = apply_links(bd);
    }
    if (st == QN_OK) st = build_portals(bd);
    if (st == QN_OK) st = build_distances(m, bd->err);
    if (st == QN_OK) qn__mesh_islands(m);
    if (st == QN_OK) st = qn__boundary_build(m, &m->bnd, bd->err);
    return st;
}

qn_status qn_mesh_create(const qn_mesh_desc *desc, const qn_allocator *alloc, qn_mesh **out,
                         qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!desc || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    qn_status st = check_counts(desc, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    qn_mesh *m = qn__calloc(&a, 1, sizeof *m);
    if (!m) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh)");
    m->alloc = a;
    m->quad_count = desc->quad_count;
    builder bd = {desc, m, err, NULL, 0, 0};
    st = build_all(&bd);
    qn__free(&a, bd.cands, bd.capcand * sizeof(cand));
    if (st != QN_OK) {
        if (err) err->code = st;
        qn_mesh_destroy(m);
        return st;
    }
    m->bytes = sizeof *m + mesh_array_bytes(m) + sizeof *m->bnd + m->bnd->bytes;
    *out = m;
    return QN_OK;
}
