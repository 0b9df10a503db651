/*
** json_read.c: reading JSON text in place, without a tree. A value is a
** pointer to its first byte; moving to the next element skips the current
** one. The text must have passed qn__json_well_formed (and must be followed
** by a readable NUL), so no step here can fail or run past its end: this
** reader allocates nothing and costs no memory beyond the text, which lets
** the level loader read a 75 MB level in about the memory of its text.
**
** Values read the same as cJSON reads them: numbers through strtod with the
** locale's decimal point, strings with their escapes decoded to UTF-8.
*/
#include "internal.h"

#include <locale.h>
#include <stdlib.h> /* strtod */

static const char *skip_ws(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

/* Past the closing quote of the string opening at s. */
static const char *skip_string(const char *s) {
    for (s++;; s++) {
        if (*s == '"') return s + 1;
        if (*s == '\\') s++; /* the escaped byte (\uXXXX's hex digits are plain) */
    }
}

static bool in_number(char ch) {
    return (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' || ch == 'e' ||
           ch == 'E';
}

/* Past the value starting at s (a scalar, or a container with everything in it). */
static const char *skip_value(const char *s) {
    if (*s == '"') return skip_string(s);
    if (*s != '[' && *s != '{') {
        while (in_number(*s) || (*s >= 'a' && *s <= 'z'))
            s++;
        return s;
    }
    uint32_t depth = 0;
    for (;; s++) {
        char ch = *s;
        if (ch == '"') {
            s = skip_string(s) - 1;
        } else if (ch == '[' || ch == '{') {
            depth++;
        } else if (ch == ']' || ch == '}') {
            if (--depth == 0) return s + 1;
        }
    }
}

qn__jv qn__jv_child(qn__jv v) {
    if (!v || (*v != '[' && *v != '{')) return NULL;
    const char *s = skip_ws(v + 1);
    return *s == ']' || *s == '}' ? NULL : s;
}

qn__jv qn__jv_next(qn__jv v) {
    if (!v) return NULL;
    const char *s = skip_ws(skip_value(v));
    if (*s == ':') s = skip_ws(skip_value(skip_ws(s + 1))); /* v was a key: past its value */
    return *s == ',' ? skip_ws(s + 1) : NULL;
}

const char *qn__jv_end(qn__jv v) { return skip_value(v); }

qn__jv qn__jv_after(const char *end) {
    const char *s = skip_ws(end);
    return *s == ',' ? skip_ws(s + 1) : NULL;
}

const char *qn__jv_close(const char *end) { return skip_ws(end) + 1; }

qn__jv qn__jv_key_value(qn__jv key) {
    return skip_ws(skip_ws(skip_string(key)) + 1);
}

static int hex4(const char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = s[i];
        int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                                                              : ch - 'A' + 10;
        v = v * 16 + d;
    }
    return v;
}

/* Decodes the \u escape at s (s[0] == '\\', s[1] == 'u') to UTF-8 in out
** (4 bytes of room); returns the bytes written, and in *used the escape's
** length (12 for a surrogate pair). A lone surrogate gives U+FFFD (the
** loader rejects such text before reading it; see qn__json_find_bad_escape). */
static size_t decode_u(const char *s, char out[4], size_t *used) {
    uint32_t cp = (uint32_t)hex4(s + 2);
    *used = 6;
    if (cp >= 0xD800 && cp <= 0xDBFF && s[6] == '\\' && s[7] == 'u') {
        uint32_t lo = (uint32_t)hex4(s + 8);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + (((cp & 0x3FF) << 10) | (lo & 0x3FF));
            *used = 12;
        }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6)), out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12)), out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18)), out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static char unescape(char e) {
    switch (e) {
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return e; /* " \ / */
    }
}

size_t qn__jv_string(qn__jv v, char *buf, size_t cap) {
    size_t n = 0;
    const char *s = v + 1;
    for (;;) {
        const char *run = s;
        while (*s != '"' && *s != '\\')
            s++;
        size_t k = (size_t)(s - run);
        if (n < cap) memcpy(buf + n, run, k < cap - n ? k : cap - n);
        n += k;
        if (*s == '"') break;
        char tmp[4];
        size_t len = 1, used = 2;
        if (s[1] == 'u') len = decode_u(s, tmp, &used);
        else tmp[0] = unescape(s[1]);
        for (size_t i = 0; i < len; i++, n++)
            if (n < cap) buf[n] = tmp[i];
        s += used;
    }
    if (cap > 0) buf[n < cap ? n : cap - 1] = '\0';
    return n;
}

bool qn__jv_key_is(qn__jv key, const char *name) {
    size_t len = strlen(name);
    const char *s = key + 1;
    if (strncmp(s, name, len) == 0 && s[len] == '"') return true; /* the common case */
    if (!memchr(s, '\\', (size_t)(skip_string(key) - s))) return false;
    char buf[64];
    if (len >= sizeof buf) return false;
    size_t n = qn__jv_string(key, buf, sizeof buf);
    return n == len && memcmp(buf, name, len) == 0;
}

qn__jv qn__jv_member(qn__jv obj, const char *name) {
    if (!obj || *obj != '{') return NULL;
    for (qn__jv k = qn__jv_child(obj); k; k = qn__jv_next(k))
        if (qn__jv_key_is(k, name)) return qn__jv_key_value(k);
    return NULL;
}

/* Small integers (the common case in levels) convert exactly without
** strtod; anything else goes through it, as cJSON does. */
double qn__jv_number(qn__jv v) {
    const char *s = v;
    bool neg = *s == '-';
    s += neg;
    uint64_t u = 0;
    int digits = 0;
    while (*s >= '0' && *s <= '9' && digits < 16)
        u = u * 10 + (uint64_t)(*s++ - '0'), digits++;
    if (!in_number(*s)) return neg ? -(double)u : (double)u;
    char point = localeconv()->decimal_point[0];
    bool dot = false;
    for (s = v; in_number(*s); s++)
        dot |= *s == '.';
    if (point == '.' || !dot) return strtod(v, NULL);
    char buf[512];
    size_t n = 0;
    for (s = v; in_number(*s) && n + 1 < sizeof buf; s++)
        buf[n++] = *s == '.' ? point : *s;
    buf[n] = '\0';
    return strtod(buf, NULL);
}

size_t qn__json_find_bad_escape(const char *text, size_t len) {
    for (size_t i = 0; i < len;) {
        const char *p = memchr(text + i, '\\', len - i);
        if (!p) break;
        size_t at = (size_t)(p - text);
        /* Well-formed text: a backslash is an escape's first byte, and the
        ** one after it is never one. */
        if (at + 6 <= len && p[1] == 'u') {
            int cp = hex4(p + 2);
            if (cp >= 0xDC00 && cp <= 0xDFFF) return at;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (at + 12 > len || p[6] != '\\' || p[7] != 'u') return at;
                int lo = hex4(p + 8);
                if (lo < 0xDC00 || lo > 0xDFFF) return at;
                i = at + 12;
                continue;
            }
        }
        i = at + 2;
    }
    return len;
}
