/* gpu_model.cu - the CUDA model engine's backend table (gpu_cuda_model_backend): create from a
 * state, the step's orchestration (sense, life, fields, statistics; one synchronisation at the
 * end) and the checksum. The reads and the paint brush are in gpu_model_read.cu, the kernels in
 * gpu_model_sense.cu, gpu_model_life.cu and gpu_model_fields.cu; the oracle is
 * sim/sim_model_cpu.c, whose results these give bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "gpu_alloc.h"
#include "gpu_backend.h"
#include "gpu_check.h"
#include "gpu_model.h"
#include "gpu_policy.h"

extern "C" {
#include "sim_alloc.h"
#include "sim_model_rules.h"
#include "sim_rules.h"
#include "sim_stats.h"
}

int gpu_model_alloc(gpu_model *g, void **p, size_t bytes, const char *what, sim_err *err)
{
    GPU_TRY(gpu_alloc_device(p, bytes, what, err));
    g->bytes += bytes ? bytes : 1;
    return SIM_OK;
}

/* The per-agent arrays, which grow with the agents (reserve). */
typedef struct md_arrays {
    gpu_md_agents a[2];
    uint32_t *d_target, *d_born;
    unsigned long long *d_key, *d_flags, *d_scan;
    uint8_t *d_dead;
    void *d_temp;
    size_t temp_bytes, bytes;
} md_arrays;

static void arrays_free(md_arrays *t)
{
    for (int k = 0; k < 2; k++) {
        gpu_alloc_free(t->a[k].cell);
        gpu_alloc_free(t->a[k].id);
        gpu_alloc_free(t->a[k].species);
        gpu_alloc_free(t->a[k].energy);
        gpu_alloc_free(t->a[k].age);
    }
    gpu_alloc_free(t->d_target);
    gpu_alloc_free(t->d_born);
    gpu_alloc_free(t->d_key);
    gpu_alloc_free(t->d_flags);
    gpu_alloc_free(t->d_scan);
    gpu_alloc_free(t->d_dead);
    gpu_alloc_free(t->d_temp);
    memset(t, 0, sizeof *t);
}

static md_arrays arrays_of(const gpu_model *g)
{
    md_arrays t;
    memset(&t, 0, sizeof t);
    t.a[0] = g->a[0];
    t.a[1] = g->a[1];
    t.d_target = g->d_target;
    t.d_born = g->d_born;
    t.d_key = g->d_key;
    t.d_flags = g->d_flags;
    t.d_scan = g->d_scan;
    t.d_dead = g->d_dead;
    t.d_temp = g->d_temp;
    t.temp_bytes = g->temp_bytes;
    t.bytes = g->agent_bytes;
    return t;
}

static void arrays_set(gpu_model *g, const md_arrays *t)
{
    g->a[0] = t->a[0];
    g->a[1] = t->a[1];
    g->d_target = t->d_target;
    g->d_born = t->d_born;
    g->d_key = t->d_key;
    g->d_flags = t->d_flags;
    g->d_scan = t->d_scan;
    g->d_dead = t->d_dead;
    g->d_temp = t->d_temp;
    g->temp_bytes = t->temp_bytes;
    g->agent_bytes = t->bytes;
}

static int arrays_take(md_arrays *t, void **p, size_t bytes, const char *what, sim_err *err)
{
    GPU_TRY(gpu_alloc_device(p, bytes, what, err));
    t->bytes += bytes ? bytes : 1;
    return SIM_OK;
}

static int arrays_alloc(md_arrays *t, int64_t cap, sim_err *err)
{
    const size_t n = (size_t)cap;
    for (int k = 0; k < 2; k++) {
        GPU_TRY(arrays_take(t, (void **)&t->a[k].cell, n * sizeof(uint32_t), "agent cells", err));
        GPU_TRY(arrays_take(t, (void **)&t->a[k].id, n * sizeof(uint32_t), "agent ids", err));
        GPU_TRY(arrays_take(t, (void **)&t->a[k].species, n, "agent species", err));
        GPU_TRY(arrays_take(t, (void **)&t->a[k].energy, n * sizeof(float), "agent energy", err));
        GPU_TRY(arrays_take(t, (void **)&t->a[k].age, n * sizeof(int32_t), "agent ages", err));
    }
    GPU_TRY(arrays_take(t, (void **)&t->d_target, n * sizeof(uint32_t), "agent targets", err));
    GPU_TRY(arrays_take(t, (void **)&t->d_born, n * sizeof(uint32_t), "births", err));
    GPU_TRY(arrays_take(t, (void **)&t->d_key, n * sizeof(unsigned long long), "claim keys",
                        err));
    GPU_TRY(arrays_take(t, (void **)&t->d_dead, n, "deaths", err));
    GPU_TRY(arrays_take(t, (void **)&t->d_flags, (n + 1) * sizeof(unsigned long long),
                        "compaction flags", err));
    GPU_TRY(arrays_take(t, (void **)&t->d_scan, (n + 1) * sizeof(unsigned long long),
                        "compaction scan", err));
    t->temp_bytes = gpu_md_scan_bytes(cap + 1);
    return arrays_take(t, &t->d_temp, t->temp_bytes, "compaction scratch", err);
}

/* Copies the n agents of set `from` into set 0 of t. */
static int arrays_copy(gpu_model *g, md_arrays *t, const gpu_md_agents *o, sim_err *err)
{
    const size_t m = (size_t)g->n;
    cudaStream_t s = g->stream;
    const gpu_md_agents *d = &t->a[0];
    GPU_CHECK(err, cudaMemcpyAsync(d->cell, o->cell, m * 4, cudaMemcpyDeviceToDevice, s));
    GPU_CHECK(err, cudaMemcpyAsync(d->id, o->id, m * 4, cudaMemcpyDeviceToDevice, s));
    GPU_CHECK(err, cudaMemcpyAsync(d->species, o->species, m, cudaMemcpyDeviceToDevice, s));
    GPU_CHECK(err, cudaMemcpyAsync(d->energy, o->energy, m * 4, cudaMemcpyDeviceToDevice, s));
    GPU_CHECK(err, cudaMemcpyAsync(d->age, o->age, m * 4, cudaMemcpyDeviceToDevice, s));
    GPU_CHECK(err, cudaStreamSynchronize(s)); /* before the old arrays go */
    return SIM_OK;
}

static void free_agents(gpu_model *g)
{
    md_arrays t = arrays_of(g);
    arrays_free(&t);
    arrays_set(g, &t);
}

static void md_destroy(void *p)
{
    gpu_model *g = (gpu_model *)p;
    if (!g)
        return;
    /* Also the path out of a create that failed half way: every pointer is NULL or allocated. */
    free_agents(g);
    for (int f = 0; f < SIM_MAX_FIELDS; f++) {
        gpu_alloc_free(g->d_field[f]);
        gpu_alloc_free(g->d_cap[f]);
        gpu_alloc_free(g->d_src[f]);
        sim_free(g->h_capacity[f]);
        sim_free(g->h_sources[f]);
    }
    gpu_alloc_free(g->d_spare);
    gpu_alloc_free(g->d_params);
    gpu_alloc_free(g->d_occ);
    gpu_alloc_free(g->d_code);
    gpu_alloc_free(g->d_claim);
    gpu_alloc_free(g->d_claim_eat);
    gpu_alloc_free(g->d_ctl);
    gpu_alloc_free(g->d_colsum);
    gpu_alloc_free(g->d_probe);
    gpu_alloc_free_pinned(g->h_ctl);
    for (int k = 0; k < 4; k++)
        if (g->ev[k])
            cudaEventDestroy(g->ev[k]);
    for (int k = 0; k < GPU_MD_LIFE_MARKS; k++)
        if (g->lev[k])
            cudaEventDestroy(g->lev[k]);
    gpu_alloc_free_pinned(g->h_colsum);
    sim_free(g->h_walls);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    sim_free(g);
}

/* Room for `want` agents in every per-agent array (doubling, at most one per cell); the agents
 * of a[cur] (n of them) are kept, in a[0]. Waits for the device when the arrays grow. */
static int reserve(gpu_model *g, int64_t want, sim_err *err)
{
    if (want <= g->cap && g->d_target)
        return SIM_OK;
    int64_t cap = want > 2 * g->cap ? want : 2 * g->cap;
    if (cap > g->cells)
        cap = g->cells > want ? g->cells : want;
    if (cap < 1)
        cap = 1;
    md_arrays t;
    memset(&t, 0, sizeof t);
    int rc = arrays_alloc(&t, cap, err);
    if (rc == SIM_OK && g->n > 0 && g->d_target) /* not at create: nothing uploaded yet */
        rc = arrays_copy(g, &t, &g->a[g->cur], err);
    if (rc != SIM_OK) {
        arrays_free(&t);
        return rc;
    }
    g->bytes -= g->agent_bytes;
    free_agents(g);
    arrays_set(g, &t);
    g->bytes += g->agent_bytes;
    g->cap = cap;
    g->cur = 0;
    return SIM_OK;
}

/* The agents the next step needs room for: births at most double them, and one agent per
 * cell. */
static int64_t room_for(const gpu_model *g)
{
    if (!g->any_births)
        return g->n;
    return 2 * g->n < g->cells ? 2 * g->n : g->cells;
}

static void fill_params(gpu_model *g)
{
    const sim_model *m = &g->m;
    gpu_md_params *p = &g->p;
    memset(p, 0, sizeof *p);
    p->w = m->width;
    p->h = m->height;
    p->periodic = m->periodic;
    p->n_species = m->n_species;
    p->n_fields = m->n_fields;
    p->extended = m->extended;
    p->seed = g->sc.seed;
    for (int s = 0; s < m->n_species; s++) {
        const sim_model_species *ms = &m->species[s];
        gpu_md_species *d = &p->sp[s];
        d->radius = ms->radius;
        d->n_sense = ms->n_sense;
        for (int t = 0; t < ms->n_sense; t++) {
            d->src[t] = ms->sense[t].src;
            d->weight[t] = ms->sense[t].weight;
        }
        d->threshold = ms->threshold;
        d->n_deposit = ms->n_deposit;
        d->clamp = ms->deposit_clamp;
        for (int k = 0; k < ms->n_deposit; k++) {
            d->dep_field[k] = ms->deposit_field[k];
            d->dep_amount[k] = ms->deposit_amount[k];
        }
        d->life = ms->life;
        d->max_age = ms->max_age;
        d->uptake_field = ms->uptake_field;
        d->metabolism = ms->metabolism;
        d->birth_energy = ms->birth_energy;
        d->uptake = ms->uptake;
        d->eats = ms->eats;
        for (int q = 0; q < SIM_MAX_SPECIES; q++)
            d->gain[q] = ms->gain[q];
        g->any_eats |= ms->eats != 0;
        g->any_life |= ms->life != 0;
        g->any_births |= ms->birth_energy > 0.0f;
    }
    /* Deaths come from eating and from the life cycle, births from birth_energy (which only a
     * species with a life cycle has); without any, no agent is ever added or removed. */
    g->compact = g->any_eats || g->any_life || g->any_births;
    for (int f = 0; f < m->n_fields; f++) {
        sim_scenario fsc = g->sc;
        fsc.diffusion = m->field[f].diffusion;
        fsc.decay = m->field[f].decay;
        gpu_jac_from_scenario(&fsc, &g->jac[f]);
    }
}

/* Device bytes for the model of sc with room for cap agents (what create takes). */
static size_t model_bytes(const sim_model *m, int64_t cap)
{
    const size_t cells = (size_t)m->width * (size_t)m->height;
    size_t b = cells * (sizeof(float) + sizeof(int32_t) + 1 + sizeof(unsigned long long));
    for (int f = 0; f < m->n_fields; f++) {
        b += cells * sizeof(float);
        if (m->field[f].growth > 0 && m->field[f].capacity_map)
            b += cells * sizeof(float);
        if (m->field[f].sources)
            b += cells;
    }
    b += (size_t)m->n_fields * ((size_t)m->width * sizeof(double) + sizeof(gpu_ctl));
    for (int s = 0; s < m->n_species; s++)
        if (m->species[s].eats) {
            b += cells * sizeof(unsigned long long); /* eat claims */
            break;
        }
    b += sizeof(gpu_md_ctl) + sizeof(gpu_md_params);
    const size_t n = (size_t)(cap > 0 ? cap : 1);
    b += n * (2 * 17 + 4 + 4 + 8 + 1 + 16) + 16 + n * 8 + (1u << 20); /* + scan scratch */
    return b + 4096;
}

extern "C" size_t gpu_model_estimate_bytes(const sim_scenario *sc)
{
    sim_model *m = (sim_model *)sim_malloc(sizeof *m);
    if (!m)
        return 0;
    size_t b = 0;
    if (sim_model_build(sc, m, NULL) == SIM_OK) {
        int64_t n = 0, cells = (int64_t)m->width * m->height;
        int births = 0;
        for (int s = 0; s < m->n_species; s++) {
            n += m->species[s].count;
            births |= m->species[s].birth_energy > 0.0f;
        }
        if (births)
            n = 2 * n < cells ? 2 * n : cells;
        b = model_bytes(m, n);
    }
    sim_free(m);
    return b;
}

/* Uploads the state: fields, maps (the capacity only when it is not uniform), agents, and the
 * cell codes and occupancy built here from the walls and the agents. */
static int upload(gpu_model *g, const sim_state *in, sim_err *err)
{
    const sim_model *m = &g->m;
    const size_t cells = (size_t)g->cells, n = (size_t)in->n;
    cudaStream_t s = g->stream;
    uint8_t *code = (uint8_t *)sim_malloc(cells);
    int32_t *occ = (int32_t *)sim_malloc_array(cells, sizeof *occ);
    if (!code || !occ) {
        sim_free(code);
        sim_free(occ);
        return sim_err_set(err, SIM_ENOMEM, "cuda model engine: out of host memory");
    }
    for (size_t i = 0; i < cells; i++) {
        const int wall = in->walls && in->walls[i];
        code[i] = wall ? (uint8_t)GPU_MD_WALL : (uint8_t)GPU_MD_EMPTY;
        occ[i] = wall ? SIM_OCC_WALL : SIM_OCC_EMPTY;
    }
    for (size_t a = 0; a < n; a++) {
        code[in->cell[a]] = in->species[a];
        occ[in->cell[a]] = (int32_t)a;
        g->count[in->species[a]]++;
    }
    int rc = SIM_OK;
    cudaError_t e = cudaMemcpyAsync(g->d_code, code, cells, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(g->d_occ, occ, cells * sizeof *occ, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s); /* before the host buffers go */
    if (e != cudaSuccess)
        rc = gpu_fail(err, e, __FILE__, __LINE__, "uploading the cell codes");
    sim_free(code);
    sim_free(occ);
    GPU_TRY(rc);
    for (int f = 0; f < m->n_fields; f++) {
        GPU_CHECK(err, cudaMemcpyAsync(g->d_field[f], in->field[f], cells * sizeof(float),
                                       cudaMemcpyHostToDevice, s));
        if (g->d_cap[f])
            GPU_CHECK(err, cudaMemcpyAsync(g->d_cap[f], in->capacity[f], cells * sizeof(float),
                                           cudaMemcpyHostToDevice, s));
        if (g->d_src[f])
            GPU_CHECK(err, cudaMemcpyAsync(g->d_src[f], in->sources[f], cells,
                                           cudaMemcpyHostToDevice, s));
    }
    if (n) {
        const gpu_md_agents *A = &g->a[g->cur];
        GPU_CHECK(err, cudaMemcpyAsync(A->cell, in->cell, n * 4, cudaMemcpyHostToDevice, s));
        GPU_CHECK(err, cudaMemcpyAsync(A->id, in->id, n * 4, cudaMemcpyHostToDevice, s));
        GPU_CHECK(err, cudaMemcpyAsync(A->species, in->species, n, cudaMemcpyHostToDevice, s));
        GPU_CHECK(err, cudaMemcpyAsync(A->energy, in->energy, n * 4, cudaMemcpyHostToDevice, s));
        GPU_CHECK(err, cudaMemcpyAsync(A->age, in->age, n * 4, cudaMemcpyHostToDevice, s));
    }
    GPU_CHECK(err, cudaMemcpyAsync(g->d_params, &g->p, sizeof g->p, cudaMemcpyHostToDevice, s));
    GPU_CHECK(err, cudaMemsetAsync(g->d_claim, 0, cells * sizeof(unsigned long long), s));
    if (g->d_claim_eat)
        GPU_CHECK(err, cudaMemsetAsync(g->d_claim_eat, 0, cells * sizeof(unsigned long long), s));
    GPU_CHECK(err, cudaStreamSynchronize(s));
    return SIM_OK;
}

/* Host copies of the fixed maps (read_state hands them back), and the capacity's uniform value
 * when it has one (then it stays off the device). */
static int keep_maps(gpu_model *g, const sim_state *in, sim_err *err)
{
    const size_t cells = (size_t)g->cells;
    if (in->walls) {
        if (!(g->h_walls = (uint8_t *)sim_malloc(cells)))
            return sim_err_set(err, SIM_ENOMEM, "cuda model engine: out of host memory");
        memcpy(g->h_walls, in->walls, cells);
    }
    for (int f = 0; f < g->m.n_fields; f++) {
        if (in->capacity[f]) {
            g->h_capacity[f] = (float *)sim_malloc_array(cells, sizeof(float));
            if (!g->h_capacity[f])
                return sim_err_set(err, SIM_ENOMEM, "cuda model engine: out of host memory");
            memcpy(g->h_capacity[f], in->capacity[f], cells * sizeof(float));
        }
        if (in->sources[f]) {
            if (!(g->h_sources[f] = (uint8_t *)sim_malloc(cells)))
                return sim_err_set(err, SIM_ENOMEM, "cuda model engine: out of host memory");
            memcpy(g->h_sources[f], in->sources[f], cells);
        }
    }
    return SIM_OK;
}

/* 1 when every entry of v equals v[0], bit for bit. */
static int uniform(const float *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (memcmp(&v[i], &v[0], sizeof *v) != 0)
            return 0;
    return 1;
}

static int create_inner(gpu_model *g, const sim_state *in, sim_err *err)
{
    const sim_model *m = &g->m;
    const size_t cells = (size_t)g->cells, w = (size_t)m->width;
    g->n = in->n;
    g->next_id = in->next_id;
    const int64_t room = room_for(g) > in->n ? room_for(g) : in->n;
    size_t need = model_bytes(m, room), free_b = 0, total_b = 0;
    GPU_CHECK(err, cudaMemGetInfo(&free_b, &total_b));
    if (need > free_b)
        return sim_err_set(err, SIM_EDEVMEM,
                           "out of device memory: a %dx%d model world with %lld agents needs %zu "
                           "bytes (%.1f MiB), %zu bytes (%.1f MiB) free (try a smaller world or "
                           "--backend cpu)", m->width, m->height, (long long)in->n, need,
                           need / 1048576.0, free_b, free_b / 1048576.0);
    GPU_CHECK(err, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    GPU_TRY(gpu_jacobi_init(err));
    GPU_TRY(keep_maps(g, in, err));
    for (int f = 0; f < m->n_fields; f++) {
        GPU_TRY(gpu_model_alloc(g, (void **)&g->d_field[f], cells * sizeof(float), "field", err));
        if (in->capacity[f]) {
            if (uniform(in->capacity[f], cells))
                g->cap_const[f] = in->capacity[f][0];
            else
                GPU_TRY(gpu_model_alloc(g, (void **)&g->d_cap[f], cells * sizeof(float),
                                        "capacity map", err));
        }
        if (in->sources[f])
            GPU_TRY(gpu_model_alloc(g, (void **)&g->d_src[f], cells, "sources map", err));
    }
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_spare, cells * sizeof(float), "field", err));
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_params, sizeof(gpu_md_params), "model", err));
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_occ, cells * sizeof(int32_t), "occupancy", err));
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_code, cells, "cell codes", err));
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_claim, cells * sizeof(unsigned long long), "claims",
                            err));
    if (g->any_eats)
        GPU_TRY(gpu_model_alloc(g, (void **)&g->d_claim_eat, cells * sizeof(unsigned long long),
                                "eat claims", err));
    /* one block for the control and the fields' control: one memset and one copy a step */
    const size_t ctl_bytes = sizeof(gpu_md_ctl) + (size_t)m->n_fields * sizeof(gpu_ctl);
    static_assert(sizeof(gpu_md_ctl) % 8 == 0, "gpu_ctl follows gpu_md_ctl");
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_ctl, ctl_bytes, "control", err));
    g->d_fctl = (gpu_ctl *)(g->d_ctl + 1);
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_colsum, (size_t)m->n_fields * w * sizeof(double),
                            "column sums", err));
    GPU_TRY(gpu_alloc_pinned((void **)&g->h_ctl, ctl_bytes, "control readback", err));
    g->h_fctl = (gpu_ctl *)(g->h_ctl + 1);
    GPU_TRY(gpu_alloc_pinned((void **)&g->h_colsum, (size_t)m->n_fields * w * sizeof(double),
                             "column sums readback", err));
    GPU_TRY(reserve(g, room, err));
    GPU_TRY(gpu_md_plan_make(g, 0, 0, err));
    return upload(g, in, err);
}

static int md_create_state(const sim_scenario *sc, const sim_state *in, int threads, void **out,
                           sim_err *err)
{
    (void)threads; /* the device decides its own parallelism */
    *out = NULL;
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0)
        return sim_err_set(err, SIM_ENODEV, "cuda model engine: %s", why);
    gpu_model *g = (gpu_model *)sim_calloc(1, sizeof *g);
    if (!g)
        return sim_err_set(err, SIM_ENOMEM, "cuda model engine: out of host memory");
    int rc = sim_model_build(sc, &g->m, err);
    if (rc != SIM_OK) {
        sim_free(g);
        return rc;
    }
    g->sc = *sc;
    g->cells = (int64_t)g->m.width * g->m.height;
    fill_params(g);
    cudaGetDevice(&g->device);
    rc = create_inner(g, in, err);
    if (rc != SIM_OK) {
        md_destroy(g);
        return rc;
    }
    *out = g;
    return SIM_OK;
}

/* ---- The step ---- */

/* Zeroes the control blocks. */
static int ctl_reset(gpu_model *g, sim_err *err)
{
    GPU_CHECK(err, cudaMemsetAsync(g->d_ctl, 0,
                                   sizeof(gpu_md_ctl) + (size_t)g->m.n_fields * sizeof(gpu_ctl),
                                   g->stream));
    return SIM_OK;
}

/* Copies the control blocks (and the column sums) back and waits for the device. */
static int readback(gpu_model *g, int colsums, sim_err *err)
{
    cudaStream_t s = g->stream;
    GPU_CHECK(err, cudaMemcpyAsync(g->h_ctl, g->d_ctl,
                                   sizeof(gpu_md_ctl) + (size_t)g->m.n_fields * sizeof(gpu_ctl),
                                   cudaMemcpyDeviceToHost, s));
    if (colsums)
        GPU_CHECK(err, cudaMemcpyAsync(g->h_colsum, g->d_colsum,
                                       (size_t)g->m.n_fields * g->p.w * sizeof(double),
                                       cudaMemcpyDeviceToHost, s));
    GPU_CHECK(err, cudaStreamSynchronize(s));
    return SIM_OK;
}

/* The field and agent statistics from the read-back blocks, as sim_model_cpu.c's fill_stats. */
static void fill_stats(const gpu_model *g, sim_stats *st)
{
    const sim_model *m = &g->m;
    uint64_t sum = g->h_ctl->checksum;
    float residual = 0.0f;
    for (int f = 0; f < m->n_fields; f++) {
        const double *cs = g->h_colsum + (size_t)f * g->p.w;
        double total = 0.0;
        for (int x = 0; x < g->p.w; x++) /* columns in order, as the CPU adds them */
            total += cs[x];
        sim_field_stats *fs = &st->fields[f];
        fs->total = total;
        fs->mean = total / (double)g->cells;
        fs->max = gpu_float_from_key(g->h_fctl[f].max_key);
        sum += g->h_fctl[f].checksum;
        float res;
        memcpy(&res, &g->h_fctl[f].residual, sizeof res);
        if (res > residual)
            residual = res;
    }
    int64_t efix[SIM_MAX_SPECIES] = {0};
    for (int s = 0; s < m->n_species; s++)
        efix[s] = (int64_t)g->h_ctl->energy[s];
    sim_stats_model_finish(m, efix, residual, sum, st);
}

static int md_step(void *p, int64_t step, int want_stats, sim_stats *st, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    const sim_model *m = &g->m;
    GPU_TRY(reserve(g, room_for(g), err));
    GPU_TRY(ctl_reset(g, err));
    unsigned mask = 0;
    for (int s = 0; s < m->n_species; s++)
        if (g->count[s] > 0)
            mask |= 1u << s;
    const int64_t n0 = g->n;
    if (g->timing)
        GPU_CHECK(err, cudaEventRecord(g->ev[0], g->stream));
    if (n0 > 0)
        GPU_TRY(gpu_md_sense(g, (unsigned long long)step, mask, err));
    if (g->timing)
        GPU_CHECK(err, cudaEventRecord(g->ev[1], g->stream));
    if (n0 > 0)
        GPU_TRY(gpu_md_life(g, (unsigned long long)step, err));
    if (g->timing)
        GPU_CHECK(err, cudaEventRecord(g->ev[2], g->stream));
    GPU_TRY(gpu_md_fields(g, want_stats, err));
    if (g->timing)
        GPU_CHECK(err, cudaEventRecord(g->ev[3], g->stream));
    const int compacted = n0 > 0 && g->compact;
    if (want_stats) {
        /* after a compaction the count is on the device; at most n0 + births <= room */
        const int64_t bound = compacted ? room_for(g) : g->n;
        GPU_TRY(gpu_md_stats(g, compacted ? &g->d_ctl->n : NULL, bound, err));
    }
    GPU_TRY(readback(g, want_stats, err));
    if (g->timing) {
        for (int k = 0; k < 3; k++) {
            float ms = 0.0f;
            GPU_CHECK(err, cudaEventElapsedTime(&ms, g->ev[k], g->ev[k + 1]));
            g->phase_ms[k] += ms;
        }
        for (int k = 0; n0 > 0 && k < GPU_MD_LIFE_MARKS; k++) {
            float ms = 0.0f;
            GPU_CHECK(err, cudaEventElapsedTime(&ms, k ? g->lev[k - 1] : g->ev[1], g->lev[k]));
            g->life_ms[k] += ms;
        }
        g->phase_steps++;
    }
    const gpu_md_ctl *c = g->h_ctl;
    st->n_species = m->n_species;
    st->n_fields = m->n_fields;
    memset(st->species, 0, sizeof st->species);
    st->moved = 0;
    for (int s = 0; s < m->n_species; s++) {
        st->species[s].moved = (int64_t)c->moved[s];
        st->moved += (int64_t)c->moved[s];
    }
    if (compacted) {
        const uint64_t births = c->nbirths;
        if (births > 0 && (uint64_t)g->next_id + births > UINT32_MAX)
            return sim_err_set(err, SIM_EINVAL, "agent ids exhausted: %u ids given, %llu more "
                               "births", g->next_id, (unsigned long long)births);
        g->n = (int64_t)c->n;
        g->next_id += (uint32_t)births;
        for (int s = 0; s < m->n_species; s++) {
            g->count[s] = (int64_t)c->count[s];
            st->species[s].births = (int64_t)c->births[s];
            st->species[s].deaths = (int64_t)c->deaths[s];
        }
    }
    for (int s = 0; s < m->n_species; s++)
        st->species[s].count = g->count[s];
    st->step = step + 1;
    st->agents = g->n;
    if (want_stats)
        fill_stats(g, st);
    return SIM_OK;
}

int gpu_md_timing(gpu_model *g, int on, sim_err *err)
{
    for (int k = 0; k < 4 && on; k++)
        if (!g->ev[k])
            GPU_CHECK(err, cudaEventCreate(&g->ev[k]));
    for (int k = 0; k < GPU_MD_LIFE_MARKS && on; k++)
        if (!g->lev[k])
            GPU_CHECK(err, cudaEventCreate(&g->lev[k]));
    g->timing = on;
    g->phase_steps = 0;
    g->phase_ms[0] = g->phase_ms[1] = g->phase_ms[2] = 0.0;
    for (int k = 0; k < GPU_MD_LIFE_MARKS; k++)
        g->life_ms[k] = 0.0;
    return SIM_OK;
}

static int md_step_batch(void *p, int64_t step, int n, const uint8_t *want_stats, sim_stats *out,
                         sim_err *err)
{
    for (int k = 0; k < n; k++)
        GPU_TRY(md_step(p, step + k, want_stats && want_stats[k], &out[k], err));
    return SIM_OK;
}

/* ---- Reads ---- */

static int md_checksum(void *p, uint64_t *out, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    GPU_TRY(ctl_reset(g, err));
    GPU_TRY(gpu_md_stats(g, NULL, g->n, err));
    GPU_TRY(readback(g, 1, err));
    sim_stats st;
    memset(&st, 0, sizeof st);
    fill_stats(g, &st);
    *out = st.checksum;
    return SIM_OK;
}

static int md_create(const sim_scenario *sc, const float *field, const uint32_t *agents,
                     int64_t n_agents, int threads, void **out, sim_err *err)
{
    (void)sc;
    (void)field;
    (void)agents;
    (void)n_agents;
    (void)threads;
    *out = NULL;
    return sim_err_set(err, SIM_EINVAL, "cuda model engine: created from a state only");
}

/* The table, member by member (C++17: no designated initializers; see gpu_backend.cu).
 * compose is NULL: sim_compose reads the output field and the agents and composes on the host,
 * exactly as for the CPU model engine. */
static constexpr sim_backend_ops make_model_ops()
{
    sim_backend_ops o = {};
    o.version = SIM_BACKEND_VERSION;
    o.name = "cuda";
    o.create = md_create;
    o.destroy = md_destroy;
    o.step = md_step;
    o.step_batch = md_step_batch;
    o.read_field = gpu_md_op_read_field;
    o.read_agents = gpu_md_op_read_agents;
    o.checksum = md_checksum;
    o.horizon = gpu_md_op_horizon;
    o.paint = gpu_md_op_paint;
    o.compose = nullptr;
    o.region_sums = gpu_md_op_region_sums;
    o.read_cells = gpu_md_op_read_cells;
    o.agent_cells = gpu_md_op_agent_cells;
    o.models = nullptr;
    o.create_state = md_create_state;
    o.read_state = gpu_md_op_read_state;
    return o;
}

static constexpr sim_backend_ops model_ops = make_model_ops();

extern "C" const sim_backend_ops *gpu_cuda_model_backend(void)
{
    return &model_ops;
}
