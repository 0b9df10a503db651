/* cliutil.c: argument parsing, level loading and JSON output for the tool. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#ifndef QN_SOURCE_DATA_DIR
#define QN_SOURCE_DATA_DIR ""
#endif
#ifndef QN_INSTALL_DATA_DIR
#define QN_INSTALL_DATA_DIR ""
#endif

bool qn_cli_parse_float(const char *s, float lo, float hi, float *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v) || v < (double)lo || v > (double)hi) return false;
    *out = (float)v;
    return true;
}

bool qn_cli_parse_vec(const char *s, qn_vec2 *out) {
    if (!s) return false;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != ',' || errno) return false;
    const char *ys = end + 1;
    double y = strtod(ys, &end);
    if (end == ys || *end || errno || !isfinite(x) || !isfinite(y)) return false;
    if (fabs(x) > (double)QN_MAX_COORD || fabs(y) > (double)QN_MAX_COORD) return false;
    out->x = (float)x;
    out->y = (float)y;
    return true;
}

bool qn_cli_parse_u64(const char *s, uint64_t max, uint64_t *out) {
    if (!s || *s < '0' || *s > '9') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v > max) return false;
    *out = v;
    return true;
}

int qn_cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("quadnav: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

int qn_cli_goal(const qn_level *level, const char *arg, qn_vec2 *goal) {
    const char *name = NULL;
    if (arg && qn_cli_parse_vec(arg, goal)) return 0;
    if (arg && level) {
        uint32_t i = qn_level_find_goal(level, arg);
        if (i == QN_NONE) {
            qn_cli_error("--goal %s: not X,Y and not a goal of this level", arg);
            return 2;
        }
        return qn_level_goal(level, i, &name, goal) == QN_OK ? 0 : 1;
    }
    if (arg) return qn_cli_error("--goal %s: not X,Y", arg), 2;
    if (!level || qn_level_goal_count(level) == 0) {
        qn_cli_error("no --goal given and the level (or map) names no goal: give --goal X,Y");
        return 2;
    }
    return qn_level_goal(level, 0, &name, goal) == QN_OK ? 0 : 1;
}

static bool dir_has_levels(const char *dir) {
    if (!dir || !*dir) return false;
    char path[4096];
    snprintf(path, sizeof path, "%s/levels/town.json", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    fclose(f);
    return true;
}

const char *qn_cli_data_dir(void) {
    const char *env = getenv("QN_DATA_DIR");
    if (dir_has_levels(env)) return env;
    if (dir_has_levels(QN_SOURCE_DATA_DIR)) return QN_SOURCE_DATA_DIR;
    if (dir_has_levels(QN_INSTALL_DATA_DIR)) return QN_INSTALL_DATA_DIR;
    return "data";
}

void qn_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

void qn_json_num(FILE *f, double v) {
    if (!isfinite(v)) fputs("null", f);
    else if (v == floor(v) && fabs(v) < 1e15) fprintf(f, "%.0f", v);
    else fprintf(f, "%.9g", v);
}
