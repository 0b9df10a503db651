/*
** bench_grid.c: grid figures for `quadnav bench`. The library's integration
** field beside two baselines written here and measured in the same run:
**  - a plain binary-heap Dijkstra (lazy deletion, same moves and costs);
**  - the articles' naive algorithm: a FIFO open list where every improved
**    neighbour is appended unless a linear scan finds it already listed.
**    With a FIFO this is a label-correcting search (cells can be improved and
**    listed again), and the scan makes it quadratic in the list length.
** Both baselines are checked against the library's values before timing.
*/
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define SQRT2 1.41421356237309504880
#define DINF ((double)INFINITY)

/* A cost grid for the baselines: row-major bytes, 255 = wall. */
typedef struct bgrid {
    uint32_t w, h;
    const uint8_t *c;
} bgrid;

static const int bdx[8] = {1, 0, -1, 0, 1, -1, -1, 1};
static const int bdy[8] = {0, 1, 0, -1, 1, 1, -1, -1};

/* Neighbour n of cell u in direction k when the move n -> u is legal (the
** same rule as the library: passable, and a diagonal needs both orthogonal
** cells passable); UINT32_MAX otherwise. */
static uint32_t mover(const bgrid *g, uint32_t u, int k) {
    int x = (int)(u % g->w) + bdx[k], y = (int)(u / g->w) + bdy[k];
    if (x < 0 || y < 0 || x >= (int)g->w || y >= (int)g->h) return UINT32_MAX;
    uint32_t n = (uint32_t)y * g->w + (uint32_t)x;
    if (g->c[n] == 255) return UINT32_MAX;
    if (k >= 4 && (g->c[(uint32_t)y * g->w + u % g->w] == 255 ||
                   g->c[(u / g->w) * g->w + (uint32_t)x] == 255))
        return UINT32_MAX;
    return n;
}

/* ---- binary-heap Dijkstra -------------------------------------------------- */

typedef struct hentry {
    double d;
    uint32_t cell;
} hentry;

typedef struct heap {
    hentry *a;
    size_t n, cap;
} heap;

static int heap_push(heap *h, double d, uint32_t cell) {
    if (h->n == h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 4096;
        hentry *na = realloc(h->a, ncap * sizeof *na);
        if (!na) return 0;
        h->a = na;
        h->cap = ncap;
    }
    size_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2].d > d) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i].d = d;
    h->a[i].cell = cell;
    return 1;
}

static hentry heap_pop(heap *h) {
    hentry top = h->a[0], last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->a[c + 1].d < h->a[c].d) c++;
        if (h->a[c].d >= last.d) break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n) h->a[i] = last;
    return top;
}

/* Fills dist (w*h) from `goal`; 0 when out of memory. */
static int heap_dijkstra(const bgrid *g, uint32_t goal, double *dist) {
    size_t n = (size_t)g->w * g->h;
    for (size_t i = 0; i < n; i++) dist[i] = DINF;
    heap h = {NULL, 0, 0};
    dist[goal] = 0.0;
    int ok = heap_push(&h, 0.0, goal);
    while (ok && h.n) {
        hentry e = heap_pop(&h);
        if (e.d > dist[e.cell]) continue; /* stale */
        double step[2] = {g->c[e.cell], g->c[e.cell] * SQRT2};
        for (int k = 0; k < 8 && ok; k++) {
            uint32_t m = mover(g, e.cell, k);
            if (m == UINT32_MAX) continue;
            double nd = e.d + step[k >= 4];
            if (nd < dist[m]) {
                dist[m] = nd;
                ok = heap_push(&h, nd, m);
            }
        }
    }
    free(h.a);
    return ok;
}

/* ---- the articles' naive open list ------------------------------------------- */

/* Fills dist (w*h) from `goal`; 0 when out of memory. The open list is a
** FIFO ring; membership is found by scanning it, as in the articles. */
static int naive_field(const bgrid *g, uint32_t goal, double *dist) {
    size_t n = (size_t)g->w * g->h;
    uint32_t *ring = malloc((n + 1) * sizeof *ring);
    if (!ring) return 0;
    for (size_t i = 0; i < n; i++) dist[i] = DINF;
    size_t head = 0, count = 0, cap = n + 1;
    dist[goal] = 0.0;
    ring[0] = goal;
    count = 1;
    while (count) {
        uint32_t u = ring[head];
        head = (head + 1) % cap;
        count--;
        double step[2] = {g->c[u], g->c[u] * SQRT2};
        for (int k = 0; k < 8; k++) {
            uint32_t m = mover(g, u, k);
            if (m == UINT32_MAX) continue;
            double nd = dist[u] + step[k >= 4];
            if (!(nd < dist[m])) continue;
            dist[m] = nd;
            int listed = 0;
            for (size_t i = 0, j = head; i < count && !listed; i++, j = (j + 1) % cap)
                listed = ring[j] == m;
            if (!listed) {
                ring[(head + count) % cap] = m;
                count++;
            }
        }
    }
    free(ring);
    return 1;
}

/* ---- helpers -------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Median milliseconds of `reps` library field builds. */
static double time_ours(const qn_grid *g, uint32_t goal, int reps, int flow) {
    double t[32];
    if (reps > 32) reps = 32;
    qn_grid_field_opts o;
    memset(&o, 0, sizeof o);
    o.no_flow = !flow;
    for (int i = 0; i < reps; i++) {
        qn_grid_field *f = NULL;
        double t0 = qn_tool_now();
        qn_status st = qn_grid_field_create(g, &goal, 1, &o, NULL, &f, NULL);
        t[i] = (qn_tool_now() - t0) * 1e3;
        qn_grid_field_destroy(f);
        if (st != QN_OK) return (double)NAN;
    }
    return median(t, reps);
}

/* Median milliseconds of `reps` runs of a baseline; NAN when it fails. */
static double time_baseline(int (*run)(const bgrid *, uint32_t, double *), const bgrid *g,
                            uint32_t goal, double *dist, int reps) {
    double t[16];
    if (reps > 16) reps = 16;
    for (int i = 0; i < reps; i++) {
        double t0 = qn_tool_now();
        if (!run(g, goal, dist)) return (double)NAN;
        t[i] = (qn_tool_now() - t0) * 1e3;
    }
    return median(t, reps);
}

/* Do a baseline's values equal the library's? Prints the first difference. */
static int same_values(const qn_grid *grid, uint32_t goal, const double *dist, const char *who) {
    qn_grid_field_opts o;
    memset(&o, 0, sizeof o);
    o.no_flow = true;
    qn_grid_field *f = NULL;
    if (qn_grid_field_create(grid, &goal, 1, &o, NULL, &f, NULL) != QN_OK) {
        qn_cli_error("bench: grid field failed");
        return 0;
    }
    uint32_t w = qn_grid_width(grid), h = qn_grid_height(grid);
    int ok = 1;
    for (uint32_t i = 0; i < w * h && ok; i++) {
        double a = qn_grid_field_cost(f, i % w, i / w), b = dist[i];
        if (isinf(a) != isinf(b) || (!isinf(a) && fabs(a - b) > 1e-9 * (1.0 + b))) {
            qn_cli_error("bench: %s and the library differ at cell (%u, %u): %.10g vs %.10g", who,
                         i % w, i / w, b, a);
            ok = 0;
        }
    }
    qn_grid_field_destroy(f);
    return ok;
}

static qn_grid *open_grid(uint32_t n, uint8_t **costs) {
    *costs = malloc((size_t)n * n);
    if (!*costs) return NULL;
    memset(*costs, 1, (size_t)n * n);
    qn_grid_desc d = {n, n, *costs, 1.0f, {0.0f, 0.0f}};
    qn_grid *g = NULL;
    qn_grid_create(&d, NULL, &g, NULL);
    return g;
}

/* ---- figures -------------------------------------------------------------------- */

/* The naive list on the same grid: its time, checked values, and its ratio
** to `ours` (the library's time reported for this grid). */
static int bench_naive(qn_bench_report *r, const qn_grid *g, const bgrid *bg, uint32_t goal,
                       double *dist, const char *tag, double ours, int quick) {
    char key[64], label[96];
    double t0 = qn_tool_now();
    if (!naive_field(bg, goal, dist)) return 0;
    double naive_ms = (qn_tool_now() - t0) * 1e3;
    if (!same_values(g, goal, dist, "naive open list")) return 0;
    snprintf(key, sizeof key, "grid_%s_naive_ms", tag);
    snprintf(label, sizeof label, "  baseline: naive FIFO open list, linear scan%s",
             quick ? " (quick: 128x128)" : "");
    qn_bench_add(r, key, naive_ms, "ms", label);
    snprintf(key, sizeof key, "grid_%s_naive_ratio", tag);
    qn_bench_add(r, key, naive_ms / ours, "x", "  naive time / our time");
    return 1;
}

/* Open n x n grid, goal at the centre: ours beside the heap, and with
** `naive` beside the naive list too; else also ours with both flows. */
static int bench_open(qn_bench_report *r, uint32_t n, const char *tag, int naive, int quick) {
    uint8_t *c = NULL;
    qn_grid *g = open_grid(n, &c);
    double *dist = malloc((size_t)n * n * sizeof *dist);
    uint32_t goal = (n / 2) * n + n / 2;
    bgrid bg = {n, n, c};
    char key[64], label[96];
    if (!g || !dist) qn_cli_error("bench: out of memory for a %ux%u grid", n, n);
    int ok = g && dist && heap_dijkstra(&bg, goal, dist) &&
             same_values(g, goal, dist, "heap Dijkstra");
    if (ok) {
        double ours = time_ours(g, goal, quick ? 3 : 15, 0);
        double heap_ms = time_baseline(heap_dijkstra, &bg, goal, dist, quick ? 1 : 3);
        snprintf(key, sizeof key, "grid_%s_ms", tag);
        snprintf(label, sizeof label, "grid field, open %ux%u, octile, centre goal", n, n);
        qn_bench_add(r, key, ours, "ms", label);
        snprintf(key, sizeof key, "grid_%s_heap_ms", tag);
        qn_bench_add(r, key, heap_ms, "ms", "  baseline: binary-heap Dijkstra");
        snprintf(key, sizeof key, "grid_%s_heap_ratio", tag);
        qn_bench_add(r, key, heap_ms / ours, "x", "  heap time / our time");
        if (naive) {
            ok = bench_naive(r, g, &bg, goal, dist, tag, ours, quick);
        } else {
            snprintf(key, sizeof key, "grid_%s_flow_ms", tag);
            qn_bench_add(r, key, time_ours(g, goal, quick ? 1 : 5, 1), "ms",
                         "  same, with both flow fields (dir8 + vector)");
        }
    }
    qn_grid_destroy(g);
    free(c);
    free(dist);
    return ok;
}

/* Do two fields hold the same values, bit for bit? */
static int same_fields(const qn_grid_field *a, const qn_grid_field *b, uint32_t n) {
    for (uint32_t i = 0; i < n * n; i++) {
        double x = qn_grid_field_cost(a, i % n, i / n), y = qn_grid_field_cost(b, i % n, i / n);
        if (memcmp(&x, &y, sizeof x) != 0 ||
            qn_grid_field_dir(a, i % n, i / n) != qn_grid_field_dir(b, i % n, i / n)) {
            qn_cli_error("bench: repair and rebuild differ at cell (%u, %u)", i % n, i / n);
            return 0;
        }
    }
    return 1;
}

/* Stamps the 4x4 block in the middle of an n x n grid (n >= 8). */
static int stamp_block(qn_grid *g, uint32_t n, uint8_t cost) {
    return qn_grid_stamp(g, n / 2 - 2, n / 2 - 2, n / 2 + 2, n / 2 + 2, cost) == QN_OK;
}

/* One round: the block goes up, the field is repaired (timed), a fresh
** field is built on the same grid (timed) and compared, the block comes
** down again and the field is repaired back (untimed). */
static int repair_round(qn_grid *g, qn_grid_field *f, uint32_t n, uint32_t goal, double *rep,
                        double *reb) {
    if (!stamp_block(g, n, QN_CELL_WALL)) return 0;
    double t0 = qn_tool_now();
    qn_status st = qn_grid_field_update(f, NULL);
    *rep = (qn_tool_now() - t0) * 1e3;
    qn_grid_field *fresh = NULL;
    t0 = qn_tool_now();
    if (st == QN_OK) st = qn_grid_field_create(g, &goal, 1, NULL, NULL, &fresh, NULL);
    *reb = (qn_tool_now() - t0) * 1e3;
    int ok = st == QN_OK && same_fields(f, fresh, n);
    qn_grid_field_destroy(fresh);
    return ok && stamp_block(g, n, 1) && qn_grid_field_update(f, NULL) == QN_OK;
}

/* Repair against rebuild on an open n x n grid, both with flows: a 4x4 wall
** block stamped in the middle, the goal a quarter of the way in. */
static int bench_repair(qn_bench_report *r, uint32_t n, int quick) {
    uint8_t *c = NULL;
    qn_grid *g = open_grid(n, &c);
    uint32_t goal = (n / 4) * n + n / 4;
    qn_grid_field *f = NULL;
    int ok = g && qn_grid_field_create(g, &goal, 1, NULL, NULL, &f, NULL) == QN_OK;
    double rep[32], reb[32];
    int reps = quick ? 3 : 15;
    for (int i = 0; i < reps && ok; i++) ok = repair_round(g, f, n, goal, &rep[i], &reb[i]);
    if (ok) {
        char key[64], label[96];
        double mrep = median(rep, reps), mreb = median(reb, reps);
        snprintf(key, sizeof key, "grid_repair_ms_%u", n);
        snprintf(label, sizeof label, "grid repair, open %ux%u, 4x4 wall block stamped", n, n);
        qn_bench_add(r, key, mrep, "ms", label);
        snprintf(key, sizeof key, "grid_rebuild_ms_%u", n);
        qn_bench_add(r, key, mreb, "ms", "  baseline: full build of the same field (flows too)");
        snprintf(key, sizeof key, "grid_repair_ratio_%u", n);
        qn_bench_add(r, key, mreb / mrep, "x", "  rebuild time / repair time");
    } else {
        qn_cli_error("bench: grid repair failed");
    }
    qn_grid_field_destroy(f);
    qn_grid_destroy(g);
    free(c);
    return ok;
}

/* The passable cell nearest the map's centre (a fixed, fair goal). */
static uint32_t centre_cell(const qn_grid *g) {
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g), best = UINT32_MAX;
    double bd = DINF;
    const uint8_t *c = qn_grid_costs(g);
    for (uint32_t i = 0; i < w * h; i++) {
        double dx = (double)(i % w) - w / 2.0, dy = (double)(i / w) - h / 2.0;
        if (c[i] != QN_CELL_WALL && dx * dx + dy * dy < bd) {
            bd = dx * dx + dy * dy;
            best = i;
        }
    }
    return best;
}

/* The goal of the last (longest) row of the map's scenario file, found
** beside the map or in the matching scenarios/ folder; the passable cell
** nearest the centre when there is none. The label says which. */
static uint32_t pick_goal(const qn_grid *g, const char *map_path, const char **how) {
    char path[4400];
    const char *m = strstr(map_path, "/maps/");
    for (int i = 0; i < 2; i++) {
        if (i == 0)
            snprintf(path, sizeof path, "%s.scen", map_path);
        else if (m)
            snprintf(path, sizeof path, "%.*s/scenarios/%s.scen", (int)(m - map_path), map_path,
                     m + 6);
        else
            break;
        qn_scen *s = NULL;
        if (qn_scen_load_file(path, NULL, &s, NULL) != QN_OK) continue;
        const qn_scen_row *r = qn_scen_row_at(s, qn_scen_row_count(s) - 1);
        uint32_t goal = UINT32_MAX;
        if (r && r->goal_x < qn_grid_width(g) && r->goal_y < qn_grid_height(g))
            goal = r->goal_y * qn_grid_width(g) + r->goal_x;
        qn_scen_destroy(s);
        if (goal != UINT32_MAX && qn_grid_costs(g)[goal] != QN_CELL_WALL) {
            *how = "goal of the last scenario row";
            return goal;
        }
    }
    *how = "goal near the centre";
    return centre_cell(g);
}

/* Folder of the MovingAI copy: $QN_SHARED_DIR/data/movingai, else
** ../shared/data/movingai; NULL when neither holds maps. */
static const char *shared_maps(char *buf, size_t cap) {
    const char *env = getenv("QN_SHARED_DIR");
    const char *roots[2] = {env && *env ? env : NULL, "../shared"};
    for (int i = 0; i < 2; i++) {
        if (!roots[i]) continue;
        snprintf(buf, cap, "%s/data/movingai/maps/dao/arena.map", roots[i]);
        FILE *f = fopen(buf, "rb");
        if (!f) continue;
        fclose(f);
        snprintf(buf, cap, "%s/data/movingai/maps", roots[i]);
        return buf;
    }
    return NULL;
}

static int bench_map(qn_bench_report *r, const char *path, const char *name, int quick) {
    qn_grid *g = NULL;
    qn_error err;
    if (qn_map_load_file(path, NULL, &g, &err) != QN_OK) {
        qn_cli_error("bench: %s", err.message);
        return 0;
    }
    const char *how;
    uint32_t w = qn_grid_width(g), h = qn_grid_height(g), goal = pick_goal(g, path, &how);
    bgrid bg = {w, h, qn_grid_costs(g)};
    double *dist = malloc((size_t)w * h * sizeof *dist);
    int ok = dist && goal != UINT32_MAX && heap_dijkstra(&bg, goal, dist) &&
             same_values(g, goal, dist, "heap Dijkstra");
    if (ok) {
        char key[64], label[96], id[40];
        size_t k = 0;
        for (const char *p = name; *p && k + 1 < sizeof id; p++)
            id[k++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
        id[k] = '\0';
        snprintf(key, sizeof key, "grid_map_%s_ms", id);
        snprintf(label, sizeof label, "grid field, map %s (%ux%u), %s", name, w, h, how);
        qn_bench_add(r, key, time_ours(g, goal, quick ? 3 : 11, 0), "ms", label);
        snprintf(key, sizeof key, "grid_map_%s_heap_ms", id);
        qn_bench_add(r, key, time_baseline(heap_dijkstra, &bg, goal, dist, quick ? 1 : 3), "ms",
                     "  baseline: binary-heap Dijkstra");
    }
    free(dist);
    qn_grid_destroy(g);
    return ok;
}

/* Real maps: three from the shared MovingAI copy when present, else the
** bundled ones. */
static int bench_maps(qn_bench_report *r, int quick) {
    static const char *const shared[][2] = {
        {"dao/orz900d.map", "orz900d"}, {"sc1/Aurora.map", "Aurora"},
        {"mazes/maze512-1-0.map", "maze512-1-0"}};
    static const char *const bundled[][2] = {{"Berlin_0_256.map", "Berlin_0_256"},
                                             {"lak303d.map", "lak303d"}};
    char dir[4096], path[4352];
    const char *root = shared_maps(dir, sizeof dir);
    int ok = 1;
    size_t n = root ? 3 : 2;
    for (size_t i = 0; i < n && ok; i++) {
        if (root)
            snprintf(path, sizeof path, "%s/%s", root, shared[i][0]);
        else
            snprintf(path, sizeof path, "%s/maps/%s", qn_cli_data_dir(), bundled[i][0]);
        ok = bench_map(r, path, root ? shared[i][1] : bundled[i][1], quick);
    }
    return ok;
}

int qn_tool_bench_grid(qn_bench_report *r, int quick) {
    if (!bench_open(r, 1024, "open1024", 0, quick)) return 1;
    if (!bench_repair(r, 1024, quick)) return 1;
    /* The naive list is quadratic: a full 512x512 run takes seconds. */
    if (!bench_open(r, quick ? 128 : 512, "open512", 1, quick)) return 1;
    return bench_maps(r, quick) ? 0 : 1;
}
