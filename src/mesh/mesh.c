/*
** mesh.c: building and validating a mesh of convex quads, computing the
** portals between them (T-junctions included), and the spatial index used
** for point location.
**
** Build order: check inputs -> per-quad geometry (winding, convexity, area,
** local tolerance) -> bucket grid -> overlap test and shared edge segments
** (pair.c) -> explicit links checked against those segments -> portal
** tables -> islands. Any failure frees all.
*/
#include "build.h"

#include <float.h>
#include <stdlib.h>

/* max and min of doubles that are never NaN here (no libm call). */
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }

/* ---- small helpers --------------------------------------------------- */

size_t qn__mesh_array_bytes(const qn_mesh *m) {
    size_t q = m->quad_count, p = m->portal_count;
    size_t cells = (size_t)m->grid_w * m->grid_h;
    size_t ncl = m->cell_start ? m->cell_start[cells] : 0;
    size_t index = m->cell_off ? cells * sizeof(uint32_t) + ncl * sizeof(uint16_t)
                               : ncl * sizeof(uint32_t);
    return (m->planes ? q * sizeof(qn__planes) : 0) + (m->corners ? q * 4 * sizeof(qn_vec2) : 0) +
           (m->rects ? q * sizeof(qn_rect) : 0) + (m->cost ? q * sizeof(float) : 0) +
           q * (1 + (m->island ? sizeof(uint32_t) : 0)) +
           p * (sizeof(qn__pq) + (m->pgeo ? 2 + sizeof(qn__pgeo) : 0)) +
           (q + 1) * sizeof(uint32_t) + 2 * p * sizeof(uint32_t) +
           (m->cell_start ? (cells + 1) * sizeof(uint32_t) : 0) + index;
}

/* Frees the point-location index (the buckets), which may be absent. */
static void free_index(qn_mesh *m) {
    const qn_allocator *a = &m->alloc;
    size_t cells = (size_t)m->grid_w * m->grid_h;
    if (m->cell_start) qn__free(a, m->cell_list, m->cell_start[cells] * sizeof(uint32_t));
    if (m->cell_start) qn__free(a, m->cell_off, m->cell_start[cells] * sizeof(uint16_t));
    qn__free(a, m->cell_base, cells * sizeof(uint32_t));
    qn__free(a, m->cell_start, (cells + 1) * sizeof(uint32_t));
    m->cell_list = m->cell_base = m->cell_start = NULL;
    m->cell_off = NULL;
}

void qn__mesh_drop_lookup(qn_mesh *m) {
    free_index(m);
    qn__free(&m->alloc, m->island, (size_t)m->quad_count * sizeof(uint32_t));
    m->island = NULL;
    m->island_count = 0;
    m->bytes = sizeof *m + qn__mesh_array_bytes(m);
}

static void mesh_free_arrays(qn_mesh *m) {
    const qn_allocator *a = &m->alloc;
    size_t q = m->quad_count, p = m->portal_count;
    qn__free(a, m->corners, q * 4 * sizeof(qn_vec2));
    qn__free(a, m->planes, q * sizeof(qn__planes));
    qn__free(a, m->rects, q * sizeof(qn_rect));
    qn__free(a, m->cost, q * sizeof(float));
    qn__free(a, m->blocked, q);
    qn__free(a, m->island, q * sizeof(uint32_t));
    qn__free(a, m->pq, p * sizeof(qn__pq));
    qn__free(a, m->pedge, 2 * p);
    qn__free(a, m->pgeo, p * sizeof(qn__pgeo));
    qn__free(a, m->qp_list, 2 * p * sizeof(uint32_t));
    qn__free(a, m->qp_start, (q + 1) * sizeof(uint32_t));
    free_index(m);
}

void qn_mesh_destroy(qn_mesh *mesh) {
    if (!mesh) return;
    qn_allocator a = mesh->alloc;
    qn__boundary_free(&a, atomic_load(&mesh->bnd));
    qn__free(&a, atomic_load(&mesh->segs), ((size_t)mesh->portal_count + 1) * sizeof(qn__pgeo));
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

/* Signed turn at each corner of c[] is >= -tol (convex for its winding
** sign): the corner lies at most eps inside the line of its neighbours. */
static bool corners_convex(const qn_vec2 *c, double sign, double eps) {
    for (int i = 0; i < 4; i++) {
        qn_vec2 a = c[i], b = c[(i + 1) & 3], n = c[(i + 2) & 3];
        double tol = eps * dist_d(a, n);
        if (sign * cross_d(a, b, n) < -tol) return false;
    }
    return true;
}

/* An axis-aligned rectangle wound counter-clockwise passes the convexity
** tests (each corner's turn is +width*height) and its edges are exactly
** as long as their coordinate differences: when those and the area pass,
** check_quad_shape would find nothing. Anything else takes the full tests. */
static bool rect_shape_ok(const qn_vec2 *c, double eps) {
    double w = (double)c[1].x - (double)c[0].x, h = (double)c[2].y - (double)c[1].y;
    if (w <= eps || h <= eps) return false;
    double area2 = 0.0;
    for (int i = 0; i < 4; i++)
        area2 += (double)c[i].x * (double)c[(i + 1) & 3].y - (double)c[(i + 1) & 3].x * (double)c[i].y;
    return fabs(area2) > eps * dmax(w, h);
}

/* Zero lengths, zero area, winding and convexity, each against the quad's
** own tolerance: a corner may sit up to that far inside the line of its
** neighbours (a T-junction vertex rounded a hair inwards). */
static qn_status check_quad_shape(qn_mesh *m, uint32_t q, bool rect, double eps,
                                  qn_error *err) {
    const qn_vec2 *c = &m->corners[4 * (size_t)q];
    if (rect) { /* the same tests, less work: see rect_shape_ok */
        if (rect_shape_ok(c, eps)) return QN_OK;
    }
    double area2 = 0.0, longest = 0.0;
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
    if (area2 < 0 && corners_convex(c, -1.0, eps))
        return qn__fail(err, QN_E_WINDING, q,
                        "quad %u is wound clockwise (negative area); list its corners in the "
                        "other order",
                        q);
    if (area2 < 0 || !corners_convex(c, 1.0, eps))
        return qn__fail(err, QN_E_NONCONVEX_QUAD, q, "quad %u is not convex", q);
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

static qn_status build_quads(qn__builder *bd) {
    qn_mesh *m = bd->m;
    const qn_mesh_desc *d = bd->desc;
    qn_error *err = bd->err;
    for (uint32_t q = 0; q < d->quad_count; q++) {
        qn_status st = check_quad_fields(d, q, err);
        if (st != QN_OK) return st;
        for (int k = 0; k < 4; k++) {
            qn_vec2 v = d->vertices[d->quads[4 * (size_t)q + (size_t)k]];
            m->corners[4 * (size_t)q + (size_t)k] = v;
        }
        m->cost[q] = d->costs ? d->costs[q] : 1.0f;
        m->blocked[q] = d->blocked ? (d->blocked[q] != 0) : 0;
    }
    return qn__mesh_shapes(bd);
}

qn_status qn__mesh_shapes(qn__builder *bd) {
    qn_mesh *m = bd->m;
    qn_error *err = bd->err;
    /* One pass over the corners: each quad's tolerance and shape, the
    ** largest |coordinate| and the bounds; planes after, only for a mesh
    ** that is not all rectangles (a mesh of rectangles keeps none:
    ** qn__quad_planes derives them). */
    double maxabs = 1.0;
    bool rects = true;
    qn_rect b = {{FLT_MAX, FLT_MAX}, {-FLT_MAX, -FLT_MAX}};
    for (uint32_t q = 0; q < m->quad_count; q++) {
        const qn_vec2 *c = &m->corners[4 * (size_t)q];
        bool rect = qn__axis_rect(c);
        /* A rectangle's corners take their coordinates from c[0] and c[2]. */
        const int step = rect ? 2 : 1;
        double qmax = 0.0;
        for (int k = 0; k < 4; k += step) { /* finite (checked first): plain compares */
            qn_vec2 v = c[k];
            qmax = dmax(qmax, dmax(fabs((double)v.x), fabs((double)v.y)));
            b.min.x = v.x < b.min.x ? v.x : b.min.x;
            b.min.y = v.y < b.min.y ? v.y : b.min.y;
            b.max.x = v.x > b.max.x ? v.x : b.max.x;
            b.max.y = v.y > b.max.y ? v.y : b.max.y;
        }
        double t = qn__tol_at(qmax); /* the quad's own tolerance */
        if (bd->tol) bd->tol[q] = (float)t;
        rects = rects && rect;
        maxabs = dmax(maxabs, qmax);
        qn_status st = check_quad_shape(m, q, rect, t, err);
        if (st != QN_OK) return st;
    }
    /* Queries (point location, portal widths) use one tolerance: a few
    ** float ulps of the largest coordinate. Building uses local ones. */
    m->eps = (float)dmax(1e-6, 8.0 * (double)FLT_EPSILON * maxabs);
    m->bounds = b;
    /* Lengths inside the level are off by parts of its extent, not of its
    ** largest coordinate (eps_ext). */
    double ext = dmax((double)b.max.x - (double)b.min.x, (double)b.max.y - (double)b.min.y);
    m->eps_ext = (float)dmax(1e-6, 8.0 * (double)FLT_EPSILON * ext);
    if (rects) { /* boxes now, and no corners */
        m->rects = qn__alloc(&m->alloc, (size_t)m->quad_count * sizeof(qn_rect));
        if (!m->rects) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quads)");
        for (uint32_t q = 0; q < m->quad_count; q++)
            m->rects[q] = (qn_rect){m->corners[4 * (size_t)q], m->corners[4 * (size_t)q + 2]};
        /* qn__corners gives them back from the boxes, the same bits. */
        qn__free(&m->alloc, m->corners, (size_t)m->quad_count * 4 * sizeof(qn_vec2));
        m->corners = NULL;
        return QN_OK;
    }
    m->planes = qn__alloc(&m->alloc, (size_t)m->quad_count * sizeof(qn__planes));
    if (!m->planes) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quads)");
    for (uint32_t q = 0; q < m->quad_count; q++) quad_planes(m, q);
    return QN_OK;
}

/* ---- bucket grid ----------------------------------------------------- */

/* The box of every point the tolerant inside test accepts for quad q: the
** quad with each edge pushed out by eps. At a sharp corner that reaches
** eps / sin(angle / 2) past the vertex, further than eps. */
static qn_rect quad_box(const qn_mesh *m, uint32_t q) {
    qn_vec2 c_at[4];
    const qn_vec2 *c = qn__corners(m, q, c_at);
    double eps = (double)m->eps;
    if (!m->planes) {
        /* A rectangle: the general construction below pushes each corner
        ** out by exactly eps along both axes (perpendicular unit normals,
        ** det 1), so the box is its own, eps wider on every side, rounded
        ** the same way. */
        return (qn_rect){{(float)((double)c[0].x - eps), (float)((double)c[0].y - eps)},
                         {(float)((double)c[2].x + eps), (float)((double)c[2].y + eps)}};
    }
    qn__planes tmp;
    const qn__planes *pl = qn__quad_planes(m, q, &tmp);
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
        /* finite (checked first): plain compares, not fminf calls */
        float x0 = (float)(x + dmin(ox, -eps)), y0 = (float)(y + dmin(oy, -eps));
        float x1 = (float)(x + dmax(ox, eps)), y1 = (float)(y + dmax(oy, eps));
        r.min.x = x0 < r.min.x ? x0 : r.min.x;
        r.min.y = y0 < r.min.y ? y0 : r.min.y;
        r.max.x = x1 > r.max.x ? x1 : r.max.x;
        r.max.y = y1 > r.max.y ? y1 : r.max.y;
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

/* Cell size twice the mean quad size, so a bucket holds a few quads (and
** each quad is listed in few buckets: about 2.8 on a 4096 x 4096 game map,
** 5 with cells of the mean quad size, for a third slower lookups). */
static void grid_dims(qn_mesh *m) {
    double w = (double)m->bounds.max.x - (double)m->bounds.min.x;
    double h = (double)m->bounds.max.y - (double)m->bounds.min.y;
    double n = (double)m->quad_count;
    double cs = 2.0 * sqrt(w * h / n);
    if (!(cs > 0)) cs = dmax(w, h);
    double gw = ceil(w / cs), gh = ceil(h / cs);
    while (gw * gh > 2.0 * n + 16.0) {
        cs *= 1.25;
        gw = ceil(w / cs);
        gh = ceil(h / cs);
    }
    m->grid_w = (uint32_t)dmax(1.0, gw);
    m->grid_h = (uint32_t)dmax(1.0, gh);
    m->grid_cell = (float)cs;
    m->grid_inv_cell = (float)(1.0 / cs);
    m->grid_origin = m->bounds.min;
}

/* x range [lo, hi] of quad q's corners' polygon inside the strip ya <= y <=
** yb; false when the strip misses it. */
static bool strip_range(const qn_vec2 *c, double ya, double yb, double *lo, double *hi) {
    bool any = false;
    for (int i = 0; i < 4; i++) {
        double x0 = (double)c[i].x, y0 = (double)c[i].y;
        double x1 = (double)c[(i + 1) & 3].x, y1 = (double)c[(i + 1) & 3].y;
        double e0 = dmax(dmin(y0, y1), ya), e1 = dmin(dmax(y0, y1), yb);
        if (e0 > e1) continue;
        double xa = x0, xb = x1;
        if (y1 != y0) {
            xa = x0 + (e0 - y0) * (x1 - x0) / (y1 - y0);
            xb = x0 + (e1 - y0) * (x1 - x0) / (y1 - y0);
        }
        *lo = any ? dmin(*lo, dmin(xa, xb)) : dmin(xa, xb);
        *hi = any ? dmax(*hi, dmax(xa, xb)) : dmax(xa, xb);
        any = true;
    }
    return any;
}

/* How far the tolerant region of q reaches past its corners' box (see
** quad_box, given as r): at least eps, more at sharp corners. */
static double quad_reach(const qn_mesh *m, uint32_t q, qn_rect r) {
    qn_vec2 c_at[4];
    const qn_vec2 *c = qn__corners(m, q, c_at);
    double reach = (double)m->eps;
    double minx = (double)c[0].x, maxx = minx, miny = (double)c[0].y, maxy = miny;
    for (int k = 1; k < 4; k++) {
        minx = dmin(minx, (double)c[k].x), maxx = dmax(maxx, (double)c[k].x);
        miny = dmin(miny, (double)c[k].y), maxy = dmax(maxy, (double)c[k].y);
    }
    reach = dmax(reach, dmax(minx - (double)r.min.x, (double)r.max.x - maxx));
    return dmax(reach, dmax(miny - (double)r.min.y, (double)r.max.y - maxy));
}

/* Adds quad q to the buckets its tolerant region meets, row by row (count
** only when fill is NULL); returns how many. Conservative by the reach. */
static uint32_t grid_add(qn_mesh *m, uint32_t q, uint32_t *fill) {
    qn_vec2 c_at[4];
    const qn_vec2 *c = qn__corners(m, q, c_at);
    uint32_t b[4], n = 0;
    qn_rect r = quad_box(m, q);
    box_cells(m, r, b);
    if (!m->planes) {
        /* A rectangle (no planes kept): every row of its tolerant box
        ** meets it, from its left side to its right, so the rows below
        ** would list exactly the box's buckets. */
        for (uint32_t y = b[1]; y <= b[3]; y++)
            for (uint32_t x = b[0]; x <= b[2]; x++) {
                size_t cell = (size_t)y * m->grid_w + x;
                if (fill) m->cell_list[m->cell_start[cell] + fill[cell]++] = q;
                else m->cell_start[cell + 1]++;
                n++;
            }
        return n;
    }
    double g = quad_reach(m, q, r), cs = (double)m->grid_cell;
    double oy = (double)m->grid_origin.y;
    for (uint32_t y = b[1]; y <= b[3]; y++) {
        double ya = y == 0 ? -DBL_MAX : oy + (double)y * cs - g;
        double yb = y + 1 == m->grid_h ? DBL_MAX : oy + (double)(y + 1) * cs + g;
        double lo = 0, hi = 0;
        if (!strip_range(c, ya, yb, &lo, &hi)) continue;
        uint32_t x0 = cell_coord((float)(lo - g), m->grid_origin.x, m->grid_inv_cell, m->grid_w);
        uint32_t x1 = cell_coord((float)(hi + g), m->grid_origin.x, m->grid_inv_cell, m->grid_w);
        for (uint32_t x = x0 > b[0] ? x0 : b[0]; x <= x1 && x <= b[2]; x++) {
            size_t cell = (size_t)y * m->grid_w + x;
            if (fill) m->cell_list[m->cell_start[cell] + fill[cell]++] = q;
            else m->cell_start[cell + 1]++;
            n++;
        }
    }
    return n;
}

static qn_status build_grid(qn_mesh *m, qn_error *err) {
    grid_dims(m);
    size_t cells = (size_t)m->grid_w * m->grid_h;
    m->cell_start = qn__calloc(&m->alloc, cells + 1, sizeof(uint32_t));
    if (!m->cell_start) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh grid)");
    uint64_t total = 0;
    for (uint32_t q = 0; q < m->quad_count; q++) total += grid_add(m, q, NULL);
    if (total > (uint64_t)UINT32_MAX / 2)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "quads too large for the spatial index");
    for (size_t i = 0; i < cells; i++) m->cell_start[i + 1] += m->cell_start[i];
    m->cell_list = qn__alloc(&m->alloc, (size_t)total * sizeof(uint32_t));
    uint32_t *fill = qn__calloc(&m->alloc, cells, sizeof(uint32_t));
    if (!m->cell_list || !fill) {
        qn__free(&m->alloc, fill, cells * sizeof(uint32_t));
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh grid)");
    }
    for (uint32_t q = 0; q < m->quad_count; q++) grid_add(m, q, fill);
    qn__free(&m->alloc, fill, cells * sizeof(uint32_t));
    return QN_OK;
}

/* ---- explicit links -------------------------------------------------- */

static int cmp_cand(const void *x, const void *y) {
    const qn__cand *a = x, *b = y;
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

static qn_status check_link(qn__builder *bd, uint32_t i, link_ix *norm) {
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
    qn__cand key = {norm->a, norm->b, 0, 0, {0, 0}, {0, 0}};
    if (bd->ncand == 0 || !bsearch(&key, bd->cands, bd->ncand, sizeof(qn__cand), cmp_cand))
        return qn__fail(bd->err, QN_E_LINK_NO_EDGE, i,
                        "link %u: quads %u and %u share no edge segment", i, l.a, l.b);
    return QN_OK;
}

static qn_status find_duplicate(qn__builder *bd, link_ix *sorted, uint32_t nl) {
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
static qn_status apply_links(qn__builder *bd) {
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

qn_status qn__mesh_portal_alloc(qn_mesh *m, uint32_t count, qn_error *err) {
    m->portal_count = count;
    m->pq = qn__alloc(&m->alloc, (size_t)count * sizeof(qn__pq));
    m->pedge = qn__alloc(&m->alloc, 2 * (size_t)count);
    m->pgeo = qn__alloc(&m->alloc, (size_t)count * sizeof(qn__pgeo));
    if (count && (!m->pq || !m->pedge || !m->pgeo))
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    return QN_OK;
}

/* Is the portal between rectangles a and b, with edges ea, eb, segment
** p0 -> p1 and width w, the one their boxes give (qn__portal_derive), bit
** for bit? Then the mesh need not keep it (qn__portal_at derives it). */
static bool derives(const qn_mesh *m, uint32_t a, uint32_t b, uint8_t ea, uint8_t eb, qn_vec2 p0,
                    qn_vec2 p1, float w) {
    qn__portal p = {{a, b}, {0, 0}, {0, 0}, 0.0f, {0, 0}};
    qn__portal_derive(m, &p);
    return qn__same_bits(p.p0.x, p0.x) && qn__same_bits(p.p0.y, p0.y) &&
           qn__same_bits(p.p1.x, p1.x) && qn__same_bits(p.p1.y, p1.y) &&
           qn__same_bits(p.width, w) && p.edge[0] == ea && p.edge[1] == eb;
}

/* derives for candidate c, with the width qn__mesh_portal_lists would give. */
static bool cand_derived(const qn_mesh *m, const qn__cand *c) {
    return derives(m, c->a, c->b, c->ea, c->eb, c->p0, c->p1, qn__len(qn__sub(c->p1, c->p0)));
}

qn_status qn__mesh_portals(qn__builder *bd) {
    qn_mesh *m = bd->m;
    uint32_t n = bd->ncand;
    /* A mesh of rectangles whose portals are all what their boxes give
    ** keeps no edges or segments (qn__portal_at derives them), so none are
    ** made; else they are, and qn__mesh_lean may still drop them. */
    bool derived = m->rects != NULL;
    for (uint32_t i = 0; derived && i < n; i++)
        derived = cand_derived(m, &bd->cands[i]);
    qn_status st;
    if (derived) {
        m->portal_count = n;
        m->pq = qn__alloc(&m->alloc, (size_t)n * sizeof(qn__pq));
        st =
            n && !m->pq ? qn__fail(bd->err, QN_E_NOMEM, QN_NONE, "out of memory (portals)") : QN_OK;
    } else {
        st = qn__mesh_portal_alloc(m, n, bd->err);
    }
    if (st != QN_OK) return st;
    for (uint32_t i = 0; i < n; i++) {
        const qn__cand *c = &bd->cands[i];
        m->pq[i] = (qn__pq){{c->a, c->b}};
        if (derived) continue;
        m->pedge[2 * (size_t)i] = c->ea;
        m->pedge[2 * (size_t)i + 1] = c->eb;
        m->pgeo[i].p0 = c->p0;
        m->pgeo[i].p1 = c->p1;
    }
    /* The candidates made by pairing go now, before the lists are made
    ** (given ones, capcand 0, are the caller's). */
    if (bd->capcand) {
        qn__free(&m->alloc, bd->cands, bd->capcand * sizeof(qn__cand));
        bd->cands = NULL;
        bd->ncand = bd->capcand = 0;
    }
    return qn__mesh_portal_lists(m, bd->err);
}

qn_status qn__mesh_portal_lists(qn_mesh *m, qn_error *err) {
    m->qp_start = qn__calloc(&m->alloc, (size_t)m->quad_count + 1, sizeof(uint32_t));
    if (!m->qp_start) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    for (uint32_t i = 0; i < m->portal_count; i++) {
        if (m->pgeo) {
            qn__pgeo *g = &m->pgeo[i];
            g->width = qn__len(qn__sub(g->p1, g->p0));
        }
        qn__portal_tally(m, i);
    }
    return qn__mesh_portal_fill(m, err);
}

qn_status qn__mesh_portal_fill(qn_mesh *m, qn_error *err) {
    m->qp_list = qn__alloc(&m->alloc, 2 * (size_t)m->portal_count * sizeof(uint32_t));
    if (!m->qp_list) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (portals)");
    /* qp_start[q + 1] becomes quad q's start, then its cursor while the
    ** lists fill, which leaves it at q + 1's start: no cursor array. */
    uint32_t run = 0;
    for (uint32_t q = 0; q < m->quad_count; q++) {
        uint32_t k = m->qp_start[q + 1];
        m->qp_start[q + 1] = run;
        run += k;
    }
    /* The first quads come in order, the second ones scattered: their
    ** cursors are fetched ahead, and the list slots they name. */
    uint32_t np = m->portal_count, ahead = QN__FETCH_AHEAD, half = QN__FETCH_AHEAD / 2;
    for (uint32_t i = 0; i < np; i++) {
        if (i + ahead < np) QN__PREFETCH(&m->qp_start[m->pq[i + ahead].q[1] + 1]);
        if (i + half < np) QN__PREFETCH(&m->qp_list[m->qp_start[m->pq[i + half].q[1] + 1]]);
        const qn__pq *p = &m->pq[i];
        m->qp_list[m->qp_start[p->q[0] + 1]++] = i;
        m->qp_list[m->qp_start[p->q[1] + 1]++] = i;
    }
    return QN_OK;
}

/* Bucket lists of 16-bit offsets from each bucket's first quad, when every
** list spans less than 65,536 (they are increasing); else as they are. */
static bool lean_buckets(qn_mesh *m) {
    size_t cells = (size_t)m->grid_w * m->grid_h, n = m->cell_start[cells];
    for (size_t c = 0; c < cells; c++) {
        uint32_t s = m->cell_start[c], e = m->cell_start[c + 1];
        if (e > s && m->cell_list[e - 1] - m->cell_list[s] > UINT16_MAX) return true;
    }
    /* (cells and n are at least 1: a mesh has a quad, in some bucket) */
    uint32_t *base = qn__alloc(&m->alloc, cells * sizeof(uint32_t));
    uint16_t *off = qn__alloc(&m->alloc, n * sizeof(uint16_t));
    if (!base || !off) {
        qn__free(&m->alloc, base, cells * sizeof(uint32_t));
        qn__free(&m->alloc, off, n * sizeof(uint16_t));
        return false;
    }
    for (size_t c = 0; c < cells; c++) {
        uint32_t s = m->cell_start[c], e = m->cell_start[c + 1];
        base[c] = e > s ? m->cell_list[s] : 0;
        for (uint32_t i = s; i < e; i++) off[i] = (uint16_t)(m->cell_list[i] - base[c]);
    }
    qn__free(&m->alloc, m->cell_list, n * sizeof(uint32_t));
    m->cell_list = NULL;
    m->cell_base = base;
    m->cell_off = off;
    return true;
}

/* Costs of 1 need no array (the bits of 1.0f; qn__quad_cost). */
static void drop_unit_costs(qn_mesh *m) {
    bool ones = m->cost != NULL;
    for (uint32_t q = 0; ones && q < m->quad_count; q++) ones = qn__same_bits(m->cost[q], 1.0f);
    if (ones) {
        qn__free(&m->alloc, m->cost, (size_t)m->quad_count * sizeof(float));
        m->cost = NULL;
    }
}

qn_status qn__mesh_lean(qn_mesh *m, qn_error *err) {
    if (!lean_buckets(m)) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (buckets)");
    drop_unit_costs(m);
    if (!m->rects) return QN_OK;
    /* Portals given by their quads' rectangles need no segment. */
    bool derived = m->pgeo != NULL;
    for (uint32_t e = 0; derived && e < m->portal_count; e++) {
        const qn__pgeo *g = &m->pgeo[e];
        derived = derives(m, m->pq[e].q[0], m->pq[e].q[1], m->pedge[2 * (size_t)e],
                          m->pedge[2 * (size_t)e + 1], g->p0, g->p1, g->width);
    }
    if (derived) {
        qn__free(&m->alloc, m->pgeo, (size_t)m->portal_count * sizeof(qn__pgeo));
        qn__free(&m->alloc, m->pedge, 2 * (size_t)m->portal_count);
        m->pgeo = NULL;
        m->pedge = NULL;
    }
    qn__free(&m->alloc, m->corners, (size_t)m->quad_count * 4 * sizeof(qn_vec2));
    m->corners = NULL;
    return QN_OK;
}

/* ---- islands ---------------------------------------------------------- */

void qn__mesh_islands(qn_mesh *m) {
    qn__islands_begin(m);
    for (uint32_t i = 0; i < m->portal_count; i++)
        qn__islands_join(m, m->pq[i].q[0], m->pq[i].q[1]);
    qn__islands_end(m);
}

void qn__islands_end(qn_mesh *m) {
    uint32_t *id = m->island;
    for (uint32_t q = 0; q < m->quad_count; q++) id[q] = qn__uf_find(id, q);
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

qn_status qn__mesh_alloc_quads(qn_mesh *m, qn_error *err) {
    size_t q = m->quad_count;
    m->corners = qn__alloc(&m->alloc, q * 4 * sizeof(qn_vec2));
    m->cost = qn__alloc(&m->alloc, q * sizeof(float));
    m->blocked = qn__alloc(&m->alloc, q);
    m->island = qn__alloc(&m->alloc, q * sizeof(uint32_t));
    if (!m->corners || !m->cost || !m->blocked || !m->island)
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (quads)");
    return QN_OK;
}

static qn_status build_all(qn__builder *bd) {
    qn_mesh *m = bd->m;
    qn_status st = qn__mesh_alloc_quads(m, bd->err);
    if (st == QN_OK) st = check_vertices(bd->desc, bd->err);
    if (st == QN_OK) st = build_quads(bd);
    if (st == QN_OK) drop_unit_costs(m);      /* now: not held while the edges pair */
    if (st == QN_OK && m->rects && bd->tol) { /* a box gives its tolerance (pair.c) */
        qn__free(&m->alloc, bd->tol, (size_t)m->quad_count * sizeof(float));
        bd->tol = NULL;
    }
    if (st == QN_OK && bd->release) {
        bd->release(bd->release_ud);
        bd->release = NULL;
    }
    if (st == QN_OK) st = build_grid(m, bd->err);
    if (st == QN_OK && !bd->cands) st = qn__mesh_pairs(bd); /* else given (paired) */
    if (st == QN_OK && bd->desc->has_links) st = apply_links(bd);
    if (st == QN_OK) st = qn__mesh_portals(bd);
    if (st == QN_OK) qn__mesh_islands(m);
    return st;
}

static qn_status create(const qn_mesh_desc *desc, qn__cand *cands, uint32_t ncand,
                        void (*release)(void *ud), void *ud, const qn_allocator *alloc,
                        qn_mesh **out, qn_error *err);

qn_status qn_mesh_create(const qn_mesh_desc *desc, const qn_allocator *alloc, qn_mesh **out,
                         qn_error *err) {
    return create(desc, NULL, 0, NULL, NULL, alloc, out, err);
}

qn_status qn__mesh_create_paired(const qn_mesh_desc *desc, qn__cand *cands, uint32_t ncand,
                                 const qn_allocator *alloc, qn_mesh **out, qn_error *err) {
    if (!cands && ncand) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL candidates");
    static qn__cand none;
    return create(desc, cands ? cands : &none, ncand, NULL, NULL, alloc, out, err);
}

qn_status qn__mesh_create_releasing(const qn_mesh_desc *desc, qn__cand *cands, uint32_t ncand,
                                    void (*release)(void *ud), void *ud, const qn_allocator *alloc,
                                    qn_mesh **out, qn_error *err) {
    if (!cands && ncand) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL candidates");
    return create(desc, cands, ncand, release, ud, alloc, out, err);
}

/* cands NULL: pair edges; else the given portal candidates (not freed).
** release(ud), when not NULL: once the quads are copied (build_all). */
static qn_status create(const qn_mesh_desc *desc, qn__cand *cands, uint32_t ncand,
                        void (*release)(void *ud), void *ud, const qn_allocator *alloc,
                        qn_mesh **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!desc || !out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    if (cands && desc->has_links)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "links with given portals");
    qn_status st = check_counts(desc, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    qn_mesh *m = qn__calloc(&a, 1, sizeof *m);
    if (!m) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh)");
    m->alloc = a;
    m->quad_count = desc->quad_count;
    qn__builder bd = {desc,  m,     err, qn__alloc(&a, (size_t)desc->quad_count * sizeof(float)),
                      cands, ncand, 0,   release,
                      ud};
    st = bd.tol ? build_all(&bd) : qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (mesh)");
    qn__free(&a, bd.tol, (size_t)desc->quad_count * sizeof(float));
    if (!cands) qn__free(&a, bd.cands, bd.capcand * sizeof(qn__cand));
    if (st == QN_OK) st = qn__mesh_lean(m, err);
    if (st != QN_OK) {
        if (err) err->code = st;
        qn_mesh_destroy(m);
        return st;
    }
    m->bytes = sizeof *m + qn__mesh_array_bytes(m);
    *out = m;
    return QN_OK;
}
