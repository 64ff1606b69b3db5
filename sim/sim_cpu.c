/* sim_cpu.c - the CPU backend: the reference implementation of the step (DESIGN.md), OpenMP
 * parallel and bit-identical for any thread count. Memory is sized once in create:
 * 2 fields (4+4 B/cell), extended prefix rows (8 B/cell + 8(2r+3) B/row), occupancy (4 B/cell),
 * claims (8 B/cell), the dense disk sums when agents are dense enough to use them (8 B/cell,
 * plus a 32-bit copy of the prefix rows, 4 B/cell + 4(2r+3) B/row, for the dense pass's exact
 * 32-bit path), and per agent its cell (4 B).
 *
 * Every phase walks the grid in row order and finds agents through the occupancy, not the agent
 * list (whose order is random in space): the dense sums, the claims and the field are then read
 * as streams instead of one cache miss each, which is most of the time at 2048^2.
 *
 * Threads: with one thread the horizon, sense and move phases enter no OpenMP region (their
 * pragmas carry `if (threads > 1)`); the sweeps and statistics still open one-thread regions.
 * With more, every loop is schedule(static) over work of equal cost per index (rows of the grid,
 * agents whose sense is 9 loads or 3(2r+3) row spans), so no thread waits on a dynamic queue and the split is the same
 * every step. The wait policy is left to the user (OMP_WAIT_POLICY, GOMP_SPINCOUNT: libgomp reads
 * them once, at load, so the backend cannot set them): libgomp's default spins a while before
 * sleeping, which is right on an idle machine; on a loaded one,
 * OMP_WAIT_POLICY=passive keeps idle threads from stealing the core that the last one needs
 * (README, Performance). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sim_alloc.h"
#include "sim_backend.h"
#include "sim_diffuse.h"
#include "sim_horizon.h"
#include "sim_rules.h"

typedef struct cpu_state {
    sim_scenario sc;
    int threads;
    int64_t cells, n;
    float *field, *spare;   /* cells each; Jacobi ping-pongs between them */
    sim_hz_ext ext;         /* extended prefix rows (sim_horizon.h), refilled every step */
    int64_t *ext_rows, *ext_offset;
    uint32_t *ext_rows32;   /* the prefix rows modulo 2^32, with dense only */
    int64_t *dense;         /* disk sum of every cell, or NULL when agents are sparse */
    int32_t *occ;           /* agent id per cell, -1 empty */
    uint64_t *claim;        /* highest claim key per cell, 0 none */
    uint32_t *pos;          /* cell of each agent */
    double *colsum;         /* width, for the field total */
    sim_disk disk;
    uint64_t threshold;
} cpu_state;

static void cpu_destroy(void *p)
{
    cpu_state *s = p;
    if (!s)
        return;
    sim_free(s->field);
    sim_free(s->spare);
    sim_free(s->ext_rows);
    sim_free(s->ext_offset);
    sim_free(s->ext_rows32);
    sim_free(s->dense);
    sim_free(s->occ);
    sim_free(s->claim);
    sim_free(s->pos);
    sim_free(s->colsum);
    sim_free(s);
}

/* Dense disk sums (every cell, vectorised row passes) against per-agent sums (3(2r+3) row spans
 * of scattered rows each): per cell the dense pass does 2r+1 streaming adds, an agent does
 * 9(2r+1) scattered ones, several times dearer each. Measured on one core (512^2 and 2048^2,
 * r = 8 and 32) the dense pass wins from a density of about 1/40; below it, and in worlds of
 * few agents, per-agent sums cost less and need no extra 8 B/cell. */
static int use_dense(int64_t cells, int64_t n_agents)
{
    return n_agents * 40 >= cells;
}

size_t sim_cpu_estimate_bytes(const sim_scenario *sc)
{
    /* The arrays of cpu_create, in its order. */
    size_t cells = (size_t)sc->width * (size_t)sc->height;
    int64_t n = sim_scenario_agent_count(sc);
    size_t b = cells * (2 * sizeof(float) + sizeof(int32_t) + sizeof(uint64_t));
    b += (size_t)sim_hz_ext_rows_len(sc->width, sc->height, sc->radius) * sizeof(int64_t);
    b += (size_t)sim_hz_ext_offset_len(sc->height, sc->radius) * sizeof(int64_t);
    if (use_dense((int64_t)cells, n))
        b += cells * sizeof(int64_t) +
             (size_t)sim_hz_ext_rows_len(sc->width, sc->height, sc->radius) * sizeof(uint32_t);
    b += (size_t)(n > 0 ? n : 1) * sizeof(uint32_t) + (size_t)sc->width * sizeof(double);
    return b;
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
    size_t cells = (size_t)s->cells, n = (size_t)(n_agents > 0 ? n_agents : 1);
    s->field = sim_malloc_array(cells, sizeof *s->field);
    s->spare = sim_malloc_array(cells, sizeof *s->spare);
    s->ext_rows = sim_malloc_array((size_t)sim_hz_ext_rows_len(sc->width, sc->height, sc->radius),
                                   sizeof *s->ext_rows);
    s->ext_offset = sim_malloc_array((size_t)sim_hz_ext_offset_len(sc->height, sc->radius),
                                     sizeof *s->ext_offset);
    int want_dense = use_dense(s->cells, n_agents);
    s->dense = want_dense ? sim_malloc_array(cells, sizeof *s->dense) : NULL;
    s->ext_rows32 = want_dense ? sim_malloc_array((size_t)sim_hz_ext_rows_len(sc->width,
                                                                              sc->height,
                                                                              sc->radius),
                                                  sizeof *s->ext_rows32)
                               : NULL;
    s->occ = sim_malloc_array(cells, sizeof *s->occ);
    s->claim = sim_calloc(cells, sizeof *s->claim);
    s->pos = sim_malloc_array(n, sizeof *s->pos);
    s->colsum = sim_malloc_array((size_t)sc->width, sizeof *s->colsum);
    if (!s->field || !s->spare || !s->ext_rows || !s->ext_offset || (want_dense && (!s->dense || !s->ext_rows32)) ||
        !s->occ || !s->claim || !s->pos || !s->colsum) {
        size_t bytes = cells * (want_dense ? 40 : 28) + n * 4;
        cpu_destroy(s);
        return sim_err_set(err, SIM_ENOMEM, "cpu backend: out of memory allocating %zu bytes for "
                           "a %dx%d world with %lld agents", bytes, sc->width, sc->height,
                           (long long)n_agents);
    }
    memcpy(s->field, field, cells * sizeof *s->field);
    for (size_t i = 0; i < cells; i++)
        s->occ[i] = -1;
    for (int64_t i = 0; i < n_agents; i++) {
        s->pos[i] = agents[i];
        s->occ[agents[i]] = (int32_t)i;
    }
    sim_disk_init(&s->disk, sc->radius);
    sim_hz_ext_init(&s->ext, sc->width, sc->height, sc->radius,
                    sc->boundary == SIM_BOUNDARY_PERIODIC, s->ext_rows, s->ext_offset);
    sim_hz_ext_attach32(&s->ext, s->ext_rows32);
    s->threshold = sim_noise_threshold(sc->noise);
    *out = s;
    return SIM_OK;
}

/* v + d for d in {-1, 0, 1}, wrapped onto [0, n): no division. */
static int wrap1(int v, int n)
{
    return v < 0 ? v + n : v >= n ? v - n : v;
}

/* Raises *slot to key if key is larger; the final value is the maximum whatever the order. */
static void claim_max(uint64_t *slot, uint64_t key)
{
    uint64_t cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
    while (cur < key &&
           !__atomic_compare_exchange_n(slot, &cur, key, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Sense and decide for every agent, then claim targets that were empty at the start. Rows are
 * split among threads; within a row the agents come in cell order. */
static void sense_decide_claim(cpu_state *s, int64_t step)
{
    const sim_scenario *sc = &s->sc;
    const int w = sc->width, h = sc->height;
    const int periodic = sc->boundary == SIM_BOUNDARY_PERIODIC;
    const int threads = s->threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int y = 0; y < h; y++) {
        const int32_t *occ_row = s->occ + (int64_t)y * w;
        for (int x = 0; x < w; x++) {
            int32_t i = occ_row[x];
            if (i < 0)
                continue;
            int64_t sums[SIM_NCAND];
            if (s->dense) {
                for (int c = 0; c < SIM_NCAND; c++) {
                    int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
                    if (periodic) {
                        cx = wrap1(cx, w);
                        cy = wrap1(cy, h);
                    } else if (cx < 0 || cx >= w || cy < 0 || cy >= h) {
                        sums[c] = SIM_SUM_INVALID;
                        continue;
                    }
                    sums[c] = s->dense[(int64_t)cy * w + cx];
                }
            } else {
                sim_hz_ext_candidates(&s->ext, &s->disk, x, y, sums);
            }
            sim_u32x4 r = sim_random(sc->seed, (uint64_t)step, (uint32_t)i, SIM_RNG_STEP);
            int c = sim_decide(sums, r, s->threshold);
            int tx = x + sim_cand_dx(c), ty = y + sim_cand_dy(c);
            if (periodic) {
                tx = wrap1(tx, w);
                ty = wrap1(ty, h);
            } else if (tx < 0 || tx >= w || ty < 0 || ty >= h) {
                continue; /* stays */
            }
            int64_t t = (int64_t)ty * w + tx;
            /* occ is only written after this loop: "empty at the start of the step". */
            if (t != (int64_t)y * w + x && s->occ[t] < 0)
                claim_max(&s->claim[t], sim_claim_key(r, (uint32_t)i));
        }
    }
}

/* Moves the winners and deposits. The winner of a claimed cell is the low half of its claim
 * word (sim_claim_key), so one pass over the claims moves every winner and clears the word for
 * the next step. No two threads write the same occupancy entry: each claimed cell was empty and
 * has one winner, each vacated cell had one agent (and was not claimed: it was occupied). */
static int64_t move_deposit(cpu_state *s)
{
    int64_t moved = 0;
    const float deposit = s->sc.deposit;
    const int threads = s->threads;
    const int64_t cells = s->cells;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp for schedule(static) reduction(+ : moved)
        for (int64_t t = 0; t < cells; t++) {
            uint64_t k = s->claim[t];
            if (k) {
                uint32_t i = (uint32_t)k;
                s->occ[s->pos[i]] = -1;
                s->occ[t] = (int32_t)i;
                s->pos[i] = (uint32_t)t;
                s->claim[t] = 0;
                moved++;
            }
        }
#pragma omp for schedule(static)
        for (int64_t t = 0; t < cells; t++)
            if (s->occ[t] >= 0)
                s->field[t] = s->field[t] + deposit;
    }
    return moved;
}

static void field_stats(cpu_state *s, sim_stats *st)
{
    const int w = s->sc.width, h = s->sc.height;
    float mx = -INFINITY;
    uint64_t sum = 0;
    /* Column sums accumulate rows in order, so the total does not depend on threads. */
#pragma omp parallel num_threads(s->threads) reduction(max : mx) reduction(+ : sum)
    {
#pragma omp for schedule(static)
        for (int x = 0; x < w; x++) {
            double acc = 0.0;
            for (int y = 0; y < h; y++)
                acc += (double)s->field[(int64_t)y * w + x];
            s->colsum[x] = acc;
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < s->cells; i++) {
            float v = s->field[i];
            if (v > mx)
                mx = v;
            uint32_t bits;
            memcpy(&bits, &v, sizeof bits);
            sum += sim_checksum_cell((uint64_t)i, bits);
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < s->n; i++)
            sum += sim_checksum_agent((uint32_t)i, s->pos[i]);
    }
    double total = 0.0;
    for (int x = 0; x < w; x++)
        total += s->colsum[x];
    st->field_total = total;
    st->field_mean = total / (double)s->cells;
    st->field_max = mx;
    st->checksum = sum;
}

static int cpu_step(void *p, int64_t step, int want_stats, sim_stats *st, sim_err *err)
{
    (void)err;
    cpu_state *s = p;
    const sim_scenario *sc = &s->sc;
    omp_set_num_threads(s->threads);
    if (s->n > 0) {
        sim_hz_ext_build(&s->ext, s->field, s->threads);
        if (s->dense)
            sim_hz_ext_dense(&s->ext, &s->disk, s->dense, s->threads);
        sense_decide_claim(s, step);
    }
    st->moved = s->n > 0 ? move_deposit(s) : 0;
    float residual = 0.0f;
    for (int k = 0; k < sc->sweeps; k++) {
        residual = sim_diffuse_sweep(sc, s->field, s->spare, want_stats && k == sc->sweeps - 1);
        float *t = s->field;
        s->field = s->spare;
        s->spare = t;
    }
    if (sc->decay > 0.0f)
        sim_diffuse_decay(sc, s->field);
    st->step = step + 1;
    st->agents = s->n;
    if (want_stats) {
        st->residual = residual;
        field_stats(s, st);
    }
    return SIM_OK;
}

/* Nothing to gain from batching on the host: the steps one after another. */
static int cpu_step_batch(void *p, int64_t step, int n, const uint8_t *want_stats, sim_stats *out,
                          sim_err *err)
{
    for (int k = 0; k < n; k++) {
        int rc = cpu_step(p, step + k, want_stats && want_stats[k], &out[k], err);
        if (rc != SIM_OK)
            return rc;
    }
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
    if (s->n > 0)
        memcpy(cells, s->pos, (size_t)s->n * sizeof *cells);
    return SIM_OK;
}

static int cpu_checksum(void *p, uint64_t *out, sim_err *err)
{
    (void)err;
    cpu_state *s = p;
    sim_stats st;
    omp_set_num_threads(s->threads);
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
    sim_hz_ext_build(&s->ext, s->field, s->threads);
    for (int64_t i = 0; i < n; i++)
        sim_hz_ext_candidates(&s->ext, &s->disk, (int)(cells[i] % (uint32_t)sc->width),
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
