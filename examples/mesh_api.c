/*
** mesh_api.c: a mesh built through the API, no JSON.
**
** An L-shaped corridor of three quads (y grows upward, so every quad is
** counter-clockwise), with a muddy detour: the field steers a group of units
** round the corner to the goal. The units are sampled through
** qn_field_sample_jobs with a stand-in for a game's job system, here one
** that runs the jobs one after another in reverse order. Exit status 0
** when every unit arrives.
**
**      y
**     10 +-----+
**        |  2  |           quad 2: 0..4 x 6..10 (goal at its top)
**      6 +-----+-----+
**        |  0  |  1  |     quad 0: 0..4 x 0..6, quad 1: 4..12 x 0..6 (mud)
**      0 +-----+-----+ x
**        0     4    12
*/
#include <quadnav.h>

#include <math.h>
#include <stdio.h>

#define UNITS 16u
#define STEP 0.25f
#define ARRIVE 0.3f /* a unit this close to the goal has arrived */

/* A job runner as a game's job system would provide it (see qn_jobs): it
** must run every job once and return when all are done. */
static void run_jobs_reversed(void *ud, uint32_t job_count, qn_job_fn fn, void *job_data) {
    uint32_t *calls = ud;
    for (uint32_t j = job_count; j-- > 0;) {
        fn(job_data, j);
        (*calls)++;
    }
}

static qn_status build_mesh(qn_mesh **mesh, qn_error *err) {
    static const qn_vec2 vertices[] = {{0, 0}, {4, 0}, {4, 6}, {0, 6},  /* quad 0 */
                                       {12, 0}, {12, 6},                 /* quad 1 */
                                       {4, 10}, {0, 10}};                /* quad 2 */
    static const uint32_t quads[] = {0, 1, 2, 3, /* counter-clockwise: positive area */
                                     1, 4, 5, 2,
                                     3, 2, 6, 7};
    static const float costs[] = {1.0f, 3.0f, 1.0f}; /* quad 1 is mud */
    qn_mesh_desc desc = {0}; /* zero: no links given, adjacency from shared edges */
    desc.vertices = vertices;
    desc.vertex_count = 8;
    desc.quads = quads;
    desc.quad_count = 3;
    desc.costs = costs;
    return qn_mesh_create(&desc, NULL, mesh, err);
}

/* Units start in the mud (quad 1) and walk until all are at the goal. */
static int walk(const qn_field *field, qn_vec2 goal) {
    qn_vec2 pos[UNITS], dir[UNITS];
    uint8_t status[UNITS];
    uint32_t quad[UNITS], calls = 0, arrived = 0, frame;
    qn_jobs jobs = {run_jobs_reversed, &calls};
    for (uint32_t i = 0; i < UNITS; i++) {
        pos[i].x = 6.0f + 0.4f * (float)(i % 4);
        pos[i].y = 1.0f + 0.4f * (float)(i / 4);
        quad[i] = QN_NONE;
    }
    for (frame = 0; frame < 1000 && arrived < UNITS; frame++) {
        if (qn_field_sample_jobs(field, pos, dir, status, quad, UNITS, 4, &jobs) != QN_OK) return 1;
        arrived = 0;
        for (uint32_t i = 0; i < UNITS; i++) {
            if (status[i] == QN_AT_GOAL || hypotf(pos[i].x - goal.x, pos[i].y - goal.y) <= ARRIVE) {
                arrived++;
                continue;
            }
            pos[i].x += dir[i].x * STEP;
            pos[i].y += dir[i].y * STEP;
        }
    }
    printf("%u of %u units arrived after %u frames (%u jobs run)\n", arrived, UNITS, frame, calls);
    return arrived == UNITS ? 0 : 1;
}

int main(void) {
    qn_mesh *mesh;
    qn_field *field = NULL;
    qn_error err;
    qn_vec2 goal = {2, 9};
    int rc = 1;
    if (build_mesh(&mesh, &err) != QN_OK) {
        fprintf(stderr, "mesh_api: %s\n", err.message);
        return 1;
    }
    printf("%u quads, %u portals\n", qn_mesh_quad_count(mesh), qn_mesh_portal_count(mesh));
    if (qn_field_create(mesh, &goal, 1, NULL, NULL, &field, &err) != QN_OK)
        fprintf(stderr, "mesh_api: %s\n", err.message);
    else
        rc = walk(field, goal);
    if (rc == 0)
        printf("cost from the far end of the mud: %.2f\n",
               (double)qn_field_cost_at(field, (qn_vec2){11, 3}, QN_NONE));
    qn_field_destroy(field);
    qn_mesh_destroy(mesh);
    return rc;
}
