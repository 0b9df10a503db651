/*
** util.c: status text, version, allocator plumbing, error filling, file read.
*/
/* mmap and fstat (POSIX), MAP_POPULATE (Linux, glibc's default features);
** elsewhere files are only read. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#ifdef __linux__
#define _GNU_SOURCE /* mremap */
#endif
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

uint32_t qn_version_number(void) { return QN_VERSION_NUMBER; }
const char *qn_version_string(void) { return QN_VERSION_STRING; }

#define QN__STATUS_TEXT(name, text) text,
static const char *const status_text[] = {QN_STATUS_LIST(QN__STATUS_TEXT)};
#undef QN__STATUS_TEXT
#define QN__STATUS_NAME(name, text) "QN_" #name,
static const char *const status_names[] = {QN_STATUS_LIST(QN__STATUS_NAME)};
#undef QN__STATUS_NAME

const char *qn_status_str(qn_status code) {
    if ((unsigned)code >= (unsigned)QN_STATUS_COUNT) return "unknown status";
    return status_text[code];
}

const char *qn_status_name(qn_status code) {
    if ((unsigned)code >= (unsigned)QN_STATUS_COUNT) return "QN_UNKNOWN";
    return status_names[code];
}

/* ---- memory ---------------------------------------------------------- */

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MREMAP_MAYMOVE)
/*
** Large blocks on huge pages. A big world's arrays (a 4096 x 4096 map's
** mesh, boundary cycles, search pools and instance: hundreds of megabytes)
** are read at random; on 4 KiB pages nearly every such read misses the
** TLB, and the kernel takes a fault per page on first touch. So the default
** allocator maps a block of QN__HUGE_MIN bytes or more itself, on 2 MiB
** boundaries, and asks for transparent huge pages there (madvise: a hint;
** without them the block works the same). Such a block grows and shrinks
** by mremap (no copy), and is known by its size: the library always passes
** the size it asked for (qn_realloc_fn's contract). Fresh mappings are
** zero, so qn__calloc leaves them untouched (qn__fresh_zero).
*/
#define QN__HUGE_MIN ((size_t)4 << 20)
#define QN__HUGE_PAGE ((size_t)2 << 20)

static size_t huge_len(size_t n) { return (n + QN__HUGE_PAGE - 1) & ~(QN__HUGE_PAGE - 1); }

static void *huge_map(size_t n) {
    size_t len = huge_len(n);
    if (len < n || len + QN__HUGE_PAGE < len) return NULL; /* overflow */
    /* A page more than asked, then the ends trimmed to the boundary. */
    char *p = mmap(NULL, len + QN__HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) return NULL;
    uintptr_t at = ((uintptr_t)p + QN__HUGE_PAGE - 1) & ~(uintptr_t)(QN__HUGE_PAGE - 1);
    size_t head = (size_t)(at - (uintptr_t)p);
    if (head) munmap(p, head);
    if (QN__HUGE_PAGE - head) munmap((char *)at + len, QN__HUGE_PAGE - head);
    madvise((void *)at, len, MADV_HUGEPAGE);
    return (void *)at;
}

static void *libc_realloc(void *ud, void *ptr, size_t old_size, size_t new_size) {
    (void)ud;
    bool was = ptr && old_size >= QN__HUGE_MIN, will = new_size >= QN__HUGE_MIN;
    if (new_size == 0) {
        if (was) munmap(ptr, huge_len(old_size));
        else free(ptr);
        return NULL;
    }
    if (!was && !will) return realloc(ptr, new_size);
    if (was && will) {
        size_t from = huge_len(old_size), to = huge_len(new_size);
        if (to < new_size) return NULL;
        if (from == to) return ptr;
        void *q = mremap(ptr, from, to, MREMAP_MAYMOVE);
        return q == MAP_FAILED ? NULL : q;
    }
    void *q = will ? huge_map(new_size) : malloc(new_size);
    if (!q || !ptr) return q;
    memcpy(q, ptr, old_size < new_size ? old_size : new_size);
    if (was) munmap(ptr, huge_len(old_size));
    else free(ptr);
    return q;
}

bool qn__fresh_zero(const qn_allocator *a, size_t n) {
    return a->fn == libc_realloc && n >= QN__HUGE_MIN;
}
#else
static void *libc_realloc(void *ud, void *ptr, size_t old_size, size_t new_size) {
    (void)ud;
    (void)old_size;
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, new_size);
}

bool qn__fresh_zero(const qn_allocator *a, size_t n) {
    (void)a;
    (void)n;
    return false;
}
#endif

qn_allocator qn__allocator(const qn_allocator *alloc) {
    qn_allocator a = {libc_realloc, NULL};
    if (alloc && alloc->fn) a = *alloc;
    return a;
}

void *qn__alloc(const qn_allocator *a, size_t n) {
    if (n == 0) n = 1;
    return a->fn(a->ud, NULL, 0, n);
}

void *qn__calloc(const qn_allocator *a, size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size) return NULL;
    size_t n = count * size;
    void *p = qn__alloc(a, n);
    if (p && !qn__fresh_zero(a, n)) memset(p, 0, n ? n : 1);
    return p;
}

void *qn__realloc(const qn_allocator *a, void *p, size_t old_n, size_t new_n) {
    if (new_n == 0) new_n = 1;
    return a->fn(a->ud, p, p ? old_n : 0, new_n);
}

void qn__free(const qn_allocator *a, void *p, size_t n) {
    if (p) a->fn(a->ud, p, n ? n : 1, 0);
}

char *qn__strdup(const qn_allocator *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = qn__alloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- errors ---------------------------------------------------------- */

qn_status qn__error_clear(qn_error *err) {
    if (err) {
        memset(err, 0, sizeof *err);
        err->index = QN_NONE;
    }
    return QN_OK;
}

qn_status qn__fail(qn_error *err, qn_status code, uint32_t index, const char *fmt, ...) {
    if (!err) return code;
    err->code = code;
    err->index = index;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

void qn__error_path(qn_error *err, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->path, sizeof err->path, fmt, ap);
    va_end(ap);
}

/* ---- files ----------------------------------------------------------- */

/* Size of a regular file opened as f (position restored to 0), or -1 when
** it cannot be told (a pipe, a FIFO): then the reader grows its buffer. */
static long file_size(FILE *f) {
    if (fseek(f, 0, SEEK_END) != 0) return -1;
    long n = ftell(f);
    if (fseek(f, 0, SEEK_SET) != 0) return -1;
    return n;
}

qn_status qn__read_file(const char *path, const qn_allocator *a, char **buf, size_t *size,
                        qn_error *err) {
    *buf = NULL;
    *size = 0;
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return qn__fail(err, QN_E_IO, QN_NONE, "%s: cannot open: %s", path, strerror(errno));
    long known = file_size(f);
    /* One read when the size is known (one byte more to see the end). */
    size_t cap = known >= 0 && (unsigned long)known <= QN_MAX_FILE_BYTES ? (size_t)known + 2 : 0;
    size_t n = 0;
    char *data = NULL;
    qn_status st = QN_OK;
    for (;;) {
        if (n + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap > (size_t)QN_MAX_FILE_BYTES + 1) ncap = (size_t)QN_MAX_FILE_BYTES + 1;
            if (n + 1 >= ncap) {
                st = qn__fail(err, QN_E_LIMIT, QN_NONE, "%s: larger than %u bytes", path,
                              QN_MAX_FILE_BYTES);
                break;
            }
            char *nd = qn__realloc(a, data, cap, ncap);
            if (!nd) {
                st = qn__fail(err, QN_E_NOMEM, QN_NONE, "%s: out of memory reading", path);
                break;
            }
            data = nd;
            cap = ncap;
        } else if (!data) {
            data = qn__alloc(a, cap);
            if (!data) {
                st = qn__fail(err, QN_E_NOMEM, QN_NONE, "%s: out of memory reading", path);
                break;
            }
        }
        size_t got = fread(data + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                st = qn__fail(err, QN_E_IO, QN_NONE, "%s: read error: %s", path,
                              errno ? strerror(errno) : "unknown");
            break;
        }
    }
    fclose(f);
    if (st != QN_OK) {
        qn__free(a, data, cap);
        return st;
    }
    /* Shrink so the caller frees exactly size + 1 bytes. */
    char *fit = cap == n + 1 ? data : qn__realloc(a, data, cap, n + 1);
    if (!fit) {
        qn__free(a, data, cap);
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "%s: out of memory reading", path);
    }
    fit[n] = '\0';
    *buf = fit;
    *size = n;
    return QN_OK;
}

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

bool qn__map_file(const char *path, const void **data, size_t *len) {
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    struct stat sb;
    void *p = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
        (uint64_t)sb.st_size <= QN_MAX_FILE_BYTES) {
        int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
        flags |= MAP_POPULATE; /* the loader reads every byte: map them all at once */
#endif
        p = mmap(NULL, (size_t)sb.st_size, PROT_READ, flags, fd, 0);
    }
    close(fd);
    if (p == MAP_FAILED) return false;
    *data = p;
    *len = (size_t)sb.st_size;
    return true;
}

void qn__unmap_file(const void *data, size_t len) {
    if (data) munmap((void *)(uintptr_t)data, len);
}
#else
bool qn__map_file(const char *path, const void **data, size_t *len) {
    (void)path;
    *data = NULL;
    *len = 0;
    return false;
}

void qn__unmap_file(const void *data, size_t len) {
    (void)data;
    (void)len;
}
#endif

qn_status qn__write_file(const char *path, const void *buf, size_t n, qn_error *err) {
    errno = 0;
    FILE *f = fopen(path, "wb");
    if (!f)
        return qn__fail(err, QN_E_IO, QN_NONE, "%s: cannot open for writing: %s", path,
                        strerror(errno));
    bool ok = fwrite(buf, 1, n, f) == n;
    int e = errno;
    if (fclose(f) != 0 && ok) ok = false, e = errno;
    if (!ok)
        return qn__fail(err, QN_E_IO, QN_NONE, "%s: write error: %s", path,
                        e ? strerror(e) : "short write");
    return QN_OK;
}
