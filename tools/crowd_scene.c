/*
** crowd_scene.c: the crowd scenarios (see crowd_scene.h). Generated levels
** are unions of axis-aligned rectangles; units start at random places at
** least their radius from every wall and from one another (on a level,
** where the goal can be reached from).
*/
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "crowd_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"
#include "tool.h"

const char *const qn_crowd_scene_names[] = {"doorway",    "counterflow",  "crossroads",
                                            "formation",  "circle1000",   "circle10000",
                                            NULL};

#define RADIUS 0.25f
#define SPEED 1.5f
#define PACKING 0.25f /* share of a goal region the arrived units' discs fill */

/* ---- geometry ------------------------------------------------------------ */

typedef struct rect4 {
    float x0, y0, x1, y1;
} rect4;

static qn_mesh *mesh_from_rects(const rect4 *r, uint32_t n) {
    qn_vec2 v[64];
    uint32_t q[64];
    for (uint32_t i = 0; i < n && i < 16; i++) { /* at most 16 rooms */
        v[4 * i] = (qn_vec2){r[i].x0, r[i].y0};
        v[4 * i + 1] = (qn_vec2){r[i].x1, r[i].y0};
        v[4 * i + 2] = (qn_vec2){r[i].x1, r[i].y1};
        v[4 * i + 3] = (qn_vec2){r[i].x0, r[i].y1};
        for (uint32_t k = 0; k < 4; k++) q[4 * i + k] = 4 * i + k;
    }
    qn_mesh_desc d = {0};
    d.vertices = v;
    d.vertex_count = 4 * n;
    d.quads = q;
    d.quad_count = n;
    qn_mesh *m = NULL;
    qn_error e;
    if (qn_mesh_create(&d, NULL, &m, &e) != QN_OK) qn_cli_error("crowd level: %s", e.message);
    return m;
}

/* ---- placement -------------------------------------------------------------- */

/* Placed discs in a hashed grid of cells 2*rmax wide, for overlap checks:
** a chain per bucket; each disc remembers its cell, so two cells sharing a
** bucket are told apart. */
typedef struct placer {
    float cell;
    uint32_t mask;
    int32_t *head, *next, *cx, *cy;
    qn_vec2 *at;
    float *rad;
    uint32_t n, cap;
} placer;

static bool placer_init(placer *p, float rmax, uint32_t cap) {
    memset(p, 0, sizeof *p);
    p->cell = 2.0f * rmax;
    uint32_t size = 64;
    while (size < 2 * cap) size *= 2;
    p->mask = size - 1;
    p->head = malloc((size_t)size * sizeof *p->head);
    p->next = malloc(((size_t)cap + 1) * sizeof *p->next);
    p->cx = malloc(((size_t)cap + 1) * sizeof *p->cx);
    p->cy = malloc(((size_t)cap + 1) * sizeof *p->cy);
    p->at = malloc(((size_t)cap + 1) * sizeof *p->at);
    p->rad = malloc(((size_t)cap + 1) * sizeof *p->rad);
    p->cap = cap;
    if (!p->head || !p->next || !p->cx || !p->cy || !p->at || !p->rad) return false;
    for (size_t i = 0; i <= p->mask; i++) p->head[i] = -1;
    return true;
}

static void placer_free(placer *p) {
    free(p->head);
    free(p->next);
    free(p->cx);
    free(p->cy);
    free(p->at);
    free(p->rad);
}

static uint32_t bucket(const placer *p, int32_t cx, int32_t cy) {
    uint32_t h = (uint32_t)cx * 0x9e3779b1u ^ (uint32_t)cy * 0x85ebca77u;
    return (h ^ (h >> 16)) & p->mask;
}

static void cell_of(const placer *p, qn_vec2 x, int32_t *cx, int32_t *cy) {
    *cx = (int32_t)floorf(x.x / p->cell);
    *cy = (int32_t)floorf(x.y / p->cell);
}

/* Calls visit on every placed disc overlapping the disc (x, r), except
** disc `self`; sums its results. */
static double placer_near(const placer *p, qn_vec2 x, float r, uint32_t self,
                          double (*visit)(void *, float depth, float rsum), void *ud) {
    int32_t cx, cy;
    cell_of(p, x, &cx, &cy);
    double sum = 0.0;
    for (int32_t y = cy - 1; y <= cy + 1; y++)
        for (int32_t xx = cx - 1; xx <= cx + 1; xx++)
            for (int32_t k = p->head[bucket(p, xx, y)]; k >= 0; k = p->next[k]) {
                if ((uint32_t)k == self || p->cx[k] != xx || p->cy[k] != y) continue;
                float dx = p->at[k].x - x.x, dy = p->at[k].y - x.y, rs = r + p->rad[k];
                float d = sqrtf(dx * dx + dy * dy);
                if (d < rs) sum += visit(ud, rs - d, rs);
            }
    return sum;
}

static void placer_add(placer *p, qn_vec2 x, float r) {
    int32_t cx, cy;
    cell_of(p, x, &cx, &cy);
    uint32_t b = bucket(p, cx, cy);
    p->at[p->n] = x;
    p->rad[p->n] = r;
    p->cx[p->n] = cx;
    p->cy[p->n] = cy;
    p->next[p->n] = p->head[b];
    p->head[b] = (int32_t)p->n++;
}

static double count_one(void *ud, float depth, float rsum) {
    (void)ud, (void)depth, (void)rsum;
    return 1.0;
}

/* A random spot in box b for a disc of radius r: clear of walls and of the
** discs placed so far, and (reach not NULL) where that field reaches, so
** that no unit starts where its goal cannot be reached. false after many
** misses. */
static bool random_spot(const qn_mesh *m, const qn_field *reach, placer *pl, rect4 b, float r,
                        uint64_t *rng, qn_vec2 *out) {
    for (int tries = 0; tries < 2000; tries++) {
        qn_vec2 x = {b.x0 + (float)qn_rand_unit(rng) * (b.x1 - b.x0),
                     b.y0 + (float)qn_rand_unit(rng) * (b.y1 - b.y0)};
        uint32_t q;
        bool clear = false;
        if (qn_mesh_locate(m, x, QN_NONE, &q) != QN_OK || qn_mesh_quad_blocked(m, q)) continue;
        if (qn_mesh_line_of_sight(m, x, x, r * 1.05f, q, &clear) != QN_OK || !clear) continue;
        if (reach && !isfinite(qn_field_cost_at(reach, x, q))) continue;
        if (placer_near(pl, x, r * 1.05f, QN_NONE, count_one, NULL) > 0.0) continue;
        *out = x;
        return true;
    }
    return false;
}

/* ---- building --------------------------------------------------------------- */

static float region_for(uint32_t n, float r) {
    return r * sqrtf((float)n / PACKING);
}

/* The region for n units on a level: region_for's area (the discs over the
** packing density) measured as ground the goal's field reaches
** (qn_field_region_radius), not as a disc of open ground: round a goal
** among obstacles, and along the corridors of a maze, that disc held too
** few units, and the last queued beyond its rim and never arrived. Never
** below region_for; -1 when out of memory. */
static float region_on_level(const qn_crowd_scene *s, uint32_t n) {
    float open = region_for(n, s->radius), R;
    float area = 3.14159265f * open * open;
    if (qn_field_region_radius(s->fields[0], area, &R) != QN_OK) return -1.0f;
    return R > open ? R : open;
}

static qn_crowd_unit_desc unit_desc(const qn_crowd_scene *s, uint32_t g, qn_vec2 at) {
    qn_crowd_unit_desc d = {0};
    d.position = at;
    d.radius = s->radius;
    d.max_speed = s->speed;
    d.max_accel = 4.0f * s->speed;
    d.group = g;
    if (g < s->groups) {
        d.field = s->fields[g];
        d.goal = s->goals[g];
    }
    return d;
}

static int make_fields(qn_crowd_scene *s) {
    for (uint32_t g = 0; g < s->groups; g++) {
        qn_field_opts fo = {0};
        fo.radius = s->radius;
        qn_error e;
        if (qn_field_create(s->mesh, &s->goals[g], 1, &fo, NULL, &s->fields[g], &e) != QN_OK)
            return qn_cli_error("crowd: goal %u: %s", g, e.message);
    }
    return 0;
}

static int make_crowd(qn_crowd_scene *s, const qn_crowd_opts *opts) {
    qn_error e;
    if (qn_crowd_create(s->mesh, opts, NULL, &s->crowd, &e) != QN_OK)
        return qn_cli_error("crowd: %s", e.message);
    return 0;
}

/* Places `n` units of group g in box b, bound for the group's goal region. */
static int spawn_group(qn_crowd_scene *s, placer *pl, uint32_t g, rect4 b, uint32_t n, float region,
                       uint64_t *rng, const qn_field *reach) {
    for (uint32_t i = 0; i < n; i++) {
        qn_vec2 at;
        if (!random_spot(s->mesh, reach, pl, b, s->radius, rng, &at))
            return qn_cli_error("crowd: the level cannot hold %u units of radius %g here "
                                "(placed %u of group %u)",
                                n, (double)s->radius, i, g);
        placer_add(pl, at, s->radius);
        qn_crowd_unit_desc d = unit_desc(s, g, at);
        d.goal_radius = region;
        uint32_t id;
        qn_error e;
        if (qn_crowd_add(s->crowd, &d, &id, &e) != QN_OK)
            return qn_cli_error("crowd: adding a unit: %s", e.message);
    }
    s->units += n;
    return 0;
}

typedef struct layout {
    rect4 rooms[9];
    uint32_t nrooms;
    rect4 spawn[QN_SCENE_MAX_GROUPS];
    qn_vec2 goal[QN_SCENE_MAX_GROUPS];
    uint32_t groups, units, budget;
} layout;

static void doorway(layout *l) {
    /* Two 40 x 40 rooms joined by a door 4 radii wide and 1 deep. */
    rect4 r[3] = {{0, 0, 40, 40}, {40, 20 - 2 * RADIUS, 41, 20 + 2 * RADIUS}, {41, 0, 81, 40}};
    memcpy(l->rooms, r, sizeof r);
    l->nrooms = 3;
    l->spawn[0] = (rect4){1, 1, 39, 39};
    l->goal[0] = (qn_vec2){61, 20};
    l->groups = 1;
    l->units = 1000;
    l->budget = 30000;
}

static void counterflow(layout *l) {
    /* Two 40 x 40 rooms joined by a corridor 60 long and 6 wide; each group
    ** crosses to the far side of the other room. */
    rect4 r[3] = {{0, 0, 40, 40}, {40, 17, 100, 23}, {100, 0, 140, 40}};
    memcpy(l->rooms, r, sizeof r);
    l->nrooms = 3;
    l->spawn[0] = (rect4){24, 5, 39, 35};
    l->spawn[1] = (rect4){101, 5, 116, 35};
    l->goal[0] = (qn_vec2){128, 20};
    l->goal[1] = (qn_vec2){12, 20};
    l->groups = 2;
    l->units = 1000;
    l->budget = 8000;
}

static void crossroads(layout *l) {
    /* A plus of four arms 12 wide and 60 long, each ending in a 30 x 30
    ** square; each group crosses to the far side of the opposite square. */
    rect4 r[9] = {{99, 99, 111, 111}, {99, 39, 111, 99},  {99, 111, 111, 171},
                  {39, 99, 99, 111},  {111, 99, 171, 111}, {90, 9, 120, 39},
                  {90, 171, 120, 201}, {9, 90, 39, 120},  {171, 90, 201, 120}};
    memcpy(l->rooms, r, sizeof r);
    l->nrooms = 9;
    l->spawn[0] = (rect4){100, 40, 110, 65};
    l->spawn[1] = (rect4){100, 145, 110, 170};
    l->spawn[2] = (rect4){40, 100, 65, 110};
    l->spawn[3] = (rect4){145, 100, 170, 110};
    l->goal[0] = (qn_vec2){105, 190};
    l->goal[1] = (qn_vec2){105, 20};
    l->goal[2] = (qn_vec2){190, 105};
    l->goal[3] = (qn_vec2){20, 105};
    l->groups = 4;
    l->units = 1000;
    l->budget = 6000;
}

static int build_rooms(qn_crowd_scene *s, const layout *l, uint32_t units, uint64_t seed,
                       const qn_crowd_opts *opts) {
    s->own_mesh = mesh_from_rects(l->rooms, l->nrooms);
    if (!s->own_mesh) return 1;
    s->mesh = s->own_mesh;
    s->groups = l->groups;
    memcpy(s->goals, l->goal, sizeof s->goals);
    s->budget = l->budget;
    uint32_t n = units ? units : l->units;
    if (make_fields(s) || make_crowd(s, opts)) return 1;
    placer pl;
    uint64_t rng = seed;
    int rc = placer_init(&pl, s->radius * 1.05f, n) ? 0 : 1;
    for (uint32_t g = 0; rc == 0 && g < l->groups; g++) {
        uint32_t k = n * (g + 1) / l->groups - n * g / l->groups;
        rc = spawn_group(s, &pl, g, l->spawn[g], k, region_for(k, s->radius), &rng, NULL);
    }
    placer_free(&pl);
    return rc;
}

/* The classic circle: n units of radius 0.5 evenly on a ring (spaced 3.2
** radii apart) each walk to the opposite point; open ground. */
static int circle(qn_crowd_scene *s, uint32_t n, const qn_crowd_opts *opts) {
    s->radius = 0.5f;
    s->speed = 2.0f;
    s->dt = 0.25f;
    float ring = (float)n * 3.2f * s->radius / (2.0f * 3.14159265f);
    rect4 b = {-ring - 5.0f, -ring - 5.0f, ring + 5.0f, ring + 5.0f};
    s->own_mesh = mesh_from_rects(&b, 1);
    if (!s->own_mesh) return 1;
    s->mesh = s->own_mesh;
    s->budget = (uint32_t)(2.0f * ring / (s->speed * s->dt)) * 2 + 400;
    if (make_crowd(s, opts)) return 1;
    for (uint32_t i = 0; i < n; i++) {
        double a = 2.0 * 3.14159265358979 * (double)i / (double)n;
        qn_vec2 at = {(float)((double)ring * cos(a)), (float)((double)ring * sin(a))};
        qn_vec2 to = {-at.x, -at.y};
        qn_crowd_unit_desc d = unit_desc(s, 0, at);
        d.goal = to;
        d.goal_radius = s->radius;
        uint32_t id;
        qn_error e;
        if (qn_crowd_add(s->crowd, &d, &id, &e) != QN_OK || qn_crowd_set_path(s->crowd, id, &to, 1))
            return qn_cli_error("crowd: circle unit %u: %s", i, e.message);
    }
    s->units = n;
    return 0;
}

static int load_level(qn_crowd_scene *s, const char *path) {
    s->level = qn_cli_load_level(path);
    if (!s->level) return 1;
    s->mesh = qn_level_mesh(s->level);
    return 0;
}

/* Formation: a leader walking its own path (qn_path_find) from the west of
** the town's upper street into the plaza, 11 followers in a wedge. */
static int formation(qn_crowd_scene *s, uint32_t units, const qn_crowd_opts *opts) {
    char path[4096];
    snprintf(path, sizeof path, "%s/levels/town.json", qn_cli_data_dir());
    if (load_level(s, path)) return 1;
    qn_vec2 from = {24, 26};
    s->groups = 1;
    s->goals[0] = (qn_vec2){60, 45};
    s->budget = 1500;
    uint32_t n = units ? units : 12;
    if (n < 2 || n > QN_SCENE_MAX_FOLLOWERS + 1)
        return qn_cli_error("crowd: a formation has 2 to %u units", QN_SCENE_MAX_FOLLOWERS + 1);
    if (make_fields(s) || make_crowd(s, opts)) return 1;
    qn_pathfinder *pf = NULL;
    qn_vec2 pts[256];
    uint32_t np = 0;
    if (qn_pathfinder_create(s->mesh, NULL, &pf, NULL) != QN_OK ||
        qn_path_find(pf, from, s->goals[0], s->radius, pts, 256, &np, NULL) != QN_OK) {
        qn_pathfinder_destroy(pf);
        return qn_cli_error("crowd: no path for the formation's leader");
    }
    qn_pathfinder_destroy(pf);
    float region = region_for(n, s->radius);
    qn_crowd_unit_desc d = unit_desc(s, 0, from);
    d.goal_radius = region;
    d.max_speed = s->speed * 2.0f / 3.0f; /* followers have speed to spare */
    qn_error e;
    if (qn_crowd_add(s->crowd, &d, &s->leader, &e) != QN_OK ||
        qn_crowd_set_path(s->crowd, s->leader, pts, np) != QN_OK)
        return qn_cli_error("crowd: formation leader: %s", e.message);
    s->nfollow = n - 1;
    qn_formation_slots(QN_FORMATION_WEDGE, s->nfollow, 3.0f * s->radius, s->slots);
    /* Followers start scattered behind the leader and form up on the way. */
    placer pl;
    uint64_t rng = 12;
    int rc = placer_init(&pl, s->radius * 1.05f, n) ? 0 : 1;
    placer_add(&pl, from, s->radius);
    for (uint32_t k = 0; rc == 0 && k < s->nfollow; k++) {
        qn_vec2 at;
        rect4 box = {14, 24, 22, 28};
        if (!random_spot(s->mesh, NULL, &pl, box, s->radius, &rng, &at))
            rc = 1;
        else placer_add(&pl, at, s->radius);
        qn_crowd_unit_desc f = unit_desc(s, 0, at);
        f.goal_radius = region;
        if (rc == 0 && qn_crowd_add(s->crowd, &f, &s->followers[k], &e) != QN_OK) rc = 1;
        if (rc == 0) rc = qn_crowd_set_leader(s->crowd, s->followers[k], s->leader, s->slots[k]);
    }
    placer_free(&pl);
    if (rc) return qn_cli_error("crowd: cannot place the formation's followers");
    s->units = n;
    return 0;
}

static void scene_defaults(qn_crowd_scene *s, const char *name) {
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->radius = RADIUS;
    s->speed = SPEED;
    s->dt = 0.1f;
    s->leader = QN_NONE;
}

int qn_crowd_scene_build(qn_crowd_scene *s, const char *name, uint32_t units, uint64_t seed,
                         const qn_crowd_opts *opts) {
    scene_defaults(s, name);
    layout l;
    memset(&l, 0, sizeof l);
    if (!strcmp(name, "doorway")) doorway(&l);
    else if (!strcmp(name, "counterflow")) counterflow(&l);
    else if (!strcmp(name, "crossroads")) crossroads(&l);
    else if (!strcmp(name, "formation")) return formation(s, units, opts);
    else if (!strcmp(name, "circle1000")) return circle(s, units ? units : 1000, opts);
    else if (!strcmp(name, "circle10000")) return circle(s, units ? units : 10000, opts);
    else return qn_cli_error("crowd: unknown scenario %s (doorway, counterflow, crossroads, "
                             "formation, circle1000, circle10000)", name);
    return build_rooms(s, &l, units, seed, opts);
}

/* A level's step budget: 8000 steps, or more where units start far from
** the goal (a maze, a big map): 4 x the farthest unit's cost to the goal
** over the distance a step at full speed covers, plus 400 (quadnav sim
** gives each unit 4 x its cost in steps). A unit that could not walk its
** way in time was reported stuck. */
static uint32_t level_budget(const qn_crowd_scene *s) {
    double far = 0.0;
    for (uint32_t id = 0; id < qn_crowd_id_bound(s->crowd); id++) {
        qn_crowd_unit u;
        if (qn_crowd_get(s->crowd, id, &u) != QN_OK) continue;
        float c = qn_field_cost_at(s->fields[0], u.position, u.quad);
        if (isfinite(c) && (double)c > far) far = (double)c;
    }
    double steps = 4.0 * far / (double)(s->speed * s->dt) + 400.0;
    return steps > 8000.0 ? (steps < 4e8 ? (uint32_t)steps : 400000000u) : 8000u;
}

int qn_crowd_scene_level(qn_crowd_scene *s, const char *path, const char *goal, uint32_t units,
                         uint64_t seed, float radius) {
    scene_defaults(s, "level");
    if (load_level(s, path)) return 1;
    qn_vec2 at;
    int goal_rc = qn_cli_goal(s->level, goal, &at); /* 2: a usage error */
    if (goal_rc) return goal_rc;
    return qn_crowd_scene_mesh(s, s->mesh, at, units, seed, radius);
}

int qn_crowd_scene_mesh(qn_crowd_scene *s, const qn_mesh *mesh, qn_vec2 goal, uint32_t units,
                        uint64_t seed, float radius) {
    if (!s->level) scene_defaults(s, "level");
    s->mesh = mesh;
    s->radius = radius;
    s->groups = 1;
    s->budget = 8000;
    s->goals[0] = goal;
    if (make_fields(s) || make_crowd(s, NULL)) return 1;
    qn_rect b = qn_mesh_bounds(s->mesh);
    placer pl;
    uint64_t rng = seed;
    int rc = placer_init(&pl, s->radius * 1.05f, units) ? 0 : 1;
    rect4 box = {b.min.x, b.min.y, b.max.x, b.max.y};
    /* A level may have ground its goal cannot be reached from (an island,
    ** a room fenced off): no unit starts there, as with quadnav sim. */
    float region = rc == 0 ? region_on_level(s, units) : 0.0f;
    if (region < 0.0f) rc = qn_cli_error("crowd: out of memory");
    if (rc == 0) rc = spawn_group(s, &pl, 0, box, units, region, &rng, s->fields[0]);
    placer_free(&pl);
    if (rc == 0) s->budget = level_budget(s);
    return rc;
}

void qn_crowd_scene_free(qn_crowd_scene *s) {
    qn_crowd_destroy(s->crowd);
    for (uint32_t g = 0; g < QN_SCENE_MAX_GROUPS; g++) qn_field_destroy(s->fields[g]);
    qn_mesh_destroy(s->own_mesh);
    qn_level_destroy(s->level);
    memset(s, 0, sizeof *s);
}

/* ---- measuring ---------------------------------------------------------------- */

typedef struct ov {
    uint64_t pairs;
    double deepest;
} ov;

static double note_overlap(void *ud, float depth, float rsum) {
    ov *o = ud;
    double share = (double)depth / (double)rsum;
    if (share > o->deepest) o->deepest = share;
    if (share > 0.1) o->pairs++;
    return 0.0;
}

void qn_crowd_scene_overlaps(const qn_crowd_scene *s, uint64_t *pairs, double *deepest) {
    uint32_t bound = qn_crowd_id_bound(s->crowd);
    placer pl;
    ov o = {0, 0.0};
    if (placer_init(&pl, s->radius, bound)) {
        for (uint32_t id = 0; id < bound; id++) {
            qn_crowd_unit u;
            if (qn_crowd_get(s->crowd, id, &u) == QN_OK) placer_add(&pl, u.position, u.radius);
        }
        for (uint32_t k = 0; k < pl.n; k++)
            placer_near(&pl, pl.at[k], pl.rad[k], k, note_overlap, &o);
    }
    placer_free(&pl);
    *pairs = o.pairs / 2; /* each pair was seen from both sides */
    *deepest = o.deepest;
}

/* Formation bookkeeping, until the leader enters its arrival region: the
** mean slot error on open ground (every slot in plain view of the leader,
** radius included) once formed, and how long the group takes
** to re-form (mean error back under one radius) from the first open step
** after a stretch where slots did not fit (a street, a door). */
typedef struct fstate {
    bool was_open, reforming;
    double since, reform_max, err_sum;
    uint64_t err_n;
} fstate;

static void formation_step(const qn_crowd_scene *s, fstate *f, double t) {
    qn_crowd_unit l;
    if (qn_crowd_get(s->crowd, s->leader, &l) != QN_OK || l.arrived) return;
    /* Inside its arrival region the group is arriving, not marching. */
    float gx = l.position.x - s->goals[0].x, gy = l.position.y - s->goals[0].y;
    if (sqrtf(gx * gx + gy * gy) < region_for(s->units, s->radius)) return;
    qn_vec2 h = l.heading;
    bool open = true;
    double err = 0.0;
    for (uint32_t k = 0; k < s->nfollow; k++) {
        qn_crowd_unit u;
        qn_crowd_get(s->crowd, s->followers[k], &u);
        qn_vec2 sl = s->slots[k];
        qn_vec2 at = {l.position.x + h.x * sl.x - h.y * sl.y, l.position.y + h.y * sl.x + h.x * sl.y};
        bool vis = false;
        qn_mesh_line_of_sight(s->mesh, l.position, at, s->radius, l.quad, &vis);
        open = open && vis;
        err += (double)hypotf(u.position.x - at.x, u.position.y - at.y) / (double)s->radius;
    }
    err /= (double)s->nfollow;
    if (open && !f->was_open && err > 1.0) {
        f->reforming = true;
        f->since = t;
    }
    if (f->reforming && (!open || err <= 1.0)) {
        if (t - f->since > f->reform_max) f->reform_max = t - f->since;
        f->reforming = false;
    }
    if (open && !f->reforming) f->err_sum += err, f->err_n++;
    f->was_open = open;
}

/* Seconds of CPU time of the calling thread: what one thread's step costs,
** whatever else the (shared) machine runs. */
static double cpu_now(void) {
    struct timespec t;
    /* Hosts without a thread CPU clock (a browser): wall time. */
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return qn_tool_now();
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double qn_crowd_scene_clock(uint32_t threads) { return threads > 1 ? qn_tool_now() : cpu_now(); }

void qn_crowd_scene_metrics_init(const qn_crowd_scene *s, qn_crowd_metrics *m) {
    memset(m, 0, sizeof *m);
    m->units = s->units;
    m->slot_error_mean = m->reform_s_max = -1.0;
}

int qn_crowd_scene_step(qn_crowd_scene *s, uint32_t threads, qn_crowd_metrics *m, double *busy) {
    qn_crowd_stats st;
    qn_crowd_get_stats(s->crowd, &st);
    if (st.arrived == st.units) return 1;
    double t0 = qn_crowd_scene_clock(threads);
    qn_status rc = threads > 1 ? qn_crowd_step_parallel(s->crowd, s->dt, threads)
                               : qn_crowd_step(s->crowd, s->dt);
    *busy += qn_crowd_scene_clock(threads) - t0;
    if (rc != QN_OK) return qn_cli_error("crowd step: %s", qn_status_name(rc)), -1;
    uint64_t pairs;
    double deepest;
    qn_crowd_scene_overlaps(s, &pairs, &deepest);
    m->overlap_pairs += pairs;
    if (deepest > m->max_overlap) m->max_overlap = deepest;
    m->steps++;
    return 0;
}

void qn_crowd_scene_finish(const qn_crowd_scene *s, qn_crowd_metrics *m, double busy) {
    qn_crowd_stats st;
    qn_crowd_get_stats(s->crowd, &st);
    m->arrived = st.arrived;
    m->stuck = st.units - st.arrived;
    m->wall_contacts = st.wall_contacts;
    m->step_us_mean = m->steps ? busy * 1e6 / m->steps : 0.0;
    m->step_us_per_1000 = s->units ? m->step_us_mean * 1000.0 / s->units : 0.0;
}

int qn_crowd_scene_run(qn_crowd_scene *s, uint32_t threads, uint32_t max_steps,
                       qn_crowd_metrics *m, qn_crowd_scene_cb cb, void *ud) {
    qn_crowd_scene_metrics_init(s, m);
    uint32_t limit = max_steps ? max_steps : s->budget;
    fstate f = {true, false, 0.0, 0.0, 0.0, 0};
    double busy = 0.0;
    for (uint32_t step = 0; step < limit; step++) {
        int rc = qn_crowd_scene_step(s, threads, m, &busy);
        if (rc > 0) break;
        if (rc < 0) return 1;
        if (s->leader != QN_NONE) formation_step(s, &f, (double)(step + 1) * (double)s->dt);
        if (cb) cb(ud, s, step);
    }
    qn_crowd_scene_finish(s, m, busy);
    if (s->leader != QN_NONE) {
        double end = (double)m->steps * (double)s->dt;
        if (f.reforming && end - f.since > f.reform_max) f.reform_max = end - f.since;
        m->slot_error_mean = f.err_n ? f.err_sum / (double)f.err_n : -1.0;
        m->reform_s_max = f.reform_max;
    }
    return 0;
}
