/*
** level.c: level JSON (format 1, see data/README.md) to a qn_level, which
** owns a mesh, named goals and spawns, and an optional cost grid.
**
** This is the only file that knows cJSON. The parser allocates its tree with
** the C library (cJSON has only process-wide hooks, which quadnav never sets,
** and its global error pointer is never read); everything the level keeps,
** and every scratch array, comes from the caller's allocator.
**
** Every error names the JSON element at fault: err->path holds the path
** ("quads[3].v[2]"), the message starts with it, and err->index is the index
** of the top-level array element (quad, vertex, link, goal, spawn or row).
*/
#include "internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>  /* snprintf and vsnprintf for messages; no I/O here */
#include <stdlib.h> /* qsort */

#define LEVEL_FORMAT 1


/* ---- JSON paths -------------------------------------------------------- */

/* A path segment on the C stack: the parser links one per level of descent
** and renders the chain only when an error needs it, so a large level is
** loaded without formatting a single string. */
typedef struct jpath {
    const struct jpath *parent;
    const char *key; /* ".key" segment, or NULL for an "[index]" segment */
    uint32_t index;
} jpath;

static jpath pkey(const jpath *parent, const char *key) {
    jpath p = {parent, key, 0};
    return p;
}

static jpath pidx(const jpath *parent, uint32_t index) {
    jpath p = {parent, NULL, index};
    return p;
}

/* Appends the rendering of p to buf (cap > 0, NUL-terminated, truncating);
** returns the new length. */
static size_t path_render(const jpath *p, char *buf, size_t cap) {
    size_t n = p->parent ? path_render(p->parent, buf, cap) : 0;
    int w;
    if (p->key)
        w = snprintf(buf + n, cap - n, "%s%s", p->parent ? "." : "", p->key);
    else
        w = snprintf(buf + n, cap - n, "[%u]", p->index);
    n += w > 0 ? (size_t)w : 0;
    return n < cap ? n : cap - 1;
}

/* The index of the array element nearest the root ("quads[3].v[2]" -> 3):
** the quad, vertex, link, goal, spawn or row the error is about. */
static uint32_t path_top_index(const jpath *p) {
    uint32_t index = QN_NONE;
    for (; p; p = p->parent)
        if (!p->key) index = p->index;
    return index;
}

/* ---- errors ------------------------------------------------------------ */

/* The root members the loader reads, found in one pass over the root. */
#define ROOT_KEYS 8u
static const char *const root_keys[ROOT_KEYS] = {"format", "name",   "vertices", "quads",
                                                 "links",  "goals",  "spawns",   "grid"};

/* The members the loader reads in the objects below the root (quads,
** points, the grid, cost rects): each object's are found in one pass. */
#define OBJ_KEYS 13u
static const char *const obj_keys[OBJ_KEYS] = {"v",     "rect",   "cost",      "blocked", "id",
                                               "name",  "at",     "width",     "height",
                                               "cell_size", "origin", "rows", "costs"};

typedef struct loader {
    qn_allocator a;
    qn_error *err;
    qn_level *level;
    qn__jv root;
    qn__jv root_value[ROOT_KEYS]; /* NULL: absent */
    qn__jv memo_obj;              /* the last object whose members were found */
    qn__jv memo_value[OBJ_KEYS];
    const char *memo_end;         /* ... and just past it (NULL: not known) */
    qn__jv quads_json;
    /* Mesh input, handed to qn_mesh_create (which copies it), then freed. */
    qn_vec2 *verts;
    uint32_t vert_count;  /* explicit "vertices" */
    uint32_t vert_total;  /* plus 4 per "rect" quad loaded so far */
    uint32_t vert_cap;    /* vertices allocated: explicit + 4 per rect */
    uint32_t *quad_verts; /* 4 per quad */
    float *costs;
    uint8_t *blocked;
    uint32_t quad_count;
    uint32_t id_count;    /* quads with an "id" (counted by load_quad_flags) */
    size_t id_bytes;      /* their ids' lengths, each + 1 */
    qn_link *links;
    uint32_t link_count;
    bool has_links;
    uint8_t *cells; /* grid cost bytes, handed to qn_grid_create */
    size_t cell_count;
} loader;

/* Fails with code; the message is "path: detail" and err->path the path
** (p NULL: the top level, no path). */
static qn_status fail_at(loader *c, qn_status code, const jpath *p, const char *fmt, ...)
    QN__PRINTF(4, 5);

static qn_status fail_at(loader *c, qn_status code, const jpath *p, const char *fmt, ...) {
    if (!c->err) return code;
    char where[sizeof c->err->path] = "";
    if (p) path_render(p, where, sizeof where);
    char detail[sizeof c->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    qn__fail(c->err, code, path_top_index(p), "%s%s%s", where, where[0] ? ": " : "", detail);
    qn__error_path(c->err, "%s", where);
    return code;
}

static qn_status fail_nomem(loader *c) {
    return qn__fail(c->err, QN_E_NOMEM, QN_NONE, "out of memory loading the level");
}

static const char *type_name(qn__jv j) {
    if (qn__jv_is_number(j)) return "a number";
    if (qn__jv_is_string(j)) return "a string";
    if (qn__jv_is_bool(j)) return "a boolean";
    if (qn__jv_is_null(j)) return "null";
    if (qn__jv_is_array(j)) return "an array";
    if (qn__jv_is_object(j)) return "an object";
    return "an unknown value";
}

/* ---- values ------------------------------------------------------------ */

/* Index of key in obj_keys, or -1. */
static int obj_key_index(const char *key) {
    for (uint32_t k = 0; k < OBJ_KEYS; k++) /* first bytes first: most differ there */
        if (key[0] == obj_keys[k][0] && strcmp(key, obj_keys[k]) == 0) return (int)k;
    return -1;
}

/* The obj_keys entry a JSON key reads as (escapes decoded), or -1. */
static int json_key_index(qn__jv key) {
    char buf[16];
    const char *s = key + 1, *e = s;
    while (*e != '"' && *e != '\\' && e - s < (ptrdiff_t)sizeof buf - 1)
        e++;
    if (*e == '"') { /* at most sizeof buf - 1 bytes, no escape */
        memcpy(buf, s, (size_t)(e - s));
        buf[e - s] = '\0';
    } else if (qn__jv_string(key, buf, sizeof buf) >= sizeof buf) {
        return -1; /* longer than any key looked for */
    }
    return obj_key_index(buf);
}

/* Finds the first occurrence of each obj_keys member of obj in one pass,
** and where obj ends (so that the walk to the next quad does not skip it
** again: next_item). */
static void memo_members(loader *c, qn__jv obj) {
    c->memo_obj = obj;
    c->memo_end = NULL;
    memset(c->memo_value, 0, sizeof c->memo_value);
    if (!qn__jv_is_object(obj)) return;
    const char *end = NULL;
    for (qn__jv k = qn__jv_child(obj); k; k = qn__jv_after(end)) {
        int i = json_key_index(k);
        qn__jv v = qn__jv_key_value(k);
        if (i >= 0 && !c->memo_value[i]) c->memo_value[i] = v;
        end = qn__jv_end(v);
    }
    if (end) c->memo_end = qn__jv_close(end);
}

/* The element after e in its array, without skipping e again when e is
** the object whose members were found last. */
static qn__jv next_item(const loader *c, qn__jv e) {
    return e == c->memo_obj && c->memo_end ? qn__jv_after(c->memo_end) : qn__jv_next(e);
}

/* The value of obj's first member called key (NULL when none). The root's
** members are found once (load_tree), another object's when the loader
** first asks for one of them, so no object is scanned once per key. */
static qn__jv field(loader *c, qn__jv obj, const char *key) {
    if (obj == c->root)
        for (uint32_t k = 0; k < ROOT_KEYS; k++)
            if (strcmp(key, root_keys[k]) == 0) return c->root_value[k];
    int i = obj_key_index(key);
    if (i < 0) return qn__jv_member(obj, key);
    if (obj != c->memo_obj) memo_members(c, obj);
    return c->memo_value[i];
}

/* A required member: QN_E_MISSING_FIELD when absent. */
static qn_status need(loader *c, qn__jv obj, const jpath *objp, const char *key,
                      qn__jv *out) {
    *out = field(c, obj, key);
    if (*out) return QN_OK;
    jpath p = pkey(objp, key);
    return fail_at(c, QN_E_MISSING_FIELD, &p, "required field is missing");
}

/* A finite number. JSON has no NaN; an overlong exponent (1e999) parses to
** infinity and lands here. */
static qn_status get_number(loader *c, qn__jv j, const jpath *p, double *out) {
    *out = 0;
    if (!qn__jv_is_number(j))
        return fail_at(c, QN_E_JSON_TYPE, p, "expected a number, got %s", type_name(j));
    double d = qn__jv_number(j);
    if (!isfinite(d))
        return fail_at(c, QN_E_BAD_NUMBER, p, "number is too large (it reads as infinity)");
    *out = d;
    return QN_OK;
}

/* A number with no fractional part (range checks are the caller's). */
static qn_status get_integer(loader *c, qn__jv j, const jpath *p, double *out) {
    qn_status st = get_number(c, j, p, out);
    if (st == QN_OK && *out != floor(*out))
        return fail_at(c, QN_E_JSON_TYPE, p, "expected an integer, got %.17g", *out);
    return st;
}

/* An index into a table of `count` `plural`: an integer in [0, count);
** `code` for a negative or too large one. */
static qn_status get_index(loader *c, qn__jv j, const jpath *p, uint32_t count,
                           qn_status code, const char *what, const char *plural, uint32_t *out) {
    double d;
    qn_status st = get_integer(c, j, p, &d);
    if (st != QN_OK) return st;
    if (d < 0 || d >= (double)count)
        return fail_at(c, code, p, "%s index %.17g out of range (%u %s)", what, d, count, plural);
    *out = (uint32_t)d;
    return QN_OK;
}

/* A coordinate: finite, |x| <= QN_MAX_COORD. */
static qn_status get_coord(loader *c, qn__jv j, const jpath *p, float *out) {
    double d;
    *out = 0;
    qn_status st = get_number(c, j, p, &d);
    if (st != QN_OK) return st;
    if (fabs(d) > (double)QN_MAX_COORD)
        return fail_at(c, QN_E_BAD_NUMBER, p, "coordinate %.17g is beyond +-%g", d,
                       (double)QN_MAX_COORD);
    *out = (float)d;
    return QN_OK;
}

/* Number of elements of an array, counting no further than max + 1. */
static size_t count_items(qn__jv arr, size_t max) {
    size_t n = 0;
    for (qn__jv e = qn__jv_child(arr); e && n <= max; e = qn__jv_next(e))
        n++;
    return n;
}

/* get_array's two checks, for a caller that counts the elements itself. */
static qn_status array_type(loader *c, qn__jv j, const jpath *p, const char *plural) {
    if (qn__jv_is_array(j)) return QN_OK;
    return fail_at(c, QN_E_JSON_TYPE, p, "expected an array of %s, got %s", plural, type_name(j));
}
static qn_status array_limit(loader *c, const jpath *p, size_t n, uint32_t max,
                             const char *plural) {
    if (n <= max) return QN_OK;
    return fail_at(c, QN_E_LIMIT, p, "more than %u %s (the documented limit)", max, plural);
}

/* An array of at most max elements; *count gets its length. */
static qn_status get_array(loader *c, qn__jv j, const jpath *p, uint32_t max,
                           const char *plural, uint32_t *count) {
    *count = 0;
    qn_status st = array_type(c, j, p, plural);
    size_t n = st == QN_OK ? count_items(j, max) : 0;
    if (st == QN_OK) st = array_limit(c, p, n, max, plural);
    if (st == QN_OK) *count = (uint32_t)n;
    return st;
}

/* An array of exactly n elements (a point, a rect, a quad's indices). */
static qn_status get_tuple(loader *c, qn__jv j, const jpath *p, size_t n, const char *what) {
    if (!qn__jv_is_array(j))
        return fail_at(c, QN_E_JSON_TYPE, p, "expected %s, got %s", what, type_name(j));
    size_t got = count_items(j, n);
    if (got != n)
        return fail_at(c, QN_E_JSON_TYPE, p, "expected %s, got an array of %s%zu", what,
                       got > n ? "more than " : "", got > n ? n : got);
    return QN_OK;
}

/* A point [x, y] of coordinates. */
static qn_status get_point(loader *c, qn__jv j, const jpath *p, qn_vec2 *out) {
    qn_status st = get_tuple(c, j, p, 2, "a point [x, y]");
    jpath px = pidx(p, 0), py = pidx(p, 1);
    if (st == QN_OK) st = get_coord(c, qn__jv_child(j), &px, &out->x);
    if (st == QN_OK) st = get_coord(c, qn__jv_next(qn__jv_child(j)), &py, &out->y);
    return st;
}

/* A name: a non-empty string of at most QN_MAX_NAME bytes, copied to out. */
static qn_status get_name(loader *c, qn__jv j, const jpath *p, char out[QN_MAX_NAME + 1]) {
    if (!qn__jv_is_string(j))
        return fail_at(c, QN_E_JSON_TYPE, p, "expected a string, got %s", type_name(j));
    size_t n = qn__jv_string(j, out, QN_MAX_NAME + 1);
    if (n == 0) return fail_at(c, QN_E_JSON_TYPE, p, "expected a non-empty string");
    if (n > QN_MAX_NAME)
        return fail_at(c, QN_E_LIMIT, p, "name is %zu bytes long; the limit is %u", n, QN_MAX_NAME);
    return QN_OK;
}

/* ---- format, name, vertices -------------------------------------------- */

static qn_status load_format(loader *c, qn__jv root) {
    qn__jv f;
    jpath p = pkey(NULL, "format");
    qn_status st = need(c, root, NULL, "format", &f);
    double d = 0;
    if (st == QN_OK) st = get_number(c, f, &p, &d);
    if (st == QN_OK && d != LEVEL_FORMAT)
        return fail_at(c, QN_E_FORMAT_VERSION, &p,
                       "format %.17g is not supported (this loader reads format %d)", d,
                       LEVEL_FORMAT);
    return st;
}

static qn_status load_name(loader *c, qn__jv root) {
    qn__jv n = field(c, root, "name");
    jpath p = pkey(NULL, "name");
    return n ? get_name(c, n, &p, c->level->name) : QN_OK;
}

/* Counts explicit vertices and rect quads, checks the limits, and allocates
** the mesh input arrays. */
static qn_status size_mesh_input(loader *c, qn__jv root) {
    qn__jv v = field(c, root, "vertices"), q;
    jpath pv = pkey(NULL, "vertices"), pq = pkey(NULL, "quads");
    qn_status st = v ? get_array(c, v, &pv, QN_MAX_VERTICES, "vertices", &c->vert_count) : QN_OK;
    if (st == QN_OK) st = need(c, root, NULL, "quads", &q);
    if (st == QN_OK) st = array_type(c, q, &pq, "quads");
    if (st != QN_OK) return st;
    /* The quads and the rects among them, in one pass (get_array's checks). */
    size_t n = 0, rects = 0;
    for (qn__jv e = qn__jv_child(q); e && n <= QN_MAX_QUADS; e = next_item(c, e), n++)
        rects += field(c, e, "rect") != NULL;
    st = array_limit(c, &pq, n, QN_MAX_QUADS, "quads");
    if (st != QN_OK) return st;
    c->quad_count = (uint32_t)n;
    if (c->quad_count == 0) return fail_at(c, QN_E_MISSING_FIELD, &pq, "needs at least one quad");
    size_t total = (size_t)c->vert_count + 4 * rects;
    if (total > QN_MAX_VERTICES)
        return fail_at(c, QN_E_LIMIT, &pq, "%zu vertices with 4 per rect, more than the limit %u",
                       total, QN_MAX_VERTICES);
    c->quads_json = q;
    c->vert_cap = (uint32_t)total;
    c->verts = qn__calloc(&c->a, total, sizeof *c->verts);
    c->quad_verts = qn__calloc(&c->a, c->quad_count, 4 * sizeof *c->quad_verts);
    c->costs = qn__calloc(&c->a, c->quad_count, sizeof *c->costs);
    c->blocked = qn__calloc(&c->a, c->quad_count, sizeof *c->blocked);
    if (!c->verts || !c->quad_verts || !c->costs || !c->blocked) return fail_nomem(c);
    return QN_OK;
}

static qn_status load_vertices(loader *c, qn__jv root) {
    qn__jv v = field(c, root, "vertices");
    jpath pv = pkey(NULL, "vertices");
    uint32_t i = 0;
    for (qn__jv e = v ? qn__jv_child(v) : NULL; e; e = qn__jv_next(e), i++) {
        jpath p = pidx(&pv, i);
        qn_status st = get_point(c, e, &p, &c->verts[i]);
        if (st != QN_OK) return st;
    }
    return QN_OK;
}

/* ---- quads ------------------------------------------------------------- */

static qn_status load_quad_v(loader *c, qn__jv v, const jpath *p, uint32_t *idx) {
    qn_status st = get_tuple(c, v, p, 4, "4 vertex indices");
    if (st != QN_OK) return st;
    if (c->vert_count == 0)
        return fail_at(c, QN_E_MISSING_FIELD, p,
                       "vertex indices need the top-level \"vertices\" array");
    uint32_t k = 0;
    for (qn__jv e = qn__jv_child(v); e && st == QN_OK; e = qn__jv_next(e), k++) {
        jpath pk = pidx(p, k);
        st = get_index(c, e, &pk, c->vert_count, QN_E_INDEX_RANGE, "vertex", "vertices", &idx[k]);
    }
    return st;
}

/* A rect becomes four new vertices, wound with positive area. */
static qn_status load_quad_rect(loader *c, qn__jv r, const jpath *p, uint32_t *idx) {
    qn_status st = get_tuple(c, r, p, 4, "a rect [x0, y0, x1, y1]");
    float v[4];
    uint32_t k = 0;
    for (qn__jv e = st == QN_OK ? qn__jv_child(r) : NULL; e && st == QN_OK; e = qn__jv_next(e), k++) {
        jpath pk = pidx(p, k);
        st = get_coord(c, e, &pk, &v[k]);
    }
    if (st != QN_OK) return st;
    if (!(v[0] < v[2]) || !(v[1] < v[3]))
        return fail_at(c, QN_E_DEGENERATE_QUAD, p,
                       "rect [%g, %g, %g, %g] needs x0 < x1 and y0 < y1", (double)v[0],
                       (double)v[1], (double)v[2], (double)v[3]);
    uint32_t base = c->vert_total; /* counts up from vert_count as rects are added */
    c->verts[base + 0] = qn__v2(v[0], v[1]);
    c->verts[base + 1] = qn__v2(v[2], v[1]);
    c->verts[base + 2] = qn__v2(v[2], v[3]);
    c->verts[base + 3] = qn__v2(v[0], v[3]);
    for (k = 0; k < 4; k++)
        idx[k] = base + k;
    c->vert_total += 4;
    return QN_OK;
}

static qn_status load_quad_cost(loader *c, qn__jv q, const jpath *qp, float *cost) {
    qn__jv j = field(c, q, "cost");
    jpath p = pkey(qp, "cost");
    double d = 1;
    qn_status st = j ? get_number(c, j, &p, &d) : QN_OK;
    if (st == QN_OK && (d < 1 || d > (double)QN_MAX_QUAD_COST))
        return fail_at(c, QN_E_BAD_NUMBER, &p, "cost %.17g is outside [1, %g]", d,
                       (double)QN_MAX_QUAD_COST);
    *cost = (float)d;
    return st;
}

static qn_status load_quad_flags(loader *c, qn__jv q, const jpath *qp, uint8_t *blocked) {
    qn__jv b = field(c, q, "blocked"), id = field(c, q, "id");
    jpath pb = pkey(qp, "blocked"), pi = pkey(qp, "id");
    if (b && !qn__jv_is_bool(b))
        return fail_at(c, QN_E_JSON_TYPE, &pb, "expected true or false, got %s", type_name(b));
    char name[QN_MAX_NAME + 1];
    qn_status st = id ? get_name(c, id, &pi, name) : QN_OK;
    if (st != QN_OK) return st;
    if (id) c->id_count++, c->id_bytes += qn__jv_string(id, NULL, 0) + 1;
    *blocked = qn__jv_is_true(b) ? 1 : 0;
    return QN_OK;
}

/* Exactly one of "v" and "rect": both is a type error (the object is not a
** quad of either kind), neither a missing field. */
static qn_status load_quad(loader *c, qn__jv q, const jpath *p, uint32_t i) {
    if (!qn__jv_is_object(q))
        return fail_at(c, QN_E_JSON_TYPE, p, "expected a quad object, got %s", type_name(q));
    qn__jv v = field(c, q, "v"), r = field(c, q, "rect");
    if (v && r) return fail_at(c, QN_E_JSON_TYPE, p, "has both \"v\" and \"rect\"; give one");
    if (!v && !r)
        return fail_at(c, QN_E_MISSING_FIELD, p,
                       "needs \"v\" (4 vertex indices) or \"rect\" ([x0, y0, x1, y1])");
    jpath pv = pkey(p, v ? "v" : "rect");
    uint32_t *idx = &c->quad_verts[4 * (size_t)i];
    qn_status st = v ? load_quad_v(c, v, &pv, idx) : load_quad_rect(c, r, &pv, idx);
    if (st == QN_OK) st = load_quad_cost(c, q, p, &c->costs[i]);
    if (st == QN_OK) st = load_quad_flags(c, q, p, &c->blocked[i]);
    return st;
}

static qn_status load_quads(loader *c) {
    jpath pq = pkey(NULL, "quads");
    uint32_t i = 0;
    c->vert_total = c->vert_count;
    for (qn__jv e = qn__jv_child(c->quads_json); e; e = next_item(c, e), i++) {
        jpath p = pidx(&pq, i);
        qn_status st = load_quad(c, e, &p, i);
        if (st != QN_OK) return st;
    }
    return QN_OK;
}

/* The quads' "id"s (checked by load_quad_flags) go into the level's name
** table, where qn_level_find_quad finds them; an id used twice is an error. */
static qn_status load_quad_ids(loader *c) {
    uint32_t i = 0, first, later;
    qn__jv q, id;
    qn__names *t = &c->level->quad_ids;
    if (qn__names_init(t, &c->a, c->quad_count, c->id_count, c->id_bytes) != QN_OK)
        return fail_nomem(c);
    for (q = c->id_count ? qn__jv_child(c->quads_json) : NULL; q; q = next_item(c, q), i++)
        if ((id = field(c, q, "id")) != NULL) {
            char name[QN_MAX_NAME + 1]; /* load_quad_flags checked the length */
            qn__jv_string(id, name, sizeof name);
            qn__names_add(t, i, name);
        }
    if (qn__names_finish(t, &first, &later) == QN_OK) return QN_OK;
    jpath pq = pkey(NULL, "quads"), pe = pidx(&pq, later), p = pkey(&pe, "id");
    return fail_at(c, QN_E_DUPLICATE_NAME, &p, "\"%s\" is already the id of quads[%u]",
                   qn__names_get(t, later), first);
}

/* ---- links --------------------------------------------------------------- */

/* Links are checked here only for shape and quad range; duplicates, self
** links and the shared edge are the mesh's to judge. */
static qn_status load_links(loader *c, qn__jv root) {
    qn__jv l = field(c, root, "links");
    jpath pl = pkey(NULL, "links");
    if (!l) return QN_OK;
    qn_status st = get_array(c, l, &pl, QN_MAX_LINKS, "links", &c->link_count);
    if (st != QN_OK) return st;
    c->has_links = true;
    c->links = qn__calloc(&c->a, c->link_count, sizeof *c->links);
    if (!c->links) return fail_nomem(c);
    uint32_t i = 0;
    for (qn__jv e = qn__jv_child(l); e && st == QN_OK; e = qn__jv_next(e), i++) {
        jpath p = pidx(&pl, i), pa = pidx(&p, 0), pb = pidx(&p, 1);
        st = get_tuple(c, e, &p, 2, "a link [a, b] of two quad indices");
        if (st == QN_OK)
            st = get_index(c, qn__jv_child(e), &pa, c->quad_count, QN_E_LINK_TARGET, "quad", "quads",
                           &c->links[i].a);
        if (st == QN_OK)
            st = get_index(c, qn__jv_next(qn__jv_child(e)), &pb, c->quad_count, QN_E_LINK_TARGET, "quad", "quads",
                           &c->links[i].b);
    }
    return st;
}

/* ---- goals and spawns -------------------------------------------------- */

static int cmp_point_name(const void *a, const void *b) {
    const level_point *pa = *(const level_point *const *)a;
    const level_point *pb = *(const level_point *const *)b;
    int d = strcmp(pa->name, pb->name);
    if (d) return d;
    return (pa > pb) - (pa < pb); /* ties in file order, for a stable report */
}

/* Names must be unique within the array: sorted, a duplicate is a neighbour.
** The duplicate reported is the earliest second use in file order. */
static qn_status check_unique(loader *c, const char *key, const level_point *pts, uint32_t n) {
    if (n < 2) return QN_OK;
    const level_point **s = qn__calloc(&c->a, n, sizeof *s);
    if (!s) return fail_nomem(c);
    for (uint32_t i = 0; i < n; i++)
        s[i] = &pts[i];
    qsort((void *)s, n, sizeof *s, cmp_point_name);
    uint32_t later = QN_NONE, first = 0;
    for (uint32_t i = 1; i < n; i++) {
        uint32_t k = (uint32_t)(s[i] - pts);
        if (k < later && strcmp(s[i - 1]->name, s[i]->name) == 0) {
            later = k;
            first = (uint32_t)(s[i - 1] - pts);
        }
    }
    qn__free(&c->a, (void *)s, n * sizeof *s);
    if (later == QN_NONE) return QN_OK;
    jpath pa = pkey(NULL, key), pe = pidx(&pa, later), p = pkey(&pe, "name");
    return fail_at(c, QN_E_DUPLICATE_NAME, &p, "\"%s\" is already the name of %s[%u]",
                   pts[later].name, key, first);
}

static qn_status load_point(loader *c, qn__jv e, const jpath *p, level_point *out) {
    if (!qn__jv_is_object(e))
        return fail_at(c, QN_E_JSON_TYPE, p, "expected {\"name\": ..., \"at\": [x, y]}, got %s",
                       type_name(e));
    qn__jv name, at;
    jpath pn = pkey(p, "name"), pa = pkey(p, "at");
    qn_status st = need(c, e, p, "name", &name);
    if (st == QN_OK) st = get_name(c, name, &pn, out->name);
    if (st == QN_OK) st = need(c, e, p, "at", &at);
    if (st == QN_OK) st = get_point(c, at, &pa, &out->at);
    return st;
}

/* "goals" or "spawns": named points. Points outside the mesh are allowed
** here; building a field from one reports it. */
static qn_status load_points(loader *c, qn__jv root, const char *key, uint32_t max,
                             level_point **out, uint32_t *count) {
    qn__jv arr = field(c, root, key);
    jpath pk = pkey(NULL, key);
    if (!arr) return QN_OK;
    uint32_t n;
    qn_status st = get_array(c, arr, &pk, max, key, &n);
    if (st != QN_OK) return st;
    *out = qn__calloc(&c->a, n, sizeof **out);
    if (!*out) return fail_nomem(c);
    *count = n; /* from here the level frees the array */
    uint32_t i = 0;
    for (qn__jv e = qn__jv_child(arr); e && st == QN_OK; e = qn__jv_next(e), i++) {
        jpath p = pidx(&pk, i);
        st = load_point(c, e, &p, &(*out)[i]);
    }
    return st == QN_OK ? check_unique(c, key, *out, n) : st;
}

/* ---- grid ---------------------------------------------------------------- */

/* '.', 'G', 'S' are ground; '@', 'O', 'T', 'W' walls, as in a MovingAI map. */
static uint8_t cell_cost(char ch) {
    switch (ch) {
    case '.':
    case 'G':
    case 'S':
        return QN_CELL_NORMAL;
    case '@':
    case 'O':
    case 'T':
    case 'W':
        return QN_CELL_WALL;
    default:
        return 0;
    }
}

/* grid.width or grid.height: an integer in [1, QN_MAX_GRID_SIDE]. */
static qn_status grid_side(loader *c, qn__jv g, const jpath *gp, const char *key,
                           uint32_t *out) {
    qn__jv j;
    jpath p = pkey(gp, key);
    double d = 0;
    qn_status st = need(c, g, gp, key, &j);
    if (st == QN_OK) st = get_integer(c, j, &p, &d);
    if (st != QN_OK) return st;
    if (d < 1) return fail_at(c, QN_E_BAD_NUMBER, &p, "%.17g cells; at least 1 needed", d);
    if (d > QN_MAX_GRID_SIDE)
        return fail_at(c, QN_E_LIMIT, &p, "%.17g cells, more than the limit %u", d,
                       QN_MAX_GRID_SIDE);
    *out = (uint32_t)d;
    return QN_OK;
}

/* Width, height, cell size and origin; the grid must lie within
** +-QN_MAX_COORD like every other coordinate. */
static qn_status grid_shape(loader *c, qn__jv g, const jpath *gp, qn_grid_desc *d) {
    qn_status st = grid_side(c, g, gp, "width", &d->width);
    if (st == QN_OK) st = grid_side(c, g, gp, "height", &d->height);
    if (st != QN_OK) return st;
    if ((uint64_t)d->width * d->height > QN_MAX_GRID_CELLS)
        return fail_at(c, QN_E_LIMIT, gp, "%u x %u cells, more than the limit %u", d->width,
                       d->height, QN_MAX_GRID_CELLS);
    qn__jv cs = field(c, g, "cell_size"), org = field(c, g, "origin");
    jpath pc = pkey(gp, "cell_size"), po = pkey(gp, "origin");
    d->cell_size = 1;
    if (cs) st = get_coord(c, cs, &pc, &d->cell_size);
    if (st == QN_OK && !(d->cell_size > 0))
        return fail_at(c, QN_E_BAD_NUMBER, &pc, "cell size must be above 0");
    if (st == QN_OK && org) st = get_point(c, org, &po, &d->origin);
    if (st != QN_OK) return st;
    double ex = (double)d->origin.x + (double)d->width * (double)d->cell_size;
    double ey = (double)d->origin.y + (double)d->height * (double)d->cell_size;
    if (ex > (double)QN_MAX_COORD || ey > (double)QN_MAX_COORD)
        return fail_at(c, QN_E_BAD_NUMBER, gp, "the grid reaches beyond +-%g",
                       (double)QN_MAX_COORD);
    return QN_OK;
}

/* text: room for width + 1 bytes, where the row is decoded. */
static qn_status grid_row(loader *c, qn__jv row, const jpath *p, uint32_t width, char *text,
                          uint8_t *cells) {
    if (!qn__jv_is_string(row))
        return fail_at(c, QN_E_JSON_TYPE, p, "expected a string of cells, got %s", type_name(row));
    size_t n = qn__jv_string(row, text, (size_t)width + 1);
    if (n != width)
        return fail_at(c, QN_E_MISMATCH, p, "row has %zu cells but the width is %u", n, width);
    for (size_t x = 0; x < n; x++) {
        unsigned char ch = (unsigned char)text[x];
        cells[x] = cell_cost((char)ch);
        if (cells[x] == 0)
            return fail_at(c, QN_E_MAP_SYNTAX, p,
                           "cell %zu is '%c' (0x%02x); use . G S for ground, @ O T W for walls", x,
                           ch >= 0x20 && ch < 0x7f ? ch : '?', ch);
    }
    return QN_OK;
}

static qn_status grid_rows(loader *c, qn__jv g, const jpath *gp, const qn_grid_desc *d) {
    qn__jv rows;
    jpath pr = pkey(gp, "rows");
    qn_status st = need(c, g, gp, "rows", &rows);
    if (st != QN_OK) return st;
    if (!qn__jv_is_array(rows))
        return fail_at(c, QN_E_JSON_TYPE, &pr, "expected an array of strings, got %s",
                       type_name(rows));
    size_t n = count_items(rows, d->height);
    if (n != d->height)
        return fail_at(c, QN_E_MISMATCH, &pr, "%s%zu rows but the height is %u",
                       n > d->height ? "more than " : "", n > d->height ? (size_t)d->height : n,
                       d->height);
    char *text = qn__alloc(&c->a, (size_t)d->width + 1);
    if (!text) return fail_nomem(c);
    uint32_t y = 0;
    for (qn__jv e = qn__jv_child(rows); e && st == QN_OK; e = qn__jv_next(e), y++) {
        jpath p = pidx(&pr, y);
        st = grid_row(c, e, &p, d->width, text, &c->cells[(size_t)y * d->width]);
    }
    qn__free(&c->a, text, (size_t)d->width + 1);
    return st;
}

/* One grid.costs entry: {"rect": [x0, y0, x1, y1], "cost": 1..255} in
** cells; *painted accumulates the cells written (bounded, so a file cannot
** make the loader paint the same huge area millions of times). */
static qn_status grid_cost_rect(loader *c, qn__jv e, const jpath *p, const qn_grid_desc *d,
                                uint64_t *painted) {
    if (!qn__jv_is_object(e))
        return fail_at(c, QN_E_JSON_TYPE, p, "expected {\"rect\": ..., \"cost\": ...}, got %s",
                       type_name(e));
    qn__jv r, cj;
    jpath pr = pkey(p, "rect"), pc = pkey(p, "cost");
    double v[4], cost = 0;
    qn_status st = need(c, e, p, "rect", &r);
    if (st == QN_OK) st = get_tuple(c, r, &pr, 4, "a cell rect [x0, y0, x1, y1]");
    uint32_t k = 0;
    for (qn__jv x = st == QN_OK ? qn__jv_child(r) : NULL; x && st == QN_OK; x = qn__jv_next(x), k++) {
        jpath pk = pidx(&pr, k);
        st = get_integer(c, x, &pk, &v[k]);
    }
    if (st == QN_OK) st = need(c, e, p, "cost", &cj);
    if (st == QN_OK) st = get_integer(c, cj, &pc, &cost);
    if (st != QN_OK) return st;
    if (!(0 <= v[0] && v[0] < v[2] && v[2] <= d->width && 0 <= v[1] && v[1] < v[3] &&
          v[3] <= d->height))
        return fail_at(c, QN_E_INDEX_RANGE, &pr,
                       "[%.17g, %.17g, %.17g, %.17g] is empty or outside the %u x %u grid "
                       "(needs 0 <= x0 < x1 <= width, 0 <= y0 < y1 <= height)",
                       v[0], v[1], v[2], v[3], d->width, d->height);
    if (cost < 1 || cost > 255)
        return fail_at(c, QN_E_BAD_NUMBER, &pc, "cost %.17g is outside [1, 255]", cost);
    *painted += (uint64_t)(v[2] - v[0]) * (uint64_t)(v[3] - v[1]);
    if (*painted > QN_MAX_GRID_CELLS)
        return fail_at(c, QN_E_LIMIT, p, "cost rects paint more than %u cells in all",
                       QN_MAX_GRID_CELLS);
    for (uint32_t y = (uint32_t)v[1]; y < (uint32_t)v[3]; y++)
        memset(&c->cells[(size_t)y * d->width + (size_t)v[0]], (int)cost, (size_t)(v[2] - v[0]));
    return QN_OK;
}

static qn_status grid_costs(loader *c, qn__jv g, const jpath *gp, const qn_grid_desc *d) {
    qn__jv costs = field(c, g, "costs");
    jpath pc = pkey(gp, "costs");
    if (!costs) return QN_OK;
    uint32_t n;
    qn_status st = get_array(c, costs, &pc, QN_MAX_GRID_CELLS, "cost rects", &n);
    uint64_t painted = 0;
    uint32_t i = 0;
    for (qn__jv e = st == QN_OK ? qn__jv_child(costs) : NULL; e && st == QN_OK; e = qn__jv_next(e), i++) {
        jpath p = pidx(&pc, i);
        st = grid_cost_rect(c, e, &p, d, &painted);
    }
    return st;
}

/* qn_grid_create's own message gets the "grid" path in front. */
static qn_status grid_create(loader *c, const qn_grid_desc *d, const jpath *gp) {
    qn_status st = qn__grid_create_costs(d, &c->a, &c->level->grid, c->err);
    if (st == QN_OK || !c->err || st == QN_E_NOMEM) return st;
    char msg[sizeof c->err->message];
    memcpy(msg, c->err->message, sizeof msg);
    return fail_at(c, st, gp, "%s", msg);
}

static qn_status load_grid(loader *c, qn__jv root) {
    qn__jv g = field(c, root, "grid");
    jpath gp = pkey(NULL, "grid");
    if (!g) return QN_OK;
    if (!qn__jv_is_object(g))
        return fail_at(c, QN_E_JSON_TYPE, &gp, "expected an object, got %s", type_name(g));
    qn_grid_desc d;
    memset(&d, 0, sizeof d);
    qn_status st = grid_shape(c, g, &gp, &d);
    if (st != QN_OK) return st;
    c->cell_count = (size_t)d.width * d.height;
    c->cells = qn__alloc(&c->a, c->cell_count);
    if (!c->cells) return fail_nomem(c);
    st = grid_rows(c, g, &gp, &d);
    if (st == QN_OK) st = grid_costs(c, g, &gp, &d);
    d.costs = c->cells;
    if (st == QN_OK) st = grid_create(c, &d, &gp);
    qn__free(&c->a, c->cells, c->cell_count); /* the grid has its own copy */
    c->cells = NULL;
    c->cell_count = 0;
    return st;
}

/* ---- mesh -------------------------------------------------------------- */

/* qn_mesh_create names the quad or link by index; put its JSON path (and the
** quad's "id", when it has one) in front of the message. */
static qn_status annotate_mesh_error(loader *c, qn_status st) {
    qn_error *e = c->err;
    bool link = st == QN_E_LINK_TARGET || st == QN_E_LINK_NO_EDGE || st == QN_E_LINK_DUPLICATE;
    if (!e || e->index == QN_NONE || e->index >= (link ? c->link_count : c->quad_count)) return st;
    jpath top = pkey(NULL, link ? "links" : "quads"), p = pidx(&top, e->index);
    const char *id = link ? NULL : qn__names_get(&c->level->quad_ids, e->index);
    char msg[sizeof e->message];
    memcpy(msg, e->message, sizeof msg);
    if (id) return fail_at(c, st, &p, "(id \"%s\") %s", id, msg);
    return fail_at(c, st, &p, "%s", msg);
}

/* The mesh input's quads, once the mesh has its own copy of them (the
** links stay: the mesh reads them later). */
static void release_quads(void *ud) {
    loader *c = ud;
    qn__free(&c->a, c->verts, (size_t)c->vert_cap * sizeof *c->verts);
    qn__free(&c->a, c->quad_verts, 4 * (size_t)c->quad_count * sizeof *c->quad_verts);
    qn__free(&c->a, c->costs, (size_t)c->quad_count * sizeof *c->costs);
    qn__free(&c->a, c->blocked, (size_t)c->quad_count * sizeof *c->blocked);
    c->verts = NULL;
    c->quad_verts = NULL;
    c->costs = NULL;
    c->blocked = NULL;
}

static qn_status build_mesh(loader *c) {
    qn_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.vertices = c->verts;
    d.vertex_count = c->vert_total;
    d.quads = c->quad_verts;
    d.quad_count = c->quad_count;
    d.costs = c->costs;
    d.blocked = c->blocked;
    d.links = c->links;
    d.link_count = c->link_count;
    d.has_links = c->has_links;
    qn_status st =
        qn__mesh_create_releasing(&d, NULL, 0, release_quads, c, &c->a, &c->level->mesh, c->err);
    return st == QN_OK ? QN_OK : annotate_mesh_error(c, st);
}

/* ---- the whole document ------------------------------------------------- */

/* JSON checks come first, all of them, so a file with both a type error and
** a geometry error reports the type error. */
static qn_status load_tree(loader *c, qn__jv root) {
    if (!qn__jv_is_object(root))
        return fail_at(c, QN_E_JSON_TYPE, NULL, "the level must be a JSON object, got %s",
                       type_name(root));
    for (qn__jv k = qn__jv_child(root); k; k = qn__jv_next(k))
        for (uint32_t i = 0; i < ROOT_KEYS; i++)
            if (!c->root_value[i] && qn__jv_key_is(k, root_keys[i]))
                c->root_value[i] = qn__jv_key_value(k);
    c->root = root; /* from here field() finds its members in root_value */
    qn_status st = load_format(c, root);
    if (st == QN_OK) st = load_name(c, root);
    if (st == QN_OK) st = size_mesh_input(c, root);
    if (st == QN_OK) st = load_vertices(c, root);
    if (st == QN_OK) st = load_quads(c);
    if (st == QN_OK) st = load_quad_ids(c);
    if (st == QN_OK) st = load_links(c, root);
    if (st == QN_OK)
        st = load_points(c, root, "goals", QN_MAX_GOALS, &c->level->goals, &c->level->goal_count);
    if (st == QN_OK)
        st = load_points(c, root, "spawns", QN_MAX_SPAWNS, &c->level->spawns,
                         &c->level->spawn_count);
    if (st == QN_OK) st = load_grid(c, root);
    return st; /* then build_mesh, once the text is no longer needed */
}

static void free_scratch(loader *c) {
    release_quads(c);
    qn__free(&c->a, c->links, (size_t)c->link_count * sizeof *c->links);
    qn__free(&c->a, c->cells, c->cell_count);
}

/* ---- parse errors -------------------------------------------------------- */

static bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static void lex_step(char ch, bool *in, bool *esc) {
    if (*esc)
        *esc = false;
    else if (*in && ch == '\\')
        *esc = true;
    else if (ch == '"')
        *in = !*in;
}

/* Is text[pos] inside a string (opened before pos, or opening at pos) that
** no quote closes before len? pos < len. */
static bool in_open_string(const char *text, size_t pos, size_t len) {
    bool in = false, esc = false;
    size_t i = 0;
    for (; i < pos; i++)
        lex_step(text[i], &in, &esc);
    if (!in) {
        if (text[pos] != '"') return false;
        in = true;
        i = pos + 1;
    }
    for (; i < len; i++) {
        lex_step(text[i], &in, &esc);
        if (!in) return false;
    }
    return true;
}

/* Is text[pos..len) the start of a literal or a number, cut off? pos < len. */
static bool cut_token(const char *text, size_t pos, size_t len) {
    static const char *const lits[] = {"true", "false", "null"};
    size_t n = len - pos;
    for (size_t k = 0; k < 3; k++)
        if (n < strlen(lits[k]) && memcmp(text + pos, lits[k], n) == 0) return true;
    if (text[pos] != '-' && !(text[pos] >= '0' && text[pos] <= '9')) return false;
    for (size_t i = pos; i < len; i++)
        if (!strchr("0123456789+-.eE", text[i])) return false;
    return true;
}

/* cJSON reports a document cut short either at its end or at the start of
** the string, literal or number that was cut, so the input is truncated when
** only whitespace or that unfinished token follows the error position. */
static bool is_truncated(const char *text, size_t pos, size_t len) {
    size_t i = pos;
    while (i < len && is_space(text[i]))
        i++;
    if (i >= len) return true;
    return in_open_string(text, pos, len) || cut_token(text, pos, len);
}

static void line_column(const char *text, size_t pos, uint32_t *line, uint32_t *col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* QN_E_TRUNCATED, located just after the last non-blank byte. */
static qn_status fail_truncated(qn_error *err, const char *text, size_t len) {
    size_t end = len;
    while (end > 0 && is_space(text[end - 1]))
        end--;
    uint32_t line, col;
    line_column(text, end, &line, &col);
    if (end == 0)
        qn__fail(err, QN_E_TRUNCATED, QN_NONE, "the input is empty or only whitespace");
    else
        qn__fail(err, QN_E_TRUNCATED, QN_NONE,
                 "line %u, column %u: the input ends before the JSON is complete", line, col);
    if (err) err->line = line, err->column = col;
    return QN_E_TRUNCATED;
}

/* Peak memory of loading a level from text that is not strict JSON (cJSON
** reads it into a tree first), in MB per MB of text. */
#define QN__JSON_PEAK_PER_MB 30

/* QN_E_JSON_SYNTAX at pos, quoting the text there. */
static qn_status fail_syntax(qn_error *err, const char *text, size_t len, size_t pos,
                             const char *what) {
    char near[17];
    size_t n = 0;
    for (; n < 16 && pos + n < len && text[pos + n] != '\n'; n++) {
        char ch = text[pos + n];
        near[n] = ch >= 0x20 && ch < 0x7f ? ch : '?';
    }
    near[n] = '\0';
    uint32_t line, col;
    line_column(text, pos, &line, &col);
    qn__fail(err, QN_E_JSON_SYNTAX, QN_NONE, "line %u, column %u: %s at '%s'", line, col, what,
             near);
    if (err) err->line = line, err->column = col;
    return QN_E_JSON_SYNTAX;
}

/* cJSON prints an infinite number as null; as a raw 1e999 it reads back
** as the same infinity, so the loader names it as before. */
static bool raw_infinities(cJSON *j) {
    for (; j; j = j->next) {
        if (cJSON_IsNumber(j) && !isfinite(j->valuedouble)) {
            const char *lit = j->valuedouble > 0 ? "1e999" : "-1e999";
            j->valuestring = cJSON_malloc(strlen(lit) + 1);
            if (!j->valuestring) return false;
            memcpy(j->valuestring, lit, strlen(lit) + 1);
            j->type = cJSON_Raw | (j->type & cJSON_StringIsConst);
        }
        if (!raw_infinities(j->child)) return false;
    }
    return true;
}

/* Text cJSON reads but strict JSON does not (a number "01", a control
** character inside a string, ...) is read by cJSON and printed back as
** strict JSON into *printed (free with cJSON_free), with the same values,
** for the in-place reader. pos: where cJSON stopped. */
static qn_status parse_lenient(qn_error *err, const char *text, size_t len, char **printed) {
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 0);
    size_t pos = end && end >= text ? (size_t)(end - text) : len;
    if (pos > len) pos = len;
    if (!root)
        return is_truncated(text, pos, len) ? fail_truncated(err, text, len)
                                            : fail_syntax(err, text, len, pos, "malformed JSON");
    while (pos < len && is_space(text[pos]))
        pos++;
    if (pos != len) {
        cJSON_Delete(root);
        return fail_syntax(err, text, len, pos, "unexpected text after the JSON value");
    }
    *printed = raw_infinities(root) ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!*printed)
        return qn__fail(err, QN_E_NOMEM, QN_NONE,
                        "out of memory parsing the JSON text (%zu bytes; text that is not strict "
                        "JSON takes up to about %zu MB per MB to load)",
                        len, (size_t)QN__JSON_PEAK_PER_MB);
    return QN_OK;
}

/* Checks text[0..len) (text[len] must be a readable NUL) and finds its
** root value: strict JSON is read in place; other text cJSON accepts is
** read through parse_lenient, *printed then holding the text read. The
** NUL is handed to cJSON as part of the buffer: cJSON skips it as
** whitespace, so a document that runs out fails at offset len rather than
** at len - 1, which tells "cut short" from "bad last byte", and no read can
** pass the buffer's end. */
static qn_status parse_json(qn_error *err, const char *text, size_t len, qn__jv *root,
                            char **printed) {
    *root = NULL;
    *printed = NULL;
    size_t nul = qn__json_find_nul_escape(text, len);
    if (nul < len)
        return fail_syntax(err, text, len, nul,
                           "\\u0000 (a NUL character) in a string; names, keys and grid rows "
                           "cannot hold one");
    if (!qn__json_well_formed(text, len, CJSON_NESTING_LIMIT)) {
        qn_status st = parse_lenient(err, text, len, printed);
        if (st != QN_OK) return st;
        text = *printed;
        len = strlen(text);
        if (!qn__json_well_formed(text, len, CJSON_NESTING_LIMIT))
            return fail_syntax(err, text, len, 0, "malformed JSON"); /* not expected */
    }
    size_t bad = qn__json_find_bad_escape(text, len);
    if (bad < len)
        return fail_syntax(err, text, len, bad,
                           "\\u escape of half a UTF-16 surrogate pair without its other half");
    while (is_space(*text))
        text++;
    *root = text;
    return QN_OK;
}

/* Loads the level in text[0..len) (text[len] must be a readable NUL).
** owned, when not NULL, is the caller's buffer holding the text (owned_size
** bytes, from alloc): it is freed as soon as the JSON has been read, before
** the mesh is built, so the text and the mesh are not in memory together. */
static qn_status load_text(const char *text, size_t len, const qn_allocator *alloc, qn_level **out,
                           qn_error *err, char *owned, size_t owned_size) {
    qn_allocator oa = qn__allocator(alloc);
    /* Editors on some systems start UTF-8 files with a byte-order mark;
    ** JSON does not allow one, so step over it (positions count after it). */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    /* cJSON would step over a second one: at most one is accepted. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        qn__fail(err, QN_E_JSON_SYNTAX, QN_NONE,
                 "line 1, column 1: a second byte order mark (EF BB BF); at most one is "
                 "allowed");
        if (err) err->line = 1, err->column = 1;
        qn__free(&oa, owned, owned_size);
        return QN_E_JSON_SYNTAX;
    }
    qn__jv root;
    char *printed;
    qn_status st = parse_json(err, text, len, &root, &printed);
    if (st != QN_OK) {
        cJSON_free(printed);
        qn__free(&oa, owned, owned_size);
        return st;
    }
    loader c;
    memset(&c, 0, sizeof c);
    c.a = qn__allocator(alloc);
    c.err = err;
    c.level = qn__calloc(&c.a, 1, sizeof *c.level);
    if (c.level) {
        c.level->alloc = c.a;
        st = load_tree(&c, root);
    } else {
        st = fail_nomem(&c);
    }
    cJSON_free(printed);
    qn__free(&oa, owned, owned_size);
    if (st == QN_OK) st = build_mesh(&c);
    free_scratch(&c);
    /* The grid's cell info once the mesh's scratch is gone (load_grid). */
    if (st == QN_OK && c.level->grid) st = qn__grid_finish(c.level->grid, err);
    if (st != QN_OK) {
        qn_level_destroy(c.level);
        return st;
    }
    *out = c.level;
    return QN_OK;
}

/* ---- public API ------------------------------------------------------------ */

qn_status qn_level_load_mem(const char *json, size_t len, const qn_allocator *alloc, qn_level **out,
                            qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!out || (!json && len > 0))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL level pointer or buffer");
    if (len > QN_MAX_FILE_BYTES)
        return qn__fail(err, QN_E_LIMIT, QN_NONE, "level text of %zu bytes, more than %u", len,
                        QN_MAX_FILE_BYTES);
    /* A NUL-terminated copy: the caller's buffer need not end in one. */
    qn_allocator a = qn__allocator(alloc);
    char *text = qn__alloc(&a, len + 1);
    if (!text) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory loading the level");
    if (len > 0) memcpy(text, json, len);
    text[len] = '\0';
    return load_text(text, len, alloc, out, err, text, len + 1);
}

/* Reads the file at path once; JSON text is loaded from that buffer (which
** load_text frees early), other forms (any: by content) through
** qn_level_load_any_mem. */
static qn_status load_path(const char *path, const qn_allocator *alloc, qn_level **out,
                           qn_error *err, bool any) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!out || !path)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL level pointer or path");
    const void *map;
    size_t len;
    if (any && qn__map_file(path, &map, &len)) { /* baked files are used in place */
        if (qn_level_sniff(map, len) == QN_LEVEL_BAKED) {
            qn_status st = qn_level_load_any_mem(map, len, alloc, out, err);
            qn__unmap_file(map, len);
            return st;
        }
        qn__unmap_file(map, len);
    }
    qn_allocator a = qn__allocator(alloc);
    char *buf;
    qn_status st = qn__read_file(path, &a, &buf, &len, err);
    if (st != QN_OK) return st;
    if (!any || qn_level_sniff(buf, len) == QN_LEVEL_JSON)
        return load_text(buf, len, alloc, out, err, buf, len + 1);
    st = qn_level_load_any_mem(buf, len, alloc, out, err);
    qn__free(&a, buf, len + 1);
    return st;
}

qn_status qn_level_load_file(const char *path, const qn_allocator *alloc, qn_level **out,
                             qn_error *err) {
    return load_path(path, alloc, out, err, false);
}

void qn_level_destroy(qn_level *level) {
    if (!level) return;
    qn_allocator a = level->alloc;
    qn_mesh_destroy(level->mesh);
    qn_grid_destroy(level->grid);
    qn__free(&a, level->goals, (size_t)level->goal_count * sizeof *level->goals);
    qn__free(&a, level->spawns, (size_t)level->spawn_count * sizeof *level->spawns);
    qn__names_free(&level->quad_ids, &a);
    qn__free(&a, level, sizeof *level);
}

const qn_mesh *qn_level_mesh(const qn_level *level) { return level ? level->mesh : NULL; }
qn_mesh *qn_level_mesh_mut(qn_level *level) { return level ? level->mesh : NULL; }

const char *qn_level_name(const qn_level *level) { return level ? level->name : ""; }

uint32_t qn_level_goal_count(const qn_level *level) { return level ? level->goal_count : 0; }

uint32_t qn_level_spawn_count(const qn_level *level) { return level ? level->spawn_count : 0; }

const qn_grid *qn_level_grid(const qn_level *level) { return level ? level->grid : NULL; }
qn_grid *qn_level_grid_mut(qn_level *level) { return level ? level->grid : NULL; }

static qn_status get_point_at(const level_point *pts, uint32_t count, uint32_t i, const char **name,
                              qn_vec2 *at) {
    if (name) *name = NULL;
    if (at) *at = qn__v2(0, 0);
    if (i >= count) return QN_E_INVALID_ARG;
    if (name) *name = pts[i].name;
    if (at) *at = pts[i].at;
    return QN_OK;
}

qn_status qn_level_goal(const qn_level *level, uint32_t i, const char **name, qn_vec2 *at) {
    return get_point_at(level ? level->goals : NULL, qn_level_goal_count(level), i, name, at);
}

qn_status qn_level_spawn(const qn_level *level, uint32_t i, const char **name, qn_vec2 *at) {
    return get_point_at(level ? level->spawns : NULL, qn_level_spawn_count(level), i, name, at);
}

uint32_t qn_level_find_quad(const qn_level *level, const char *id) {
    return level && id ? qn__names_find(&level->quad_ids, id) : QN_NONE;
}

const char *qn_level_quad_id(const qn_level *level, uint32_t quad) {
    return level ? qn__names_get(&level->quad_ids, quad) : NULL;
}

uint32_t qn_level_find_goal(const qn_level *level, const char *name) {
    if (!level || !name) return QN_NONE;
    for (uint32_t i = 0; i < level->goal_count; i++)
        if (strcmp(level->goals[i].name, name) == 0) return i;
    return QN_NONE;
}

/* ---- baked levels (.qnm, see io/bake.c) and loading by content ------------ */

/* The level section of a baked file, after the mesh: u32 name length and
** bytes; goals and spawns (u32 count, then per point u32 name length,
** bytes, f32 x, y); u32 1 and the grid (u32 width, height, f32 cell size,
** origin x, y, width*height u8 costs) or u32 0. Quad ids are not kept. */
static qn_status corrupt(qn_error *err, const char *what) {
    return qn__fail(err, QN_E_CORRUPT, QN_NONE, "baked mesh: %s", what);
}

static void write_points(qn__wbuf *w, const level_point *pts, uint32_t n) {
    qn__put_u32(w, n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = (uint32_t)strlen(pts[i].name);
        qn__put_u32(w, len);
        qn__put(w, pts[i].name, len);
        qn__put_f32(w, pts[i].at.x), qn__put_f32(w, pts[i].at.y);
    }
}

static void write_level(qn__wbuf *w, const void *ctx) {
    const qn_level *lv = ctx;
    uint32_t len = (uint32_t)strlen(lv->name);
    qn__put_u32(w, len);
    qn__put(w, lv->name, len);
    write_points(w, lv->goals, lv->goal_count);
    write_points(w, lv->spawns, lv->spawn_count);
    qn__put_u32(w, lv->grid ? 1u : 0u);
    if (!lv->grid) return;
    uint32_t gw = qn_grid_width(lv->grid), gh = qn_grid_height(lv->grid);
    qn_vec2 o = qn_grid_origin(lv->grid);
    qn__put_u32(w, gw), qn__put_u32(w, gh);
    qn__put_f32(w, qn_grid_cell_size(lv->grid)), qn__put_f32(w, o.x), qn__put_f32(w, o.y);
    qn__put(w, qn_grid_costs(lv->grid), (size_t)gw * gh);
}


qn_status qn_level_save_mem(const qn_level *level, void *buf, size_t cap, size_t *len,
                            qn_error *err) {
    qn__error_clear(err);
    if (!level || !level->mesh) return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL level");
    return qn__qnm_save_mem(level->mesh, write_level, level, buf, cap, len, err);
}

qn_status qn_level_save(const qn_level *level, const char *path, qn_error *err) {
    qn__error_clear(err);
    if (!level || !level->mesh || !path)
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL level or path");
    return qn__qnm_save_file(level->mesh, write_level, level, path, err);
}

/* ---- reading: level ---------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p, *end;
    qn_error *err;
} rd;

static bool take(rd *r, size_t n, const uint8_t **at) {
    if ((size_t)(r->end - r->p) < n) return false;
    *at = r->p;
    r->p += n;
    return true;
}

static bool take_u32(rd *r, uint32_t *v) {
    const uint8_t *b;
    if (!take(r, 4, &b)) return false;
    *v = qn__get_u32(b);
    return true;
}

static bool take_name(rd *r, char out[QN_MAX_NAME + 1], bool empty_ok) {
    uint32_t n;
    const uint8_t *b;
    if (!take_u32(r, &n) || n > QN_MAX_NAME || (!n && !empty_ok) || !take(r, n, &b)) return false;
    memcpy(out, b, n);
    out[n] = '\0';
    return strlen(out) == n; /* no NUL inside */
}

static qn_status take_points(rd *r, qn_level *lv, bool goals) {
    uint32_t n, max = goals ? QN_MAX_GOALS : QN_MAX_SPAWNS;
    if (!take_u32(r, &n) || n > max) return corrupt(r->err, "goal or spawn count out of range");
    if (n == 0) return QN_OK;
    level_point *pts = qn__calloc(&lv->alloc, n, sizeof *pts);
    if (!pts) return qn__fail(r->err, QN_E_NOMEM, QN_NONE, "out of memory (level)");
    if (goals) lv->goals = pts, lv->goal_count = n;
    else lv->spawns = pts, lv->spawn_count = n;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *b;
        if (!take_name(r, pts[i].name, false) || !take(r, 8, &b))
            return corrupt(r->err, "a goal or spawn name is invalid");
        pts[i].at = qn__v2(qn__get_f32(b), qn__get_f32(b + 4));
        if (!qn__finite2(pts[i].at)) return corrupt(r->err, "a goal or spawn is not finite");
        for (uint32_t k = 0; k < i; k++)
            if (!strcmp(pts[k].name, pts[i].name)) return corrupt(r->err, "a name is repeated");
    }
    return QN_OK;
}

static qn_status take_grid(rd *r, qn_level *lv) {
    uint32_t has, w, h;
    const uint8_t *b, *cells;
    if (!take_u32(r, &has) || has > 1) return corrupt(r->err, "grid flag out of range");
    if (!has) return QN_OK;
    if (!take_u32(r, &w) || !take_u32(r, &h) || !take(r, 12, &b) || w == 0 || h == 0 ||
        w > QN_MAX_GRID_SIDE || h > QN_MAX_GRID_SIDE || !take(r, (size_t)w * h, &cells))
        return corrupt(r->err, "grid size out of range");
    qn_grid_desc d = {w, h, cells, qn__get_f32(b), {qn__get_f32(b + 4), qn__get_f32(b + 8)}};
    qn_status st = qn_grid_create(&d, &lv->alloc, &lv->grid, r->err);
    return st == QN_E_NOMEM ? st : st != QN_OK ? corrupt(r->err, "the grid is invalid") : QN_OK;
}

static qn_status read_level(rd *r, qn_level *lv) {
    if (!take_name(r, lv->name, true)) return corrupt(r->err, "the level name is invalid");
    qn_status st = take_points(r, lv, true);
    if (st == QN_OK) st = take_points(r, lv, false);
    if (st == QN_OK) st = take_grid(r, lv);
    if (st == QN_OK && r->p != r->end) st = corrupt(r->err, "bytes after the level section");
    return st;
}

static qn_status level_from_qnm(const uint8_t *b, size_t len, const qn_allocator *alloc,
                                qn_level **out, qn_error *err) {
    qn_allocator a = qn__allocator(alloc);
    qn_level *lv = qn__calloc(&a, 1, sizeof *lv);
    if (!lv) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (level)");
    lv->alloc = a;
    const uint8_t *rest;
    size_t rest_len;
    qn_status st = qn__qnm_load(b, len, alloc, &lv->mesh, &rest, &rest_len, err);
    if (st == QN_OK && rest) {
        rd r = {rest, rest + rest_len, err};
        st = read_level(&r, lv);
    }
    if (st != QN_OK) {
        if (err) err->code = st;
        qn_level_destroy(lv);
        return st;
    }
    *out = lv;
    return QN_OK;
}

/* ---- any form, by content ---------------------------------------------------------- */

static qn_status level_from_map(const char *text, size_t len, const qn_allocator *alloc,
                                qn_level **out, qn_error *err) {
    qn_allocator a = qn__allocator(alloc);
    qn_level *lv = qn__calloc(&a, 1, sizeof *lv);
    if (!lv) return qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (level)");
    lv->alloc = a;
    qn_status st = qn_map_load_mem(text, len, alloc, &lv->grid, err);
    if (st == QN_OK) st = qn_mesh_from_grid(lv->grid, alloc, &lv->mesh, err);
    if (st != QN_OK) {
        qn_level_destroy(lv);
        return st;
    }
    *out = lv;
    return QN_OK;
}

qn_level_kind qn_level_sniff(const void *data, size_t len) {
    const char *s = data;
    if (!s) return QN_LEVEL_JSON;
    if (len >= 6 && memcmp(s, "QNMESH", 6) == 0) return QN_LEVEL_BAKED;
    size_t i = len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) i++;
    if (len - i >= 4 && memcmp(s + i, "type", 4) == 0) return QN_LEVEL_MAP;
    if (len - i >= 6 && (memcmp(s + i, "height", 6) == 0 || memcmp(s + i, "width ", 6) == 0))
        return QN_LEVEL_MAP;
    return QN_LEVEL_JSON;
}

qn_status qn_level_load_any_mem(const void *data, size_t len, const qn_allocator *alloc,
                                qn_level **out, qn_error *err) {
    qn__error_clear(err);
    if (out) *out = NULL;
    if (!out || (!data && len))
        return qn__fail(err, QN_E_INVALID_ARG, QN_NONE, "NULL level pointer or buffer");
    switch (qn_level_sniff(data, len)) {
    case QN_LEVEL_BAKED: return level_from_qnm(data, len, alloc, out, err);
    case QN_LEVEL_MAP: return level_from_map(data, len, alloc, out, err);
    default: return qn_level_load_mem(data, len, alloc, out, err);
    }
}

qn_status qn_level_load_any_file(const char *path, const qn_allocator *alloc, qn_level **out,
                                 qn_error *err) {
    return load_path(path, alloc, out, err, true);
}
