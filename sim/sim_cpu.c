/* sim_cpu.c - the CPU backend: the reference implementation of the step (DESIGN.md), OpenMP
 * parallel and bit-identical for any thread count. Memory is sized once in create:
 * 2 fields (4+4 B/cell), prefix rows (8 B/cell), occupancy (4 B/cell), claims (8 B/cell),
 * and per agent its cell, target and claim key (16 B). */
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
    int64_t *prefix;        /* (width+1) * height */
    int32_t *occ;           /* agent id per cell, -1 empty */
    uint64_t *claim;        /* highest claim key per cell, 0 none */
    uint32_t *pos;          /* cell of each agent */
    uint32_t *target;       /* chosen cell this step */
    uint64_t *key;          /* claim key this step, 0 when not claiming */
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
    sim_free(s->prefix);
    sim_free(s->occ);
    sim_free(s->claim);
    sim_free(s->pos);
    sim_free(s->target);
    sim_free(s->key);
    sim_free(s->colsum);
    sim_free(s);
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
    s->prefix = sim_malloc_array((size_t)(sc->width + 1) * (size_t)sc->height, sizeof *s->prefix);
    s->occ = sim_malloc_array(cells, sizeof *s->occ);
    s->claim = sim_calloc(cells, sizeof *s->claim);
    s->pos = sim_malloc_array(n, sizeof *s->pos);
    s->target = sim_malloc_array(n, sizeof *s->target);
    s->key = sim_malloc_array(n, sizeof *s->key);
    s->colsum = sim_malloc_array((size_t)sc->width, sizeof *s->colsum);
    if (!s->field || !s->spare || !s->prefix || !s->occ || !s->claim || !s->pos || !s->target ||
        !s->key || !s->colsum) {
        size_t bytes = cells * 28 + n * 16;
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
    s->threshold = sim_noise_threshold(sc->noise);
    *out = s;
    return SIM_OK;
}

static int wrapi(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

/* Raises *slot to key if key is larger; the final value is the maximum whatever the order. */
static void claim_max(uint64_t *slot, uint64_t key)
{
    uint64_t cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
    while (cur < key &&
           !__atomic_compare_exchange_n(slot, &cur, key, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Sense and decide for every agent, then claim targets that were empty at the start. */
static void sense_decide_claim(cpu_state *s, int64_t step)
{
    const sim_scenario *sc = &s->sc;
    const int w = sc->width, h = sc->height;
    const int periodic = sc->boundary == SIM_BOUNDARY_PERIODIC;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(s->threads)
    for (int64_t i = 0; i < s->n; i++) {
        int x = (int)(s->pos[i] % (uint32_t)w), y = (int)(s->pos[i] / (uint32_t)w);
        int64_t sums[SIM_NCAND];
        sim_horizon_candidates(s->prefix, w, h, periodic, &s->disk, x, y, sums);
        sim_u32x4 r = sim_random(sc->seed, (uint64_t)step, (uint32_t)i, SIM_RNG_STEP);
        int c = sim_decide(sums, r, s->threshold);
        int tx = x + sim_cand_dx(c), ty = y + sim_cand_dy(c);
        if (periodic) {
            tx = wrapi(tx, w);
            ty = wrapi(ty, h);
        } else if (tx < 0 || tx >= w || ty < 0 || ty >= h) {
            tx = x;
            ty = y;
        }
        uint32_t t = (uint32_t)((int64_t)ty * w + tx);
        s->target[i] = t;
        s->key[i] = 0;
        if (t != s->pos[i] && s->occ[t] < 0) {
            s->key[i] = sim_claim_key(r, (uint32_t)i);
            claim_max(&s->claim[t], s->key[i]);
        }
    }
}

static int64_t move_deposit(cpu_state *s)
{
    int64_t moved = 0;
    const float deposit = s->sc.deposit;
#pragma omp parallel num_threads(s->threads)
    {
        /* Winners: each target has one winner and was empty, each vacated cell had one agent,
         * so no two threads write the same occupancy entry. */
#pragma omp for schedule(static) reduction(+ : moved)
        for (int64_t i = 0; i < s->n; i++) {
            if (s->key[i] && s->claim[s->target[i]] == s->key[i]) {
                s->occ[s->pos[i]] = -1;
                s->occ[s->target[i]] = (int32_t)i;
                s->pos[i] = s->target[i];
                moved++;
            }
        }
        /* Several losers may reset the same claim word: all write 0, atomically. */
#pragma omp for schedule(static)
        for (int64_t i = 0; i < s->n; i++)
            if (s->key[i])
                __atomic_store_n(&s->claim[s->target[i]], 0, __ATOMIC_RELAXED);
#pragma omp for schedule(static)
        for (int64_t i = 0; i < s->n; i++)
            s->field[s->pos[i]] = s->field[s->pos[i]] + deposit;
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
        sim_horizon_prefix(s->field, sc->width, sc->height, s->prefix);
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
    sim_horizon_prefix(s->field, sc->width, sc->height, s->prefix);
    for (int64_t i = 0; i < n; i++)
        sim_horizon_candidates(s->prefix, sc->width, sc->height,
                               sc->boundary == SIM_BOUNDARY_PERIODIC, &s->disk,
                               (int)(cells[i] % (uint32_t)sc->width),
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

/* No compose: sim_compose reads the state (a copy in host memory, no transfer) and draws it
 * with sim_view_compose. */
static const sim_backend_ops cpu_ops = {
    .version = SIM_BACKEND_VERSION,
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .step = cpu_step,
    .read_field = cpu_read_field,
    .read_agents = cpu_read_agents,
    .checksum = cpu_checksum,
    .horizon = cpu_horizon,
    .paint = cpu_paint,
    .compose = NULL,
};

const sim_backend_ops *sim_cpu_backend(void)
{
    return &cpu_ops;
}
