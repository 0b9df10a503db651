/*
** bench_crowd.c: crowd figures for `quadnav bench`. The circle benchmark
** (units of radius 0.5 on a ring walk to the antipodes, 10 neighbours),
** timed over the first steps (best of 3 runs, CPU time of the thread); the
** same steps on two threads (wall time) give the speedup. Baseline in the
** same run: on the doorway scenario (1,000 units following one instance),
** a step beside sampling the instance alone for the same units
** (qn_field_sample_batch), the part of a step every crowd pays.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowd_scene.h"
#include "tool.h"

/* Mean microseconds per step over `steps` steps of a fresh circle scenario,
** best of 3: CPU time of the thread, or wall time when `wall`. */
static double time_circle(const char *name, uint32_t steps, uint32_t threads, bool wall,
                          double *units) {
    qn_crowd_scene s;
    if (qn_crowd_scene_build(&s, name, 0, 1, NULL)) return qn_crowd_scene_free(&s), -1.0;
    *units = s.units;
    /* Walk most of the way in so the window includes the crowded middle. */
    double best = 1e300;
    for (uint32_t rep = 0; rep < 3; rep++) {
        double t0 = wall ? qn_tool_now() : qn_crowd_scene_clock(threads);
        for (uint32_t i = 0; i < steps; i++) {
            qn_status st = threads > 1 ? qn_crowd_step_parallel(s.crowd, s.dt, threads)
                                       : qn_crowd_step(s.crowd, s.dt);
            if (st != QN_OK) return qn_crowd_scene_free(&s), -1.0;
        }
        double us = ((wall ? qn_tool_now() : qn_crowd_scene_clock(threads)) - t0) * 1e6 / steps;
        best = us < best ? us : best;
    }
    qn_crowd_scene_free(&s);
    return best;
}

/* Doorway, 1,000 units: microseconds per step and per batch sample of the
** same positions. */
static bool time_doorway(uint32_t steps, double *step_us, double *sample_us) {
    qn_crowd_scene s;
    if (qn_crowd_scene_build(&s, "doorway", 0, 1, NULL)) return qn_crowd_scene_free(&s), false;
    double t0 = qn_crowd_scene_clock(1);
    for (uint32_t i = 0; i < steps; i++) qn_crowd_step(s.crowd, s.dt);
    *step_us = (qn_crowd_scene_clock(1) - t0) * 1e6 / steps;
    uint32_t n = qn_crowd_id_bound(s.crowd);
    qn_vec2 *pos = calloc(n, sizeof *pos), *dir = calloc(n, sizeof *dir);
    uint32_t *quads = calloc(n, sizeof *quads);
    bool ok = pos && dir && quads;
    for (uint32_t id = 0; ok && id < n; id++) {
        qn_crowd_unit u;
        qn_crowd_get(s.crowd, id, &u);
        pos[id] = u.position;
        quads[id] = u.quad;
    }
    t0 = qn_crowd_scene_clock(1);
    for (uint32_t i = 0; ok && i < steps; i++)
        qn_field_sample_batch(s.fields[0], pos, dir, NULL, quads, n);
    *sample_us = (qn_crowd_scene_clock(1) - t0) * 1e6 / steps;
    free(pos);
    free(dir);
    free(quads);
    qn_crowd_scene_free(&s);
    return ok;
}

int qn_tool_bench_crowd(qn_bench_report *r, int quick) {
    uint32_t steps = quick ? 5 : 100;
    double n1 = 0, n2 = 0;
    double t1 = time_circle("circle1000", steps, 1, false, &n1);
    double t10 = time_circle("circle10000", steps, 1, false, &n2);
    /* The speedup compares wall times, one thread against two. */
    double w10 = time_circle("circle10000", steps, 1, true, &n2);
    double w10x2 = time_circle("circle10000", steps, 2, true, &n2);
    double door_step, door_sample;
    if (t1 < 0 || t10 < 0 || w10 < 0 || w10x2 < 0 ||
        !time_doorway(steps, &door_step, &door_sample))
        return 1;
    qn_bench_add(r, "crowd_doorway_step_us_1000", door_step, "us",
                 "crowd step, doorway, 1,000 units following one instance");
    qn_bench_add(r, "crowd_doorway_sample_us_1000", door_sample, "us",
                 "baseline: sampling the instance alone for the same units");
    qn_bench_add(r, "crowd_step_us_1000", t1, "us",
                 "crowd step, circle of 1,000 (RVO2 on such machines: 700-1080)");
    qn_bench_add(r, "crowd_step_us_10000", t10, "us",
                 "crowd step, circle of 10,000 (RVO2 on such machines: 7700-10000)");
    qn_bench_add(r, "crowd_speedup_2threads", w10 / w10x2, "x",
                 "crowd step, 10,000 units, 2 threads over 1");
    return 0;
}
