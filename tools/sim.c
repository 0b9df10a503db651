/*
** sim.c: the quality harness (see sim.h).
*/
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

uint64_t qn_rand_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double qn_rand_unit(uint64_t *state) { return (double)(qn_rand_next(state) >> 11) * 0x1.0p-53; }

/* ---- quad world ------------------------------------------------------ */

static qn_status quad_sample(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir) {
    const qn_sim_quad_ctx *c = ctx;
    return qn_field_sample(c->field, p, hint, dir);
}

static bool quad_move_ok(void *ctx, qn_vec2 a, qn_vec2 b, uint32_t hint, qn_vec2 *hit) {
    const qn_sim_quad_ctx *c = ctx;
    return qn_mesh_segment_inside(c->mesh, a, b, hint, hit) == QN_OK;
}

static double quad_reference(void *ctx, qn_vec2 p) {
    const qn_sim_quad_ctx *c = ctx;
    return (double)qn_field_cost_at(c->field, p, QN_NONE);
}

static bool quad_reachable(const qn_sim_quad_ctx *c, uint32_t q) {
    return !qn_mesh_quad_blocked(c->mesh, q) && isfinite(qn_field_quad_cost(c->field, q));
}

typedef struct dv {
    double x, y;
} dv;

static dv to_dv(qn_vec2 v) {
    dv r = {(double)v.x, (double)v.y};
    return r;
}

static double tri_area(dv a, dv b, dv c) {
    return fabs((b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y));
}

/* Uniform point in quad q: triangle (0,1,2) or (0,2,3) by area using v, then
** a uniform point in it from s, t. */
static qn_vec2 point_in_quad(const qn_mesh *m, uint32_t q, double v, double s, double t) {
    qn_vec2 k[4];
    qn_mesh_quad_corners(m, q, k);
    dv a = to_dv(k[0]), b = to_dv(k[1]), c = to_dv(k[2]), d = to_dv(k[3]);
    double a1 = tri_area(a, b, c), a2 = tri_area(a, c, d);
    if (v * (a1 + a2) >= a1) {
        b = c;
        c = d;
    }
    if (s + t > 1.0) {
        s = 1.0 - s;
        t = 1.0 - t;
    }
    qn_vec2 p = {(float)(a.x + s * (b.x - a.x) + t * (c.x - a.x)),
                 (float)(a.y + s * (b.y - a.y) + t * (c.y - a.y))};
    return p;
}

/* Area-weighted pick of a reachable quad; where u1 fell inside that quad's
** share is itself uniform and picks the triangle. */
static bool quad_random_start(void *ctx, double u1, double u2, double u3, qn_vec2 *p) {
    const qn_sim_quad_ctx *c = ctx;
    uint32_t n = qn_mesh_quad_count(c->mesh);
    double pick = u1 * c->total_area, acc = 0.0;
    uint32_t last = QN_NONE;
    for (uint32_t q = 0; q < n; q++) {
        if (!quad_reachable(c, q)) continue;
        double area = (double)qn_mesh_quad_area(c->mesh, q);
        last = q;
        if (acc + area <= pick) {
            acc += area;
            continue;
        }
        *p = point_in_quad(c->mesh, q, (pick - acc) / area, u2, u3);
        return true;
    }
    if (last == QN_NONE) return false;
    *p = point_in_quad(c->mesh, last, 0.5, u2, u3); /* rounding left pick past the end */
    return true;
}

void qn_sim_world_quad(qn_sim_world *w, qn_sim_quad_ctx *ctx, const qn_field *field,
                       qn_vec2 goal) {
    ctx->field = field;
    ctx->mesh = qn_field_mesh(field);
    ctx->total_area = 0.0;
    for (uint32_t q = 0; q < qn_mesh_quad_count(ctx->mesh); q++)
        if (quad_reachable(ctx, q)) ctx->total_area += (double)qn_mesh_quad_area(ctx->mesh, q);
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->sample = quad_sample;
    w->move_ok = quad_move_ok;
    w->reference = quad_reference;
    w->random_start = quad_random_start;
    w->goal = goal;
}

/* ---- the run ----------------------------------------------------------- */

typedef struct unit {
    qn_vec2 p;
    uint32_t hint;
    double walked, reference;
    uint32_t budget;
    uint8_t active;
} unit;

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : (a > b);
}

static bool place_units(const qn_sim_world *w, const qn_sim_opts *o, unit *u, uint32_t n,
                        float step) {
    uint64_t rng = o->seed ^ 0x5eedull;
    for (uint32_t i = 0; i < n; i++) {
        qn_vec2 p;
        if (o->starts && o->start_count) p = o->starts[i % o->start_count];
        else {
            double u1 = qn_rand_unit(&rng), u2 = qn_rand_unit(&rng), u3 = qn_rand_unit(&rng);
            if (!w->random_start(w->ctx, u1, u2, u3, &p)) return false;
        }
        u[i].p = p;
        u[i].hint = QN_NONE;
        u[i].walked = 0.0;
        u[i].reference = w->reference(w->ctx, p);
        double ref = isfinite(u[i].reference) ? u[i].reference : 0.0;
        u[i].budget = (uint32_t)fmin(4e6, 4.0 * ref / (double)step + 200.0);
        u[i].active = 1;
    }
    return true;
}

/* One unit's step: sample, then move (clamped where the move would leave
** traversable space, which counts as a wall contact). Returns false when the
** unit is finished (arrived or lost). */
static bool step_unit(const qn_sim_world *w, unit *u, float step, float arrive,
                      qn_sim_result *r) {
    qn_vec2 dg = {w->goal.x - u->p.x, w->goal.y - u->p.y};
    double dist_goal = sqrt((double)dg.x * (double)dg.x + (double)dg.y * (double)dg.y);
    if (dist_goal <= (double)arrive) {
        u->walked += dist_goal;
        r->arrived++;
        return false;
    }
    qn_vec2 dir;
    double t0 = qn_tool_now();
    qn_status st = w->sample(w->ctx, u->p, &u->hint, &dir);
    r->sample_seconds += qn_tool_now() - t0;
    r->samples++;
    if (st == QN_AT_GOAL) {
        u->walked += dist_goal;
        r->arrived++;
        return false;
    }
    if (st != QN_OK) return false; /* lost: counted as stuck */
    qn_vec2 next = {u->p.x + dir.x * step, u->p.y + dir.y * step};
    qn_vec2 hit;
    if (!w->move_ok(w->ctx, u->p, next, u->hint, &hit)) {
        r->wall_contacts++;
        next = hit;
    }
    double dx = (double)next.x - (double)u->p.x, dy = (double)next.y - (double)u->p.y;
    u->walked += sqrt(dx * dx + dy * dy);
    u->p = next;
    return true;
}

qn_status qn_sim_run(const qn_sim_world *w, const qn_sim_opts *opts, qn_sim_result *out) {
    memset(out, 0, sizeof *out);
    qn_sim_opts o = *opts;
    uint32_t n = o.units ? o.units : 1000;
    float step = o.step > 0.0f ? o.step : 0.2f;
    float arrive = o.arrive > 0.0f ? o.arrive : step;
    unit *u = calloc(n, sizeof *u);
    double *stretch = calloc(n, sizeof *stretch);
    uint8_t *active = calloc(n, 1);
    qn_vec2 *pos = calloc(n, sizeof *pos);
    if (!u || !stretch || !active || !pos) {
        free(u), free(stretch), free(active), free(pos);
        return QN_E_NOMEM;
    }
    qn_status st = place_units(w, &o, u, n, step) ? QN_OK : QN_E_INVALID_ARG;
    out->units = n;
    uint32_t live = n;
    for (uint32_t s = 0; st == QN_OK && live > 0; s++) {
        for (uint32_t i = 0; i < n; i++) {
            if (!u[i].active) continue;
            uint32_t before = out->arrived;
            bool go = s < u[i].budget && step_unit(w, &u[i], step, arrive, out);
            if (!go) {
                u[i].active = 0;
                live--;
                if (out->arrived > before && u[i].reference > 0.0)
                    stretch[out->arrived - 1] = u[i].walked / u[i].reference;
                else if (out->arrived > before)
                    stretch[out->arrived - 1] = 1.0;
                if (out->arrived == before) out->stuck++;
            }
        }
        out->steps = s + 1;
        if (o.on_step) {
            for (uint32_t i = 0; i < n; i++) {
                pos[i] = u[i].p;
                active[i] = u[i].active;
            }
            o.on_step(o.on_step_ud, s, pos, active, n);
        }
    }
    if (out->arrived > 0) {
        double sum = 0.0;
        for (uint32_t i = 0; i < out->arrived; i++) sum += stretch[i];
        out->stretch_mean = sum / out->arrived;
        qsort(stretch, out->arrived, sizeof(double), cmp_double);
        uint32_t k = (uint32_t)ceil(0.95 * out->arrived);
        out->stretch_p95 = stretch[k > 0 ? k - 1 : 0];
    }
    free(u), free(stretch), free(active), free(pos);
    return st;
}
