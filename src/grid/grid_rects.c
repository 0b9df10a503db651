/*
** grid_rects.c: the cuts that split a grid's passable cells into the fewest
** rectangles of one cost each (qn__grid_cuts; grid_mesh.c reads the
** rectangles off them).
**
** Each region of equal-cost cells is a rectilinear polygon, possibly with
** holes. A grid vertex where exactly three of the four cells around it hold
** the region's cost is a reflex corner of it; a partition into rectangles
** has to cut away from every reflex corner, and a region without reflex
** corners is a rectangle. A cut that joins two reflex corners on one grid
** line (a chord) settles both at once. With C reflex corners, H holes and a
** largest set of L chords no two of which touch, the fewest rectangles are
** C - L - H + 1 per region (Lipski, Lodi, Luccio, Mugnai and Pagli 1979;
** Ohtsuki 1982; Ferrari, Sankar and Sklansky 1984). Horizontal chords only
** touch vertical ones (chords on one line are disjoint), so the touch graph
** is bipartite and the largest set of untouching chords is the complement of
** a smallest vertex cover, read off a maximum matching (Koenig's
** construction). The matching is a greedy start and then one bounded search
** for an augmenting path from each vertex left free (see match_run), so on
** grids of scattered obstacles it can fall short of the largest and the
** count be a fraction of a percent above the fewest. Those chords are cut;
** every reflex corner still unsettled then sends a cut along the shorter of
** its two ways until it meets a wall, another cost or an earlier cut.
**
** Cuts are kept per cell: bit QN__CUT_TOP on the edge above the cell,
** QN__CUT_LEFT on the edge to its left. Walks along grid lines are linear in the cells:
** the chords of one line are disjoint, and a corner's two ways are walked in
** step, so no walk is longer than twice the cut it draws.
*/
#include "internal.h"

/* The four cells around a grid vertex, as bits of a mask. */
enum { NW = 1, NE = 2, SW = 4, SE = 8 };

/* A chord on grid line `line` from vertex `lo` to vertex `hi` along it. */
typedef struct chord {
    uint32_t line, lo, hi;
} chord;

/* One family of chords, all horizontal or all vertical. */
typedef struct chords {
    chord *c;
    uint32_t n, cap;
} chords;

typedef struct part {
    const qn_allocator *a;
    const uint8_t *c;
    uint32_t w, h;
    uint8_t *cut;
    chords hc, vc;
    uint32_t *row_first; /* horizontal chords on lines < y: row_first[y] */
    uint32_t *adj_first, *adj; /* per vertical chord, the horizontal ones it touches */
    size_t nadj;
} part;

/* ---- cells and vertices ---------------------------------------------- */

/* Cost of cell (x, y); a wall outside the grid. */
static uint8_t cell(const part *p, int64_t x, int64_t y) {
    if (x < 0 || y < 0 || x >= (int64_t)p->w || y >= (int64_t)p->h) return QN_CELL_WALL;
    return p->c[(size_t)y * p->w + (size_t)x];
}

/* Mask of the cells around vertex (x, y) that hold cost k. */
static unsigned mask_of(const part *p, uint32_t x, uint32_t y, uint8_t k) {
    int64_t X = x, Y = y;
    return (cell(p, X - 1, Y - 1) == k ? NW : 0u) | (cell(p, X, Y - 1) == k ? NE : 0u) |
           (cell(p, X - 1, Y) == k ? SW : 0u) | (cell(p, X, Y) == k ? SE : 0u);
}

/* If interior vertex (x, y) (0 < x < w, 0 < y < h) is a reflex corner of a
** passable region, its cost and the mask of its three cells; else false. */
static bool reflex(const part *p, uint32_t x, uint32_t y, uint8_t *k, unsigned *m) {
    const uint8_t *up = p->c + (size_t)(y - 1) * p->w + x, *dn = up + p->w;
    uint8_t a = up[-1], b = up[0], c = dn[-1], d = dn[0];
    if (a == b && c == d && a == c) return false; /* the common case: one region */
    *k = a == b || a == d ? a : b; /* with three equal cells, two of a, b, d agree */
    if (*k == QN_CELL_WALL) return false;
    *m = (a == *k ? NW : 0u) | (b == *k ? NE : 0u) | (c == *k ? SW : 0u) | (d == *k ? SE : 0u);
    return *m == (NE | SW | SE) || *m == (NW | SW | SE) || *m == (NW | NE | SE) ||
           *m == (NW | NE | SW);
}

/* The first vertex (x', y) with x <= x' < w whose four cells are not all
** alike (only those can be reflex corners), or w. Eight vertices at a
** time where the word reads are in the row: on open ground, or where each
** cell differs from few of its neighbours, most vertices are skipped so. */
static uint32_t next_mixed(const part *p, uint32_t y, uint32_t x) {
    const uint8_t *up = p->c + (size_t)(y - 1) * p->w, *dn = up + p->w;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full;
    for (; x + 8 <= p->w; x += 8) { /* cells x - 1 .. x + 7 of both rows */
        uint64_t a, b, c, d;
        memcpy(&a, up + x - 1, 8), memcpy(&b, up + x, 8);
        memcpy(&c, dn + x - 1, 8), memcpy(&d, dn + x, 8);
        uint64_t z = (a ^ b) | (a ^ c) | (a ^ d);
        z = (((z & lo7) + lo7) | z) & ~lo7; /* each byte's top bit: that vertex mixed */
        if (z) return x + (uint32_t)__builtin_ctzll(z) / 8u;
    }
#endif
    for (; x < p->w; x++)
        if (up[x - 1] != up[x] || up[x - 1] != dn[x - 1] || up[x - 1] != dn[x]) return x;
    return p->w;
}

/* A reflex corner's two ways into its region: +1 or -1 along x and along y
** (away from its odd cell). */
static int way_x(unsigned m) { return (m & NW) && (m & SW) ? -1 : 1; }
static int way_y(unsigned m) { return (m & NW) && (m & NE) ? -1 : 1; }

/* Is there a cut on the horizontal edge of line y over cells x (0 < y < h)? */
static bool hcut(const part *p, uint32_t y, uint32_t x) {
    return y > 0 && y < p->h && (p->cut[(size_t)y * p->w + x] & QN__CUT_TOP);
}

/* Is there a cut on the vertical edge of line x beside row y (0 < x < w)? */
static bool vcut(const part *p, uint32_t x, uint32_t y) {
    return x > 0 && x < p->w && (p->cut[(size_t)y * p->w + x] & QN__CUT_LEFT);
}

/* Is vertex (x, y) inside region k, all four cells k and no cut at it? */
static bool open_vertex(const part *p, uint32_t x, uint32_t y, uint8_t k) {
    if (mask_of(p, x, y, k) != (NW | NE | SW | SE)) return false;
    return !hcut(p, y, x - 1) && !hcut(p, y, x) && !vcut(p, x, y - 1) && !vcut(p, x, y);
}

/* ---- chords ------------------------------------------------------------ */

static void chords_free(const qn_allocator *a, chords *c) {
    qn__free(a, c->c, (size_t)c->cap * sizeof(chord));
    memset(c, 0, sizeof *c);
}

static bool chord_push(const qn_allocator *a, chords *c, uint32_t line, uint32_t lo, uint32_t hi) {
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? 2 * c->cap : 256;
        chord *n = qn__realloc(a, c->c, (size_t)c->cap * sizeof(chord), (size_t)cap * sizeof(chord));
        if (!n) return false;
        c->c = n;
        c->cap = cap;
    }
    chord ch = {line, lo, hi};
    c->c[c->n++] = ch;
    return true;
}

/* From reflex corner (x, y) of region k, along its way right or down: the
** vertex where the region's inside along that grid line first ends, in
** *end (its coordinate along the line), when it is a reflex corner facing
** back (so the two make a chord); else false. */
static bool chord_end(const part *p, uint32_t x, uint32_t y, bool right, uint8_t k,
                      uint32_t *end) {
    size_t s = right ? 1 : p->w, n = right ? p->w : p->h, e = (right ? x : y) + 1;
    /* The cells on the two sides of the line just past vertex e. */
    const uint8_t *a = right ? p->c + (size_t)(y - 1) * p->w + e : p->c + e * p->w + x - 1;
    const uint8_t *b = right ? a + p->w : a + 1;
    for (; e < n && *a == k && *b == k; e++, a += s, b += s) {
    }
    /* At the grid's edge the region ends on both sides: no corner there. */
    if (e >= n || (*a == k) == (*b == k)) return false;
    *end = (uint32_t)e;
    return true;
}

/* Every chord, horizontal ones by line then position. A corner's way is
** walked only when it points right or down, so each chord once. */
static bool find_chords(part *p) {
    for (uint32_t y = 1; y < p->h; y++)
        for (uint32_t x = next_mixed(p, y, 1); x < p->w; x = next_mixed(p, y, x + 1)) {
            uint8_t k;
            unsigned m;
            uint32_t end;
            if (!reflex(p, x, y, &k, &m)) continue;
            if (way_x(m) > 0 && chord_end(p, x, y, true, k, &end) &&
                !chord_push(p->a, &p->hc, y, x, end))
                return false;
            if (way_y(m) > 0 && chord_end(p, x, y, false, k, &end) &&
                !chord_push(p->a, &p->vc, x, y, end))
                return false;
        }
    return true;
}

/* row_first[y]: the first horizontal chord on a line >= y. */
static bool index_rows(part *p) {
    p->row_first = qn__alloc(p->a, ((size_t)p->h + 2) * sizeof(uint32_t));
    if (!p->row_first) return false;
    uint32_t i = 0;
    for (uint32_t y = 0; y <= p->h + 1; y++) {
        while (i < p->hc.n && p->hc.c[i].line < y) i++;
        p->row_first[y] = i;
    }
    return true;
}

/* One sweep down the grid lines meeting every horizontal chord with the
** vertical chords it touches (ends included): active[x] is the vertical
** chord on line x that reached the current line (vertical chords are listed
** by their top end, and those of one line are disjoint). Counts the touches
** per vertical chord in adj_first[j + 1], or with fill stores them at
** cursor adj_first[j]. */
static void sweep_touches(part *p, uint32_t *active, bool fill) {
    uint32_t next = 0;
    for (uint32_t x = 0; x <= p->w; x++)
        active[x] = QN_NONE;
    for (uint32_t y = 0; y <= p->h; y++) {
        for (; next < p->vc.n && p->vc.c[next].lo == y; next++)
            active[p->vc.c[next].line] = next;
        for (uint32_t i = p->row_first[y]; i < p->row_first[y + 1]; i++)
            for (uint32_t x = p->hc.c[i].lo; x <= p->hc.c[i].hi; x++) {
                uint32_t j = active[x];
                if (j == QN_NONE || p->vc.c[j].hi < y) continue;
                if (fill) p->adj[p->adj_first[j]++] = i;
                else p->adj_first[j + 1]++;
            }
    }
}

/* The touch graph in compressed rows: per vertical chord j, the horizontal
** chords it meets are adj[adj_first[j] .. adj_first[j + 1]). At most one
** touch per grid vertex, so fewer than QN_MAX_GRID_CELLS. */
static bool build_touches(part *p) {
    uint32_t nv = p->vc.n;
    uint32_t *active = qn__alloc(p->a, ((size_t)p->w + 1) * sizeof(uint32_t));
    p->adj_first = qn__calloc(p->a, (size_t)nv + 1, sizeof(uint32_t));
    bool ok = active && p->adj_first;
    if (ok) {
        sweep_touches(p, active, false);
        for (uint32_t j = 0; j < nv; j++)
            p->adj_first[j + 1] += p->adj_first[j];
        p->nadj = p->adj_first[nv];
        ok = p->nadj == 0 || (p->adj = qn__alloc(p->a, p->nadj * sizeof(uint32_t)));
        if (!ok) p->nadj = 0;
    }
    if (ok) {
        sweep_touches(p, active, true); /* each cursor ends at the next list's start */
        for (uint32_t j = nv; j > 0; j--)
            p->adj_first[j] = p->adj_first[j - 1];
        p->adj_first[0] = 0;
    }
    qn__free(p->a, active, ((size_t)p->w + 1) * sizeof(uint32_t));
    return ok;
}

/* ---- a large matching -------------------------------------------------- */

/* Left side: vertical chords (u); right side: horizontal chords (v). */
typedef struct matching {
    uint32_t *ml, *mr;  /* partner of u, of v; QN_NONE when free */
    uint32_t *mark;     /* per u: the search that last reached it (the cover: 0 once reached) */
    uint32_t *queue;    /* per u: scratch (greedy order, cover stack) */
    uint32_t *deg;      /* per u: its edges (the greedy start) */
    uint32_t *rdeg;     /* per v: its edges (the greedy start) */
} matching;

/* A quick start, after Karp and Sipser: left vertices by rising degree
** each take the free partner of lowest degree. */
static void match_greedy(const part *p, matching *m) {
    uint32_t nv = p->vc.n, nh = p->hc.n, *order = m->queue;
    for (uint32_t v = 0; v < nh; v++) m->rdeg[v] = 0;
    for (size_t e = 0; e < p->nadj; e++) m->rdeg[p->adj[e]]++;
    for (uint32_t u = 0; u < nv; u++) m->deg[u] = p->adj_first[u + 1] - p->adj_first[u];
    /* Order by degree, 1 to 8, then the rest as listed (a stable counting
    ** sort; no edge, no place). */
    uint32_t at[10] = {0}, n = 0;
    for (uint32_t u = 0; u < nv; u++)
        if (m->deg[u]) at[m->deg[u] < 9 ? m->deg[u] : 9]++, n++;
    for (uint32_t d = 9, sum = n; d >= 1; d--) sum -= at[d], at[d] = sum;
    for (uint32_t u = 0; u < nv; u++)
        if (m->deg[u]) order[at[m->deg[u] < 9 ? m->deg[u] : 9]++] = u;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t u = order[i], best = QN_NONE;
        for (uint32_t e = p->adj_first[u]; e < p->adj_first[u + 1]; e++) {
            uint32_t v = p->adj[e];
            if (m->mr[v] == QN_NONE && (best == QN_NONE || m->rdeg[v] < m->rdeg[best])) best = v;
        }
        if (best == QN_NONE) continue;
        m->ml[u] = best;
        m->mr[best] = u;
    }
}

/* Left vertices one search from a free one may reach: enough to find the
** short augmenting paths that remain after the greedy start. */
#define SEARCH_CAP 256u

/* A breadth-first search for an augmenting path from free left vertex
** root, over at most SEARCH_CAP left vertices (search number `stamp`
** marks them); flips the first path found. True when it augmented. */
static bool match_augment(const part *p, matching *m, uint32_t root, uint32_t stamp) {
    /* queued left vertices, the queue index each was reached from, and
    ** the right vertex it was reached through (its partner) */
    uint32_t q[SEARCH_CAP], from[SEARCH_CAP], via[SEARCH_CAP], tail = 1;
    q[0] = root;
    m->mark[root] = stamp;
    for (uint32_t head = 0; head < tail; head++) {
        uint32_t u = q[head];
        for (uint32_t e = p->adj_first[u]; e < p->adj_first[u + 1]; e++) {
            uint32_t v = p->adj[e], w = m->mr[v];
            if (w == QN_NONE) { /* v is free: flip the path from root to it */
                for (uint32_t i = head;; v = via[i], i = from[i]) {
                    m->ml[q[i]] = v;
                    m->mr[v] = q[i];
                    if (i == 0) return true;
                }
            }
            if (m->mark[w] == stamp || tail == SEARCH_CAP) continue;
            m->mark[w] = stamp;
            q[tail] = w, from[tail] = head, via[tail] = v, tail++;
        }
    }
    return false;
}

/* The greedy start, then one bounded search from each left vertex still
** free, in the chords' order (along the grid, so each search's few
** vertices are near the last one's in memory). Hopcroft-Karp phases, tried
** before, pass over the whole graph at a time, about a cache miss per edge
** on big maps: on a 4096 x 4096 map of random obstacles, four phases took
** about 2.5 times as long for a smaller matching (2,302,634 pairs against
** 2,303,589), and every bundled map got the same rectangles either way. */
static void match_run(const part *p, matching *m) {
    uint32_t nv = p->vc.n;
    match_greedy(p, m);
    for (uint32_t u = 0; u < nv; u++) m->mark[u] = 0;
    for (uint32_t u = 0, stamp = 0; u < nv; u++)
        if (m->ml[u] == QN_NONE && p->adj_first[u] < p->adj_first[u + 1])
            match_augment(p, m, u, ++stamp);
}

/* Koenig: vertices reachable from free left ones by alternating paths get
** mark 0 (left) and 1 in seen_r (right); the largest set of untouching
** chords is the reached left ones and the unreached right ones. On big
** maps nearly every vertex is reached, so the walk goes along the chords'
** order: left vertex x is expanded when the sweep comes to it, if reached
** by then; one reached behind the sweep goes on a stack and is expanded at
** once. Each reached vertex is expanded once, and the reads follow the
** grid (on a 4096 x 4096 map of random obstacles, a fifth of the time of a
** search from each free vertex in turn). */
static void match_cover(const part *p, matching *m, uint8_t *seen_r) {
    uint32_t nv = p->vc.n, top = 0;
    for (uint32_t u = 0; u < nv; u++) m->mark[u] = m->ml[u] == QN_NONE ? 0 : 1;
    for (uint32_t x = 0; x < nv; x++) {
        if (m->mark[x] != 0) continue;
        m->queue[top++] = x;
        while (top > 0) {
            uint32_t u = m->queue[--top];
            for (uint32_t e = p->adj_first[u]; e < p->adj_first[u + 1]; e++) {
                uint32_t v = p->adj[e], w = m->mr[v];
                seen_r[v] = 1;
                if (w != QN_NONE && m->mark[w] != 0) {
                    m->mark[w] = 0;
                    if (w < x) m->queue[top++] = w;
                }
            }
        }
    }
}

/* ---- cuts ----------------------------------------------------------------- */

/* Marks the edge from vertex (x, y) one step along (dx, dy) as cut. */
static void cut_edge(part *p, uint32_t x, uint32_t y, int dx, int dy) {
    if (dy == 0) p->cut[(size_t)y * p->w + (dx > 0 ? x : x - 1)] |= QN__CUT_TOP;
    else p->cut[(size_t)(dy > 0 ? y : y - 1) * p->w + x] |= QN__CUT_LEFT;
}

static void cut_chord(part *p, const chord *c, bool horizontal) {
    for (uint32_t i = c->lo; i < c->hi; i++)
        if (horizontal) cut_edge(p, i, c->line, 1, 0);
        else cut_edge(p, c->line, i, 0, 1);
}

/* Allocates the matching, runs it and cuts the largest set of untouching
** chords. */
static bool cut_chords(part *p) {
    uint32_t nv = p->vc.n, nh = p->hc.n;
    size_t bl = ((size_t)nv + 1) * sizeof(uint32_t), br = ((size_t)nh + 1) * sizeof(uint32_t);
    matching m = {qn__alloc(p->a, bl), qn__alloc(p->a, br), qn__alloc(p->a, bl),
                  qn__alloc(p->a, bl), qn__alloc(p->a, bl), qn__alloc(p->a, br)};
    uint8_t *seen_r = qn__calloc(p->a, (size_t)nh + 1, 1);
    bool ok = m.ml && m.mr && m.mark && m.queue && m.deg && m.rdeg && seen_r;
    if (ok) {
        for (uint32_t u = 0; u < nv; u++) m.ml[u] = QN_NONE;
        for (uint32_t v = 0; v < nh; v++) m.mr[v] = QN_NONE;
        match_run(p, &m);
        match_cover(p, &m, seen_r);
        for (uint32_t u = 0; u < nv; u++)
            if (m.mark[u] == 0) cut_chord(p, &p->vc.c[u], false);
        for (uint32_t v = 0; v < nh; v++)
            if (!seen_r[v]) cut_chord(p, &p->hc.c[v], true);
    }
    qn__free(p->a, m.ml, bl);
    qn__free(p->a, m.mr, br);
    qn__free(p->a, m.mark, bl);
    qn__free(p->a, m.queue, bl);
    qn__free(p->a, m.deg, bl);
    qn__free(p->a, m.rdeg, br);
    qn__free(p->a, seen_r, (size_t)nh + 1);
    return ok;
}

/* Steps vertex (*x, *y) along (dx, dy); true while the walk goes on past
** the vertex reached (inside region k, no cut at it). */
static bool step(const part *p, uint32_t *x, uint32_t *y, int dx, int dy, uint8_t k) {
    *x = (uint32_t)((int64_t)*x + dx);
    *y = (uint32_t)((int64_t)*y + dy);
    return open_vertex(p, *x, *y, k);
}

/* Settles reflex corner (x, y) of region k (cells mask m) unless a cut
** leaves it already: a cut along the shorter of its two ways (walked in
** step, the way along x on a tie) up to the first wall, other cost or cut. */
static void cut_ray(part *p, uint32_t x, uint32_t y, uint8_t k, unsigned m) {
    int dx = way_x(m), dy = way_y(m);
    if (hcut(p, y, dx > 0 ? x : x - 1) || vcut(p, x, dy > 0 ? y : y - 1)) return;
    uint32_t ax = x, ay = y, bx = x, by = y, n = 1;
    bool along_x;
    for (;; n++) {
        if ((along_x = !step(p, &ax, &ay, dx, 0, k))) break;
        if (!step(p, &bx, &by, 0, dy, k)) break;
    }
    for (uint32_t i = 0; i < n; i++)
        if (along_x) cut_edge(p, (uint32_t)((int64_t)x + (int64_t)i * dx), y, dx, 0);
        else cut_edge(p, x, (uint32_t)((int64_t)y + (int64_t)i * dy), 0, dy);
}

static void cut_rays(part *p) {
    for (uint32_t y = 1; y < p->h; y++)
        for (uint32_t x = next_mixed(p, y, 1); x < p->w; x = next_mixed(p, y, x + 1)) {
            uint8_t k;
            unsigned m;
            if (reflex(p, x, y, &k, &m)) cut_ray(p, x, y, k, m);
        }
}

static void part_free(part *p) {
    qn__free(p->a, p->row_first, ((size_t)p->h + 2) * sizeof(uint32_t));
    qn__free(p->a, p->adj_first, ((size_t)p->vc.n + 1) * sizeof(uint32_t));
    qn__free(p->a, p->adj, p->nadj * sizeof(uint32_t));
    chords_free(p->a, &p->hc); /* last: adj_first's size is vc.n */
    chords_free(p->a, &p->vc);
}

qn_status qn__grid_cuts(const qn_grid *g, const qn_allocator *a, uint8_t *cut, qn_error *err) {
    part p;
    memset(&p, 0, sizeof p);
    p.a = a;
    p.c = qn_grid_costs(g);
    p.w = qn_grid_width(g);
    p.h = qn_grid_height(g);
    p.cut = cut;
    bool ok = find_chords(&p) && index_rows(&p) && build_touches(&p) && cut_chords(&p);
    if (ok) cut_rays(&p);
    part_free(&p);
    return ok ? QN_OK : qn__fail(err, QN_E_NOMEM, QN_NONE, "out of memory (rectangle cuts)");
}
