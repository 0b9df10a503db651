/*
** clijson.c: the tool's JSON output, built with cJSON. Numbers that are
** not finite (an unreachable cost, a mean over nothing) are written as
** null; whole numbers are written exactly (64-bit counts and seeds too);
** floats are written with the fewest digits that read back as the same
** float (0.2, not 0.200000003).
*/
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "tool.h"

cJSON *qn_json_number(double v) {
    if (!isfinite(v)) return cJSON_CreateNull();
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.0f", v);
        return cJSON_CreateRaw(buf);
    }
    return cJSON_CreateNumber(v);
}

cJSON *qn_json_float(float f) {
    if (!isfinite(f)) return cJSON_CreateNull();
    char buf[32];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        if ((float)strtod(buf, NULL) == f) break;
    }
    return qn_json_number(strtod(buf, NULL));
}

cJSON *qn_json_uint(uint64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateRaw(buf);
}

cJSON *qn_json_vec(qn_vec2 v) {
    cJSON *a = cJSON_CreateArray();
    qn_json_push(a, qn_json_float(v.x));
    qn_json_push(a, qn_json_float(v.y));
    return a;
}

void qn_json_put(cJSON *o, const char *key, cJSON *item) {
    if (!item) return;
    if (!o || !cJSON_AddItemToObject(o, key, item)) cJSON_Delete(item);
}

void qn_json_put_num(cJSON *o, const char *key, double v) { qn_json_put(o, key, qn_json_number(v)); }
void qn_json_put_float(cJSON *o, const char *key, float v) { qn_json_put(o, key, qn_json_float(v)); }
void qn_json_put_uint(cJSON *o, const char *key, uint64_t v) { qn_json_put(o, key, qn_json_uint(v)); }
void qn_json_put_vec(cJSON *o, const char *key, qn_vec2 v) { qn_json_put(o, key, qn_json_vec(v)); }
void qn_json_put_bool(cJSON *o, const char *key, bool v) { qn_json_put(o, key, cJSON_CreateBool(v)); }

void qn_json_put_str(cJSON *o, const char *key, const char *s) {
    qn_json_put(o, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

int qn_json_emit(cJSON *o) {
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text) return qn_cli_error("out of memory while writing JSON");
    int bad = fputs(text, stdout) < 0 || fputc('\n', stdout) == EOF;
    free(text);
    return bad ? qn_cli_error("stdout: write error") : 0;
}

void qn_json_push(cJSON *array, cJSON *item) {
    if (!item) return;
    if (!array || !cJSON_AddItemToArray(array, item)) cJSON_Delete(item);
}
