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
    "  0): A* over the quads with their costs, string-pulled through the\n"
    "  corridor of portals. Prints the waypoints, one 'x y' per line, then\n"
    "  'length L' (the polyline's euclidean length) and 'cost C' (the A* cost,\n"
    "  quad costs included). With --json, one object with the keys waypoints\n"
    "  ([[x,y],...]), length and cost.\n"
    "  LEVEL is a level JSON file. MAP is a MovingAI .map file (recognised by\n"
    "  its extension), imported to quads; X,Y are then cell coordinates and\n"
    "  the path joins the cells' centres (x + 0.5, y + 0.5).\n";

typedef struct path_args {
    const char *file, *from, *to, *radius;
    bool json, help;
} path_args;

/* Parses argv; false (after a message) on a usage error. */
static bool parse_args(int argc, char **argv, path_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], **slot = NULL;
        if (!strcmp(s, "--json")) a->json = true;
        else if (!strcmp(s, "--help") || !strcmp(s, "-h")) a->help = true;
        else if (!strcmp(s, "--from")) slot = &a->from;
        else if (!strcmp(s, "--to")) slot = &a->to;
        else if (!strcmp(s, "--radius")) slot = &a->radius;
        else if (s[0] == '-' && s[1] == '-') {
            qn_cli_error("path: unknown option %s (see quadnav path --help)", s);
            return false;
        } else if (!a->file) a->file = s;
        else {
            qn_cli_error("path: unexpected argument %s", s);
            return false;
        }
        if (slot && i + 1 >= argc) {
            qn_cli_error("path: %s needs a value", s);
            return false;
        }
        if (slot) *slot = argv[++i];
    }
    return true;
}

static bool is_map_file(const char *path) {
    size_t n = strlen(path);
    return n > 4 && !strcmp(path + n - 4, ".map");
}

/* The world to search: a level's mesh, or a map imported to quads. */
typedef struct world {
    qn_level *level;
    qn_grid *grid;
    qn_mesh *own_mesh;
    const qn_mesh *mesh;
} world;

static void world_free(world *w) {
    qn_mesh_destroy(w->own_mesh);
    qn_grid_destroy(w->grid);
    qn_level_destroy(w->level);
}

static bool world_load(const char *path, world *w) {
    memset(w, 0, sizeof *w);
    if (!is_map_file(path)) {
        w->level = qn_cli_load_level(path);
        if (w->level) w->mesh = qn_level_mesh(w->level);
        return w->mesh != NULL;
    }
    qn_error e;
    qn_status st = qn_map_load_file(path, NULL, &w->grid, &e);
    if (st == QN_OK) st = qn_mesh_from_grid(w->grid, NULL, &w->own_mesh, &e);
    if (st != QN_OK) {
        if (e.line) qn_cli_error("%s:%u:%u: %s: %s", path, e.line, e.column, qn_status_name(st), e.message);
        else qn_cli_error("%s: %s: %s", path, qn_status_name(st), e.message);
        return false;
    }
    w->mesh = w->own_mesh;
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

static void print_path(const qn_vec2 *pts, uint32_t n, float cost, bool json) {
    double len = qn_path_length(pts, n);
    if (!json) {
        for (uint32_t i = 0; i < n; i++) printf("%.6g %.6g\n", (double)pts[i].x, (double)pts[i].y);
        printf("length %.6f\ncost %.6f\n", len, (double)cost);
        return;
    }
    printf("{\"waypoints\":[");
    for (uint32_t i = 0; i < n; i++) {
        printf("%s[", i ? "," : "");
        qn_json_num(stdout, (double)pts[i].x);
        putchar(',');
        qn_json_num(stdout, (double)pts[i].y);
        putchar(']');
    }
    printf("],\"length\":");
    qn_json_num(stdout, len);
    printf(",\"cost\":");
    qn_json_num(stdout, (double)cost);
    printf("}\n");
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
    if (!parse_args(argc, argv, &a)) return 2;
    if (a.help) return fputs(path_usage, stdout), 0;
    if (!a.file) return fputs(path_usage, stderr), 2;
    float radius = 0.0f;
    if (a.radius && !qn_cli_parse_float(a.radius, 0.0f, QN_MAX_COORD, &radius))
        return qn_cli_error("path: --radius %s: not a number >= 0", a.radius), 2;
    world w;
    if (!world_load(a.file, &w)) return world_free(&w), 1;
    qn_vec2 from, to;
    int rc = read_end(&w, "--from", a.from, &from);
    if (rc == 0) rc = read_end(&w, "--to", a.to, &to);
    if (rc != 0) return world_free(&w), rc;
    qn_vec2 *pts = NULL;
    uint32_t n = 0;
    float cost = 0.0f;
    qn_status st = find(&w, from, to, radius, &pts, &n, &cost);
    if (st == QN_OK) print_path(pts, n, cost, a.json);
    else rc = report_failure(&w, st, &a, radius);
    free(pts);
    world_free(&w);
    return rc;
}
