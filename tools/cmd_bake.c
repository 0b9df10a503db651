/*
** cmd_bake.c: `quadnav bake LEVEL -o FILE.qnm [--json]`. Loads a level in
** any form (JSON, MovingAI map, or an earlier .qnm) and writes it baked
** (qn_level_save_mem): the built mesh with its portals and bucket index,
** the name, goals, spawns and grid. Every command that takes a level reads
** the result, much faster than JSON.
**
** The file is written to a temporary file next to the target and renamed
** over it only after a complete, flushed write; the input is never the
** output (same device and inode).
*/
#define _POSIX_C_SOURCE 200809L /* mkstemp, fsync */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

static const char *const bake_usage =
    "usage: quadnav bake LEVEL -o FILE.qnm [--json]\n"
    "Loads LEVEL (level JSON, a MovingAI map or a baked file) and writes it as\n"
    "a baked binary level: the built mesh (portals and spatial index\n"
    "included), name, goals, spawns and grid, little-endian with a checksum\n"
    "(format in README.md). Every command that takes a level loads it.\n"
    "Prints quads, portals, bytes and the load and save times (--json: one\n"
    "object with keys level, output, quads, portals, bytes, load_ms, bake_ms).\n";

static bool same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Writes buf to path through a temporary file in the same directory. */
static bool write_whole(const char *path, const void *buf, size_t n) {
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* FIFO, device: plain write */
        FILE *f = fopen(path, "wb");
        bool ok = f && fwrite(buf, 1, n, f) == n;
        if (f && fclose(f) != 0) ok = false;
        if (!ok) qn_cli_error("%s: write error: %s", path, strerror(errno));
        return ok;
    }
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp) return qn_cli_error("out of memory"), false;
    snprintf(tmp, len + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    mode_t mask = umask(0);
    umask(mask);
    if (fd >= 0) fchmod(fd, 0666 & ~mask); /* mkstemp made it 0600 */
    if (fd < 0) {
        qn_cli_error("%s: cannot create a temporary file: %s", path, strerror(errno));
        free(tmp);
        return false;
    }
    const char *p = buf;
    size_t left = n;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w, left -= (size_t)w;
    }
    int e = left ? errno : 0;
    if (!left && fsync(fd) != 0) e = errno, left = 1;
    if (close(fd) != 0 && !left) e = errno, left = 1;
    if (!left && rename(tmp, path) != 0) e = errno, left = 1;
    if (left) {
        qn_cli_error("%s: write error: %s", path, e ? strerror(e) : "short write");
        unlink(tmp); /* ours: mkstemp created it */
    }
    free(tmp);
    return left == 0;
}

int qn_tool_bake(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return fputs(bake_usage, stdout), 0;
        if (!strcmp(argv[i], "--json")) json = true;
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1])
            return qn_cli_error("bake: unknown option %s", argv[i]), 2;
        else if (!in) in = argv[i];
        else return fputs(bake_usage, stderr), 2;
    }
    if (!in || !out) return fputs(bake_usage, stderr), 2;
    if (same_file(in, out)) return qn_cli_error("bake: %s is the input; not overwritten", out), 1;
    double t0 = qn_tool_now();
    qn_level *lv = NULL;
    qn_error e;
    qn_status st = qn_level_load_any_file(in, NULL, &lv, &e);
    if (st != QN_OK) return qn_cli_error("%s: %s: %s", in, qn_status_name(st), e.message), 1;
    double t1 = qn_tool_now();
    size_t n = 0;
    qn_level_save_mem(lv, NULL, 0, &n, NULL);
    void *buf = malloc(n);
    bool ok = buf && qn_level_save_mem(lv, buf, n, &n, &e) == QN_OK && write_whole(out, buf, n);
    double t2 = qn_tool_now();
    free(buf);
    const qn_mesh *m = qn_level_mesh(lv);
    if (ok && json) {
        printf("{\"level\":");
        qn_json_str(stdout, in);
        printf(",\"output\":");
        qn_json_str(stdout, out);
        printf(",\"quads\":%u,\"portals\":%u,\"bytes\":%zu,\"load_ms\":", qn_mesh_quad_count(m),
               qn_mesh_portal_count(m), n);
        qn_json_num(stdout, (t1 - t0) * 1e3);
        printf(",\"bake_ms\":");
        qn_json_num(stdout, (t2 - t1) * 1e3);
        printf("}\n");
    } else if (ok) {
        printf("level    %s\nbaked    %s\nquads    %u\nportals  %u\nbytes    %zu\n"
               "load     %.2f ms\nbake     %.2f ms\n",
               in, out, qn_mesh_quad_count(m), qn_mesh_portal_count(m), n, (t1 - t0) * 1e3,
               (t2 - t1) * 1e3);
    }
    qn_level_destroy(lv);
    return ok ? 0 : 1;
}
