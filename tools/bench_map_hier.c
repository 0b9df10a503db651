/*
** bench_map_hier.c: the hierarchical-instance part of `quadnav bench --map`
** (quad mode): the one-time sector graph, a new destination answering the
** first samples of the 1,000 units the grid part placed (10 groups of 100),
** its memory after them, its sampling of those units once their sectors
** are built beside a full exact instance's, and the distance 100 of those
** units walk with it beside the distance they walk with a full exact
** instance.
*/
#include <math.h>
#include <stdio.h>

#include "tool.h"

static float dist(qn_vec2 a, qn_vec2 b) { return hypotf(a.x - b.x, a.y - b.y); }

typedef qn_status (*quad_sampler)(const void *field, qn_vec2 p, uint32_t *hint, qn_vec2 *dir);
static qn_status sample_exact(const void *f, qn_vec2 p, uint32_t *hint, qn_vec2 *dir) {
    return qn_field_sample(f, p, hint, dir);
}
static qn_status sample_hier(const void *f, qn_vec2 p, uint32_t *hint, qn_vec2 *dir) {
    return qn_hfield_sample(f, p, hint, dir);
}

/* Distance walked (steps of 0.2) by every tenth unit that arrives; arrived
** counts them, bits[i / 10] says which. */
static double walk(const qn_bench_map_ctx *c, quad_sampler s, const void *f, uint8_t *ok,
                   uint32_t *arrived) {
    double sum = 0.0;
    *arrived = 0;
    for (uint32_t i = 0; i < 1000; i += 10) {
        qn_vec2 p = c->units[i], d;
        uint32_t hint = QN_NONE;
        double walked = 0.0;
        ok[i / 10] = 0;
        for (uint32_t k = 0; k < 400000; k++) {
            qn_status st = s(f, p, &hint, &d);
            if (st == QN_AT_GOAL || dist(p, c->goal) < 0.2f) {
                (*arrived)++;
                ok[i / 10] = 1;
                sum += walked + (double)dist(p, c->goal);
                break;
            }
            if (st != QN_OK) break;
            p = (qn_vec2){p.x + 0.2f * d.x, p.y + 0.2f * d.y};
            walked += 0.2;
        }
    }
    return sum;
}

/* Nanoseconds per unit of one pass over the 1,000 units with sampler s
** (hints kept from a first pass), best of 9 passes; -1 when a sample
** fails. */
static double sample_ns(quad_sampler s, const void *f, const qn_vec2 *units, uint32_t *hints) {
    double best = -1.0;
    for (uint32_t i = 0; i < 1000; i++)
        hints[i] = QN_NONE;
    for (int k = 0; k < 10; k++) {
        double t0 = qn_tool_now();
        for (uint32_t i = 0; i < 1000; i++) {
            qn_vec2 d;
            qn_status st = s(f, units[i], &hints[i], &d);
            if (st != QN_OK && st != QN_AT_GOAL) return -1.0;
        }
        double ns = (qn_tool_now() - t0) * 1e9 / 1000.0;
        if (k > 0 && (best < 0.0 || ns < best)) best = ns; /* the first pass fills the hints */
    }
    return best;
}

int qn_tool_bench_map_hier(qn_bench_map_ctx *c, qn_bench_report *r) {
    qn_error e;
    qn_hier *h = NULL;
    double t0 = qn_tool_now();
    qn_status st = qn_hier_create(c->mesh, NULL, NULL, &h, &e);
    double build = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK) return qn_cli_error("bench: sector graph: %s", e.message);
    qn_hfield *f = NULL;
    static qn_vec2 dirs[1000];
    t0 = qn_tool_now();
    st = qn_hfield_create(h, c->goal, 0.0f, NULL, &f, &e);
    double dest = (qn_tool_now() - t0) * 1e3;
    if (st == QN_OK) st = qn_hfield_sample_batch(f, c->units, dirs, NULL, NULL, 1000);
    double first = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK) {
        qn_hfield_destroy(f);
        qn_hier_destroy(h);
        return qn_cli_error("bench: hierarchical instance: %s", qn_status_name(st));
    }
    qn_bench_add(r, "hier_build_ms", build, "ms", "hierarchical: sector graph (once per mesh)");
    qn_bench_add(r, "hier_sectors", qn_hier_sector_count(h), "", "hierarchical: sectors");
    qn_bench_add(r, "hier_nodes", qn_hier_node_count(h), "", "hierarchical: border nodes");
    qn_bench_add(r, "hier_graph_bytes", (double)qn_hier_bytes(h), "B",
                 "hierarchical: sector graph bytes (shared by destinations)");
    qn_bench_add(r, "hier_destination_ms", dest, "ms", "hierarchical: node search of a new destination");
    qn_bench_add(r, "hier_first_1000_ms", first, "ms",
                 "hierarchical: new destination, first samples of 1,000 units (10 groups), lazy builds included");
    qn_bench_add(r, "hier_sectors_built", qn_hfield_sectors_built(f), "",
                 "hierarchical: local fields built by those samples");
    qn_bench_add(r, "hier_instance_bytes", (double)qn_hfield_bytes(f), "B",
                 "hierarchical: bytes per destination after those samples");
    qn_bench_add(r, "hier_nodes_settled", qn_hfield_nodes_settled(f), "",
                 "hierarchical: nodes settled by those samples");
    size_t meshes = qn_hier_bytes(h);
    /* A second new destination for the same units: the sectors' meshes
    ** are the first one's (the hier keeps them), only its fields are built. */
    qn_hfield *fn = NULL;
    t0 = qn_tool_now();
    qn_status stn = qn_hfield_create(h, c->goal, 0.0f, NULL, &fn, &e);
    if (stn == QN_OK) stn = qn_hfield_sample_batch(fn, c->units, dirs, NULL, NULL, 1000);
    double next = (qn_tool_now() - t0) * 1e3;
    qn_hfield_destroy(fn);
    if (stn == QN_OK)
        qn_bench_add(r, "hier_next_1000_ms", next, "ms",
                     "  same units, a second new destination (sector meshes already built)");
    /* The first samples again in two jobs (five groups each) on the
    ** built-in runner's two threads, for another new destination, cold:
    ** the first destination goes and the meshes it used with it (trim). */
    qn_hfield_destroy(f);
    qn_hier_trim(h);
    qn_bench_add(r, "hier_mesh_bytes", (double)(meshes - qn_hier_bytes(h)), "B",
                 "hierarchical: the sector meshes those samples built (the hier's, shared)");
    t0 = qn_tool_now();
    st = qn_hfield_create(h, c->goal, 0.0f, NULL, &f, &e);
    if (st == QN_OK) st = qn_hfield_sample_jobs(f, c->units, dirs, NULL, NULL, 1000, 2, NULL);
    double first2 = (qn_tool_now() - t0) * 1e3;
    if (st != QN_OK) {
        qn_hfield_destroy(f);
        qn_hier_destroy(h);
        return qn_cli_error("bench: hierarchical instance: %s", qn_status_name(st));
    }
    qn_bench_add(r, "hier_first_1000_ms_jobs2", first2, "ms",
                 "  same, another new destination, samples in 2 jobs on 2 threads");
    /* Sampling once the units' sectors are built, as a game's later
    ** frames do: the same positions again (best of 9 passes); the full
    ** instance samples them below, beside it. */
    static uint32_t hints[1000];
    double hns = sample_ns(sample_hier, f, c->units, hints);
    if (hns >= 0.0)
        qn_bench_add(r, "hier_sample_ns", hns, "ns",
                     "hierarchical: sampling the same 1,000 units again, sectors built (per unit)");
    /* The hierarchical walks first, then the full instance's: the two are
    ** never resident together (the bench's peak is a game's, which keeps
    ** one or the other). */
    static uint8_t okh[100], okf[100];
    uint32_t ah = 0, af = 0;
    double wh = walk(c, sample_hier, f, okh, &ah);
    qn_bench_add(r, "hier_arrived_100", ah, "", "hierarchical: of 100 units walked, arrived");
    qn_bench_add(r, "hier_instance_bytes_walked", (double)qn_hfield_bytes(f), "B",
                 "hierarchical: bytes per destination once those units have walked to the goal");
    qn_bench_add(r, "hier_sectors_walked", qn_hfield_sectors_built(f), "",
                 "hierarchical: local fields built once they have walked");
    qn_hfield_destroy(f);
    qn_hier_destroy(h);
    qn_field *full = NULL;
    st = qn_field_create(c->mesh, &c->goal, 1, NULL, NULL, &full, &e);
    if (st == QN_OK) {
        double fns = sample_ns(sample_exact, full, c->units, hints);
        if (fns >= 0.0)
            qn_bench_add(r, "full_sample_ns", fns, "ns",
                         "  baseline: a full exact instance sampling the same units");
        double wf = walk(c, sample_exact, full, okf, &af);
        qn_bench_add(r, "hier_stretch_ratio", ah == af && wf > 0.0 ? wh / wf : (double)NAN, "",
                     "hierarchical: distance walked / with a full exact instance, same units");
    }
    qn_field_destroy(full);
    return st == QN_OK ? 0 : qn_cli_error("bench: full instance: %s", e.message);
}
