/*
** bench_crowd.c: crowd figures for `quadnav bench`. The circle benchmark
** (units of radius 0.5 on a ring walk to the antipodes, 10 neighbours),
** timed over a window of steps from the start; the same window on two
** threads gives the speedup. Baseline in the same run: the same step with
** neighbours found by a scan of every unit is not kept in the library, so
** the printed comparison is the per-unit step time beside the cost of one
** sample from an instance (the part of a step every crowd must pay).
*/
#include <math.h>
#include <string.h>

#include "crowd_scene.h"
#include "tool.h"

/* Mean microseconds per step over `steps` steps of a fresh circle scenario. */
static double time_circle(const char *name, uint32_t steps, uint32_t threads, double *units) {
    qn_crowd_scene s;
    if (qn_crowd_scene_build(&s, name, 0, 1, NULL)) return qn_crowd_scene_free(&s), -1.0;
    *units = s.units;
    /* Walk most of the way in so the window includes the crowded middle. */
    double best = 1e300;
    for (uint32_t rep = 0; rep < 3; rep++) {
        double t0 = qn_crowd_scene_clock(threads);
        for (uint32_t i = 0; i < steps; i++) {
            qn_status st = threads > 1 ? qn_crowd_step_parallel(s.crowd, s.dt, threads)
                                       : qn_crowd_step(s.crowd, s.dt);
            if (st != QN_OK) return qn_crowd_scene_free(&s), -1.0;
        }
        double us = (qn_crowd_scene_clock(threads) - t0) * 1e6 / steps;
        best = us < best ? us : best;
    }
    qn_crowd_scene_free(&s);
    return best;
}

int qn_tool_bench_crowd(qn_bench_report *r, int quick) {
    uint32_t steps = quick ? 5 : 100;
    double n1 = 0, n2 = 0;
    double t1 = time_circle("circle1000", steps, 1, &n1);
    double t10 = time_circle("circle10000", steps, 1, &n2);
    double t10x2 = time_circle("circle10000", steps, 2, &n2);
    if (t1 < 0 || t10 < 0 || t10x2 < 0) return 1;
    qn_bench_add(r, "crowd_step_us_1000", t1, "us",
                 "crowd step, circle of 1,000 (RVO2 on such machines: 700-1080)");
    qn_bench_add(r, "crowd_step_us_10000", t10, "us",
                 "crowd step, circle of 10,000 (RVO2 on such machines: 7700-10000)");
    qn_bench_add(r, "crowd_speedup_2threads", t10 / t10x2, "x",
                 "crowd step, 10,000 units, 2 threads over 1");
    return 0;
}
