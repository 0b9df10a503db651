/*
** sim.c: the quality harness (see sim.h).
*/
#include "sim.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

uint64_t qn_rand_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

qn_vec2 qn_sim_quad_centre(const qn_mesh *m, uint32_t q) {
    qn_vec2 k[4];
    qn_mesh_quad_corners(m, q, k);
    return (qn_vec2){0.25f * (k[0].x + k[1].x + k[2].x + k[3].x),
                     0.25f * (k[0].y + k[1].y + k[2].y + k[3].y)};
}

double qn_rand_unit(uint64_t *state) { return (double)(qn_rand_next(state) >> 11) * 0x1.0p-53; }

/* ---- quad world ------------------------------------------------------ */

static qn_status quad_sample(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir) {
    const qn_sim_quad_ctx *c = ctx;
    return qn_field_sample(c->field, p, hint, dir);
}

static qn_status quad_sample_ahead(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir,
                                   float *ahead) {
    const qn_sim_quad_ctx *c = ctx;
    return qn_field_sample_ahead(c->field, p, hint, dir, ahead);
}

static bool quad_move_ok(void *ctx, qn_vec2 a, qn_vec2 b, uint32_t hint, qn_vec2 *hit) {
    const qn_sim_quad_ctx *c = ctx;
    return qn_mesh_segment_inside(c->mesh, a, b, hint, hit) == QN_OK;
}

static double quad_reference(void *ctx, qn_vec2 p) {
    const qn_sim_quad_ctx *c = ctx;
    return (double)qn_field_cost_at(c->field, p, QN_NONE);
}

static bool quad_way_out(void *ctx, qn_vec2 p, qn_vec2 *target) {
    const qn_sim_quad_ctx *c = ctx;
    uint32_t q;
    return qn_field_way_out(c->field, p, &q, target) == QN_OK;
}

/* The open quads the field reaches (a quad_ok: ctx is the quad context). */
static bool quad_reachable(const void *ctx, uint32_t q) {
    const qn_sim_quad_ctx *c = ctx;
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

/* Which quads a world's units may start in. */
typedef bool (*quad_ok)(const void *ctx, uint32_t q);

/* The area of the quads of m that ok takes. */
static double ok_area(const qn_mesh *m, quad_ok ok, const void *ctx) {
    double total = 0.0;
    for (uint32_t q = 0; q < qn_mesh_quad_count(m); q++)
        if (ok(ctx, q)) total += (double)qn_mesh_quad_area(m, q);
    return total;
}

/* Area-weighted pick of a quad ok takes (of total area `total`); where u1
** fell inside that quad's share is itself uniform and picks the triangle. */
static bool area_pick(const qn_mesh *m, quad_ok ok, const void *ctx, double total, double u1,
                      double u2, double u3, qn_vec2 *p) {
    uint32_t n = qn_mesh_quad_count(m);
    double pick = u1 * total, acc = 0.0;
    uint32_t last = QN_NONE;
    for (uint32_t q = 0; q < n; q++) {
        if (!ok(ctx, q)) continue;
        double area = (double)qn_mesh_quad_area(m, q);
        last = q;
        if (acc + area <= pick) {
            acc += area;
            continue;
        }
        *p = point_in_quad(m, q, (pick - acc) / area, u2, u3);
        return true;
    }
    if (last == QN_NONE) return false;
    *p = point_in_quad(m, last, 0.5, u2, u3); /* rounding left pick past the end */
    return true;
}

static bool quad_random_start(void *ctx, double u1, double u2, double u3, qn_vec2 *p) {
    const qn_sim_quad_ctx *c = ctx;
    return area_pick(c->mesh, quad_reachable, c, c->total_area, u1, u2, u3, p);
}

void qn_sim_world_quad(qn_sim_world *w, qn_sim_quad_ctx *ctx, const qn_field *field,
                       qn_vec2 goal) {
    ctx->field = field;
    ctx->mesh = qn_field_mesh(field);
    ctx->total_area = ok_area(ctx->mesh, quad_reachable, ctx);
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->sample = quad_sample;
    w->sample_ahead = quad_sample_ahead;
    w->move_ok = quad_move_ok;
    w->reference = quad_reference;
    w->random_start = quad_random_start;
    w->way_out = quad_way_out;
    w->goal = goal;
}

/* ---- hierarchical world ------------------------------------------------- */

static qn_status hier_sample(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir) {
    const qn_sim_hier_ctx *c = ctx;
    return qn_hfield_sample(c->field, p, hint, dir);
}

static qn_status hier_sample_ahead(void *ctx, qn_vec2 p, uint32_t *hint, qn_vec2 *dir,
                                   float *ahead) {
    const qn_sim_hier_ctx *c = ctx;
    return qn_hfield_sample_ahead(c->field, p, hint, dir, ahead);
}

static bool hier_move_ok(void *ctx, qn_vec2 a, qn_vec2 b, uint32_t hint, qn_vec2 *hit) {
    const qn_sim_hier_ctx *c = ctx;
    return qn_mesh_segment_inside(c->mesh, a, b, hint, hit) == QN_OK;
}

static double hier_reference(void *ctx, qn_vec2 p) {
    const qn_sim_hier_ctx *c = ctx;
    return (double)qn_hfield_cost_at(c->field, p, QN_NONE);
}

/* A unit on blocked ground heads for the nearest open quad: the nearest
** point of it, a hundredth in toward its middle (a point on the edge of a
** blocked quad is located in it when its index is the lower). */
static bool hier_way_out(void *ctx, qn_vec2 p, qn_vec2 *target) {
    const qn_sim_hier_ctx *c = ctx;
    uint32_t q;
    qn_vec2 at;
    if (qn_mesh_nearest(c->mesh, p, true, &q, &at) != QN_OK) return false;
    qn_vec2 mid = qn_sim_quad_centre(c->mesh, q);
    double dx = (double)mid.x - (double)at.x, dy = (double)mid.y - (double)at.y;
    double d = sqrt(dx * dx + dy * dy), in = d > 0.0 ? fmin(0.01, 0.5 * d) / d : 0.0;
    *target = (qn_vec2){(float)((double)at.x + dx * in), (float)((double)at.y + dy * in)};
    return true;
}

/* The open quads of the goal's island. */
static bool hier_open(const void *ctx, uint32_t q) {
    const qn_sim_hier_ctx *c = ctx;
    return !qn_mesh_quad_blocked(c->mesh, q) && qn_mesh_island(c->mesh, q) == c->island;
}

static bool hier_random_start(void *ctx, double u1, double u2, double u3, qn_vec2 *p) {
    const qn_sim_hier_ctx *c = ctx;
    uint64_t rng =
        (uint64_t)(u1 * 0x1.0p53) ^ ((uint64_t)(u2 * 0x1.0p32) << 21) ^ (uint64_t)(u3 * 0x1.0p40);
    for (int tries = 0; tries < 64; tries++) {
        if (!area_pick(c->mesh, hier_open, c, c->total_area, u1, u2, u3, p)) return false;
        if (isfinite(qn_hfield_cost_at(c->field, *p, QN_NONE))) return true;
        u1 = qn_rand_unit(&rng), u2 = qn_rand_unit(&rng), u3 = qn_rand_unit(&rng);
    }
    return false;
}

void qn_sim_world_hier(qn_sim_world *w, qn_sim_hier_ctx *ctx, const qn_hfield *field,
                       const qn_mesh *mesh, qn_vec2 goal) {
    ctx->field = field;
    ctx->mesh = mesh;
    ctx->island = QN_NONE;
    ctx->total_area = 0.0;
    uint32_t gq;
    if (qn_mesh_locate(mesh, goal, QN_NONE, &gq) == QN_OK) ctx->island = qn_mesh_island(mesh, gq);
    if (ctx->island != QN_NONE) ctx->total_area = ok_area(mesh, hier_open, ctx);
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->sample = hier_sample;
    w->sample_ahead = hier_sample_ahead;
    w->move_ok = hier_move_ok;
    w->reference = hier_reference;
    w->random_start = hier_random_start;
    w->way_out = hier_way_out;
    w->goal = goal;
}

/* ---- the run ----------------------------------------------------------- */

enum { UNIT_ACTIVE = 1, UNIT_ARRIVED = 2, UNIT_LOST = 3, UNIT_OUT_OF_STEPS = 4 };

typedef struct unit {
    qn_vec2 p;
    uint32_t hint;
    double walked, reference;
    uint32_t budget;
    uint8_t state;
    /* This step's sample, taken with the others' before any unit moves. */
    uint8_t due, sst;
    qn_vec2 sdir;
    float sahead;
} unit;

/* What one thread counts during one step; summed afterwards. */
typedef struct tally {
    uint64_t contacts, samples, escapes, timed;
    double sample_seconds; /* over the `timed` samples */
} tally;

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
        double cap = o->max_steps ? (double)o->max_steps : (double)UINT32_MAX;
        u[i].budget = (uint32_t)fmin(cap, 4.0 * ref / (double)step + 200.0);
        u[i].state = UNIT_ACTIVE;
    }
    return true;
}

static double dist(qn_vec2 a, qn_vec2 b) {
    double dx = (double)a.x - (double)b.x, dy = (double)a.y - (double)b.y;
    return sqrt(dx * dx + dy * dy);
}

/* Moves u toward dir by step, clamped where the move would leave
** traversable space (a wall contact). */
static void move_unit(const qn_sim_world *w, unit *u, qn_vec2 dir, float step, tally *t) {
    qn_vec2 next = {u->p.x + dir.x * step, u->p.y + dir.y * step};
    qn_vec2 hit;
    if (!w->move_ok(w->ctx, u->p, next, u->hint, &hit)) {
        t->contacts++;
        next = hit;
    }
    u->walked += dist(u->p, next);
    u->p = next;
}

/* A unit standing on blocked ground walks straight out toward the way out
** (through the blocked quad; not a wall contact). */
static bool escape(const qn_sim_world *w, unit *u, float step, tally *t) {
    qn_vec2 target;
    if (!w->way_out || !w->way_out(w->ctx, u->p, &target)) return false;
    double d = dist(u->p, target);
    float len = (float)fmin(d, (double)step);
    if (d <= 0.0) return false;
    qn_vec2 next = {u->p.x + (float)(((double)target.x - (double)u->p.x) / d) * len,
                    u->p.y + (float)(((double)target.y - (double)u->p.y) / d) * len};
    u->walked += dist(u->p, next);
    u->p = next;
    u->hint = QN_NONE;
    t->escapes++;
    return true;
}

/* One call of the world's sampler: with how far the unit may go before
** its way turns, where the world tells (else INFINITY). */
static qn_status sample_call(const qn_sim_world *w, unit *u, qn_vec2 *dir, float *ahead) {
    *ahead = INFINITY;
    if (w->sample_ahead) return w->sample_ahead(w->ctx, u->p, &u->hint, dir, ahead);
    return w->sample(w->ctx, u->p, &u->hint, dir);
}

/* Before a unit samples: does it stop here (arrived, or out of steps)? */
static bool unit_done(const qn_sim_world *w, unit *u, uint32_t s, float arrive) {
    double dg = dist(u->p, w->goal);
    if (dg <= (double)arrive) {
        u->walked += dg;
        u->state = UNIT_ARRIVED;
        return true;
    }
    if (s >= u->budget) {
        u->state = UNIT_OUT_OF_STEPS;
        return true;
    }
    return false;
}

/* A unit's step after its sample: move, or stop (arrived, or lost:
** outside, unreachable). */
static void apply_sample(const qn_sim_world *w, unit *u, float step, tally *t) {
    qn_status st = (qn_status)u->sst;
    if (st == QN_AT_GOAL) {
        u->walked += dist(u->p, w->goal);
        u->state = UNIT_ARRIVED;
    } else if (st == QN_OK) {
        /* A step ends where the way turns (a quarter step at least, so a
        ** unit never crawls). */
        float len = u->sahead < step ? u->sahead : step;
        move_unit(w, u, u->sdir, len > 0.25f * step ? len : 0.25f * step, t);
    } else if (!(st == QN_E_BLOCKED && escape(w, u, step, t))) {
        u->state = UNIT_LOST;
    }
}

typedef struct work {
    const qn_sim_world *w;
    unit *units;
    uint32_t begin, end, step;
    float step_len, arrive;
    tally t;
    uint32_t clock_every;
    double clock_cost; /* clock_cost() */
} work;

/* The clock's own share of a timed interval (seconds): what two back to
** back reads measure, the median of many, once per run. Taken off each
** timed batch, so a run of one unit (compare's: a unit per goal) times its
** samples and not the clock, which costs about as much as a grid lookup. */
static double clock_cost(void) {
    double d[201];
    for (int i = 0; i < 201; i++) {
        double t0 = qn_tool_now();
        d[i] = qn_tool_now() - t0;
    }
    qsort(d, 201, sizeof *d, cmp_double);
    return d[100];
}

/* One step of the part's units, as a game steps a crowd: every unit
** samples, then every unit moves (units do not interact, so this is the
** run a unit-by-unit loop gives). The samples are timed as one batch, the
** clock's own cost taken off; with clock_every above 1, only the batches
** of one step in that many are timed. */
static void *run_work(void *arg) {
    work *k = arg;
    unit *u = k->units;
    uint64_t n = 0;
    for (uint32_t i = k->begin; i < k->end; i++) {
        u[i].due = u[i].state == UNIT_ACTIVE && !unit_done(k->w, &u[i], k->step, k->arrive);
        n += u[i].due;
    }
    bool timed = k->clock_every <= 1 || k->step % k->clock_every == 0;
    double t0 = timed && n ? qn_tool_now() : 0.0;
    for (uint32_t i = k->begin; i < k->end; i++) {
        if (!u[i].due) continue;
        float ahead = INFINITY;
        u[i].sst = (uint8_t)sample_call(k->w, &u[i], &u[i].sdir, &ahead);
        u[i].sahead = ahead;
    }
    if (timed && n) {
        double dt = qn_tool_now() - t0 - k->clock_cost;
        k->t.sample_seconds += dt > 0.0 ? dt : 0.0;
        k->t.timed += n;
    }
    k->t.samples += n;
    for (uint32_t i = k->begin; i < k->end; i++)
        if (u[i].due) apply_sample(k->w, &u[i], k->step_len, &k->t);
    return NULL;
}

/* Steps every active unit once, over `threads` threads. */
static void step_all(work *parts, uint32_t threads, uint32_t s, qn_sim_result *r) {
    pthread_t ids[QN_SIM_MAX_THREADS];
    uint32_t started = 0;
    for (uint32_t i = 0; i < threads; i++) {
        parts[i].step = s;
        memset(&parts[i].t, 0, sizeof parts[i].t);
    }
    for (uint32_t i = 1; i < threads; i++, started++)
        if (pthread_create(&ids[i], NULL, run_work, &parts[i]) != 0) break;
    run_work(&parts[0]);
    for (uint32_t i = 1; i <= started; i++) pthread_join(ids[i], NULL);
    for (uint32_t i = started + 1; i < threads; i++) run_work(&parts[i]);
    for (uint32_t i = 0; i < threads; i++) {
        r->wall_contacts += parts[i].t.contacts;
        r->samples += parts[i].t.samples;
        r->escapes += parts[i].t.escapes;
        r->sample_seconds += parts[i].t.sample_seconds;
        r->sample_timed += parts[i].t.timed;
    }
}

static void report_step(const qn_sim_opts *o, const unit *u, uint32_t n, uint32_t s,
                        qn_vec2 *pos, uint8_t *active) {
    if (!o->on_step) return;
    for (uint32_t i = 0; i < n; i++) {
        pos[i] = u[i].p;
        active[i] = u[i].state == UNIT_ACTIVE;
    }
    o->on_step(o->on_step_ud, s, pos, active, n);
}

static void summarise(const unit *u, uint32_t n, double *stretch, qn_sim_result *r) {
    if (r->sample_timed && r->sample_timed < r->samples) /* scaled to every sample */
        r->sample_seconds *= (double)r->samples / (double)r->sample_timed;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        r->walked += u[i].walked;
        if (u[i].state == UNIT_ARRIVED) {
            r->arrived++;
            stretch[k++] = u[i].reference > 0.0 ? u[i].walked / u[i].reference : 1.0;
        } else {
            r->stuck++;
            r->out_of_steps += u[i].state == UNIT_OUT_OF_STEPS;
        }
    }
    if (k == 0) return;
    double sum = 0.0;
    for (uint32_t i = 0; i < k; i++) sum += stretch[i];
    r->stretch_mean = sum / k;
    qsort(stretch, k, sizeof(double), cmp_double);
    uint32_t p = (uint32_t)ceil(0.95 * k);
    r->stretch_p95 = stretch[p > 0 ? p - 1 : 0];
}

static bool any_active(const unit *u, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (u[i].state == UNIT_ACTIVE) return true;
    return false;
}

qn_status qn_sim_run(const qn_sim_world *w, const qn_sim_opts *opts, qn_sim_result *out) {
    memset(out, 0, sizeof *out);
    qn_sim_opts o = *opts;
    uint32_t n = o.units ? o.units : 1000;
    float step = o.step > 0.0f ? o.step : 0.2f;
    float arrive = o.arrive > 0.0f ? o.arrive : step;
    uint32_t threads = o.threads == 0 ? 1 : (o.threads > QN_SIM_MAX_THREADS ? QN_SIM_MAX_THREADS
                                                                            : o.threads);
    unit *u = calloc(n, sizeof *u);
    double *stretch = calloc(n, sizeof *stretch);
    uint8_t *active = calloc(n, 1);
    qn_vec2 *pos = calloc(n, sizeof *pos);
    work *parts = calloc(threads, sizeof *parts);
    qn_status st = (u && stretch && active && pos && parts) ? QN_OK : QN_E_NOMEM;
    if (st == QN_OK && !place_units(w, &o, u, n, step)) st = QN_E_INVALID_ARG;
    double clock = clock_cost();
    for (uint32_t i = 0; st == QN_OK && i < threads; i++) {
        parts[i] = (work){.w = w,
                          .units = u,
                          .begin = n * i / threads,
                          .end = n * (i + 1) / threads,
                          .step_len = step,
                          .arrive = arrive,
                          .clock_every = o.clock_every,
                          .clock_cost = clock};
    }
    out->units = n;
    for (uint32_t s = 0; st == QN_OK && any_active(u, n); s++) {
        if (o.before_step) o.before_step(o.before_step_ud, s);
        step_all(parts, threads, s, out);
        out->steps = s + 1;
        report_step(&o, u, n, s, pos, active);
    }
    if (st == QN_OK) summarise(u, n, stretch, out);
    free(u), free(stretch), free(active), free(pos), free(parts);
    return st;
}

/* ---- the run one step at a time ------------------------------------------ */

struct qn_sim_state {
    qn_sim_world w;
    qn_sim_opts o;
    unit *u;
    work *parts;
    uint32_t n, threads, step;
    qn_sim_result r; /* counters so far (contacts, samples, steps) */
};

void qn_sim_end(qn_sim_state *s) {
    if (!s) return;
    free(s->u), free(s->parts), free(s);
}

qn_status qn_sim_begin(const qn_sim_world *w, const qn_sim_opts *opts, qn_sim_state **out) {
    *out = NULL;
    qn_sim_state *s = calloc(1, sizeof *s);
    if (!s) return QN_E_NOMEM;
    s->w = *w;
    s->o = *opts;
    s->n = opts->units ? opts->units : 1000;
    float step = opts->step > 0.0f ? opts->step : 0.2f;
    float arrive = opts->arrive > 0.0f ? opts->arrive : step;
    s->threads = opts->threads == 0
                     ? 1
                     : (opts->threads > QN_SIM_MAX_THREADS ? QN_SIM_MAX_THREADS : opts->threads);
    s->u = calloc(s->n, sizeof *s->u);
    s->parts = calloc(s->threads, sizeof *s->parts);
    if (!s->u || !s->parts) return qn_sim_end(s), QN_E_NOMEM;
    if (!place_units(&s->w, &s->o, s->u, s->n, step)) return qn_sim_end(s), QN_E_INVALID_ARG;
    double clock = clock_cost();
    for (uint32_t i = 0; i < s->threads; i++) {
        s->parts[i] = (work){.w = &s->w,
                             .units = s->u,
                             .begin = s->n * i / s->threads,
                             .end = s->n * (i + 1) / s->threads,
                             .step_len = step,
                             .arrive = arrive,
                             .clock_every = opts->clock_every,
                             .clock_cost = clock};
    }
    s->r.units = s->n;
    *out = s;
    return QN_OK;
}

bool qn_sim_tick(qn_sim_state *s) {
    if (!any_active(s->u, s->n)) return false;
    step_all(s->parts, s->threads, s->step, &s->r);
    s->r.steps = ++s->step;
    return true;
}

qn_status qn_sim_state_result(const qn_sim_state *s, qn_sim_result *out) {
    *out = s->r;
    out->arrived = out->stuck = 0;
    out->stretch_mean = out->stretch_p95 = out->walked = 0.0;
    double *stretch = calloc(s->n, sizeof *stretch);
    if (!stretch) return QN_E_NOMEM;
    summarise(s->u, s->n, stretch, out);
    free(stretch);
    return QN_OK;
}

uint32_t qn_sim_state_units(const qn_sim_state *s, float *xy, uint8_t *state) {
    for (uint32_t i = 0; i < s->n; i++) {
        if (xy) {
            xy[2 * i] = s->u[i].p.x;
            xy[2 * i + 1] = s->u[i].p.y;
        }
        if (state) state[i] = s->u[i].state;
    }
    return s->n;
}
