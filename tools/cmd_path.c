/*
** cmd_path.c: `quadnav path LEVEL|MAP --from X,Y --to X,Y [--radius R] [--json]`.
** One unit's own path: A* over the quads with their costs, string-pulled
** through the corridor of portals (qn_path_find).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static const char path_usage[] =
    "usage: quadnav path LEVEL|MAP --from X,Y --to X,Y [--radius R] [--json]\n"
    "  The shortest path from --from to --to for an agent of radius R (default\n"
    "  0.25, as in every command): A* over the quads with their costs, string-pulled through the\n"
    "  corridor of portals. Prints the waypoints, one 'x y' per line, then\n"
    "  'length L' (the polyline's euclidean length) and 'cost C' (the A* cost,\n"
    "  quad costs included). With --json, one object with the keys waypoints\n"
    "  ([[x,y],...]), length and cost.\n"
    "  LEVEL is a level JSON file. MAP is a MovingAI map (recognised by its\n"
    "  content, as in every command), imported to quads; X,Y are then cell coordinates and\n"
    "  the path joins the cells' centres (x + 0.5, y + 0.5).\n";

typedef struct path_args {
    const char *file, *from, *to, *radius;
    bool json;
} path_args;

enum { P_FROM, P_TO, P_RADIUS, P_JSON };
static const qn_cli_option path_options[] = {
    [P_FROM] = {"from", 0, true},
    [P_TO] = {"to", 0, true},
    [P_RADIUS] = {"radius", 0, true},
    [P_JSON] = {"json", 0, false},
};
static const qn_cli_spec path_spec = QN_CLI_SPEC("path", path_usage, path_options, 1, 1, "LEVEL|MAP");

/* The world to search: a level's mesh, or a map's decomposition (then
** --from and --to are cells). */
typedef struct world {
    qn_terrain t;
    const qn_grid *grid; /* the map's grid, NULL for a level */
    const qn_mesh *mesh;
} world;

static void world_free(world *w) { qn_terrain_free(&w->t); }

static bool world_load(const char *path, world *w) {
    memset(w, 0, sizeof *w);
    if (!qn_terrain_load(path, true, false, &w->t)) return false;
    w->mesh = w->t.mesh;
    w->grid = w->t.is_map ? w->t.grid : NULL;
    return true;
}

/* Reads --from/--to: a point, or on a map a cell whose centre is the point.
** Returns 0, 1 (failure, reported) or 2 (usage error, reported). */
static int read_end(const world *w, const char *opt, const char *arg, qn_vec2 *p) {
    if (!arg) return qn_cli_error("path: %s X,Y is required (see quadnav path --help)", opt), 2;
    if (!qn_cli_parse_vec(arg, p)) return qn_cli_error("path: %s %s: not X,Y", opt, arg), 2;
    if (!w->grid) return 0;
    if (p->x != floorf(p->x) || p->y != floorf(p->y) || p->x < 0.0f || p->y < 0.0f)
        return qn_cli_error("path: %s %s: not a cell (whole numbers X,Y >= 0)", opt, arg), 2;
    uint32_t x = (uint32_t)p->x, y = (uint32_t)p->y;
    if (x >= qn_grid_width(w->grid) || y >= qn_grid_height(w->grid))
        return qn_cli_error("path: %s %s: outside the %ux%u map", opt, arg, qn_grid_width(w->grid),
                            qn_grid_height(w->grid)),
               1;
    if (qn_grid_cost(w->grid, x, y) == QN_CELL_WALL)
        return qn_cli_error("path: %s %s: the cell is a wall", opt, arg), 1;
    *p = (qn_vec2){p->x + 0.5f, p->y + 0.5f};
    return 0;
}

/* A one-line reason for a failed search, naming the end at fault. */
static int report_failure(const world *w, qn_status st, const path_args *a, float radius) {
    const char *names[2] = {"--from", "--to"}, *args[2] = {a->from, a->to};
    for (int i = 0; i < 2 && (st == QN_E_OUTSIDE || st == QN_E_BLOCKED); i++) {
        qn_vec2 p;
        uint32_t q;
        read_end(w, names[i], args[i], &p);
        if (qn_mesh_locate(w->mesh, p, QN_NONE, &q) != QN_OK)
            return qn_cli_error("path: %s %s: outside every quad (%s)", names[i], args[i], qn_status_name(st));
        if (qn_mesh_quad_blocked(w->mesh, q))
            return qn_cli_error("path: %s %s: in blocked quad %u (%s)", names[i], args[i], q, qn_status_name(st));
    }
    if (st == QN_E_UNREACHABLE)
        return qn_cli_error("path: no path from %s to %s for radius %g (%s)", a->from, a->to,
                            (double)radius, qn_status_name(st));
    return qn_cli_error("path: %s", qn_status_name(st));
}

static int print_path(const qn_vec2 *pts, uint32_t n, float cost, bool json) {
    double len = qn_path_length(pts, n);
    if (!json) {
        for (uint32_t i = 0; i < n; i++) printf("%.6g %.6g\n", (double)pts[i].x, (double)pts[i].y);
        printf("length %.6f\ncost %.6f\n", len, (double)cost);
        return 0;
    }
    cJSON *o = cJSON_CreateObject(), *wp = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) qn_json_push(wp, qn_json_vec(pts[i]));
    qn_json_put(o, "waypoints", wp);
    qn_json_put_num(o, "length", len);
    qn_json_put_float(o, "cost", cost);
    return qn_json_emit(o);
}

/* Runs the query into a buffer grown to the path's size. */
static qn_status find(const world *w, qn_vec2 from, qn_vec2 to, float radius, qn_vec2 **pts,
                      uint32_t *n, float *cost) {
    qn_pathfinder *pf = NULL;
    qn_status st = qn_pathfinder_create(w->mesh, NULL, &pf, NULL);
    uint32_t cap = 256;
    *pts = NULL;
    while (st == QN_OK) {
        qn_vec2 *grown = realloc(*pts, (size_t)cap * sizeof **pts);
        if (!grown) {
            st = QN_E_NOMEM;
            break;
        }
        *pts = grown;
        st = qn_path_find(pf, from, to, radius, *pts, cap, n, cost);
        if (st != QN_E_BUFFER_TOO_SMALL) break;
        cap = *n;
        st = QN_OK;
    }
    qn_pathfinder_destroy(pf);
    return st;
}

int qn_tool_path(int argc, char **argv) {
    path_args a;
    qn_cli_args o;
    int rc = qn_cli_parse(&path_spec, argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    a.file = o.pos[0];
    a.from = o.value[P_FROM];
    a.to = o.value[P_TO];
    a.radius = o.value[P_RADIUS];
    a.json = o.value[P_JSON] != NULL;
    float radius = QN_CLI_DEFAULT_RADIUS;
    if (a.radius && !qn_cli_parse_float(a.radius, 0.0f, QN_MAX_COORD, &radius))
        return qn_cli_error("path: --radius %s: not a number >= 0", a.radius), 2;
    world w;
    if (!world_load(a.file, &w)) return world_free(&w), 1;
    qn_vec2 from, to;
    rc = read_end(&w, "--from", a.from, &from);
    if (rc == 0) rc = read_end(&w, "--to", a.to, &to);
    if (rc != 0) return world_free(&w), rc;
    qn_vec2 *pts = NULL;
    uint32_t n = 0;
    float cost = 0.0f;
    qn_status st = find(&w, from, to, radius, &pts, &n, &cost);
    if (st == QN_OK) rc = print_path(pts, n, cost, a.json);
    else rc = report_failure(&w, st, &a, radius);
    free(pts);
    world_free(&w);
    return rc;
}
