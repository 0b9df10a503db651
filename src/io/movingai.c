/*
** movingai.c: readers for MovingAI benchmark maps (.map) and scenario files
** (.map.scen). Both are line-oriented text; lines end in LF or CRLF and the
** last line may lack its newline. Every error names its line (and column
** where one character is at fault).
*/
#include "internal.h"

/* ---- lines ----------------------------------------------------------- */

typedef struct cursor {
    const char *p, *end;
    uint32_t line; /* number of the line last returned, 1-based */
} cursor;

typedef struct text_line {
    const char *s;
    size_t n;     /* without the line break */
    bool newline; /* ended by a line break rather than by the end of input */
} text_line;

/* Next line of the input; false when none is left. A CR just before the LF
** (or at the very end) belongs to the line break. */
static bool next_line(cursor *c, text_line *out) {
    if (c->p >= c->end) return false;
    const char *s = c->p;
    const char *nl = memchr(s, '\n', (size_t)(c->end - s));
    const char *stop = nl ? nl : c->end;
    c->p = nl ? nl + 1 : c->end;
    if (stop > s && stop[-1] == '\r') stop--;
    out->s = s;
    out->n = (size_t)(stop - s);
    out->newline = nl != NULL;
    c->line++;
    return true;
}

static bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

static bool is_blank(const text_line *l) {
    for (size_t i = 0; i < l->n; i++)
        if (!is_space(l->s[i])) return false;
    return true;
}

/* Splits a line into at most `max` whitespace-separated tokens; returns the
** number found (counting past max, so callers can tell "too many"). */
typedef struct token {
    const char *s;
    size_t n;
    uint32_t column; /* 1-based */
} token;

static uint32_t split(const text_line *l, token *tok, uint32_t max) {
    uint32_t count = 0;
    size_t i = 0;
    while (i < l->n) {
        while (i < l->n && is_space(l->s[i])) i++;
        if (i >= l->n) break;
        size_t start = i;
        while (i < l->n && !is_space(l->s[i])) i++;
        if (count < max) {
            tok[count].s = l->s + start;
            tok[count].n = i - start;
            tok[count].column = (uint32_t)(start + 1);
        }
        count++;
    }
    return count;
}

static bool token_is(const token *t, const char *word) {
    size_t n = strlen(word);
    return t->n == n && memcmp(t->s, word, n) == 0;
}

/* Parses a decimal unsigned integer. Values above UINT32_MAX saturate to
** UINT32_MAX, so "absurd size" checks still see them as too large. */
static bool parse_u32(const token *t, uint32_t *out) {
    if (t->n == 0) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < t->n; i++) {
        char ch = t->s[i];
        if (ch < '0' || ch > '9') return false;
        v = v * 10 + (uint64_t)(ch - '0');
        if (v > UINT32_MAX) v = (uint64_t)UINT32_MAX + 1;
    }
    *out = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    return true;
}

/* Records a text position in err (if given) and returns code. */
static qn_status at(qn_error *err, qn_status code, uint32_t line, uint32_t column) {
    if (err) {
        err->line = line;
        err->column = column;
    }
    return code;
}

/* Writes a byte as 'c' when printable, else as its hex code, for messages. */
static const char *shown(char ch, char buf[8]) {
    unsigned u = (unsigned)(unsigned char)ch;
    static const char hex[] = "0123456789abcdef";
    if (u >= 0x20 && u < 0x7f) {
        buf[0] = '\'';
        buf[1] = ch;
        buf[2] = '\'';
        buf[3] = '\0';
    } else {
        memcpy(buf, "0x", 2);
        buf[2] = hex[u >> 4];
        buf[3] = hex[u & 15];
        buf[4] = '\0';
    }
    return buf;
}

/* ---- .map ------------------------------------------------------------ */

typedef struct map_header {
    uint32_t width, height; /* 0: not given yet */
    bool has_type;
} map_header;

/* Reads one "key value" header line into h. */
static qn_status map_header_line(const text_line *l, uint32_t line, map_header *h,
                                 qn_error *err) {
    token t[3];
    uint32_t n = split(l, t, 3);
    if (n != 2)
        return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                                "line %u: expected \"type octile\", \"height N\", \"width N\" "
                                "or \"map\"", line),
                  line, n > 2 ? t[2].column : 1);
    if (token_is(&t[0], "type")) {
        if (!token_is(&t[1], "octile"))
            return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                                    "line %u: map type must be octile", line),
                      line, t[1].column);
        h->has_type = true;
        return QN_OK;
    }
    bool is_h = token_is(&t[0], "height");
    if (!is_h && !token_is(&t[0], "width"))
        return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                                "line %u: unknown header field \"%.*s\"", line, (int)t[0].n,
                                t[0].s),
                  line, t[0].column);
    uint32_t v;
    if (!parse_u32(&t[1], &v) || v == 0)
        return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                                "line %u: %s must be a whole number >= 1", line,
                                is_h ? "height" : "width"),
                  line, t[1].column);
    if (v > QN_MAX_GRID_SIDE)
        return at(err, qn__fail(err, QN_E_LIMIT, QN_NONE, "line %u: %s %.*s exceeds %u", line,
                                is_h ? "height" : "width", (int)t[1].n, t[1].s,
                                QN_MAX_GRID_SIDE),
                  line, t[1].column);
    uint32_t *field = is_h ? &h->height : &h->width;
    if (*field)
        return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE, "line %u: %s given twice", line,
                                is_h ? "height" : "width"),
                  line, t[0].column);
    *field = v;
    return QN_OK;
}

/* Reads the header up to and including the "map" line. */
static qn_status map_header_read(cursor *c, map_header *h, qn_error *err) {
    text_line l;
    while (next_line(c, &l)) {
        if (is_blank(&l)) continue;
        token t[2];
        if (split(&l, t, 2) == 1 && token_is(&t[0], "map")) {
            if (!h->has_type || !h->width || !h->height)
                return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                                        "line %u: \"map\" before %s", c->line,
                                        !h->has_type ? "the type" :
                                        !h->height ? "the height" : "the width"),
                          c->line, 1);
            if ((uint64_t)h->width * h->height > QN_MAX_GRID_CELLS)
                return at(err, qn__fail(err, QN_E_LIMIT, QN_NONE,
                                        "map %ux%u has more than %u cells", h->width, h->height,
                                        QN_MAX_GRID_CELLS),
                          c->line, 1);
            return QN_OK;
        }
        qn_status st = map_header_line(&l, c->line, h, err);
        if (st != QN_OK) return st;
    }
    return at(err, qn__fail(err, QN_E_TRUNCATED, QN_NONE,
                            "map header ends after line %u without a \"map\" line", c->line),
              c->line, 0);
}

/* Terrain: '.', 'G', 'S' are ground; '@', 'O', 'T', 'W' walls; 0 unknown. */
static uint8_t terrain(char ch) {
    switch (ch) {
    case '.': case 'G': case 'S': return QN_CELL_NORMAL;
    case '@': case 'O': case 'T': case 'W': return QN_CELL_WALL;
    default: return 0;
    }
}

/* Reads grid row y into costs[y * width ...]. */
static qn_status map_row(cursor *c, uint32_t y, uint32_t width, uint8_t *costs, qn_error *err) {
    text_line l;
    if (!next_line(c, &l))
        return at(err, qn__fail(err, QN_E_TRUNCATED, QN_NONE,
                                "map ends after %u rows; the header promised more", y),
                  c->line, 0);
    size_t n = l.n < width ? l.n : width;
    for (size_t x = 0; x < n; x++) {
        uint8_t v = terrain(l.s[x]);
        char buf[8];
        if (!v)
            return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                                    "line %u, column %zu: unknown terrain character %s",
                                    c->line, x + 1, shown(l.s[x], buf)),
                      c->line, (uint32_t)(x + 1));
        costs[(size_t)y * width + x] = v;
    }
    if (l.n == width) return QN_OK;
    if (l.n < width && !l.newline)
        return at(err, qn__fail(err, QN_E_TRUNCATED, QN_NONE,
                                "line %u: input ends inside row %u (%zu of %u cells)", c->line, y,
                                l.n, width),
                  c->line, (uint32_t)(l.n + 1));
    return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                            "line %u: row %u has %zu cells, expected %u", c->line, y, l.n,
                            width),
              c->line, (uint32_t)(l.n < width ? l.n + 1 : (size_t)width + 1));
}

/* Reads the rows, then checks that only blank lines follow. */
static qn_status map_body(cursor *c, const map_header *h, uint8_t *costs, qn_error *err) {
    for (uint32_t y = 0; y < h->height; y++) {
        qn_status st = map_row(c, y, h->width, costs, err);
        if (st != QN_OK) return st;
    }
    text_line l;
    while (next_line(c, &l))
        if (!is_blank(&l))
            return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                                    "line %u: text after the last of %u rows", c->line,
                                    h->height),
                      c->line, 1);
    return QN_OK;
}

qn_status qn_map_load_mem(const char *text, size_t len, const qn_allocator *alloc,
                          qn_grid **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!out || (!text && len)) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    cursor c = {text, text + len, 0};
    /* Editors may start a file with a UTF-8 byte order mark: skip one. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) c.p += 3;
    if (c.end - c.p >= 3 && memcmp(c.p, "\xEF\xBB\xBF", 3) == 0)
        return at(err, qn__fail(err, QN_E_MAP_SYNTAX, QN_NONE,
                                "line 1: a second byte order mark (EF BB BF) before the header"),
                  1, 2);
    map_header h = {0, 0, false};
    qn_status st = map_header_read(&c, &h, err);
    if (st != QN_OK) return st;
    qn_allocator a = qn__allocator(alloc);
    size_t n = (size_t)h.width * h.height;
    uint8_t *costs = qn__alloc(&a, n);
    if (!costs) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory for %zu cells", n);
    st = map_body(&c, &h, costs, err);
    if (st == QN_OK) {
        qn_grid_desc d = {h.width, h.height, costs, 1.0f, {0.0f, 0.0f}};
        st = qn_grid_create(&d, &a, out, err);
    }
    qn__free(&a, costs, n);
    return st;
}

/* Loads a file and hands it to `parse`; prefixes error messages with the path. */
static qn_status load_file(const char *path, const qn_allocator *alloc, qn_error *err,
                           qn_status (*parse)(const char *, size_t, const qn_allocator *,
                                              void *, qn_error *),
                           void *out) {
    qn__error_clear(err);
    if (!path) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "path is NULL");
    qn_allocator a = qn__allocator(alloc);
    char *buf;
    size_t size;
    qn_status st = qn__read_file(path, &a, &buf, &size, err);
    if (st != QN_OK) return st;
    st = parse(buf, size, &a, out, err);
    qn__free(&a, buf, size + 1);
    if (st != QN_OK && err) {
        char msg[sizeof err->message];
        memcpy(msg, err->message, sizeof msg);
        uint32_t line = err->line, column = err->column;
        qn__fail(err, st, err->index, "%s: %s", path, msg);
        at(err, st, line, column);
    }
    return st;
}

static qn_status parse_map(const char *text, size_t len, const qn_allocator *a, void *out,
                           qn_error *err) {
    return qn_map_load_mem(text, len, a, out, err);
}

qn_status qn_map_load_file(const char *path, const qn_allocator *alloc, qn_grid **out,
                           qn_error *err) {
    if (out) *out = NULL;
    if (!out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "out is NULL");
    return load_file(path, alloc, err, parse_map, out);
}

/* ---- .map.scen ------------------------------------------------------- */

struct qn_scen {
    qn_allocator alloc;
    qn_scen_row *rows;
    uint32_t count, cap;
};

#define SCEN_FIELDS 9u

static const char *const field_names[SCEN_FIELDS] = {
    "bucket", "map", "map width", "map height", "start x",
    "start y", "goal x", "goal y", "optimal length"};

/* Fails with a message naming line, column and field i. */
static qn_status scen_fail(qn_error *err, qn_status code, uint32_t line, const token *t,
                           uint32_t i, const char *what) {
    return at(err, qn__fail(err, code, QN_NONE, "line %u, column %u: %s \"%.*s\": %s", line,
                            t[i].column, field_names[i], (int)t[i].n, t[i].s, what),
              line, t[i].column);
}

/* Parses the printed optimal length: digits, optionally '.' and digits.
** The value is the integer mantissa divided by a power of ten, both exact in
** double for up to 15 digits, so it is the correctly rounded decimal. */
static bool parse_length(const token *t, double *value, uint32_t *decimals) {
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
                                   1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t mant = 0;
    uint32_t digits = 0, frac = 0;
    bool dot = false;
    for (size_t i = 0; i < t->n; i++) {
        char ch = t->s[i];
        if (ch == '.' && !dot) {
            dot = true;
            continue;
        }
        if (ch < '0' || ch > '9') return false;
        if (++digits > 15) return false;
        mant = mant * 10 + (uint64_t)(ch - '0');
        frac += dot;
    }
    if (digits == 0 || (dot && frac == 0)) return false;
    *value = (double)mant / pow10[frac];
    *decimals = frac;
    return true;
}

/* Reads the eight numeric fields of a row (tokens 0, 2..8). */
static qn_status scen_numbers(const token *t, uint32_t line, qn_scen_row *r, qn_error *err) {
    uint32_t v[SCEN_FIELDS];
    for (uint32_t i = 0; i < SCEN_FIELDS - 1; i++) {
        if (i == 1) continue; /* the map name */
        if (!parse_u32(&t[i], &v[i]))
            return scen_fail(err, QN_E_SCEN_SYNTAX, line, t, i, "expected a whole number >= 0");
    }
    if (!parse_length(&t[8], &r->optimal, &r->decimals))
        return scen_fail(err, QN_E_SCEN_SYNTAX, line, t, 8,
                         "expected a decimal number such as 12.5");
    r->bucket = v[0];
    r->map_width = v[2];
    r->map_height = v[3];
    r->start_x = v[4];
    r->start_y = v[5];
    r->goal_x = v[6];
    r->goal_y = v[7];
    return QN_OK;
}

/* Checks a row's map size and that both cells lie on that map. */
static qn_status scen_check(const token *t, uint32_t line, const qn_scen_row *r, qn_error *err) {
    if (r->map_width == 0 || r->map_height == 0)
        return scen_fail(err, QN_E_SCEN_SYNTAX, line, t, r->map_width ? 3 : 2,
                         "map size must be at least 1x1");
    if (r->map_width > QN_MAX_GRID_SIDE || r->map_height > QN_MAX_GRID_SIDE ||
        (uint64_t)r->map_width * r->map_height > QN_MAX_GRID_CELLS)
        return scen_fail(err, QN_E_LIMIT, line, t, r->map_width > QN_MAX_GRID_SIDE ? 2 : 3,
                         "map size exceeds the grid limits");
    const uint32_t xy[4] = {r->start_x, r->start_y, r->goal_x, r->goal_y};
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t side = (i & 1) ? r->map_height : r->map_width;
        if (xy[i] >= side)
            return scen_fail(err, QN_E_SCEN_SYNTAX, line, t, 4 + i,
                             (i & 1) ? "outside the map height" : "outside the map width");
    }
    return QN_OK;
}

/* Appends a row, growing the array geometrically. */
static bool scen_push(qn_scen *s, const qn_scen_row *r) {
    if (s->count == s->cap) {
        uint32_t ncap = s->cap ? s->cap * 2 : 64;
        qn_scen_row *nr = qn__realloc(&s->alloc, s->rows, (size_t)s->cap * sizeof *nr,
                                      (size_t)ncap * sizeof *nr);
        if (!nr) return false;
        s->rows = nr;
        s->cap = ncap;
    }
    s->rows[s->count++] = *r;
    return true;
}

/* Parses one data line into a row and appends it. */
static qn_status scen_line(qn_scen *s, const text_line *l, uint32_t line, qn_error *err) {
    token t[SCEN_FIELDS + 1]; /* one more, to point at the first extra field */
    uint32_t n = split(l, t, SCEN_FIELDS + 1);
    if (n < SCEN_FIELDS && !l->newline)
        return at(err, qn__fail(err, QN_E_TRUNCATED, QN_NONE,
                                "line %u: input ends inside a row (%u of %u fields)", line, n,
                                SCEN_FIELDS),
                  line, (uint32_t)l->n + 1);
    if (n != SCEN_FIELDS)
        return at(err, qn__fail(err, QN_E_SCEN_SYNTAX, QN_NONE,
                                "line %u: expected %u fields, found %u", line, SCEN_FIELDS, n),
                  line, n > SCEN_FIELDS ? t[SCEN_FIELDS].column : (uint32_t)l->n + 1);
    qn_scen_row r;
    qn_status st = scen_numbers(t, line, &r, err);
    if (st == QN_OK) st = scen_check(t, line, &r, err);
    if (st != QN_OK) return st;
    if (!scen_push(s, &r))
        return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory at line %u", line);
    return QN_OK;
}

/* A "version" line: true when l is one; *st tells whether it is accepted. */
static bool scen_version(const text_line *l, uint32_t line, qn_status *st, qn_error *err) {
    token t[3];
    uint32_t n = split(l, t, 3);
    if (n == 0 || !token_is(&t[0], "version")) return false;
    *st = QN_OK;
    if (n != 2 || !(token_is(&t[1], "1") || token_is(&t[1], "1.0")))
        *st = at(err, qn__fail(err, QN_E_FORMAT_VERSION, QN_NONE,
                               "line %u: unsupported scenario version (need 1 or 1.0)", line),
                 line, n > 1 ? t[1].column : 1);
    return true;
}

static qn_status scen_parse(qn_scen *s, const char *text, size_t len, qn_error *err) {
    cursor c = {text, text + len, 0};
    text_line l;
    bool first = true;
    while (next_line(&c, &l)) {
        if (is_blank(&l)) continue;
        qn_status st = QN_OK;
        if (first && scen_version(&l, c.line, &st, err)) {
            first = false;
            if (st != QN_OK) return st;
            continue;
        }
        first = false;
        st = scen_line(s, &l, c.line, err);
        if (st != QN_OK) return st;
    }
    return QN_OK;
}

qn_status qn_scen_load_mem(const char *text, size_t len, const qn_allocator *alloc,
                           qn_scen **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!out || (!text && len)) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL argument");
    qn_allocator a = qn__allocator(alloc);
    qn_scen *s = qn__calloc(&a, 1, sizeof *s);
    if (!s) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory for the scenario");
    s->alloc = a;
    qn_status st = scen_parse(s, text, len, err);
    if (st != QN_OK) {
        qn_scen_destroy(s);
        return st;
    }
    *out = s;
    return QN_OK;
}

static qn_status parse_scen(const char *text, size_t len, const qn_allocator *a, void *out,
                            qn_error *err) {
    return qn_scen_load_mem(text, len, a, out, err);
}

qn_status qn_scen_load_file(const char *path, const qn_allocator *alloc, qn_scen **out,
                            qn_error *err) {
    if (out) *out = NULL;
    if (!out) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "out is NULL");
    return load_file(path, alloc, err, parse_scen, out);
}

void qn_scen_destroy(qn_scen *scen) {
    if (!scen) return;
    qn_allocator a = scen->alloc;
    qn__free(&a, scen->rows, (size_t)scen->cap * sizeof *scen->rows);
    qn__free(&a, scen, sizeof *scen);
}

uint32_t qn_scen_row_count(const qn_scen *scen) { return scen ? scen->count : 0; }

const qn_scen_row *qn_scen_row_at(const qn_scen *scen, uint32_t i) {
    return scen && i < scen->count ? &scen->rows[i] : NULL;
}

double qn_scen_tolerance(const qn_scen_row *row) {
    if (!row) return 0.0;
    /* Some files print values one unit low in the last digit, so a whole
    ** unit (and 1% against rounding) is allowed. */
    double printed = 1.01 * pow(10.0, -(double)row->decimals);
    double tol = printed > 1e-6 ? printed : 1e-6;
    double rel = 1e-5 * fabs(row->optimal);
    return tol > rel ? tol : rel;
}
