/*
** quadnav: crowd navigation over convex quads and grids.
** Copyright (c) 2026 quadnav authors. MIT License: see the LICENSE file.
**
** This header is the whole public API. Words: a *mesh* is the walkable space
** (convex quads and the portals between them); a *level* is a mesh with
** named goals and spawns, loaded from JSON; a *field* (qn_field, called an
** *instance* in the design notes) is what one destination computes over a
** mesh and every unit heading there samples; a *grid field* is the same for
** a grid.
**
** Conventions, once for all functions:
**
**  - Every function that can fail returns a qn_status; QN_OK is 0.
**    qn_status_str(code) gives fixed English text, qn_status_name(code) the
**    enumerator's name ("QN_E_OVERLAP").
**  - Constructors are qn_x_create(..., qn_x **out, qn_error *err): *out is set
**    to NULL on entry and to the new object on success. `err` is optional
**    (may be NULL); when given it receives the code and a message naming the
**    offending element (JSON path, quad, vertex or link index, line/column).
**  - qn_x_destroy(NULL) does nothing; destroy never fails and frees everything
**    the object owns.
**  - Every object keeps the allocator it was created with (NULL means the C
**    library's realloc/free) and uses it for everything it owns. There are no
**    process-wide settings and no mutable globals.
**  - Indices are uint32_t; QN_NONE (UINT32_MAX) means "no index".
**  - Costs are float; INFINITY means unreachable.
**  - The library does no I/O except in the *_load_file functions, which read
**    the named file and nothing else.
**
** Threads: a qn_mesh, qn_level, qn_field, qn_grid and qn_grid_field are
** read-only once created. Any number of threads may call the const functions
** on the same object at the same time. Sampling never allocates. The
** exceptions are the dynamic changes (qn_mesh_set_quad_*, qn_grid_stamp) and
** the updates that follow them; their comments say what may run meanwhile.
**
** Coordinates: world units, x to the right, y as the level defines it. For
** MovingAI maps and levels made from grids, y grows downward and cell (x, y)
** covers [x, x+1) x [y, y+1), so its centre is (x + 0.5, y + 0.5).
** Coordinates are floats, so precision falls with distance from the
** origin: the mesh's tolerance is 8 float epsilons of its largest
** |coordinate| (about 1e-6 of it), and every agent keeps at least 8 of
** those tolerances from walls. An exact field's sample adds the error of
** its aim, which grows with the distance to the corner or goal it steers
** at (the field's step of angle: 2.5e-4 of that distance), up to about
** 5e-5 of the mesh's extent: 0.007 at most on a level 120 units across at
** the origin, 0.25 at most on a 4096 x 4096 map, where a unit a few cells
** from the corner it rounds keeps 0.03; for a level 100 units across,
** 0.02 at 2,000 units from the origin and 0.46 at 60,000, where 1-unit
** corridors are still walked (tests/test_exact.c). Place a level's origin
** near its middle, and keep far-apart regions in separate meshes: one
** small island 20,000 units from a maze of 1-unit corridors widens every
** point agent there past the corridors.
**
** Units: positions, lengths, radii and distances are world units; a cost is
** a length times the cost multiplier of the quads (or cells) it runs
** through, so on ground of cost 1 a cost is a distance. Directions are unit
** vectors (or zero). There is no time anywhere: a caller decides how far a
** unit moves per frame.
**
** Parameters. The comments list parameters as `name  in|out|in,out  what`
** where the signature alone does not say it all. Unless a comment says
** otherwise:
**  - Object handles (mesh, field, ...) must not be NULL: a function that
**    returns a qn_status returns QN_E_INVALID_ARG, an accessor returns the
**    neutral value its comment names (0, NULL, NAN, INFINITY, QN_NONE).
**  - Pointers to inputs (`const T *`) are read during the call only; nothing
**    is kept unless the comment says the object "keeps a pointer".
**  - Outputs are required (NULL gives QN_E_INVALID_ARG) unless marked "may
**    be NULL". They are written on success. On failure, constructors set
**    *out to NULL, index outputs get QN_NONE and counts 0 where the comment
**    says so; any other output is then unspecified (do not read it).
**  - Points must be finite (QN_E_INVALID_ARG otherwise); every coordinate of
**    a mesh or grid lies within +-QN_MAX_COORD.
**  - Hints (`hint`, `quad_io`): a quad index from an earlier call, or
**    QN_NONE. Any value is safe, but give an initialised one (QN_NONE for a
**    new unit): a stale hint costs one full point location, and a hint that
**    holds the point picks that quad among quads sharing an edge, so hints
**    affect which quad a point on an edge is reported in.
*/
#ifndef QUADNAV_H
#define QUADNAV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quadnav_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(QN_BUILDING_DLL)
#define QN_API __declspec(dllexport)
#elif defined(_WIN32) && defined(QN_USING_DLL)
#define QN_API __declspec(dllimport)
#elif defined(__GNUC__) || defined(__clang__)
#define QN_API __attribute__((visibility("default")))
#else
#define QN_API
#endif

/* ------------------------------------------------------------------ */
/* Version                                                             */
/* ------------------------------------------------------------------ */

/* QN_VERSION_NUMBER of the library actually linked (major*10000+minor*100+patch). */
QN_API uint32_t qn_version_number(void);
/* QN_VERSION_STRING of the library actually linked. Static storage. */
QN_API const char *qn_version_string(void);

/* ------------------------------------------------------------------ */
/* Status codes                                                        */
/* ------------------------------------------------------------------ */

/* X(NAME, text). Codes are numbered in list order from 0; never reorder. */
#define QN_STATUS_LIST(X)                                                     \
    X(OK, "success")                                                          \
    X(AT_GOAL, "position is at the goal")                                     \
    X(E_INVALID_ARG, "invalid argument (NULL, NaN, infinite or out of range)") \
    X(E_NOMEM, "out of memory")                                               \
    X(E_IO, "cannot read file")                                               \
    X(E_JSON_SYNTAX, "malformed JSON")                                        \
    X(E_TRUNCATED, "input ends too early")                                    \
    X(E_JSON_TYPE, "JSON value has the wrong type")                           \
    X(E_MISSING_FIELD, "required field is missing")                           \
    X(E_FORMAT_VERSION, "unknown format version")                             \
    X(E_BAD_NUMBER, "number is NaN, infinite or out of the allowed range")    \
    X(E_INDEX_RANGE, "index out of range")                                    \
    X(E_DEGENERATE_QUAD, "quad has zero area or a zero-length edge")          \
    X(E_NONCONVEX_QUAD, "quad is not convex")                                 \
    X(E_WINDING, "quad is wound clockwise (negative area)")                   \
    X(E_OVERLAP, "quads overlap")                                             \
    X(E_LINK_TARGET, "link names a quad that does not exist")                 \
    X(E_LINK_NO_EDGE, "linked quads share no edge segment")                   \
    X(E_LINK_DUPLICATE, "link given twice")                                   \
    X(E_LIMIT, "more elements than the documented limit")                     \
    X(E_DUPLICATE_NAME, "name given twice")                                   \
    X(E_OUTSIDE, "position is outside every quad or cell")                    \
    X(E_UNREACHABLE, "goal cannot be reached from this position")             \
    X(E_BLOCKED, "position or goal is in a blocked quad or wall cell")        \
    X(E_NOT_FOUND, "no such element")                                         \
    X(E_BUFFER_TOO_SMALL, "caller buffer is too small")                       \
    X(E_MAP_SYNTAX, "malformed MovingAI map")                                 \
    X(E_SCEN_SYNTAX, "malformed MovingAI scenario")                           \
    X(E_MISMATCH, "inputs do not agree with each other")                      \
    X(E_CORRUPT, "baked mesh file is damaged or not a baked mesh")

#define QN__STATUS_ENUM(name, text) QN_##name,
typedef enum qn_status { QN_STATUS_LIST(QN__STATUS_ENUM) QN_STATUS_COUNT } qn_status;
#undef QN__STATUS_ENUM

/* Fixed English text for a code; "unknown status" for values out of range. */
QN_API const char *qn_status_str(qn_status code);
/* The enumerator's name, e.g. "QN_E_OVERLAP"; "QN_UNKNOWN" out of range. */
QN_API const char *qn_status_name(qn_status code);

#define QN_NONE UINT32_MAX

/* Details of a failure, filled by functions that take a qn_error *.
** `path` is a JSON path ("quads[3].v[1]") or empty; `index` is the element
** index the message is about (quad, vertex, link, row) or QN_NONE; `line` and
** `column` are 1-based positions in a text input, or 0 when not known. */
typedef struct qn_error {
    qn_status code;
    uint32_t index;
    uint32_t line;
    uint32_t column;
    char path[96];
    char message[256];
} qn_error;

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

/* realloc-style hook, as in Lua: new_size == 0 frees ptr and returns NULL;
** ptr == NULL allocates. old_size is the size previously asked for ptr (0 when
** ptr is NULL). Must return NULL on failure, leaving ptr untouched. It may
** be called from several threads at once where the library works on
** threads: qn_hier_create and qn_grid_tiles_create (and their updates) on
** the built-in runner's threads, and hierarchical destinations and tile
** fields on whatever threads sample them (they build on first use); give
** those an allocator that is safe to call so, or NULL. */
typedef void *(*qn_realloc_fn)(void *ud, void *ptr, size_t old_size, size_t new_size);

/* With fn NULL the C library's allocator is used, but on Linux a block of
** 4 MiB or more is mapped directly (mmap, grown and shrunk by mremap) on
** 2 MiB boundaries with transparent huge pages asked for (madvise
** MADV_HUGEPAGE, a hint): big worlds' arrays are read at random, and huge
** pages spare most of the TLB misses and page faults (a 4096 x 4096 map's
** baked mesh loads in about half the time). The cost is up to one huge
** page of rounding per such block where the kernel grants them. */
typedef struct qn_allocator {
    qn_realloc_fn fn; /* NULL: the C library (see above) */
    void *ud;         /* passed to fn unchanged */
} qn_allocator;

/* ------------------------------------------------------------------ */
/* Geometry                                                            */
/* ------------------------------------------------------------------ */

typedef struct qn_vec2 {
    float x, y;
} qn_vec2;

typedef struct qn_rect {
    qn_vec2 min, max;
} qn_rect;

/* ------------------------------------------------------------------ */
/* Limits (checked before any large allocation)                        */
/* ------------------------------------------------------------------ */

#define QN_MAX_VERTICES (1u << 24)
#define QN_MAX_QUADS (1u << 22)
#define QN_MAX_LINKS (1u << 24)
#define QN_MAX_GOALS 4096u        /* goal points of one field, or named goals */
#define QN_MAX_SPAWNS 65536u
#define QN_MAX_COORD 1.0e6f        /* |x|, |y| of every vertex and point */
#define QN_MAX_QUAD_COST 1.0e6f    /* per-quad cost multiplier, >= 1 */
#define QN_MAX_NAME 63u            /* bytes of a goal or spawn name */
#define QN_MAX_GRID_SIDE 16384u    /* width and height of a grid */
#define QN_MAX_GRID_CELLS (1u << 26)
#define QN_MAX_FILE_BYTES (256u << 20) /* largest level or map file read */

/* ------------------------------------------------------------------ */
/* Mesh: convex quads and the portals between them                     */
/* ------------------------------------------------------------------ */

typedef struct qn_mesh qn_mesh;

/* A link in an explicit adjacency table: quads a and b touch along an edge. */
typedef struct qn_link {
    uint32_t a, b;
} qn_link;

/* Input to qn_mesh_create. Every quad is four vertex indices with positive
** signed (shoelace) area: counter-clockwise when y points up, clockwise on
** screen when y points down. Quads wound the other way are rejected
** (QN_E_WINDING). A vertex may lie on the edge between its neighbours (a
** triangle with a split edge is accepted); zero-length edges are not.
**
** costs: NULL means every quad costs 1; else one multiplier per quad in
** [1, QN_MAX_QUAD_COST]. blocked: NULL means none; else one flag per quad.
** links: when has_links is false the adjacency is computed from shared edge
** segments (T-junctions give one portal per overlap). When true, exactly the
** listed pairs are connected (touching quads not listed are separated by a
** thin wall); each is checked against the geometry. */
typedef struct qn_mesh_desc {
    const qn_vec2 *vertices; /* vertex_count points, world units, |x|,|y| <= QN_MAX_COORD */
    uint32_t vertex_count;   /* <= QN_MAX_VERTICES */
    const uint32_t *quads;   /* 4 * quad_count vertex indices (< vertex_count) */
    uint32_t quad_count;     /* 1..QN_MAX_QUADS */
    const float *costs;      /* quad_count multipliers in [1, QN_MAX_QUAD_COST], or NULL */
    const uint8_t *blocked;  /* quad_count flags (non-zero: blocked), or NULL */
    const qn_link *links;    /* link_count pairs of quad indices; used when has_links */
    uint32_t link_count;     /* <= QN_MAX_LINKS */
    bool has_links;
} qn_mesh_desc;

/* Builds and validates a mesh. Copies everything it needs from desc.
**   desc   in   the quads (read during the call only)
**   alloc  in   allocator for everything the mesh owns; may be NULL (libc)
**   out    out  the mesh, NULL on failure
**   err    out  may be NULL; details of a failure
** Returns QN_OK, QN_E_INVALID_ARG, QN_E_NOMEM, QN_E_LIMIT, QN_E_BAD_NUMBER,
** QN_E_INDEX_RANGE, QN_E_DEGENERATE_QUAD, QN_E_NONCONVEX_QUAD, QN_E_WINDING,
** QN_E_OVERLAP, QN_E_LINK_TARGET, QN_E_LINK_NO_EDGE or QN_E_LINK_DUPLICATE;
** err->index names the quad (or link) at fault. Never a half-built mesh. */
QN_API qn_status qn_mesh_create(const qn_mesh_desc *desc, const qn_allocator *alloc,
                                qn_mesh **out, qn_error *err);
QN_API void qn_mesh_destroy(qn_mesh *mesh);

/* Accessors: 0 (an empty rect) for a NULL mesh. Quad and portal indices run
** from 0 to the count minus one, in the order of qn_mesh_desc.quads (for a
** level: the file's "quads" array). */
QN_API uint32_t qn_mesh_quad_count(const qn_mesh *mesh);
QN_API uint32_t qn_mesh_portal_count(const qn_mesh *mesh);
QN_API qn_rect qn_mesh_bounds(const qn_mesh *mesh);
/* Connected components over open portals, blocked quads excluded. */
QN_API uint32_t qn_mesh_island_count(const qn_mesh *mesh);
/* Island of a quad, QN_NONE for a blocked one or an out-of-range index. */
QN_API uint32_t qn_mesh_island(const qn_mesh *mesh, uint32_t quad);
/* Bytes owned by the mesh: its arrays and spatial index (a mesh of
** axis-aligned rectangles keeps each quad as its box and derives its
** portals' segments; about 62 bytes per quad on a 4096 x 4096 map), plus
** what it builds on first use and keeps, shared by every thread: the quads'
** boundary cycles (the first exact field, path or hierarchical instance)
** and, where the segments are derived, a table of them (the first field or
** path search; 20 bytes per portal). */
QN_API size_t qn_mesh_bytes(const qn_mesh *mesh);

/* Corners of a quad in stored order (world units) into out[0..3] (required);
** QN_E_INVALID_ARG if quad is out of range. The other three: the quad's cost
** multiplier, blocked flag and area (square world units), which out of
** range are NAN, true and NAN. */
QN_API qn_status qn_mesh_quad_corners(const qn_mesh *mesh, uint32_t quad, qn_vec2 out[4]);
QN_API float qn_mesh_quad_cost(const qn_mesh *mesh, uint32_t quad);   /* NAN out of range */
QN_API bool qn_mesh_quad_blocked(const qn_mesh *mesh, uint32_t quad); /* true out of range */
QN_API float qn_mesh_quad_area(const qn_mesh *mesh, uint32_t quad); /* NAN out of range */

/* A portal: the segment p0-p1 (world units) shared by quads a < b. */
typedef struct qn_portal {
    uint32_t a, b;
    qn_vec2 p0, p1;
} qn_portal;

/* Portal `portal` (< qn_mesh_portal_count) into *out (required);
** QN_E_INVALID_ARG out of range. */
QN_API qn_status qn_mesh_portal(const qn_mesh *mesh, uint32_t portal, qn_portal *out);
/* Portals of one quad:
**   portals  out  up to cap portal indices; may be NULL when cap is 0
**   count    out  the quad's portal count (0 on QN_E_INVALID_ARG)
** QN_E_BUFFER_TOO_SMALL when cap < total (the first cap are written), so
** calling with cap 0 first gives the size. */
QN_API qn_status qn_mesh_quad_portals(const qn_mesh *mesh, uint32_t quad, uint32_t *portals,
                                      uint32_t cap, uint32_t *count);

/* Point location. Sets *quad to the quad containing p (edges included) and
** returns QN_OK, or QN_E_OUTSIDE with *quad = QN_NONE. A point on an edge
** shared by several quads resolves to the lowest quad index, except that a
** valid `hint` quad containing p wins (pass QN_NONE for no hint). Blocked quads
** are found like any other. Expected O(1).
**   p     in   world units, finite
**   hint  in   a quad that may contain p, or QN_NONE (see "Hints" above)
**   quad  out  the quad, or QN_NONE */
QN_API qn_status qn_mesh_locate(const qn_mesh *mesh, qn_vec2 p, uint32_t hint, uint32_t *quad);
/* The quad nearest to p (distance 0 when p is inside one) and the closest
** point of that quad. Blocked quads are skipped when skip_blocked is true.
** QN_E_NOT_FOUND when no quad qualifies.
**   quad     out  the quad, or QN_NONE
**   closest  out  may be NULL; the closest point (world units), set on QN_OK */
QN_API qn_status qn_mesh_nearest(const qn_mesh *mesh, qn_vec2 p, bool skip_blocked,
                                 uint32_t *quad, qn_vec2 *closest);
/* ---- dynamic changes ----
** Change a quad's cost multiplier ([1, QN_MAX_QUAD_COST]) or block or unblock
** it at run time. Concurrency contract: a change must not run at the same
** time as anything else that reads this mesh (sampling, building or updating
** a field of it, queries); sampling many fields at once from many threads is
** fine between changes. After changes, bring each field up to date with
** qn_field_update (or rebuild it). Islands are recomputed on block changes.
** Returns QN_OK, or QN_E_INVALID_ARG (NULL, index out of range, bad cost).
** A mesh whose quads all cost 1 keeps no costs (4 bytes a quad fewer): the
** first cost other than 1 allocates them, and returns QN_E_NOMEM (the mesh
** unchanged) when that fails. */
QN_API qn_status qn_mesh_set_quad_cost(qn_mesh *mesh, uint32_t quad, float cost);
QN_API qn_status qn_mesh_set_quad_blocked(qn_mesh *mesh, uint32_t quad, bool blocked);
/* Blocks (or unblocks) count quads at once: flags, version and journal as
** count calls of qn_mesh_set_quad_blocked leave them (a quad listed twice
** changes once), with the islands recomputed once, not once a quad (that
** pass reads the whole mesh: about 20 ms on 1.5M quads). Returns QN_OK, or
** QN_E_INVALID_ARG (NULL mesh, NULL quads with count > 0, an index out of
** range), and then nothing changes. */
QN_API qn_status qn_mesh_set_quads_blocked(qn_mesh *mesh, const uint32_t *quads, size_t count,
                                           bool blocked);
/* Number of effective changes made so far (a change to the same value does
** not count). */
QN_API uint64_t qn_mesh_version(const qn_mesh *mesh);

/* Does the straight segment a-b stay inside unblocked quads, crossing only
** open portals? Sets *hit (if not NULL) to the first point where it leaves.
** QN_OK: inside; QN_E_BLOCKED: it leaves; QN_E_OUTSIDE: a is outside.
** Agent radius 0 (see qn_mesh_line_of_sight for a radius).
**   a, b  in   world units, finite
**   hint  in   a quad that may contain a, or QN_NONE
**   hit   out  may be NULL */
QN_API qn_status qn_mesh_segment_inside(const qn_mesh *mesh, qn_vec2 a, qn_vec2 b,
                                        uint32_t hint, qn_vec2 *hit);

/* ------------------------------------------------------------------ */
/* Level: a mesh plus named goals and spawns, loaded from JSON          */
/* ------------------------------------------------------------------ */

typedef struct qn_level qn_level;
typedef struct qn_grid qn_grid;

/* Loads level JSON (format 1, see data/README.md). The buffer need not be
** NUL-terminated; at most QN_MAX_FILE_BYTES (QN_E_LIMIT). Codes: those of
** qn_mesh_create, plus QN_E_IO, QN_E_JSON_SYNTAX, QN_E_TRUNCATED,
** QN_E_JSON_TYPE, QN_E_MISSING_FIELD, QN_E_FORMAT_VERSION,
** QN_E_DUPLICATE_NAME, and QN_E_MISMATCH or QN_E_MAP_SYNTAX for the grid's
** rows. err->path names the JSON element ("quads[3].v[2]"), the message
** starts with it, err->index is the top-level array index (quad, vertex,
** link, goal, spawn, grid row); syntax errors set err->line and err->column.
** On failure *out is NULL and nothing is leaked.
** Strict JSON (RFC 8259) is read in place, without a parse tree: peak
** memory is the text, the mesh input (about 53 bytes per quad) and the
** mesh being built, and qn_level_load_file frees the text before building
** the mesh. Text that only cJSON's lenient reading accepts (a number "01", a
** raw control character in a string) goes through cJSON's tree first,
** whose temporary allocations use the C library (cJSON has only
** process-wide hooks, which quadnav never sets). A \u escape of half a
** UTF-16 surrogate pair is QN_E_JSON_SYNTAX. Everything the level keeps
** uses `alloc`.
**   json   in   len bytes of UTF-8 JSON; may be NULL when len is 0
**   path   in   (qn_level_load_file) a file name, read once, not kept
**   alloc  in   may be NULL (libc)
**   out    out  the level, NULL on failure
**   err    out  may be NULL
** Absent from a library built without JSON (-Djson=disabled, or without
** src/io/level.c): build meshes with qn_mesh_create there. */
QN_API qn_status qn_level_load_mem(const char *json, size_t len, const qn_allocator *alloc,
                                   qn_level **out, qn_error *err);
QN_API qn_status qn_level_load_file(const char *path, const qn_allocator *alloc,
                                    qn_level **out, qn_error *err);
QN_API void qn_level_destroy(qn_level *level);

QN_API const qn_mesh *qn_level_mesh(const qn_level *level);
/* The same mesh, for dynamic changes (see qn_mesh_set_quad_cost). */
QN_API qn_mesh *qn_level_mesh_mut(qn_level *level);
/* The level's "name", or "" when it has none. */
QN_API const char *qn_level_name(const qn_level *level);
QN_API uint32_t qn_level_goal_count(const qn_level *level);
/* Named goal i (< qn_level_goal_count): its name (owned by the level) and
** position (world units). `name` and `at` may each be NULL; on
** QN_E_INVALID_ARG (i out of range) they get NULL and (0, 0). Goals and
** spawns are in the file's order. */
QN_API qn_status qn_level_goal(const qn_level *level, uint32_t i, const char **name, qn_vec2 *at);
/* Index of the goal called name, or QN_NONE. */
QN_API uint32_t qn_level_find_goal(const qn_level *level, const char *name);
/* The quad whose "id" (see data/README.md) is `id`: its index in the mesh,
** or QN_NONE when no quad has that id (or level or id is NULL). Ids are
** unique within a level (loading rejects a repeat with
** QN_E_DUPLICATE_NAME). O(log n); thread-safe. So a game blocks the quad it
** calls "gate" with
**     qn_mesh_set_quad_blocked(qn_level_mesh_mut(level),
**                              qn_level_find_quad(level, "gate"), true)
** (which returns QN_E_INVALID_ARG when there is no such quad). */
QN_API uint32_t qn_level_find_quad(const qn_level *level, const char *id);
/* The "id" of a quad (owned by the level, NUL-terminated, 1..QN_MAX_NAME
** bytes), or NULL when it has none, the index is out of range or level is
** NULL. */
QN_API const char *qn_level_quad_id(const qn_level *level, uint32_t quad);
QN_API uint32_t qn_level_spawn_count(const qn_level *level);
/* Spawn point i, as qn_level_goal. */
QN_API qn_status qn_level_spawn(const qn_level *level, uint32_t i, const char **name, qn_vec2 *at);
/* The grid the level carries (its optional "grid" object), or NULL. Levels
** imported from MovingAI maps carry one, so both modes run on one level. */
QN_API const qn_grid *qn_level_grid(const qn_level *level);
/* The same grid, for dynamic changes (see qn_grid_stamp); NULL as above. */
QN_API qn_grid *qn_level_grid_mut(qn_level *level);

/* ------------------------------------------------------------------ */
/* Baked meshes and levels (.qnm), and levels of any form               */
/* ------------------------------------------------------------------ */

/* A baked file holds a built mesh (corners, costs, blocked flags, portals,
** the bucket index) and, when written from a level, its name, goals,
** spawns and grid; loading it skips portal pairing and overlap checks, so a
** 1.5M-quad mesh loads in a fraction of the time JSON takes. The format
** (little-endian, magic "QNMESH\r\n", version 1, sizes, two checksums) is
** documented at the top of src/io/bake.c and in README.md. Loading checks
** sizes and checksums before reading, then every index, number and quad
** shape; a file with a valid checksum is trusted to come from a save.
**
** save_mem: writes the file into buf (cap bytes); *len gets the size
** needed, and QN_E_BUFFER_TOO_SMALL when buf is NULL or too small (call
** with NULL first to learn the size). save: writes path directly (no
** temporary file; QN_E_IO with the system's reason).
** load: QN_E_CORRUPT (bad magic, checksum, count, index or number; not a
** baked file), QN_E_TRUNCATED (the file ends early), QN_E_FORMAT_VERSION,
** QN_E_NOMEM, shape codes of qn_mesh_create for a bad quad, QN_E_IO and
** QN_E_LIMIT for files; *out is NULL on failure. qn_mesh_load reads only
** the mesh of a level file. The qn_level_ calls below are absent from a
** library built without JSON (-Djson=disabled), like the level loader. */
QN_API qn_status qn_mesh_save_mem(const qn_mesh *mesh, void *buf, size_t cap, size_t *len,
                                  qn_error *err);
QN_API qn_status qn_mesh_save(const qn_mesh *mesh, const char *path, qn_error *err);
QN_API qn_status qn_mesh_load_mem(const void *data, size_t len, const qn_allocator *alloc,
                                  qn_mesh **out, qn_error *err);
QN_API qn_status qn_mesh_load(const char *path, const qn_allocator *alloc, qn_mesh **out,
                              qn_error *err);
QN_API qn_status qn_level_save_mem(const qn_level *level, void *buf, size_t cap, size_t *len,
                                   qn_error *err);
QN_API qn_status qn_level_save(const qn_level *level, const char *path, qn_error *err);

typedef enum qn_level_kind {
    QN_LEVEL_JSON,  /* anything else: handed to the JSON loader */
    QN_LEVEL_MAP,   /* a MovingAI map: "type", "height" or "width" first */
    QN_LEVEL_BAKED  /* starts with "QNMESH" */
} qn_level_kind;

/* What a buffer holds, from its first bytes (a UTF-8 byte order mark and
** blanks skipped for the text forms). */
QN_API qn_level_kind qn_level_sniff(const void *data, size_t len);

/* Loads a level from any of its forms, decided by content (qn_level_sniff):
** level JSON (qn_level_load_mem), a baked .qnm file, or a MovingAI map (a
** level with the map as its grid, the mesh qn_mesh_from_grid makes of it,
** no name, goals or spawns). Reads the buffer once; the codes are those of
** the loader chosen. _file reads the whole file once, then does the same
** (so a FIFO or a pipe works). */
QN_API qn_status qn_level_load_any_mem(const void *data, size_t len, const qn_allocator *alloc,
                                       qn_level **out, qn_error *err);
QN_API qn_status qn_level_load_any_file(const char *path, const qn_allocator *alloc,
                                        qn_level **out, qn_error *err);

/* ------------------------------------------------------------------ */
/* Field: one destination, shared by every unit (the design's instance) */
/* ------------------------------------------------------------------ */

typedef struct qn_field qn_field;

/* Options; a zero-initialised struct is the default. */
#define QN_DEFAULT_LOOKAHEAD 32u
#define QN_MAX_LOOKAHEAD 64u

typedef struct qn_field_opts {
    /* Agent radius: portals narrower than 2*radius are closed, and the sampler
    ** keeps this far from portal end points. 0 by default; >= 0, finite. */
    float radius;
    /* How many portals the sampler looks through along the exit chain. 1 or
    ** 2: the edge-projection rule (the current exit portal, then the next
    ** quad's). More: a funnel through that many portals, aiming at the first
    ** corner of the taut line (or the goal when the chain reaches it), which
    ** walks shorter paths on maps cut into many small quads, at some cost per
    ** sample. 0: QN_DEFAULT_LOOKAHEAD. At most QN_MAX_LOOKAHEAD. */
    uint32_t lookahead;
    /* Cost model. By default a path crosses each portal at the point of its
    ** crossable part nearest to where the path came from (toward the goal),
    ** so straight runs through many quads cost their straight length and
    ** bends hug corners. With midpoint_costs, every portal is crossed at its
    ** mid point: a plain graph model, exactly what a brute-force
    ** Bellman-Ford over portal mid points computes, but longer paths on maps
    ** cut into many quads. Repairable fields always use mid points: only for
    ** that model does a repair reproduce a rebuild exactly (the nearest-point
    ** costs depend on the order in which portals are settled). */
    bool midpoint_costs;
    /* Keep the per-portal search state (33 more bytes per portal) so that
    ** qn_field_update repairs the field incrementally after mesh changes,
    ** touching only the part of the graph the changes affect. Without it,
    ** qn_field_update rebuilds the field in place. */
    bool repairable;
    /* Keep the discrete instance (one exit portal per quad, the sampler
    ** above) even where an exact one could be built. See qn_field_create. */
    bool discrete;
} qn_field_opts;

/* Builds the field for one or more goal points (at least 1, at most
** QN_MAX_GOALS).
**
** Exact fields (the default where every open quad costs the same, unless
** opts asks for midpoint_costs, discrete or a lookahead): the field is the
** shortest path map of the goals, built by one-to-all interval propagation
** over the quads (a continuous Dijkstra). Each quad keeps the roots (goal
** points, and corners of the free space that shortest paths bend round, with
** their exact distance to the goal) through which shortest paths from its
** points leave, each with the wedge of the quad it serves. The sampler steers
** a unit at its root (along the tangent to the agent's radius round a
** corner), so units walk the shortest path (with radius 0; round corners at
** the radius otherwise) and qn_field_cost_at is the exact distance. Portals
** narrower than 2 * radius are closed. After qn_field_update (a rebuild, as
** is any update of an exact field) the field is exact again if the open
** quads still all cost the same, else discrete. An exact field keeps the
** map alone (no discrete search runs beside it): a quad's cost is the least
** exact cost over the quad, and its exit a portal into a neighbour that
** costs no more (see qn_field_quad_cost; two quads whose cheapest point is
** the same may differ there by float rounding, a part in a million).
** Should the propagation miss a quad open to one it reached (float
** tolerances of a mesh whose extent dwarfs its quads: none seen on game
** maps), the field is built discrete instead. Memory grows with the map's
** complexity: 8 bytes an entry (a root and the wedge it serves), 16 a root,
** 4 a quad besides (and a bit per quad edge piece when the radius closes a
** portal or a quad was blocked at the build); about 50-150 bytes per quad
** on game maps.
**
** Discrete fields (weighted meshes, or when asked): Dijkstra over the
** portals from the goals. Inside a quad,
** going from one portal (or goal point) to another costs the distance between
** the crossing points times the quad's cost (see midpoint_costs for where a
** portal is crossed). Every portal gets its cost to the goal; every quad gets
** the cheapest of its portals' costs and leaves by that portal (ties: the
** lowest portal index). Goal points outside the mesh or in blocked quads are
** QN_E_OUTSIDE or QN_E_BLOCKED (err->index names the goal); bad options are
** QN_E_INVALID_ARG. The field keeps a pointer to the mesh, which must
** outlive it. Memory (qn_field_bytes): 28 bytes per quad (8 with a
** lookahead of 1 or 2: the other 20 keep each quad's step along the exit
** chain, so the funnel reads one record a portal), 4 per portal, 16 per
** goal and a fixed header; a repairable field 37 per portal instead of 4.
** Building allocates its search scratch and frees it before returning.
**   mesh        in   kept: must outlive the field
**   goals       in   goal_count points, world units (read during the call)
**   opts        in   may be NULL: the defaults (all zero)
**   alloc       in   may be NULL (libc)
**   out         out  the field, NULL on failure
**   err         out  may be NULL
** Build time grows as portals * log(portals); see `quadnav bench`. */
QN_API qn_status qn_field_create(const qn_mesh *mesh, const qn_vec2 *goals, uint32_t goal_count,
                                 const qn_field_opts *opts, const qn_allocator *alloc,
                                 qn_field **out, qn_error *err);
QN_API void qn_field_destroy(qn_field *field);

/* Brings the field up to date with changes made to its mesh since it was
** built or last updated: incremental repair for a repairable field (when at
** most 1024 changes are pending), else a rebuild in place. Afterwards the
** field equals a fresh build: the same costs (within float rounding) and the
** same exits, ties between equal-cost portals going to the lowest portal
** index. Must not run while the field is sampled. Goals in a quad that became
** blocked make every quad unreachable until it is unblocked. Returns QN_OK or
** QN_E_NOMEM (the field is then unchanged and still valid for the old mesh
** state only if no change was made; rebuild it). */
QN_API qn_status qn_field_update(qn_field *field, qn_error *err);
/* True when the field reflects every change made to its mesh. */
QN_API bool qn_field_is_current(const qn_field *field);

QN_API const qn_mesh *qn_field_mesh(const qn_field *field);
QN_API size_t qn_field_bytes(const qn_field *field);
/* Cost from the quad to the goal (cost units, see "Units"): for a discrete
** field, the cost of its exit portal (0 for a goal quad); for an exact one,
** the least exact cost of its points (worked out when asked, from the
** quad's entries). INFINITY when unreachable or blocked or out of range. */
QN_API float qn_field_quad_cost(const qn_field *field, uint32_t quad);
/* The portal the quad leaves by; QN_NONE for goal quads and unreachable ones.
** The quad beyond never costs more (but for float rounding: a part in a
** million, and on a mesh far from the origin a rounding step of its
** coordinates), and following exits from any quad ends at a goal quad.
** Discrete: the cheapest portal (lowest index on a tie).
** Exact: toward the cheapest neighbour among those the build took before
** the quad (it takes quads in order of cost from the goal quads out); the
** quads round a corner that shortest paths bend at share that corner's
** cost, and leave one by one round it. An exact field works its exits out
** for every quad on the first call (about a fifth of the instance's build
** on a small level; safe from any number of threads at once, and counted
** by qn_field_bytes from then on), not with the instance: units steering
** by the map never read them (for a field that is not current, they follow
** the portals open when they are made). QN_NONE also when that runs out of
** memory: call qn_field_exits first to know. */
QN_API uint32_t qn_field_quad_exit(const qn_field *field, uint32_t quad);
/* Makes an exact field's quad exits now, if not made yet (see
** qn_field_quad_exit), and says whether they are there: QN_OK (also for a
** discrete field, whose exits come with it), QN_E_NOMEM (nothing kept; a
** later call tries again), QN_E_INVALID_ARG for a NULL field. Safe from
** any number of threads at once. */
QN_API qn_status qn_field_exits(const qn_field *field, qn_error *err);
/* The quad on the other side of the exit portal; QN_NONE as above. */
QN_API uint32_t qn_field_quad_next(const qn_field *field, uint32_t quad);
/* Cost to the goal from point p. For an exact field, the exact shortest
** distance (times the quads' common cost). Otherwise: the least, over the portals of p's quad,
** of the portal's cost plus the distance from p to its crossable part times
** the quad's cost (the estimate the sampler picks exits by); in a goal quad,
** the distance to the nearest goal point times the quad's cost. INFINITY when
** outside, blocked or unreachable. A point on the edge of a blocked quad and
** an open one stands in the open one, and a point within the mesh tolerance
** of a fence on the side the field reaches, here as for qn_field_sample. */
QN_API float qn_field_cost_at(const qn_field *field, qn_vec2 p, uint32_t hint);
/* How far from the goal the field's ground holds `area` square units: the
** least cost R such that the points of cost at most R (qn_field_cost_at)
** where a unit of the field's radius has room (the points a radius away
** along the axes are reached too) cover that area, into *radius; all of
** the ground the field reaches when that is less. An exact field's costs
** are never below the straight distance (multipliers are at least 1), so
** a disc of radius R round the goal takes in that ground (a discrete
** field's costs are estimates, which can be a little lower): a crowd's
** arrival region (qn_crowd_unit_desc.goal_radius) sized for a group on
** cluttered ground, where a disc of open ground's size holds too few
** units (in a maze's corridors, a small part of them). For a field of
** several goals, the ground within R of any. Measured on about 2,000
** sample points (a lattice per quad, a few more on small quads), so R is
** as good as that: a sizing, not an exact area. The walk visits the quads
** nearest the goal first and stops at R; it allocates a bit per quad of
** the mesh and the samples, with the field's allocator. Codes: QN_OK,
** QN_E_INVALID_ARG (NULL field or radius, area not finite and > 0),
** QN_E_NOMEM. Thread-safe with samplers of the same field. */
QN_API qn_status qn_field_region_radius(const qn_field *field, float area, float *radius);

/* ------------------------------------------------------------------ */
/* Sampling: exact fields and the edge-projection sampler              */
/* ------------------------------------------------------------------ */

/* Within this distance of a goal point a position counts as at the goal.
** An exact field's goal point nearer a wall than the field's radius, which
** no unit's centre can reach, counts as reached by a unit within two
** radii of it whose way the walls turn more than 25 degrees off it. */
#define QN_AT_GOAL_DISTANCE 1.0e-3f

/* Steering direction for one unit at p. Writes a unit-length direction (or
** zero) to *dir and, if quad_io is not NULL, reads it as a hint and writes the
** quad p is in (QN_NONE when outside).
**   p        in      the unit's position, world units
**   quad_io  in,out  may be NULL (no hint, nothing written). In: the hint,
**                    QN_NONE for a new unit, then what the last call wrote
**                    (see "Hints" above); out: the unit's quad, or QN_NONE
**   dir      out     a unit vector toward the goal, or (0, 0)
** Exact field: the direction along the shortest path, toward the root its
** point leaves by (a goal point, or the tangent of a circle of the field's
** radius round a corner, on the open side), kept that radius off the walls
** of the unit's quad and off the wall ends at the portal it crosses.
** Discrete field: the edge projection or the funnel (qn_field_opts).
** The direction is good for a straight move of any length within the
** current quad and the next ones the sampler looked through; a caller
** samples again every step (a step of a fraction of a quad's width).
** Returns QN_OK (moving), QN_AT_GOAL (dir zero), QN_E_OUTSIDE (dir zero),
** QN_E_BLOCKED (in a blocked quad; dir zero), QN_E_UNREACHABLE (dir zero) or
** QN_E_INVALID_ARG (NULL or non-finite p). Never allocates; thread-safe. */
QN_API qn_status qn_field_sample(const qn_field *field, qn_vec2 p, uint32_t *quad_io,
                                 qn_vec2 *dir);
/* As qn_field_sample, and *ahead (required) gets how far the unit may
** move along *dir before its way turns: to the tangent point of the corner
** it rounds, to the point it aims at inside a corner's circle, or to the
** goal point (world units; where the way was bent away from a wall, a
** radius or two, but no more than those; 0 unless QN_OK). A game that moves units
** by fixed steps can stop a step there, so that units turn at corners
** instead of overshooting them. Same contract otherwise. */
QN_API qn_status qn_field_sample_ahead(const qn_field *field, qn_vec2 p, uint32_t *quad_io,
                                       qn_vec2 *dir, float *ahead);
/* Batch form: positions[i] -> dirs[i], status[i] (may be NULL), quads[i] as in
** quad_io (may be NULL: no hints). Returns QN_E_INVALID_ARG for NULL field,
** positions or dirs, else QN_OK; per-unit outcomes go to status.
**   positions  in      count points
**   dirs       out     count directions
**   status     out     may be NULL; count qn_status values as bytes
**   quads      in,out  may be NULL; count hints (initialise each to QN_NONE
**                      when its unit appears, then keep the array)
**   count      in      any number, 0 included (positions, dirs may then be
**                      NULL) */
QN_API qn_status qn_field_sample_batch(const qn_field *field, const qn_vec2 *positions,
                                       qn_vec2 *dirs, uint8_t *status, uint32_t *quads,
                                       size_t count);

/* ------------------------------------------------------------------ */
/* Individual paths                                                    */
/* ------------------------------------------------------------------ */

/* A query object for point-to-point paths over one mesh. It owns the
** scratch a query needs (a few hundred bytes per portal, allocated at
** create; qn_pathfinder_bytes), so repeated queries do not allocate: only
** the any-angle search's node pool grows, when a query needs more than any
** before it, and keeps its size. Each query resets only what the one before
** it touched.
** Landmarks: on a uniform-cost mesh, once its queries have searched about
** as much as it takes (a few dozen long queries on a game map), a
** pathfinder places 8 landmarks far apart and builds an exact instance at
** each (during that query: 8 one-to-all searches, then freed), keeping
** their distances to every quad corner (32 bytes per boundary vertex).
** Their triangle-inequality bounds let later queries search a fraction of
** the quads, with the same answers. Unblocking a quad that was blocked
** when they were built drops them (they are built again later); blocking
** quads keeps them. Not thread-safe itself: use one per thread; any number
** may share one mesh, which must outlive them. */
typedef struct qn_pathfinder qn_pathfinder;

/* Codes: QN_OK, QN_E_INVALID_ARG (NULL mesh or out), QN_E_NOMEM, QN_E_LIMIT
** (the mesh is too large for the scratch's index types). Queries read the
** mesh as it is at the time, so dynamic changes (qn_mesh_set_quad_cost,
** ..._blocked) need no new pathfinder; the first query after a change
** rescans the quad costs once. One pathfinder serves agents of any radius:
** a query whose radius opens or closes other portals than the last one's
** marks the mesh's walls again (a pass over the mesh), one whose radius
** opens the same portals does not. */
QN_API qn_status qn_pathfinder_create(const qn_mesh *mesh, const qn_allocator *alloc,
                                      qn_pathfinder **out, qn_error *err);
QN_API void qn_pathfinder_destroy(qn_pathfinder *pf);
/* Bytes the pathfinder owns now (its node pool included); 0 for NULL. */
QN_API size_t qn_pathfinder_bytes(const qn_pathfinder *pf);

/* The path from `from` to `to` for an agent of this radius.
**
** Cost: A* over portal mid points, the graph of an instance built with
** midpoint_costs (qn_field_opts): inside a quad, the distance times the
** quad's cost; from `from` to a portal of its quad and from a portal of the
** goal quad to `to` likewise; a portal is open when both quads are
** unblocked and it is at least 2*radius wide. When both points are in one
** quad the cost is that quad's cost times their distance. *cost (may be
** NULL) gets it; it equals what such an instance built at `to` reports for
** `from` through its cheapest portal. The heuristic (straight distance times
** the lowest open quad cost) is admissible, so the cost is optimal.
**
** Waypoints: when every open quad costs the same, the corridor of portals
** comes from an exact any-angle search over the quads (through the same
** open portals), so with radius 0 the polyline is the shortest path through
** open space (but for the hair's-width insets at corners): on a map made
** into quads, no longer than the optimal path through its grid. Otherwise
** the corridor is the cost search's. Either way it is string-pulled (funnel
** algorithm) into a polyline from `from` to `to` (both included): it
** crosses each portal at least `radius` from an end
** where a wall meets the portal (a hair's width, a few times the mesh
** tolerance, for radius 0 or in open space), turns round convex wall
** corners on arcs of that radius drawn as segments just outside the circle
** (pieces of at most pi/8), and bends round any other corner it would pass
** closer. So with `from` and `to` at least `radius` from every wall, the
** path keeps that clearance wherever the corridor is wide enough (a portal
** can be 2*radius wide while a wall beyond it comes closer; there no path
** can keep the clearance, and this one does its best).
** Passing cost NULL on a uniform-cost mesh skips the cost search.
**
** Writes up to cap points to waypoints (may be NULL when cap is 0) and sets
** *count to the number the path has. Returns QN_OK; QN_E_BUFFER_TOO_SMALL
** when cap < *count (the first cap points are written; *cost is set);
** QN_E_OUTSIDE when from or to is outside every quad; QN_E_BLOCKED when
** either is in a blocked quad; QN_E_UNREACHABLE; QN_E_NOMEM when the node
** pool cannot grow; QN_E_INVALID_ARG (NULL pf or count, waypoints NULL with
** cap > 0, a non-finite point, a radius that is negative or not finite).
** Points are located as qn_mesh_locate does (the lowest quad index on a
** shared edge), but for an end within the mesh tolerance of a fence (two
** quads that touch with no portal between) located on a side the other
** end cannot be reached from: it stands on the other side, as for
** qn_field_cost_at. On failure *count and *cost are 0 (except for
** QN_E_BUFFER_TOO_SMALL).
**   pf         in,out  the query object (its scratch changes)
**   from, to   in      world units, finite
**   radius     in      agent radius, world units, >= 0
**   waypoints  out     up to cap points, world units; may be NULL when cap is 0
**   count      out     the path's point count (>= 2 on success)
**   cost       out     may be NULL (see above: NULL skips the cost search
**                      on a uniform-cost mesh) */
QN_API qn_status qn_path_find(qn_pathfinder *pf, qn_vec2 from, qn_vec2 to, float radius,
                              qn_vec2 *waypoints, uint32_t cap, uint32_t *count, float *cost);

/* Euclidean length of the polyline pts[0..n-1] (0 for n < 2 or NULL). */
QN_API double qn_path_length(const qn_vec2 *pts, uint32_t n);

/* Line of sight for an agent of this radius: does the segment a-b stay
** inside unblocked quads, crossing only portals open for this radius, with
** every point at least `radius` (less the mesh tolerance) from every wall?
** A wall is any part of an unblocked quad's edge not covered by an open
** portal (so the mesh's outline, the sides of blocked quads and portals
** narrower than 2*radius). `hint` is a quad that may contain a (QN_NONE for
** none). Sets *visible and returns QN_OK; QN_E_OUTSIDE (a is outside every
** quad) or QN_E_INVALID_ARG (NULL, non-finite, negative radius), with
** *visible false. Const, never allocates, thread-safe. */
QN_API qn_status qn_mesh_line_of_sight(const qn_mesh *mesh, qn_vec2 a, qn_vec2 b, float radius,
                                       uint32_t hint, bool *visible);

/* ---- threads and job systems ----
** quadnav starts threads in one place only: the built-in runner, used by
** qn_field_sample_parallel and the *_sample_jobs calls given no runner, by
** qn_crowd_step_jobs given none, and by qn_hier_create and qn_grid_tiles_create
** (and their updates) for their per-sector work; it
** uses pthreads, or runs everything on the calling thread when the library
** is built with QN_NO_THREADS (Meson: -Dthreads=disabled). A game with its
** own job system passes a qn_jobs instead and quadnav starts no thread.
** Sampling is read-only, so any range may run on any thread at any time;
** a game may equally call qn_field_sample_batch on sub-ranges itself. */
#define QN_MAX_THREADS 64u /* threads of the built-in runner */
#define QN_MAX_JOBS 65536u /* jobs of one call */

/* One job of a call: job is in [0, job_count). */
typedef void (*qn_job_fn)(void *job_data, uint32_t job);
/* A job runner: must call fn(job_data, j) exactly once for every j in
** [0, job_count), on any threads, in any order, and return only when all
** have returned. `ud` is qn_jobs.ud. Called from the thread that called
** quadnav; never called with job_count 0. */
typedef void (*qn_run_jobs_fn)(void *ud, uint32_t job_count, qn_job_fn fn, void *job_data);
typedef struct qn_jobs {
    qn_run_jobs_fn run; /* required */
    void *ud;           /* passed to run unchanged */
} qn_jobs;

/* Batch sampling (qn_field_sample_batch's contract for every argument)
** cut into `jobs` jobs, each a contiguous range of about count/jobs units
** (1 <= jobs <= QN_MAX_JOBS; more jobs than units run as many jobs as
** units), run by `runner`, or by the built-in runner when runner is NULL:
** up to QN_MAX_THREADS threads (one of them the calling thread), job j on
** thread j % threads. Returns QN_E_INVALID_ARG (NULL field, NULL positions
** or dirs with count > 0, jobs out of range, runner->run NULL); QN_E_NOMEM
** when the built-in runner could not start a thread (its jobs then ran on
** the calling thread, so the output is complete all the same); else QN_OK.
** Safe to call from many threads at once on one field. */
QN_API qn_status qn_field_sample_jobs(const qn_field *field, const qn_vec2 *positions,
                                      qn_vec2 *dirs, uint8_t *status, uint32_t *quads,
                                      size_t count, uint32_t jobs, const qn_jobs *runner);

/* qn_field_sample_jobs with runner NULL and one job per thread: `threads`
** threads (1..QN_MAX_THREADS, the calling thread one of them), each a
** contiguous range of units. QN_E_INVALID_ARG for threads out of range;
** other codes as there. */
QN_API qn_status qn_field_sample_parallel(const qn_field *field, const qn_vec2 *positions,
                                          qn_vec2 *dirs, uint8_t *status, uint32_t *quads,
                                          size_t count, uint32_t threads);

/* A way out for a unit that sampled QN_E_BLOCKED or QN_E_UNREACHABLE (or is
** outside the mesh). `quad` and `point` are required outputs (QN_NONE and
** unchanged on failure); walk straight toward *point, world units. In a blocked quad: the nearest point of a portal into a
** quad from which the goal can be reached, kept the agent radius off the
** portal's ends (the straight line there stays in the blocked quad, and a
** unit on that point samples as being in the open quad); failing that, and
** elsewhere: just inside the nearest such quad (the straight line there may
** cross walls). Sets
** *quad and *point; QN_E_NOT_FOUND when no quad can reach the goal. */
QN_API qn_status qn_field_way_out(const qn_field *field, qn_vec2 p, uint32_t *quad,
                                  qn_vec2 *point);

/* ------------------------------------------------------------------ */
/* Hierarchical instances: sectors, and local fields built on demand  */
/* ------------------------------------------------------------------ */

/* For big meshes (hundreds of thousands of quads and more), where a full
** exact instance per destination costs too much time and memory. A qn_hier
** is built once per mesh: it cuts the quads into sectors (square tiles of
** world space). On a mesh of axis-aligned rectangles whose corners lie on
** one square lattice (grid imports, levels drawn on a grid; the lattice's
** step is the shortest side of a rectangle) it keeps its own copy with
** every rectangle cut along the tile lines it crosses; a tile's side is a
** whole number of steps, so the cuts leave whole cells and a sector is
** exactly its tile. On other meshes a quad goes to the tile holding its
** centre. Hints and quads in and out of its functions are always the
** caller's mesh's. It
** puts nodes on the portals between sectors (one
** node per group of neighbouring border portals that join the same two
** connected parts of two sectors, at most `node_spacing` long, and on a
** border less than 60 % open with no wall between them; a long portal
** gets a node every node_spacing), and keeps per sector the
** distances between its nodes inside the sector (a Dijkstra over the
** sector's portals, crossing each at the point nearest to where the path
** came from: the length of a real path, never shorter than the shortest).
**
** A destination (qn_hfield) is a search over those nodes from the goal,
** run only as far as the sectors units stand in need: creating one costs
** the goal's own sector (under a millisecond on a 4096x4096 map). The
** first time a unit samples in a sector, the search goes on, aimed at
** that sector (A*), until the sector's nodes have their least costs; then
** the destination builds that sector's local field: an exact
** instance (qn_field_create's shortest path map) over the sector's open
** quads, seeded at the sector's exit nodes with their costs to the goal
** (and at the goal itself in its own sector); it is cached and later
** samples there are exact-field samples. Units walk the shortest way to
** the exit that is best by the node costs, cross there, and go on in the
** next sector; paths are a little longer than with a full exact instance
** (README, "Big maps", has the figures). Near the goal they are not:
** the goal's sector and the (up to) eight sectors round it share one local
** field over all their quads, seeded at the goal and at the nodes on the
** edge of that block, so a unit there walks the exact shortest way to the
** goal unless that way leaves the block. Memory grows with the sectors
** units visit. Every open quad must cost 1 (all MovingAI imports): only
** then are the local fields exact, which is what keeps units from going
** round between sectors; weighted meshes are refused (QN_E_MISMATCH). */
typedef struct qn_hier qn_hier;
typedef struct qn_hfield qn_hfield;

/* Options; a zero-initialised struct is the default. */
typedef struct qn_hier_opts {
    /* Side of a sector, world units (finite, >= 0). 0: chosen so that a
    ** sector holds about 128 of the mesh's quads on average. Rounded to a
    ** whole number of lattice steps (at least one) on a mesh of rectangles
    ** on a lattice (see above). */
    float sector_size;
    /* Longest run of border a node stands for, world units (finite, >= 0).
    ** 0: a fifth of the sector size, and at most 6 of the lattice's
    ** steps on a mesh of rectangles on a lattice (see above). Shorter:
    ** paths closer to the shortest, more nodes (a slower destination
    ** Dijkstra). */
    float node_spacing;
} qn_hier_opts;

/* Builds the sector graph of a mesh, which must outlive it (kept). Codes:
** QN_OK, QN_E_INVALID_ARG (NULL mesh or out, bad options), QN_E_MISMATCH
** (an open quad whose cost is not 1; err->index names it), QN_E_LIMIT (more
** than 2^24 sectors), QN_E_NOMEM. Build time grows with the quads: the
** sectors' distances are split over up to 8 jobs on the built-in runner's
** threads (see "threads and job systems"); about 7 s on 1.5M quads of a
** cluttered map on 2 threads, 13 s on one (`quadnav bench --map` prints
** hier_build_ms).
**   opts   in   may be NULL (the defaults)
**   alloc  in   may be NULL (libc); used for the hier and its destinations */
QN_API qn_status qn_hier_create(const qn_mesh *mesh, const qn_hier_opts *opts,
                                const qn_allocator *alloc, qn_hier **out, qn_error *err);
/* Frees the hier; its destinations must be destroyed first. NULL: no-op. */
QN_API void qn_hier_destroy(qn_hier *hier);
/* Brings the sector graph up to date with the mesh's changes (blocked,
** unblocked quads) since it was built or last updated: the sectors holding
** changed quads, and their neighbours whose border nodes changed, get their
** node distances recomputed; the rest are kept. More than 1024 changes
** since the last update: a rebuild. Must not run while any of its
** destinations is sampled or built; afterwards every destination must be
** brought up to date with qn_hfield_update before it is sampled again
** (until then its samples return QN_E_MISMATCH). QN_OK, QN_E_MISMATCH (an
** open quad now costs other than 1: destinations answer QN_E_MISMATCH until
** an update succeeds) or QN_E_NOMEM (the hier is then rebuilt from scratch
** on the next update). */
QN_API qn_status qn_hier_update(qn_hier *hier, qn_error *err);
QN_API uint32_t qn_hier_sector_count(const qn_hier *hier); /* 0 for NULL */
QN_API uint32_t qn_hier_node_count(const qn_hier *hier);   /* 0 for NULL */
/* Bytes the hier holds (its destinations not included); 0 for NULL. With
** the sector graph, this counts the sectors' local meshes built so far:
** a destination's local field is made over a mesh of its sector's open
** quads, and that mesh is the hier's, built by the first destination that
** needs it (with the hier's allocator) and shared by every destination
** after it (a new destination where earlier ones have been builds only
** its fields: about a sixth faster on a cluttered 4096 x 4096 map, and
** each destination holds a third fewer bytes). qn_hier_update drops the meshes of the
** sectors it changes (destinations made before keep theirs until they
** are updated or destroyed). */
QN_API size_t qn_hier_bytes(const qn_hier *hier);
/* Frees the sectors' local meshes that no destination's local field uses
** now (they are built again when needed), and returns the bytes freed; 0
** for NULL. The hier keeps a sector's mesh until then, even after its
** destinations are gone: about 40 KB per sector of 150 quads on a
** cluttered map, so a long-lived hier over a world whose units have
** visited every sector holds them all (a few times the mesh's own bytes)
** unless trimmed now and then. Must not run while any of its destinations
** is sampled or built. */
QN_API size_t qn_hier_trim(qn_hier *hier);

/* A destination: the node search from one goal point for agents of one
** radius (finite, >= 0; portals narrower than 2 * radius are closed in the
** local fields; the sector graph itself is for radius 0). Codes: QN_OK,
** QN_E_INVALID_ARG, QN_E_OUTSIDE or QN_E_BLOCKED (the goal), QN_E_MISMATCH
** (the hier is not current with its mesh: qn_hier_update first),
** QN_E_NOMEM. The hier must outlive it. alloc may be NULL (the hier's). */
QN_API qn_status qn_hfield_create(const qn_hier *hier, qn_vec2 goal, float radius,
                                  const qn_allocator *alloc, qn_hfield **out, qn_error *err);
/* Frees the destination and its local fields. NULL: no-op. */
QN_API void qn_hfield_destroy(qn_hfield *field);
/* After qn_hier_update: restarts the node search and drops the local fields
** (they are rebuilt on demand). Not while the field is sampled. QN_OK,
** QN_E_BLOCKED (the goal's quad is blocked: every sample is then
** QN_E_UNREACHABLE), QN_E_NOMEM. */
QN_API qn_status qn_hfield_update(qn_hfield *field, qn_error *err);
/* Bytes held now: node costs plus the local fields built so far (not
** their meshes: those are the hier's, see qn_hier_bytes). */
QN_API size_t qn_hfield_bytes(const qn_hfield *field);
/* Local fields built so far. */
QN_API uint32_t qn_hfield_sectors_built(const qn_hfield *field);
/* Nodes the destination's node search has settled so far (of
** qn_hier_node_count): the search goes only as far as the sectors asked
** for need, and never waits for a node the goal cannot reach (another
** island of the mesh). Thread-safe (takes the search's lock). */
QN_API uint32_t qn_hfield_nodes_settled(const qn_hfield *field);

/* qn_field_sample's contract (statuses, hints: quad_io holds a quad of the
** hier's mesh, the direction), plus: the first sample in a sector builds its
** local field, the only allocation, and QN_E_NOMEM when that fails (nothing
** kept; the next sample there tries again); QN_E_MISMATCH when the hier was
** updated after the field (qn_hfield_update). Thread-safe: any number of
** threads may sample one destination at once. The node search runs under
** the destination's lock, as far as a new sector needs; settled node costs
** never change afterwards. Each sector's local field is
** published with an atomic compare-and-swap; two threads that build the
** same sector at once both build it, one copy is kept and the other freed,
** and every sample, whichever copy it used, gets the same answer. A unit
** heading straight for an exit node of its sector aims, once within a
** quarter of the node's portal width, just beyond it, so that it crosses
** there into the next sector (and steps straight across when it stands on
** that portal). */
QN_API qn_status qn_hfield_sample(const qn_hfield *field, qn_vec2 p, uint32_t *quad_io,
                                  qn_vec2 *dir);
/* As qn_hfield_sample, and *ahead (required) gets how far the unit may
** move along *dir before it samples again: the local field's
** (qn_field_sample_ahead), or, where the unit heads over an exit into the
** next sector, the distance to the point it aims at beyond the exit (a
** step across when it stands on the exit's portal); 0 unless QN_OK. A game
** that moves units by fixed steps stops a step there, so that units do not
** overshoot corners, exits or a goal beside a wall. */
QN_API qn_status qn_hfield_sample_ahead(const qn_hfield *field, qn_vec2 p, uint32_t *quad_io,
                                        qn_vec2 *dir, float *ahead);
/* Batch form, qn_field_sample_batch's contract. */
QN_API qn_status qn_hfield_sample_batch(const qn_hfield *field, const qn_vec2 *positions,
                                        qn_vec2 *dirs, uint8_t *status, uint32_t *quads,
                                        size_t count);
/* The batch cut into jobs and run by `runner` (or the built-in runner when
** NULL): qn_field_sample_jobs's contract. The jobs answer the units
** whose local fields are built; when some are not, their local fields
** are then built in jobs run by the same runner (one job runs the node
** search, one sector at a time under the destination's lock, in the
** order one batch would ask for them, while the others build the sectors
** it has settled), and those units are sampled on the calling thread. The
** runner is then called twice. No job waits for one that has not started,
** so a runner that runs jobs one after another is fine. Answers: those of
** qn_hfield_sample_batch (the same node costs, asked for in the same
** order). Where a sector is not built ahead (out of
** memory) or several calls build at once, the jobs build sectors as they
** sample, and a node's cost can then come from another of two ways of
** equal length, summed in another order: the same cost but for its last
** bits, so a direction can differ where two roots tie (the same holds for
** batches given the units in another order). */
QN_API qn_status qn_hfield_sample_jobs(const qn_hfield *field, const qn_vec2 *positions,
                                       qn_vec2 *dirs, uint8_t *status, uint32_t *quads,
                                       size_t count, uint32_t jobs, const qn_jobs *runner);
/* Builds the local fields of the sectors the given points stand in (points
** outside the mesh or in blocked quads are skipped), so that later samples
** there never allocate. Same thread-safety as sampling. QN_OK, QN_E_NOMEM,
** QN_E_INVALID_ARG, QN_E_MISMATCH. */
QN_API qn_status qn_hfield_prepare(const qn_hfield *field, const qn_vec2 *positions, size_t count);
/* Cost to the goal from p by the hierarchy: the local field's exact cost
** to the best exit plus that exit's node cost (builds the local field like
** a sample); INFINITY when outside, blocked, unreachable or out of memory. */
QN_API float qn_hfield_cost_at(const qn_hfield *field, qn_vec2 p, uint32_t hint);

/* ------------------------------------------------------------------ */
/* Destination cache                                                   */
/* ------------------------------------------------------------------ */

/* Fields keyed by destination point and agent radius, kept within a
** memory budget, least recently used first out, reference counted so an
** field a unit still holds is never freed. Not thread-safe: call it from
** one thread (or under a lock); the fields it hands out may be sampled from
** any number of threads between updates. */
typedef struct qn_cache qn_cache;

typedef struct qn_cache_opts {
    size_t budget_bytes; /* 0: 64 MiB. qn_field_bytes of all cached fields stay within it */
    bool repairable;     /* build repairable fields (more memory, cheaper updates) */
} qn_cache_opts;

typedef struct qn_cache_stats {
    uint64_t hits, misses, evictions, updates;
    size_t bytes, budget_bytes;
    uint32_t entries, held;
} qn_cache_stats;

/* The mesh must outlive the cache (kept). opts may be NULL (the defaults),
** alloc may be NULL (libc), err may be NULL. Codes: QN_OK, QN_E_INVALID_ARG,
** QN_E_NOMEM. */
QN_API qn_status qn_cache_create(const qn_mesh *mesh, const qn_cache_opts *opts,
                                 const qn_allocator *alloc, qn_cache **out, qn_error *err);
/* Frees the cache and every field in it; handles still held become invalid. */
QN_API void qn_cache_destroy(qn_cache *cache);
/* The field for (goal, radius), built on a miss and brought up to date with
** the mesh if it is stale; its reference count goes up by one. Evicts unheld
** fields, least recently used first, to stay within the budget; QN_E_LIMIT
** when the new field does not fit even then (held fields fill the budget).
** Other codes: those of qn_field_create.
**   goal    in   world units, finite; matched exactly (bit for bit)
**   radius  in   agent radius, world units, finite, >= 0
**   out     out  the field (owned by the cache), NULL on failure; sample it
**                freely until qn_cache_release
**   err     out  may be NULL */
QN_API qn_status qn_cache_acquire(qn_cache *cache, qn_vec2 goal, float radius,
                                  const qn_field **out, qn_error *err);
/* Gives back one reference; the field stays cached until evicted. A NULL
** cache or field, or a field this cache did not hand out, is ignored. */
QN_API void qn_cache_release(qn_cache *cache, const qn_field *field);
/* Brings every cached field up to date after mesh changes (repair or
** rebuild). Must not run while any of them is sampled. */
QN_API qn_status qn_cache_update(qn_cache *cache, qn_error *err);
/* Counters so far into *out (may be NULL: nothing happens); all zero for a
** NULL cache. */
QN_API void qn_cache_get_stats(const qn_cache *cache, qn_cache_stats *out);

/* ------------------------------------------------------------------ */
/* Grid mode                                                           */
/* ------------------------------------------------------------------ */

/* Cost field values. */
#define QN_CELL_NORMAL 1u
#define QN_CELL_WALL 255u

/* A grid: width*height cost bytes, row-major, row 0 first. Cell (x, y) covers
** [origin.x + x*cell_size, origin.x + (x+1)*cell_size) and likewise in y.
** cell_size 0 means 1. A cost of 0 is rejected (QN_E_BAD_NUMBER). */
typedef struct qn_grid_desc {
    uint32_t width, height; /* 1..QN_MAX_GRID_SIDE each, at most QN_MAX_GRID_CELLS */
    const uint8_t *costs;   /* width*height bytes, 1..255 (QN_CELL_WALL: a wall) */
    float cell_size;        /* world units per cell, > 0 and finite (0: 1) */
    qn_vec2 origin;         /* world position of cell (0, 0)'s corner */
} qn_grid_desc;

/* Copies desc->costs. alloc may be NULL (libc); err may be NULL; *out is
** NULL on failure. Codes: QN_E_INVALID_ARG, QN_E_BAD_NUMBER, QN_E_LIMIT,
** QN_E_NOMEM. */
QN_API qn_status qn_grid_create(const qn_grid_desc *desc, const qn_allocator *alloc,
                                qn_grid **out, qn_error *err);
QN_API void qn_grid_destroy(qn_grid *grid);
QN_API uint32_t qn_grid_width(const qn_grid *grid);
QN_API uint32_t qn_grid_height(const qn_grid *grid);
QN_API float qn_grid_cell_size(const qn_grid *grid);
QN_API qn_vec2 qn_grid_origin(const qn_grid *grid);
/* Row-major cost bytes, width*height of them. */
QN_API const uint8_t *qn_grid_costs(const qn_grid *grid);
/* Cost of cell (x, y); QN_CELL_WALL outside the grid. */
QN_API uint8_t qn_grid_cost(const qn_grid *grid, uint32_t x, uint32_t y);
/* Cell containing world point p: QN_OK or QN_E_OUTSIDE (x, y set to
** QN_NONE); QN_E_INVALID_ARG for NULL arguments or a non-finite p. */
QN_API qn_status qn_grid_locate(const qn_grid *grid, qn_vec2 p, uint32_t *x, uint32_t *y);

/* ---- dynamic changes (grid mode) ----
** Sets every cell x0 <= x < x1, y0 <= y < y1 to `cost` (1..255; QN_CELL_WALL
** makes walls, a lower cost opens them). The rectangle must be non-empty and
** inside the grid: x0 < x1 <= width, y0 < y1 <= height (it is not clipped).
** A stamp that changes at least one cell is one change: the version goes up
** by one and the journal keeps its rectangle (shrunk to the cells that
** changed) among the last QN_GRID_JOURNAL changes; a stamp that changes
** nothing does not count. Fields are brought up to date afterwards with
** qn_grid_field_update (or rebuilt).
** Concurrency contract: a stamp must not run at the same time as anything
** else that reads this grid or any field built on it (sampling, building or
** updating a field, qn_grid_cost, conversion to a mesh); between stamps and
** updates, any number of threads may sample the fields at once.
** Returns QN_OK, or QN_E_INVALID_ARG (NULL grid, cost 0, an empty rectangle
** or one reaching outside the grid; the grid is then unchanged). */
#define QN_GRID_JOURNAL 256u
QN_API qn_status qn_grid_stamp(qn_grid *grid, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                               uint8_t cost);
/* Number of effective stamps made so far (0 for NULL). */
QN_API uint64_t qn_grid_version(const qn_grid *grid);

typedef enum qn_connectivity {
    QN_CONNECT_8 = 0, /* octile: orthogonal 1, diagonal sqrt 2, no corner cutting */
    QN_CONNECT_4 = 1
} qn_connectivity;

/* 8-direction flow values: index into qn_dir_vectors; QN_DIR_NONE at goal
** cells, walls and unreachable cells. Order: E, SE, S, SW, W, NW, N, NE with y
** growing downward (E = +x, S = +y). */
#define QN_DIR_NONE 8u
QN_API qn_vec2 qn_dir_vector(uint8_t dir); /* unit vector; (0,0) for QN_DIR_NONE or bad */

typedef struct qn_grid_field qn_grid_field;

/* Options; zero-initialised is the default (8-connected, full field, both
** flow fields built). */
typedef struct qn_grid_field_opts {
    qn_connectivity connectivity;
    /* When stop_enabled, stop once cell stop_cell (y*width+x) is settled:
    ** its value is exact, cells not settled by then read as unreachable, and
    ** no flow is built. Serves point queries. */
    bool stop_enabled;
    uint32_t stop_cell;
    bool no_flow; /* skip the flow fields (integration only) */
} qn_grid_field_opts;

/* Integration field by exact Dijkstra from goal cells (indices y*width+x,
** at least 1, at most width*height). Each move costs its length (1 or sqrt 2)
** times the cost byte of the cell entered. Goal cells that are walls:
** QN_E_BLOCKED; out of range: QN_E_INVALID_ARG. The field keeps a pointer to
** the grid, which must outlive it. opts may be NULL (the defaults), alloc
** may be NULL (libc), err may be NULL; *out is NULL on failure. */
QN_API qn_status qn_grid_field_create(const qn_grid *grid, const uint32_t *goal_cells,
                                      uint32_t goal_count, const qn_grid_field_opts *opts,
                                      const qn_allocator *alloc, qn_grid_field **out,
                                      qn_error *err);
QN_API void qn_grid_field_destroy(qn_grid_field *field);

/* Brings the field (values and both flow fields) up to date with the stamps
** made to its grid since it was built or last updated. The repair is
** incremental and touches only the affected part of the grid: cells whose
** value is no longer made by any neighbour (their path to the goal ran
** through a changed cell) are reset and re-seeded from their unchanged
** surroundings, cells next to a cheaper or newly opened cell are relaxed,
** and one Dijkstra pass settles everything that moved; flows are
** recomputed around the cells whose values or neighbourhoods changed.
** Afterwards the field equals a fresh build on the current grid exactly:
** the same doubles from qn_grid_field_cost and the same 8-direction flow
** and vectors. (A cell's flows depend only on its 3x3 neighbourhood, so the
** ties fall the same way as in a build: the first cheapest of E, S, W, N,
** replaced by the first of SE, SW, NW, NE that is cheaper or equal within
** one part in 10^12, a later diagonal only when strictly cheaper.)
** It rebuilds in place instead when more than QN_GRID_JOURNAL stamps are
** pending (the journal overflowed), when the pending stamps cover more than
** a quarter of the grid, and for fields built with stop_enabled (early
** exit: rebuilt with the same stop cell).
** Goals: a goal cell stamped to a wall stops being a goal while it is one
** (fresh builds refuse such a goal with QN_E_BLOCKED); the other goals
** still count, and when every goal is a wall every cell is unreachable. A
** goal cell opened again is a goal again.
** Concurrency: must not run while the grid is stamped or while this field is
** read (sampled, queried); other fields of the same grid may be updated
** from other threads at the same time. Returns QN_OK, QN_E_INVALID_ARG (NULL
** field) or QN_E_NOMEM; after QN_E_NOMEM every cell of the field reads as
** unreachable (sampling gives QN_E_UNREACHABLE, or QN_E_BLOCKED in a wall
** cell; never a stale direction),
** qn_grid_field_is_current is false, and the next update rebuilds. */
QN_API qn_status qn_grid_field_update(qn_grid_field *field, qn_error *err);
/* True when the field reflects every stamp made to its grid (false for NULL
** and after a failed update). */
QN_API bool qn_grid_field_is_current(const qn_grid_field *field);

QN_API const qn_grid *qn_grid_field_grid(const qn_grid_field *field);
QN_API size_t qn_grid_field_bytes(const qn_grid_field *field);
/* Integration value of cell (x, y) in world units; INFINITY unreachable/outside. */
QN_API double qn_grid_field_cost(const qn_grid_field *field, uint32_t x, uint32_t y);
/* 8-direction flow of a cell; QN_DIR_NONE as documented above. */
QN_API uint8_t qn_grid_field_dir(const qn_grid_field *field, uint32_t x, uint32_t y);
/* Normalised gradient vector of a cell; (0,0) at goals, walls, unreachable
** cells and local optima. */
QN_API qn_vec2 qn_grid_field_vec(const qn_grid_field *field, uint32_t x, uint32_t y);

typedef enum qn_flow_kind {
    QN_FLOW_DIR8 = 0,
    QN_FLOW_VECTOR = 1
} qn_flow_kind;

/* Moves of up to this many cells along a direction from qn_grid_field_sample
** stay clear of walls (see there). */
#define QN_GRID_SAFE_STEP 0.5f

/* Same contract as qn_field_sample: the direction for a unit at world point p
** from the chosen flow field; cell_io is a cell-index hint/result.
** QN_FLOW_DIR8 gives the cell's 8-direction flow. QN_FLOW_VECTOR gives the
** cell's gradient (qn_grid_field_vec) unless a straight move of
** QN_GRID_SAFE_STEP cells along it from p would enter a wall cell, leave the
** grid, or go from one cell to a diagonal neighbour through a blocked corner
** (the octile field's corner rule; passing within 1e-4 of the move's length
** of a grid vertex needs both cells beside the vertex open), or would enter
** a cell whose integration value is not lower than that of p's cell (so a
** unit never shuttles between two cells whose gradients point at each
** other), or when the cell the gradient's ray from p leaves p's cell into
** is not lower (through a corner: or either cell beside it a wall; the
** same answer for every point of the cell on that ray, so a unit never
** takes the gradient in a cell's middle and the flow nearer its edge, back
** and forth): then, and on flat spots (zero gradient), it gives the
** 8-direction flow instead. So a
** straight move of up to QN_GRID_SAFE_STEP cells (a whole cell for
** QN_FLOW_DIR8) along any direction returned enters no wall and cuts no
** corner: units need no sliding along walls.
**   p        in   world units
**   cell_io  out  may be NULL; the cell index (y*width + x), or QN_NONE.
**                 Unlike quad hints, its value on entry is not read (the
**                 cell is found from p in O(1)), so it needs no initialising
**   dir      out  a unit vector, or (0, 0) */
QN_API qn_status qn_grid_field_sample(const qn_grid_field *field, qn_flow_kind kind, qn_vec2 p,
                                      uint32_t *cell_io, qn_vec2 *dir);
/* Batch form: dirs required; status and cells may be NULL (as in
** qn_field_sample_batch). QN_E_INVALID_ARG for NULL field, positions or dirs. */
QN_API qn_status qn_grid_field_sample_batch(const qn_grid_field *field, qn_flow_kind kind,
                                            const qn_vec2 *positions, qn_vec2 *dirs,
                                            uint8_t *status, uint32_t *cells, size_t count);

/* ------------------------------------------------------------------ */
/* Grid tiles: hierarchical grid instances for big maps                */
/* ------------------------------------------------------------------ */

/* Flow-field tiles. A qn_grid_tiles is built once per grid: square sectors
** of sector_cells cells, the entrances between neighbouring sectors (runs
** of cells open on both sides of a border, cut into segments of at most 8
** cells, each a pair of nodes, one cell either side at its middle), and per
** sector the cost between each pair of its nodes inside it (grid mode's
** octile moves and corner rule). A qn_grid_tfield is one destination: a
** Dijkstra over the nodes from the goal's sector (milliseconds on a
** 4096x4096 map), then each sector's field (values, 8-direction flow and
** gradient) is built the first time a unit samples in it, seeded from the
** cells just across its entrances, and kept. The goal's sector and the
** (up to) eight round it share one such field over all their cells,
** seeded at the goal and across the block's outer entrances, so values
** near the goal are the whole-grid field's (unless the way leaves the
** block). Memory grows with the sectors units visit, not with the map.
** Farther out paths run through node cells, so they are a few percent
** longer than a whole-grid field's; units arrive wherever the goal is
** reachable.
**
** Thread-safety: a tile field may be sampled from many threads at once
** (qn_grid_tfield_sample, _sample_batch, _prepare): a sector built by two
** threads at the same time is published once (atomic compare-and-swap) and
** the other copy freed. Creating and destroying, and qn_grid_tiles_update,
** need exclusive access; fields of tiles that were updated must be made
** anew (sampling a field whose grid changed since its tiles were built
** returns QN_E_MISMATCH).
**
** qn_grid_tiles_create: sector_cells 4..256, 0 for QN_GRID_TILE_DEFAULT.
** Codes: QN_E_INVALID_ARG, QN_E_NOMEM. The grid must outlive the tiles. */
#define QN_GRID_TILE_DEFAULT 32u
typedef struct qn_grid_tiles qn_grid_tiles;
typedef struct qn_grid_tfield qn_grid_tfield;
QN_API qn_status qn_grid_tiles_create(const qn_grid *grid, uint32_t sector_cells,
                                      const qn_allocator *alloc, qn_grid_tiles **out,
                                      qn_error *err);
QN_API void qn_grid_tiles_destroy(qn_grid_tiles *tiles);
/* Rebuilds the tiles after qn_grid_stamp changed the grid (QN_OK at once
** when it did not). */
QN_API qn_status qn_grid_tiles_update(qn_grid_tiles *tiles, qn_error *err);
QN_API size_t qn_grid_tiles_bytes(const qn_grid_tiles *tiles);
QN_API uint32_t qn_grid_tiles_sector_count(const qn_grid_tiles *tiles);
QN_API uint32_t qn_grid_tiles_node_count(const qn_grid_tiles *tiles);

/* Options of a tile field (NULL: the defaults). */
typedef struct qn_grid_tfield_opts {
    /* The search over the nodes is an A* aimed at each sector asked for,
    ** with the octile distance as its bound. 0 or 1: that bound as it is,
    ** and every node cost exact (paths through the nodes are shortest).
    ** Up to 4: the bound times this weight, so the search goes more
    ** straight at each sector and settles fewer nodes, and node costs are at
    ** most this factor above the shortest. Units still arrive. On a
    ** 4096x4096 map of scattered obstacles, the first samples of 1,000 units
    ** in 10 groups: 1 -> about 34 ms and paths 1.3 % longer than the
    ** whole-grid field's; 1.1 -> 21 ms, 2.5 %; 1.2 -> 9 ms, 3.8 %. */
    float search_weight;
} qn_grid_tfield_opts;

/* A destination: goal_cell is y*width+x; opts may be NULL. Codes:
** QN_E_INVALID_ARG (NULL, a cell outside the grid, a weight outside 1..4),
** QN_E_BLOCKED (a wall), QN_E_MISMATCH (the grid changed since the tiles
** were built), QN_E_NOMEM. */
QN_API qn_status qn_grid_tfield_create(const qn_grid_tiles *tiles, uint32_t goal_cell,
                                       const qn_grid_tfield_opts *opts, const qn_allocator *alloc,
                                       qn_grid_tfield **out, qn_error *err);
QN_API void qn_grid_tfield_destroy(qn_grid_tfield *field);
/* Bytes held now: the node costs plus the sectors built so far. */
QN_API size_t qn_grid_tfield_bytes(const qn_grid_tfield *field);
/* Nodes the tile field's node search has settled so far (of
** qn_grid_tiles_node_count): as far as the sectors asked for need, never
** waiting for a node the goal cannot reach (the tiles know the parts of
** their node graph). Thread-safe (takes the search's lock). */
QN_API uint32_t qn_grid_tfield_nodes_settled(const qn_grid_tfield *field);
/* Builds the sectors of these positions now (outside ones are skipped), so
** later samples there do no work. QN_E_NOMEM, QN_E_INVALID_ARG,
** QN_E_MISMATCH (the grid changed since the tiles were built). */
QN_API qn_status qn_grid_tfield_prepare(const qn_grid_tfield *field, const qn_vec2 *positions,
                                        size_t count);
/* As qn_grid_field_sample (same statuses and the same guarantees for both
** kinds), building the sector's field on first use: QN_E_NOMEM when that
** fails, QN_E_MISMATCH when the grid changed since the tiles were built. */
QN_API qn_status qn_grid_tfield_sample(const qn_grid_tfield *field, qn_flow_kind kind, qn_vec2 p,
                                       uint32_t *cell_io, qn_vec2 *dir);
/* The tile field's value at cell (x, y) (building its sector): the cost to
** the goal along the field's flow, at least the whole-grid field's value
** (qn_grid_field_cost); INFINITY when unreachable, -INFINITY for a wall,
** NAN for a cell outside the grid, NULL, out of memory or a changed grid. */
QN_API double qn_grid_tfield_cost(const qn_grid_tfield *field, uint32_t x, uint32_t y);
QN_API qn_status qn_grid_tfield_sample_batch(const qn_grid_tfield *field, qn_flow_kind kind,
                                             const qn_vec2 *positions, qn_vec2 *dirs,
                                             uint8_t *status, uint32_t *cells, size_t count);
/* The batch cut into jobs and run by `runner` (or the built-in runner when
** NULL): qn_field_sample_jobs's contract (QN_E_INVALID_ARG also for a kind
** that is not a qn_flow_kind). Sectors are built on the threads that first
** sample in them, several at once. Answers: those of
** qn_grid_tfield_sample_batch where the sectors are built; where the jobs
** build them, equal but for the last bits of node costs summed in another
** order (see qn_hfield_sample_jobs), which can turn a direction where two
** steps tie. */
QN_API qn_status qn_grid_tfield_sample_jobs(const qn_grid_tfield *field, qn_flow_kind kind,
                                            const qn_vec2 *positions, qn_vec2 *dirs,
                                            uint8_t *status, uint32_t *cells, size_t count,
                                            uint32_t jobs, const qn_jobs *runner);

/* ------------------------------------------------------------------ */
/* Grids to meshes and back                                            */
/* ------------------------------------------------------------------ */

/* Rectangle decomposition of a grid's passable cells into quads (far fewer
** quads than cells): axis-aligned rectangles of cells with one cost byte
** each, the quad's cost multiplier being that byte, as few as a partition
** into such rectangles can have (cuts along a largest set of untouching
** chords between reflex corners; on grids of scattered obstacles the
** matching behind it is capped and the count can exceed the fewest by a
** fraction of a percent). Linear in the cells apart from that matching;
** about 10 ms for a 512x512 map (a greedy row-major cut takes 1-2 ms and
** gives up to 19 % more quads). Every passable cell lies
** in exactly one quad and no wall cell in any; adjacency (T-junctions
** included) is read from the cells (which rectangle holds each), giving the
** portals qn_mesh_create would find for the same quads without its edge
** pairing and overlap search (a 4096x4096 map: about 2.5 s in all, and a
** transient 4 bytes per cell). Quad corners are in the grid's world
** coordinates: cell (x, y) covers [ox + x*cs, ox + (x+1)*cs) x [oy + y*cs, ...).
** Quads are listed in row-major order of their top-left cell. Codes:
** QN_E_INVALID_ARG (NULL argument, or no passable cell), QN_E_NOMEM,
** QN_E_LIMIT (more than QN_MAX_QUADS rectangles), QN_E_BAD_NUMBER (the grid
** reaches beyond QN_MAX_COORD). */
QN_API qn_status qn_mesh_from_grid(const qn_grid *grid, const qn_allocator *alloc,
                                   qn_mesh **out, qn_error *err);

/* Rasterises a mesh at cell size cell_size (> 0) over its bounds (origin =
** bounds.min): a cell whose centre lies in an unblocked quad gets that quad's
** cost rounded to 1..254; every other cell is a wall. Codes:
** QN_E_INVALID_ARG, QN_E_LIMIT (more cells than QN_MAX_GRID_*), QN_E_NOMEM. */
QN_API qn_status qn_grid_from_mesh(const qn_mesh *mesh, float cell_size,
                                   const qn_allocator *alloc, qn_grid **out, qn_error *err);

/* ------------------------------------------------------------------ */
/* MovingAI maps and scenarios                                         */
/* ------------------------------------------------------------------ */

/* Reads an octile .map (LF or CRLF, final newline optional). '.', 'G' and
** 'S' are ground (cost 1); every other terrain character ('@', 'O', 'T',
** 'W') is a wall for a ground agent. Cell size 1, origin (0, 0). Errors:
** QN_E_MAP_SYNTAX, QN_E_TRUNCATED, QN_E_LIMIT, QN_E_IO, QN_E_NOMEM, with
** line and column in err. Text: len bytes, need not end in NUL; file: read
** once. alloc and err may be NULL; *out is NULL on failure. These, and the
** scenario readers below, need no JSON: they are in every build. */
QN_API qn_status qn_map_load_mem(const char *text, size_t len, const qn_allocator *alloc,
                                 qn_grid **out, qn_error *err);
QN_API qn_status qn_map_load_file(const char *path, const qn_allocator *alloc, qn_grid **out,
                                  qn_error *err);

typedef struct qn_scen_row {
    uint32_t bucket;
    uint32_t map_width, map_height;
    uint32_t start_x, start_y, goal_x, goal_y;
    double optimal;
    uint32_t decimals; /* digits after the decimal point as printed */
} qn_scen_row;

typedef struct qn_scen qn_scen;

/* Reads a .map.scen file ("version 1" or "version 1.0" header, or none).
** Each row has 9 whitespace-separated fields: bucket, map name, map width,
** map height, start x, start y, goal x, goal y, optimal length. Blank lines
** are skipped. Errors: QN_E_SCEN_SYNTAX (bad field, wrong field count, a
** cell outside the stated map size), QN_E_TRUNCATED (input ends inside a
** row), QN_E_FORMAT_VERSION (another version), QN_E_LIMIT (map size above
** the grid limits), QN_E_IO, QN_E_NOMEM; err->line and err->column say
** where. */
QN_API qn_status qn_scen_load_mem(const char *text, size_t len, const qn_allocator *alloc,
                                  qn_scen **out, qn_error *err);
QN_API qn_status qn_scen_load_file(const char *path, const qn_allocator *alloc, qn_scen **out,
                                   qn_error *err);
QN_API void qn_scen_destroy(qn_scen *scen);
QN_API uint32_t qn_scen_row_count(const qn_scen *scen);
/* Row i, or NULL out of range. Owned by scen. */
QN_API const qn_scen_row *qn_scen_row_at(const qn_scen *scen, uint32_t i);
/* How far a computed length may be from row->optimal and still match it:
** the largest of 1e-6, 1.01 units in the last printed digit
** (1.01 * 10^-decimals) and 1e-5 * optimal. 0 for NULL. */
QN_API double qn_scen_tolerance(const qn_scen_row *row);


/* ------------------------------------------------------------------ */
/* Crowd: steering, local avoidance, arrival and formations            */
/* ------------------------------------------------------------------ */

/* An optional layer on top of the instances: units with bodies that follow
** their instance (or a path, or a formation slot), avoid one another
** reciprocally (ORCA half-planes solved by a small 2-D linear program), keep
** off the mesh's walls, and never leave the mesh.
**
** Each step, per unit: the desired velocity (qn_field_sample of the unit's
** instance, or its path, or its formation slot; slowed inside its arrival
** region; turned at most max_accel * dt from the current velocity), its
** nearest neighbours from a uniform grid of the units rebuilt every step,
** one half-plane per neighbour (each unit takes half of the avoidance; the
** radii are padded by 30 % so that units keep a margin) and per wall edge
** near the unit, the velocity closest to the desired one that satisfies
** the wall half-planes and every neighbour's. When no velocity satisfies
** them all (dense crowds), the unit takes the smallest worst violation, and
** among those velocities the one nearest half its desired velocity (a unit
** in a jam eases off instead of pushing at full speed). That velocity is
** then kept from closing on any neighbour by more than half their gap in
** one step (so a pair that both do it cannot come to overlap). The move of
** velocity * dt slides along the boundary instead of leaving the mesh.
** Then units that still overlap after the move step apart, half the depth
** each (at most half a radius), again sliding along walls, in
** resolve_passes passes; the velocity
** read back is the displacement of the step when that push or a slide
** changed it. Avoidance may brake or swerve harder than max_accel: a
** collision-free velocity wins over smoothness. A tiny deterministic turn
** of each desired velocity (a thousandth of a radian at most) breaks the
** exact symmetries in which reciprocal avoidance deadlocks.
**
** Walls are the parts of unblocked quads' edges not covered by a portal to
** another unblocked quad, taken from the mesh when the crowd is created and
** again at the next step after a dynamic change (qn_mesh_version). A unit
** standing in a quad that was blocked under it walks out (its instance's
** qn_field_way_out); its moves are then only kept inside the mesh.
**
** Determinism: a step reads a snapshot of every unit taken at its start, and
** each unit's result depends on the snapshot alone (neighbours are ordered by
** distance, then id), so the same calls give bit-identical states whatever
** the thread count and however the units are split into ranges.
**
** Threads: a crowd is not thread-safe itself, except for the range form
** (qn_crowd_step_begin): between begin and end, any number of threads may
** run step_range, then resolve_range (each pass), on disjoint ranges at the same time,
** and qn_crowd_unit_count / qn_crowd_get / qn_crowd_get_stats may be
** called; nothing else may touch the crowd (add, remove, teleport, set_*
** return QN_E_INVALID_ARG). The mesh and the instances the units follow are
** only read, and must not change during a step (dynamic changes go between
** steps, followed by qn_field_update). Memory: about 220 bytes per unit plus
** 4 per neighbour slot (max_neighbours), with the grid (at most 8 cells a unit). */
typedef struct qn_crowd qn_crowd;

#define QN_CROWD_MAX_UNITS (1u << 22)
#define QN_CROWD_MAX_NEIGHBOURS 32u
#define QN_CROWD_MAX_PATH 4096u    /* waypoints of one unit's path */
#define QN_CROWD_MAX_SPEED 1.0e3f  /* max_speed and max_accel bound */
#define QN_CROWD_MAX_RADIUS 1.0e3f
#define QN_CROWD_MAX_RESOLVE_PASSES 16u
#define QN_CROWD_DEFAULT_RESOLVE_PASSES 2u

/* Crowd options; zero-initialised is the default. */
typedef struct qn_crowd_opts {
    /* Neighbours each unit avoids: the nearest ones (by distance, then id).
    ** 0: 10. At most QN_CROWD_MAX_NEIGHBOURS. */
    uint32_t max_neighbours;
    /* How far ahead (seconds) units avoid one another; 0: 1.5. In [0, 100]. */
    float time_horizon;
    /* How far ahead (seconds) units avoid walls; 0: 0.5. In [0, 100]. */
    float wall_horizon;
    /* Neighbours are looked for within the unit's radius plus the largest
    ** radius plus this distance; 0: twice the largest radius plus 0.75 s at
    ** the largest max speed. In [0, QN_MAX_COORD]. */
    float neighbour_distance;
    /* Passes a step makes to push apart units that still overlap after
    ** their move (see qn_crowd_resolve_range); each pass pushes every unit
    ** from the positions of the pass before, so more passes undo the deep
    ** overlaps of dense crowds that no avoiding velocity exists for.
    ** 0: QN_CROWD_DEFAULT_RESOLVE_PASSES. At most QN_CROWD_MAX_RESOLVE_PASSES. */
    uint32_t resolve_passes;
} qn_crowd_opts;

/* A unit as added. Zero-initialised fields: velocity 0, no instance (the
** unit stands still unless it has a path or a formation slot), group 0, no
** goal region. */
typedef struct qn_crowd_unit_desc {
    qn_vec2 position;  /* inside an unblocked quad of the crowd's mesh */
    qn_vec2 velocity;  /* finite */
    float radius;      /* (0, QN_CROWD_MAX_RADIUS] */
    float max_speed;   /* [0, QN_CROWD_MAX_SPEED] */
    float max_accel;   /* (0, QN_CROWD_MAX_SPEED]; how fast the desired velocity turns */
    /* The instance the unit follows; NULL for none. Must be an instance of
    ** the crowd's mesh and outlive the unit (or its replacement by
    ** qn_crowd_set_field). */
    const qn_field *field;
    uint32_t group; /* free for the caller; read back by qn_crowd_get */
    /* Arrival region: the points within goal_radius of goal (goal_radius 0:
    ** no region; the unit stops at QN_AT_GOAL): for a unit that follows an
    ** exact instance of that goal, within goal_radius along the instance
    ** (its cost, over the quads' common cost: round obstacles and along
    ** corridors the region reaches less far than a disc), else a disc.
    ** Inside it a unit slows down and arrives (stops for good, until it
    ** gets a new goal or is teleported) once it is within its radius of the
    ** goal point, or has been held up inside the region (or within its
    ** diameter of the region's rim, where the last units of a full region
    ** stop; or up to twice goal_radius out, touching a unit that arrived at
    ** the same goal point) for a second (moving slower than a third of the
    ** speed it wants, because units that arrived before it are in the way):
    ** the region fills from the goal outwards, without stacking. An arrived
    ** unit steps aside (square to the passer's way) for a unit that wants to
    ** go through it on the way elsewhere (outside its own region's rim), so
    ** a full region neither walls in nor blocks units of other goals. The
    ** caller sizes the region for the group: the area of the discs over a
    ** packing density of 0.25 (radius * sqrt(units / 0.25) on open ground)
    ** leaves room, as units keep the avoidance margin between them; on
    ** cluttered ground, qn_field_region_radius finds the radius that holds
    ** that area of the field's ground. */
    qn_vec2 goal;
    float goal_radius; /* [0, QN_MAX_COORD] */
} qn_crowd_unit_desc;

/* A unit as read back. */
typedef struct qn_crowd_unit {
    qn_vec2 position, velocity;
    qn_vec2 desired;  /* desired velocity of the last step */
    qn_vec2 heading;  /* unit direction the unit faces (formation frame) */
    float radius, max_speed, max_accel;
    const qn_field *field;
    uint32_t group;
    uint32_t quad;    /* quad the unit is in */
    uint32_t leader;  /* formation leader's id, or QN_NONE */
    bool arrived;     /* stopped inside its arrival region */
    bool wall_contact; /* its last move had to slide along a wall */
} qn_crowd_unit;

/* Creates an empty crowd on a mesh, which must outlive it. Codes: QN_OK,
** QN_E_INVALID_ARG (NULL mesh or out, an option out of range), QN_E_NOMEM. */
QN_API qn_status qn_crowd_create(const qn_mesh *mesh, const qn_crowd_opts *opts,
                                 const qn_allocator *alloc, qn_crowd **out, qn_error *err);
QN_API void qn_crowd_destroy(qn_crowd *crowd);

/* Adds a unit; *id gets its id (ids of removed units are reused, the most
** recently freed first). O(1) amortised (arrays grow by doubling). Codes: QN_OK,
** QN_E_INVALID_ARG (a field out of range, a field of another mesh, during a
** step), QN_E_OUTSIDE (position outside every quad), QN_E_BLOCKED (in a
** blocked quad), QN_E_LIMIT (QN_CROWD_MAX_UNITS units), QN_E_NOMEM. */
QN_API qn_status qn_crowd_add(qn_crowd *crowd, const qn_crowd_unit_desc *desc, uint32_t *id,
                              qn_error *err);
/* Removes a unit (and its path), O(1); removing a leader also clears its
** followers' leader, found by a scan of the units (O(n)). QN_E_NOT_FOUND
** for an id that is not in use; QN_E_INVALID_ARG during a step. */
QN_API qn_status qn_crowd_remove(qn_crowd *crowd, uint32_t id);
/* Moves a unit to p (velocity kept; arrival cleared). QN_E_OUTSIDE,
** QN_E_BLOCKED, QN_E_NOT_FOUND, QN_E_INVALID_ARG (non-finite p, during a step). */
QN_API qn_status qn_crowd_teleport(qn_crowd *crowd, uint32_t id, qn_vec2 p);
/* Reads a unit back. QN_E_NOT_FOUND for an id not in use. */
QN_API qn_status qn_crowd_get(const qn_crowd *crowd, uint32_t id, qn_crowd_unit *out);
/* Units in the crowd; 0 for NULL. */
QN_API uint32_t qn_crowd_unit_count(const qn_crowd *crowd);
/* One more than the largest id in use (ids run below it); 0 for NULL. */
QN_API uint32_t qn_crowd_id_bound(const qn_crowd *crowd);

/* New instance and arrival region for a unit (clears arrival). Codes as
** for qn_crowd_add. */
QN_API qn_status qn_crowd_set_target(qn_crowd *crowd, uint32_t id, const qn_field *field,
                                     qn_vec2 goal, float goal_radius);
/* A path for the unit to walk instead of its instance (a copy of pts[0..n-1],
** e.g. from qn_path_find; n <= QN_CROWD_MAX_PATH; n = 0 clears it). The unit
** aims at the next waypoint, passing each one when within twice its radius
** of it; at the last one it stops (or arrives in its region). A follower
** (qn_crowd_set_leader) ignores its path while it has a leader. QN_E_NOMEM, QN_E_NOT_FOUND,
** QN_E_INVALID_ARG (n too large, a non-finite point, pts NULL with n > 0). */
QN_API qn_status qn_crowd_set_path(qn_crowd *crowd, uint32_t id, const qn_vec2 *pts,
                                   uint32_t n);
/* Formation: the unit follows `leader` (QN_NONE clears), holding the slot
** `slot` in the leader's frame (x along the leader's heading, y to its left;
** the heading is the direction of the leader's last velocity faster than a
** tenth of its max speed, turned toward it at most 90 degrees a second). Once
** the leader has arrived, followers leave their slots and arrive like any
** unit. The slot point is projected into free space
** (pulled toward the leader when the straight line from the leader to it
** leaves the mesh). The follower steers at the slot point when it sees it,
** else at the leader when it sees the leader, else along its own instance,
** at the leader's velocity plus a catch-up term, up to its max speed (give
** followers some speed to spare). A leader may not itself follow (no
** chains): QN_E_INVALID_ARG, also for a unit following itself. */
QN_API qn_status qn_crowd_set_leader(qn_crowd *crowd, uint32_t id, uint32_t leader,
                                     qn_vec2 slot);

typedef enum qn_formation_shape {
    QN_FORMATION_LINE = 0,  /* side by side, abreast of the leader, behind it */
    QN_FORMATION_WEDGE = 1, /* a V opening backwards */
    QN_FORMATION_BOX = 2    /* rows of ceil(sqrt(n)) behind the leader */
} qn_formation_shape;

/* Slots for n followers of a shape, spacing apart (centre to centre), in the
** leader's frame, written to slots[0..n-1]. QN_E_INVALID_ARG for a bad shape,
** spacing not in (0, QN_MAX_COORD) or slots NULL with n > 0. */
QN_API qn_status qn_formation_slots(qn_formation_shape shape, uint32_t n, float spacing,
                                    qn_vec2 *slots);

/* One step of dt seconds (0 < dt <= 10) for every unit, on the calling
** thread: begin, one range over all units, end. Codes: QN_OK,
** QN_E_INVALID_ARG (NULL, a bad dt, a step already begun), QN_E_NOMEM (the
** crowd is then unchanged). */
QN_API qn_status qn_crowd_step(qn_crowd *crowd, float dt);
/* The same step with each of its two phases cut into `jobs` jobs
** (contiguous ranges of units; 1 <= jobs <= QN_MAX_JOBS) and run by
** `runner` (a game's job system; see qn_jobs), or by the built-in runner
** when runner is NULL (up to QN_MAX_THREADS pthreads, the calling thread
** taking a share; everything on the calling thread when built with
** QN_NO_THREADS). The runner is called twice, the second time after every
** job of the first has returned. Bit-identical to qn_crowd_step. Codes as
** qn_crowd_step; QN_E_NOMEM also when a built-in thread cannot be started
** (its jobs then run on the calling thread, so the step is complete). */
QN_API qn_status qn_crowd_step_jobs(qn_crowd *crowd, float dt, uint32_t jobs,
                                    const qn_jobs *runner);
/* qn_crowd_step_jobs with the built-in runner and threads (1..QN_MAX_THREADS)
** jobs: one per thread. */
QN_API qn_status qn_crowd_step_parallel(qn_crowd *crowd, float dt, uint32_t threads);

/* Range form for a job system: begin (one thread) takes the snapshot and
** builds the spatial grid; then two phases over ranges [begin, end) of the
** internal order (0 <= begin <= end <= unit count): step_range computes the
** units' new velocities and moves from the snapshot; resolve_range then
** pushes apart units that still overlap after the move, reading the moved
** positions of their neighbours. Within a phase any number of threads may
** run disjoint ranges at once; every step_range must have returned before
** any resolve_range starts (a barrier). The resolve phase is repeated
** qn_crowd_resolve_passes() times (the resolve_passes option), with a
** barrier between passes: every range of one pass must have returned before
** any range of the next starts. End (one thread) commits. Every unit must be
** covered by exactly one range of each phase and pass: resolve_range returns
** QN_E_MISMATCH for a unit not yet stepped or already through every pass,
** and end returns QN_E_MISMATCH (committing nothing; the step is abandoned)
** when a unit was missed. */
QN_API qn_status qn_crowd_step_begin(qn_crowd *crowd, float dt);
QN_API qn_status qn_crowd_step_range(qn_crowd *crowd, uint32_t begin, uint32_t end);
QN_API qn_status qn_crowd_resolve_range(qn_crowd *crowd, uint32_t begin, uint32_t end);
/* Resolve passes a step of this crowd makes (1..QN_CROWD_MAX_RESOLVE_PASSES);
** 0 for NULL. */
QN_API uint32_t qn_crowd_resolve_passes(const qn_crowd *crowd);
QN_API qn_status qn_crowd_step_end(qn_crowd *crowd);

/* Figures of the crowd so far. */
typedef struct qn_crowd_stats {
    uint64_t steps;          /* steps completed */
    uint64_t wall_contacts;  /* unit moves that had to slide along a wall */
    uint32_t units, arrived; /* now */
} qn_crowd_stats;
QN_API void qn_crowd_get_stats(const qn_crowd *crowd, qn_crowd_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* QUADNAV_H */
