/*
** cmd_bake.c: `quadnav bake LEVEL -o FILE.qnm [--json]`. Loads a level in
** any form (JSON, MovingAI map, or an earlier .qnm) and writes it baked
** (qn_level_save_mem): the built mesh with its portals and bucket index,
** the name, goals, spawns and grid. Every command that takes a level reads
** the result, much faster than JSON.
**
** The input is read once (qn_cli_read) and the output written as every
** output of the tool is (qn_cli_output: a temporary file beside the target,
** renamed over it only after a complete, synced write; never the input).
*/
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static const char bake_usage[] =
    "usage: quadnav bake LEVEL -o FILE.qnm [--json]\n"
    "Loads LEVEL (level JSON, a MovingAI map or a baked file) and writes it as\n"
    "a baked binary level: the built mesh (portals and spatial index\n"
    "included), name, goals, spawns and grid, little-endian with a checksum\n"
    "(format in README.md). Every command that takes a level loads it.\n"
    "Prints quads, portals, bytes and the load and save times (--json: one\n"
    "object with keys level, output, quads, portals, bytes, load_ms, bake_ms).\n"
    "  -o FILE.qnm  written whole to a temporary file beside it, then renamed\n"
    "               over it (--output=FILE.qnm too); never the input; '-' for\n"
    "               stdout.\n";

enum { BK_OUTPUT, BK_JSON };
static const qn_cli_option bake_options[] = {
    [BK_OUTPUT] = {"output", 'o', true},
    [BK_JSON] = {"json", 0, false},
};
static const qn_cli_spec bake_spec = QN_CLI_SPEC("bake", bake_usage, bake_options, 1, 1, "LEVEL");

/* The baked bytes of the level; NULL after reporting. */
static void *bake_bytes(const qn_level *lv, size_t *n) {
    qn_error e;
    *n = 0;
    qn_level_save_mem(lv, NULL, 0, n, NULL);
    void *buf = malloc(*n ? *n : 1);
    if (!buf) return qn_cli_error("bake: out of memory"), NULL;
    qn_status st = qn_level_save_mem(lv, buf, *n, n, &e);
    if (st != QN_OK) {
        free(buf);
        return qn_cli_error("bake: %s: %s", qn_status_name(st), e.message), NULL;
    }
    return buf;
}

/* Writes the level baked to out; 0, or 1 after reporting. */
static int write_baked(const qn_cli_input *in, const char *out, const qn_level *lv, size_t *n) {
    qn_cli_output o;
    int rc = qn_cli_output_open(&o, out, &in, 1);
    if (rc) return rc;
    void *buf = bake_bytes(lv, n);
    if (!buf) return qn_cli_output_abort(&o), 1;
    fwrite(buf, 1, *n, o.f);
    free(buf);
    return qn_cli_output_commit(&o);
}

static int print_result(const char *in, const char *out, const qn_level *lv, size_t n,
                        double load_ms, double bake_ms, bool json) {
    const qn_mesh *m = qn_level_mesh(lv);
    FILE *f = strcmp(out, "-") ? stdout : stderr; /* the file itself may be on stdout */
    if (json && f == stdout) {
        cJSON *o = cJSON_CreateObject();
        qn_json_put_str(o, "level", in);
        qn_json_put_str(o, "output", out);
        qn_json_put_uint(o, "quads", qn_mesh_quad_count(m));
        qn_json_put_uint(o, "portals", qn_mesh_portal_count(m));
        qn_json_put_uint(o, "bytes", n);
        qn_json_put_num(o, "load_ms", load_ms);
        qn_json_put_num(o, "bake_ms", bake_ms);
        return qn_json_emit(o);
    }
    fprintf(f, "level    %s\nbaked    %s\nquads    %u\nportals  %u\nbytes    %zu\n"
               "load     %.2f ms\nbake     %.2f ms\n",
            in, out, qn_mesh_quad_count(m), qn_mesh_portal_count(m), n, load_ms, bake_ms);
    return 0;
}

int qn_tool_bake(int argc, char **argv) {
    qn_cli_args a;
    int rc = qn_cli_parse(&bake_spec, argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    const char *path = a.pos[0], *out = a.value[BK_OUTPUT];
    if (!out) return qn_cli_error("bake: no output given: -o FILE.qnm (see quadnav bake --help)"), 2;
    qn_cli_input in;
    double t0 = qn_tool_now();
    if (qn_cli_read(path, &in)) return 1;
    qn_level *lv = NULL;
    qn_error e;
    qn_status st = qn_cli_parse_level(&in, &lv, &e);
    free(in.data); /* parsed: only the file's identity is kept */
    in.data = NULL;
    if (st != QN_OK) return 1;
    double t1 = qn_tool_now();
    size_t n = 0;
    rc = write_baked(&in, out, lv, &n);
    double t2 = qn_tool_now();
    if (!rc)
        rc = print_result(path, out, lv, n, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
                          a.value[BK_JSON] != NULL);
    qn_level_destroy(lv);
    return rc;
}
