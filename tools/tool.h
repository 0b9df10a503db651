/*
** tool.h: shared pieces of the quadnav command-line tool, its benchmarks and
** the tests that drive them. Not part of the library.
*/
#ifndef QN_TOOL_H
#define QN_TOOL_H

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

/* Subcommands implemented outside quadnav.c: each takes argc/argv starting
** at the subcommand name, prints its output, and returns the exit status. */
int qn_tool_scen(int argc, char **argv);
/* Grid figures for `quadnav bench`: appends grid_* items. `quick` shrinks
** repetitions for smoke tests. Returns 0, or non-zero on failure. */
int qn_tool_bench_grid(qn_bench_report *r, int quick);

#endif
