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
    g->blocks++;
    return SIM_OK;
}

/* The per-agent arrays, which grow with the agents (reserve). */
typedef struct md_arrays {
    gpu_md_agents a[2];
    uint32_t *d_lword, *d_lcell;
    uint32_t *d_target, *d_born;
    unsigned long long *d_key;
    uint8_t *d_dead;
    void *d_temp;
    size_t temp_bytes, bytes;
    long blocks;
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
    gpu_alloc_free(t->d_lword);
    gpu_alloc_free(t->d_lcell);
    gpu_alloc_free(t->d_target);
    gpu_alloc_free(t->d_born);
    gpu_alloc_free(t->d_key);
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
    t.d_lword = g->d_lword;
    t.d_lcell = g->d_lcell;
    t.d_target = g->d_target;
    t.d_born = g->d_born;
    t.d_key = g->d_key;
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
    g->d_lword = t->d_lword;
    g->d_lcell = t->d_lcell;
    g->d_target = t->d_target;
    g->d_born = t->d_born;
    g->d_key = t->d_key;
    g->d_dead = t->d_dead;
    g->d_temp = t->d_temp;
    g->temp_bytes = t->temp_bytes;
    g->agent_bytes = t->bytes;
}

static int arrays_take(md_arrays *t, void **p, size_t bytes, const char *what, sim_err *err)
{
    GPU_TRY(gpu_alloc_device(p, bytes, what, err));
    t->bytes += bytes ? bytes : 1;
    t->blocks++;
    return SIM_OK;
}

/* Bytes of every per-agent array for cap agents: what arrays_alloc takes (sets: 1 or 2; attrs:
 * energy and age held; compact: the compaction's dead, born and scan scratch). */
static size_t arrays_bytes(int64_t cap, int sets, int attrs, int compact, long *blocks)
{
    const size_t n = (size_t)(cap > 0 ? cap : 1);
    size_t b = (size_t)sets * n * (4 + 4 + 1 + (attrs ? 4 + 4 : 0));
    b += n * 4 + (n + 1) * 8; /* target, key (+ 1: the scan's total) */
    b += n * 4 * 2;            /* the move list's words and cells */
    long k = sets * (3 + (attrs ? 2 : 0)) + 4;
    if (compact) {
        b += n * 1 + n * 4 + gpu_md_scan_bytes((int64_t)n + 1); /* dead, born, scan scratch */
        k += 3;
    }
    if (blocks)
        *blocks = k;
    return b;
}

static int arrays_alloc(md_arrays *t, int64_t cap, int sets, int attrs, int compact,
                        sim_err *err)
{
    const size_t n = (size_t)cap;
    for (int k = 0; k < sets; k++) {
        GPU_TRY(arrays_take(t, (void **)&t->a[k].cell, n * sizeof(uint32_t), "agent cells", err));
        GPU_TRY(arrays_take(t, (void **)&t->a[k].id, n * sizeof(uint32_t), "agent ids", err));
        GPU_TRY(arrays_take(t, (void **)&t->a[k].species, n, "agent species", err));
        if (attrs) {
            GPU_TRY(arrays_take(t, (void **)&t->a[k].energy, n * sizeof(float), "agent energy",
                                err));
            GPU_TRY(arrays_take(t, (void **)&t->a[k].age, n * sizeof(int32_t), "agent ages",
                                err));
        }
    }
    GPU_TRY(arrays_take(t, (void **)&t->d_lword, n * sizeof(uint32_t), "move list", err));
    GPU_TRY(arrays_take(t, (void **)&t->d_lcell, n * sizeof(uint32_t), "move list", err));
    GPU_TRY(arrays_take(t, (void **)&t->d_target, n * sizeof(uint32_t), "agent targets", err));
    GPU_TRY(arrays_take(t, (void **)&t->d_key, (n + 1) * sizeof(unsigned long long),
                        "claim keys", err));
    if (!compact)
        return SIM_OK;
    GPU_TRY(arrays_take(t, (void **)&t->d_dead, n, "deaths", err));
    GPU_TRY(arrays_take(t, (void **)&t->d_born, n * sizeof(uint32_t), "births", err));
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
    if (o->energy) {
        GPU_CHECK(err, cudaMemcpyAsync(d->energy, o->energy, m * 4, cudaMemcpyDeviceToDevice, s));
        GPU_CHECK(err, cudaMemcpyAsync(d->age, o->age, m * 4, cudaMemcpyDeviceToDevice, s));
    }
    GPU_CHECK(err, cudaStreamSynchronize(s)); /* before the old arrays go */
    return SIM_OK;
}

static void free_agents(gpu_model *g)
{
    md_arrays t = arrays_of(g);
    arrays_free(&t);
    arrays_set(g, &t);
    g->blocks -= g->agent_blocks;
    g->agent_blocks = 0;
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
    gpu_alloc_free(g->d_claim);
    gpu_alloc_free(g->d_run);
    gpu_alloc_free(g->d_ring);
    gpu_alloc_free(g->d_csring);
    gpu_alloc_free(g->d_probe);
    gpu_alloc_free_pinned(g->h_run);
    gpu_alloc_free_pinned(g->h_ring);
    for (int k = 0; k < 4; k++)
        if (g->ev[k])
            cudaEventDestroy(g->ev[k]);
    for (int k = 0; k < GPU_MD_LIFE_MARKS; k++)
        if (g->lev[k])
            cudaEventDestroy(g->lev[k]);
    gpu_alloc_free_pinned(g->h_csring);
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
    if (cap > GPU_MD_AGENTS_MAX)
        return sim_err_set(err, SIM_EINVAL, "cuda model engine: room for %lld agents asked; the "
                           "occupancy words index at most %lld", (long long)cap,
                           (long long)GPU_MD_AGENTS_MAX);
    md_arrays t;
    memset(&t, 0, sizeof t);
    int rc = arrays_alloc(&t, cap, g->sets, g->attrs, g->compact, err);
    /* deaths are 0 between steps (the flags kernel clears what it read); the keys are read
     * by the compaction's scan up to the launch bound, beyond the agents: never uninitialised */
    if (rc == SIM_OK && t.d_dead && cudaMemsetAsync(t.d_dead, 0, (size_t)cap, g->stream) !=
                                        cudaSuccess)
        rc = sim_err_set(err, SIM_EDEVICE, "cuda model engine: clearing the death flags failed");
    if (rc == SIM_OK && cudaMemsetAsync(t.d_key, 0, ((size_t)cap + 1) * sizeof *t.d_key,
                                        g->stream) != cudaSuccess)
        rc = sim_err_set(err, SIM_EDEVICE, "cuda model engine: clearing the claim keys failed");
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
    g->blocks += t.blocks;
    g->agent_blocks = t.blocks;
    g->cap = cap;
    g->cur = 0;
    if (g->d_run) /* the device's copy of cur follows (upload writes it at create) */
        GPU_CHECK(err, cudaMemsetAsync(&g->d_run->cur, 0, sizeof g->d_run->cur, g->stream));
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
        /* the sense list folded per source (the sums stay exact: integer linearity) */
        for (int t = 0; t < ms->n_sense; t++) {
            const int src = ms->sense[t].src;
            const int32_t wt = ms->sense[t].weight;
            if (src >= SIM_SRC_OCC) {
                d->occ_score[src - SIM_SRC_OCC] += wt * SIM_OCC_FIX;
                continue;
            }
            int k = 0;
            while (k < d->n_fterm && d->fterm_field[k] != src)
                k++;
            if (k == d->n_fterm) {
                d->fterm_field[k] = src;
                d->n_fterm++;
            }
            d->fterm_w[k] += wt;
        }
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

/* The per-agent slots a model starts with: its agents, or with births room for them to double
 * (at most one agent a cell). */
static int64_t start_room(const sim_model *m, int64_t n)
{
    int births = 0;
    for (int s = 0; s < m->n_species; s++)
        births |= m->species[s].birth_energy > 0.0f;
    const int64_t cells = (int64_t)m->width * m->height;
    if (births)
        n = 2 * n < cells ? 2 * n : cells;
    return n;
}

/* A control slot: the step's block and its fields' blocks, rounded to 16 bytes. */
static size_t slot_bytes_of(int n_fields)
{
    return (sizeof(gpu_md_ctl) + (size_t)n_fields * sizeof(gpu_ctl) + 15) & ~(size_t)15;
}

/* Points the step being queued or read at slot k of the control ring and, when cs >= 0, slot cs
 * of the column sums' ring. */
static void use_slot(gpu_model *g, int k, int cs)
{
    g->d_ctl = (gpu_md_ctl *)(g->d_ring + (size_t)k * g->slot_bytes);
    g->h_ctl = (gpu_md_ctl *)(g->h_ring + (size_t)k * g->slot_bytes);
    g->d_fctl = (gpu_ctl *)(g->d_ctl + 1);
    g->h_fctl = (gpu_ctl *)(g->h_ctl + 1);
    if (cs >= 0) {
        const size_t per = (size_t)g->m.n_fields * (size_t)g->m.width;
        g->d_colsum = g->d_csring + (size_t)cs * per;
        g->h_colsum = g->h_csring + (size_t)cs * per;
    }
}

/* Device bytes for model m with room for cap agents, split as gpu_model_memory reports them
 * (what create takes, allocation for allocation; the capacity map counted when the model names
 * one, though create leaves a uniform one off the device). */
static void model_memory(const sim_model *m, int64_t cap, sim_mem *out)
{
    memset(out, 0, sizeof *out);
    const size_t cells = (size_t)m->width * (size_t)m->height;
    int life = 0;
    for (int s = 0; s < m->n_species; s++)
        life |= m->species[s].life;
    out->n_fields = m->n_fields;
    out->life_attrs = life ? 2 : 0;
    out->shared_per_cell = sizeof(uint32_t) + sizeof(unsigned long long); /* occupancy, claims */
    out->field_per_cell = sizeof(float) + (m->n_fields ? (double)sizeof(float) / m->n_fields : 0);
    size_t maps = 0;
    for (int f = 0; f < m->n_fields; f++) {
        if (m->field[f].growth > 0 && m->field[f].capacity_map)
            maps += sizeof(float);
        if (m->field[f].sources)
            maps += 1;
    }
    out->maps_per_cell = (double)maps;
    const size_t n = (size_t)(cap > 0 ? cap : 1);
    const size_t agents = arrays_bytes((int64_t)n, life ? 2 : 1, life, life, NULL);
    out->per_agent = (double)agents / (double)n;
    out->other = sizeof(gpu_md_params) + sizeof(gpu_md_run) +
                 SIM_STEP_BATCH_MAX * slot_bytes_of(m->n_fields) +
                 (size_t)m->n_fields * (size_t)m->width * sizeof(double);
    if (!m->n_fields)
        out->other += cells * sizeof(float); /* the spare array, allocated all the same */
    out->total = cells * (12 + (size_t)m->n_fields * 4 + (m->n_fields ? 4 : 0) + maps) + agents +
                 out->other;
}

extern "C" int gpu_model_memory(const sim_scenario *sc, sim_mem *out)
{
    memset(out, 0, sizeof *out);
    sim_model *m = (sim_model *)sim_malloc(sizeof *m);
    if (!m)
        return SIM_ENOMEM;
    int rc = sim_model_build(sc, m, NULL);
    if (rc == SIM_OK)
        model_memory(m, start_room(m, m->agents), out);
    sim_free(m);
    return rc == SIM_OK ? SIM_OK : SIM_EINVAL;
}

extern "C" void gpu_model_held(const void *state, size_t *bytes, long *blocks)
{
    const gpu_model *g = (const gpu_model *)state;
    *bytes = g->bytes;
    *blocks = g->blocks;
}

extern "C" long gpu_model_halts(const void *state)
{
    return ((const gpu_model *)state)->halts;
}

extern "C" long gpu_model_in_place(const void *state)
{
    return ((const gpu_model *)state)->in_place;
}

extern "C" size_t gpu_model_estimate_bytes(const sim_scenario *sc)
{
    sim_mem e;
    return gpu_model_memory(sc, &e) == SIM_OK ? e.total : 0;
}

/* Uploads the state: fields, maps (the capacity only when it is not uniform), agents, and the
 * occupancy words built here from the walls and the agents. */
static int upload(gpu_model *g, const sim_state *in, sim_err *err)
{
    const sim_model *m = &g->m;
    const size_t cells = (size_t)g->cells, n = (size_t)in->n;
    cudaStream_t s = g->stream;
    uint32_t *occ = (uint32_t *)sim_malloc_array(cells, sizeof *occ);
    if (!occ)
        return sim_err_set(err, SIM_ENOMEM, "cuda model engine: out of host memory");
    for (size_t i = 0; i < cells; i++)
        occ[i] = in->walls && in->walls[i] ? GPU_MD_WORD_WALL : GPU_MD_WORD_EMPTY;
    for (size_t a = 0; a < n; a++) {
        occ[in->cell[a]] = gpu_md_word(in->species[a], (uint32_t)a);
        g->count[in->species[a]]++;
    }
    int rc = SIM_OK;
    cudaError_t e = cudaMemcpyAsync(g->d_occ, occ, cells * sizeof *occ, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s); /* before the host buffer goes */
    if (e != cudaSuccess)
        rc = gpu_fail(err, e, __FILE__, __LINE__, "uploading the occupancy");
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
        if (A->energy) {
            GPU_CHECK(err, cudaMemcpyAsync(A->energy, in->energy, n * 4, cudaMemcpyHostToDevice,
                                           s));
            GPU_CHECK(err, cudaMemcpyAsync(A->age, in->age, n * 4, cudaMemcpyHostToDevice, s));
        }
    }
    GPU_CHECK(err, cudaMemcpyAsync(g->d_params, &g->p, sizeof g->p, cudaMemcpyHostToDevice, s));
    g->h_run->n = (unsigned long long)g->n;
    g->h_run->next_id = g->next_id;
    g->h_run->halt = 0;
    g->h_run->cur = (unsigned)g->cur;
    GPU_CHECK(err, cudaMemcpyAsync(g->d_run, g->h_run, sizeof *g->h_run, cudaMemcpyHostToDevice,
                                   s));
    /* claim words are 0 between phases from here on: each claim is cleared by its winner */
    GPU_CHECK(err, cudaMemsetAsync(g->d_claim, 0, cells * sizeof(unsigned long long), s));
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
    const int64_t most = g->any_births ? (g->cells > in->n ? g->cells : in->n) : in->n;
    if (most > GPU_MD_AGENTS_MAX)
        return sim_err_set(err, SIM_EINVAL, "cuda model engine: a %dx%d world %s %lld agents; "
                           "its occupancy words (3 bits of cell code, 29 of agent index) index "
                           "at most %lld (use a world of at most %lld cells for a model that "
                           "breeds, or --backend cpu)", m->width, m->height,
                           g->any_births ? "whose agents breed can hold" : "with", (long long)most,
                           (long long)GPU_MD_AGENTS_MAX, (long long)GPU_MD_AGENTS_MAX);
    /* energy and age: with a life cycle, or when the state carries any (a model without one
     * keeps them 0; a state that says otherwise is kept as it is) */
    g->attrs = g->any_life;
    for (int64_t a = 0; a < in->n && !g->attrs; a++) {
        uint32_t bits;
        memcpy(&bits, &in->energy[a], sizeof bits); /* -0.0 too: read_state gives the bits back */
        g->attrs = bits != 0 || in->age[a] != 0;
    }
    g->sets = g->compact ? 2 : 1;
    sim_mem est;
    model_memory(m, room, &est);
    size_t need = est.total, free_b = 0, total_b = 0;
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
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_occ, cells * sizeof(uint32_t), "occupancy", err));
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_claim, cells * sizeof(unsigned long long), "claims",
                            err));
    /* the device's count and id counter, and the rings of control slots and column sums */
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_run, sizeof(gpu_md_run), "agent count", err));
    GPU_TRY(gpu_alloc_pinned((void **)&g->h_run, sizeof(gpu_md_run), "agent count readback",
                             err));
    g->blocks++; /* pinned: counted by gpu_alloc_live, not in bytes */
    static_assert(sizeof(gpu_md_ctl) % 8 == 0, "gpu_ctl follows gpu_md_ctl");
    g->slot_bytes = slot_bytes_of(m->n_fields);
    const size_t ring = SIM_STEP_BATCH_MAX * g->slot_bytes;
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_ring, ring, "control ring", err));
    GPU_TRY(gpu_alloc_pinned((void **)&g->h_ring, ring, "control readback", err));
    g->blocks++;
    GPU_TRY(gpu_model_alloc(g, (void **)&g->d_csring, (size_t)m->n_fields * w * sizeof(double),
                            "column sums", err));
    GPU_TRY(gpu_alloc_pinned((void **)&g->h_csring, (size_t)m->n_fields * w * sizeof(double),
                             "column sums readback", err));
    g->blocks++;
    g->cs_slots = 1;
    for (int f = 0; f < m->n_fields; f++)
        g->jac[f].halt = &g->d_run->halt;
    use_slot(g, 0, 0);
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

/* Zeroes the current control slot (a checksum outside the steps). */
static int ctl_reset(gpu_model *g, sim_err *err)
{
    GPU_CHECK(err, cudaMemsetAsync(g->d_ctl, 0, g->slot_bytes, g->stream));
    return SIM_OK;
}

/* Copies the first `slots` control slots and `cs` column-sum slots back and waits for the
 * device (with it, for what was queued before the copies). */
static int readback(gpu_model *g, int slots, int cs, sim_err *err)
{
    cudaStream_t s = g->stream;
    GPU_CHECK(err, cudaMemcpyAsync(g->h_ring, g->d_ring, (size_t)slots * g->slot_bytes,
                                   cudaMemcpyDeviceToHost, s));
    if (cs)
        GPU_CHECK(err, cudaMemcpyAsync(g->h_csring, g->d_csring,
                                       (size_t)cs * g->m.n_fields * g->m.width * sizeof(double),
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

/* The launch bound of a chunk of queued steps (gpu_model.h): the count now when it cannot grow;
 * with births, an eighth more (at least 1024: room for the newborns of steps that do not
 * compact), within the room the arrays have for the count to double (reserve made room for the
 * count now). */
static int64_t chunk_bound(const gpu_model *g)
{
    if (!g->any_births)
        return g->n;
    int64_t b = g->n + (g->n / 8 > 1024 ? g->n / 8 : 1024);
    if (b > g->cells)
        b = g->cells;
    if (g->cap < g->cells && 2 * b > g->cap)
        b = g->cap / 2 > g->n ? g->cap / 2 : g->n;
    return b;
}

/* The event marks of the bench's phase timing (gpu_md_timing). */
static int mark_phase(gpu_model *g, int k, sim_err *err)
{
    if (g->timing)
        GPU_CHECK(err, cudaEventRecord(g->ev[k], g->stream));
    return SIM_OK;
}

/* Queues step `step` as step k of a chunk (its slots set by use_slot, zeroed): sense, life,
 * fields, statistics, the commit. last: the chunk's last step (it compacts); n0: the agents at
 * the chunk's start (none: none can appear);
 * mask: the species that had agents then (a species never comes back). */
static int queue_step(gpu_model *g, int64_t step, int want_stats, int k, int last,
                      int64_t bound, int64_t n0, unsigned mask, sim_err *err)
{
    GPU_TRY(mark_phase(g, 0, err));
    if (n0 > 0)
        GPU_TRY(gpu_md_sense(g, (unsigned long long)step, mask, err));
    GPU_TRY(mark_phase(g, 1, err));
    if (n0 > 0)
        GPU_TRY(gpu_md_life(g, (unsigned long long)step, bound, last, err));
    GPU_TRY(mark_phase(g, 2, err));
    GPU_TRY(gpu_md_fields(g, want_stats, err));
    GPU_TRY(mark_phase(g, 3, err));
    if (want_stats) {
        /* after a scatter the slots are in the step's slot; at most the room, 2 * bound */
        const int after_life = n0 > 0 && g->compact;
        GPU_TRY(gpu_md_stats(g, after_life, after_life ? g->cap : bound, err));
    }
    return gpu_md_commit(g, k, bound, err);
}

/* Reads step `step` out of its slots (use_slot) into st, and advances the host's count, id
 * counter and species counts as the step did. */
static int finish_step(gpu_model *g, int64_t step, int want_stats, sim_stats *st, sim_err *err)
{
    const sim_model *m = &g->m;
    const gpu_md_ctl *c = g->h_ctl;
    const int compacted = g->n > 0 && g->compact;
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
        g->n = (int64_t)c->live; /* the slots too, once the chunk's last step compacted */
        g->next_id += (uint32_t)births;
        g->in_place += c->compacted == 0;
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

/* Room in the column sums' ring for `want` steps with statistics (a power of two, at most
 * SIM_STEP_BATCH_MAX); a ring that cannot be had in full is tried at half the size, and so on,
 * the one slot from create staying when none can. */
static void grow_csring(gpu_model *g, int want)
{
    int slots = 1;
    while (slots < want && slots < SIM_STEP_BATCH_MAX)
        slots *= 2;
    const size_t per = (size_t)g->m.n_fields * (size_t)g->m.width * sizeof(double);
    for (; slots > g->cs_slots; slots /= 2) {
        double *d = NULL, *h = NULL;
        sim_err e;
        if (gpu_alloc_device((void **)&d, (size_t)slots * per, "column sums", &e) != SIM_OK)
            continue;
        if (gpu_alloc_pinned((void **)&h, (size_t)slots * per, "column sums readback", &e) !=
            SIM_OK) {
            gpu_alloc_free(d);
            continue;
        }
        gpu_alloc_free(g->d_csring);
        gpu_alloc_free_pinned(g->h_csring);
        g->bytes += (size_t)(slots - g->cs_slots) * per;
        g->d_csring = d;
        g->h_csring = h;
        g->cs_slots = slots;
        return;
    }
}

/* Where a queued step found the fields' buffers (the agent set is the device's: d_run->cur). */
typedef struct md_roles {
    float *field[SIM_MAX_FIELDS], *spare;
} md_roles;

static md_roles roles_of(const gpu_model *g)
{
    md_roles r;
    memcpy(r.field, g->d_field, sizeof r.field);
    r.spare = g->d_spare;
    return r;
}

static void roles_set(gpu_model *g, const md_roles *r)
{
    memcpy(g->d_field, r->field, sizeof r->field);
    g->d_spare = r->spare;
}

/* One chunk of a batch: from step `step`, at most n steps, as many as the column sums' ring has
 * slots for those that want statistics; queued, read back with one synchronisation, decoded.
 * *ran: the steps that ran (>= 1: the first always runs; reserve made room for it). */
static int run_chunk(gpu_model *g, int64_t step, int n, const uint8_t *want_stats, sim_stats *out,
                     int *ran, sim_err *err)
{
    const sim_model *m = &g->m;
    GPU_TRY(reserve(g, room_for(g), err));
    const int64_t bound = chunk_bound(g), n0 = g->n;
    unsigned mask = 0;
    for (int s = 0; s < m->n_species; s++)
        if (g->count[s] > 0)
            mask |= 1u << s;
    md_roles roles[SIM_STEP_BATCH_MAX];
    GPU_CHECK(err, cudaMemsetAsync(g->d_ring, 0, (size_t)n * g->slot_bytes, g->stream));
    /* the steps this chunk holds: all n, or up to the one whose statistics find no slot */
    int steps = 0;
    for (int w = 0; steps < n; steps++) {
        if (want_stats && want_stats[steps] && w++ == g->cs_slots)
            break;
    }
    int k = 0, cs = 0;
    for (; k < steps; k++) {
        const int ws = want_stats && want_stats[k];
        roles[k] = roles_of(g);
        use_slot(g, k, ws ? cs++ : -1);
        GPU_TRY(queue_step(g, step + k, ws, k, k == steps - 1, bound, n0, mask, err));
    }
    GPU_CHECK(err, cudaMemcpyAsync(g->h_run, g->d_run, sizeof *g->h_run, cudaMemcpyDeviceToHost,
                                   g->stream));
    GPU_TRY(readback(g, k, cs, err));
    g->cur = (int)g->h_run->cur; /* the set the last step that ran left the agents in */
    /* halt k + 1 or beyond: steps from k on did nothing; a commit may have stopped the step
     * after this chunk's last, which the next chunk (its first step always runs) begins with */
    int done = k;
    if (g->h_run->halt) {
        if ((int)g->h_run->halt - 1 < k)
            done = (int)g->h_run->halt - 1;
        GPU_CHECK(err, cudaMemsetAsync(&g->d_run->halt, 0, sizeof(unsigned), g->stream));
    }
    cs = 0;
    for (int j = 0; j < done; j++) {
        const int ws = want_stats && want_stats[j];
        use_slot(g, j, ws ? cs++ : -1);
        GPU_TRY(finish_step(g, step + j, ws, &out[j], err));
    }
    if (done < k) {
        /* steps done .. k-1 did nothing: back to the roles step `done` found, and on */
        roles_set(g, &roles[done]);
        g->halts++;
    }
    *ran = done;
    return SIM_OK;
}

static int md_step_batch(void *p, int64_t step, int n, const uint8_t *want_stats, sim_stats *out,
                         sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    int wanted = 0;
    for (int k = 0; want_stats && k < n; k++)
        wanted += want_stats[k] != 0;
    if (wanted > g->cs_slots)
        grow_csring(g, wanted);
    for (int done = 0; done < n;) {
        int ran = 0;
        GPU_TRY(run_chunk(g, step + done, n - done, want_stats ? want_stats + done : NULL,
                          out + done, &ran, err));
        done += ran;
    }
    return SIM_OK;
}

static int md_step(void *p, int64_t step, int want_stats, sim_stats *st, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    const uint8_t ws = want_stats != 0;
    GPU_TRY(md_step_batch(p, step, 1, &ws, st, err));
    if (g->timing) {
        for (int k = 0; k < 3; k++) {
            float ms = 0.0f;
            GPU_CHECK(err, cudaEventElapsedTime(&ms, g->ev[k], g->ev[k + 1]));
            g->phase_ms[k] += ms;
        }
        for (int k = 0; g->n > 0 && k < GPU_MD_LIFE_MARKS; k++) {
            float ms = 0.0f;
            GPU_CHECK(err, cudaEventElapsedTime(&ms, k ? g->lev[k - 1] : g->ev[1], g->lev[k]));
            g->life_ms[k] += ms;
        }
        g->phase_steps++;
    }
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

/* ---- Reads ---- */

static int md_checksum(void *p, uint64_t *out, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    use_slot(g, 0, 0);
    GPU_TRY(ctl_reset(g, err));
    GPU_TRY(gpu_md_stats(g, 0, g->n, err));
    GPU_TRY(readback(g, 1, 1, err));
    sim_stats st;
    memset(&st, 0, sizeof st);
    fill_stats(g, &st);
    *out = st.checksum;
    return SIM_OK;
}

/* The table, member by member (C++17: no designated initializers; see gpu_backend.cu).
 * compose is NULL: sim_compose reads the output field and the agents and composes on the host,
 * exactly as for the CPU model engine. */
static constexpr sim_backend_ops make_model_ops()
{
    sim_backend_ops o = {};
    o.version = SIM_BACKEND_VERSION;
    o.name = "cuda";
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
