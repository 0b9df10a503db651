/*
** tool.h: shared pieces of the quadnav command-line tool, its benchmarks and
** the tests that drive them. Not part of the library.
*/
#ifndef QN_TOOL_H
#define QN_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "quadnav.h"

/* One benchmark figure: a JSON key, its value, the unit, a human label. */
typedef struct qn_bench_item {
    char key[64];
    double value;
    char unit[16];
    char label[96];
} qn_bench_item;

typedef struct qn_bench_report {
    qn_bench_item items[256];
    int count;
} qn_bench_report;

/* Appends a figure (ignored when the report is full). */
void qn_bench_add(qn_bench_report *r, const char *key, double value, const char *unit,
                  const char *label);
/* Monotonic clock in seconds. */
double qn_tool_now(void);
/* This process's peak resident memory so far, MiB (Linux's VmHWM), or NaN
** where the system does not tell. */
double qn_tool_peak_rss_mb(void);

/* ---- command-line helpers (cliutil.c) ---- */

/* Parses "X,Y" into *out; false on anything else (also NaN or infinity). */
bool qn_cli_parse_vec(const char *s, qn_vec2 *out);
/* Parses a whole non-negative integer up to max; false otherwise. */
bool qn_cli_parse_u64(const char *s, uint64_t max, uint64_t *out);
/* Parses a finite float in [lo, hi]; false otherwise. */
bool qn_cli_parse_float(const char *s, float lo, float hi, float *out);
/* Prints "quadnav: <fmt>" and a newline on stderr; returns 1 (or 2 for usage). */
int qn_cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* The goal for a command: --goal as "X,Y" or a goal name of the level,
** else the level's first named goal. A terrain without goals (a map) needs
** --goal X,Y. Returns 0, or 2 after reporting a usage error (a value that
** is neither X,Y nor a goal name, or no goal at all). */
int qn_cli_goal(const qn_level *level, const char *arg, qn_vec2 *goal);
/* Folder holding the bundled data (levels/, maps/): $QN_DATA_DIR, else the
** source tree's data/ recorded at build time, else the installed data. */
const char *qn_cli_data_dir(void);
/* Text JSON fragments, for files written as formatted text (import-map's
** level writer): a string with escapes, a number (null when not finite). */
void qn_json_str(FILE *f, const char *s);
void qn_json_num(FILE *f, double v);

/* ---- the option parser (cliopt.c) ---- */

#define QN_CLI_MAX_OPTIONS 32
#define QN_CLI_MAX_POSITIONAL 4
#define QN_CLI_MAX_SEEN 256

/* One option a command takes: "--name" (and "-c" when short_name is set),
** with a value ("--name V" or "--name=V") or without (a flag). */
typedef struct qn_cli_option {
    const char *name;
    char short_name;
    bool has_value;
} qn_cli_option;

/* A command's table: its name, --help text, options and positional
** arguments (pos_names names them in messages, e.g. "LEVEL|MAP"). */
typedef struct qn_cli_spec {
    const char *name, *usage;
    const qn_cli_option *options;
    int noptions, min_pos, max_pos;
    const char *pos_names;
} qn_cli_spec;

#define QN_CLI_SPEC(name, usage, table, min_pos, max_pos, pos_names) \
    {name, usage, table, (int)(sizeof table / sizeof table[0]), min_pos, max_pos, pos_names}

typedef struct qn_cli_seen {
    int id;
    const char *value;
} qn_cli_seen;

/* What was given: value[i] for table entry i (its last value, "" for a
** flag, NULL when absent), every option in order (for repeated ones such
** as sim's --block) and the positional arguments. */
typedef struct qn_cli_args {
    const char *value[QN_CLI_MAX_OPTIONS];
    qn_cli_seen seen[QN_CLI_MAX_SEEN];
    int nseen;
    const char *pos[QN_CLI_MAX_POSITIONAL];
    int npos;
} qn_cli_args;

/* Parses argv (argv[0] is the command name) against spec. Returns 0 to go
** on, -1 after --help/-h (usage printed on stdout; exit 0), 2 after a usage
** error (reported on stderr, naming the option or argument at fault). */
int qn_cli_parse(const qn_cli_spec *spec, int argc, char **argv, qn_cli_args *a);

/* ---- input and output files (cliio.c) ---- */

/* A file read whole into memory (NUL-terminated), and its identity. */
typedef struct qn_cli_input {
    const char *path;
    char *data;
    size_t len;
    bool has_id;
    uint64_t dev, ino;
} qn_cli_input;

/* Reads path ("-": stdin) once, up to QN_MAX_FILE_BYTES. 0, or 1 after
** reporting (with the system's reason). */
int qn_cli_read(const char *path, qn_cli_input *in);
void qn_cli_input_free(qn_cli_input *in);
/* The text after one UTF-8 BOM, if any (*len shortened to match): the map
** reader takes text without it. */
const char *qn_cli_skip_bom(const char *text, size_t *len);

/* An output file being written (see cliio.c for the rules). */
typedef struct qn_cli_output {
    const char *path;
    char *target, *tmp;
    FILE *f;
    bool plain;
    unsigned mode;
} qn_cli_output;

/* Opens path ("-": stdout) for writing. Returns 0, or 1 after reporting: a
** failure, or path is one of the inputs (same device and inode, links
** resolved). */
int qn_cli_output_open(qn_cli_output *o, const char *path, const qn_cli_input *const *inputs,
                       int ninputs);
/* Flushes, syncs and renames into place. 0, or 1 after reporting with the
** system's reason; the temporary file is removed and the target untouched. */
int qn_cli_output_commit(qn_cli_output *o);
/* Gives up: removes the temporary file (never the target). */
void qn_cli_output_abort(qn_cli_output *o);
void qn_cli_output_free(qn_cli_output *o);

/* "what: done/total" on stderr, at most 10 times a second, only when stderr
** is a terminal; qn_cli_progress_end clears the line. */
typedef struct qn_cli_progress_state {
    bool checked, on, shown;
    double last;
} qn_cli_progress_state;
void qn_cli_progress(qn_cli_progress_state *p, const char *what, uint64_t done, uint64_t total);
void qn_cli_progress_end(qn_cli_progress_state *p);

/* ---- levels and maps (cliload.c) ---- */

/* Parses a level from a read input; reports a one-line error naming the
** element on failure. */
qn_status qn_cli_parse_level(const qn_cli_input *in, qn_level **out, qn_error *e);
/* Reads and parses a level file; NULL after reporting. */
qn_level *qn_cli_load_level(const char *path);

/* A level in any form (JSON, a MovingAI map, a baked .qnm; decided by
** content, qn_level_sniff), as a mesh and a grid. A map's mesh is its
** rectangle decomposition; a level without a "grid" is rasterised at cell
** size 1 when a grid is asked for. */
typedef struct qn_terrain {
    const char *path;
    qn_cli_input in;   /* the file's identity (data freed once parsed) */
    bool is_map;
    qn_level *level;   /* a map's level has no name, goals or spawns */
    qn_grid *own_grid; /* a rasterised level, else NULL */
    qn_mesh *own_mesh; /* unused: every form comes with its mesh */
    const qn_grid *grid;
    const qn_mesh *mesh;
    bool from_grid; /* a map, or a level carrying a grid: 1-cell corridors */
    qn_status load_status; /* of a level that failed to parse, else QN_OK */
    qn_error load_error;
} qn_terrain;

/* Reads path once and builds what is asked for (a mesh, a grid). Prints a
** one-line error and returns false on failure; qn_terrain_free is safe
** either way. */
bool qn_terrain_load(const char *path, bool need_mesh, bool need_grid, qn_terrain *t);
/* The same from an input already read (taken over: *in is emptied). */
bool qn_terrain_from_input(qn_cli_input *in, bool need_grid, qn_terrain *t);
void qn_terrain_free(qn_terrain *t);
/* The mesh, for scripted changes. */
qn_mesh *qn_terrain_mesh_mut(qn_terrain *t);
/* The quad-mode agent radius for compare and render: maps have corridors
** one cell wide, which a radius of 0.5 or more would close, so it is
** capped at 0.45. */
/* The largest agent radius the tools use on a map (a terrain from a grid):
** corridors may be one cell wide. */
#define QN_CLI_MAP_RADIUS 0.45f
/* radius, or QN_CLI_MAP_RADIUS on a map when radius is larger (with a note
** on stderr saying so). */
float qn_terrain_radius(const qn_terrain *t, float radius);

/* The default agent radius of every command (--radius): units have bodies,
** and 0.25 passes the one-cell corridors of maps (cell size 1). */
#define QN_CLI_DEFAULT_RADIUS 0.25f
/* The same --units limit in every command that simulates units. */
#define QN_CLI_MAX_UNITS 1000000u

/* ---- JSON output (clijson.c), built with cJSON ---- */

/* Items: not-finite numbers are null, whole numbers exact, floats short. */
cJSON *qn_json_number(double v);
cJSON *qn_json_float(float v);
cJSON *qn_json_uint(uint64_t v);
cJSON *qn_json_vec(qn_vec2 v);
/* Adds item under key (deleting it when that fails; NULL is ignored). */
void qn_json_put(cJSON *o, const char *key, cJSON *item);
void qn_json_put_num(cJSON *o, const char *key, double v);
void qn_json_put_float(cJSON *o, const char *key, float v);
void qn_json_put_uint(cJSON *o, const char *key, uint64_t v);
void qn_json_put_vec(cJSON *o, const char *key, qn_vec2 v);
void qn_json_put_bool(cJSON *o, const char *key, bool v);
void qn_json_put_str(cJSON *o, const char *key, const char *s); /* NULL: null */
/* Appends item to an array (deleting it when that fails). */
void qn_json_push(cJSON *array, cJSON *item);
/* Prints o as one line on stdout and deletes it. 0, or 1 after reporting. */
int qn_json_emit(cJSON *o);

/* Subcommands implemented outside quadnav.c: each takes argc/argv starting
** at the subcommand name, prints its output, and returns the exit status. */
int qn_tool_scen(int argc, char **argv);
int qn_tool_bench(int argc, char **argv);
int qn_tool_import_map(int argc, char **argv);
int qn_tool_compare(int argc, char **argv);
int qn_tool_render(int argc, char **argv);
int qn_tool_bake(int argc, char **argv);
/* Grid figures for `quadnav bench`: appends grid_* items. `quick` shrinks
** repetitions for smoke tests. Returns 0, or non-zero on failure. */
int qn_tool_bench_grid(qn_bench_report *r, int quick);
/* Living-world figures (repair, cache, threads) for `quadnav bench`. */
int qn_tool_bench_live(qn_bench_report *r, int quick);
/* Exact instances against discrete ones (bench_exact.c). 0 on success. */
int qn_tool_bench_exact(qn_bench_report *r, int quick);
/* `quadnav path`: one unit's own path (A* plus funnel) on a level or map. */
int qn_tool_path(int argc, char **argv);
/* Individual paths for `quadnav bench`: 1,000 units' own paths against one
** shared instance plus sampling, on the largest map at hand; appends path_*
** items. Returns 0, or non-zero on failure. */
int qn_tool_bench_path(qn_bench_report *r, int quick);
/* The crowd forms of sim, demo and render (cmd_crowd.c): true when argv
** holds --crowd; qn_tool_crowd then runs the command (argv[0] names it). */
bool qn_tool_wants_crowd(int argc, char **argv);
int qn_tool_crowd(int argc, char **argv);
/* Crowd figures for `quadnav bench`: crowd_* items. */
int qn_tool_bench_crowd(qn_bench_report *r, int quick);
/* `quadnav bench --map FILE.map` (bench_map.c): the big-world figures on one
** MovingAI map. The parts share this context: the import part fills grid and
** mesh, the full-instance part picks goal (a ground cell near the centre). */
typedef struct qn_bench_map_ctx {
    const char *path;
    qn_grid *grid;
    qn_mesh *mesh;
    uint32_t goal_cell; /* y*width+x */
    qn_vec2 goal;       /* that cell's centre */
    qn_grid_field *grid_field; /* the whole-grid field for goal_cell */
    qn_vec2 units[1000];       /* 10 groups of 100, reachable (grid mode) */
} qn_bench_map_ctx;
int qn_tool_bench_map(qn_bench_report *r, const char *path);
/* The hierarchical-instance part (bench_map_hier.c): hier_* items; needs
** the mesh, goal and units of the context. */
int qn_tool_bench_map_hier(qn_bench_map_ctx *c, qn_bench_report *r);

#endif
