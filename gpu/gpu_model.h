/* gpu_model.h - the CUDA model engine: every model of README's "The model" (fields, walls,
 * sources, growth, species with weighted sensing, the life cycle, predation) on the device, bit
 * for bit the CPU model engine (sim/sim_model_cpu.c, the oracle). The instance's state and the
 * entry points its .cu files share; the backend table is gpu_cuda_model_backend() in
 * gpu_backend.h. Internal to gpu/ (C++).
 *
 * The step, one pass per phase of sim_model_cpu.c and in its order, all on one stream:
 *   sense (gpu_model_sense.cu)  one tile kernel for all species: a block loads its tile's cell
 *                               codes (from the occupancy words) with a halo of max radius + 1,
 *                               and per species builds the prefix rows of the combined score
 *                               (sum of weight * fixed-point source, walls 0) in shared memory,
 *                               finds that species' agents on its tile and decides and claims
 *                               for each;
 *   life (gpu_model_life.cu)    per agent: move (winners), eat (claim, resolve), live (uptake,
 *                               metabolism, age, death), breed (claim, resolve), then a CUB scan
 *                               of (alive, born) and one scatter that appends the newborns and
 *                               deposits, and compacts the survivors when it must (below);
 *   fields (gpu_model_fields.cu) per field: growth, sweeps (the fast path's Jacobi kernels when
 *                               the model has no walls and the field no sources, else a sweep
 *                               with walls and sources), decay, sources held; statistics.
 * Steps are queued: a batch (step_batch; a single step is a batch of one) launches its steps
 * back to back and synchronises once, at its end. The agent count and the id counter live on the
 * device (gpu_md_run) and every per-agent kernel reads the count there, launched over a bound
 * the host chose at the chunk's start (the count then, which the first step cannot exceed). In a
 * model that breeds, each step's commit (its last kernel) checks the next step: when the count
 * has passed the bound, or lacks room to double in the arrays, it sets `halt`, and every kernel
 * of the later steps returns at once. The host then reads the steps that ran, takes the buffer
 * roles (fields, agent sets) of the first one that did not, grows the arrays and queues the rest
 * as a new chunk. Each step counts into its own slot of a ring of control blocks (and, with
 * statistics, of column sums), all zeroed by one memset a chunk and read back together. Nothing
 * is allocated inside a chunk; between chunks the agent arrays grow when the agents outgrow them
 * (capacity min(2n, cells) before a step that may breed, doubled).
 * Holes: a step's scatter leaves the survivors where they are (their slots, occupancy words and
 * set), marks the dead as holes (dead[] = GPU_MD_HOLE) and writes the newborns after the last
 * slot, unless it compacts: survivors and newborns into the other set, in id order, the holes
 * dropped. It compacts when the chunk ends with the step, when the slots would pass the bound or
 * the holes an eighth of them, or when the commit will stop the chunk; so between chunks (every
 * read, checkpoint and growth) the agents lie compacted in a[cur], as in the CPU engine, and the
 * slot order is id order throughout (newborns get larger ids than any slot before them), which
 * is all the claim keys' tie-break (sim_claim_key_word of the slot) needs.
 *
 * Device memory (gpu_model_memory in gpu_backend.h reports the split):
 *   shared, 12 B/cell: the occupancy word (4 B: cell code and agent index, below) and the claim
 *     word (8 B: moves, then the predators' eat claims, then births; every claim is cleared by
 *     the agent that wins it, so the word is 0 between phases and never needs a memset);
 *   fields, 8 B/cell each at most: the values (4 B) and one spare array for the sweeps shared by
 *     all fields (4 B / n_fields); per field inputs beside them: a capacity map (4 B/cell, only
 *     when it is not uniform) and a source mask (1 B/cell);
 *   per agent slot (capacity min(2n, cells) in a model that breeds, else n): cell, id, species
 *     (9 B), target (4 B) and key (8 B, + 1 entry; the compaction's flags and its in-place scan
 *     reuse it), the move list's word and cell (8 B): 29 B; a model with a life cycle adds the
 *     second set for the compaction (9 B), energy and age in both sets (16 B), dead (1 B) and
 *     born cell (4 B): 59 B, plus the scan's scratch (~0.02 B).
 * gpu_model_memory adds these up exactly as create allocates them (test_gpu_model checks it
 * against the bytes and blocks an instance holds). */
#ifndef GPU_MODEL_H
#define GPU_MODEL_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu_jacobi.h"
#include "gpu_stats.h"

extern "C" {
#include "sim_backend.h"
#include "sim_model.h"
#include "sim_status.h"
}

/* The occupancy word of a cell (32 bits, d_occ): the cell code in the top GPU_MD_CODE_BITS bits,
 * the index of the agent on it in the low 29. Cell codes: the species of the agent on the cell
 * (0 .. SIM_MAX_SPECIES-1), or one of these; GPU_MD_OUT exists only in a sense tile's halo
 * (beyond a bounded grid). The sense kernel keeps the codes one byte a cell in shared memory.
 * The 29 index bits limit an instance to GPU_MD_AGENTS_MAX agents (create refuses a model that
 * could hold more: more agents, or a breeding model on more cells). */
#define GPU_MD_CODE_BITS 3u
#define GPU_MD_CODE_SHIFT 29u
#define GPU_MD_INDEX_MASK ((1u << GPU_MD_CODE_SHIFT) - 1u)
#define GPU_MD_AGENTS_MAX (1ll << GPU_MD_CODE_SHIFT)
#define GPU_MD_OUT 5u
#define GPU_MD_WALL 6u
#define GPU_MD_EMPTY 7u
#define GPU_MD_WORD_EMPTY (GPU_MD_EMPTY << GPU_MD_CODE_SHIFT)
#define GPU_MD_WORD_WALL (GPU_MD_WALL << GPU_MD_CODE_SHIFT)
static_assert(SIM_MAX_SPECIES <= (int)GPU_MD_OUT, "species codes below GPU_MD_OUT");

/* The word of a cell holding agent `index` of species `code`, and a word's code and index. */
__host__ __device__ __forceinline__ uint32_t gpu_md_word(unsigned code, uint32_t index)
{
    return (code << GPU_MD_CODE_SHIFT) | index;
}
__host__ __device__ __forceinline__ unsigned gpu_md_code(uint32_t word)
{
    return word >> GPU_MD_CODE_SHIFT;
}
__host__ __device__ __forceinline__ uint32_t gpu_md_index(uint32_t word)
{
    return word & GPU_MD_INDEX_MASK;
}

/* A species as the kernels read it (from device memory: indexed by an agent's species at run
 * time, which a kernel parameter cannot be without a copy to local memory). */
typedef struct gpu_md_species {
    int radius, n_sense;
    int src[SIM_MAX_TERMS];
    int32_t weight[SIM_MAX_TERMS];
    unsigned long long threshold;
    int n_deposit, clamp;
    int dep_field[SIM_MAX_FIELDS];
    float dep_amount[SIM_MAX_FIELDS];
    int life, max_age, uptake_field;
    float metabolism, birth_energy, uptake;
    unsigned eats;
    float gain[SIM_MAX_SPECIES];
    /* The sense list folded per source (sums of weights; exact by linearity, sim_model_cpu.c's
     * combined grid): n_fterm fields with their weights, and the occupancy score of each cell
     * code (SIM_OCC_FIX * the weight of that species' occupancy; 0 for empty, wall, out). */
    int n_fterm;
    int fterm_field[SIM_MAX_FIELDS];
    int32_t fterm_w[SIM_MAX_FIELDS];
    int32_t occ_score[1 << GPU_MD_CODE_BITS];
} gpu_md_species;

typedef struct gpu_md_params {
    int w, h, periodic, n_species, n_fields, extended;
    unsigned long long seed;
    gpu_md_species sp[SIM_MAX_SPECIES];
} gpu_md_params;

/* The agents, in id order (one set of arrays; the instance keeps two for the compaction in a
 * model with a life cycle). energy and age are NULL when no species has a life cycle (and the
 * state's are all 0): they are then 0 for every agent. */
typedef struct gpu_md_agents {
    uint32_t *cell, *id;
    uint8_t *species;
    float *energy;
    int32_t *age;
} gpu_md_agents;

/* The device control block of a step, zeroed before it; read back after it. Per species
 * counters and energy sums (int64 bits of the sim_energy_fix sum), the agents' checksum terms,
 * the agent count and births after the compaction. */
typedef struct gpu_md_ctl {
    unsigned long long moved[SIM_MAX_SPECIES], count[SIM_MAX_SPECIES];
    unsigned long long births[SIM_MAX_SPECIES], deaths[SIM_MAX_SPECIES];
    unsigned long long energy[SIM_MAX_SPECIES];
    unsigned long long checksum, n, nbirths;
    unsigned long long listed; /* the move list's length so far (sense's blocks take places) */
    unsigned long long live;      /* agents after the step (n counts slots, holes too) */
    unsigned long long compacted; /* 1: the step compacted into the other set (gpu_model.h) */
} gpu_md_ctl;

/* The agents' slots and id counter on the device, across the steps of a batch: the kernels read
 * them, the commit of a step with a compaction writes them. n: the slots in use (living agents
 * and holes, below); cur: the set a[cur] that holds them. halt: 0 while steps run; k + 1 when
 * step k of the chunk (and so every later one) does nothing. */
typedef struct gpu_md_run {
    unsigned long long n;
    unsigned next_id;
    unsigned halt;
    unsigned cur;
    unsigned pad;
} gpu_md_run;

/* dead[] of a slot whose agent died in an earlier step of the chunk (a hole): every per-agent
 * kernel skips it; the compaction drops it. */
#define GPU_MD_HOLE 3

/* Shape of the sense kernel: tile side T, halo R = max radius + 1 rows above and below, a left
 * margin of L >= R + 1 columns (a multiple of 4: the region's first column is then 16-byte
 * aligned in the grid when the width is a multiple of 4), region RS rows x PW columns (PW a
 * multiple of 4, >= L + T + R): the cell codes (bytes) and the inclusive prefix rows of the
 * combined score, 32-bit (wide = 0: every species' row span is exact modulo 2^32, sim_rules.h) or
 * 64-bit; agents collected per round (chunk); dynamic shared memory in bytes. */
typedef struct gpu_md_plan {
    int T, log2T, R, L, RS, PW, ntx, nty, wide, chunk;
    int small; /* every species' whole disk sum is under 2^31: 32-bit candidate sums */
    int minb, per_sm; /* launch bounds' blocks (1 or GPU_MD_MINB_HIGH); resident blocks per SM */
    int rc; /* the radius the sense kernel's sums have compiled in (GPU_HZ_RC), or -1: none */
    /* 1: no species senses an occupancy and the world has no walls, so a score is its fields'
     * terms alone (0 beyond a bounded grid, as md_group loads it): the prefix rows read no codes,
     * and the codes are loaded for the tile and its one-cell border only (the listing and the
     * candidates read nothing else) */
    int plain;
    size_t smem;
} gpu_md_plan;

typedef struct gpu_model {
    sim_scenario sc;
    sim_model m;
    gpu_md_params p;          /* host copy of *d_params */
    gpu_md_plan plan;
    int device;
    cudaStream_t stream;
    int64_t cells, n, cap;    /* agents now, room in the per-agent arrays */
    uint32_t next_id;
    int64_t count[SIM_MAX_SPECIES]; /* agents per species now */
    int any_eats, any_life, any_births, compact; /* phases the model has */
    int attrs;                /* energy and age arrays held (a life cycle, or a state with them) */
    int sets;                 /* agent array sets: 2 with a compaction, else 1 */
    size_t bytes;             /* device bytes held */
    size_t agent_bytes;       /* of them in the per-agent arrays */
    long blocks;              /* device and pinned blocks held (gpu_alloc_live counts them) */
    long agent_blocks;        /* of them in the per-agent arrays */

    gpu_md_params *d_params;
    float *d_field[SIM_MAX_FIELDS], *d_spare;
    float *d_cap[SIM_MAX_FIELDS];  /* NULL: no growth, or a uniform capacity cap_const */
    float cap_const[SIM_MAX_FIELDS];
    uint8_t *d_src[SIM_MAX_FIELDS];
    gpu_jac jac[SIM_MAX_FIELDS];
    uint32_t *d_occ;          /* occupancy words (above) */
    unsigned long long *d_claim; /* claim words: moves, eat claims, births in turn */
    gpu_md_agents a[2];
    int cur;                  /* a[cur] holds the agents */
    /* The move list (sense to move): position p holds an agent's occupancy word, its cell, and
     * (in d_target, d_key) its target and claim key; sense writes a tile's agents together, so
     * that the move kernel finds neighbouring cells together. From the move on, d_target and
     * d_key are indexed by agent again (eat claims, births, the compaction). */
    uint32_t *d_lword, *d_lcell;
    uint32_t *d_target, *d_born;
    unsigned long long *d_key; /* cap + 1: claim keys, then the compaction's flags and scan */
    uint8_t *d_dead;
    void *d_temp;             /* the scan's scratch */
    size_t temp_bytes;
    gpu_md_run *d_run, *h_run;     /* h_ pinned */
    /* The control blocks' ring: SIM_STEP_BATCH_MAX slots of slot_bytes (a gpu_md_ctl and
     * n_fields gpu_ctl), device and pinned; the column sums' ring: cs_slots slots of n_fields * w
     * doubles (one from create, more when a batch wants statistics for several steps). */
    unsigned char *d_ring, *h_ring;
    size_t slot_bytes;
    double *d_csring, *h_csring;
    int cs_slots;
    long halts;               /* chunks cut short by a commit (gpu_model_halts) */
    long in_place;            /* steps of a model with a compaction that did not compact (they
                               * left holes and appended: gpu_model_in_place) */
    /* The step being queued or read: its slot of each ring. */
    gpu_md_ctl *d_ctl, *h_ctl;     /* each followed by n_fields gpu_ctl: */
    gpu_ctl *d_fctl, *h_fctl;      /* per field: max, checksum, residual */
    double *d_colsum, *h_colsum;   /* n_fields * w */
    void *d_probe;            /* the viewer's and tests' queries, grown on demand */
    size_t probe_bytes;

    /* Phase timing for the bench (gpu_md_timing): events around sense, life and fields inside
     * each step, milliseconds summed over phase_steps steps. */
    int timing, phase_steps;
    cudaEvent_t ev[4];
    double phase_ms[3];
    /* and between the life kernels: move, eat claim, eat + live, breed claim, flags, scan,
     * scatter (gpu_model_life.cu; a kernel a model skips takes 0) */
#define GPU_MD_LIFE_MARKS 7
    cudaEvent_t lev[GPU_MD_LIFE_MARKS];
    double life_ms[GPU_MD_LIFE_MARKS];

    /* Host copies of the fixed maps, for read_state. */
    uint8_t *h_walls;
    float *h_capacity[SIM_MAX_FIELDS];
    uint8_t *h_sources[SIM_MAX_FIELDS];
} gpu_model;

/* ---- gpu_model.cu ---- */
int gpu_model_alloc(gpu_model *g, void **p, size_t bytes, const char *what, sim_err *err);

/* Turns the bench's phase timing on (events created here) or off; zeroes the sums. */
int gpu_md_timing(gpu_model *g, int on, sim_err *err);

/* ---- gpu_model_sense.cu ---- */
/* Chooses T (GPU_MD_TILE, or `tile` when > 0 (the bench), halved until the shared memory for the
 * largest radius fits), the prefix width and the launch bounds (minb: 1 or GPU_MD_MINB_HIGH;
 * 0: GPU_MD_MINB); sets the kernel's shared-memory limit and carveout. */
int gpu_md_plan_make(gpu_model *g, int tile, int minb, sim_err *err);

/* Sense, decide and claim for every agent of the species in `mask` (bit s: species s has
 * agents): the move list (word, cell, target, key; key 0: no claim), a tile's agents at places
 * its block takes from d_ctl->listed; claims by atomicMax. */
int gpu_md_sense(gpu_model *g, unsigned long long step, unsigned mask, sim_err *err);

/* The 9 candidate scores of species sp at n cells (d_cells), as sim_model_cpu.c's scores_at:
 * d_sums[9 * i + c]. For tests and the viewer (direct sums, no prefix rows). */
int gpu_md_scores_at(gpu_model *g, int sp, const uint32_t *d_cells, int64_t n, int64_t *d_sums,
                     sim_err *err);

/* Disk sums of radius r of the output field (walls 0) at the sampled points:
 * d_out[iy * nx + ix]. */
int gpu_md_region(gpu_model *g, int r, const int32_t *d_xs, int nx, const int32_t *d_ys, int ny,
                  int64_t *d_out, sim_err *err);

/* ---- gpu_model_life.cu ---- */
/* Phases 3-8 of the step for the agents of the device's set (sense done; their slots d_run->n,
 * at most bound): move, eat, live, breed, the scatter (holes and newborns in place, or a
 * compaction into the other set, which the commit then makes current; always when `last`, the
 * chunk's last step) and deposit. Counters into d_ctl. */
int gpu_md_life(gpu_model *g, unsigned long long step, int64_t bound, int last, sim_err *err);

/* Step k's commit, after everything else of it (a model with a compaction only): the count and
 * id counter from the step's control slot into d_run; then, for step k + 1, halt when the count
 * passed bound, or when the model breeds and min(2n, cells) > cap; also when step k's births ran
 * the ids past 2^32 - 1 (the host reports it from step k's slot). */
int gpu_md_commit(gpu_model *g, int k, int64_t bound, sim_err *err);


/* Scratch bytes of the compaction's scan over `items` entries. */
size_t gpu_md_scan_bytes(int64_t items);

/* ---- gpu_model_fields.cu ---- */
/* Phase 9: growth, sweeps, decay, sources for every field; residuals of the last sweeps into
 * d_fctl when want_residual. */
int gpu_md_fields(gpu_model *g, int want_residual, sim_err *err);

/* Statistics: per field column sums, max and checksum terms (d_colsum, d_fctl); the agents'
 * checksum terms and energy sums (d_ctl). after_life: inside a queued step whose life phase
 * ran, with a compaction: the slots, set and holes that step's scatter left (d_ctl, d_run,
 * d_dead); else the agents as they are (g->n in a[g->cur]). bound: at most that many slots. */
int gpu_md_stats(gpu_model *g, int after_life, int64_t bound, sim_err *err);

/* Adds amount to the output field within radius of (x, y), walls excepted. */
int gpu_md_paint(gpu_model *g, int x, int y, int radius, float amount, sim_err *err);

/* values[i] = output field at d_cells[i], agents[i] = agent index or -1 (device arrays). */
int gpu_md_read_cells(gpu_model *g, const uint32_t *d_cells, int64_t n, float *d_values,
                      int64_t *d_agents, sim_err *err);

/* d_out[i] = cell of agent d_ids[i]. */
int gpu_md_agent_cells(gpu_model *g, const int64_t *d_ids, int64_t n, uint32_t *d_out,
                       sim_err *err);

/* The reads of the backend table (gpu_model_read.cu), with the contracts of sim_backend.h. */
int gpu_md_op_read_field(void *p, float *out, sim_err *err);
int gpu_md_op_read_agents(void *p, uint32_t *cells, sim_err *err);
int gpu_md_op_read_state(void *p, sim_state *out, sim_err *err);
int gpu_md_op_horizon(void *p, const uint32_t *cells, int64_t n, int64_t *sums, sim_err *err);
int gpu_md_op_paint(void *p, int x, int y, int radius, float amount, sim_err *err);
int gpu_md_op_region_sums(void *p, const int32_t *xs, int nx, const int32_t *ys, int ny,
                          int64_t *out, sim_err *err);
int gpu_md_op_read_cells(void *p, const uint32_t *cells, int64_t n, float *values,
                         int64_t *agents, sim_err *err);
int gpu_md_op_agent_cells(void *p, const int64_t *ids, int64_t n, uint32_t *cells, sim_err *err);

#endif
