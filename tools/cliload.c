/*
** cliload.c: the tool's one loader. Every command that takes a level takes
** a MovingAI map (and a baked .qnm file) too: the file is read once
** (qn_cli_read, so FIFOs and pipes work and the input's identity is known
** for the output checks), and the library decides what it holds by content
** (qn_level_sniff, qn_level_load_any_mem). A map becomes a level with the
** map as its grid and its rectangle decomposition as its mesh; a level
** without a "grid" is rasterised at cell size 1 when a grid is asked for.
*/
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim.h"
#include "tool.h"

static bool report(const char *path, const char *what, qn_status st, const qn_error *e) {
    /* Messages of the map reader may start with the path: not twice. */
    const char *msg = e->message;
    size_t n = strlen(path);
    if (!strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2)) msg += n + 2;
    if (e->line)
        qn_cli_error("%s:%u:%u: %s: %s", path, e->line, e->column, qn_status_name(st), msg);
    else if (what)
        qn_cli_error("%s: %s: %s: %s", path, what, qn_status_name(st), msg);
    else
        qn_cli_error("%s: %s: %s", path, qn_status_name(st), msg);
    return false;
}

qn_status qn_cli_parse_level(const qn_cli_input *in, qn_level **out, qn_error *e) {
    qn_status st = qn_level_load_any_mem(in->data, in->len, NULL, out, e);
    if (st != QN_OK) report(in->path, NULL, st, e);
    return st;
}

qn_level *qn_cli_load_level(const char *path) {
    qn_cli_input in;
    if (qn_cli_read(path, &in)) return NULL;
    qn_level *level = NULL;
    qn_error e;
    qn_cli_parse_level(&in, &level, &e);
    qn_cli_input_free(&in);
    return level;
}

static bool finish_terrain(qn_terrain *t, bool need_grid);

/* A regular file of a size the tool reads is loaded by its path
** (qn_level_load_any_file): the library frees the text as soon as it has
** read it, before it builds the mesh, so a big level's peak is not the
** text and the mesh together. The file's identity comes from stat, its
** kind from its first bytes. False, with nothing done, for anything else
** (stdin, a FIFO, a directory, a file too large, one that cannot be
** opened): qn_cli_read then reads it, or says why not. */
static bool load_by_path(const char *path, qn_terrain *t, bool *loaded) {
    struct stat st;
    *loaded = false;
    if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        (unsigned long long)st.st_size > QN_MAX_FILE_BYTES)
        return false;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    char head[4096]; /* qn_level_sniff skips a BOM and blank space first */
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    if (n < 0) return false;
    t->in.path = path;
    t->in.has_id = true;
    t->in.dev = (uint64_t)st.st_dev;
    t->in.ino = (uint64_t)st.st_ino;
    t->is_map = qn_level_sniff(head, (size_t)n) == QN_LEVEL_MAP;
    t->load_status = qn_level_load_any_file(path, NULL, &t->level, &t->load_error);
    if (t->load_status != QN_OK) report(path, NULL, t->load_status, &t->load_error);
    *loaded = t->load_status == QN_OK;
    return true;
}

bool qn_terrain_load(const char *path, bool need_mesh, bool need_grid, qn_terrain *t) {
    (void)need_mesh; /* every form of a level comes with its mesh */
    qn_cli_input in;
    memset(t, 0, sizeof *t);
    t->path = path;
    bool loaded;
    if (load_by_path(path, t, &loaded)) return loaded && finish_terrain(t, need_grid);
    if (qn_cli_read(path, &in)) return false;
    return qn_terrain_from_input(&in, need_grid, t);
}

bool qn_terrain_from_input(qn_cli_input *in, bool need_grid, qn_terrain *t) {
    memset(t, 0, sizeof *t);
    t->path = in->path;
    t->in = *in;
    memset(in, 0, sizeof *in);
    t->is_map = qn_level_sniff(t->in.data, t->in.len) == QN_LEVEL_MAP;
    t->load_status = qn_cli_parse_level(&t->in, &t->level, &t->load_error);
    free(t->in.data); /* parsed: only the file's identity is kept */
    t->in.data = NULL;
    if (t->load_status != QN_OK) return false;
    return finish_terrain(t, need_grid);
}

/* The mesh and grid of a parsed level (a grid rasterised when asked for). */
static bool finish_terrain(qn_terrain *t, bool need_grid) {
    t->mesh = qn_level_mesh(t->level);
    t->grid = qn_level_grid(t->level);
    t->from_grid = t->grid != NULL;
    if (need_grid && !t->grid) {
        qn_error e;
        qn_status st = qn_grid_from_mesh(t->mesh, 1.0f, NULL, &t->own_grid, &e);
        if (st != QN_OK) return report(t->path, "grid from the quads", st, &e);
        t->grid = t->own_grid;
    }
    return true;
}

qn_mesh *qn_terrain_mesh_mut(qn_terrain *t) {
    return qn_level_mesh_mut(t->level);
}

void qn_terrain_free(qn_terrain *t) {
    qn_mesh_destroy(t->own_mesh);
    qn_grid_destroy(t->own_grid);
    qn_level_destroy(t->level);
    qn_cli_input_free(&t->in);
    memset(t, 0, sizeof *t);
}

float qn_terrain_radius(const qn_terrain *t, float radius) {
    if (!(t->from_grid && radius > QN_CLI_MAP_RADIUS)) return radius;
    fprintf(stderr, "quadnav: note: --radius %g is above %g on a map (corridors may be one cell "
            "wide): using %g\n", (double)radius, (double)QN_CLI_MAP_RADIUS, (double)QN_CLI_MAP_RADIUS);
    return QN_CLI_MAP_RADIUS;
}
