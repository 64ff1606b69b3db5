/* sim_cpu.c - the CPU backend: the reference implementation of the step (DESIGN.md), OpenMP
 * parallel and bit-identical for any thread count. Memory is sized once in create (and touched
 * there, by the thread that will use it, so that no step takes page faults): 20 B/cell, within
 * README's bounds (sim_cpu_memory): 2 fields (4+4 B/cell), occupancy (4 B/cell), claim words
 * (8 B/cell); per row 8(2r+3) B, so that either field buffer can hold the 32-bit extended prefix
 * rows (below); per thread 3 rows of dense disk sums (when agents are dense enough to use them);
 * per agent 12 B: its cell (4 B, rebuilt from the occupancy only when read) and room for its
 * claim (8 B, in one array where each band's claims start after those of the bands above it,
 * placed every step by the bands' agents at its start, which bound their claims).
 *
 * The prefix rows need no buffer of their own: they are made at the start of the agents' phase
 * and dead once it ends, while the spare field buffer is dead from the end of one step's sweeps
 * (or from the start of a step without sweeps) until its first sweep writes it. So the rows
 * live in whichever buffer is spare (ext_in_spare); both buffers are (h + 1)(w + 2r + 3)
 * entries, the rows' length, of which the field uses the first w * h. Nothing reads the rows
 * between steps: a horizon query builds its own, also into the spare buffer. The buffers are
 * plain allocated memory, so holding uint32 rows in one and floats later is legal C (an
 * allocated object takes the type of the last store, C11 6.5p6).
 *
 * The step walks the grid in row order and finds agents through the occupancy, not the agent
 * list (whose order is random in space), so that every array is read as a stream: the prefix
 * rows; for each row of agents, the dense disk sums of the rows above, at and below it, made
 * just then (they never leave the cache); the random words of a batch of agents at once
 * (vectorised Philox); the claims, with the occupancy and claim words of the next row
 * prefetched; and the moves of the claims made three rows earlier, whose cells are still in
 * cache (sense_rows says why three rows is safe). Then deposit, the sweeps (decay fused into the
 * last), statistics when asked for.
 *
 * Threads: one thread makes no OpenMP call. With more, one parallel region a step: thread t
 * keeps one band of rows through every phase, so that no thread waits on a queue and each
 * thread's rows stay in its cache. The bands start equal (band_start()) and are then balanced
 * by each thread's measured speed (balance(): cores differ, and agents may cluster); a split
 * moves rarely and by a few rows. The claims that cross a band's edge are resolved after a
 * barrier. The wait policy (a short spin on an idle machine, passive on a busy one, unless the
 * user chose one) is set by app/main.c: libgomp reads it before main. */
#include <math.h>
#include <sched.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_alloc.h"
#include "sim_backend.h"
#include "sim_clones.h"
#include "sim_diffuse.h"
#include "sim_field_stats.h"
#include "sim_horizon.h"
#include "sim_rules.h"

/* A claim an agent made: the target cell and its own. */
typedef struct cpu_entry {
    uint32_t t, src;
} cpu_entry;

/* One band of rows (ybound) in the agents' phase: its agents at the start of the step, which
 * bound its claims, and so where its claims go in the one array of n entries; and what its
 * thread counted in the last step. */
typedef struct cpu_band {
    int64_t agents;    /* agents in the band's rows at the start of the step */
    int64_t first;     /* its first entry: the agents of the bands above it */
    int64_t moved;     /* moves its thread made in the last step */
    int64_t up, down;  /* of those, moves out of the band: into the row above it, below it */
    int sums_done;     /* statistics: column chunks whose sums have the band's rows added */
    uint32_t mag_hi2, mag_lo2; /* statistics: its rows' magnitude keys (sim_rows_stats) */
    /* to 64 bytes: each band's sums_done on a cache line of its own, written by its thread and
     * read by the band below only */
    char pad[64 - 5 * sizeof(int64_t) - sizeof(int) - 2 * sizeof(uint32_t)];
} cpu_band;
_Static_assert(sizeof(cpu_band) == 64, "a band a cache line");

/* The phases of a step that each thread times (several threads: for the balance of the bands;
 * with HORIZON_CPU_PROFILE=1, a measuring aid, the totals go to stderr when the instance goes).
 * The work phases (BUILD, SENSE, EDGES, SWEEP) make a thread's busy time; the rest is waiting. */
enum {
    PROF_START,   /* from the region's start on the first thread to this thread's first work */
    PROF_BUILD,   /* prefix rows of its band */
    PROF_W_BUILD, /* barrier after them */
    PROF_SENSE,   /* sense, claim, the moves inside the band */
    PROF_W_SENSE, /* barrier before the edges */
    PROF_EDGES,   /* the moves of its edge rows */
    PROF_W_SWEEP, /* barriers before the sweeps */
    PROF_SWEEP,   /* the sweeps (the deposit, decay and mostly the statistics of the band's rows
                     folded in: sweep_rows_stats) */
    PROF_STATS,   /* the rest of the statistics: band_stats, its barrier and waits */
    PROF_END,     /* from its last work to the region's end on the first thread */
    PROF_PHASES
};

typedef struct cpu_clock {
    double t[PROF_PHASES]; /* totals since create */
    double last;           /* the time of the thread's last mark */
    double busy;           /* work in this step */
    char pad[64 - (PROF_PHASES + 2) * sizeof(double) % 64];
} cpu_clock;

/* A step's statistics finished in the next step's region (step_bands): its column sums from the
 * bands' own and its agents' checksum terms, taken in chunks by the threads that wait at that
 * step's barriers. The counters each on a cache line of their own. */
typedef struct cpu_later {
    int pending;      /* the step before left them */
    int guess;        /* whether the last statistics' keys passed sim_colsum_exact (1 at create) */
    sim_stats *out;   /* that step's row: its field_total, field_mean and checksum to come */
    uint64_t sum;     /* its cells' checksum terms */
    char pad0[64 - 2 * sizeof(int) - sizeof(sim_stats *) - sizeof(uint64_t)];
    int64_t terms_next; /* the first agent whose term no thread has taken */
    char pad1[64 - sizeof(int64_t)];
    int cols_next;    /* the first column chunk no thread has taken */
    char pad2[64 - sizeof(int)];
} cpu_later;

typedef struct cpu_state {
    sim_scenario sc;
    int threads;
    int64_t cells, n;
    float *field, *spare;   /* buf_len each; Jacobi ping-pongs between them (cells of each) */
    int64_t buf_len;        /* max(cells, the prefix rows' entries) */
    sim_hz_ext ext;         /* 32-bit extended prefix rows (sim_horizon.h), refilled every step
                               in the spare buffer (ext_in_spare) */
    int64_t *ext_offset;
    int32_t *rowmax;        /* per row, the largest |sim_fix| of the last build */
    int64_t *ring;          /* per thread 3 dense rows (columns -1 .. w), or NULL when sparse */
    int32_t *occ;           /* agent id per cell, -1 empty */
    uint64_t *claim;        /* highest claim key per cell, 0 none */
    cpu_entry *entries;     /* n: the claims of each band's agents, band after band */
    int32_t *row_start;     /* h + threads: per band (y1 - y0 + 1 from y0 + t), the first
                               entry of each row's claims, then the count */
    cpu_band *bands;        /* per thread (band) */
    float *dep_rows;        /* per thread 3 rows: the deposited rows its first sweep reads */
    uint32_t *pos;          /* cell of each agent: set at create, kept by every move (resolve) */
    double *colsum;         /* width, for the field total: colsum_mem from a 64-byte boundary;
                               then a row of colsum_stride(width) a band (band_stats) */
    double *colsum_mem;     /* colsum_rows(bands) colsum_stride(width) + 7 */
    cpu_later later;
    sim_disk disk;
    uint64_t threshold;
    int *ybound;            /* bands + 1: band t is rows [ybound[t], ybound[t + 1]) */
    int *ynew;              /* bands + 1: the split balance() proposes */
    double *speed;          /* per band: its thread's rows a second of work, smoothed */
    uint64_t scramble;      /* not 0: random splits every step (tests; sim_cpu_scramble_bands) */
    cpu_clock *clk;         /* per band, with several threads or HORIZON_CPU_PROFILE */
    int prof;               /* HORIZON_CPU_PROFILE: print the phases' totals at destroy */
    int64_t prof_steps;
} cpu_state;

static double prof_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Adds the time since thread t's last mark to phase k (and to its busy time for work). */
static void prof_mark(cpu_state *s, int t, int k)
{
    if (!s->clk)
        return;
    cpu_clock *c = &s->clk[t];
    const double now = prof_now(), d = now - c->last;
    c->t[k] += d;
    if (k == PROF_BUILD || k == PROF_SENSE || k == PROF_EDGES || k == PROF_SWEEP)
        c->busy += d;
    c->last = now;
}

static int step_threads(int threads, int h);

static void prof_print(const cpu_state *s)
{
    static const char *const names[PROF_PHASES] = {
        "start", "prefix rows", "wait", "sense+claim", "wait", "edges", "wait (sweeps)",
        "sweeps", "statistics", "end"};
    const int bands = step_threads(s->threads, s->sc.height);
    const double steps = s->prof_steps > 0 ? (double)s->prof_steps : 1.0;
    fprintf(stderr, "cpu profile: %lld steps, %d threads, ms a step (min / mean / max over the "
            "threads)\n", (long long)s->prof_steps, bands);
    double all = 0.0;
    for (int k = 0; k < PROF_PHASES; k++) {
        double lo = 1e300, hi = 0.0, sum = 0.0;
        for (int t = 0; t < bands; t++) {
            const double v = s->clk[t].t[k] / steps * 1e3;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            sum += v;
        }
        all += sum / bands;
        fprintf(stderr, "  %-14s %8.4f %8.4f %8.4f\n", names[k], lo, sum / bands, hi);
    }
    fprintf(stderr, "  %-14s %8.4f\n", "total (mean)", all);
    fprintf(stderr, "  per thread (prefix rows, sense+claim, sweeps):");
    for (int t = 0; t < bands; t++)
        fprintf(stderr, "%s %d: %.3f %.3f %.3f", t % 4 ? "," : "\n   ", t,
                s->clk[t].t[PROF_BUILD] / steps * 1e3, s->clk[t].t[PROF_SENSE] / steps * 1e3,
                s->clk[t].t[PROF_SWEEP] / steps * 1e3);
    fprintf(stderr, "\n  final split (rows a band):");
    for (int t = 0; t < bands; t++)
        fprintf(stderr, " %d", s->ybound[t + 1] - s->ybound[t]);
    fprintf(stderr, "\n");
}

static void cpu_destroy(void *p)
{
    cpu_state *s = p;
    if (!s)
        return;
    if (s->prof && s->clk)
        prof_print(s);
    sim_free(s->clk);
    sim_free(s->ybound);
    sim_free(s->ynew);
    sim_free(s->speed);
    sim_free(s->field);
    sim_free(s->spare);
    sim_free(s->ext_offset);
    sim_free(s->rowmax);
    sim_free(s->ring);
    sim_free(s->occ);
    sim_free(s->claim);
    sim_free(s->entries);
    sim_free(s->row_start);
    sim_free(s->bands);
    sim_free(s->dep_rows);
    sim_free(s->pos);
    sim_free(s->colsum_mem);
    sim_free(s);
}

/* Dense disk sums (every cell, vectorised row passes) against per-agent sums (3(2r+3) row spans
 * of scattered rows each): per cell the dense pass does 2r+1 streaming adds, an agent does
 * 9(2r+1) scattered ones, several times dearer each. Measured on one core (512^2 and 2048^2,
 * r = 8 and 32) the dense pass wins from a density of about 1/40; below it, and in worlds of
 * few agents, per-agent sums cost less. The dense sums live only in 3 rows per thread, made
 * just before the agents of the middle row sense them. */
static int use_dense(int64_t cells, int64_t n_agents)
{
    return n_agents * 40 >= cells;
}

/* Threads of the step: no more than rows, nor than SIM_CPU_MAX_BANDS. */
#define SIM_CPU_MAX_BANDS 1024

static int step_threads(int threads, int h)
{
    int t = threads < 1 ? 1 : threads > h ? h : threads;
    return t < SIM_CPU_MAX_BANDS ? t : SIM_CPU_MAX_BANDS;
}

/* Entries of each field buffer: the cells, or the prefix rows when they are longer (they always
 * are: h + 1 rows of w + 2r + 3). */
static int64_t buffer_len(int w, int h, int r)
{
    int64_t cells = (int64_t)w * h, rows = sim_hz_ext_rows_len(w, h, r);
    return cells > rows ? cells : rows;
}

/* Doubles a row of the column sums takes: the width to whole cache lines. */
static size_t colsum_stride(int w)
{
    return ((size_t)w + 7) & ~(size_t)7;
}

/* Rows of column sums: the field's, and with several bands one of each band's own (band_stats)
 * and one for the sums of the step before (finish_columns). */
static size_t colsum_rows(int bands)
{
    return 1 + (bands > 1 ? (size_t)bands + 1 : 0);
}

void sim_cpu_memory(const sim_scenario *sc, int threads, sim_mem *out)
{
    /* The arrays of cpu_create, in its order, by what they grow with. */
    const int w = sc->width, h = sc->height;
    const size_t cells = (size_t)w * (size_t)h;
    const int64_t n = sim_scenario_agent_count(sc);
    const int bands = step_threads(threads > 0 ? threads : omp_get_max_threads(), h);
    const size_t buf = (size_t)buffer_len(w, h, sc->radius);
    size_t field_b = 2 * cells * sizeof(float);
    size_t shared_b = cells * (sizeof(int32_t) + sizeof(uint64_t)); /* occupancy, claims */
    /* Per agent: its cell, and room for its claim. */
    size_t agent_b = (size_t)(n > 0 ? n : 1) * (sizeof(uint32_t) + sizeof(cpu_entry));
    /* The rest grows with the rows or the threads: the field buffers past the cells (the prefix
     * rows' halos and zero row), the row offsets and maxima, the dense rings, the claims' row
     * starts, the moves, the deposited rows, the column sums. */
    size_t other = 2 * (buf - cells) * sizeof(float);
    other += (size_t)sim_hz_ext_offset_len(h, sc->radius) * sizeof(int64_t);
    other += (size_t)h * sizeof(int32_t);
    if (use_dense((int64_t)cells, n))
        other += (size_t)bands * 3 * (size_t)SIM_HZ_DENSE_ROW(w) * sizeof(int64_t);
    other += ((size_t)h + (size_t)bands) * sizeof(int32_t) + (size_t)bands * sizeof(cpu_band) +
             (size_t)bands * 3 * (size_t)w * sizeof(float) +
             (colsum_rows(bands) * colsum_stride(w) + 7) * sizeof(double);
    memset(out, 0, sizeof *out);
    out->n_fields = 1;
    out->shared_per_cell = (double)shared_b / (double)cells;
    out->field_per_cell = (double)field_b / (double)cells;
    if (n > 0) {
        out->per_agent = (double)agent_b / (double)n;
    } else {
        other += agent_b; /* no agents: their one-entry arrays */
        agent_b = 0;
    }
    out->other = other;
    out->total = field_b + shared_b + agent_b + other;
}

size_t sim_cpu_estimate_bytes(const sim_scenario *sc)
{
    sim_mem m;
    sim_cpu_memory(sc, 0, &m);
    return m.total;
}

/* The first row of band t of `threads` equal bands, the split a CPU instance starts with
 * (balance() moves it later): band t is rows [band_start(t), band_start(t + 1)). */
static int band_start(int h, int t, int threads)
{
    return (int)((int64_t)h * t / threads);
}

/* The band of row y in the equal split: the last t with floor(h t / threads) <= y, i.e.
 * h t / threads < y + 1. */
static int band_of_row(int h, int threads, int y)
{
    return (int)((((int64_t)y + 1) * threads - 1) / h);
}

/* Each band's first entry: its claims go after those of the bands above it, n in all. */
static void place_claims(cpu_band *b, int bands)
{
    int64_t first = 0;
    for (int t = 0; t < bands; t++) {
        b[t].first = first;
        first += b[t].agents;
    }
}

/* First touch: each thread writes the rows of its band (ybound, the equal split at create), so
 * that the pages are mapped before the first step (not inside it) and, on a machine with
 * several memory nodes, lie next to the core that uses them. The field buffers go by the cells
 * of the band (the sweeps stream them every step, several times); their part past the cells by
 * the prefix rows of the band that lie there (the rows are a little longer than the cells', so
 * a band's prefix rows sit up to (2r+3)/w of the buffer further on than its cells). */
static void first_touch(cpu_state *s, const float *field)
{
    const int w = s->sc.width, h = s->sc.height;
    const int threads = step_threads(s->threads, h);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        const int t = omp_get_thread_num(), y0 = s->ybound[t], y1 = s->ybound[t + 1];
        size_t a = (size_t)y0 * (size_t)w, len = (size_t)(y1 - y0) * (size_t)w;
        memcpy(s->field + a, field + a, len * sizeof *s->field);
        memset(s->spare + a, 0, len * sizeof *s->spare);
        memset(s->claim + a, 0, len * sizeof *s->claim);
        for (size_t i = a; i < a + len; i++)
            s->occ[i] = -1;
        /* The band's prefix rows past the cells; the last band's include the zero row. */
        int64_t e0 = (int64_t)y0 * s->ext.stride;
        int64_t e1 = t == threads - 1 ? s->buf_len : (int64_t)y1 * s->ext.stride;
        e0 = e0 > s->cells ? e0 : s->cells;
        if (e1 > e0) {
            memset(s->field + e0, 0, (size_t)(e1 - e0) * sizeof *s->field);
            memset(s->spare + e0, 0, (size_t)(e1 - e0) * sizeof *s->spare);
        }
        if (s->ring)
            memset(s->ring + (size_t)t * 3 * (size_t)SIM_HZ_DENSE_ROW(w), 0,
                   3 * (size_t)SIM_HZ_DENSE_ROW(w) * sizeof *s->ring);
        memset(s->entries + s->bands[t].first, 0,
               (size_t)s->bands[t].agents * sizeof *s->entries);
    }
}

static int cpu_create(const sim_scenario *sc, const float *field, const uint32_t *agents,
                      int64_t n_agents, int threads, void **out, sim_err *err)
{
    *out = NULL;
    cpu_state *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_err_set(err, SIM_ENOMEM, "cpu backend: out of memory");
    s->sc = *sc;
    s->threads = threads > 0 ? threads : omp_get_max_threads();
    s->cells = (int64_t)sc->width * sc->height;
    s->n = n_agents;
    const int bands = step_threads(s->threads, sc->height);
    size_t cells = (size_t)s->cells, n = (size_t)(n_agents > 0 ? n_agents : 1);
    s->buf_len = buffer_len(sc->width, sc->height, sc->radius);
    s->field = sim_malloc_array((size_t)s->buf_len, sizeof *s->field);
    s->spare = sim_malloc_array((size_t)s->buf_len, sizeof *s->spare);
    s->ext_offset = sim_malloc_array((size_t)sim_hz_ext_offset_len(sc->height, sc->radius),
                                     sizeof *s->ext_offset);
    s->rowmax = sim_malloc_array((size_t)sc->height, sizeof *s->rowmax);
    int want_dense = use_dense(s->cells, n_agents);
    size_t ring_len = (size_t)bands * 3 * (size_t)SIM_HZ_DENSE_ROW(sc->width);
    s->ring = want_dense ? sim_malloc_array(ring_len, sizeof *s->ring) : NULL;
    s->occ = sim_malloc_array(cells, sizeof *s->occ);
    s->claim = sim_malloc_array(cells, sizeof *s->claim);
    s->entries = sim_malloc_array(n, sizeof *s->entries);
    s->row_start = sim_malloc_array((size_t)sc->height + (size_t)bands, sizeof *s->row_start);
    s->bands = sim_calloc((size_t)bands, sizeof *s->bands);
    s->dep_rows = sim_malloc_array((size_t)bands * 3 * (size_t)sc->width, sizeof *s->dep_rows);
    s->pos = sim_malloc_array(n, sizeof *s->pos);
    /* Column chunks of the bands (multiples of 16 columns, band_stats) then start on cache lines:
     * the bands working on neighbouring chunks at once share no line of it; so do the bands' own
     * rows after it. */
    s->colsum_mem = sim_malloc_array(colsum_rows(bands) * colsum_stride(sc->width) + 7,
                                     sizeof *s->colsum_mem);
    s->colsum = s->colsum_mem
                    ? (double *)(((uintptr_t)s->colsum_mem + 63) & ~(uintptr_t)63)
                    : NULL;
    s->ybound = sim_malloc_array((size_t)bands + 1, sizeof *s->ybound);
    s->ynew = sim_malloc_array((size_t)bands + 1, sizeof *s->ynew);
    s->speed = sim_calloc((size_t)bands, sizeof *s->speed);
    const char *prof = getenv("HORIZON_CPU_PROFILE");
    s->prof = prof && *prof && strcmp(prof, "0") != 0;
    if (bands > 1 || s->prof)
        s->clk = sim_calloc((size_t)bands, sizeof *s->clk);
    if (!s->field || !s->spare || !s->ext_offset || !s->rowmax ||
        (want_dense && !s->ring) || !s->occ || !s->claim || !s->entries || !s->row_start ||
        !s->bands || !s->dep_rows || !s->pos || !s->colsum || !s->ybound || !s->ynew ||
        !s->speed || ((bands > 1 || s->prof) && !s->clk)) {
        sim_mem m;
        sim_cpu_memory(sc, s->threads, &m);
        cpu_destroy(s);
        return sim_err_set(err, SIM_ENOMEM, "cpu backend: out of memory allocating %zu bytes for "
                           "a %dx%d world with %lld agents", m.total, sc->width, sc->height,
                           (long long)n_agents);
    }
    sim_hz_ext_init(&s->ext, sc->width, sc->height, sc->radius,
                    sc->boundary == SIM_BOUNDARY_PERIODIC, NULL, s->ext_offset);
    for (int t = 0; t <= bands; t++) /* equal rows until balance() moves them */
        s->ybound[t] = band_start(sc->height, t, bands);
    for (int64_t i = 0; i < n_agents; i++)
        s->bands[band_of_row(sc->height, bands, (int)(agents[i] / (uint32_t)sc->width))].agents++;
    place_claims(s->bands, bands);
    first_touch(s, field);
    for (int64_t i = 0; i < n_agents; i++) {
        s->pos[i] = agents[i];
        s->occ[agents[i]] = (int32_t)i;
    }
    sim_disk_init(&s->disk, sc->radius);
    s->later.guess = 1;
    s->threshold = sim_noise_threshold(sc->noise);
    *out = s;
    return SIM_OK;
}

/* Points the prefix rows at the spare buffer, which nothing needs until the first sweep
 * (header), and zeroes their zero row there: the buffers swap on an odd number of sweeps, and
 * a bounded grid's rows outside it read the zero row. Before every build. */
static void ext_in_spare(cpu_state *s)
{
    sim_hz_ext_attach32(&s->ext, (uint32_t *)(void *)s->spare);
}

/* Raises *slot to key if key is larger; the final value is the maximum whatever the order. */
static void claim_max(uint64_t *slot, uint64_t key)
{
    uint64_t cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
    while (cur < key &&
           !__atomic_compare_exchange_n(slot, &cur, key, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Cells of a row sensed together: their agents' random words are drawn in one vectorised
 * loop. */
#define SENSE_BATCH 256

typedef struct sense_batch {
    int32_t x[SENSE_BATCH];
    uint32_t id[SENSE_BATCH];
    uint32_t r0[SENSE_BATCH], r1[SENSE_BATCH], r2[SENSE_BATCH]; /* sim_random's words 0..2 */
} sense_batch;

/* sim_random(seed, step, id[k], SIM_RNG_STEP) for the batch's n agents: sim_philox4x32_10
 * written out over lanes (the same operations per agent), so that the compiler runs 8 or 16
 * agents in one register; the bits are sim_random's. */
SIM_CLONES static void philox_batch(sense_batch *restrict b, int n, int64_t step, uint64_t seed)
{
    const uint32_t c0 = (uint32_t)(uint64_t)step, c1 = (uint32_t)((uint64_t)step >> 32);
    const uint32_t key0 = (uint32_t)seed, key1 = (uint32_t)(seed >> 32);
    for (int k = 0; k < n; k++) {
        uint32_t v0 = c0, v1 = c1, v2 = b->id[k], v3 = SIM_RNG_STEP, k0 = key0, k1 = key1;
        for (int round = 0; round < 10; round++) {
            uint64_t p0 = (uint64_t)0xD2511F53u * v0;
            uint64_t p1 = (uint64_t)0xCD9E8D57u * v2;
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ v1 ^ k0;
            uint32_t n1 = (uint32_t)p1;
            uint32_t n2 = (uint32_t)(p0 >> 32) ^ v3 ^ k1;
            uint32_t n3 = (uint32_t)p0;
            v0 = n0;
            v1 = n1;
            v2 = n2;
            v3 = n3;
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        b->r0[k] = v0;
        b->r1[k] = v1;
        b->r2[k] = v2;
    }
}

/* Candidate offsets by index (sim_cand_dx / sim_cand_dy as tables). */
static const int8_t cand_dx[SIM_NCAND] = {0, -1, 0, 1, -1, 1, -1, 0, 1};
static const int8_t cand_dy[SIM_NCAND] = {0, -1, -1, -1, 0, 0, 1, 1, 1};

/* The moves out of a band, counted while its edge rows' claims are resolved: the band's agents
 * at the start of the next step, and so where its claims go, follow from them. */
typedef struct cpu_leaving {
    int64_t lo, hi;             /* the band's cells */
    int64_t above_lo, above_hi; /* the cells of the row above it (the last row above row 0) */
    int64_t up, down;           /* moves into the row above, into the row below */
} cpu_leaving;

/* Moves the winners among claims e[from, to): a claim whose key (its low half: the winner's id,
 * sim_claim_key) names the agent on its own cell won. The winner's entry clears the claim word
 * for the next step. Claims were all made (their cells' claim words are final) and no agent
 * still to sense reads the cells these moves touch: the callers see to both. With `shared`
 * other threads resolve claims at the same time; their moves touch other cells (a target was
 * empty, a source occupied, each has one winner), but two entries may name the same target,
 * so its word is read and cleared atomically. lv: NULL for sources whose moves cannot leave
 * the band, else the moves that do are counted there. Returns the moves made. */
static int64_t resolve(cpu_state *s, const cpu_entry *e, int64_t from, int64_t to, int shared,
                       cpu_leaving *lv)
{
    int64_t moved = 0;
    int32_t *occ = s->occ;
    uint64_t *claim = s->claim;
    for (int64_t k = from; k < to; k++) {
        uint32_t t = e[k].t, src = e[k].src;
        uint64_t key = shared ? __atomic_load_n(&claim[t], __ATOMIC_RELAXED) : claim[t];
        if (key == 0 || (uint32_t)key != (uint32_t)occ[src])
            continue; /* lost, or its cell's winner has moved already */
        occ[src] = -1;
        occ[t] = (int32_t)(uint32_t)key;
        s->pos[(uint32_t)key] = t; /* each agent moves at most once a step: no other writer */
        if (shared)
            __atomic_store_n(&claim[t], 0, __ATOMIC_RELAXED);
        else
            claim[t] = 0;
        moved++;
        if (lv && ((int64_t)t < lv->lo || (int64_t)t >= lv->hi)) {
            if ((int64_t)t >= lv->above_lo && (int64_t)t < lv->above_hi)
                lv->up++;
            else
                lv->down++;
        }
    }
    return moved;
}

/* Sense, decide and claim for the agents of rows [y0, y1), in cell order, appending each claim
 * to e (starts[y - y0] = the first of row y's, starts[y1 - y0] = the count) and moving winners as soon as it is safe: the
 * claims of sources in row y - 3 once row y has sensed (every claim on their targets, rows
 * y - 4 .. y - 2, is made, and no agent left in the band reads those rows). Sources in the
 * band's first and last two rows are left to the caller (resolve after every thread is done):
 * their targets are claimed, or their cells read, by agents of the neighbouring bands (of the
 * band itself across a periodic edge). `ring` (3 dense rows, or NULL for per-agent sums)
 * belongs to the calling thread; `shared`: other threads run at the same time. Returns the
 * moves made; *count = the entries written. */
static int64_t sense_rows(cpu_state *s, int64_t step, int y0, int y1, int64_t *ring,
                          cpu_entry *e, int32_t *starts, int shared, int64_t *count)
{
    const sim_scenario *sc = &s->sc;
    const int w = sc->width, h = sc->height;
    const int periodic = sc->boundary == SIM_BOUNDARY_PERIODIC;
    const int64_t rl = SIM_HZ_DENSE_ROW(w);
    const uint64_t seed = sc->seed, threshold = s->threshold;
    int32_t *occ = s->occ;
    uint64_t *claim = s->claim;
    int64_t ne = 0, moved = 0;
    int next = y0 + 2; /* the next source row to resolve */
    int32_t allmax = 0;
    for (int k = 0; k < h; k++)
        allmax = s->rowmax[k] > allmax ? s->rowmax[k] : allmax;
    sense_batch batch, *b = &batch;
    /* Dense row k lives in ring slot (k - y0 + 1) % 3; rows y0 - 1 and y0 first. */
    if (ring) {
        sim_hz_ext_dense_row(&s->ext, &s->disk, s->rowmax, allmax, y0 - 1, ring);
        sim_hz_ext_dense_row(&s->ext, &s->disk, s->rowmax, allmax, y0, ring + rl);
    }
    for (int y = y0; y < y1; y++) {
        const int32_t *occ_row = occ + (int64_t)y * w;
        const int64_t *rows[3] = {NULL, NULL, NULL}; /* dense rows y-1, y, y+1, column -1 first */
        if (ring) {
            int sl = (y - y0 + 1) % 3;
            int64_t *below = ring + (int64_t)((sl + 1) % 3) * rl;
            sim_hz_ext_dense_row(&s->ext, &s->disk, s->rowmax, allmax, y + 1, below);
            rows[0] = ring + (int64_t)((sl + 2) % 3) * rl;
            rows[1] = ring + (int64_t)sl * rl;
            rows[2] = below;
        }
        const int64_t ty_of[3] = {(int64_t)(periodic && y == 0 ? h - 1 : y - 1) * w,
                                  (int64_t)y * w,
                                  (int64_t)(periodic && y == h - 1 ? 0 : y + 1) * w};
        uint64_t *claim_next = claim + ty_of[2];
        const int32_t *occ_next = occ + ty_of[2];
        starts[y - y0] = (int32_t)ne;
        for (int x0 = 0; x0 < w; x0 += SENSE_BATCH) {
            const int xe = x0 + SENSE_BATCH < w ? x0 + SENSE_BATCH : w;
            /* The occupancy and the claim words of row y + 1 are first touched here (rows y
             * and y - 1 were fetched for earlier rows), at random by the agents' targets: one
             * line at a time, a batch ahead. */
            if (y + 1 < h || periodic) {
                if (x0 == 0)
                    for (int x = 0; x < xe; x += 8) {
                        __builtin_prefetch(claim_next + x, 1, 1);
                        __builtin_prefetch(occ_next + x, 0, 1);
                    }
                for (int x = x0; x < xe; x += 8)
                    __builtin_prefetch(claim_next + (x + SENSE_BATCH < w ? x + SENSE_BATCH : x),
                                       1, 1);
                for (int x = x0; x < xe; x += 16)
                    __builtin_prefetch(occ_next + (x + SENSE_BATCH < w ? x + SENSE_BATCH : x), 0,
                                       1);
            }
            /* The batch's agents, without a branch per cell. */
            int n = 0;
            for (int x = x0; x < xe; x++) {
                b->x[n] = x;
                n += occ_row[x] >= 0;
            }
            if (n == 0)
                continue;
            for (int k = 0; k < n; k++)
                b->id[k] = (uint32_t)occ_row[b->x[k]];
            philox_batch(b, n, step, seed);
            for (int k = 0; k < n; k++) {
                int x = b->x[k];
                int64_t sums[SIM_NCAND];
                if (ring) {
                    for (int c = 0; c < SIM_NCAND; c++)
                        sums[c] = rows[cand_dy[c] + 1][x + 1 + cand_dx[c]];
                } else {
                    sim_hz_ext_candidates32(&s->ext, &s->disk, x, y, sums);
                }
                /* sim_decide, without branches on the data: the argmax (ties to the lower
                 * index) and the random candidate are both computed, then one is selected. */
                int best = 0;
                int64_t top = sums[0];
                for (int c = 1; c < SIM_NCAND; c++) {
                    int gt = sums[c] > top;
                    top = gt ? sums[c] : top;
                    best = gt ? c : best;
                }
                int pick = (int)(((uint64_t)b->r1[k] * SIM_NCAND) >> 32);
                int c = (uint64_t)b->r0[k] < threshold ? pick : best;
                if (c == 0 || sums[c] == SIM_SUM_INVALID)
                    continue; /* stays, or its target lies outside a bounded grid */
                int tx = x + cand_dx[c];
                tx = tx < 0 ? tx + w : tx >= w ? tx - w : tx; /* only periodic grids wrap */
                int64_t t = ty_of[cand_dy[c] + 1] + tx;
                /* Moves so far touched no cell an agent still to sense reads: this is the
                 * occupancy at the start of the step. */
                if (occ[t] >= 0)
                    continue;
                sim_u32x4 r = {{b->r0[k], b->r1[k], b->r2[k], 0}};
                uint64_t key = sim_claim_key(r, b->id[k]);
                if (shared)
                    claim_max(&claim[t], key);
                else if (key > claim[t])
                    claim[t] = key;
                e[ne].t = (uint32_t)t;
                e[ne].src = (uint32_t)((int64_t)y * w + x);
                ne++;
            }
        }
        /* Sources in row y - 3, if it is not one of the band's first or last two rows. */
        for (; next <= y - 3 && next < y1 - 2; next++)
            moved += resolve(s, e, starts[next - y0], starts[next + 1 - y0], shared, NULL);
    }
    starts[y1 - y0] = (int32_t)ne;
    /* The band's sensing is over: every claim on targets up to row y1 - 2 is made, and the
     * neighbouring bands read rows y0 - 1 .. y0 and y1 - 1 .. y1 only. */
    for (; next < y1 - 2; next++)
        moved += resolve(s, e, starts[next - y0], starts[next + 1 - y0], shared, NULL);
    *count = ne;
    return moved;
}

/* The claims left by sense_rows: sources in rows y0, y0 + 1, y1 - 2 and y1 - 1 of the band;
 * counts the moves out of the band into b. */
static int64_t resolve_edges(cpu_state *s, int y0, int y1, const cpu_entry *e, int64_t ne,
                             const int32_t *starts, int shared, cpu_band *b)
{
    const int w = s->sc.width, h = s->sc.height;
    const int above = y0 > 0 ? y0 - 1 : h - 1;
    cpu_leaving lv = {(int64_t)y0 * w, (int64_t)y1 * w, (int64_t)above * w,
                      (int64_t)(above + 1) * w, 0, 0};
    int64_t moved = 0;
    int top_end = y0 + 2 < y1 ? y0 + 2 : y1;
    int bottom = y1 - 2 > top_end ? y1 - 2 : top_end;
    moved += resolve(s, e, 0, starts[top_end - y0], shared, &lv);
    moved += resolve(s, e, starts[bottom - y0], ne, shared, &lv);
    b->up = lv.up;
    b->down = lv.down;
    return moved;
}

/* The band's part of the agents' phase: sense, claim and the moves of sources inside the band
 * (sense_rows), then, once every band is there (barrier), the moves of its edge rows. Inside a
 * parallel region of `bands` threads, or alone with bands == 1. */
static void finish_columns(cpu_state *s, int bands);

/* finish: the step before's column sums to finish (finish_columns) while the band waits for the
 * others to sense. */
static void agents_band(cpu_state *s, int64_t step, int t, int bands, int finish)
{
    const int w = s->sc.width;
    const int y0 = s->ybound[t], y1 = s->ybound[t + 1];
    int64_t *ring = s->ring ? s->ring + (int64_t)t * 3 * SIM_HZ_DENSE_ROW(w) : NULL;
    cpu_band *b = &s->bands[t];
    cpu_entry *e = s->entries + b->first; /* room for b->agents claims */
    int32_t *starts = s->row_start + y0 + t;
    int64_t ne = 0;
    int shared = bands > 1;
    int64_t moved = sense_rows(s, step, y0, y1, ring, e, starts, shared, &ne);
    prof_mark(s, t, PROF_SENSE);
    if (finish) {
        finish_columns(s, bands);
        prof_mark(s, t, PROF_STATS);
    }
    if (shared) {
#pragma omp barrier
    }
    prof_mark(s, t, PROF_W_SENSE);
    moved += resolve_edges(s, y0, y1, e, ne, starts, shared, b);
    prof_mark(s, t, PROF_EDGES);
    b->moved = moved;
}

/* Deposits into every occupied cell of rows [y0, y1); a select, so that it vectorises
 * (unoccupied cells keep their bits). */
static void deposit_rows(cpu_state *s, int y0, int y1)
{
    const float deposit = s->sc.deposit;
    const int64_t a = (int64_t)y0 * s->sc.width, b = (int64_t)y1 * s->sc.width;
    float *restrict field = s->field;
    const int32_t *restrict occ = s->occ;
    for (int64_t c = a; c < b; c++)
        field[c] = occ[c] >= 0 ? field[c] + deposit : field[c];
}

/* One step with one thread: no OpenMP call at all (a region, even of one thread, costs a small
 * world's step several per cent). Returns the moves; *residual as the step's. */
static int64_t step_alone(cpu_state *s, int64_t step, int want_residual, float *residual)
{
    const sim_scenario *sc = &s->sc;
    const int h = sc->height;
    int64_t moved = 0;
    if (s->clk)
        s->clk[0].last = prof_now();
    if (s->n > 0) {
        ext_in_spare(s);
        sim_hz_ext_build32_rows(&s->ext, s->field, s->rowmax, 0, h);
        prof_mark(s, 0, PROF_BUILD);
        agents_band(s, step, 0, 1, 0);
        if (sc->sweeps == 0)
            deposit_rows(s, 0, h);
        moved = s->bands[0].moved; /* one band: its agents are all n, its first entry 0 */
    }
    *residual = 0.0f;
    for (int k = 0; k < sc->sweeps; k++) {
        int last = k == sc->sweeps - 1, decay = last && sc->decay > 0.0f;
        int want = want_residual && last;
        /* The deposit is read into the first sweep (no pass of its own). */
        *residual = k == 0 && s->n > 0
                        ? sim_diffuse_sweep_rows_deposit(sc, s->field, s->occ, sc->deposit,
                                                         s->spare, 0, h, s->dep_rows, want, decay)
                        : sim_diffuse_sweep_rows(sc, s->field, s->spare, 0, h, want, decay);
        float *t = s->field;
        s->field = s->spare;
        s->spare = t;
    }
    if (sc->sweeps == 0 && sc->decay > 0.0f)
        sim_diffuse_decay_ex(sc, s->field, 1);
    prof_mark(s, 0, PROF_SWEEP);
    s->prof_steps++;
    return moved;
}

/* The balance of the bands. A band's rows cost about the same whoever works them, but the
 * threads do not: on a shared host some cores run a third slower than others (measured on a
 * 16-core machine: one band's sensing 1.5 ms, another's 2.2 ms, steadily), and agents may
 * cluster in some rows. Every thread times its work in a step (its waits excluded); its band's
 * rows over that time, smoothed over steps (BAL_EMA), is its speed, and the next split gives
 * each thread rows in proportion to its speed, when that predicts the slowest band at least
 * BAL_GAIN faster than now (no churn for noise). The rows that change bands carry their agents
 * with them (counted in the occupancy). The split never changes a result: any split gives the
 * same bits (test_cpu_bands runs random ones). */
#define BAL_EMA 0.25
#define BAL_GAIN 0.02

/* Agents in rows [a, b). */
static int64_t agents_in_rows(const cpu_state *s, int a, int b)
{
    const int32_t *occ = s->occ;
    int64_t n = 0;
    for (int64_t c = (int64_t)a * s->sc.width; c < (int64_t)b * s->sc.width; c++)
        n += occ[c] >= 0;
    return n;
}

/* Makes ynew the split: each boundary's rows between its old and new place change bands, and
 * their agents with them (a row that crosses several boundaries is counted at each, which adds
 * up to the right bands). */
static void move_bounds(cpu_state *s, int bands)
{
    int *y = s->ybound;
    const int *ny = s->ynew;
    for (int t = 1; t < bands; t++) {
        if (ny[t] == y[t])
            continue;
        const int down = ny[t] > y[t]; /* band t - 1 grows */
        const int64_t c = down ? agents_in_rows(s, y[t], ny[t]) : agents_in_rows(s, ny[t], y[t]);
        s->bands[t - 1].agents += down ? c : -c;
        s->bands[t].agents += down ? -c : c;
    }
    memcpy(y, ny, ((size_t)bands + 1) * sizeof *y);
}

/* Bounds from cumulative weights: band t gets h * wt[t] / total rows, at least one. */
static void split_by(cpu_state *s, int h, int bands, const double *wt)
{
    double total = 0.0, acc = 0.0;
    for (int t = 0; t < bands; t++)
        total += wt[t];
    int *ny = s->ynew;
    ny[0] = 0;
    for (int t = 1; t < bands; t++) {
        acc += wt[t - 1];
        int v = (int)((double)h * acc / total + 0.5);
        v = v < ny[t - 1] + 1 ? ny[t - 1] + 1 : v;
        v = v > h - (bands - t) ? h - (bands - t) : v;
        ny[t] = v;
    }
    ny[bands] = h;
}

static void balance(cpu_state *s, int h, int bands)
{
    const int *y = s->ybound;
    if (s->scramble) { /* tests: any split, each band at least one row */
        double wt[SIM_CPU_MAX_BANDS];
        for (int t = 0; t < bands; t++) {
            s->scramble = s->scramble * 6364136223846793005ull + 1442695040888963407ull;
            wt[t] = (double)(1 + (s->scramble >> 58)); /* 1 .. 64 */
        }
        split_by(s, h, bands, wt);
        move_bounds(s, bands);
        return;
    }
    double now = 0.0;
    for (int t = 0; t < bands; t++) {
        const double busy = s->clk[t].busy;
        if (!(busy > 0.0))
            return; /* a thread did no timed work: nothing to go by */
        const double rate = (double)(y[t + 1] - y[t]) / busy;
        s->speed[t] = s->speed[t] > 0.0 ? s->speed[t] + BAL_EMA * (rate - s->speed[t]) : rate;
        const double eta = (double)(y[t + 1] - y[t]) / s->speed[t];
        now = eta > now ? eta : now;
    }
    split_by(s, h, bands, s->speed);
    double next = 0.0;
    for (int t = 0; t < bands; t++) {
        const double eta = (double)(s->ynew[t + 1] - s->ynew[t]) / s->speed[t];
        next = eta > next ? eta : next;
    }
    if (next < now * (1.0 - BAL_GAIN))
        move_bounds(s, bands);
}

void sim_cpu_scramble_bands(void *state, uint64_t seed)
{
    cpu_state *s = state;
    s->scramble = seed | 1u;
}

static void band_rows_start(cpu_state *s, int t);
static void band_rows(cpu_state *s, const float *field, int t, int y0, int y1, float *mx,
                      uint64_t *sum);
static float sweep_rows_stats(cpu_state *s, const float *src, float *dst, int t, int decay,
                              float *mx, uint64_t *sum);
static void band_stats(cpu_state *s, const float *field, int t, int bands, uint64_t *sum);
static void stats_finish(cpu_state *s, float mx, uint64_t sum, sim_stats *st);
static uint64_t finish_terms(cpu_state *s);
static double *later_sums(cpu_state *s);
static void stats_later(cpu_state *s, int bands, float mx, uint64_t sum, sim_stats *st);
static int bands_exact(const cpu_state *s, int bands);
static void field_stats(cpu_state *s, sim_stats *st);

/* Whether a step's statistics can be left to the next step's region: it has agents, so its
 * threads wait at a barrier after the prefix rows (finish_terms) and after sensing
 * (finish_columns), before any agent moves and before the sweeps write the bands' own sums. */
static int later_ok(const cpu_state *s, int bands)
{
    return s->n > 0 && bands > 1;
}

/* One step with several threads, in one parallel region: each thread keeps its band of rows
 * (ybound) through every phase (prefix rows, agents, deposit, each sweep, with want_stats the
 * statistics into *st: band_stats, then stats_finish after the region), with a barrier
 * wherever a phase reads what a neighbouring band wrote in the one before. One region instead of
 * one per phase: with the passive wait policy (app/main.c) each region start wakes every
 * thread, a few tens of microseconds that a 2048^2 step on 16 threads (a few ms) would feel.
 *
 * later (the caller steps again next, in the same sim_step_batch), with agents and the last
 * statistics' keys passing sim_colsum_exact: the statistics end with the bands' own rows
 * (band_rows), and the next step's region finishes them (stats_later): the threads that wait at
 * its barrier after the prefix rows take the agents' checksum terms (finish_terms), those that
 * wait after sensing add up the bands' own column sums (finish_columns). On the device host's
 * 16 threads (HORIZON_CPU_PROFILE, the bench's 512^2 world, ~0.23 ms a step) the statistics'
 * barrier, terms and additions took 9.9 us a step, and 3.2 us left to the next step (the wait
 * at the region's end 2.8 us, then 5.2). The batch's last step never leaves its own. */
static int64_t step_bands(cpu_state *s, int64_t step, int want_stats, int later, float *residual,
                          sim_stats *st)
{
    const sim_scenario *sc = &s->sc;
    const int h = sc->height;
    const int bands = step_threads(s->threads, h);
    float res[SIM_CPU_MAX_BANDS], mxs[SIM_CPU_MAX_BANDS];
    uint64_t sums[SIM_CPU_MAX_BANDS], terms[SIM_CPU_MAX_BANDS];
    /* finish: this region completes the step before's statistics. later: this step's are
     * completed by the next one's (the caller runs it; the last guess passed). */
    const int finish = s->later.pending;
    later = later && want_stats && s->later.guess && later_ok(s, bands);
    if (finish) {
        s->later.terms_next = 0;
        s->later.cols_next = 0;
    }
    if (want_stats && !later)
        for (int t = 0; t < bands; t++)
            s->bands[t].sums_done = 0;
    float *const field0 = s->field, *const spare0 = s->spare;
    /* The last sweep takes the band's statistics a block of rows at a time as it goes
     * (sweep_rows_stats), unless it is the first sweep with the deposit folded in (or there is
     * none): then band_rows reads the band after it. */
    const int stats_in_sweep = want_stats && sc->sweeps > 0 && !(sc->sweeps == 1 && s->n > 0);
    if (s->n > 0) {
        ext_in_spare(s); /* the spare buffer is first written by the first sweep, after a barrier */
        place_claims(s->bands, bands);
    }
    const double start = prof_now();
#pragma omp parallel num_threads(bands)
    {
        const int t = omp_get_thread_num(), y0 = s->ybound[t], y1 = s->ybound[t + 1];
        s->clk[t].last = start;
        s->clk[t].busy = 0.0;
        prof_mark(s, t, PROF_START);
        uint64_t term = 0;
        if (s->n > 0) {
            sim_hz_ext_build32_rows(&s->ext, s->field, s->rowmax, y0, y1);
            prof_mark(s, t, PROF_BUILD);
            if (finish) { /* before any agent moves */
                term = finish_terms(s);
                prof_mark(s, t, PROF_STATS);
            }
#pragma omp barrier
            prof_mark(s, t, PROF_W_BUILD);
            agents_band(s, step, t, bands, finish);
            if (sc->sweeps == 0) {
#pragma omp barrier
                prof_mark(s, t, PROF_W_SWEEP);
                deposit_rows(s, y0, y1);
                prof_mark(s, t, PROF_SWEEP); /* the deposit counts with the sweeps */
            }
        }
        float *src = field0, *dst = spare0, r = 0.0f;
        float *dep = s->dep_rows + (int64_t)t * 3 * sc->width;
        float mx = -INFINITY;
        uint64_t sum = 0;
        if (want_stats)
            band_rows_start(s, t);
        for (int k = 0; k < sc->sweeps; k++) {
            int last = k == sc->sweeps - 1, decay = last && sc->decay > 0.0f;
            int want = want_stats && last;
#pragma omp barrier
            prof_mark(s, t, PROF_W_SWEEP);
            /* The deposit is read into the first sweep (no pass of its own): the band reads
             * the field and the final occupancy of its neighbours' edge rows, writes neither. */
            if (k == 0 && s->n > 0)
                r = sim_diffuse_sweep_rows_deposit(sc, src, s->occ, sc->deposit, dst, y0, y1,
                                                   dep, want, decay);
            else if (want && stats_in_sweep)
                r = sweep_rows_stats(s, src, dst, t, decay, &mx, &sum);
            else
                r = sim_diffuse_sweep_rows(sc, src, dst, y0, y1, want, decay);
            prof_mark(s, t, PROF_SWEEP);
            float *tmp = src;
            src = dst;
            dst = tmp;
        }
        if (sc->sweeps == 0 && sc->decay > 0.0f) {
            const float keep = 1.0f - sc->decay;
            for (int64_t c = (int64_t)y0 * sc->width; c < (int64_t)y1 * sc->width; c++)
                src[c] = src[c] * keep;
            prof_mark(s, t, PROF_SWEEP);
        }
        if (t < SIM_CPU_MAX_BANDS) {
            res[t] = r;
            terms[t] = term;
        }
        if (want_stats) { /* the band's rows are final: its own last sweep wrote them */
            if (!stats_in_sweep)
                band_rows(s, src, t, y0, y1, &mx, &sum);
            if (!later)
                band_stats(s, src, t, bands, &sum);
            mxs[t] = mx;
            sums[t] = sum;
            prof_mark(s, t, PROF_STATS);
        }
    }
    const double end = prof_now();
    for (int t = 0; t < bands; t++)
        s->clk[t].t[PROF_END] += end - s->clk[t].last;
    s->prof_steps++;
    if (sc->sweeps % 2) {
        s->field = spare0;
        s->spare = field0;
    }
    *residual = 0.0f;
    for (int t = 0; t < bands && t < SIM_CPU_MAX_BANDS; t++)
        *residual = res[t] > *residual ? res[t] : *residual;
    if (finish) { /* the step before's row, from finish_terms and finish_columns */
        cpu_later *l = &s->later;
        uint64_t sum = l->sum;
        for (int t = 0; t < bands; t++)
            sum += terms[t];
        const double total = sim_column_total(later_sums(s), sc->width);
        l->out->field_total = total;
        l->out->field_mean = total / (double)s->cells;
        l->out->checksum = sum;
        l->pending = 0;
    }
    if (want_stats) {
        float mx = -INFINITY;
        uint64_t sum = 0;
        for (int t = 0; t < bands; t++) {
            mx = mxs[t] > mx ? mxs[t] : mx;
            sum += sums[t];
        }
        if (later)
            stats_later(s, bands, mx, sum, st);
        else {
            s->later.guess = bands_exact(s, bands);
            stats_finish(s, mx, sum, st);
        }
    }
    /* The bands' agents for the next step: each move out of a band went into the band above or
     * below it (a target is at most a row away; the first band's above is the last). */
    int64_t moved = 0;
    if (s->n > 0)
        for (int t = 0; t < bands; t++) {
            cpu_band *b = &s->bands[t];
            moved += b->moved;
            b->agents -= b->up + b->down;
            s->bands[t > 0 ? t - 1 : bands - 1].agents += b->up;
            s->bands[t < bands - 1 ? t + 1 : 0].agents += b->down;
        }
    balance(s, h, bands);
    return moved;
}

/* The agents' checksum terms (sim_checksum_agent) of agents a0 .. a1 - 1 from their cells in pos,
 * summed modulo 2^64: a loop without branches that the compiler vectorises. */
SIM_CLONES static uint64_t agent_terms(const uint32_t *restrict pos, int64_t a0, int64_t a1)
{
    uint64_t sum = 0;
    for (int64_t a = a0; a < a1; a++)
        sum += sim_checksum_agent((uint32_t)a, pos[a]);
    return sum;
}

/* Columns a chunk of band_stats: a quarter of a band's share of the width, at least 16. */
static int sums_chunk(int w, int bands)
{
    const int c = (w / (4 * bands) + 15) / 16 * 16;
    return c < 16 ? 16 : c;
}

/* Band t's own row of column sums, after colsum. */
static double *band_part(cpu_state *s, int t)
{
    return s->colsum + (size_t)(t + 1) * colsum_stride(s->sc.width);
}

/* Band t's statistics before its rows: its column sums 0, its magnitude keys at their start. */
static void band_rows_start(cpu_state *s, int t)
{
    double *const part = band_part(s, t);
    for (int x = 0; x < s->sc.width; x++)
        part[x] = 0.0;
    s->bands[t].mag_hi2 = 0u;
    s->bands[t].mag_lo2 = 0xffffffffu;
}

/* Rows y0 .. y1 - 1 of band t's final field, the band's next rows in order, into its
 * statistics: their column sums into its row (band_part), their magnitudes into its keys,
 * their maximum and checksum terms into *mx and *sum (sim_rows_stats). */
static void band_rows(cpu_state *s, const float *field, int t, int y0, int y1, float *mx,
                      uint64_t *sum)
{
    cpu_band *b = &s->bands[t];
    sim_rows_stats(field, s->sc.width, y0, y1, 0, band_part(s, t), &b->mag_hi2, &b->mag_lo2, mx,
                   sum);
}

/* Whether the magnitude keys of all the bands' rows pass sim_colsum_exact: the bands' own
 * column sums then add up in any order to the column sums in row order. */
static int bands_exact(const cpu_state *s, int bands)
{
    uint32_t hi2 = 0u, lo2 = 0xffffffffu;
    for (int b = 0; b < bands; b++) {
        hi2 = s->bands[b].mag_hi2 > hi2 ? s->bands[b].mag_hi2 : hi2;
        lo2 = s->bands[b].mag_lo2 < lo2 ? s->bands[b].mag_lo2 : lo2;
    }
    return sim_mags_exact(hi2, lo2, s->sc.height);
}

/* out[x] for x in [x0, x1): the bands' own column sums (band_part) added up, in band order. */
static void add_parts(cpu_state *s, int bands, int x0, int x1, double *out)
{
    for (int x = x0; x < x1; x++) {
        double c = 0.0;
        for (int b = 0; b < bands; b++)
            c += band_part(s, b)[x];
        out[x] = c;
    }
}

/* Output floats a block of sweep_rows_stats: 16 KB, in the first-level cache when band_rows
 * reads them. */
#define SWEEP_STATS_FLOATS 4096

/* The last sweep of band t's rows from src into dst with its residual (returned), and their
 * statistics (band_rows) a block of rows at a time right after the sweep wrote them, from the
 * first-level cache: read after the whole band they came from the second level, ~2 us of the
 * ~9 us a step that the statistics of the default scenario's bands took on 16 threads. */
static float sweep_rows_stats(cpu_state *s, const float *src, float *dst, int t, int decay,
                              float *mx, uint64_t *sum)
{
    const int w = s->sc.width, y0 = s->ybound[t], y1 = s->ybound[t + 1];
    const int rows = w < SWEEP_STATS_FLOATS ? SWEEP_STATS_FLOATS / w : 1;
    float r = 0.0f;
    for (int y = y0; y < y1; y += rows) {
        const int yb = y1 - y < rows ? y1 : y + rows;
        const float ry = sim_diffuse_sweep_rows(&s->sc, src, dst, y, yb, 1, decay);
        r = ry > r ? ry : r;
        band_rows(s, dst, t, y, yb, mx, sum);
    }
    return r;
}

/* Band t's statistics of the w x h field `field`, at the end of the step's parallel region
 * where they are not left to the next step (step_bands: `bands` threads, one a band, after
 * band_rows has taken all its rows; every sums_done zeroed before it). First, with no waiting,
 * the checksum terms of its share of the agents (the t-th of `bands` even shares by id) into
 * *sum. Then a barrier, and where the magnitudes of all the bands pass sim_colsum_exact
 * (bands_exact: the column sums are then exact in any order: README, "The statistics,
 * exactly"), the thread adds the bands' own column sums (add_parts) of its share of the
 * columns; otherwise the bands add their rows to the columns in
 * row order, a chunk of columns at a time once the band above has added its rows to that chunk
 * (band 0 starts the chunk from 0): the same additions in the same order per column as
 * sim_column_sums over all rows. Either way each thread reads only the rows it swept last, still
 * in its core's caches (a split by columns read the other bands' rows from theirs: ~0.12 ms a
 * step of the default scenario on two threads). The chain alone made the bands wait for each
 * other: on 16 threads band 15 waited ~35 us a step of the default scenario for its first
 * chunk. The maximum and the sum modulo 2^64 are the same in any order. */
static void band_stats(cpu_state *s, const float *field, int t, int bands, uint64_t *sum)
{
    const int w = s->sc.width, y0 = s->ybound[t], y1 = s->ybound[t + 1];
    *sum += agent_terms(s->pos, s->n * t / bands, s->n * (t + 1) / bands);
#pragma omp barrier
    if (bands_exact(s, bands)) {
        int x0, x1;
        sim_column_share(w, t, bands, &x0, &x1);
        add_parts(s, bands, x0, x1, s->colsum);
        return;
    }
    const int chunk = sums_chunk(w, bands);
    int *const above = t > 0 ? &s->bands[t - 1].sums_done : NULL;
    for (int j = 0, x0 = 0; x0 < w; j++, x0 += chunk) {
        const int x1 = w - x0 < chunk ? w : x0 + chunk;
        if (above) {
            for (int spins = 0; __atomic_load_n(above, __ATOMIC_ACQUIRE) <= j;)
                if (++spins >= 1024) /* the band above may wait for a core */
                    sched_yield();
        } else {
            for (int x = x0; x < x1; x++)
                s->colsum[x] = 0.0;
        }
        sim_column_sums(field, w, y0, y1, x0, x1, s->colsum);
        __atomic_store_n(&s->bands[t].sums_done, j + 1, __ATOMIC_RELEASE);
    }
}

/* The row of column sums that finish_columns fills: after the bands' own. */
static double *later_sums(cpu_state *s)
{
    const int bands = step_threads(s->threads, s->sc.height);
    return s->colsum + (size_t)(bands + 1) * colsum_stride(s->sc.width);
}

/* Agents a chunk of finish_terms. */
#define LATER_TERMS 1024

/* The checksum terms of the step before's agents (their cells unchanged until this step's
 * agents move), a chunk at a time from one counter until none is left: the threads done with
 * their prefix rows first take most of them. Their sum. */
static uint64_t finish_terms(cpu_state *s)
{
    uint64_t sum = 0;
    for (;;) {
        const int64_t a = __atomic_fetch_add(&s->later.terms_next, LATER_TERMS, __ATOMIC_RELAXED);
        if (a >= s->n)
            return sum;
        sum += agent_terms(s->pos, a, s->n - a < LATER_TERMS ? s->n : a + LATER_TERMS);
    }
}

/* The step before's column sums (its keys passed sim_colsum_exact: exact in any order) from the
 * bands' own (band_part, rewritten only by this step's sweeps) into later_sums, a chunk of
 * columns at a time from one counter until none is left: the threads done sensing first take
 * most of them. */
static void finish_columns(cpu_state *s, int bands)
{
    const int w = s->sc.width, chunk = sums_chunk(w, bands);
    double *const out = later_sums(s);
    for (;;) {
        const int x0 = __atomic_fetch_add(&s->later.cols_next, chunk, __ATOMIC_RELAXED);
        if (x0 >= w)
            return;
        add_parts(s, bands, x0, w - x0 < chunk ? w : x0 + chunk, out);
    }
}

/* A step's row of statistics to be finished by the next step's region (step_bands' `later`):
 * its maximum now, and where the bands' keys pass sim_colsum_exact its field_total, field_mean
 * and checksum left pending (the cells' terms, sum, kept); where they fail (the guess from the
 * last statistics was wrong), the whole row now by field_stats (its column sums in row order),
 * and the next statistics by band_stats. */
static void stats_later(cpu_state *s, int bands, float mx, uint64_t sum, sim_stats *st)
{
    if (bands_exact(s, bands)) {
        st->field_max = sim_max_zero_sign(s->field, s->cells, mx);
        s->later.pending = 1;
        s->later.out = st;
        s->later.sum = sum;
        return;
    }
    s->later.guess = 0;
    field_stats(s, st); /* the column sums in row order by column shares, and the rest again */
}

/* Thread t of `threads`' share of the statistics outside the step's bands (one thread, or a
 * checksum asked between steps): column sums, the maximum and the checksum terms of its share of
 * the field (sim_field_share: one thread takes the whole field a block of rows at a time), and the
 * checksum terms of an even share of the agents (by id, from pos: 4 bytes an agent instead of the
 * occupancy's 4 bytes a cell). */
static void stats_part(cpu_state *s, int t, int threads, float *mx_out, uint64_t *sum_out)
{
    float mx = -INFINITY;
    uint64_t sum = 0;
    sim_field_share(s->field, s->sc.width, s->sc.height, 0, t, threads, s->colsum, &mx, &sum);
    sum += agent_terms(s->pos, s->n * t / threads, s->n * (t + 1) / threads);
    *mx_out = mx;
    *sum_out = sum;
}

/* The row of statistics from the column sums in colsum, the maximum mx (its sign settled here)
 * and the checksum sum. */
static void stats_finish(cpu_state *s, float mx, uint64_t sum, sim_stats *st)
{
    const double total = sim_column_total(s->colsum, s->sc.width);
    st->field_total = total;
    st->field_mean = total / (double)s->cells;
    st->field_max = sim_max_zero_sign(s->field, s->cells, mx);
    st->checksum = sum;
}

static void field_stats(cpu_state *s, sim_stats *st)
{
    const int threads = s->threads;
    float mx = -INFINITY;
    uint64_t sum = 0;
    if (threads == 1) {
        stats_part(s, 0, 1, &mx, &sum);
    } else {
#pragma omp parallel num_threads(threads) reduction(max : mx) reduction(+ : sum)
        {
            float m;
            uint64_t c;
            stats_part(s, omp_get_thread_num(), omp_get_num_threads(), &m, &c);
            mx = m > mx ? m : mx;
            sum += c;
        }
    }
    stats_finish(s, mx, sum, st);
}

/* One step; later: the caller's next call is the next step, which may finish this one's
 * statistics (step_bands). */
static void step_one(cpu_state *s, int64_t step, int want_stats, int later, sim_stats *st)
{
    float residual = 0.0f;
    if (step_threads(s->threads, s->sc.height) == 1) {
        st->moved = step_alone(s, step, want_stats, &residual);
        if (want_stats)
            field_stats(s, st);
    } else { /* the statistics in the step's own parallel region */
        st->moved = step_bands(s, step, want_stats, later, &residual, st);
    }
    st->step = step + 1;
    st->agents = s->n;
    if (want_stats)
        st->residual = residual;
}

static int cpu_step(void *p, int64_t step, int want_stats, sim_stats *st, sim_err *err)
{
    (void)err;
    step_one(p, step, want_stats, 0, st);
    return SIM_OK;
}

/* Nothing to gain from batching on the host: the steps one after another. */
static int cpu_step_batch(void *p, int64_t step, int n, const uint8_t *want_stats, sim_stats *out,
                          sim_err *err)
{
    (void)err;
    /* Every step but the last may leave its statistics to the next (step_bands): none is
     * pending when the batch returns. */
    for (int k = 0; k < n; k++)
        step_one(p, step + k, want_stats && want_stats[k], k + 1 < n, &out[k]);
    return SIM_OK;
}

static int cpu_read_field(void *p, float *out, sim_err *err)
{
    (void)err;
    cpu_state *s = p;
    memcpy(out, s->field, (size_t)s->cells * sizeof *out);
    return SIM_OK;
}

static int cpu_read_agents(void *p, uint32_t *cells, sim_err *err)
{
    (void)err;
    cpu_state *s = p;
    if (s->n > 0) {
        memcpy(cells, s->pos, (size_t)s->n * sizeof *cells);
    }
    return SIM_OK;
}

static int cpu_checksum(void *p, uint64_t *out, sim_err *err)
{
    (void)err;
    cpu_state *s = p;
    sim_stats st;
    field_stats(s, &st);
    *out = st.checksum;
    return SIM_OK;
}

static int cpu_horizon(void *p, const uint32_t *cells, int64_t n, int64_t *sums, sim_err *err)
{
    cpu_state *s = p;
    const sim_scenario *sc = &s->sc;
    for (int64_t i = 0; i < n; i++)
        if ((int64_t)cells[i] >= s->cells)
            return sim_err_set(err, SIM_EINVAL, "horizon: cell %u outside the grid", cells[i]);
    ext_in_spare(s); /* the next step builds its own */
    sim_hz_ext_build32_rows(&s->ext, s->field, s->rowmax, 0, sc->height);
    for (int64_t i = 0; i < n; i++)
        sim_hz_ext_candidates32(&s->ext, &s->disk, (int)(cells[i] % (uint32_t)sc->width),
                                (int)(cells[i] / (uint32_t)sc->width), sums + 9 * i);
    return SIM_OK;
}

static int cpu_paint(void *p, int x, int y, int radius, float amount, sim_err *err)
{
    (void)err;
    cpu_state *s = p;
    const int w = s->sc.width, h = s->sc.height;
    for (int dy = -radius; dy <= radius; dy++)
        for (int dx = -radius; dx <= radius; dx++) {
            int xx = x + dx, yy = y + dy;
            if (dx * dx + dy * dy > radius * radius || xx < 0 || yy < 0 || xx >= w || yy >= h)
                continue;
            float *f = &s->field[(int64_t)yy * w + xx];
            *f = *f + amount;
        }
    return SIM_OK;
}

/* The region's disk sums straight from the field (sim_horizon_region): the extended prefix rows
 * are the step's, of the whole grid, and the field may have been painted since they were built.
 * Scratch is per call (the viewer's, not the step's memory). */
static int cpu_region_sums(void *p, const int32_t *xs, int nx, const int32_t *ys, int ny,
                           int64_t *out, sim_err *err)
{
    cpu_state *s = p;
    const sim_scenario *sc = &s->sc;
    size_t len = sim_horizon_region_scratch_len(sc->radius, xs, nx, s->threads);
    int64_t *scratch = sim_malloc_array(len, sizeof *scratch);
    if (!scratch)
        return sim_err_set(err, SIM_ENOMEM, "region_sums: out of memory for %zu bytes of prefix "
                           "rows (%d threads)", len * sizeof *scratch, s->threads);
    sim_horizon_region(s->field, sc->width, sc->height, sc->boundary == SIM_BOUNDARY_PERIODIC,
                       sc->radius, xs, nx, ys, ny, out, scratch, s->threads);
    sim_free(scratch);
    return SIM_OK;
}

/* The occupancy grid maps a cell to its agent in O(1). */
static int cpu_read_cells(void *p, const uint32_t *cells, int64_t n, float *values,
                          int64_t *agents, sim_err *err)
{
    (void)err;
    cpu_state *s = p;
    for (int64_t i = 0; i < n; i++) {
        values[i] = s->field[cells[i]];
        agents[i] = s->occ[cells[i]];
    }
    return SIM_OK;
}

static int cpu_agent_cells(void *p, const int64_t *ids, int64_t n, uint32_t *cells,
                           sim_err *err)
{
    (void)err;
    cpu_state *s = p;
    for (int64_t i = 0; i < n; i++)
        cells[i] = s->pos[ids[i]];
    return SIM_OK;
}

/* No compose: sim_compose reads the state (a copy in host memory, no transfer) and draws it
 * with sim_view_compose. */
static const sim_backend_ops cpu_ops = {
    .version = SIM_BACKEND_VERSION,
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .step = cpu_step,
    .step_batch = cpu_step_batch,
    .read_field = cpu_read_field,
    .read_agents = cpu_read_agents,
    .checksum = cpu_checksum,
    .horizon = cpu_horizon,
    .paint = cpu_paint,
    .compose = NULL,
    .region_sums = cpu_region_sums,
    .read_cells = cpu_read_cells,
    .agent_cells = cpu_agent_cells,
    .models = sim_cpu_model_backend,
    .create_state = NULL,
    .read_state = NULL,
};

const sim_backend_ops *sim_cpu_backend(void)
{
    return &cpu_ops;
}
