/*
** tool.h: shared pieces of the quadnav command-line tool, its benchmarks and
** the tests that drive them. Not part of the library.
*/
#ifndef QN_TOOL_H
#define QN_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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
/* Loads a level, printing a one-line error naming the element on failure. */
qn_level *qn_cli_load_level(const char *path);
/* The goal for a command: --goal as "X,Y" or a goal name, else the level's
** first named goal. Prints an error and returns false when there is none. */
bool qn_cli_goal(const qn_level *level, const char *arg, qn_vec2 *goal);
/* Folder holding the bundled data (levels/, maps/): $QN_DATA_DIR, else the
** source tree's data/ recorded at build time, else the installed data. */
const char *qn_cli_data_dir(void);
/* JSON output: a string with escapes, a number (null when not finite). */
void qn_json_str(FILE *f, const char *s);
void qn_json_num(FILE *f, double v);

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
/* `quadnav path`: one unit's own path (A* plus funnel) on a level or map. */
int qn_tool_path(int argc, char **argv);
/* Individual paths for `quadnav bench`: 1,000 units' own paths against one
** shared instance plus sampling, on the largest map at hand; appends path_*
** items. Returns 0, or non-zero on failure. */
int qn_tool_bench_path(qn_bench_report *r, int quick);

#endif
