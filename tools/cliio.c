/*
** cliio.c: the tool's file input and output.
**
** Input: every file is read exactly once into memory (a FIFO, `<(...)` or
** `-` for stdin works), and the caller decides what it is from that buffer.
** Output: a regular file (existing or new) is written to a temporary file
** in the target's directory, flushed, fsync'ed and renamed over the target
** only once complete; on failure only that temporary file is removed. A
** symbolic link is followed (the file it names is replaced, the link kept).
** Non-regular targets (FIFOs, devices, `-` for stdout) get plain writes and
** no cleanup. An output that is one of the inputs (same device and inode,
** links resolved) is refused before anything is written.
*/
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

/* ---- input ------------------------------------------------------------ */

/* Reads fd to the end into a NUL-terminated buffer of at most `limit`
** bytes; false with errno set (EFBIG when larger). */
static bool read_all(int fd, size_t limit, char **out, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) return false;
    for (;;) {
        if (n == cap) {
            if (cap > limit) {
                free(buf);
                errno = EFBIG;
                return false;
            }
            size_t grown = cap * 2;
            char *b = realloc(buf, grown + 1);
            if (!b) return free(buf), false;
            buf = b;
            cap = grown;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return free(buf), false;
        if (r == 0) break;
        n += (size_t)r;
    }
    if (n > limit) {
        free(buf);
        errno = EFBIG;
        return false;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return true;
}

int qn_cli_read(const char *path, qn_cli_input *in) {
    memset(in, 0, sizeof *in);
    in->path = path;
    bool is_stdin = !strcmp(path, "-");
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY);
    if (fd < 0) return qn_cli_error("%s: QN_E_IO: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0) {
        in->has_id = true;
        in->dev = (uint64_t)st.st_dev;
        in->ino = (uint64_t)st.st_ino;
        if (S_ISDIR(st.st_mode)) {
            if (!is_stdin) close(fd);
            return qn_cli_error("%s: QN_E_IO: cannot read: %s", path, strerror(EISDIR));
        }
    }
    bool ok = read_all(fd, QN_MAX_FILE_BYTES, &in->data, &in->len);
    int saved = errno;
    if (!is_stdin) close(fd);
    if (ok) return 0;
    if (saved == EFBIG)
        return qn_cli_error("%s: QN_E_LIMIT: larger than the %u bytes a level, map or scenario "
                            "may have",
                            path, QN_MAX_FILE_BYTES);
    return qn_cli_error("%s: QN_E_IO: cannot read: %s", path, strerror(saved));
}

void qn_cli_input_free(qn_cli_input *in) {
    free(in->data);
    in->data = NULL;
    in->len = 0;
}

const char *qn_cli_skip_bom(const char *text, size_t *len) {
    if (*len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
        *len -= 3;
        return text + 3;
    }
    return text;
}

/* ---- output ----------------------------------------------------------- */

static mode_t new_file_mode(void) {
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* Resolves a regular target: the file a symlink names, else path itself.
** Fills *mode with the mode the written file gets. 0, or 1 (reported). */
static int resolve_target(qn_cli_output *o, const struct stat *st, bool exists) {
    if (exists) {
        o->target = realpath(o->path, NULL);
        if (!o->target) return qn_cli_error("%s: cannot resolve: %s", o->path, strerror(errno));
        o->mode = st->st_mode & 07777;
        return 0;
    }
    struct stat lst;
    if (lstat(o->path, &lst) == 0 && S_ISLNK(lst.st_mode))
        return qn_cli_error("%s: a symbolic link to nothing: not written", o->path);
    o->target = strdup(o->path);
    if (!o->target) return qn_cli_error("%s: out of memory", o->path);
    o->mode = new_file_mode();
    return 0;
}

/* Creates the temporary file beside the target. 0, or 1 (reported). */
static int open_temp(qn_cli_output *o) {
    const char *slash = strrchr(o->target, '/');
    size_t dir_len = slash ? (size_t)(slash - o->target) + 1 : 0;
    const char *base = slash ? slash + 1 : o->target;
    size_t n = dir_len + strlen(base) + 16;
    o->tmp = malloc(n);
    if (!o->tmp) return qn_cli_error("%s: out of memory", o->path);
    snprintf(o->tmp, n, "%.*s.%s.XXXXXX", (int)dir_len, o->target, base);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        return qn_cli_error("%s: cannot open for writing: %s", o->path, strerror(e));
    }
    if (fchmod(fd, o->mode) != 0 || !(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        return qn_cli_error("%s: cannot open for writing: %s", o->path, strerror(e));
    }
    return 0;
}

int qn_cli_output_open(qn_cli_output *o, const char *path, const qn_cli_input *const *inputs,
                       int ninputs) {
    memset(o, 0, sizeof *o);
    o->path = path;
    /* A write past RLIMIT_FSIZE then fails with EFBIG rather than killing
    ** the process with the temporary file left behind. */
    signal(SIGXFSZ, SIG_IGN);
    if (!strcmp(path, "-")) {
        o->f = stdout;
        o->plain = true;
        return 0;
    }
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT)
        return qn_cli_error("%s: cannot open for writing: %s", path, strerror(errno));
    for (int i = 0; exists && i < ninputs; i++)
        if (inputs[i] && inputs[i]->has_id && inputs[i]->dev == (uint64_t)st.st_dev &&
            inputs[i]->ino == (uint64_t)st.st_ino) {
            qn_cli_error("%s: the output is the input %s: refusing to overwrite it", path,
                         inputs[i]->path);
            return 1;
        }
    if (exists && !S_ISREG(st.st_mode)) {
        o->plain = true;
        if (!(o->f = fopen(path, "wb")))
            return qn_cli_error("%s: cannot open for writing: %s", path, strerror(errno));
        errno = 0; /* a failed write's reason is kept for the commit */
        return 0;
    }
    if (resolve_target(o, &st, exists) || open_temp(o)) {
        qn_cli_output_free(o);
        return 1;
    }
    errno = 0;
    return 0;
}

/* Flushes the stream and, for a temporary file, syncs it; errno on failure. */
static bool finish_stream(qn_cli_output *o) {
    bool ok = fflush(o->f) == 0 && !ferror(o->f);
    int e = ok ? 0 : (errno ? errno : EIO);
    if (ok && o->tmp && fsync(fileno(o->f)) != 0) ok = false, e = errno;
    if (o->f != stdout && fclose(o->f) != 0 && ok) ok = false, e = errno;
    o->f = NULL;
    errno = e;
    return ok;
}

int qn_cli_output_commit(qn_cli_output *o) {
    if (!o->f) return 1;
    /* errno still holds the reason of a write that failed (cleared when
    ** the output was opened). */
    bool ok = finish_stream(o);
    int e = errno;
    if (ok && o->tmp && rename(o->tmp, o->target) != 0) ok = false, e = errno;
    if (!ok) {
        if (o->tmp) unlink(o->tmp);
        qn_cli_output_free(o);
        return qn_cli_error("%s: write error: %s", o->path, strerror(e));
    }
    qn_cli_output_free(o);
    return 0;
}

void qn_cli_output_abort(qn_cli_output *o) {
    if (o->f && o->f != stdout) fclose(o->f);
    else if (o->f) fflush(o->f);
    o->f = NULL;
    if (o->tmp) unlink(o->tmp);
    qn_cli_output_free(o);
}

void qn_cli_output_free(qn_cli_output *o) {
    free(o->tmp);
    free(o->target);
    o->tmp = NULL;
    o->target = NULL;
}

/* ---- progress ------------------------------------------------------------ */

void qn_cli_progress(qn_cli_progress_state *p, const char *what, uint64_t done, uint64_t total) {
    if (!p->checked) {
        p->checked = true;
        p->on = isatty(STDERR_FILENO) == 1;
    }
    if (!p->on) return;
    double now = qn_tool_now();
    if (done < total && now - p->last < 0.1) return;
    p->last = now;
    p->shown = true;
    fprintf(stderr, "\r%s: %llu/%llu", what, (unsigned long long)done, (unsigned long long)total);
    fflush(stderr);
}

void qn_cli_progress_end(qn_cli_progress_state *p) {
    if (p->shown) fputs("\r\033[K", stderr);
    p->shown = false;
}
