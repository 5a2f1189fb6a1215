/* The look-ahead guard (feature/gorge_chase/lookahead.py) compiled: the same searches with the
 * same answers, the guard about 13 times cheaper than the Python big-int version (its play-outs
 * about 38 times: docs/BENCHMARKS.md 29), which stays the definition and what a package runs where
 * no C compiler is at hand (feature/native.py). tests/test_gorge_lookahead_native.py holds the two
 * equal.
 *
 * The window is read from the memory's own padded maps (load_window). Cell (row r, column c) is
 * bit r * 64 + c, as in the Python's big ints, the column at `width` a zero guard, so a row is one
 * 64-bit word and a search's level is a few shifts and ands a row. The game's numbers come in a
 * Rules struct: none lives here. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CELLS 4096
#define MAX_ROWS (MAX_CELLS / 64)
#define MAX_HORIZON 127
#define MAX_MONSTERS 4
#define MAX_DEPTH 64
#define LEVEL_SLOTS 256
#define MAX_BUDGET 2000
#define MAX_CANDIDATES 16
/* a step's states kept: each candidate's budget (plus a line of depth past it) per tied draw of its
 * first step; where the table fills, the guard declines (the Python answers) */
#define OUTCOME_SLOTS (1 << 16)
#define FLIGHT_SLOTS (1 << 10)

typedef struct { int cell, speed, prev, axis; } Monster;

/* The look-ahead's numbers (lookahead_compiled.Rules mirrors it field by field). */
typedef struct {
    int stride, width, height, far_limit, capture, spawn_delay, reach;
    int trigger, race_trigger, depth, safe;  /* the guard's: when the play-outs and the race run, how deep, what margin */
    int budget;  /* the states a candidate's search expands at most */
    int move[8][3];  /* per direction: the bit offset of one move, of its two straight sides */
    double back_step_penalty, same_axis_penalty;
} Rules;

typedef struct {  /* the game's numbers and this call's grids */
    int stride, cells, rows, far_limit, capture, spawn_delay;
    double back_step_penalty, same_axis_penalty;
    int move[8][3];  /* per direction: the bit offset of one move, of its two straight sides */
    uint8_t road[MAX_CELLS], ground[MAX_CELLS];
    uint64_t ground_rows[MAX_ROWS];  /* the ground a row a word (stride 64) */
} Layout;

/* The window's grids from the memory's padded maps (float32 [plane][z][x], plane 0: 1 on road seen,
 * plane 1: 1 where seen; `size` × `size` a plane), the window's top-left at (left, top), the map's
 * own cells at lo <= x, z < hi: road = road seen; ground = road, or never seen inside the map
 * (GorgeMemory.search_window's two grids, read where they lie instead of copied and packed). */
static int load_window(Layout *g, int width, int height, const float *maps, int size, int left, int top, int lo,
                       int hi) {
    if (g->cells > MAX_CELLS || g->stride != 64 || g->cells % 64 || width > 63) return -1;
    if (left < 0 || top < 0 || left + width > size || top + height > size) return -1;
    g->rows = g->cells / 64;
    const float *road_plane = maps, *seen_plane = maps + (size_t)size * (size_t)size;
    memset(g->road, 0, (size_t)g->cells);
    memset(g->ground, 0, (size_t)g->cells);
    for (int r = 0; r < g->rows; r++) {
        uint64_t word = 0;
        int z = top + r;
        if (r < height) {
            const float *road_row = road_plane + (size_t)z * (size_t)size + left;
            const float *seen_row = seen_plane + (size_t)z * (size_t)size + left;
            int z_inside = z >= lo && z < hi;
            uint8_t *road = g->road + (r << 6), *ground = g->ground + (r << 6);
            for (int c = 0; c < width; c++) {
                int x = left + c;
                int on_road = road_row[c] > 0.0f;
                int open = on_road || (seen_row[c] == 0.0f && z_inside && x >= lo && x < hi);
                road[c] = (uint8_t)on_road;
                ground[c] = (uint8_t)open;
                word |= (uint64_t)open << c;
            }
        }
        g->ground_rows[r] = word;
    }
    return 0;
}

static int inside(const Layout *g, int i) { return i >= 0 && i < g->cells; }

static int chebyshev(int stride, int a, int b) {
    int dr = abs(a / stride - b / stride), dc = abs(a % stride - b % stride);
    return dr > dc ? dr : dc;
}

/* --- path lengths from a cell, grown only as far as asked (lookahead.Levels) ------------------ */
/* Bit-parallel, one 64-bit word a row (so the layout's stride must be 64): a level is a few
 * shifts and ands per row of the frontier's rows, as the Python's big ints do for the whole grid. */

typedef struct {
    int source, levels, done, cap, lo, hi;  /* cap: the most levels kept (path lengths < cap); lo..hi: the frontier's rows */
    uint64_t frontier[MAX_ROWS], visited[MAX_ROWS];
    int16_t *dist;  /* per cell, valid where `visited` has it */
} Levels;

typedef struct {  /* the Levels of each cell searched from, grown as far as asked (lookahead.Search.levels) */
    Layout *g;
    Levels pool[LEVEL_SLOTS];
    int used, failed, cap;
    int16_t slot_of[MAX_CELLS];
} LevelCache;

static void levels_init(Levels *l, const Layout *g, int source, int cap) {
    int r = source >> 6;
    memset(l->frontier, 0, sizeof(uint64_t) * (size_t)g->rows);
    memset(l->visited, 0, sizeof(uint64_t) * (size_t)g->rows);
    l->cap = cap;
    l->source = source;
    l->frontier[r] = l->visited[r] = 1ULL << (source & 63);
    l->dist[source] = 0;
    l->lo = l->hi = r;
    l->levels = 1; l->done = 0;
}

static int levels_grow(Levels *l, const Layout *g) {
    if (l->done || l->levels >= l->cap) return 0;
    uint64_t next[MAX_ROWS];
    int lo = l->lo > 0 ? l->lo - 1 : 0, hi = l->hi < g->rows - 1 ? l->hi + 1 : g->rows - 1;
    int new_lo = g->rows, new_hi = -1;
    for (int r = lo; r <= hi; r++) {
        uint64_t f = l->frontier[r], up = r > 0 ? l->frontier[r - 1] : 0, down = r < g->rows - 1 ? l->frontier[r + 1] : 0;
        uint64_t n = (f << 1 | f >> 1 | up | down) & g->ground_rows[r] & ~l->visited[r];
        next[r] = n;
        if (n) { if (r < new_lo) new_lo = r; new_hi = r; }
    }
    if (new_hi < 0) { l->done = 1; return 0; }
    int16_t level = (int16_t)l->levels;
    for (int r = lo; r <= hi; r++) {
        uint64_t n = next[r];
        l->frontier[r] = n;
        l->visited[r] |= n;
        while (n) {
            l->dist[(r << 6) + __builtin_ctzll(n)] = level;
            n &= n - 1;
        }
    }
    l->lo = new_lo; l->hi = new_hi;
    l->levels++;
    return 1;
}

/* the path length of `cell` from the source (-1: not on the ground, or beyond cap - 1) */
static int levels_distance(Levels *l, const Layout *g, int cell) {
    if (!inside(g, cell) || !(g->ground[cell] || cell == l->source)) return -1;
    uint64_t bit = 1ULL << (cell & 63);
    while (!(l->visited[cell >> 6] & bit)) {
        if (!levels_grow(l, g)) return -1;
    }
    return l->dist[cell];
}

static Levels *levels_of(LevelCache *cache, int hero) {
    int slot = cache->slot_of[hero];
    if (slot >= 0) return &cache->pool[slot];
    if (cache->used == LEVEL_SLOTS) {  /* full: start again (a cache only, the answers are alike) */
        memset(cache->slot_of, 0xff, sizeof(cache->slot_of));
        cache->used = 0;
    }
    slot = cache->used;
    Levels *l = &cache->pool[slot];
    if (!l->dist) {
        l->dist = malloc(sizeof(int16_t) * MAX_CELLS);
        if (!l->dist) { cache->failed = 1; return NULL; }
    }
    cache->used++;
    cache->slot_of[hero] = (int16_t)slot;
    levels_init(l, cache->g, hero, cache->cap);
    return l;
}

static void levels_free(LevelCache *cache) {
    for (int k = 0; k < LEVEL_SLOTS; k++) free(cache->pool[k].dist);
}

/* --- the hero's moves ------------------------------------------------------------------------ */

static int walk(const Layout *g, int at, int direction, int cells) {
    int step = g->move[direction][0], side_x = g->move[direction][1], side_z = g->move[direction][2];
    for (int i = 0; i < cells; i++) {
        int to = at + step;
        if (!inside(g, to) || !g->road[to]) break;
        if (side_x && !((inside(g, at + side_x) && g->road[at + side_x]) ||
                        (inside(g, at + side_z) && g->road[at + side_z]))) break;
        at = to;
    }
    return at;
}

typedef struct { int at, cells, n, used, n_order; int sources[MAX_MONSTERS]; int order[8]; } Flight;

typedef struct {
    Layout *g;
    LevelCache levels;   /* from the hero's cells: the monsters' next cells (path lengths < far_limit) */
    LevelCache sources;  /* from the monsters' cells: the hero's flight (path lengths <= far_limit, as distances_at) */
    int step, interval, speedup, buff_left, depth, spawn_cell, budget, shared, expanded, overflow;
    int n_start;
    Monster start[MAX_MONSTERS];
    int trail[MAX_DEPTH + 1];  /* the line's hero cells, a step each */
    /* the steps lived at best from a state whose search ended within the budget
     * (lookahead.Search.outcomes); a slot is this step's where its generation is */
    uint32_t generation;
    uint32_t slot_generation[OUTCOME_SLOTS];
    uint64_t keys[OUTCOME_SLOTS];
    int lived[OUTCOME_SLOTS];
    Monster states[OUTCOME_SLOTS * MAX_MONSTERS];
    int state_n[OUTCOME_SLOTS], state_t[OUTCOME_SLOTS], state_hero[OUTCOME_SLOTS];
    /* the hero's moves from a cell in order, per (cell, cells a move, the monsters' cells) (lookahead.Search.flights) */
    Flight flights[FLIGHT_SLOTS];
} Search;

/* the flight's key: the cell, the move's length and the monsters' cells as a set (sorted, once each) */
static void flight_of(Flight *f, int at, int cells, const Monster *monsters, int n) {
    f->at = at; f->cells = cells; f->n = 0;
    for (int m = 0; m < n; m++) {
        int c = monsters[m].cell, k = f->n, dup = 0;
        for (int j = 0; j < f->n; j++) dup |= f->sources[j] == c;
        if (dup) continue;
        while (k > 0 && f->sources[k - 1] > c) { f->sources[k] = f->sources[k - 1]; k--; }
        f->sources[k] = c;
        f->n++;
    }
}

static int order_moves(Search *s, int at, int cells, const Monster *monsters, int n, int *order);

/* lookahead.Search.moves: the distinct landings of a move from `at` into `order`, the flight from
 * the nearest monster first (kept per key in s->flights); returns their count, 0 out of memory */
static int moves_from_cell(Search *s, int at, int cells, const Monster *monsters, int n, int *order) {
    Flight key;
    flight_of(&key, at, cells, monsters, n);
    uint32_t h = (uint32_t)at * 2654435761u ^ (uint32_t)cells * 40503u;
    for (int j = 0; j < key.n; j++) h = (h ^ (uint32_t)key.sources[j]) * 16777619u;
    int slot = (int)(h >> 20) & (FLIGHT_SLOTS - 1);
    for (int probe = 0; probe < 64; probe++) {
        Flight *f = &s->flights[slot];
        if (!f->used) {
            *f = key;
            f->n_order = order_moves(s, at, cells, monsters, n, f->order);
            f->used = f->n_order > 0;
            memcpy(order, f->order, sizeof(int) * (size_t)f->n_order);
            return f->n_order;
        }
        if (f->at == at && f->cells == cells && f->n == key.n &&
            !memcmp(f->sources, key.sources, sizeof(int) * (size_t)key.n)) {
            memcpy(order, f->order, sizeof(int) * (size_t)f->n_order);
            return f->n_order;
        }
        slot = (slot + 1) & (FLIGHT_SLOTS - 1);
    }
    return order_moves(s, at, cells, monsters, n, order);  /* a crowded table: ordered again, the answer alike */
}

static int order_moves(Search *s, int at, int cells, const Monster *monsters, int n, int *order) {
    int landings[8], n_landings = 0;
    for (int d = 0; d < 8; d++) {
        int cell = walk(s->g, at, d, cells), dup = 0;
        for (int k = 0; k < n_landings; k++) dup |= landings[k] == cell;
        if (!dup) landings[n_landings++] = cell;
    }
    /* the path length from the nearest monster (lookahead.distances_at from all of them at once:
     * a shortest path from the set starts at its last monster, so the least of each one's) */
    int distance[8];
    for (int k = 0; k < n_landings; k++) distance[k] = s->g->far_limit + 1;
    for (int m = 0; m < n; m++) {
        Levels *from = levels_of(&s->sources, monsters[m].cell);
        if (!from) return 0;
        for (int k = 0; k < n_landings; k++) {
            int d = levels_distance(from, s->g, landings[k]);
            if (d >= 0 && d < distance[k]) distance[k] = d;
        }
    }
    /* the farthest first; then the shortest move; then the larger index (insertion sort, 8 at most) */
    for (int k = 0; k < n_landings; k++) {
        int cell = landings[k], dist = distance[k], j = k;
        while (j > 0) {
            int a = order[j - 1], da = distance[j - 1];
            int before = da != dist ? da > dist : abs(a - at) != abs(cell - at) ? abs(a - at) < abs(cell - at) : a > cell;
            if (before) break;
            order[j] = a; distance[j] = da;
            j--;
        }
        order[j] = cell; distance[j] = dist;
    }
    return n_landings;
}

/* one monster's way through its sub-steps (lookahead.Search.every_move's ways) */
typedef struct { int cell, prev, axis; } Way;

/* one outcome of the monsters' moves, with the cells held (a set, as the Python's) */
typedef struct { Monster monsters[MAX_MONSTERS]; int held[MAX_MONSTERS], n_held; } TieOutcome;

/* lookahead.Search._tied_steps: the ways one sub-step on from `way` into out[] (each neighbour of
 * the least score, in the neighbours' order; the way itself where none is open); returns the count.
 * Inlined: move_monsters calls it on every sub-step of every play-out (a call cost it 9 % more) */
static inline __attribute__((always_inline)) int tied_steps(const Layout *g, Levels *levels, const int *held,
                                                            int n_held, Way way, Way *out) {
    const int orthogonal[4][2] = {{1, 0}, {-1, 0}, {g->stride, 1}, {-g->stride, 1}};
    double least = 0.0;
    int count = 0;
    for (int o = 0; o < 4; o++) {
        int nb = way.cell + orthogonal[o][0], ax = orthogonal[o][1], taken = 0;
        if (nb < 0) continue;
        for (int k = 0; k < n_held; k++) taken |= held[k] == nb;
        if (taken) continue;
        int d = levels_distance(levels, g, nb);
        if (d < 0) continue;
        double score = (double)d + (nb == way.prev ? g->back_step_penalty : 0.0) +
                       (ax == way.axis ? g->same_axis_penalty : 0.0);
        if (count && score - least > 1e-9) continue;  /* scores differ by 0 or by a whole penalty */
        if (!count || least - score > 1e-9) { least = score; count = 0; }
        out[count].cell = nb; out[count].prev = way.cell; out[count].axis = ax;
        count++;
    }
    if (!count) { out[0] = way; return 1; }
    return count;
}

/* lookahead.Search._move_monsters: each monster's `speed` sub-steps by its rule (in place); of
 * exact ties, which the env draws at random, the way nearer the hero (the first of those) */
static void move_monsters(Search *s, Monster *monsters, int n, int hero) {
    const Layout *g = s->g;
    Levels *levels = levels_of(&s->levels, hero);
    if (!levels) return;  /* out of memory: lookahead_guard answers -1 */
    int held[MAX_MONSTERS], n_held = 0;  /* a set of cells, as the Python one */
    for (int m = 0; m < n; m++) {
        int dup = 0;
        for (int k = 0; k < n_held; k++) dup |= held[k] == monsters[m].cell;
        if (!dup) held[n_held++] = monsters[m].cell;
    }
    for (int m = 0; m < n; m++) {
        Way way = {monsters[m].cell, monsters[m].prev, monsters[m].axis};
        for (int k = 0; k < n_held; k++) {
            if (held[k] == way.cell) { held[k] = held[--n_held]; break; }
        }
        for (int sub = 0; sub < monsters[m].speed; sub++) {
            Way steps[4];
            int count = tied_steps(g, levels, held, n_held, way, steps), pick = 0;
            if (count > 1) {
                int nearest = chebyshev(g->stride, steps[0].cell, hero);
                for (int k = 1; k < count; k++) {
                    int near = chebyshev(g->stride, steps[k].cell, hero);
                    if (near < nearest) { nearest = near; pick = k; }
                }
            }
            way = steps[pick];
        }
        int dup = 0;
        for (int k = 0; k < n_held; k++) dup |= held[k] == way.cell;
        if (!dup) held[n_held++] = way.cell;
        monsters[m].cell = way.cell; monsters[m].prev = way.prev; monsters[m].axis = way.axis;
    }
}

static int caught(const Layout *g, int hero, const Monster *monsters, int n) {
    int hr = hero / g->stride, hc = hero % g->stride;
    for (int m = 0; m < n; m++) {
        if (abs(monsters[m].cell / g->stride - hr) <= g->capture && abs(monsters[m].cell % g->stride - hc) <= g->capture)
            return 1;
    }
    return 0;
}

static uint64_t state_hash(int t, int hero, const Monster *monsters, int n) {
    uint64_t h = 1469598103934665603ULL;
    int values[3 + 4 * MAX_MONSTERS], k = 0;
    values[k++] = t; values[k++] = hero; values[k++] = n;
    for (int m = 0; m < n; m++) {
        values[k++] = monsters[m].cell; values[k++] = monsters[m].speed;
        values[k++] = monsters[m].prev; values[k++] = monsters[m].axis;
    }
    for (int i = 0; i < k; i++) { h ^= (uint64_t)(uint32_t)values[i]; h *= 1099511628211ULL; }
    return h | 1;  /* 0 marks an empty slot */
}

static int same_state(const Search *s, int slot, int t, int hero, const Monster *monsters, int n) {
    if (s->state_t[slot] != t || s->state_hero[slot] != hero || s->state_n[slot] != n) return 0;
    const Monster *kept = &s->states[(size_t)slot * MAX_MONSTERS];
    for (int m = 0; m < n; m++) {
        if (kept[m].cell != monsters[m].cell || kept[m].speed != monsters[m].speed || kept[m].prev != monsters[m].prev ||
            kept[m].axis != monsters[m].axis) return 0;
    }
    return 1;
}

/* the slot holding this state, or the free slot where it would go (-1: the table is full) */
static int outcome_slot(const Search *s, uint64_t key, int t, int hero, const Monster *monsters, int n) {
    int slot = (int)(key & (OUTCOME_SLOTS - 1));
    for (int probe = 0; probe < OUTCOME_SLOTS; probe++) {
        if (s->slot_generation[slot] != s->generation) return slot;
        if (s->keys[slot] == key && same_state(s, slot, t, hero, monsters, n)) return slot;
        slot = (slot + 1) & (OUTCOME_SLOTS - 1);
    }
    return -1;
}

static int after_moves(Search *s, int t, int hero, Monster *monsters, int n, int *exact);

/* lookahead.Search._expand: the steps lived at best (*exact: whether that is exact) for the hero
 * landing on `hero` at step t of the play-out, the monsters where they stood before the step */
static int expand(Search *s, int t, int hero, const Monster *before, int n, int *exact) {
    Monster monsters[MAX_MONSTERS];
    memcpy(monsters, before, sizeof(Monster) * (size_t)n);
    s->trail[t] = hero;
    move_monsters(s, monsters, n, hero);
    return after_moves(s, t, hero, monsters, n, exact);
}

/* lookahead.Search._after_moves: expand's answer from the monsters' moves of step t on */
static int after_moves(Search *s, int t, int hero, Monster *monsters, int n, int *exact) {
    const Layout *g = s->g;
    int step = s->step + t;
    if (step == s->interval && s->interval > s->step && n < MAX_MONSTERS) {  /* monster 2 was still to come */
        int back = step - g->spawn_delay, spawn;
        if (back > s->step) spawn = s->trail[back - s->step];
        else spawn = s->spawn_cell >= 0 ? s->spawn_cell : hero;
        monsters[n].cell = spawn; monsters[n].speed = 1 + (step > s->speedup);
        monsters[n].prev = -1; monsters[n].axis = -1;
        n++;
    }
    if (step == s->speedup && s->speedup > s->step) {
        for (int m = 0; m < n; m++) monsters[m].speed++;
    }
    *exact = 1;
    if (caught(g, hero, monsters, n)) return t - 1;
    if (t == s->depth) return s->depth;
    uint64_t key = 0;
    int slot;
    if (s->shared) {
        key = state_hash(t, hero, monsters, n);
        slot = outcome_slot(s, key, t, hero, monsters, n);
        if (slot >= 0 && s->slot_generation[slot] == s->generation) return s->lived[slot];
    }
    s->expanded++;
    int best = t, whole = 1, boosted = s->buff_left - t > 0, order[8];
    int n_order = moves_from_cell(s, hero, boosted ? 2 : 1, monsters, n, order);
    for (int k = 0; k < n_order; k++) {
        int child_exact, lived = expand(s, t + 1, order[k], monsters, n, &child_exact);
        if (lived > best) best = lived;
        whole = whole && child_exact;
        if (best == s->depth) { whole = 1; break; }
        if (s->expanded > s->budget) { whole = whole && k == n_order - 1; break; }
    }
    *exact = whole;
    if (s->shared && whole) slot = outcome_slot(s, key, t, hero, monsters, n);  /* the lines below took slots too */
    if (s->shared && whole && slot < 0) s->overflow = 1;  /* the Python would keep it: decline */
    if (s->shared && whole && slot >= 0) {
        s->slot_generation[slot] = s->generation;
        s->keys[slot] = key; s->lived[slot] = best;
        s->state_t[slot] = t; s->state_hero[slot] = hero; s->state_n[slot] = n;
        memcpy(&s->states[(size_t)slot * MAX_MONSTERS], monsters, sizeof(Monster) * (size_t)n);
    }
    return best;
}

#define MAX_WAYS 64
#define MAX_TIE_OUTCOMES 64

/* lookahead.Search.every_move into out[]: the monsters' moves towards `hero` once for each way
 * the env may draw their exact ties, in the Python's order, each outcome once; returns the count,
 * -1 past this file's limits (or out of memory) */
static int every_move(Search *s, const Monster *monsters, int n, int hero, TieOutcome *out) {
    const Layout *g = s->g;
    Levels *levels = levels_of(&s->levels, hero);
    if (!levels) return -1;
    static __thread TieOutcome a[MAX_TIE_OUTCOMES], b[MAX_TIE_OUTCOMES];
    TieOutcome *outcomes = a, *grown = b;
    int n_outcomes = 1;
    memcpy(outcomes[0].monsters, monsters, sizeof(Monster) * (size_t)n);
    outcomes[0].n_held = 0;
    for (int m = 0; m < n; m++) {
        int dup = 0;
        for (int k = 0; k < outcomes[0].n_held; k++) dup |= outcomes[0].held[k] == monsters[m].cell;
        if (!dup) outcomes[0].held[outcomes[0].n_held++] = monsters[m].cell;
    }
    for (int i = 0; i < n; i++) {
        int n_grown = 0;
        for (int o = 0; o < n_outcomes; o++) {
            TieOutcome *done = &outcomes[o];
            Monster me = done->monsters[i];
            int held[MAX_MONSTERS], n_held = 0;
            for (int k = 0; k < done->n_held; k++) if (done->held[k] != me.cell) held[n_held++] = done->held[k];
            Way ways[MAX_WAYS], next[MAX_WAYS];
            int n_ways = 1;
            ways[0].cell = me.cell; ways[0].prev = me.prev; ways[0].axis = me.axis;
            for (int sub = 0; sub < me.speed; sub++) {
                int n_next = 0;
                for (int w = 0; w < n_ways; w++) {
                    Way steps[4];
                    int c = tied_steps(g, levels, held, n_held, ways[w], steps);
                    if (n_next + c > MAX_WAYS) return -1;
                    memcpy(&next[n_next], steps, sizeof(Way) * (size_t)c);
                    n_next += c;
                }
                memcpy(ways, next, sizeof(Way) * (size_t)n_next);
                n_ways = n_next;
            }
            for (int w = 0; w < n_ways; w++) {
                if (n_grown == MAX_TIE_OUTCOMES) return -1;
                TieOutcome *to = &grown[n_grown++];
                memcpy(to->monsters, done->monsters, sizeof(Monster) * (size_t)n);
                to->monsters[i].cell = ways[w].cell; to->monsters[i].prev = ways[w].prev;
                to->monsters[i].axis = ways[w].axis;
                memcpy(to->held, held, sizeof(int) * (size_t)n_held);
                to->n_held = n_held;
                int dup = 0;
                for (int k = 0; k < n_held; k++) dup |= held[k] == ways[w].cell;
                if (!dup) to->held[to->n_held++] = ways[w].cell;
            }
        }
        TieOutcome *swap = outcomes; outcomes = grown; grown = swap;
        n_outcomes = n_grown;
    }
    int n_out = 0;
    for (int o = 0; o < n_outcomes; o++) {  /* each outcome once, the first kept */
        int seen = 0;
        for (int k = 0; k < n_out && !seen; k++)
            seen = !memcmp(out[k].monsters, outcomes[o].monsters, sizeof(Monster) * (size_t)n);
        if (!seen) out[n_out++] = outcomes[o];
    }
    return n_out;
}

/* lookahead.Search.survives: steps (up to depth) the hero can live after landing on `first`,
 * whichever of the monsters' tied moves the env draws this step; -1 past this file's limits */
static int survives(Search *s, int first) {
    static __thread TieOutcome outcomes[MAX_TIE_OUTCOMES];
    int n_outcomes = every_move(s, s->start, s->n_start, first, outcomes);
    if (n_outcomes < 0) return -1;
    int lived = s->depth;
    s->trail[1] = first;
    for (int o = 0; o < n_outcomes; o++) {
        int exact;
        Monster monsters[MAX_MONSTERS];
        memcpy(monsters, outcomes[o].monsters, sizeof(Monster) * (size_t)s->n_start);
        s->expanded = 0;
        int answer = after_moves(s, 1, first, monsters, s->n_start, &exact);
        if (answer < lived) lived = answer;
        if (lived == 0) break;
    }
    return lived;
}

static void set_layout(Layout *g, const Rules *rules) {
    g->stride = rules->stride; g->cells = rules->height * rules->stride; g->far_limit = rules->far_limit;
    g->capture = rules->capture; g->spawn_delay = rules->spawn_delay;
    g->back_step_penalty = rules->back_step_penalty; g->same_axis_penalty = rules->same_axis_penalty;
    memcpy(g->move, rules->move, sizeof(g->move));
}

typedef struct {  /* what the calls of one thread reuse: no allocation, no fresh pages per call */
    Layout layout;
    Search search;
    uint64_t safe[MAX_HORIZON + 1][MAX_ROWS];  /* the race's grids (race_prepare) */
    int horizon, reach, width;
} Workspace;

/* A workspace for one thread's calls (NULL: out of memory); lookahead_workspace_free gives it back. */
void *lookahead_workspace_new(void) { return calloc(1, sizeof(Workspace)); }

void lookahead_workspace_free(void *workspace) {
    Workspace *w = workspace;
    if (!w) return;
    levels_free(&w->search.levels);
    levels_free(&w->search.sources);
    free(w);
}

static void cache_reset(LevelCache *cache, Layout *g, int cap) {
    cache->g = g; cache->cap = cap; cache->used = 0; cache->failed = 0;
    memset(cache->slot_of, 0xff, sizeof(cache->slot_of));
}

/* the play-outs' state for this step (lookahead.Search.__init__); -1 where beyond this file's limits */
static int search_prepare(Workspace *w, const int *monsters, int n_monsters, int step, int interval, int speedup,
                          int buff_left, int spawn_cell, int depth, int w_budget) {
    Layout *g = &w->layout;
    Search *s = &w->search;
    if (n_monsters >= MAX_MONSTERS || depth > MAX_DEPTH || depth < 1) return -1;
    s->g = g;
    cache_reset(&s->levels, g, g->far_limit);
    cache_reset(&s->sources, g, g->far_limit + 1);
    if (++s->generation == 0) {  /* wrapped: every slot's generation is stale again */
        memset(s->slot_generation, 0, sizeof(s->slot_generation));
        s->generation = 1;
    }
    memset(s->flights, 0, sizeof(s->flights));
    for (int m = 0; m < n_monsters; m++) {
        if (!inside(g, monsters[2 * m])) return -1;
        s->start[m].cell = monsters[2 * m]; s->start[m].speed = monsters[2 * m + 1];
        s->start[m].prev = -1; s->start[m].axis = -1;
    }
    s->n_start = n_monsters;
    s->step = step; s->interval = interval; s->speedup = speedup; s->buff_left = buff_left;
    s->depth = depth; s->spawn_cell = spawn_cell;
    s->budget = w_budget;
    s->overflow = 0;
    s->shared = !(step < interval && interval <= step + depth);
    return 0;
}

/* lookahead.safe_sets into w->safe: [k] = the ground (w->layout.ground_rows) no threat reaches within
 * k steps, a threat ((cell, speed, head start)) reaching the union of its levels up to
 * reach + head + k * speed. Bit-parallel a row a word, as the Python's big ints (stride 64). */
static int race_prepare(Workspace *w, const int *threats, int n_threats, int horizon) {
    const Layout *g = &w->layout;
    const uint64_t *ground = g->ground_rows;
    int rows = g->rows, reach = w->reach;
    uint64_t (*safe)[MAX_ROWS] = w->safe;
    uint64_t frontier[MAX_ROWS + 2], seen[MAX_ROWS];
    if (horizon < 1 || horizon > MAX_HORIZON) return -1;
    for (int k = 0; k <= horizon; k++) memset(safe[k], 0, sizeof(uint64_t) * (size_t)rows);  /* reached, for now */
    for (int t = 0; t < n_threats; t++) {
        int source = threats[3 * t], speed = threats[3 * t + 1], head = threats[3 * t + 2];
        if (source < 0 || source >= rows * 64 || speed < 1 || head < 0) return -1;
        memset(frontier, 0, sizeof(frontier));
        memset(seen, 0, sizeof(uint64_t) * (size_t)rows);
        uint64_t *f = frontier + 1;  /* f[-1] and f[rows] stay zero */
        int r0 = source >> 6, lo = r0, hi = r0, k = 0, level = 0;
        f[r0] = seen[r0] = 1ULL << (source & 63);
        for (;;) {
            while (k <= horizon && reach + head + k * speed <= level) {  /* the levels so far reach step k's */
                for (int r = 0; r < rows; r++) safe[k][r] |= seen[r];
                k++;
            }
            if (k > horizon) break;
            uint64_t next[MAX_ROWS];
            int nlo = rows, nhi = -1, a = lo > 0 ? lo - 1 : 0, b = hi < rows - 1 ? hi + 1 : rows - 1;
            for (int r = a; r <= b; r++) {
                uint64_t n = (f[r] << 1 | f[r] >> 1 | f[r - 1] | f[r + 1]) & ground[r] & ~seen[r];
                next[r] = n;
                if (n) { if (r < nlo) nlo = r; nhi = r; }
            }
            for (int r = a; r <= b; r++) { f[r] = next[r]; seen[r] |= next[r]; }
            level++;
            if (nhi < 0) {  /* the search ends: every later step reaches what it reached */
                for (; k <= horizon; k++)
                    for (int r = 0; r < rows; r++) safe[k][r] |= seen[r];
                break;
            }
            lo = nlo; hi = nhi;
        }
    }
    for (int k = 0; k <= horizon; k++)
        for (int r = 0; r < rows; r++) safe[k][r] = ground[r] & ~safe[k][r];
    w->horizon = horizon;
    return 0;
}

/* lookahead.margin: the steps the hero can stay out of reach from `landing` (race_prepare first) */
static int race_margin(Workspace *w, int landing) {
    const Layout *g = &w->layout;
    const uint64_t *ground = g->ground_rows;
    uint64_t (*safe)[MAX_ROWS] = w->safe;
    int rows = g->rows, horizon = w->horizon, width = w->width;
    uint64_t frontier[MAX_ROWS + 2], unvisited[MAX_ROWS], refuge[MAX_ROWS], across[MAX_ROWS + 2], along[MAX_ROWS + 2];
    uint64_t edge_row = 1ULL | 1ULL << (width - 1), full_row = (1ULL << width) - 1;
    int r0 = landing >> 6;
    uint64_t bit = 1ULL << (landing & 63);
    if (!(safe[1][r0] & bit)) return 0;
    if (safe[horizon][r0] & bit) return horizon;
    memset(frontier, 0, sizeof(frontier));
    memset(across, 0, sizeof(across));
    memset(along, 0, sizeof(along));
    memset(refuge, 0, sizeof(uint64_t) * (size_t)rows);
    memcpy(unvisited, ground, sizeof(uint64_t) * (size_t)rows);
    uint64_t *f = frontier + 1, *ac = across + 1, *al = along + 1;
    f[r0] = refuge[r0] = bit;
    unvisited[r0] &= ~bit;
    int lo = r0, hi = r0;
    for (int h = 2; h <= horizon; h++) {
        int a = lo > 0 ? lo - 1 : 0, b = hi < rows - 1 ? hi + 1 : rows - 1;
        for (int r = a; r <= b; r++) {  /* bitgrid.moves_from: a diagonal through an open straight side */
            ac[r] = (f[r] << 1 | f[r] >> 1) & ground[r];
            al[r] = (f[r - 1] | f[r + 1]) & ground[r];
        }
        uint64_t next[MAX_ROWS];
        int nlo = rows, nhi = -1;
        for (int r = a; r <= b; r++) {
            uint64_t n = (ac[r] | al[r] | ac[r - 1] | ac[r + 1] | al[r] << 1 | al[r] >> 1) & unvisited[r] & safe[h][r];
            next[r] = n;
            if (n) { if (r < nlo) nlo = r; nhi = r; }
        }
        for (int r = a; r <= b; r++) { ac[r] = al[r] = 0; f[r] = next[r]; }
        if (nhi < 0) break;
        for (int r = nlo; r <= nhi; r++) {
            unvisited[r] &= ~next[r];
            refuge[r] |= next[r];
            /* on the window's edge, or never threatened within the horizon: the margin is all of it */
            if (next[r] & ((r == 0 || r == rows - 1) ? full_row : edge_row)) return horizon;
            if (next[r] & safe[horizon][r]) return horizon;
        }
        lo = nlo; hi = nhi;
    }
    for (int k = horizon; k > 0; k--)  /* the latest step some refuge cell is still safe at */
        for (int r = 0; r < rows; r++)
            if (refuge[r] & safe[k][r]) return k;
    return 0;
}

static int rules_fit(const Rules *rules) {
    return rules->stride == 64 && rules->width <= 63 && rules->height <= MAX_ROWS && rules->budget >= 0 &&
           rules->budget <= MAX_BUDGET;
}

/* lookahead.distances_at(ground | source, source, {target}, limit)[target]: the path length from
 * `source` to `target` over the ground, limit + 1 beyond the limit */
static int path_length(const Layout *g, int source, int target, int limit) {
    uint64_t frontier[MAX_ROWS + 2], seen[MAX_ROWS];
    memset(frontier, 0, sizeof(frontier));
    memset(seen, 0, sizeof(uint64_t) * (size_t)g->rows);
    uint64_t *f = frontier + 1, want = 1ULL << (target & 63);
    int r0 = source >> 6, lo = r0, hi = r0, rt = target >> 6;
    f[r0] = seen[r0] = 1ULL << (source & 63);
    for (int level = 0; level <= limit; level++) {
        if (f[rt] & want) return level;
        uint64_t next[MAX_ROWS];
        int nlo = g->rows, nhi = -1, a = lo > 0 ? lo - 1 : 0, b = hi < g->rows - 1 ? hi + 1 : g->rows - 1;
        for (int r = a; r <= b; r++) {
            uint64_t n = (f[r] << 1 | f[r] >> 1 | f[r - 1] | f[r + 1]) & g->ground_rows[r] & ~seen[r];
            next[r] = n;
            if (n) { if (r < nlo) nlo = r; nhi = r; }
        }
        for (int r = a; r <= b; r++) { f[r] = next[r]; seen[r] |= next[r]; }
        if (nhi < 0) break;
        lo = nlo; hi = nhi;
    }
    return limit + 1;
}

/* lookahead.guarded from its grids on: the window's road and ground from the memory's padded maps
 * (load_window: `maps`, `size`, the window's top-left `left`, `top`, the map inside lo..hi), with
 * the hero's cell `centre` added to both;
 * `known`: (cell, speed) of the monsters known now; `threats`: (cell, speed, head start) of those
 * and of those seen lately; `moves_open`: the 8 moves' flags; `flash_cells`: each flash's landing
 * (-1: closed). Returns 1 with keep[] (the 8 moves, then the flashes) filled, 0 where no monster is
 * near enough (the mask stays as it is), -1 where an input is beyond this file's limits. */
int lookahead_guard(void *workspace, const Rules *rules, const float *maps, int size, int left, int top, int lo,
                    int hi, int centre, const int *known, int n_known, const int *threats, int n_threats, int step,
                    int interval, int speedup, int buff_left, int spawn_cell, int max_step, int spawn_soon,
                    const int *moves_open, const int *flash_cells, int n_flashes, int *keep) {
    Workspace *w = workspace;
    if (!w || !rules_fit(rules) || n_known >= MAX_MONSTERS || n_flashes > 8 || n_threats > 2 * MAX_MONSTERS) return -1;
    if (8 + n_flashes > MAX_CANDIDATES) return -1;
    Layout *g = &w->layout;
    set_layout(g, rules);
    w->reach = rules->reach; w->width = rules->width;
    if (load_window(g, rules->width, rules->height, maps, size, left, top, lo, hi) != 0 || !inside(g, centre))
        return -1;
    g->road[centre] = g->ground[centre] = 1;
    g->ground_rows[centre >> 6] |= 1ULL << (centre & 63);
    int near = rules->race_trigger + 1;
    for (int t = 0; t < n_threats; t++) {
        int source = threats[3 * t], head = threats[3 * t + 2];
        if (!inside(g, source) || head < 0) return -1;
        int reach = path_length(g, source, centre, rules->race_trigger + head) - head;
        if (reach < near) near = reach;
    }
    if (near > rules->race_trigger && !spawn_soon) return 0;
    int landings[16], n_landings = 8 + n_flashes, step_cells = buff_left > 0 ? 2 : 1;
    for (int d = 0; d < 8; d++) landings[d] = moves_open[d] ? walk(g, centre, d, step_cells) : -1;
    for (int k = 0; k < n_flashes; k++) {
        if (flash_cells[k] >= 0 && !inside(g, flash_cells[k])) return -1;
        landings[8 + k] = flash_cells[k];
    }
    int options[16], lived[16], n_options = 0;
    for (int k = 0; k < n_landings; k++) {  /* the distinct landings */
        int dup = landings[k] < 0;
        for (int j = 0; j < n_options; j++) dup |= options[j] == landings[k];
        if (!dup) { options[n_options] = landings[k]; lived[n_options++] = 0; }
    }
    if (!n_options) return -1;
    if (near <= rules->trigger || spawn_soon) {
        int depth = max_step - step < rules->depth ? max_step - step : rules->depth;
        if (depth < 1) depth = 1;
        if (search_prepare(w, known, n_known, step, interval, speedup, buff_left, spawn_cell, depth, rules->budget) != 0) return -1;
        for (int j = 0; j < n_options; j++) {
            lived[j] = survives(&w->search, options[j]);
            if (lived[j] < 0 || w->search.overflow) return -1;
        }
        if (w->search.levels.failed || w->search.sources.failed) return -1;
    }
    int best = lived[0], room[16], enough = 0;
    for (int j = 1; j < n_options; j++) if (lived[j] > best) best = lived[j];
    if (race_prepare(w, threats, n_threats, rules->safe) != 0) return -1;
    for (int j = 0; j < n_options; j++) {
        room[j] = lived[j] == best ? race_margin(w, options[j]) : -1;
        if (room[j] > enough) enough = room[j];
    }
    if (enough > rules->safe) enough = rules->safe;
    for (int k = 0; k < n_landings; k++) {
        keep[k] = 0;
        for (int j = 0; j < n_options; j++)
            if (landings[k] >= 0 && options[j] == landings[k] && room[j] >= 0 && room[j] >= enough) keep[k] = 1;
    }
    return 1;
}
