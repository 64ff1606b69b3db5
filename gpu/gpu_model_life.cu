/* gpu_model_life.cu - phases 3-8 of a model step on the device, one thread per agent slot
 * (slot order = id order; holes, the slots of agents that died earlier in the chunk, are
 * skipped): move, eat, live, breed, then a CUB exclusive scan of the packed (alive, born) flags
 * and one scatter that places the newborns, compacts when it must (gpu_model.h) and deposits.
 *
 * Kernels of a step: move; eat claim; eat + live (one pass: the eaten know it from the flag their
 * predators set); breed claim; flags (breed resolution, the scan's input, written over the claim
 * keys); the scan (in place); scatter (+ deposit). Models without eating, a life cycle or births
 * run move (+ deposit) alone.
 *
 * One claim word a cell serves the moves, the eat claims and the births in turn: each claim is
 * cleared by its winner in the pass that resolves it (move, eat + live, flags), so the words are
 * all 0 again before the next kind of claim is made, without a pass over the cells.
 *
 * Order independence, phase by phase, as sim_model_cpu.c has it: every claim is a 64-bit
 * atomicMax of distinct keys, and a claim is resolved by its claimant (claim[t] == its key), who
 * also clears the word; losers compare against either the winner's key or 0 and lose either
 * way. Only the winner of a cell writes that cell's occupancy word; an agent writes its own
 * cell's field in live (uptake) and at the deposit, and one agent stands on a cell. Where the CPU
 * walks the cells (resolving claims), the device walks the claimants instead: each agent keeps
 * its target and key (d_target, d_key; the move list's places for the move, then the agent's
 * index), so no phase reads every cell.
 *
 * Per species counters (moved, count, births, deaths): a ballot per species and warp, one shared
 * atomic per warp, one global atomic per block and counter. */
#include <cub/cub.cuh>

#include "gpu_check.h"
#include "gpu_model.h"
#include "gpu_policy.h"

extern "C" {
#include "sim_model_rules.h"
#include "sim_rules.h"
}

#define MD_NO_CELL 0xFFFFFFFFu
/* dead[]: 0 alive, eaten, or starved / too old (only the eaten clear an eat claim) */
#define MD_EATEN 1
#define MD_DIED 2

static_assert(SIM_MAX_FIELDS == 4, "md_fsel selects among 4 fields");

/* The fields as one kernel argument; selected with constant indices only. */
typedef struct md_fields {
    float *f[SIM_MAX_FIELDS];
} md_fields;

__device__ __forceinline__ float *md_fsel(const md_fields &fs, int i)
{
    return i == 0 ? fs.f[0] : i == 1 ? fs.f[1] : i == 2 ? fs.f[2] : fs.f[3];
}

/* v + d for d in {-1, 0, 1}, wrapped onto [0, n). */
__device__ __forceinline__ int md_wrap1(int v, int n)
{
    return v < 0 ? v + n : v >= n ? v - n : v;
}

/* The cell of candidate c of (x, y), or -1 outside a bounded grid (sim_model_cpu.c's
 * cand_cell). */
__device__ __forceinline__ int64_t md_cand(int x, int y, int c, int w, int h, int periodic)
{
    int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
    if (periodic) {
        cx = md_wrap1(cx, w);
        cy = md_wrap1(cy, h);
    } else if (cx < 0 || cx >= w || cy < 0 || cy >= h) {
        return -1;
    }
    return (int64_t)cy * w + cx;
}

/* An agent's deposits into its cell, in the order of its list. */
__device__ __forceinline__ void md_deposit(const gpu_md_species *sp, const md_fields &fs,
                                           uint32_t cell)
{
    for (int d = 0; d < sp->n_deposit; d++) {
        float *t = md_fsel(fs, sp->dep_field[d]) + cell;
        *t = sim_deposit(*t, sp->dep_amount[d], sp->clamp);
    }
}

/* Per-block counters: zero (before a barrier), add, commit (after a barrier). */
struct md_counters {
    unsigned v[4][SIM_MAX_SPECIES];
};

__device__ __forceinline__ void md_counters_zero(md_counters &c)
{
    if (threadIdx.x < 4 * SIM_MAX_SPECIES)
        (&c.v[0][0])[threadIdx.x] = 0;
}

/* Adds, for counter k, one per thread of the warp where `pred` holds, under the thread's species:
 * one ballot per species and one shared atomic per warp (a shared atomic per thread on the same
 * few words serialises the block). Every thread of the warp calls it. */
__device__ __forceinline__ void md_count(md_counters &c, int k, unsigned sp, bool pred)
{
#pragma unroll
    for (unsigned s = 0; s < SIM_MAX_SPECIES; s++) {
        const unsigned m = __ballot_sync(0xffffffffu, pred && sp == s);
        if ((threadIdx.x & 31) == 0 && m)
            atomicAdd(&c.v[k][s], (unsigned)__popc(m));
    }
}

__device__ __forceinline__ void md_counters_commit(const md_counters &c, unsigned long long *d0,
                                                   unsigned long long *d1,
                                                   unsigned long long *d2)
{
    if (threadIdx.x < 3 * SIM_MAX_SPECIES) {
        const int k = threadIdx.x / SIM_MAX_SPECIES, s = threadIdx.x % SIM_MAX_SPECIES;
        unsigned long long *d = k == 0 ? d0 : k == 1 ? d1 : d2;
        const unsigned v = c.v[k][s];
        if (v && d)
            atomicAdd(d + s, (unsigned long long)v);
    }
}

typedef struct md_life_args {
    const gpu_md_params *prm;
    gpu_md_agents AS[2]; /* the sets; the agents are in AS[run->cur] */
    const gpu_md_run *run; /* the slots (n), the id counter, cur; halt: the step does nothing */
    int w, h, periodic;
    unsigned long long seed, step;
    unsigned long long *claim, *key;
    const uint32_t *lword, *lcell; /* the move list (gpu_model.h) */
    uint32_t *target, *born;
    uint32_t *occ;
    uint8_t *dead;
    int eats; /* some species eats */
    md_fields fs;
    gpu_md_ctl *ctl;
} md_life_args;

/* Phase 3: winners move (occupancy of both cells, the agent's cell, the claim word cleared);
 * without a compaction (no deaths or births possible) the deposit follows here. The agents come
 * in the move list's order, a tile's together, so that the claim words, occupancy and fields
 * they touch lie close to each other's. A thread takes GPU_MD_MOVE_ITEMS entries, blockDim apart
 * (coalesced), and loads all their claim words before it uses any. */
__global__ void md_move_kernel(md_life_args a, int deposit)
{
    if (a.run->halt)
        return; /* the whole grid */
    /* the move list's entries (the living agents: the slots less the holes) */
    const int64_t n = (int64_t)a.ctl->listed;
    uint32_t *const acell = a.AS[a.run->cur].cell;
    __shared__ md_counters cnt;
    md_counters_zero(cnt);
    __syncthreads();
    const int64_t i0 = (int64_t)blockIdx.x * blockDim.x * GPU_MD_MOVE_ITEMS + threadIdx.x;
    uint32_t word[GPU_MD_MOVE_ITEMS], cell[GPU_MD_MOVE_ITEMS], t[GPU_MD_MOVE_ITEMS];
    unsigned long long k[GPU_MD_MOVE_ITEMS], cl[GPU_MD_MOVE_ITEMS];
#pragma unroll
    for (int q = 0; q < GPU_MD_MOVE_ITEMS; q++) {
        const int64_t i = i0 + (int64_t)q * blockDim.x;
        k[q] = 0;
        word[q] = 0;
        if (i < n) {
            word[q] = a.lword[i];
            cell[q] = a.lcell[i];
            k[q] = a.key[i];
            t[q] = a.target[i];
        }
    }
#pragma unroll
    for (int q = 0; q < GPU_MD_MOVE_ITEMS; q++)
        cl[q] = k[q] ? a.claim[t[q]] : 0;
#pragma unroll
    for (int q = 0; q < GPU_MD_MOVE_ITEMS; q++) {
        const int64_t i = i0 + (int64_t)q * blockDim.x;
        const unsigned sp = gpu_md_code(word[q]);
        const bool moved = k[q] && cl[q] == k[q];
        if (moved) {
            a.claim[t[q]] = 0;
            a.occ[cell[q]] = GPU_MD_WORD_EMPTY;
            a.occ[t[q]] = word[q];
            acell[gpu_md_index(word[q])] = t[q];
            cell[q] = t[q];
        }
        if (deposit && i < n)
            md_deposit(&a.prm->sp[sp], a.fs, cell[q]);
        md_count(cnt, 0, i < n ? sp : 0, moved);
    }
    __syncthreads();
    md_counters_commit(cnt, a.ctl->moved, NULL, NULL);
}

/* Phase 4a: a predator picks one prey among its 8 neighbours (occupancy after the moves) and
 * claims its cell (in the claim words, all 0 after the moves). */
__global__ void md_eat_claim_kernel(md_life_args a)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (a.run->halt || i >= (int64_t)a.run->n || a.dead[i] == GPU_MD_HOLE)
        return;
    const gpu_md_agents A = a.AS[a.run->cur];
    const unsigned eats = a.prm->sp[A.species[i]].eats;
    if (!eats)
        return;
    const uint32_t cell = A.cell[i];
    const int x = (int)(cell % (uint32_t)a.w), y = (int)(cell / (uint32_t)a.w);
    uint32_t np = 0;
    for (int c = 1; c < SIM_NCAND; c++) {
        const int64_t t = md_cand(x, y, c, a.w, a.h, a.periodic);
        if (t >= 0) {
            const unsigned cc = gpu_md_code(a.occ[t]);
            np += cc < SIM_MAX_SPECIES && ((eats >> cc) & 1u);
        }
    }
    if (!np) {
        a.key[i] = 0;
        return;
    }
    const sim_u32x4 r = sim_random(a.seed, a.step, A.id[i], SIM_RNG_EAT);
    /* The pick-th prey in candidate order (a second walk: no run-time indexed array). */
    uint32_t pick = sim_pick(r.v[0], np), seen = 0;
    int64_t t = -1;
    for (int c = 1; c < SIM_NCAND && t < 0; c++) {
        const int64_t u = md_cand(x, y, c, a.w, a.h, a.periodic);
        if (u >= 0) {
            const unsigned cc = gpu_md_code(a.occ[u]);
            if (cc < SIM_MAX_SPECIES && ((eats >> cc) & 1u) && seen++ == pick)
                t = u;
        }
    }
    const unsigned long long k = sim_claim_key_word(r.v[1], (uint32_t)i);
    atomicMax(&a.claim[t], k);
    a.target[i] = (uint32_t)t;
    a.key[i] = k;
    const uint32_t prey = a.occ[t];
    a.born[i] = gpu_md_code(prey); /* the prey's species, for the gain (scratch until flags) */
    /* A claimed prey is eaten (the highest claim always wins): every claimant marks it, with
     * the same value, so that the eaten learn it from their own flag, not from a claim word. */
    a.dead[gpu_md_index(prey)] = MD_EATEN;
}

/* Phases 4b and 5 in one pass (sim_model_cpu.c's eat resolution, then live): an agent that a
 * predator claimed (dead[] = MD_EATEN from md_eat_claim_kernel) frees its cell; a predator whose
 * claim won gains and clears the claim word (a losing predator of the same prey reads the
 * winner's key or 0: either way not its own); then the living take up, burn, age and may die. */
__global__ void md_eat_live_kernel(md_life_args a)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (a.run->halt || i >= (int64_t)a.run->n)
        return;
    int dead = a.dead[i];
    if (dead == GPU_MD_HOLE)
        return;
    const gpu_md_agents A = a.AS[a.run->cur];
    const gpu_md_species *sp = &a.prm->sp[A.species[i]];
    const uint32_t cell = A.cell[i];
    float e = A.energy[i];
    if (a.eats && sp->eats) {
        const unsigned long long k = a.key[i];
        const uint32_t t = a.target[i];
        if (k && a.claim[t] == k) {
            e = SIM_FADD(e, sp->gain[a.born[i]]);
            a.claim[t] = 0;
        }
    }
    if (!dead && sp->life) {
        if (sp->uptake_field >= 0) {
            float *t = md_fsel(a.fs, sp->uptake_field) + cell;
            const float take = sim_uptake_take(*t, sp->uptake);
            *t = SIM_FSUB(*t, take);
            e = SIM_FADD(e, take);
        }
        e = SIM_FSUB(e, sp->metabolism);
        const int32_t age = A.age[i] + 1;
        A.age[i] = age;
        if (e <= 0.0f || (sp->max_age > 0 && age >= sp->max_age))
            dead = MD_DIED;
    }
    A.energy[i] = e;
    if (dead) {
        a.dead[i] = (uint8_t)dead;
        a.occ[cell] = GPU_MD_WORD_EMPTY;
    }
}

/* Phase 6a: a living parent with enough energy claims one free neighbour cell. */
__global__ void md_breed_claim_kernel(md_life_args a)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (a.run->halt || i >= (int64_t)a.run->n)
        return;
    a.key[i] = 0;
    if (a.dead[i]) /* died this step, or a hole */
        return;
    const gpu_md_agents A = a.AS[a.run->cur];
    const gpu_md_species *sp = &a.prm->sp[A.species[i]];
    const float be = sp->birth_energy;
    if (!(be > 0.0f) || !(A.energy[i] >= be))
        return;
    const uint32_t cell = A.cell[i];
    const int x = (int)(cell % (uint32_t)a.w), y = (int)(cell / (uint32_t)a.w);
    uint32_t nf = 0;
    for (int c = 1; c < SIM_NCAND; c++) {
        const int64_t t = md_cand(x, y, c, a.w, a.h, a.periodic);
        nf += t >= 0 && gpu_md_code(a.occ[t]) == GPU_MD_EMPTY;
    }
    if (!nf)
        return;
    const sim_u32x4 r = sim_random(a.seed, a.step, A.id[i], SIM_RNG_BIRTH);
    uint32_t pick = sim_pick(r.v[0], nf), seen = 0;
    int64_t t = -1;
    for (int c = 1; c < SIM_NCAND && t < 0; c++) {
        const int64_t u = md_cand(x, y, c, a.w, a.h, a.periodic);
        if (u >= 0 && gpu_md_code(a.occ[u]) == GPU_MD_EMPTY && seen++ == pick)
            t = u;
    }
    const unsigned long long k = sim_claim_key_word(r.v[1], (uint32_t)i);
    atomicMax(&a.claim[t], k);
    a.target[i] = (uint32_t)t;
    a.key[i] = k;
}

/* Phase 6b and the scan's input: the winning parents get their newborn's cell (and clear the
 * claim word); flags[i] = alive | born << 32, flags[n] = 0 (so that the exclusive scan's last
 * entry is the total). flags is the key array: each thread reads its key before it writes its
 * flags there. */
__global__ void md_flags_kernel(md_life_args a, int breeding, unsigned long long *flags)
{
    if (a.run->halt)
        return;
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, n = (int64_t)a.run->n;
    if (i == 0)
        flags[n] = 0;
    if (i >= n)
        return;
    uint32_t b = MD_NO_CELL;
    if (breeding) {
        const unsigned long long k = a.key[i];
        if (k) {
            const uint32_t t = a.target[i];
            if (a.claim[t] == k) {
                a.claim[t] = 0;
                b = t;
            }
        }
    }
    a.born[i] = b;
    const uint8_t d = a.dead[i];
    flags[i] = (d ? 0ull : 1ull) | (b != MD_NO_CELL ? 1ull << 32 : 0ull);
    if (d && d != GPU_MD_HOLE)
        a.dead[i] = 0; /* the scatter takes survival from the flags' scan, and marks holes */
}

/* When a step compacts (gpu_model.h): at the chunk's last step; when the slots after it (its n,
 * holes included, and the newborns) would pass the launch bound, or its holes an eighth of
 * them; and when the commit will stop the chunk after it (the same tests as md_commit_kernel's,
 * on the count after it). Every thread of the scatter decides alike from the scan's total. */
typedef struct md_keep {
    unsigned long long bound, cells, cap;
    int breeding, last;
} md_keep;

__device__ __forceinline__ bool md_compacts(const md_keep &kp, unsigned long long n,
                                            unsigned long long nsurv, unsigned long long nborn,
                                            unsigned long long next_id)
{
    const unsigned long long live = nsurv + nborn, slots = n + nborn;
    const unsigned long long room = 2 * live < kp.cells ? 2 * live : kp.cells;
    /* (the commit's count test, live > bound, is in slots > bound: slots >= live) */
    return kp.last || slots > kp.bound || 8 * (n - nsurv) > slots ||
           (kp.breeding && room > kp.cap) || (nborn > 0 && next_id + nborn > 0xFFFFFFFFull);
}

/* Phase 7 and 8: the newborns in their parents' order numbered from next_id (the scan's high
 * half ranks them) after the survivors, and every agent's deposit. Compacting: the survivors in
 * slot (id) order into the other set, the newborns after them, the occupancy of all; in place:
 * the survivors stay, the dead become holes, the newborns take the slots after the last. A
 * parent keeps energy - half, its newborn half. Counts, births and deaths per species. */
__global__ void md_scatter_kernel(md_life_args a, const unsigned long long *__restrict__ scan,
                                  md_keep kp)
{
    if (a.run->halt)
        return; /* the whole grid */
    const int64_t n = (int64_t)a.run->n;
    const uint32_t next_id = a.run->next_id;
    __shared__ md_counters cnt;
    md_counters_zero(cnt);
    __syncthreads();
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long tot = scan[n];
    const uint32_t nsurv = (uint32_t)tot, nborn = (uint32_t)(tot >> 32);
    const bool compact = md_compacts(kp, (unsigned long long)n, nsurv, nborn, next_id);
    const unsigned cur = a.run->cur;
    const gpu_md_agents A = a.AS[cur], Q = compact ? a.AS[cur ^ 1] : A;
    const uint32_t base = compact ? nsurv : (uint32_t)n; /* the first newborn's slot */
    unsigned sp = 0;
    bool alive = false, born = false, died = false;
    if (i < n) {
        const unsigned long long v = scan[i];
        alive = (uint32_t)scan[i + 1] != (uint32_t)v; /* the low halves count the living */
        if (!alive) {
            /* a hole stays one in place and is dropped (its flag cleared) by a compaction */
            const bool hole = a.dead[i] == GPU_MD_HOLE;
            died = !hole;
            if (compact == hole)
                a.dead[i] = compact ? 0 : GPU_MD_HOLE;
        }
        sp = A.species[i];
        const gpu_md_species *spp = &a.prm->sp[sp];
        const uint32_t b = a.born[i];
        born = b != MD_NO_CELL;
        if (alive) {
            const float e = A.energy[i];
            const uint32_t cell = A.cell[i];
            const float keep = born ? SIM_FSUB(e, SIM_FMUL(e, 0.5f)) : e;
            if (compact) {
                const uint32_t j = (uint32_t)v;
                Q.cell[j] = cell;
                Q.id[j] = A.id[i];
                Q.species[j] = (uint8_t)sp;
                Q.energy[j] = keep;
                Q.age[j] = A.age[i];
                a.occ[cell] = gpu_md_word(sp, j);
            } else if (born) {
                A.energy[i] = keep;
            }
            md_deposit(spp, a.fs, cell);
            if (born) {
                const uint32_t rank = (uint32_t)(v >> 32), k = base + rank;
                Q.cell[k] = b;
                Q.id[k] = next_id + rank;
                Q.species[k] = (uint8_t)sp;
                Q.energy[k] = SIM_FMUL(e, 0.5f);
                Q.age[k] = 0;
                a.occ[b] = gpu_md_word(sp, k);
                md_deposit(spp, a.fs, b);
            }
        }
    }
    md_count(cnt, 0, sp, alive);
    md_count(cnt, 0, sp, born);
    md_count(cnt, 1, sp, born);
    md_count(cnt, 2, sp, died);
    if (i == 0) {
        a.ctl->n = (unsigned long long)base + nborn;
        a.ctl->live = (unsigned long long)nsurv + nborn;
        a.ctl->nbirths = nborn;
        a.ctl->compacted = compact;
    }
    __syncthreads();
    md_counters_commit(cnt, a.ctl->count, a.ctl->births, a.ctl->deaths);
}

/* ---- Dispatch ---- */

static md_life_args life_args(gpu_model *g, unsigned long long step)
{
    md_life_args a;
    memset(&a, 0, sizeof a);
    a.prm = g->d_params;
    a.AS[0] = g->a[0];
    a.AS[1] = g->sets > 1 ? g->a[1] : g->a[0];
    a.run = g->d_run;
    a.w = g->p.w;
    a.h = g->p.h;
    a.periodic = g->p.periodic;
    a.seed = g->p.seed;
    a.step = step;
    a.claim = g->d_claim;
    a.eats = g->any_eats;
    a.key = g->d_key;
    a.lword = g->d_lword;
    a.lcell = g->d_lcell;
    a.target = g->d_target;
    a.born = g->d_born;
    a.occ = g->d_occ;
    a.dead = g->compact ? g->d_dead : NULL;
    for (int f = 0; f < g->m.n_fields; f++)
        a.fs.f[f] = g->d_field[f];
    a.ctl = g->d_ctl;
    return a;
}

/* The bench's marks between the life kernels (gpu_md_timing): event k after kernel k. */
static int mark(gpu_model *g, int k, sim_err *err)
{
    if (g->timing)
        GPU_CHECK(err, cudaEventRecord(g->lev[k], g->stream));
    return SIM_OK;
}

int gpu_md_life(gpu_model *g, unsigned long long step, int64_t bound, int last, sim_err *err)
{
    if (bound <= 0)
        return SIM_OK;
    md_life_args a = life_args(g, step);
    cudaStream_t s = g->stream;
    const unsigned blocks = (unsigned)((bound + GPU_MD_EW_THREADS - 1) / GPU_MD_EW_THREADS);
    const int64_t per = (int64_t)GPU_MD_EW_THREADS * GPU_MD_MOVE_ITEMS;
    md_move_kernel<<<(unsigned)((bound + per - 1) / per), GPU_MD_EW_THREADS, 0, s>>>(a,
                                                                                 !g->compact);
    GPU_CHECK_LAUNCH(err, s);
    GPU_TRY(mark(g, 0, err));
    if (!g->compact) {
        for (int k = 1; k < GPU_MD_LIFE_MARKS; k++)
            GPU_TRY(mark(g, k, err));
        return SIM_OK;
    }
    if (g->any_eats) {
        md_eat_claim_kernel<<<blocks, GPU_MD_EW_THREADS, 0, s>>>(a);
        GPU_CHECK_LAUNCH(err, s);
    }
    GPU_TRY(mark(g, 1, err));
    md_eat_live_kernel<<<blocks, GPU_MD_EW_THREADS, 0, s>>>(a);
    GPU_CHECK_LAUNCH(err, s);
    GPU_TRY(mark(g, 2, err));
    if (g->any_births) {
        md_breed_claim_kernel<<<blocks, GPU_MD_EW_THREADS, 0, s>>>(a);
        GPU_CHECK_LAUNCH(err, s);
    }
    GPU_TRY(mark(g, 3, err));
    md_flags_kernel<<<blocks, GPU_MD_EW_THREADS, 0, s>>>(a, g->any_births, g->d_key);
    GPU_CHECK_LAUNCH(err, s);
    GPU_TRY(mark(g, 4, err));
    /* Over the bound's entries: the count's (flags[n] = 0, and an exclusive scan's entry i
     * depends only on the entries before it) are exact whatever lies beyond. A halted step's
     * scan only rewrites the key array, which the next step's sense writes again. */
    size_t temp = g->temp_bytes;
    GPU_CHECK(err, cub::DeviceScan::ExclusiveSum(g->d_temp, temp, g->d_key, (int)(bound + 1), s));
    GPU_TRY(mark(g, 5, err));
    md_keep kp;
    kp.bound = (unsigned long long)bound;
    kp.cells = (unsigned long long)g->cells;
    kp.cap = (unsigned long long)g->cap;
    kp.breeding = g->any_births;
    kp.last = last;
    md_scatter_kernel<<<blocks, GPU_MD_EW_THREADS, 0, s>>>(a, g->d_key, kp);
    GPU_CHECK_LAUNCH(err, s);
    GPU_TRY(mark(g, 6, err));
    return SIM_OK;
}

/* ---- The commit of a step ---- */

/* One thread: step k's slots, set and ids into the run block, then the check for step k + 1 on
 * its count (md_compacts made the step compact when this stops the chunk). */
__global__ void md_commit_kernel(gpu_md_run *run, const gpu_md_ctl *ctl, int k,
                                 unsigned long long bound, int breeding, unsigned long long cells,
                                 unsigned long long cap)
{
    if (run->halt)
        return;
    const unsigned long long births = ctl->nbirths, live = ctl->live;
    const unsigned long long room = 2 * live < cells ? 2 * live : cells;
    run->n = ctl->n;
    run->cur ^= (unsigned)ctl->compacted;
    if (births > 0 && (unsigned long long)run->next_id + births > 0xFFFFFFFFull) {
        run->halt = (unsigned)k + 2; /* step k ran: the host reads it and reports the ids */
        return;
    }
    run->next_id += (unsigned)births;
    if (live > bound || (breeding && room > cap))
        run->halt = (unsigned)k + 2;
}

int gpu_md_commit(gpu_model *g, int k, int64_t bound, sim_err *err)
{
    if (!g->compact)
        return SIM_OK; /* the count never changes */
    md_commit_kernel<<<1, 1, 0, g->stream>>>(g->d_run, g->d_ctl, k, (unsigned long long)bound,
                                             g->any_births, (unsigned long long)g->cells,
                                             (unsigned long long)g->cap);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}

size_t gpu_md_scan_bytes(int64_t items)
{
    size_t temp = 0;
    if (cub::DeviceScan::ExclusiveSum(NULL, temp, (unsigned long long *)NULL, (int)items) !=
        cudaSuccess) {
        cudaGetLastError();
        /* no device to ask: a bound on the decoupled look-back's tile states (16-24 B per tile
         * of several hundred items) */
        temp = (size_t)items / 16 + 4096;
    }
    return temp;
}
