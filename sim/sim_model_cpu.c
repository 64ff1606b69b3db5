/* sim_model_cpu.c - the CPU model engine: every model of README's "The model" (fields, walls,
 * sources, growth, species, the life cycle, predation), OpenMP parallel and bit-identical for
 * any thread count; the oracle of the CUDA model engine. Written for clarity over speed: each
 * phase is one pass over the agents or the cells, in the order of the README's list.
 *
 * Memory (sim_cpu_model_memory): per field its values (4 B/cell) and one spare for the sweeps
 * of every field (4 B/cell), capacity maps only where the capacity is not uniform (4 B/cell) and
 * source masks (1 B/cell); the occupancy (4 B/cell, walls marked in it: no wall map) and the
 * claims (8 B/cell); per thread a ring of 2r + 3 extended prefix rows of the scores (the sense
 * phase walks the grid in bands of rows, so no grid of prefix sums); per agent 44 B (its cell,
 * id, species, energy and age twice for the compaction, flags, the birth cell). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sim_alloc.h"
#include "sim_backend.h"
#include "sim_diffuse.h"
#include "sim_field_stats.h"
#include "sim_model.h"
#include "sim_model_rules.h"
#include "sim_rules.h"
#include "sim_stats.h"

typedef struct mcpu {
    sim_scenario sc;
    sim_model m;
    int threads;
    sim_state st;          /* fields, agents (in id order), maps */
    sim_state next;        /* the agents after a compaction; swapped with st's arrays */
    float *spare;          /* cells: the sweeps ping-pong with the field */
    int32_t *occ;          /* agent index per cell, SIM_OCC_EMPTY or SIM_OCC_WALL */
    uint64_t *claim;       /* cells: highest claim key, 0 none */
    int64_t *rings;        /* per thread: ring_k prefix rows of ring_stride (sense_band) */
    int ring_k;
    int64_t ring_stride;
    uint8_t *dead;         /* per agent */
    uint8_t *moved;        /* per agent: moved this step */
    int64_t *born;         /* per agent: the cell of its newborn, -1 none */
    double *colsum;        /* n_fields x width: each field's column sums */
    sim_scenario fsc;      /* sc with one field's parameters, for sim_diffuse_* */
} mcpu;

static void mcpu_destroy(void *p)
{
    mcpu *s = p;
    if (!s)
        return;
    sim_state_free(&s->st);
    sim_free(s->next.cell);
    sim_free(s->next.id);
    sim_free(s->next.species);
    sim_free(s->next.energy);
    sim_free(s->next.age);
    sim_free(s->spare);
    sim_free(s->occ);
    sim_free(s->claim);
    sim_free(s->rings);
    sim_free(s->dead);
    sim_free(s->moved);
    sim_free(s->born);
    sim_free(s->colsum);
    sim_free(s);
}

/* The bytes of one agent in every per-agent array of the engine: cell, id, species, energy and
 * age twice (the state and the compaction's copy), dead and moved flags, the birth cell. */
#define MCPU_AGENT_BYTES (2 * (4 + 4 + 1 + 4 + 4) + 1 + 1 + 8)

static int max_radius(const sim_model *m);

int sim_cpu_model_memory(const sim_scenario *sc, int threads, sim_mem *out)
{
    memset(out, 0, sizeof *out);
    sim_model m;
    if (sim_model_build(sc, &m, NULL) != SIM_OK)
        return SIM_EINVAL;
    const double cells = (double)m.width * (double)m.height;
    const int r = max_radius(&m);
    if (threads <= 0)
        threads = omp_get_max_threads();
    out->n_fields = m.n_fields;
    out->shared_per_cell = 4 /* occupancy, walls marked in it */ + 8 /* claims */;
    out->field_per_cell = 4 + 4.0 / m.n_fields; /* values, and one spare for every field */
    for (int f = 0; f < m.n_fields; f++)
        out->maps_per_cell += (m.field[f].growth > 0 && m.field[f].capacity_map ? 4 : 0) +
                              (m.field[f].sources ? 1 : 0);
    out->per_agent = MCPU_AGENT_BYTES;
    for (int s = 0; s < m.n_species; s++)
        if (m.species[s].life)
            out->life_attrs = 2;
    out->other = (size_t)threads * (size_t)(2 * r + 3) * (size_t)(m.width + 2 * r + 3) * 8 +
                 (size_t)m.n_fields * (size_t)m.width * sizeof(double); /* rings, column sums */
    const double n = (double)(m.agents > 16 ? m.agents : 16);
    out->total = (size_t)(cells * (out->shared_per_cell + out->field_per_cell * m.n_fields +
                                   out->maps_per_cell) +
                          n * out->per_agent) + out->other;
    return SIM_OK;
}

size_t sim_cpu_model_estimate_bytes(const sim_scenario *sc)
{
    sim_mem e;
    return sim_cpu_model_memory(sc, 0, &e) == SIM_OK ? e.total : 0;
}

static int max_radius(const sim_model *m)
{
    int r = 0;
    for (int s = 0; s < m->n_species; s++)
        if (m->species[s].radius > r)
            r = m->species[s].radius;
    return r;
}

/* Room for cap agents in every per-agent array (st's, next's and the scratch). */
static int reserve(mcpu *s, int64_t cap, sim_err *err)
{
    if (cap <= s->st.cap && s->dead)
        return SIM_OK;
    int64_t want = cap > 2 * s->st.cap ? cap : 2 * s->st.cap;
    if (want < 16)
        want = 16;
    size_t n = (size_t)want;
#define GROW(ptr, type)                                                                      \
    do {                                                                                     \
        void *q_ = sim_realloc((ptr), n * sizeof(type));                                     \
        if (!q_)                                                                             \
            return sim_err_set(err, SIM_ENOMEM, "cpu model engine: out of memory for %lld " \
                               "agents", (long long)want);                                   \
        (ptr) = q_;                                                                          \
    } while (0)
    GROW(s->st.cell, uint32_t);
    GROW(s->st.id, uint32_t);
    GROW(s->st.species, uint8_t);
    GROW(s->st.energy, float);
    GROW(s->st.age, int32_t);
    GROW(s->next.cell, uint32_t);
    GROW(s->next.id, uint32_t);
    GROW(s->next.species, uint8_t);
    GROW(s->next.energy, float);
    GROW(s->next.age, int32_t);
    GROW(s->dead, uint8_t);
    GROW(s->moved, uint8_t);
    GROW(s->born, int64_t);
#undef GROW
    s->st.cap = want;
    return SIM_OK;
}

/* The occupancy from the agents: at creation the walls come from the map (NULL: none), later
 * from the walls occ already marks (the engine keeps no wall map of its own: occ holds them). */
static void rebuild_occ(mcpu *s, int at_creation, const uint8_t *walls)
{
    const int64_t cells = s->st.cells;
    int32_t *occ = s->occ;
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t i = 0; i < cells; i++) {
        const int wall = at_creation ? walls && walls[i] : occ[i] == SIM_OCC_WALL;
        occ[i] = wall ? SIM_OCC_WALL : SIM_OCC_EMPTY;
    }
    for (int64_t a = 0; a < s->st.n; a++)
        occ[s->st.cell[a]] = (int32_t)a;
}

/* Whether cell i is a wall. */
static int is_wall(const mcpu *s, int64_t i)
{
    return s->occ[i] == SIM_OCC_WALL;
}

static int mcpu_create_state(const sim_scenario *sc, const sim_state *in, int threads,
                             void **out, sim_err *err)
{
    *out = NULL;
    mcpu *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_err_set(err, SIM_ENOMEM, "cpu model engine: out of memory");
    int rc = sim_model_build(sc, &s->m, err);
    if (rc != SIM_OK) {
        sim_free(s);
        return rc;
    }
    s->sc = *sc;
    s->fsc = *sc;
    s->threads = threads > 0 ? threads : omp_get_max_threads();
    const sim_model *m = &s->m;
    rc = sim_state_alloc(m, 0, &s->st, err);
    if (rc != SIM_OK) {
        sim_free(s);
        return rc;
    }
    s->st.cap = 0;
    sim_free(s->st.walls); /* occ marks the walls */
    s->st.walls = NULL;
    for (int f = 0; f < m->n_fields; f++)
        if (!m->field[f].capacity_map) { /* a uniform capacity needs no map */
            sim_free(s->st.capacity[f]);
            s->st.capacity[f] = NULL;
        }
    size_t cells = (size_t)s->st.cells;
    int r = max_radius(m);
    s->ring_k = 2 * r + 3;
    s->ring_stride = (int64_t)m->width + 2 * r + 3;
    size_t ring_len = (size_t)s->threads * (size_t)s->ring_k * (size_t)s->ring_stride;
    s->spare = sim_malloc_array(cells, sizeof *s->spare);
    s->occ = sim_malloc_array(cells, sizeof *s->occ);
    s->claim = sim_calloc(cells, sizeof *s->claim);
    s->rings = sim_malloc_array(ring_len, sizeof *s->rings);
    s->colsum = sim_malloc_array((size_t)m->n_fields * (size_t)m->width, sizeof *s->colsum);
    if (!s->spare || !s->occ || !s->claim || !s->rings || !s->colsum) {
        mcpu_destroy(s);
        return sim_err_set(err, SIM_ENOMEM, "cpu model engine: out of memory for a %dx%d world "
                           "(%zu bytes)", m->width, m->height, cells * 16 + ring_len * 8);
    }
    rc = reserve(s, in->n, err);
    if (rc != SIM_OK) {
        mcpu_destroy(s);
        return rc;
    }
    for (int f = 0; f < m->n_fields; f++) {
        memcpy(s->st.field[f], in->field[f], cells * sizeof(float));
        if (s->st.capacity[f])
            memcpy(s->st.capacity[f], in->capacity[f], cells * sizeof(float));
        if (s->st.sources[f])
            memcpy(s->st.sources[f], in->sources[f], cells);
    }
    size_t n = (size_t)in->n;
    s->st.n = in->n;
    s->st.next_id = in->next_id;
    if (n) {
        memcpy(s->st.cell, in->cell, n * sizeof *in->cell);
        memcpy(s->st.id, in->id, n * sizeof *in->id);
        memcpy(s->st.species, in->species, n);
        memcpy(s->st.energy, in->energy, n * sizeof *in->energy);
        memcpy(s->st.age, in->age, n * sizeof *in->age);
    }
    rebuild_occ(s, 1, in->walls);
    *out = s;
    return SIM_OK;
}

/* v + d for d in {-1, 0, 1}, wrapped onto [0, n). */
static int wrap1(int v, int n)
{
    return v < 0 ? v + n : v >= n ? v - n : v;
}

/* The cell of candidate c (0..8) of (x, y), or -1 outside a bounded grid. */
static int64_t cand_cell(const sim_model *m, int x, int y, int c)
{
    int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
    if (m->periodic) {
        cx = wrap1(cx, m->width);
        cy = wrap1(cy, m->height);
    } else if (cx < 0 || cx >= m->width || cy < 0 || cy >= m->height) {
        return -1;
    }
    return (int64_t)cy * m->width + cx;
}

/* The score of cell i for species sp: the weighted sum of its sense terms' fixed-point values
 * (walls 0). */
static int64_t cell_score(const mcpu *s, const sim_model_species *sp, int64_t i)
{
    int32_t o = s->occ[i];
    if (o == SIM_OCC_WALL)
        return 0;
    int64_t v = 0;
    for (int t = 0; t < sp->n_sense; t++) {
        int src = sp->sense[t].src;
        int64_t x;
        if (src >= SIM_SRC_OCC)
            x = o >= 0 && s->st.species[o] == src - SIM_SRC_OCC ? SIM_OCC_FIX : 0;
        else
            x = sim_fix(s->st.field[src][i]);
        v += (int64_t)sp->sense[t].weight * x;
    }
    return v;
}

/* Row y's extended prefix sums of species sp's scores: p[j] = the sum of the scores of row y over
 * x in [-r-1, j-r-2] (periodic rows wrap, bounded ones are 0 outside), j in [0, w + 2r + 3). */
static void build_row(const mcpu *s, const sim_model_species *sp, int y, int64_t *p)
{
    const sim_model *m = &s->m;
    const int w = m->width, r = sp->radius, len = w + 2 * r + 3;
    const int64_t row = (int64_t)y * w;
    int64_t acc = 0;
    p[0] = 0;
    for (int j = 0; j + 1 < len; j++) {
        int x = j - r - 1;
        int64_t v;
        if (x >= 0 && x < w)
            v = cell_score(s, sp, row + x);
        else if (m->periodic)
            v = cell_score(s, sp, row + ((x % w) + w) % w);
        else
            v = 0;
        acc += v;
        p[j + 1] = acc;
    }
}

/* The rows a band of the sense phase keeps: the prefix rows of the 2r + 3 grid rows that the
 * disks of one row's candidates touch, in a ring indexed by the unwrapped row (so a periodic
 * world smaller than the ring still works: two ring rows may hold the same grid row). */
typedef struct ring {
    int64_t *rows;
    int k;          /* rows in the ring: 2r + 3 */
    int64_t stride; /* int64s per ring row: width + 2 max radius + 3 */
} ring;

static const int64_t *ring_row(const ring *rg, int v)
{
    return rg->rows + (int64_t)(((v % rg->k) + rg->k) % rg->k) * rg->stride;
}

/* Builds the ring's row for the unwrapped row v (nothing for a row outside a bounded grid). */
static void ring_fill(const mcpu *s, const sim_model_species *sp, const ring *rg, int v)
{
    const sim_model *m = &s->m;
    const int h = m->height;
    if (m->periodic || (v >= 0 && v < h))
        build_row(s, sp, m->periodic ? ((v % h) + h) % h : v, (int64_t *)ring_row(rg, v));
}

/* The disk sum of radius r around column cx (in [0, w)) and unwrapped row vy, from the ring's
 * rows [vy - r, vy + r]; the rows of a disk outside a bounded grid count 0. */
static int64_t ring_disk_sum(const sim_model *m, const ring *rg, int r, int cx, int vy)
{
    int64_t sum = 0;
    for (int dy = -r; dy <= r; dy++) {
        const int v = vy + dy;
        if (!m->periodic && (v < 0 || v >= m->height))
            continue;
        const int hw = sim_disk_halfwidth(r, dy);
        const int64_t *p = ring_row(rg, v);
        sum += p[cx + hw + r + 2] - p[cx - hw + r + 1];
    }
    return sum;
}

/* The 9 candidate scores of an agent of species sp at (x, y), from the ring's rows
 * [y - r - 1, y + r + 1] (unwrapped). A candidate outside a bounded grid or on a wall is
 * SIM_SUM_INVALID; the rows of a disk outside a bounded grid count 0. */
static void ring_scores(const mcpu *s, const sim_model_species *sp, const ring *rg, int x,
                        int y, int64_t out[SIM_NCAND])
{
    const sim_model *m = &s->m;
    const int w = m->width, r = sp->radius;
    for (int c = 0; c < SIM_NCAND; c++) {
        int vx = x + sim_cand_dx(c), vy = y + sim_cand_dy(c);
        int64_t t = cand_cell(m, x, y, c);
        if (t < 0 || s->occ[t] == SIM_OCC_WALL) {
            out[c] = SIM_SUM_INVALID;
            continue;
        }
        out[c] = ring_disk_sum(m, rg, r, m->periodic ? wrap1(vx, w) : vx, vy);
    }
}

/* The disk sum of sp's scores of radius r around (cx, cy), cell by cell (the reads; the step
 * uses the prefix rows). Cells outside a bounded grid count 0. */
static int64_t direct_disk_sum(const mcpu *s, const sim_model_species *sp, int r, int cx,
                               int cy)
{
    const sim_model *m = &s->m;
    const int w = m->width, h = m->height;
    int64_t sum = 0;
    for (int dy = -r; dy <= r; dy++) {
        int y = cy + dy;
        if (m->periodic)
            y = ((y % h) + h) % h;
        else if (y < 0 || y >= h)
            continue;
        int hw = sim_disk_halfwidth(r, dy);
        for (int dx = -hw; dx <= hw; dx++) {
            int x = cx + dx;
            if (m->periodic)
                x = ((x % w) + w) % w;
            else if (x < 0 || x >= w)
                continue;
            sum += cell_score(s, sp, (int64_t)y * w + x);
        }
    }
    return sum;
}

/* The 9 candidate scores of an agent of species sp at (x, y), cell by cell (the reads). */
static void scores_at(const mcpu *s, const sim_model_species *sp, int x, int y,
                      int64_t out[SIM_NCAND])
{
    for (int c = 0; c < SIM_NCAND; c++) {
        int64_t t = cand_cell(&s->m, x, y, c);
        if (t < 0 || s->occ[t] == SIM_OCC_WALL) {
            out[c] = SIM_SUM_INVALID;
            continue;
        }
        out[c] = direct_disk_sum(s, sp, sp->radius, (int)(t % s->m.width),
                                 (int)(t / s->m.width));
    }
}

static void claim_max(uint64_t *slot, uint64_t key)
{
    uint64_t cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
    while (cur < key &&
           !__atomic_compare_exchange_n(slot, &cur, key, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Phases 1-2 for the agents of species sp_i on rows [y0, y1): the ring's prefix rows follow
 * the row being served (each grid row's prefix is built once per band, plus 2r + 2 rows of
 * halo), agents are visited in cell order, and each claims its target. Claims are an atomic
 * maximum, so neither the order nor the bands change a result. */
static void sense_band(mcpu *s, int sp_i, int64_t step, int y0, int y1, ring *rg)
{
    const sim_model *m = &s->m;
    const sim_model_species *sp = &m->species[sp_i];
    const int w = m->width, r = sp->radius;
    rg->k = 2 * r + 3;
    int next = y0 - r - 1; /* the next unwrapped row to build */
    for (int y = y0; y < y1; y++) {
        for (; next <= y + r + 1; next++)
            ring_fill(s, sp, rg, next);
        const int32_t *occ = s->occ + (int64_t)y * w;
        for (int x = 0; x < w; x++) {
            int32_t a = occ[x];
            if (a < 0 || s->st.species[a] != sp_i)
                continue;
            int64_t sums[SIM_NCAND];
            ring_scores(s, sp, rg, x, y, sums);
            sim_u32x4 rnd = sim_random(s->sc.seed, (uint64_t)step, s->st.id[a], SIM_RNG_STEP);
            int c = sim_decide(sums, rnd, sp->threshold);
            int64_t t = cand_cell(m, x, y, c);
            /* occ is written only after every claim: "empty at the start of the step" */
            if (t >= 0 && t != (int64_t)y * w + x && s->occ[t] == SIM_OCC_EMPTY)
                claim_max(&s->claim[t], sim_claim_key(rnd, (uint32_t)a));
        }
    }
}

/* Phases 1-3: sense and decide for every agent, species by species, in bands of rows (one per
 * thread, each with its own ring of prefix rows: no grid-sized scratch), claim, move. */
static void sense_move(mcpu *s, int64_t step)
{
    const sim_model *m = &s->m;
    const int h = m->height;
    const int64_t n = s->st.n;
#pragma omp parallel num_threads(s->threads)
    {
        const int nt = omp_get_num_threads(), t = omp_get_thread_num();
        ring rg = {s->rings + (int64_t)t * s->ring_k * s->ring_stride, 0, s->ring_stride};
        for (int sp_i = 0; sp_i < m->n_species; sp_i++) {
            /* bands of at least r + 1 rows, so that the halo stays under twice the band */
            int bands = h / (m->species[sp_i].radius + 1);
            bands = bands < 1 ? 1 : bands > nt ? nt : bands;
            if (t < bands)
                sense_band(s, sp_i, step, (int)((int64_t)h * t / bands),
                           (int)((int64_t)h * (t + 1) / bands), &rg);
        }
    }
    memset(s->moved, 0, (size_t)n);
    const int64_t cells = s->st.cells;
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t t = 0; t < cells; t++) {
        uint64_t k = s->claim[t];
        if (k) {
            uint32_t a = (uint32_t)k;
            s->occ[s->st.cell[a]] = SIM_OCC_EMPTY;
            s->occ[t] = (int32_t)a;
            s->st.cell[a] = (uint32_t)t;
            s->moved[a] = 1;
            s->claim[t] = 0;
        }
    }
}

/* Phase 4: predators choose a prey among their 8 neighbours and claim it; the highest key
 * eats. */
static void eat(mcpu *s, int64_t step)
{
    const sim_model *m = &s->m;
    const int w = m->width;
    const int64_t n = s->st.n, cells = s->st.cells;
    int any = 0;
    for (int i = 0; i < m->n_species; i++)
        any |= m->species[i].eats != 0;
    if (!any)
        return;
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t a = 0; a < n; a++) {
        uint32_t eats = m->species[s->st.species[a]].eats;
        if (!eats)
            continue;
        uint32_t cell = s->st.cell[a];
        int x = (int)(cell % (uint32_t)w), y = (int)(cell / (uint32_t)w);
        int64_t prey[8];
        uint32_t np = 0;
        for (int c = 1; c < SIM_NCAND; c++) {
            int64_t t = cand_cell(m, x, y, c);
            if (t < 0)
                continue;
            int32_t o = s->occ[t];
            if (o >= 0 && (eats >> s->st.species[o]) & 1u)
                prey[np++] = t;
        }
        if (!np)
            continue;
        sim_u32x4 r = sim_random(s->sc.seed, (uint64_t)step, s->st.id[a], SIM_RNG_EAT);
        claim_max(&s->claim[prey[sim_pick(r.v[0], np)]], sim_claim_key_word(r.v[1], (uint32_t)a));
    }
    /* An eaten agent dies; its eater gains (one meal at most: it claimed one cell). */
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t t = 0; t < cells; t++) {
        uint64_t k = s->claim[t];
        if (!k)
            continue;
        uint32_t eater = (uint32_t)k;
        int32_t prey = s->occ[t];
        s->dead[prey] = 1;
        s->st.energy[eater] = SIM_FADD(s->st.energy[eater],
                                       m->species[s->st.species[eater]].gain[s->st.species[prey]]);
        s->claim[t] = 0;
    }
    /* The cells of the eaten are free from here on. */
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t a = 0; a < n; a++)
        if (s->dead[a])
            s->occ[s->st.cell[a]] = SIM_OCC_EMPTY;
}

/* Phase 5: uptake, metabolism, age; death at energy <= 0 or at max_age. */
static void live(mcpu *s)
{
    const sim_model *m = &s->m;
    const int64_t n = s->st.n;
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t a = 0; a < n; a++) {
        const sim_model_species *sp = &m->species[s->st.species[a]];
        if (s->dead[a] || !sp->life)
            continue;
        float e = s->st.energy[a];
        if (sp->uptake_field >= 0) {
            float *t = &s->st.field[sp->uptake_field][s->st.cell[a]];
            float take = sim_uptake_take(*t, sp->uptake);
            *t = SIM_FSUB(*t, take);
            e = SIM_FADD(e, take);
        }
        e = SIM_FSUB(e, sp->metabolism);
        int32_t age = s->st.age[a] + 1;
        s->st.energy[a] = e;
        s->st.age[a] = age;
        if (e <= 0.0f || (sp->max_age > 0 && age >= sp->max_age)) {
            s->dead[a] = 1;
            s->occ[s->st.cell[a]] = SIM_OCC_EMPTY;
        }
    }
}

/* Phase 6: parents with enough energy claim a free neighbour cell; the winners give birth. */
static void breed(mcpu *s, int64_t step)
{
    const sim_model *m = &s->m;
    const int w = m->width;
    const int64_t n = s->st.n, cells = s->st.cells;
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t a = 0; a < n; a++) {
        s->born[a] = -1;
        const sim_model_species *sp = &m->species[s->st.species[a]];
        if (s->dead[a] || !(sp->birth_energy > 0.0f) || !(s->st.energy[a] >= sp->birth_energy))
            continue;
        uint32_t cell = s->st.cell[a];
        int x = (int)(cell % (uint32_t)w), y = (int)(cell / (uint32_t)w);
        int64_t free_cells[8];
        uint32_t nf = 0;
        for (int c = 1; c < SIM_NCAND; c++) {
            int64_t t = cand_cell(m, x, y, c);
            if (t >= 0 && s->occ[t] == SIM_OCC_EMPTY)
                free_cells[nf++] = t;
        }
        if (!nf)
            continue;
        sim_u32x4 r = sim_random(s->sc.seed, (uint64_t)step, s->st.id[a], SIM_RNG_BIRTH);
        claim_max(&s->claim[free_cells[sim_pick(r.v[0], nf)]],
                  sim_claim_key_word(r.v[1], (uint32_t)a));
    }
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t t = 0; t < cells; t++) {
        uint64_t k = s->claim[t];
        if (k) {
            s->born[(uint32_t)k] = t;
            s->claim[t] = 0;
        }
    }
}

/* Phase 7: the survivors in id order, then the newborns in the order of their parents' ids,
 * numbered from next_id. Counts births and deaths per species. */
static int compact(mcpu *s, sim_stats *st, sim_err *err)
{
    const int64_t n = s->st.n;
    int64_t births = 0;
    for (int64_t a = 0; a < n; a++)
        births += s->born[a] >= 0;
    if (births > 0 && (uint64_t)s->st.next_id + (uint64_t)births > UINT32_MAX)
        return sim_err_set(err, SIM_EINVAL, "agent ids exhausted: %u ids given, %lld more "
                           "births", s->st.next_id, (long long)births);
    if (births == 0) {
        int64_t deaths = 0;
        for (int64_t a = 0; a < n; a++)
            deaths += s->dead[a];
        if (deaths == 0)
            return SIM_OK;
    }
    int rc = reserve(s, n + births, err);
    if (rc != SIM_OK)
        return rc;
    sim_state *o = &s->st, *q = &s->next;
    int64_t k = 0;
    for (int64_t a = 0; a < n; a++) {
        if (s->dead[a]) {
            st->species[o->species[a]].deaths++;
            continue;
        }
        q->cell[k] = o->cell[a];
        q->id[k] = o->id[a];
        q->species[k] = o->species[a];
        q->energy[k] = o->energy[a];
        q->age[k] = o->age[a];
        k++;
    }
    for (int64_t a = 0; a < n; a++) {
        if (s->born[a] < 0)
            continue;
        /* a parent never dies in the phases after its birth claim */
        float half = SIM_FMUL(o->energy[a], 0.5f);
        q->cell[k] = (uint32_t)s->born[a];
        q->id[k] = o->next_id++;
        q->species[k] = o->species[a];
        q->energy[k] = half;
        q->age[k] = 0;
        st->species[o->species[a]].births++;
        k++;
    }
    /* The parents keep energy - half: find them among the survivors (both lists in id order). */
    int64_t j = 0;
    for (int64_t a = 0; a < n; a++) {
        if (s->dead[a])
            continue;
        if (s->born[a] >= 0)
            q->energy[j] = SIM_FSUB(o->energy[a], SIM_FMUL(o->energy[a], 0.5f));
        j++;
    }
#define SWAP(f)                                                                              \
    do {                                                                                     \
        void *t_ = (void *)o->f;                                                             \
        o->f = q->f;                                                                         \
        q->f = t_;                                                                           \
    } while (0)
    SWAP(cell);
    SWAP(id);
    SWAP(species);
    SWAP(energy);
    SWAP(age);
#undef SWAP
    o->n = k;
    rebuild_occ(s, 0, NULL);
    return SIM_OK;
}

/* Phase 8: deposits, by every agent, into its cell. */
static void deposit(mcpu *s)
{
    const sim_model *m = &s->m;
    const int64_t n = s->st.n;
    /* One agent per cell: no two threads write a cell. */
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int64_t a = 0; a < n; a++) {
        const sim_model_species *sp = &m->species[s->st.species[a]];
        for (int d = 0; d < sp->n_deposit; d++) {
            float *t = &s->st.field[sp->deposit_field[d]][s->st.cell[a]];
            *t = sim_deposit(*t, sp->deposit_amount[d], sp->deposit_clamp);
        }
    }
}

/* One Jacobi sweep of a field with walls and sources: a wall neighbour gives the cell's own
 * value, wall cells stay 0, source cells take their value. Otherwise sim_diffuse_sweep's rule
 * (boundary of the grid included). Returns the largest |change| when asked. */
static float sweep_walls(const mcpu *s, const sim_model_field *mf, const uint8_t *src_mask,
                         const float *src, float *dst, int want_residual)
{
    const sim_model *m = &s->m;
    const sim_scenario *sc = &s->sc;
    const int w = m->width, h = m->height, b = sc->boundary;
    const float a = mf->diffusion, om = 1.0f - mf->diffusion;
    float residual = 0.0f;
#pragma omp parallel for schedule(static) reduction(max : residual) num_threads(s->threads)
    for (int y = 0; y < h; y++) {
        float local = 0.0f;
        for (int x = 0; x < w; x++) {
            int64_t i = (int64_t)y * w + x;
            float c = src[i];
            if (is_wall(s, i)) {
                dst[i] = 0.0f;
                continue;
            }
            float nb[4]; /* n, s, e, w */
            const int dx[4] = {0, 0, 1, -1}, dy[4] = {-1, 1, 0, 0};
            const float fixed[4] = {sc->fixed_top, sc->fixed_bottom, sc->fixed_right,
                                    sc->fixed_left};
            for (int k = 0; k < 4; k++) {
                int xx = x + dx[k], yy = y + dy[k];
                if (xx < 0 || xx >= w || yy < 0 || yy >= h) {
                    if (b == SIM_BOUNDARY_PERIODIC) {
                        xx = wrap1(xx, w);
                        yy = wrap1(yy, h);
                    } else {
                        nb[k] = b == SIM_BOUNDARY_WALL ? c : fixed[k];
                        continue;
                    }
                }
                int64_t j = (int64_t)yy * w + xx;
                nb[k] = is_wall(s, j) ? c : src[j];
            }
            float v = sim_jacobi(c, nb[0], nb[1], nb[2], nb[3], a, om);
            if (src_mask && src_mask[i])
                v = mf->source_value;
            dst[i] = v;
            if (want_residual) {
                float d = fabsf(v - c);
                if (d > local)
                    local = d;
            }
        }
        if (local > residual)
            residual = local;
    }
    return residual;
}

/* Phase 9, per field: growth, the sweeps, decay, then sources held. */
static float fields(mcpu *s, int want_residual)
{
    const sim_model *m = &s->m;
    const int64_t cells = s->st.cells;
    float residual = 0.0f;
    for (int f = 0; f < m->n_fields; f++) {
        const sim_model_field *mf = &m->field[f];
        const int walls = s->m.walls != NULL;
        const uint8_t *src = s->st.sources[f];
        float *t = s->st.field[f];
        if (mf->growth > 0.0f) {
            const float *cap = s->st.capacity[f]; /* NULL: uniform, mf->capacity */
#pragma omp parallel for schedule(static) num_threads(s->threads)
            for (int64_t i = 0; i < cells; i++)
                if (!is_wall(s, i))
                    t[i] = sim_grow(t[i], mf->growth, cap ? cap[i] : mf->capacity);
        }
        s->fsc.diffusion = mf->diffusion;
        s->fsc.decay = mf->decay;
        float res = 0.0f;
        for (int k = 0; k < mf->sweeps; k++) {
            int want = want_residual && k == mf->sweeps - 1;
            omp_set_num_threads(s->threads);
            if (walls || src)
                res = sweep_walls(s, mf, src, s->st.field[f], s->spare, want);
            else
                res = sim_diffuse_sweep(&s->fsc, s->st.field[f], s->spare, want);
            float *tmp = s->st.field[f];
            s->st.field[f] = s->spare;
            s->spare = tmp;
        }
        t = s->st.field[f];
        if (mf->decay > 0.0f) {
            omp_set_num_threads(s->threads);
            sim_diffuse_decay(&s->fsc, t);
        }
        if (src)
            for (int64_t i = 0; i < cells; i++)
                if (src[i])
                    t[i] = mf->source_value;
        if (res > residual)
            residual = res;
    }
    return residual;
}

/* Statistics of at most this many cells and agents (over every field) are taken on one thread:
 * below it a parallel region's start and end (~3-5 us on the device host's 16 cores) cost more
 * than the work it shares. */
#define STATS_ONE_THREAD_WORK (1 << 12)

/* Agents a0 .. a1 - 1: their checksum terms into *sum (sim_checksum_agent, and
 * sim_checksum_life with a life cycle) and their energies, as sim_energy_fix, into e[species]. */
static void agents_share(const mcpu *s, int64_t a0, int64_t a1, uint64_t *sum, int64_t e[4])
{
    _Static_assert(SIM_MAX_SPECIES == 4, "e has a slot per species");
    const int ext = s->m.extended;
    for (int64_t a = a0; a < a1; a++) {
        *sum += sim_checksum_agent(s->st.id[a], s->st.cell[a]);
        if (ext) {
            uint32_t bits;
            memcpy(&bits, &s->st.energy[a], sizeof bits);
            *sum += sim_checksum_life(s->st.id[a], s->st.species[a], bits, s->st.age[a]);
        }
        e[s->st.species[a]] += sim_energy_fix(s->st.energy[a]);
    }
}

/* Fills the statistics after a step (or for a checksum): every field's and the agents' shares in
 * one parallel region (or on one thread when they are few), then each field's total from its
 * column sums in column order, its maximum's sign (sim_max_zero_sign), and the rest in
 * sim_stats_model_finish. The sums modulo 2^64 and of integers, and the maxima, are the same in
 * any order; each column's additions are in row order on one thread: the same bits for any
 * thread count. */
static void fill_stats(mcpu *s, float residual, sim_stats *st)
{
    const sim_model *m = &s->m;
    const int nf = m->n_fields, w = m->width;
    const int64_t cells = s->st.cells, n = s->st.n;
    const int threads = (int64_t)nf * cells + n <= STATS_ONE_THREAD_WORK ? 1 : s->threads;
    float mx[SIM_MAX_FIELDS];
    for (int f = 0; f < SIM_MAX_FIELDS; f++)
        mx[f] = -INFINITY;
    uint64_t sum = 0;
    int64_t e0 = 0, e1 = 0, e2 = 0, e3 = 0;
#pragma omp parallel num_threads(threads) reduction(max : mx[:SIM_MAX_FIELDS]) \
    reduction(+ : sum, e0, e1, e2, e3)
    {
        const int k = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int f = 0; f < nf; f++) /* the CPU backend's loops, into f's row of colsum */
            sim_field_share(s->st.field[f], w, m->height, (uint64_t)f * (uint64_t)cells, k, nt,
                            s->colsum + (size_t)f * (size_t)w, &mx[f], &sum);
        int64_t e[4] = {0, 0, 0, 0};
        agents_share(s, n * k / nt, n * (k + 1) / nt, &sum, e);
        e0 += e[0];
        e1 += e[1];
        e2 += e[2];
        e3 += e[3];
    }
    for (int f = 0; f < nf; f++) {
        const double total = sim_column_total(s->colsum + (size_t)f * (size_t)w, w);
        sim_field_stats *out = &st->fields[f];
        out->total = total;
        out->mean = total / (double)cells;
        out->max = sim_max_zero_sign(s->st.field[f], cells, mx[f]);
    }
    const int64_t efix[SIM_MAX_SPECIES] = {e0, e1, e2, e3};
    sim_stats_model_finish(m, efix, residual, sum, st);
}

static int mcpu_step(void *p, int64_t step, int want_stats, sim_stats *st, sim_err *err)
{
    mcpu *s = p;
    const sim_model *m = &s->m;
    omp_set_num_threads(s->threads);
    int64_t n0 = s->st.n;
    st->n_species = m->n_species;
    st->n_fields = m->n_fields;
    memset(st->species, 0, sizeof st->species);
    if (n0 > 0) {
        memset(s->dead, 0, (size_t)n0);
        sense_move(s, step);
        int64_t moved = 0;
        for (int64_t a = 0; a < n0; a++)
            if (s->moved[a]) {
                moved++;
                st->species[s->st.species[a]].moved++;
            }
        st->moved = moved;
        eat(s, step);
        live(s);
        breed(s, step);
        int rc = compact(s, st, err);
        if (rc != SIM_OK)
            return rc;
        deposit(s);
    } else {
        st->moved = 0;
    }
    float residual = fields(s, want_stats);
    for (int64_t a = 0; a < s->st.n; a++)
        st->species[s->st.species[a]].count++;
    st->step = step + 1;
    st->agents = s->st.n;
    if (want_stats)
        fill_stats(s, residual, st);
    return SIM_OK;
}

static int mcpu_step_batch(void *p, int64_t step, int n, const uint8_t *want_stats,
                           sim_stats *out, sim_err *err)
{
    for (int k = 0; k < n; k++) {
        int rc = mcpu_step(p, step + k, want_stats && want_stats[k], &out[k], err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int mcpu_read_field(void *p, float *out, sim_err *err)
{
    (void)err;
    mcpu *s = p;
    memcpy(out, s->st.field[s->m.output_field], (size_t)s->st.cells * sizeof *out);
    return SIM_OK;
}

static int mcpu_read_agents(void *p, uint32_t *cells, sim_err *err)
{
    (void)err;
    mcpu *s = p;
    if (s->st.n > 0)
        memcpy(cells, s->st.cell, (size_t)s->st.n * sizeof *cells);
    return SIM_OK;
}

static int mcpu_checksum(void *p, uint64_t *out, sim_err *err)
{
    (void)err;
    mcpu *s = p;
    sim_stats st;
    memset(&st, 0, sizeof st);
    omp_set_num_threads(s->threads);
    fill_stats(s, 0.0f, &st);
    *out = st.checksum;
    return SIM_OK;
}

static int mcpu_horizon(void *p, const uint32_t *cells, int64_t n, int64_t *sums, sim_err *err)
{
    mcpu *s = p;
    for (int64_t i = 0; i < n; i++)
        if ((int64_t)cells[i] >= s->st.cells)
            return sim_err_set(err, SIM_EINVAL, "horizon: cell %u outside the grid", cells[i]);
    const uint32_t w = (uint32_t)s->m.width;
#pragma omp parallel for schedule(dynamic, 64) num_threads(s->threads)
    for (int64_t i = 0; i < n; i++)
        scores_at(s, &s->m.species[0], (int)(cells[i] % w), (int)(cells[i] / w), sums + 9 * i);
    return SIM_OK;
}

static int mcpu_paint(void *p, int x, int y, int radius, float amount, sim_err *err)
{
    (void)err;
    mcpu *s = p;
    const int w = s->m.width, h = s->m.height;
    float *t = s->st.field[s->m.output_field];
    for (int dy = -radius; dy <= radius; dy++)
        for (int dx = -radius; dx <= radius; dx++) {
            int xx = x + dx, yy = y + dy;
            if (dx * dx + dy * dy > radius * radius || xx < 0 || yy < 0 || xx >= w || yy >= h)
                continue;
            int64_t i = (int64_t)yy * w + xx;
            if (!is_wall(s, i))
                t[i] = t[i] + amount;
        }
    return SIM_OK;
}

/* The output field's disk sums of the first species' radius (walls count 0). */
static int mcpu_region_sums(void *p, const int32_t *xs, int nx, const int32_t *ys, int ny,
                            int64_t *out, sim_err *err)
{
    (void)err;
    mcpu *s = p;
    const sim_model *m = &s->m;
    sim_model_species one = m->species[0];
    one.n_sense = 1;
    one.sense[0].src = m->output_field;
    one.sense[0].weight = 1;
    const int r = one.radius;
    /* Per sampled row, the prefix rows of its disk in the thread's ring, then a row span per
     * disk row for each sampled column. */
#pragma omp parallel num_threads(s->threads)
    {
        ring rg = {s->rings + (int64_t)omp_get_thread_num() * s->ring_k * s->ring_stride,
                   2 * r + 3, s->ring_stride};
#pragma omp for schedule(dynamic, 4)
        for (int iy = 0; iy < ny; iy++) {
            const int y = ys[iy];
            for (int v = y - r; v <= y + r; v++)
                ring_fill(s, &one, &rg, v);
            for (int ix = 0; ix < nx; ix++)
                out[(int64_t)iy * nx + ix] = ring_disk_sum(m, &rg, r, xs[ix], y);
        }
    }
    return SIM_OK;
}

static int mcpu_read_cells(void *p, const uint32_t *cells, int64_t n, float *values,
                           int64_t *agents, sim_err *err)
{
    (void)err;
    mcpu *s = p;
    for (int64_t i = 0; i < n; i++) {
        values[i] = s->st.field[s->m.output_field][cells[i]];
        agents[i] = s->occ[cells[i]] >= 0 ? s->occ[cells[i]] : -1;
    }
    return SIM_OK;
}

static int mcpu_agent_cells(void *p, const int64_t *ids, int64_t n, uint32_t *cells,
                            sim_err *err)
{
    (void)err;
    mcpu *s = p;
    for (int64_t i = 0; i < n; i++)
        cells[i] = s->st.cell[ids[i]];
    return SIM_OK;
}

static int mcpu_read_state(void *p, sim_state *out, sim_err *err)
{
    mcpu *s = p;
    if (out->cap < s->st.n)
        return sim_err_set(err, SIM_EINVAL, "read_state: room for %lld agents, %lld live",
                           (long long)out->cap, (long long)s->st.n);
    size_t cells = (size_t)s->st.cells, n = (size_t)s->st.n;
    for (int f = 0; f < s->m.n_fields; f++) {
        memcpy(out->field[f], s->st.field[f], cells * sizeof(float));
        if (out->capacity[f] && s->st.capacity[f])
            memcpy(out->capacity[f], s->st.capacity[f], cells * sizeof(float));
        else if (out->capacity[f])
            for (size_t i = 0; i < cells; i++)
                out->capacity[f][i] = s->m.field[f].capacity;
        if (out->sources[f] && s->st.sources[f])
            memcpy(out->sources[f], s->st.sources[f], cells);
    }
    if (out->walls)
        for (size_t i = 0; i < cells; i++)
            out->walls[i] = is_wall(s, (int64_t)i);
    if (n) {
        memcpy(out->cell, s->st.cell, n * sizeof *out->cell);
        memcpy(out->id, s->st.id, n * sizeof *out->id);
        memcpy(out->species, s->st.species, n);
        memcpy(out->energy, s->st.energy, n * sizeof *out->energy);
        memcpy(out->age, s->st.age, n * sizeof *out->age);
    }
    out->n = s->st.n;
    out->next_id = s->st.next_id;
    return SIM_OK;
}

static const sim_backend_ops mcpu_ops = {
    .version = SIM_BACKEND_VERSION,
    .name = "cpu",
    .destroy = mcpu_destroy,
    .step = mcpu_step,
    .step_batch = mcpu_step_batch,
    .read_field = mcpu_read_field,
    .read_agents = mcpu_read_agents,
    .checksum = mcpu_checksum,
    .horizon = mcpu_horizon,
    .paint = mcpu_paint,
    .compose = NULL,
    .region_sums = mcpu_region_sums,
    .read_cells = mcpu_read_cells,
    .agent_cells = mcpu_agent_cells,
    .models = NULL,
    .create_state = mcpu_create_state,
    .read_state = mcpu_read_state,
};

const sim_backend_ops *sim_cpu_model_backend(void)
{
    return &mcpu_ops;
}
