/*
** game_loop.c: quadnav in a minimal game loop.
**
** Loads a level, builds the field (one destination, shared by every unit)
** for its goal "plaza", places units at the level's spawns and steps them
** toward it. Part way through, the quad with id "north-road-3" (a street
** into the plaza) is closed like a door: the mesh is changed, the field
** repaired, units standing in the closed quad walk out of it, and everyone
** else takes the way round. Exit status 0 when every unit arrives.
**
**     game_loop [LEVEL.json] [DOOR-ID]   (default: data/levels/town.json)
**
** Only the public API (quadnav.h) is used.
*/
#include <quadnav.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define UNITS_PER_SPAWN 40u
#define STEP 0.2f           /* world units a unit walks per frame */
#define RADIUS 0.25f        /* agent radius */
#define CLOSE_AT_FRAME 130u /* when the door closes: units from the north are in it */
#define MAX_FRAMES 3000u
#define ARRIVE 0.5f         /* a unit this close to the goal has arrived */

typedef struct world {
    qn_level *level;
    qn_field *field;
    qn_vec2 *pos, *dir;
    uint8_t *status;
    uint32_t *quad; /* each unit's quad from the last frame: the sampler's hint */
    uint8_t *arrived;
    uint8_t *trapped; /* was in the quad when it closed */
    uint32_t units;
    uint32_t walked_out; /* units that were in the closed quad */
    qn_vec2 goal;
} world;

static int fail(const char *what, const qn_error *err) {
    fprintf(stderr, "game_loop: %s: %s (%s)\n", what, err->message, qn_status_name(err->code));
    return 1;
}

/* Units stand in a small square around each spawn. */
static void place_units(world *w) {
    uint32_t n = 0;
    for (uint32_t s = 0; s < qn_level_spawn_count(w->level); s++) {
        qn_vec2 at;
        qn_level_spawn(w->level, s, NULL, &at);
        for (uint32_t k = 0; k < UNITS_PER_SPAWN; k++, n++) {
            w->pos[n].x = at.x + 0.3f * (float)(k % 5) - 0.6f;
            w->pos[n].y = at.y + 0.3f * (float)(k / 5 % 5) - 0.6f;
            w->quad[n] = QN_NONE; /* no hint yet: the sampler locates the unit */
        }
    }
    w->units = n;
}

static float dist(qn_vec2 a, qn_vec2 b) { return hypotf(a.x - b.x, a.y - b.y); }

/* One frame: sample every unit (any number of threads could share this
** batch; qn_field_sample_jobs hands it to a job system), then move. A unit
** in a quad that was just closed asks for the way out and walks there
** instead. Returns how many units are still walking. */
static uint32_t step_units(world *w) {
    uint32_t walking = 0;
    qn_field_sample_batch(w->field, w->pos, w->dir, w->status, w->quad, w->units);
    for (uint32_t i = 0; i < w->units; i++) {
        qn_vec2 d = w->dir[i];
        if (w->arrived[i] || w->status[i] == QN_AT_GOAL || dist(w->pos[i], w->goal) <= ARRIVE) {
            w->arrived[i] = 1;
            continue;
        }
        walking++;
        if (w->status[i] == QN_E_BLOCKED) {
            w->walked_out += !w->trapped[i];
            w->trapped[i] = 1;
            uint32_t q;
            qn_vec2 out;
            if (qn_field_way_out(w->field, w->pos[i], &q, &out) != QN_OK) continue;
            float len = dist(out, w->pos[i]);
            if (len > 0) d.x = (out.x - w->pos[i].x) / len, d.y = (out.y - w->pos[i].y) / len;
            if (len < STEP) d.x *= len / STEP, d.y *= len / STEP; /* stop on the point */
        }
        w->pos[i].x += d.x * STEP;
        w->pos[i].y += d.y * STEP;
    }
    return walking;
}

/* The door: block the quad by its id from the level file, then bring the
** field up to date (a repair, since it was built repairable). */
static int close_door(world *w, const char *door) {
    uint32_t q = qn_level_find_quad(w->level, door);
    qn_error err;
    if (q == QN_NONE) {
        fprintf(stderr, "game_loop: the level has no quad with id \"%s\"\n", door);
        return 1;
    }
    if (qn_mesh_set_quad_blocked(qn_level_mesh_mut(w->level), q, true) != QN_OK) return 1;
    if (qn_field_update(w->field, &err) != QN_OK) return fail("update", &err);
    printf("frame %u: closed quad %u (\"%s\")\n", CLOSE_AT_FRAME, q, qn_level_quad_id(w->level, q));
    return 0;
}

static int run(world *w, const char *door) {
    uint32_t walking = w->units, frame = 0;
    for (; frame < MAX_FRAMES && walking > 0; frame++) {
        if (frame == CLOSE_AT_FRAME && close_door(w, door) != 0) return 1;
        walking = step_units(w);
    }
    printf("%u units, %u arrived after %u frames; %u walked out of the closed quad\n", w->units,
           w->units - walking, frame, w->walked_out);
    return walking == 0 ? 0 : 1;
}

static int setup(world *w, const char *path) {
    qn_error err;
    if (qn_level_load_file(path, NULL, &w->level, &err) != QN_OK) return fail(path, &err);
    if (qn_level_goal(w->level, qn_level_find_goal(w->level, "plaza"), NULL, &w->goal) != QN_OK) {
        fprintf(stderr, "game_loop: %s has no goal \"plaza\"\n", path);
        return 1;
    }
    qn_field_opts opts = {0}; /* zero: the defaults */
    opts.radius = RADIUS;
    opts.repairable = true; /* doors will close: repair instead of rebuilding */
    const qn_mesh *mesh = qn_level_mesh(w->level);
    if (qn_field_create(mesh, &w->goal, 1, &opts, NULL, &w->field, &err) != QN_OK)
        return fail("field", &err);
    uint32_t n = qn_level_spawn_count(w->level) * UNITS_PER_SPAWN;
    w->pos = calloc(n + 1, sizeof *w->pos);
    w->dir = calloc(n + 1, sizeof *w->dir);
    w->status = calloc(n + 1, sizeof *w->status);
    w->quad = calloc(n + 1, sizeof *w->quad);
    w->arrived = calloc(n + 1, sizeof *w->arrived);
    w->trapped = calloc(n + 1, sizeof *w->trapped);
    if (!w->pos || !w->dir || !w->status || !w->quad || !w->arrived || !w->trapped) return 1;
    place_units(w);
    return 0;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "data/levels/town.json";
    const char *door = argc > 2 ? argv[2] : "north-road-3";
    world w = {0};
    int rc = setup(&w, path);
    if (rc == 0) rc = run(&w, door);
    free(w.pos);
    free(w.dir);
    free(w.status);
    free(w.quad);
    free(w.arrived);
    free(w.trapped);
    qn_field_destroy(w.field);
    qn_level_destroy(w.level);
    return rc;
}
