/*
** big_world.c: hierarchical instances for a big map, as a strategy game
** would use them.
**
** Loads a MovingAI map, builds its quads and the sector graph (qn_hier,
** once per map), and sends two armies to two destinations (one qn_hfield
** each, shared by all of that army's units). A destination costs little
** to make; the sectors' local fields are built the first time a unit
** samples in them (here for a whole army at once, with
** qn_hfield_prepare, before the first frame), so memory follows the
** sectors the armies cross, not the map. Part way through, the quads
** across the middle fifth of the map are closed (a wall raised): the mesh is
** changed, the hier and both destinations are updated, and units standing
** on the closed quads step out to the nearest open ground. Exit status 0
** when every unit of both armies arrives.
**
**     big_world [MAP] [GOAL1X GOAL1Y GOAL2X GOAL2Y]
**         (default: data/maps/lak303d.map 70.5 70.5 20.5 110.5)
**
** Only the public API (quadnav.h) is used.
*/
#include <quadnav.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ARMY 150u          /* units per army */
#define STEP 0.2f          /* world units a unit walks per frame */
#define RADIUS 0.1f        /* agent radius: corridors of the map may be one cell wide */
#define WALL_AT_FRAME 60u  /* when the wall is raised */
#define MAX_FRAMES 20000u
#define ARRIVE 0.5f

typedef struct army {
    qn_hfield *dest;
    qn_vec2 goal;
    qn_vec2 pos[ARMY], dir[ARMY];
    uint32_t quad[ARMY]; /* each unit's quad from the last frame: the hint */
    uint8_t status[ARMY], arrived[ARMY];
    uint32_t left; /* units still walking */
} army;

static int fail(const char *what, const qn_error *err) {
    fprintf(stderr, "big_world: %s: %s (%s)\n", what, err->message, qn_status_name(err->code));
    return 1;
}

/* Is cell (cx, cy) open, and reached by the destination? */
static bool usable(const army *a, const qn_grid *g, int cx, int cy) {
    if (cx < 0 || cy < 0 || cx >= (int)qn_grid_width(g) || cy >= (int)qn_grid_height(g))
        return false;
    if (qn_grid_cost(g, (uint32_t)cx, (uint32_t)cy) == QN_CELL_WALL) return false;
    qn_vec2 p = {(float)cx + 0.5f, (float)cy + 0.5f};
    return isfinite(qn_hfield_cost_at(a->dest, p, QN_NONE));
}

/* An army stands in a group: the usable cell nearest (x, y), then the
** usable cells round it, ring after ring, one unit each. */
static bool place(army *a, const qn_grid *g, float x, float y) {
    int w = (int)qn_grid_width(g), h = (int)qn_grid_height(g), span = w > h ? w : h;
    int cx = -1, cy = -1;
    for (int r = 0; r < span && cx < 0; r++)
        for (int dy = -r; dy <= r && cx < 0; dy++)
            for (int dx = -r; dx <= r && cx < 0; dx++)
                if ((abs(dx) == r || abs(dy) == r) && usable(a, g, (int)x + dx, (int)y + dy))
                    cx = (int)x + dx, cy = (int)y + dy;
    uint32_t n = 0;
    for (int r = 0; cx >= 0 && r < span && n < ARMY; r++)
        for (int dy = -r; dy <= r && n < ARMY; dy++)
            for (int dx = -r; dx <= r && n < ARMY; dx++) {
                if ((abs(dx) != r && abs(dy) != r) || !usable(a, g, cx + dx, cy + dy)) continue;
                a->pos[n] = (qn_vec2){(float)(cx + dx) + 0.5f, (float)(cy + dy) + 0.5f};
                a->quad[n] = QN_NONE;
                a->arrived[n++] = 0;
            }
    a->left = n;
    return n == ARMY;
}

/* Raises a wall: every open quad that the segment from a to b crosses or
** touches (sampled every half cell), blocked in one change; not a goal's
** quad, nor one with a corner within 8 units of a goal (a destination
** whose goal is walled in answers QN_E_UNREACHABLE everywhere). */
static uint32_t raise_wall(qn_mesh *m, qn_vec2 a, qn_vec2 b, const army *armies) {
    uint32_t quads[4096], n = 0, goal_quad[2] = {QN_NONE, QN_NONE};
    for (int g = 0; g < 2; g++)
        qn_mesh_locate(m, armies[g].goal, QN_NONE, &goal_quad[g]);
    float len = hypotf(b.x - a.x, b.y - a.y);
    for (float t = 0.0f; t <= len && n < 4096; t += 0.5f) {
        qn_vec2 p = {a.x + (b.x - a.x) * t / len, a.y + (b.y - a.y) * t / len};
        uint32_t q;
        if (qn_mesh_locate(m, p, QN_NONE, &q) != QN_OK || qn_mesh_quad_blocked(m, q)) continue;
        qn_vec2 k[4];
        qn_mesh_quad_corners(m, q, k);
        bool near = false;
        for (int g = 0; g < 2; g++) {
            near |= goal_quad[g] == q;
            for (int c = 0; c < 4; c++)
                near |= hypotf(k[c].x - armies[g].goal.x, k[c].y - armies[g].goal.y) < 8.0f;
        }
        if (near) continue;
        bool seen = false;
        for (uint32_t i = 0; i < n && !seen; i++) seen = quads[i] == q;
        if (!seen) quads[n++] = q;
    }
    return n && qn_mesh_set_quads_blocked(m, quads, n, true) == QN_OK ? n : 0;
}

/* One frame of an army: a batch sample, then each unit steps. A unit whose
** quad was closed under it heads for the nearest open ground. */
static void frame(army *a, const qn_mesh *m) {
    qn_hfield_sample_batch(a->dest, a->pos, a->dir, a->status, a->quad, ARMY);
    for (uint32_t i = 0; i < ARMY; i++) {
        if (a->arrived[i]) continue;
        qn_vec2 p = a->pos[i], d = a->dir[i];
        if (a->status[i] == QN_E_BLOCKED) {
            uint32_t q;
            qn_vec2 to;
            if (qn_mesh_nearest(m, p, true, &q, &to) != QN_OK) continue;
            float len = hypotf(to.x - p.x, to.y - p.y);
            float go = len < STEP ? len + 0.01f : STEP; /* a hair past the edge */
            if (len > 0.0f) d = (qn_vec2){(to.x - p.x) / len, (to.y - p.y) / len};
            a->pos[i] = (qn_vec2){p.x + go * d.x, p.y + go * d.y};
            continue;
        }
        if (a->status[i] == QN_AT_GOAL || hypotf(a->goal.x - p.x, a->goal.y - p.y) < ARRIVE) {
            a->arrived[i] = 1;
            a->left--;
            continue;
        }
        if (a->status[i] != QN_OK) continue; /* stands still this frame */
        a->pos[i] = (qn_vec2){p.x + STEP * d.x, p.y + STEP * d.y};
    }
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "data/maps/lak303d.map";
    float gx[2] = {70.5f, 20.5f}, gy[2] = {70.5f, 110.5f};
    if (argc > 5)
        gx[0] = strtof(argv[2], NULL), gy[0] = strtof(argv[3], NULL), gx[1] = strtof(argv[4], NULL),
        gy[1] = strtof(argv[5], NULL);
    qn_error err;
    qn_grid *grid = NULL;
    qn_mesh *mesh = NULL;
    qn_hier *hier = NULL;
    static army armies[2];
    if (qn_map_load_file(path, NULL, &grid, &err) != QN_OK) return fail(path, &err);
    if (qn_mesh_from_grid(grid, NULL, &mesh, &err) != QN_OK) return fail("quads", &err);
    /* Once per map: sectors, their nodes and the distances between them. */
    if (qn_hier_create(mesh, NULL, NULL, &hier, &err) != QN_OK) return fail("sector graph", &err);
    printf("big_world: %s, %u quads, %u sectors, %u nodes\n", path, qn_mesh_quad_count(mesh),
           qn_hier_sector_count(hier), qn_hier_node_count(hier));
    uint32_t w = qn_grid_width(grid), h = qn_grid_height(grid);
    for (int k = 0; k < 2; k++) {
        army *a = &armies[k];
        a->goal = (qn_vec2){gx[k], gy[k]};
        if (qn_hfield_create(hier, a->goal, RADIUS, NULL, &a->dest, &err) != QN_OK)
            return fail("destination", &err);
        /* Each army starts in the corner of the map opposite its goal. */
        float sx = a->goal.x < 0.5f * (float)w ? 0.85f * (float)w : 0.15f * (float)w;
        float sy = a->goal.y < 0.5f * (float)h ? 0.85f * (float)h : 0.15f * (float)h;
        if (!place(a, grid, sx, sy)) {
            fprintf(stderr, "big_world: no room for army %d near (%g, %g)\n", k, (double)sx,
                    (double)sy);
            return 1;
        }
        /* The sectors the army stands in, built before the first frame. */
        if (qn_hfield_prepare(a->dest, a->pos, ARMY) != QN_OK) return 1;
        printf("army %d: %u units to (%g, %g), %u local fields built, %zu bytes\n", k, ARMY,
               (double)a->goal.x, (double)a->goal.y, qn_hfield_sectors_built(a->dest),
               qn_hfield_bytes(a->dest));
    }
    uint32_t f = 0;
    for (; f < MAX_FRAMES && (armies[0].left || armies[1].left); f++) {
        if (f == WALL_AT_FRAME) {
            /* A wall across the middle fifth of the map. */
            qn_vec2 a = {0.4f * (float)w, 0.5f * (float)h}, b = {0.6f * (float)w, 0.5f * (float)h};
            uint32_t n = raise_wall(mesh, a, b, armies);
            if (qn_hier_update(hier, &err) != QN_OK) return fail("hier update", &err);
            for (int k = 0; k < 2; k++) {
                qn_status st = qn_hfield_update(armies[k].dest, &err);
                if (st != QN_OK) return fail("destination update", &err);
            }
            printf("frame %u: a wall of %u quads raised; the hier and both destinations updated\n",
                   f, n);
        }
        frame(&armies[0], mesh);
        frame(&armies[1], mesh);
    }
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        army *a = &armies[k];
        printf("army %d: %u of %u arrived; %u local fields built, %zu bytes\n", k,
               ARMY - a->left, ARMY, qn_hfield_sectors_built(a->dest), qn_hfield_bytes(a->dest));
        rc |= a->left != 0;
        qn_hfield_destroy(a->dest);
    }
    printf("%u frames\n", f);
    qn_hier_destroy(hier);
    qn_mesh_destroy(mesh);
    qn_grid_destroy(grid);
    return rc;
}
