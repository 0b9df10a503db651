/* toolutil.c: small helpers shared by the tool, benchmarks and tests. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tool.h"

void qn_bench_add(qn_bench_report *r, const char *key, double value, const char *unit,
                  const char *label) {
    if (r->count >= (int)(sizeof r->items / sizeof r->items[0])) return;
    qn_bench_item *it = &r->items[r->count++];
    snprintf(it->key, sizeof it->key, "%s", key);
    it->value = value;
    snprintf(it->unit, sizeof it->unit, "%s", unit);
    snprintf(it->label, sizeof it->label, "%s", label);
}

double qn_tool_peak_rss_mb(void) {
    /* VmHWM belongs to the process's memory image, made anew by exec;
    ** getrusage's peak also counts the parent's image a child was spawned
    ** from (Linux keeps it across exec), so it is read only where there is
    ** no /proc (in KiB on Linux and the BSDs). */
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) {
        struct rusage ru;
        return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : (double)NAN;
    }
    char line[256];
    double mb = (double)NAN;
    while (fgets(line, sizeof line, f)) {
        unsigned long kb;
        if (sscanf(line, "VmHWM: %lu kB", &kb) == 1) {
            mb = (double)kb / 1024.0;
            break;
        }
    }
    fclose(f);
    return mb;
}

double qn_tool_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
